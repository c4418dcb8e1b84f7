//! Slots idle while subtree jobs run: the running jobs hand back what they have not
//! started, and it is dealt out again.
//!
//! A subtree job searches each of its units as its pieces ([`proto::pieces`]: the unit
//! extended by one or two front moves, one search each), in an order both ends know. When
//! slots are idle and nothing is queued, the jobs that have run longest are asked
//! ([`Action::Split`]); each answers with how many pieces it started ([`Handback`]), and
//! keeps searching those alone. Every piece from there on becomes a unit of a new job of
//! the same depth and rank: a whole unit where none of its pieces started, else the
//! piece. Nothing is searched twice (the job's answer then covers its kept pieces only,
//! and a solution in a piece it handed back is refused), and nothing is lost: a job that
//! must run again after handing back (its executor gone, its lease ended) is made again
//! from what it kept.

use super::*;
use proto::{pieces, Handback};

/// Nodes a piece should hold at least, predicted: a job's units are extended by as many
/// moves as keep their pieces this big. A piece's start costs a few nodes' worth, and a
/// first-solution search stops after the piece that holds its solution rather than after
/// the whole unit: on the embedded default (2 threads, h48h3k2, three 17-movers, against
/// 19df1cd alternated) pieces this small searched 7% fewer nodes in 11% less time.
const PIECE_NODES: f64 = 20.0;

/// Round trips (at least a millisecond each) a job must have run before it is asked to
/// hand back for an idle slot: a younger one is likelier to end before the answer comes.
const SPLIT_AFTER_ROUND_TRIPS: u64 = 2;

/// A job running this many times as long as its depth's cut predicted (and at least
/// twice [`SPLIT_AFTER_ROUND_TRIPS`]) is a straggler, asked to hand back even with no
/// slot idle: its pieces go before the deeper depths' jobs, and the depth's end does not
/// wait for it. (A depth started early is ranked on older counts: a unit can hold ten
/// times what its job was cut for.)
const STRAGGLER: u64 = 2;

/// The piece levels of a job of `units` predicted to hold `nodes`: as many moves (up to
/// `max` and [`pieces::MAX_PIECE_LEVELS`], and within [`cut::MAX_LEVEL`] for the units
/// they make) as leave pieces of [`PIECE_NODES`] on average.
pub(super) fn piece_levels(units: &[cut::Unit], nodes: f64, max: u8) -> u8 {
    let top = units.iter().map(|&u| cut::level(u)).max().unwrap_or(0);
    let room = cut::MAX_LEVEL.saturating_sub(top);
    let per_unit = nodes / units.len().max(1) as f64;
    let mut levels = 0u8;
    while u32::from(levels) < room
        && levels < pieces::MAX_PIECE_LEVELS.min(max)
        && per_unit / 13f64.powi(i32::from(levels) + 1) >= PIECE_NODES
    {
        levels += 1;
    }
    levels
}

impl Scheduler {
    /// Executor `id` hands back the unstarted pieces of its jobs when asked (or not).
    pub fn set_splits(&mut self, id: ExecutorId, splits: bool) {
        self.executors.update(id, |e| e.splits = splits);
    }

    /// Executor `id`'s threads share its jobs' pieces (or not): see
    /// [`Executor::shares_jobs`](crate::executor::Executor::shares_jobs).
    pub fn set_shares(&mut self, id: ExecutorId, shares: bool) {
        self.executors.update(id, |e| e.shares = shares);
    }

    /// Executor `id` runs `threads` jobs at once (its capacity less the jobs it queues
    /// ahead): a job sent to it beyond them waits for one. 0: all of its capacity.
    pub fn set_threads(&mut self, id: ExecutorId, threads: usize) {
        self.executors.update(id, |e| e.threads = threads);
    }

    /// Asks running subtree jobs (on executors that can) to hand back what they have not
    /// started: the stragglers ([`STRAGGLER`]), and while slots are idle with nothing
    /// queued, the longest-running jobs, one for each idle slot not already waiting on an
    /// answer. Looked at most twice a round trip.
    pub(super) fn ask_splits(&mut self) {
        let round_trip = self.pace.overhead_us().max(1_000);
        if self.now < self.split_scan.saturating_add(round_trip / 2) {
            return;
        }
        self.split_scan = self.now;
        let idle = match self.queue.is_empty() {
            true => self
                .executors
                .idle_threads()
                .saturating_sub(self.asking.len()),
            false => 0,
        };
        let now = self.now;
        let min_age = round_trip * SPLIT_AFTER_ROUND_TRIPS;
        let mut preempt = self.preemptible();
        // (straggler first, dispatched, ..., the position its current depth's job is of)
        let mut candidates: Vec<(bool, u64, JobId, ExecutorId, u32, Option<PosKey>)> = Vec::new();
        for e in self.executors.values().filter(|e| e.splits) {
            for id in &e.running {
                let Some(j) = self.jobs.get(id) else { continue };
                let age = now.saturating_sub(j.dispatched);
                if age < min_age || j.asked || j.handed.is_some() {
                    continue;
                }
                let straggler = j.predicted_us > 0
                    && age >= (2 * min_age).max(STRAGGLER.saturating_mul(j.predicted_us));
                // A job of its position's current depth, where threads run deeper ones.
                let current = match &j.kind {
                    Kind::Subtrees { seq, depth, .. } => {
                        let key = PosKey {
                            req: j.req,
                            seq: *seq,
                        };
                        (preempt
                            .get(&key)
                            .is_some_and(|&(d, n)| d == *depth && n > 0))
                        .then_some(key)
                    }
                    _ => None,
                };
                if !straggler && idle == 0 && current.is_none() {
                    continue;
                }
                // A job of one unit searched whole has nothing to share.
                let one = |k: &Kind| match k {
                    Kind::Subtrees {
                        prefixes, pieces, ..
                    } => prefixes.len() < 2 && *pieces == 0,
                    _ => true,
                };
                if one(&j.kind) {
                    continue;
                }
                if let (Kind::Subtrees { .. }, Some(on)) = (&j.kind, j.lease) {
                    candidates.push((!straggler, j.dispatched, *id, on, j.attempt, current));
                }
            }
        }
        candidates.sort_unstable();
        // Stragglers, then one job for each idle thread, then one for each thread that
        // would leave a deeper depth.
        let mut idle = idle;
        for (not_straggler, _, id, on, attempt, current) in candidates {
            if not_straggler {
                if idle > 0 {
                    idle -= 1;
                } else if let Some(n) = current
                    .and_then(|k| preempt.get_mut(&k))
                    .map(|p| &mut p.1)
                    .filter(|n| **n > 0)
                {
                    *n -= 1;
                } else {
                    continue;
                }
            }
            if let Some(j) = self.jobs.get_mut(&id) {
                j.asked = true;
            }
            self.asking.insert(id);
            self.counters.splits_asked += 1;
            self.actions.push(Action::Split {
                on,
                job: id,
                attempt,
            });
        }
    }

    /// Executor `from` answered a request to split a job: the pieces it handed back
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
                pieces: pieces.min(piece_room(chunk)),
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

    /// Per split position with a depth started beyond its current one and nothing of its
    /// current depth queued: its current depth, and the threads of sharing executors
    /// that hold its deeper jobs and none of its current depth (a worker's threads take
    /// the shallowest work first, so they would leave those for its current depth's
    /// pieces).
    fn preemptible(&self) -> HashMap<PosKey, (u8, usize)> {
        let mut current: HashMap<PosKey, u8> = HashMap::new();
        for (&req, r) in &self.requests {
            for &seq in &r.split {
                let Some(deep) = r
                    .lines
                    .get(seq)
                    .and_then(|p| p.split.as_ref())
                    .map(|s| &s.deep)
                else {
                    continue;
                };
                let d = deep.current();
                if deep.deepest_started() > Some(d)
                    && !self.queue.holds_up_to(&r.table, req, seq, d)
                {
                    current.insert(PosKey { req, seq }, d);
                }
            }
        }
        let mut out: HashMap<PosKey, (u8, usize)> = HashMap::new();
        if current.is_empty() {
            return out;
        }
        let mut shallowest: Vec<(PosKey, u8)> = Vec::new();
        for e in self
            .executors
            .values()
            .filter(|e| e.shares && e.capacity > 0)
        {
            shallowest.clear();
            for j in e.running.iter().filter_map(|id| self.jobs.get(id)) {
                let Kind::Subtrees { seq, depth, .. } = &j.kind else {
                    continue;
                };
                let key = PosKey {
                    req: j.req,
                    seq: *seq,
                };
                if !current.contains_key(&key) {
                    continue;
                }
                match shallowest.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, m)) => *m = (*m).min(*depth),
                    None => shallowest.push((key, *depth)),
                }
            }
            let threads = match e.threads {
                0 => e.capacity,
                t => t.min(e.capacity),
            };
            for &(key, m) in &shallowest {
                if let Some(&d) = current.get(&key) {
                    if m > d {
                        out.entry(key).or_insert((d, 0)).1 += threads;
                    }
                }
            }
        }
        out
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
                    // job is then left to answer whole, as one that could not split.
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
                    pieces: pieces.min(piece_room(&handed.kept)),
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

/// The piece levels the unit ids of `units` leave room for.
fn piece_room(units: &[cut::Unit]) -> u8 {
    let top = units.iter().map(|&u| cut::level(u)).max().unwrap_or(0);
    u8::try_from(cut::MAX_LEVEL.saturating_sub(top)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_keep_their_least_nodes_within_the_configured_levels_and_the_ids_room() {
        let prefix: cut::Unit = 7;
        let max = pieces::MAX_PIECE_LEVELS;
        assert_eq!(max, 3);
        // Each level cuts a unit's nodes about 13 ways; pieces keep PIECE_NODES at least.
        let least = |levels: i32| PIECE_NODES * 13f64.powi(levels);
        assert_eq!(piece_levels(&[prefix], least(1) * 0.99, max), 0);
        assert_eq!(piece_levels(&[prefix], least(1), max), 1);
        assert_eq!(piece_levels(&[prefix], least(2), max), 2);
        assert_eq!(piece_levels(&[prefix], least(3), max), 3);
        // 19b-all's depth-18 straggler: one prefix of 4.0e6 nodes.
        assert_eq!(piece_levels(&[prefix], 4.0e6, max), 3);
        // The configured levels (the default 2), and never past the wire's bound.
        assert_eq!(
            piece_levels(&[prefix], 4.0e6, Config::default().piece_levels),
            2
        );
        assert_eq!(piece_levels(&[prefix], 4.0e6, 0), 0);
        assert_eq!(piece_levels(&[prefix], 4.0e6, u8::MAX), max);
        // The average unit decides: two units of half the nodes each get one level less.
        assert_eq!(piece_levels(&[prefix, prefix + 1], least(3), max), 2);
        // A unit 4 moves below its prefix leaves room for 2 (MAX_LEVEL 6).
        let deep = [Move::ALL[0], Move::ALL[3], Move::ALL[0], Move::ALL[3]];
        let unit = cut::descendant_id(prefix, &deep).expect("within MAX_LEVEL");
        assert_eq!(cut::level(unit), 4);
        assert_eq!(piece_levels(&[unit], 4.0e6, max), 2);
        // A unit at MAX_LEVEL has no room at all.
        let deepest = cut::descendant_id(unit, &deep[..2]).expect("within MAX_LEVEL");
        assert_eq!(piece_levels(&[deepest], 4.0e6, max), 0);
    }
}
