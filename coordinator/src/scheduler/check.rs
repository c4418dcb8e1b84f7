//! Answers checked before they are believed: every solution in a complete answer must
//! solve its position and fit its job (length, subtree prefix), or the whole answer is
//! refused and its executor gets no more work. Checking costs microseconds a solution,
//! against the milliseconds to hours it took to find.

use super::*;
use crate::scheduler::types::{RejectReason, Rejection};

impl Scheduler {
    /// The first fault in `out`, an answer to job `id` (of `kind`) from `from`, if any.
    pub(super) fn check_answer(
        &self,
        from: ExecutorId,
        id: JobId,
        kind: &Kind,
        handed: Option<&Handed>,
        req: RequestId,
        out: &JobOutput,
    ) -> Option<Rejection> {
        let r = self.requests.get(&req)?;
        let solves = self.cfg.solves;
        let reject = |line: u64, reason: RejectReason| Rejection {
            from,
            job: id,
            line,
            reason,
        };
        // A whole position's solutions: each within `max_length`, each solving it.
        let whole_fault = |position: &Position, solutions: &[Vec<Move>]| {
            solutions.iter().find_map(|s| {
                if s.len() > usize::from(r.settings.max_length) {
                    Some(RejectReason::TooLong)
                } else if !solves(position, s) {
                    Some(RejectReason::DoesNotSolve)
                } else {
                    None
                }
            })
        };
        match (kind, out) {
            (Kind::Batch { seqs }, JobOutput::Batch(rs)) => {
                for (&seq, a) in seqs.iter().zip(rs) {
                    let (Some(p), Ok(a)) = (r.lines.get(seq), a) else {
                        continue;
                    };
                    if let Some(why) = whole_fault(&p.position, &a.solutions) {
                        return Some(reject(p.line, why));
                    }
                }
            }
            (Kind::Shallow { seq, .. }, JobOutput::Batch(rs)) => {
                let p = r.lines.get(*seq)?;
                for a in rs.iter().filter_map(|a| a.as_ref().ok()) {
                    if let Some(why) = whole_fault(&p.position, &a.solutions) {
                        return Some(reject(p.line, why));
                    }
                }
            }
            (
                Kind::Subtrees {
                    seq,
                    depth,
                    prefixes,
                    ..
                },
                JobOutput::Subtrees(rs),
            ) => {
                let p = r.lines.get(*seq)?;
                let list = p.split.as_ref().map(|s| s.deep.prefixes().list());
                for sub in rs {
                    if sub.solutions.is_empty() {
                        continue;
                    }
                    let Some(prefix) = (prefixes.get(sub.prefix as usize))
                        .zip(list)
                        .and_then(|(&i, list)| super::cut::unit_moves(list, i))
                    else {
                        return Some(reject(p.line, RejectReason::Unasked));
                    };
                    for s in &sub.solutions {
                        if s.len() != usize::from(*depth) {
                            return Some(reject(p.line, RejectReason::WrongDepth));
                        }
                        if !s.starts_with(&prefix) {
                            return Some(reject(p.line, RejectReason::WrongPrefix));
                        }
                        // Not in a piece it handed back: another job searches that.
                        let back = handed.map_or(&[][..], |h| &h.back[..]);
                        let in_back = |&u: &cut::Unit| {
                            list.and_then(|l| super::cut::unit_moves(l, u))
                                .is_some_and(|m| s.starts_with(&m))
                        };
                        if back.iter().any(in_back) {
                            return Some(reject(p.line, RejectReason::WrongPrefix));
                        }
                        if !solves(&p.position, s) {
                            return Some(reject(p.line, RejectReason::DoesNotSolve));
                        }
                    }
                }
            }
            // Another shape than its job's: `complete` refuses it.
            _ => {}
        }
        None
    }

    /// An answer of `exec` failed its check: it gets no more work, and what it runs goes
    /// back to the queue (its other answers could not be believed either).
    pub(super) fn distrust(&mut self, exec: ExecutorId) {
        let Some(running) = self.executors.update(exec, |e| {
            let first = !e.distrusted;
            e.distrusted = true;
            e.capacity = 0;
            first.then(|| e.running.clone())
        }) else {
            return;
        };
        let Some(running) = running else { return };
        self.counters.distrusted_executors += 1;
        for job in running {
            self.actions.push(Action::Cancel { on: exec, job });
            self.requeue(job);
        }
    }
}
