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
//!
//! **Pieces split where they run.** A piece a thread started is searched whole there, and
//! a piece ranked on older counts can hold most of its depth's last millisecond. A job
//! sent with `split` (of a search for every solution: [`sends_split`]) enters the front
//! moves of each piece's first [`pieces::SPLIT_LEVELS`] levels in move order, so its
//! answer, once every piece was claimed, can also name where each running piece's search
//! was ([`proto::PieceSplit`]): the parts not entered become units of new jobs too, up to
//! three levels below the piece ([`cut::MAX_SPLIT_LEVEL`]), and the piece's unit answers
//! for the parts it entered. A piece taken ahead of its start goes back whole. A job
//! that first handed back only its unclaimed pieces may be asked once more (`tail`): its
//! second answer splits what it kept, and only the parts the first did not name are new.

use super::*;
use proto::{pieces, Handback, PieceSplit};
use std::collections::HashSet;

/// Whether a subtree job of `units` (their `moves`, all of them: none dropped) at `depth`
/// with `levels` piece levels, of a search for every solution or not (`all`), is sent with
/// `split` under `cfg`: only a search for every solution waits for its depth's last piece
/// (one for the first ends where a solution falls, which a split moves later), and every
/// piece's parts must have unit ids ([`cut::split_child_id`], the worst case, move index 17
/// at every level, checked). Dispatch and the check of an answer both ask this.
pub(super) fn sends_split(
    cfg: &Config,
    all: bool,
    units: &[cut::Unit],
    moves: &[Vec<Move>],
    depth: u8,
    levels: u8,
) -> bool {
    if !(cfg.split_running && all && units.len() == moves.len()) {
        return false;
    }
    let levels = pieces::job_levels(moves, depth, levels);
    let last = Move::ALL[17];
    units.iter().zip(moves).all(|(&u, m)| {
        let l = usize::from(pieces::levels_for(m.len(), depth, levels));
        let below =
            (0..l + pieces::SPLIT_LEVELS).try_fold(u, |id, _| cut::split_child_id(id, last));
        below.is_some()
    })
}

/// A hand-back's split entries that do not fit its job: the worker froze pieces the
/// coordinator cannot name, so the job is run again whole.
#[derive(Debug)]
pub(super) struct BadSplit;

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
        // Asked once, or asked again after handing back unclaimed pieces only.
        let again = j.reasked && (j.handed.as_ref()).is_some_and(|d| !d.split);
        let asked = j.asked && (j.handed.is_none() || again) && j.attempt == h.attempt;
        if j.lease != Some(from) || !asked {
            self.counters.ignored_handbacks += 1;
            return;
        }
        // `None`: it ended there, and its result is on its way.
        let Some(kept) = h.kept else { return };
        let (handed, kind) = match self.handed_of(h.job, kept as usize, &h.split) {
            Ok(Some(x)) => x,
            Ok(None) => return,
            Err(BadSplit) => {
                // Pieces it will not search that cannot be named: run it again whole
                // elsewhere, and trust its executor no more than a wrong answer's.
                self.counters.rejected_results += 1;
                self.actions.push(Action::Cancel {
                    on: from,
                    job: h.job,
                });
                self.requeue(h.job);
                self.distrust(from);
                return;
            }
        };
        let (req, prio, predicted_us) = (j.req, j.prio, j.predicted_us);
        let Kind::Subtrees {
            seq, depth, pieces, ..
        } = kind
        else {
            return;
        };
        // A second answer names again what the first handed back: only the rest is new.
        let back: Vec<cut::Unit> = match &j.handed {
            Some(before) => {
                let old: HashSet<cut::Unit> = before.back.iter().copied().collect();
                (handed.back.iter())
                    .filter(|u| !old.contains(u))
                    .copied()
                    .collect()
            }
            None => handed.back.clone(),
        };
        if back.is_empty() {
            return;
        }
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

    /// What job `id` keeps and hands back when it started its first `kept` pieces and
    /// `split` those of its running pieces, and its kind; `None` when it hands back
    /// nothing (or is not a subtree job), an error when `split` does not fit the job.
    fn handed_of(
        &self,
        id: JobId,
        kept: usize,
        split: &[PieceSplit],
    ) -> Result<Option<(Handed, Kind)>, BadSplit> {
        let Some(j) = self.jobs.get(&id) else {
            return Ok(None);
        };
        let Kind::Subtrees {
            seq,
            depth,
            prefixes,
            pieces,
        } = &j.kind
        else {
            return Ok(None);
        };
        let Some(list) = (self.requests.get(&j.req))
            .and_then(|r| r.lines.get(*seq))
            .and_then(|p| p.split.as_ref())
            .map(|s| s.deep.prefixes().list())
        else {
            return Ok(None);
        };
        // The units as the job was sent (materialise drops none of a scheduler's own).
        let units: Vec<(cut::Unit, Vec<Move>)> = (prefixes.iter())
            .filter_map(|&u| Some((u, cut::unit_moves(list, u)?)))
            .collect();
        let moves: Vec<Vec<Move>> = units.iter().map(|(_, m)| m.clone()).collect();
        if !split.is_empty() {
            let all =
                (self.requests.get(&j.req)).is_some_and(|r| r.settings.max_solutions.is_none());
            let sent = sends_split(&self.cfg, all, prefixes, &moves, *depth, *pieces);
            let ordered = split.windows(2).all(|w| w[0].piece < w[1].piece);
            if !sent || !ordered || split.iter().any(|s| s.piece as usize >= kept) {
                return Err(BadSplit);
            }
        }
        let levels = pieces::job_levels(&moves, *depth, *pieces);
        let mut out = Handed {
            results: 0,
            kept: Vec::new(),
            back: Vec::new(),
            split: !split.is_empty(),
        };
        let mut at = 0usize;
        let mut splits = split.iter().peekable();
        for (u, m) in &units {
            let l = pieces::levels_for(m.len(), *depth, levels);
            let n = pieces::count(m, l);
            let split_here = splits.peek().is_some_and(|s| (s.piece as usize) < at + n);
            if at + n <= kept && !split_here {
                out.kept.push(*u);
                out.results += 1;
            } else if at >= kept {
                out.back.push(*u);
            } else {
                // Its first pieces started, the others handed back, each by its id; a
                // piece split where it ran, by its extensions.
                out.results += 1;
                let mut k = at;
                let mut lost = false;
                let mut bad = false;
                pieces::for_each_piece(m, l, &mut |piece| {
                    let Some(p) = cut::descendant_id(*u, &piece[m.len()..]) else {
                        lost = true;
                        return;
                    };
                    let s = splits.next_if(|s| s.piece as usize == k);
                    match s {
                        _ if k >= kept => out.back.push(p),
                        None => out.kept.push(p),
                        Some(s) => {
                            if !pieces::splittable(piece.len(), *depth) {
                                bad = true;
                                return;
                            }
                            let fits = pieces::split_parts(piece, &s.entered, &mut |part, keep| {
                                let below = &part[piece.len()..];
                                let id = below
                                    .iter()
                                    .try_fold(p, |u, &mv| cut::split_child_id(u, mv));
                                match (id, keep) {
                                    (Some(id), true) => out.kept.push(id),
                                    (Some(id), false) => out.back.push(id),
                                    (None, _) => bad = true,
                                }
                            });
                            bad |= fits.is_none();
                        }
                    }
                    k += 1;
                });
                if bad {
                    return Err(BadSplit);
                }
                if lost {
                    // Cannot happen (the levels were chosen within the ids' room); the
                    // job is then left to answer whole, as one that could not hand back.
                    return Ok(None);
                }
            }
            at += n;
        }
        if splits.next().is_some() {
            // An entry past the job's pieces.
            return Err(BadSplit);
        }
        Ok((!out.back.is_empty()).then(|| (out, j.kind.clone())))
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
