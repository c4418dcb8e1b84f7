//! A check's answers: compared with the claim, a third run on disagreement, the check
//! decided when two agree.

use super::*;
use crate::scheduler::types::{RejectReason, Rejection};

impl Scheduler {
    /// An answer to a check job came from the executor it was leased to.
    pub(in crate::scheduler) fn on_check_answer(
        &mut self,
        from: ExecutorId,
        j: JobState,
        result: JobResult,
    ) {
        let Kind::Check { check, .. } = j.kind else {
            return;
        };
        let job = result.id;
        let Some(c) = self.verify.checks.get(&check) else {
            return;
        };
        let work = c.work.clone();
        let position = match &work {
            Work::Subtrees(w) => w.position,
            Work::Batch { items, .. } => match items.first() {
                Some(i) => i.position,
                None => return,
            },
        };
        let print = match (&work, &result.output) {
            (Work::Subtrees(w), Ok(JobOutput::Subtrees(rs))) => {
                if rs.iter().any(|r| r.stop == Stop::Cancelled) || rs.len() < w.prefixes.len() {
                    // Cut short (drained): run again.
                    self.requeue_check(check, None);
                    return;
                }
                if rs.iter().any(|r| r.stop == Stop::TimeLimit) {
                    return self.inconclusive(check);
                }
                // Solutions prove themselves: a wrong one is a lie.
                let solves = self.cfg.solves;
                let bad = rs.iter().any(|r| {
                    let prefix = w.prefixes.get(r.prefix as usize);
                    r.solutions.iter().any(|s| {
                        s.len() != usize::from(w.depth)
                            || !prefix.is_some_and(|p| s.starts_with(p))
                            || !solves(&position, s)
                    })
                });
                if bad {
                    return self.refuse_checker(check, from, job);
                }
                // Units cut short by the solution count say so: their count differs.
                let units = rs
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let nodes = match (r.prefix as usize == i, r.stop) {
                            (true, Stop::Exhausted) => r.nodes,
                            _ => u64::MAX,
                        };
                        (nodes, sorted(&r.solutions))
                    })
                    .collect();
                Print::Units(units)
            }
            (Work::Batch { settings, .. }, Ok(JobOutput::Batch(rs))) => {
                let Some(Ok(r)) = rs.first() else {
                    return self.inconclusive(check);
                };
                match r.stop {
                    Stop::Cancelled => {
                        self.requeue_check(check, None);
                        return;
                    }
                    Stop::TimeLimit | Stop::ProbeLimit => return self.inconclusive(check),
                    _ => {}
                }
                let solves = self.cfg.solves;
                let bad = r
                    .solutions
                    .iter()
                    .any(|s| s.len() > usize::from(settings.max_length) || !solves(&position, s));
                if bad {
                    return self.refuse_checker(check, from, job);
                }
                match whole_print(r) {
                    Some(p) => p,
                    None => return self.inconclusive(check),
                }
            }
            (_, Err(JobError::MissingTable { name })) => {
                let name = name.clone();
                self.executors.update(from, |e| e.tables.remove(&name));
                self.requeue_check(check, None);
                return;
            }
            // An error, or an answer of another shape: someone else runs it.
            _ => {
                self.requeue_check(check, Some(from));
                return;
            }
        };
        self.counters.check_nodes += match &print {
            Print::Units(u) => u.iter().map(|(n, _)| n % u64::MAX).sum(),
            Print::Whole { nodes, .. } => *nodes,
        };
        let seq = self.verify.seq();
        if let Some(c) = self.verify.checks.get_mut(&check) {
            c.answers.push((from, print, seq));
        }
        self.decide(check);
    }

    /// Check `id` runs again elsewhere (not on `not`, which could not answer it).
    pub(in crate::scheduler) fn requeue_check(&mut self, id: u64, not: Option<ExecutorId>) {
        if let (Some(c), Some(e)) = (self.verify.checks.get_mut(&id), not) {
            c.excluded.push(e);
        }
        self.run_check(id);
    }

    /// A checker's answer held a wrong solution: refused, the checker distrusted.
    fn refuse_checker(&mut self, id: u64, from: ExecutorId, job: JobId) {
        let line = (self.verify.checks.get(&id)).map_or(0, |c| self.line_of(c.key));
        self.counters.rejected_results += 1;
        self.rejections.push(Rejection {
            from,
            job,
            line,
            reason: RejectReason::DoesNotSolve,
        });
        self.requeue_check(id, Some(from));
        self.liar(from);
    }

    /// A check cannot be decided (its run ran out of time): it holds nothing any more.
    fn inconclusive(&mut self, id: u64) {
        self.counters.inconclusive_checks += 1;
        if let Some(c) = self.verify.checks.remove(&id) {
            self.close_check(&c);
        }
    }

    /// Check `id` has a new answer: decided when two agree, else run again.
    fn decide(&mut self, id: u64) {
        let Some(c) = self.verify.checks.get(&id) else {
            return;
        };
        let agreed = c
            .answers
            .iter()
            .find(|(e, p, _)| c.answers.iter().any(|(f, q, _)| f != e && q == p));
        let Some((_, truth, _)) = agreed.cloned() else {
            if c.answers.len() == 2 {
                self.counters.check_disputes += 1;
            }
            let answered: Vec<ExecutorId> = c.answers.iter().map(|a| a.0).collect();
            let table = c.table.clone();
            if c.answers.len() < MAX_RUNS && self.checker_exists(&table, &answered) {
                // A third executor decides.
                self.run_check(id);
            } else {
                self.undecided(id);
            }
            return;
        };
        let Some(c) = self.verify.checks.remove(&id) else {
            return;
        };
        let line = self.line_of(c.key);
        for (e, p, seq) in &c.answers {
            if *p == truth {
                self.vouch(*e, *seq);
            } else {
                self.rejections.push(Rejection {
                    from: *e,
                    job: JobId(0),
                    line,
                    reason: RejectReason::Disagreed,
                });
                self.liar(*e);
            }
        }
        if c.answers.len() == 2 {
            self.counters.checks_agreed += 1;
        }
        // Last: a liar's positions start again before anything it held is released.
        self.close_check(&c);
    }

    /// No two answers of check `id` agree and no other executor can run it (two workers,
    /// one of them lying, or four answers apart). Solutions prove themselves: an answer
    /// missing solutions another one found (each checked) hid them, and whoever gave it
    /// lied. Answers apart only in their counts leave the record as it is (they agree on
    /// what it rests on); whoever gave them is suspect from then on (every claim of
    /// theirs checked).
    fn undecided(&mut self, id: u64) {
        let Some(c) = self.verify.checks.remove(&id) else {
            return;
        };
        let found: Vec<BTreeSet<Vec<Move>>> = c.answers.iter().map(|a| a.1.solutions()).collect();
        let all: BTreeSet<Vec<Move>> = found.iter().flatten().cloned().collect();
        let hid: Vec<ExecutorId> = (c.answers.iter().zip(&found))
            .filter(|(_, f)| f.len() < all.len())
            .map(|(a, _)| a.0)
            .collect();
        if hid.is_empty() {
            // The same solutions: the record stands on them whoever is right about the
            // counts; both are vouched for as far as that goes, and watched.
            self.counters.undecided_checks += 1;
            for (e, _, seq) in &c.answers {
                self.verify.suspect(*e);
                self.vouch(*e, *seq);
            }
        }
        let line = self.line_of(c.key);
        for e in hid {
            self.rejections.push(Rejection {
                from: e,
                job: JobId(0),
                line,
                reason: RejectReason::Disagreed,
            });
            self.liar(e);
        }
        self.close_check(&c);
    }

    /// A check is over: what it held is released, and its claimer may be vouched for
    /// again.
    pub(in crate::scheduler) fn close_check(&mut self, c: &Check) {
        if c.vouch {
            self.verify.standing(c.claimer).vouching = false;
        }
        if c.holds {
            if let Some(cl) = self.pos_mut(c.key).and_then(|p| p.claims.as_mut()) {
                cl.pending = cl.pending.saturating_sub(1);
            }
            self.try_release(c.key);
        }
    }
}
