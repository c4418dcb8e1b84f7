//! The end of a depth: its last jobs, and the threads that would idle while they run.
//!
//! A depth's jobs are cut to about equal predicted nodes ([`cut`]), but a prediction is
//! from an earlier depth (a depth started early is ranked on older counts still): the
//! jobs end one by one while threads go idle, and the depth, and with it the position,
//! waits for the last. Every decision about that tail is made here, each by its knob:
//!
//! - **How finely a job can hand back.** A subtree job searches each unit as its pieces,
//!   [`piece_levels`] moves longer (at most `Config::piece_levels`), so that a piece holds
//!   [`PIECE_NODES`] at least; a unit may grow at most [`MAX_LEVEL`] moves past its
//!   prefix, its pieces included ([`piece_room`]), which bounds how small the units of a
//!   depth's last job can be cut.
//! - **Whom to ask to hand back** ([`Scheduler::ask_handbacks`]): while threads idle with
//!   nothing queued, the longest-running jobs, one for each idle thread, once they have
//!   run [`HANDBACK_AFTER_ROUND_TRIPS`] round trips; a straggler, running [`STRAGGLER`]
//!   times as long as its depth's cut predicted, even with no thread idle; and a job of a
//!   position's current depth for each thread that would leave a deeper depth for it. A
//!   job is asked once, but one sent with `split` that handed back only its unclaimed
//!   pieces may be asked again, for the parts of the pieces it kept.
//! - **When a thread leaves a deeper depth** ([`Scheduler::preemptible`]): a worker whose
//!   threads share jobs takes the shallowest work first, so its threads that run only
//!   deeper depths of a position count as free for the pieces of its current depth.
//! - **Filling past a deeper depth** ([`Scheduler::fill_past_deeper`]): a queued subtree
//!   job also goes to a sharing worker with no room that runs deeper depths of its
//!   position (at most its capacity of jobs not deeper than the one sent, and twice its
//!   capacity in all), so a depth's last pieces do not wait for a deeper depth's jobs.
//!
//! What a hand-back does once asked for is in `handback`; the depths started early that
//! fill idle threads beside a depth's tail are in [`deepen`] (`EARLY_AHEAD`).
//!
//! Each scan and each request is logged at debug level (targets `handback_scan`: the idle
//! threads, round trip, threads that would leave a deeper depth and candidates it saw;
//! `handback_ask`: the job and why), so that a real coordinator's requests can be set
//! beside a replay's (`RUST_LOG=info,handback_scan=debug,handback_ask=debug`).

use super::*;
use proto::pieces;

/// Moves a unit may add to its prefix, its pieces' front moves included (see
/// `handback`). At 3 (ids of 32 bits), 20-superflip's last depth-19 job at 64 × 16
/// threads held 28 units of 7 moves with no piece level left, so it could hand nothing
/// back and ran on one thread from 28 to 52 ms while the other 1,021 idled (0.473
/// efficient; 0.703 at 6).
pub const MAX_LEVEL: u32 = 6;

/// Nodes a piece should hold at least, predicted: a job's units are extended by as many
/// moves as keep their pieces this big. A piece's start costs a few nodes' worth, and a
/// first-solution search stops after the piece that holds its solution rather than after
/// the whole unit: on the embedded default (2 threads, h48h3k2, three 17-movers, against
/// 19df1cd alternated) pieces this small searched 7% fewer nodes in 11% less time.
const PIECE_NODES: f64 = 20.0;

/// Round trips (at least a millisecond each) a job must have run before it is asked to
/// hand back for an idle slot: a younger one is likelier to end before the answer comes.
const HANDBACK_AFTER_ROUND_TRIPS: u64 = 2;

/// A job running this many times as long as its depth's cut predicted (and at least
/// twice [`HANDBACK_AFTER_ROUND_TRIPS`]) is a straggler, asked to hand back even with no
/// slot idle: its pieces go before the deeper depths' jobs, and the depth's end does not
/// wait for it. (A depth started early is ranked on older counts: a unit can hold ten
/// times what its job was cut for.)
const STRAGGLER: u64 = 2;

/// The earliest a job dispatched at `dispatched` and predicted to run `predicted_us` can
/// be a straggler, whatever the round trip (`u64::MAX`: never, it has no prediction).
pub(super) fn straggler_from(dispatched: u64, predicted_us: u64) -> u64 {
    // At least twice the youngest age asked ([`HANDBACK_AFTER_ROUND_TRIPS`] round
    // trips of at least a millisecond).
    let least = 2 * HANDBACK_AFTER_ROUND_TRIPS * 1_000;
    match predicted_us {
        0 => u64::MAX,
        p => dispatched.saturating_add(least.max(STRAGGLER.saturating_mul(p))),
    }
}

/// The piece levels of a job of `units` units, the deepest `deepest` moves below its
/// prefix ([`cut::deepest_level`](super::cut::deepest_level)), predicted to hold `nodes`:
/// as many moves (up to `max` and [`pieces::MAX_PIECE_LEVELS`], and within
/// [`MAX_LEVEL`] for the units they make) as leave pieces of [`PIECE_NODES`] on average.
pub(super) fn piece_levels(deepest: u32, units: usize, nodes: f64, max: u8) -> u8 {
    let room = MAX_LEVEL.saturating_sub(deepest);
    let per_unit = nodes / units.max(1) as f64;
    let mut levels = 0u8;
    while u32::from(levels) < room
        && levels < pieces::MAX_PIECE_LEVELS.min(max)
        && per_unit / BRANCHING.powi(i32::from(levels) + 1) >= PIECE_NODES
    {
        levels += 1;
    }
    levels
}

/// The piece levels units the deepest of which is `deepest` moves below its prefix leave
/// room for.
pub(super) fn piece_room(deepest: u32) -> u8 {
    u8::try_from(MAX_LEVEL.saturating_sub(deepest)).unwrap_or(0)
}

impl Scheduler {
    /// Asks running subtree jobs (on executors that can) to hand back what they have not
    /// started: the stragglers ([`STRAGGLER`]), and while slots are idle with nothing
    /// queued, the longest-running jobs, one for each idle slot not already waiting on an
    /// answer. Looked at most twice a round trip.
    pub(super) fn ask_handbacks(&mut self) {
        let round_trip = self.pace.overhead_us().max(1_000);
        if self.now < self.handback_scan.saturating_add(round_trip / 2) {
            return;
        }
        self.handback_scan = self.now;
        let idle = match self.queue.is_empty() {
            true => self
                .executors
                .idle_threads()
                .saturating_sub(self.asking.len()),
            false => 0,
        };
        let now = self.now;
        let min_age = round_trip * HANDBACK_AFTER_ROUND_TRIPS;
        let mut preempt = self.preemptible();
        // Nothing to look for but stragglers, and none yet: the scan (a look at every
        // running job) would find nothing.
        if idle == 0 && preempt.is_empty() && now < self.straggler_floor {
            return;
        }
        let mut floor = u64::MAX;
        // (straggler first, dispatched, ..., the position its current depth's job is of)
        let mut candidates: Vec<(bool, u64, JobId, ExecutorId, u32, Option<PosKey>)> = Vec::new();
        // With every claim checked, claims are not cut by hand-backs: a unit answered in
        // part cannot be run again alike (see `verify`).
        let every = self.cfg.verify.mode == super::VerifyMode::Every;
        let asked = |e: &&roster::ExecState| e.hands_back && (e.trusted || !every);
        for e in self.executors.values().filter(asked) {
            for id in &e.running {
                let Some(j) = self.jobs.get(id) else { continue };
                // A job sent with `split` that handed back only what it had not claimed
                // may be asked once more, as any job is asked, for what the pieces it
                // kept have not entered.
                let again = j.split
                    && !j.reasked
                    && (j.handed.as_ref()).is_some_and(|d| !d.split && !d.kept.is_empty());
                if (j.asked || j.handed.is_some()) && !again {
                    continue;
                }
                floor = floor.min(straggler_from(j.dispatched, j.predicted_us));
                let age = now.saturating_sub(j.dispatched);
                if age < min_age {
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
                // A job of one unit searched whole has nothing to share, unless it was
                // sent with `split` (its one piece splits where it runs: 20-superflip-all
                // at 1,024 threads and `--rate 3e6` waited 1.38 s for such a job of 4.1e6
                // nodes, never asked, 0.545 efficient).
                let one = |k: &Kind| match k {
                    Kind::Subtrees {
                        prefixes, pieces, ..
                    } => prefixes.len() < 2 && *pieces == 0 && !j.split,
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
        self.straggler_floor = floor;
        tracing::debug!(target: "handback_scan", now, idle, round_trip,
            preempt = preempt.values().map(|p| p.1).sum::<usize>(), candidates = candidates.len());
        candidates.sort_unstable();
        // Stragglers, then one job for each idle thread, then one for each thread that
        // would leave a deeper depth.
        let mut idle = idle;
        for (not_straggler, _, id, on, attempt, current) in candidates {
            let why = if !not_straggler {
                "straggler"
            } else if idle > 0 {
                idle -= 1;
                "idle"
            } else if let Some(n) = current
                .and_then(|k| preempt.get_mut(&k))
                .map(|p| &mut p.1)
                .filter(|n| **n > 0)
            {
                *n -= 1;
                "preempt"
            } else {
                continue;
            };
            if let Some(j) = self.jobs.get_mut(&id) {
                j.reasked = j.asked;
                j.asked = true;
                tracing::debug!(target: "handback_ask", now, job = id.0, why, again = j.reasked);
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

    /// Per split position with a depth started beyond its current one and nothing of its
    /// current depth queued: its current depth, and the threads of sharing executors
    /// that hold its deeper jobs and none of its current depth (a worker's threads take
    /// the shallowest work first, so they would leave those for its current depth's
    /// pieces).
    pub(super) fn preemptible(&self) -> HashMap<PosKey, (u8, usize)> {
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

    /// Sends queued subtree jobs to sharing executors without room whose jobs include
    /// deeper depths of the same position: a worker's threads take the shallowest work
    /// first and leave those for it, so a depth's last pieces do not wait for a deeper
    /// depth's jobs (started early) to end. An executor so holds at most its capacity of
    /// jobs not deeper than the one sent, and twice its capacity in all.
    pub(super) fn fill_past_deeper(&mut self) {
        if self.queue.is_empty() || !self.queue_head_has_deeper() {
            return;
        }
        let ids: Vec<ExecutorId> = self.executors.ids().collect();
        loop {
            let mut progressed = false;
            for &exec in &ids {
                let Some(e) = self.executors.get(exec) else {
                    continue;
                };
                if !e.shares || e.capacity == 0 || e.running.len() >= 2 * e.capacity {
                    continue;
                }
                let Some((prio, id)) = self.queue.best_for(&e.tables) else {
                    continue;
                };
                if !matches!(
                    self.jobs.get(&id).map(|j| &j.kind),
                    Some(Kind::Subtrees { .. })
                ) {
                    continue;
                }
                let deeper = (e.running.iter())
                    .filter_map(|r| self.jobs.get(r))
                    .filter(|j| (j.prio.0, j.prio.1) == (prio.0, prio.1) && j.prio.2 > prio.2)
                    .count();
                if deeper == 0 || e.running.len() - deeper >= e.capacity {
                    continue;
                }
                progressed |= self.send(prio, id, exec);
            }
            if !progressed || self.queue.is_empty() {
                break;
            }
        }
    }

    /// Whether the most urgent queued job of some table is a subtree job of a position
    /// with a deeper depth started.
    fn queue_head_has_deeper(&self) -> bool {
        (self.queue.by_table.values())
            .filter_map(|set| set.first())
            .any(|&((req, seq, depth, _), _)| {
                (self.requests.get(&req))
                    .and_then(|r| r.lines.get(seq))
                    .and_then(|p| p.split.as_ref())
                    .is_some_and(|s| s.deep.deepest_started() > Some(depth))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables::Move;

    /// [`piece_levels`] of a job of `units`.
    fn levels_of(units: &[cut::Unit], nodes: f64, max: u8) -> u8 {
        piece_levels(cut::deepest_level(units), units.len(), nodes, max)
    }

    #[test]
    fn no_job_is_a_straggler_before_its_floor_whatever_the_round_trip() {
        // The age at which `ask_handbacks` calls a job predicted `p` µs a straggler, for a
        // round trip `rt` (at least a millisecond there).
        let straggler_age = |p: u64, rt: u64| {
            let min_age = rt.max(1_000) * HANDBACK_AFTER_ROUND_TRIPS;
            (2 * min_age).max(STRAGGLER.saturating_mul(p))
        };
        for p in [1, 500, 1_999, 2_000, 2_001, 10_000, 1 << 40] {
            for rt in [0, 1, 999, 1_000, 1_001, 2_500, 100_000] {
                let floor = straggler_from(7_000, p);
                assert!(floor <= 7_000 + straggler_age(p, rt), "p {p} rt {rt}");
            }
            // The floor is met at the shortest round trip.
            assert_eq!(straggler_from(7_000, p), 7_000 + straggler_age(p, 1_000));
        }
        assert_eq!(straggler_from(7_000, 0), u64::MAX, "no prediction, never");
    }

    #[test]
    fn pieces_keep_their_least_nodes_within_the_configured_levels_and_the_ids_room() {
        let prefix: cut::Unit = 7;
        let max = pieces::MAX_PIECE_LEVELS;
        assert_eq!(max, 3);
        // Each level cuts a unit's nodes about BRANCHING ways; pieces keep PIECE_NODES at
        // least.
        let least = |levels: i32| PIECE_NODES * BRANCHING.powi(levels);
        assert_eq!(levels_of(&[prefix], least(1) * 0.99, max), 0);
        assert_eq!(levels_of(&[prefix], least(1), max), 1);
        assert_eq!(levels_of(&[prefix], least(2), max), 2);
        assert_eq!(levels_of(&[prefix], least(3), max), 3);
        // 19b-all's depth-18 straggler: one prefix of 4.0e6 nodes.
        assert_eq!(levels_of(&[prefix], 4.0e6, max), 3);
        // The configured levels (the default 2), and never past the wire's bound.
        assert_eq!(
            levels_of(&[prefix], 4.0e6, Config::default().piece_levels),
            2
        );
        assert_eq!(levels_of(&[prefix], 4.0e6, 0), 0);
        assert_eq!(levels_of(&[prefix], 4.0e6, u8::MAX), max);
        // The average unit decides: two units of half the nodes each get one level less.
        assert_eq!(levels_of(&[prefix, prefix + 1], least(3), max), 2);
        // A unit 4 moves below its prefix leaves room for 2 (MAX_LEVEL 6).
        let deep = [Move::ALL[0], Move::ALL[3], Move::ALL[0], Move::ALL[3]];
        let unit = cut::descendant_id(prefix, &deep).expect("within MAX_LEVEL");
        assert_eq!(cut::level(unit), 4);
        assert_eq!(levels_of(&[unit], 4.0e6, max), 2);
        // A unit at MAX_LEVEL has no room at all.
        let deepest = cut::descendant_id(unit, &deep[..2]).expect("within MAX_LEVEL");
        assert_eq!(levels_of(&[deepest], 4.0e6, max), 0);
    }
}
