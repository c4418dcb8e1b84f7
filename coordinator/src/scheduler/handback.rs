//! Hand-backs: a running subtree job hands back what it has not started, and it is dealt
//! out again (whom to ask, and when, is the tail's policy: see `tail`).
//!
//! A subtree job searches each of its units as its pieces ([`proto::pieces`]: the unit
//! extended by one or two front moves, one search each), in an order both ends know. When
//! slots are idle and nothing is queued, the jobs that have run longest are asked
//! ([`Action::Split`], the wire's `SplitJob`); each answers with how many pieces it started ([`Handback`]), and
//! keeps searching those alone. Every piece from there on becomes a unit of a new job of
//! the same depth and rank: a whole unit where none of its pieces started, else the
//! piece. Nothing is searched twice (the job's answer then covers its kept pieces only,
//! and a solution in a piece it handed back is refused), and nothing is lost: a job that
//! must run again after handing back (its executor gone, its lease ended) is made again
//! from what it kept.

use super::*;
use proto::{pieces, Handback};

impl Scheduler {
    /// Executor `from` answered a request to hand back: the pieces it handed back
    /// become new jobs (see the module documentation). An answer for a job it does not
    /// hold, of another attempt or not asked for is ignored.
    pub fn on_handback(&mut self, from: ExecutorId, h: Handback) {
        self.asking.remove(&h.job);
        let Some(j) = self.jobs.get(&h.job) else {
            self.counters.ignored_handbacks += 1;
            return;
        };
        let asked = j.asked && j.handed.is_none() && j.attempt == h.attempt;
        if j.lease != Some(from) || !asked {
            self.counters.ignored_handbacks += 1;
            return;
        }
        // `None`: it ended there, and its result is on its way.
        let Some(kept) = h.kept else { return };
        let Some((handed, kind)) = self.handed_of(h.job, kept as usize) else {
            return;
        };
        let (req, prio, predicted_us) = (j.req, j.prio, j.predicted_us);
        let Kind::Subtrees {
            seq, depth, pieces, ..
        } = kind
        else {
            return;
        };
        let back = handed.back.clone();
        if let Some(j) = self.jobs.get_mut(&h.job) {
            j.handed = Some(Box::new(handed));
        }
        self.counters.splits += 1;
        self.counters.pieces_handed_back += back.len() as u64;
        // Dealt over the idle slots and the threads that would leave a deeper depth for
        // them, shared with the answers still to come.
        let key = PosKey { req, seq };
        let leaving = (self.preemptible().get(&key))
            .filter(|&&(d, _)| d == depth)
            .map_or(0, |&(_, n)| n);
        let slots = (self.executors.idle_threads() + leaving) / (self.asking.len() + 1);
        let jobs = slots.clamp(1, back.len());
        let per_job = back.len().div_ceil(jobs);
        for chunk in back.chunks(per_job) {
            let kind = Kind::Subtrees {
                seq,
                depth,
                prefixes: chunk.to_vec(),
                pieces: pieces.min(tail::piece_room(cut::deepest_level(chunk))),
            };
            let Some(id) = self.new_job(req, kind, prio) else {
                return;
            };
            if let Some(j) = self.jobs.get_mut(&id) {
                j.predicted_us = predicted_us;
            }
            if let Some(split) = self
                .pos_mut(PosKey { req, seq })
                .and_then(|p| p.split.as_mut())
            {
                split.deep.add_job(depth, id);
            }
        }
    }

    /// What job `id` keeps and hands back when it started its first `kept` pieces, and
    /// its kind; `None` when it hands back nothing (or is not a subtree job).
    fn handed_of(&self, id: JobId, kept: usize) -> Option<(Handed, Kind)> {
        let j = self.jobs.get(&id)?;
        let Kind::Subtrees {
            seq,
            depth,
            prefixes,
            pieces,
        } = &j.kind
        else {
            return None;
        };
        let r = self.requests.get(&j.req)?;
        let list = r.lines.get(*seq)?.split.as_ref()?.deep.prefixes().list();
        // The units as the job was sent (materialise drops none of a scheduler's own).
        let units: Vec<(cut::Unit, Vec<Move>)> = (prefixes.iter())
            .filter_map(|&u| Some((u, cut::unit_moves(list, u)?)))
            .collect();
        let moves: Vec<Vec<Move>> = units.iter().map(|(_, m)| m.clone()).collect();
        let levels = pieces::job_levels(&moves, *depth, *pieces);
        let mut out = Handed {
            results: 0,
            kept: Vec::new(),
            back: Vec::new(),
        };
        let mut at = 0usize;
        for (u, m) in &units {
            let l = pieces::levels_for(m.len(), *depth, levels);
            let n = pieces::count(m, l);
            if at + n <= kept {
                out.kept.push(*u);
                out.results += 1;
            } else if at >= kept {
                out.back.push(*u);
            } else {
                // Its first pieces started, the others handed back, each by its id.
                out.results += 1;
                let mut k = at;
                let mut lost = false;
                pieces::for_each_piece(m, l, &mut |piece| {
                    match cut::descendant_id(*u, &piece[m.len()..]) {
                        Some(p) if k < kept => out.kept.push(p),
                        Some(p) => out.back.push(p),
                        None => lost = true,
                    }
                    k += 1;
                });
                if lost {
                    // Cannot happen (the levels were chosen within the ids' room); the
                    // job is then left to answer whole, as one that could not hand back.
                    return None;
                }
            }
            at += n;
        }
        (!out.back.is_empty()).then(|| (out, j.kind.clone()))
    }

    /// Job `id` handed back pieces and must run again: it is made again from what it
    /// kept (nothing, when it had started nothing).
    pub(super) fn remake_handed(&mut self, id: JobId) {
        let Some(j) = self.remove_job(id) else { return };
        if let Some(exec) = j.lease {
            self.free_slot(exec, id);
        }
        let (
            Kind::Subtrees {
                seq, depth, pieces, ..
            },
            Some(handed),
        ) = (j.kind, j.handed)
        else {
            return;
        };
        let key = PosKey { req: j.req, seq };
        let new = match handed.kept.is_empty() {
            true => None,
            false => {
                let kind = Kind::Subtrees {
                    seq,
                    depth,
                    pieces: pieces.min(tail::piece_room(cut::deepest_level(&handed.kept))),
                    prefixes: handed.kept,
                };
                self.new_job(j.req, kind, j.prio)
            }
        };
        if let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_mut()) {
            split.deep.replace_job(depth, id, new);
        }
        if new.is_none() {
            self.advance(key);
        }
    }
}
