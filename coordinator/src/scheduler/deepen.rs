//! One optimal position spread over many jobs: iterative deepening over move-prefix
//! subtrees.
//!
//! A position first runs whole up to `split_depth - 1` in one job (a "shallow" job: most
//! scrambles of a batch are not that short, but it costs milliseconds and yields the
//! lower bound); more whole jobs of one depth each follow while the depth after the next
//! is predicted small (`Config::whole_nodes`, decided in `results.rs`, each such job
//! searching past the lengths proved empty as a resumed search does). From then on each
//! depth `d` is cut into the canonical move prefixes of
//! `prefix_len` moves, grouped into jobs in the order of their node counts at the
//! previous depth (a subtree that held many nodes holds many positions close to solved,
//! so it is likelier to hold a solution; prefixes ending in U, R or F have 15
//! continuations instead of 12 and are scaled by sqrt(2/3)). A solution at depth `d` ends
//! the position once enough are found (all of depth `d`'s jobs when every optimal
//! solution is asked for); depth `d + 1` begins when `d` is proved empty, or earlier on
//! idle capacity, its results held back until `d` is proved empty.
//!
//! A position with symmetries searches one prefix per class of its symmetry
//! ([`Prefixes`], [`tables::symmetry::PrefixClasses`]): the skipped subtrees hold the
//! images of the kept ones' solutions, and its record holds them all again. Which prefix
//! of a class is kept is chosen per depth, the lightest by the latest counts: so that all
//! are measured once, a "probe" searches every prefix three depths below the first split
//! depth (a small share of the work; its solutions, if any, are dropped).

use super::cut::{self, Counts, Plan};
use proto::{JobId, PositionResult, Settings, Solved, Stop, SubtreeResult};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use tables::symmetry::{PrefixClasses, PrefixOrbits};
use tables::{Move, Position};

/// How many depths below the first split depth of a position with symmetries the probe
/// measures every prefix. On the superflip, counts taken at depth 10 pick prefixes holding
/// 1.650 M nodes at depth 15, counts taken at depth 14 1.654 M; every prefix costs about 13
/// nodes at depth 9.
const PROBE_BELOW: u8 = 3;

/// The move prefixes one split position is cut into.
#[derive(Clone, Debug)]
pub struct Prefixes {
    /// Every canonical prefix of the scheduler's length.
    list: Arc<Vec<Vec<Move>>>,
    /// For a position with symmetries: the classes of the prefixes, of which each depth
    /// searches one each (and the pairs they need), and the symmetry that makes the
    /// solutions whole again.
    reduced: Option<Box<(PrefixOrbits, PrefixClasses)>>,
}

impl Prefixes {
    /// The prefixes of `position`: `every` (the canonical prefixes of `len` moves), in
    /// classes when it has symmetries and `reduce` is on.
    pub fn of(
        position: &Position,
        len: usize,
        every: &Arc<Vec<Vec<Move>>>,
        reduce: bool,
    ) -> Prefixes {
        let orbits = reduce
            .then(|| PrefixOrbits::of(position.cube()))
            .filter(|o| !o.is_trivial());
        Prefixes {
            list: Arc::clone(every),
            reduced: orbits.map(|o| {
                let classes = o.classes(len);
                Box::new((o, classes))
            }),
        }
    }

    /// Every prefix, in the order of [`tables::canonical::sequences`].
    pub fn list(&self) -> &[Vec<Move>] {
        &self.list
    }

    /// Every solution of a depth from those found in its kept subtrees.
    fn whole(&self, found: &[Vec<Move>]) -> Vec<Vec<Move>> {
        let len = self.list.first().map_or(0, Vec::len);
        match &self.reduced {
            Some(r) => r.0.regenerate(found, len),
            None => found.to_vec(),
        }
    }
}

/// What a split position needs next.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Results are outstanding.
    Wait,
    /// Jobs for this depth must be made.
    NeedJobs(u8),
    /// The position is done, for this reason.
    Finished(Stop),
}

/// The prefixes with units in open jobs, by depth (a depth's count of such a prefix is
/// not whole yet).
pub type Pending = HashMap<u8, HashSet<cut::Unit>>;

/// One depth of a split position.
#[derive(Debug, Default)]
struct DepthState {
    /// Its jobs still open.
    open: BTreeSet<JobId>,
    /// Its solutions so far.
    found: Vec<Vec<Move>>,
    /// Nodes of its accepted jobs.
    nodes: u64,
    /// Its units' node counts as their answers came (unit id, nodes), taken into the
    /// position's counts once the depth is proved empty. Until then a prefix's count
    /// ranks the next depths only once the prefix has no unit in an open job: a unit
    /// whose job handed back pieces answers in parts, and a part would rank it as light.
    counted: Vec<(cut::Unit, u64)>,
    /// The newest depth of the counts its jobs were ranked on.
    ranked_on: u8,
}

/// Depths beyond the current one that may be started early: two, so that a small depth
/// costs no round trip of its own (depth d+2 goes out while d+1's jobs run and d's
/// results come back).
pub const EARLY_AHEAD: u8 = 2;

/// The deepening state of one split position.
#[derive(Debug)]
pub struct Deep {
    /// What its depths are cut into.
    prefixes: Prefixes,
    /// The depth searched over every prefix to measure them before the first split depth
    /// of a position with symmetries, until it is done.
    probe: Option<u8>,
    /// Proved lower bound on the distance.
    lower_bound: u8,
    /// Whether a solution found will be proved optimal (`min_length <= lower_bound`).
    optimal: bool,
    /// The longest length proved to have no solution.
    exhausted: Option<u8>,
    /// The depth being proved or searched.
    current: u8,
    /// Node count of each prefix's subtree at the deepest depth proved empty that
    /// searched it (ranks the next depths).
    counts: Vec<u64>,
    /// The same for each unit below a prefix (see [`cut`]), by unit id.
    child_counts: HashMap<cut::Unit, (u64, u8)>,
    /// The depth each of `counts` was taken at (with symmetries a depth searches one
    /// prefix of each class, so a prefix's count may be older than the last depth's).
    count_depth: Vec<u8>,
    /// Units searched as their children (see [`cut`]).
    split: BTreeSet<cut::Unit>,
    /// The deepest depth proved empty by subtree jobs, and its nodes (sizes the next).
    last_full: Option<(u8, u64)>,
    /// Depths with jobs: `current` and at most [`EARLY_AHEAD`] started early.
    depths: BTreeMap<u8, DepthState>,
    /// Nodes and lookups over every accepted job of the position.
    nodes: u64,
    lookups: u64,
    /// A job ran out of the position's time.
    timed_out: bool,
}

/// The settings of a position's shallow job: the same question, up to `split - 1` moves.
/// When `min_length` is beyond that, the job only computes the lower bound.
pub fn shallow_settings(settings: &Settings, split: u8) -> Settings {
    let cap = settings.max_length.min(split.saturating_sub(1));
    if settings.min_length > cap {
        Settings {
            min_length: 0,
            max_length: 0,
            ..settings.clone()
        }
    } else {
        Settings {
            max_length: cap,
            ..settings.clone()
        }
    }
}

/// The settings a position is searched with when every length up to `proved_empty` is
/// already known to have no solution (a resumed search): `min_length` raised past it.
/// The record is still made against the request's own settings (see [`after_shallow`]).
pub fn resumed_settings(settings: &Settings, proved_empty: Option<u8>) -> Settings {
    match proved_empty {
        Some(d) => Settings {
            min_length: settings.min_length.max(d.saturating_add(1)),
            ..settings.clone()
        },
        None => settings.clone(),
    }
}

/// The record of a position every length of which is proved empty before any search
/// (a resume hint at or beyond `max_length`): no solution within `max_length`.
pub fn nothing_within(settings: &Settings) -> Solved {
    Solved {
        solutions: Vec::new(),
        optimal: false,
        depth_exhausted: Some(settings.max_length),
        nodes: 0,
        lookups: 0,
        micros: 0,
        stop: Stop::Exhausted,
    }
}

/// A whole-position result as a record.
pub fn solved(r: PositionResult) -> Solved {
    Solved {
        solutions: r.solutions,
        optimal: r.optimal,
        depth_exhausted: r.depth_exhausted,
        nodes: r.nodes,
        lookups: r.lookups,
        micros: r.micros,
        stop: r.stop,
    }
}

/// What a shallow job's result leaves to do.
#[derive(Debug)]
pub enum AfterShallow {
    /// The result is the position's final answer: its record.
    Done(Solved),
    /// The position goes on, depth by depth, from this state.
    Deepen(Deep),
}

/// What a shallow job's result leaves to do. `settings` are the request's; `proved_empty`
/// is the position's resume hint (the shallow job ran with [`resumed_settings`]): the
/// deepening starts past it, and the record is the one a search without the hint would
/// give (same solutions, same `optimal` flag), with `depth_exhausted` at least the hint.
pub fn after_shallow(
    settings: &Settings,
    split: u8,
    r: PositionResult,
    proved_empty: Option<u8>,
    prefixes: impl FnOnce() -> Prefixes,
) -> AfterShallow {
    let searched = resumed_settings(settings, proved_empty);
    let cap = settings.max_length.min(split.saturating_sub(1));
    let bound_only = searched.min_length > cap;
    let lb = r.lower_bound;
    // Lengths below the lower bound are impossible, proved without searching.
    let below_bound =
        (lb > 0 && settings.min_length <= lb).then(|| (lb - 1).min(settings.max_length));
    let hint = proved_empty.map(|d| d.min(settings.max_length));
    let done = (!bound_only && (!r.solutions.is_empty() || r.stop != Stop::Exhausted))
        || settings.max_length <= cap;
    if done {
        let mut s = solved(r);
        if proved_empty.is_some() {
            // The job searched from past the hint; say what a search from
            // `min_length` would have said.
            s.optimal = !s.solutions.is_empty() && settings.min_length <= lb;
            s.depth_exhausted = s.depth_exhausted.max(below_bound).max(hint);
        }
        return AfterShallow::Done(s);
    }
    let exhausted = if bound_only { None } else { r.depth_exhausted };
    let prefixes = prefixes();
    let current = lb.max(searched.min_length).max(cap + 1);
    let len = prefixes.list().first().map_or(0, Vec::len) as u8;
    let probe = (prefixes.reduced.is_some() && current <= settings.max_length)
        .then(|| current.saturating_sub(PROBE_BELOW))
        .filter(|&p| p > len);
    AfterShallow::Deepen(Deep {
        prefixes,
        probe,
        lower_bound: lb,
        optimal: settings.min_length <= lb,
        exhausted: exhausted.max(below_bound).max(hint),
        current,
        counts: Vec::new(),
        child_counts: HashMap::new(),
        count_depth: Vec::new(),
        split: BTreeSet::new(),
        last_full: None,
        depths: BTreeMap::new(),
        nodes: r.nodes,
        lookups: r.lookups,
        timed_out: false,
    })
}

impl Deep {
    /// What its depths are cut into.
    pub fn prefixes(&self) -> &Prefixes {
        &self.prefixes
    }

    /// The proved lower bound.
    pub fn lower_bound(&self) -> u8 {
        self.lower_bound
    }

    /// The depth being proved or searched.
    pub fn current(&self) -> u8 {
        self.current
    }

    /// The longest length proved to have no solution so far.
    pub fn exhausted(&self) -> Option<u8> {
        self.exhausted
    }

    /// Search nodes over every accepted job of the position so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Solutions still wanted at `depth` (`None`: all).
    pub fn remaining(&self, settings: &Settings, depth: u8) -> Option<usize> {
        let found = self.depths.get(&depth).map_or(0, |d| d.found.len());
        settings
            .max_solutions
            .map(|n| (n as usize).saturating_sub(found).max(1))
    }

    /// Whether `depth`, started early (beyond the current one), already holds every
    /// solution asked for: its other jobs can only add nodes, since its answer stands
    /// unless the current depth finds one, which would void it anyway.
    pub fn settled_early(&self, settings: &Settings, depth: u8) -> bool {
        let Some(want) = settings.max_solutions else {
            return false;
        };
        depth > self.current
            && self
                .depths
                .get(&depth)
                .is_some_and(|d| d.found.len() >= want as usize)
    }

    /// Forgets the open jobs of `depth` (they were dropped).
    pub fn close_jobs(&mut self, depth: u8) {
        if let Some(d) = self.depths.get_mut(&depth) {
            d.open.clear();
        }
    }

    /// Registers `depth` as started.
    pub fn open_depth(&mut self, depth: u8) {
        self.depths.entry(depth).or_default();
    }

    /// Job `old` of `depth` is replaced by `new` (`None`: by nothing).
    pub fn replace_job(&mut self, depth: u8, old: JobId, new: Option<JobId>) {
        let d = self.depths.entry(depth).or_default();
        d.open.remove(&old);
        d.open.extend(new);
    }

    /// Registers a job of `depth`.
    pub fn add_job(&mut self, depth: u8, id: JobId) {
        self.depths.entry(depth).or_default().open.insert(id);
    }

    /// The next depth to start early: the first not started, at most [`EARLY_AHEAD`]
    /// beyond the current one, while no depth from the current one on has found a
    /// solution (then the current one is finishing already).
    pub fn early_candidate(&self, settings: &Settings) -> Option<u8> {
        if self.timed_out || !self.depths.contains_key(&self.current) {
            return None;
        }
        let last = self
            .current
            .saturating_add(EARLY_AHEAD)
            .min(settings.max_length);
        for d in self.current..=last {
            match self.depths.get(&d) {
                Some(s) if !s.found.is_empty() => return None,
                Some(_) => {}
                None => return Some(d),
            }
        }
        None
    }

    /// Takes in an accepted subtree job's results. `prefixes` are the job's prefix
    /// indices, in the order the job listed them.
    pub fn absorb(
        &mut self,
        id: JobId,
        depth: u8,
        prefixes: &[cut::Unit],
        results: Vec<SubtreeResult>,
    ) {
        if self.counts.is_empty() {
            self.counts = vec![0; prefix_count_hint(prefixes)];
        }
        let state = self.depths.entry(depth).or_default();
        state.open.remove(&id);
        for r in results {
            let Some(&i) = prefixes.get(r.prefix as usize) else {
                continue;
            };
            state.counted.push((i, r.nodes));
            self.nodes += r.nodes;
            state.nodes += r.nodes;
            self.lookups += r.lookups;
            if r.stop == Stop::TimeLimit {
                self.timed_out = true;
            }
            if self.probe != Some(depth) {
                state.found.extend(r.solutions);
            }
        }
    }

    /// Takes the counts of `depth`, proved empty, as the ones that rank the next depths.
    /// A unit may answer in parts (pieces handed back go to other jobs): the counts of one
    /// depth add up; a deeper depth's replace an older one's.
    fn settle(&mut self, depth: u8, counted: &[(cut::Unit, u64)]) {
        for &(i, nodes) in counted {
            let add = |c: &mut u64, d: &mut u8| {
                if depth > *d || *c == 0 {
                    (*c, *d) = (nodes, depth);
                } else if depth == *d {
                    *c += nodes;
                }
            };
            if cut::level(i) > 0 {
                let e = self.child_counts.entry(i).or_insert((0, 0));
                add(&mut e.0, &mut e.1);
            }
            // A piece counts for its prefix too.
            let top = cut::prefix_of(i) as usize;
            if top >= self.counts.len() {
                self.counts.resize(top + 1, 0);
            }
            if top >= self.count_depth.len() {
                self.count_depth.resize(top + 1, 0);
            }
            add(&mut self.counts[top], &mut self.count_depth[top]);
        }
    }

    /// Moves on as far as the results allow.
    pub fn step(&mut self, settings: &Settings) -> Step {
        if self.timed_out {
            return Step::Finished(Stop::TimeLimit);
        }
        if let Some(p) = self.probe {
            match self.depths.get(&p) {
                None => return Step::NeedJobs(p),
                Some(s) if !s.open.is_empty() => return Step::Wait,
                Some(_) => {
                    if let Some(s) = self.depths.remove(&p) {
                        self.settle(p, &s.counted);
                    }
                    self.probe = None;
                }
            }
        }
        let want = settings.max_solutions.map_or(usize::MAX, |n| n as usize);
        loop {
            let d = self.current;
            if d > settings.max_length {
                return Step::Finished(Stop::Exhausted);
            }
            let Some(state) = self.depths.get(&d) else {
                return Step::NeedJobs(d);
            };
            if state.found.len() >= want || (state.open.is_empty() && !state.found.is_empty()) {
                return Step::Finished(Stop::Completed);
            }
            if !state.open.is_empty() {
                return Step::Wait;
            }
            // Every subtree of depth d searched, nothing found: d is proved empty.
            self.exhausted = Some(d);
            if let Some(s) = self.depths.remove(&d) {
                self.settle(d, &s.counted);
                self.last_full = Some((d, s.nodes));
            }
            let Some(next) = d.checked_add(1) else {
                return Step::Finished(Stop::Exhausted);
            };
            self.current = next;
        }
    }

    /// The position's record.
    pub fn record(&self, settings: &Settings, stop: Stop, micros: u64) -> Solved {
        let want = settings.max_solutions.map_or(usize::MAX, |n| n as usize);
        let mut solutions = match stop {
            Stop::Exhausted => Vec::new(),
            _ => (self.depths.get(&self.current))
                .map(|s| self.prefixes.whole(&s.found))
                .unwrap_or_default(),
        };
        solutions.sort();
        solutions.dedup();
        solutions.truncate(want);
        Solved {
            optimal: self.optimal && !solutions.is_empty(),
            solutions,
            depth_exhausted: self.exhausted,
            nodes: self.nodes,
            lookups: self.lookups,
            micros,
            stop,
        }
    }

    /// The nodes `depth` should hold: 13 times as many per move as the deepest depth
    /// searched whole (0 before one was).
    pub fn predicted_nodes(&self, depth: u8) -> f64 {
        match self.last_full {
            Some((d, n)) if d < depth => n as f64 * 13f64.powi(i32::from(depth - d)),
            _ => 0.0,
        }
    }

    /// The units of `depth` (prefixes, or the descendants of split ones: see [`cut`]), in
    /// rank order, cut into about `slots * per_slot` jobs (more when a job would exceed
    /// `job_nodes`, the nodes a job should hold at most). Units found too heavy for a job
    /// stay split from here on. Each job comes with the nodes it is predicted to hold.
    pub fn groups(
        &mut self,
        depth: u8,
        slots: usize,
        per_slot: usize,
        job_nodes: u64,
        pending: &Pending,
    ) -> Vec<(Vec<cut::Unit>, f64)> {
        let prefixes = Arc::clone(&self.prefixes.list);
        let n = prefixes.len();
        if n == 0 {
            return Vec::new();
        }
        let (counts, children, _) = self.scaled_counts(pending);
        let settled = self.settled_depth();
        self.depths.entry(depth).or_default().ranked_on = settled;
        // The units of a position with symmetries: the lightest of each class (all of them
        // for the probe).
        let units: Option<Vec<cut::Unit>> = match &self.prefixes.reduced {
            Some(r) if self.probe != Some(depth) => {
                let cost = |i: u32| match self.count_depth.get(i as usize) {
                    Some(&d) if d > 0 => counts[i as usize],
                    _ => u64::MAX / 2,
                };
                let kept = r.1.keep(cost);
                let below =
                    (kept.pairs.iter()).filter_map(|&(i, m)| cut::child_id(cut::Unit::from(i), m));
                let whole = kept.prefixes.iter().map(|&i| cut::Unit::from(i));
                Some(whole.chain(below).collect())
            }
            _ => None,
        };
        let counted = Counts {
            units: units.as_deref(),
            prefixes: &counts,
            children: &children,
            split: &self.split,
        };
        // A reduced depth's units, measured once: for the total and for the cut.
        let measured = units
            .is_some()
            .then(|| cut::measured_units(&prefixes, &counted));
        let total: u64 = match &measured {
            Some(m) => m.iter().map(|u| u.1).sum(),
            // Units split at an earlier depth are counted by their children.
            None => {
                (counts.iter().enumerate())
                    .filter(|(i, _)| !self.split.contains(&(*i as cut::Unit)))
                    .map(|(_, &c)| c)
                    .sum::<u64>()
                    + (children.iter())
                        .filter(|(u, _)| !self.split.contains(u))
                        .map(|(_, &c)| c)
                        .sum::<u64>()
            }
        };
        // Counts are from an earlier depth: about 13 times fewer nodes per move of depth.
        let predicted = self.predicted_nodes(depth);
        let scale = if predicted > 0.0 && total > 0 {
            predicted / total as f64
        } else {
            13.0
        };
        let by_nodes = (total as f64 * scale / job_nodes.max(1) as f64) as usize;
        let n = units.as_ref().map_or(n, Vec::len).max(1);
        let plan = Plan {
            jobs: (slots * per_slot.max(1)).max(by_nodes).clamp(1, n),
        };
        let out = match measured {
            Some(m) => cut::cut_measured(&prefixes, &counted, m, plan),
            None => cut::cut(&prefixes, &counted, plan),
        };
        self.split.extend(out.newly_split);
        (out.groups.into_iter())
            .zip(out.nodes.into_iter().map(|n| n as f64 * scale))
            .collect()
    }
}

impl Deep {
    /// The counts that rank a depth: each prefix's at the deepest depth that counted it
    /// whole (one proved empty, or an open one where `pending` holds none of its units),
    /// scaled to the newest of them (an older depth's count stands for 13 times as many
    /// nodes per move of depth): by prefix, by unit below a prefix, and that newest depth
    /// (0: none counted yet).
    fn scaled_counts(&self, pending: &Pending) -> (Vec<u64>, HashMap<cut::Unit, u64>, u8) {
        let mut counts = self.counts.clone();
        let mut count_depth = self.count_depth.clone();
        let mut child_counts = self.child_counts.clone();
        for (&e, s) in self.depths.range(self.current..) {
            let open = pending.get(&e);
            let mut whole: HashMap<cut::Unit, u64> = HashMap::new();
            for &(i, n) in &s.counted {
                let top = cut::prefix_of(i);
                if open.is_some_and(|o| o.contains(&top)) {
                    continue;
                }
                *whole.entry(top).or_default() += n;
                if cut::level(i) > 0 {
                    let c = child_counts.entry(i).or_insert((0, 0));
                    *c = match c.1 == e {
                        true => (c.0 + n, e),
                        false => (n, e),
                    };
                }
            }
            for (top, n) in whole {
                let top = top as usize;
                if top >= counts.len() {
                    counts.resize(top + 1, 0);
                }
                if top >= count_depth.len() {
                    count_depth.resize(top + 1, 0);
                }
                counts[top] = n;
                count_depth[top] = e;
            }
        }
        let newest = (count_depth.iter())
            .chain(child_counts.values().map(|(_, d)| d))
            .copied()
            .max()
            .unwrap_or(0);
        let norm = |c: u64, d: u8| {
            c.saturating_mul(13u64.saturating_pow(u32::from(newest.saturating_sub(d))))
        };
        let counts: Vec<u64> = (counts.iter().enumerate())
            .map(|(i, &c)| norm(c, count_depth.get(i).copied().unwrap_or(newest)))
            .collect();
        let children: HashMap<cut::Unit, u64> = (child_counts.iter())
            .map(|(&u, &(c, d))| (u, norm(c, d)))
            .collect();
        (counts, children, newest)
    }

    /// `units` of `depth` (the units of its jobs not sent yet, when the depth was cut
    /// early and a depth before it has since been proved empty) ranked again on the
    /// counts as they are now, and grouped into `jobs` jobs of equal predicted nodes,
    /// each with its prediction. `None` when nothing is counted to rank them by.
    pub fn regroup(
        &mut self,
        depth: u8,
        units: &[cut::Unit],
        jobs: usize,
        pending: &Pending,
    ) -> Option<Vec<(Vec<cut::Unit>, f64)>> {
        let (counts, children, newest) = self.scaled_counts(pending);
        if newest == 0 || units.is_empty() {
            return None;
        }
        let prefixes = Arc::clone(&self.prefixes.list);
        let counted = Counts {
            units: Some(units),
            prefixes: &counts,
            children: &children,
            split: &self.split,
        };
        let measured = cut::measured_units(&prefixes, &counted);
        let plan = Plan {
            jobs: jobs.clamp(1, measured.len().max(1)),
        };
        let out = cut::cut_measured(&prefixes, &counted, measured, plan);
        self.split.extend(out.newly_split);
        self.depths.entry(depth).or_default().ranked_on = self.settled_depth();
        let scale = 13f64.powi(i32::from(depth) - i32::from(newest));
        Some(
            (out.groups.into_iter())
                .zip(out.nodes.into_iter().map(|n| n as f64 * scale))
                .collect(),
        )
    }

    /// The started depths from the current one on, each with its open jobs, and whether
    /// they were ranked before the last depth proved empty was.
    pub fn open_depths(&self) -> Vec<(u8, bool, Vec<JobId>)> {
        let settled = self.settled_depth();
        (self.depths.range(self.current..))
            .map(|(&d, s)| (d, s.ranked_on < settled, s.open.iter().copied().collect()))
            .collect()
    }

    /// The deepest depth started (`None`: none).
    pub fn deepest_started(&self) -> Option<u8> {
        self.depths.keys().next_back().copied()
    }

    /// The newest depth of the counts of depths proved empty (0: none).
    fn settled_depth(&self) -> u8 {
        (self.count_depth.iter())
            .chain(self.child_counts.values().map(|(_, d)| d))
            .copied()
            .max()
            .unwrap_or(0)
    }
}

/// How many prefixes a depth has (the counts table grows on demand beyond the hint).
fn prefix_count_hint(prefixes: &[cut::Unit]) -> usize {
    // Only prefixes: a split unit's id is far past them (see [`cut`]).
    (prefixes.iter())
        .filter(|&&i| cut::level(i) == 0)
        .map(|&i| i as usize + 1)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position being proved at `current`, no depth started.
    fn deep_at(current: u8) -> Deep {
        Deep {
            prefixes: Prefixes {
                list: Arc::new(Vec::new()),
                reduced: None,
            },
            probe: None,
            lower_bound: current,
            optimal: true,
            exhausted: None,
            current,
            counts: Vec::new(),
            child_counts: HashMap::new(),
            count_depth: Vec::new(),
            split: BTreeSet::new(),
            last_full: None,
            depths: BTreeMap::new(),
            nodes: 0,
            lookups: 0,
            timed_out: false,
        }
    }

    /// A whole subtree of `nodes` for entry `prefix` of a job's list.
    fn searched(prefix: u32, nodes: u64) -> SubtreeResult {
        SubtreeResult {
            prefix,
            solutions: Vec::new(),
            nodes,
            lookups: 0,
            stop: Stop::Exhausted,
        }
    }

    /// Where units `a`, `b` and `c` come in `groups`' order.
    fn order(groups: &[(Vec<cut::Unit>, f64)], of: [cut::Unit; 3]) -> Vec<cut::Unit> {
        let flat: Vec<cut::Unit> = groups.iter().flat_map(|g| g.0.iter().copied()).collect();
        let mut out: Vec<cut::Unit> = of.to_vec();
        out.sort_by_key(|u| flat.iter().position(|x| x == u));
        out
    }

    #[test]
    fn a_depth_ranks_the_next_on_whole_counts_only_and_regroups_once_proved() {
        let settings = Settings {
            max_length: 20,
            max_solutions: Some(1),
            ..Settings::default()
        };
        // One-move prefixes; 9, 10 and 11 (faces past U, R, F: not scaled) are measured.
        // One job a depth, so that no unit is too big for its job and cut.
        let mut d = deep_at(14);
        d.prefixes.list = Arc::new(tables::canonical::sequences(1));
        d.add_job(14, JobId(1));
        d.absorb(
            JobId(1),
            14,
            &[9, 10, 11],
            vec![searched(0, 100), searched(1, 10), searched(2, 1)],
        );
        assert_eq!(d.step(&settings), Step::NeedJobs(15));
        assert_eq!(d.exhausted(), Some(14));
        let none = Pending::new();
        let g15 = d.groups(15, 1, 1, u64::MAX, &none);
        assert_eq!(order(&g15, [9, 10, 11]), vec![9, 10, 11]);
        d.add_job(15, JobId(2));
        d.add_job(15, JobId(3));
        // Depth 15 in part: 10 whole, 11 only in part (its other pieces are out).
        d.absorb(
            JobId(2),
            15,
            &[10, 11],
            vec![searched(0, 5_000), searched(1, 2_000)],
        );
        let mut pending = Pending::new();
        pending.entry(15).or_default().insert(11);
        // Depth 16 started early: 10 at its whole 15 count, 9 at 13 times its 14 count
        // (1,300), 11 too (13): its part (2,000) does not count.
        let g16 = d.groups(16, 1, 1, u64::MAX, &pending);
        assert_eq!(order(&g16, [9, 10, 11]), vec![10, 9, 11]);
        d.add_job(16, JobId(4));
        assert_eq!(d.step(&settings), Step::Wait);
        assert!(d.open_depths().iter().all(|(_, stale, _)| !stale));
        // 11's last piece: 15 is proved empty, and 16 was ranked before that.
        d.absorb(JobId(3), 15, &[11], vec![searched(0, 20_000)]);
        assert_eq!(d.step(&settings), Step::Wait);
        assert_eq!((d.exhausted(), d.current()), (Some(15), 16));
        let open = d.open_depths();
        assert_eq!(open, vec![(16, true, vec![JobId(4)])]);
        let again = d.regroup(16, &[9, 10, 11], 1, &none);
        let again = again.expect("counted");
        assert_eq!(order(&again, [9, 10, 11]), vec![11, 10, 9]);
        assert!(d.open_depths().iter().all(|(_, stale, _)| !stale));
    }

    #[test]
    fn depths_start_early_up_to_two_ahead_while_none_has_a_solution() {
        let settings = Settings {
            max_length: 20,
            max_solutions: Some(1),
            ..Settings::default()
        };
        let mut d = deep_at(15);
        assert_eq!(d.early_candidate(&settings), None, "15 is not started");
        d.open_depth(15);
        assert_eq!(d.early_candidate(&settings), Some(16));
        d.open_depth(16);
        assert_eq!(d.early_candidate(&settings), Some(17));
        d.open_depth(17);
        assert_eq!(d.early_candidate(&settings), None, "three ahead is too far");
        // A solution at 16 settles what is deeper: nothing more starts.
        let mut d = deep_at(15);
        d.open_depth(15);
        d.open_depth(16);
        d.depths.entry(16).or_default().found.push(Vec::new());
        assert_eq!(d.early_candidate(&settings), None);
        // Nor beyond the longest length asked for.
        let short = Settings {
            max_length: 16,
            ..settings
        };
        let mut d = deep_at(15);
        d.open_depth(15);
        d.open_depth(16);
        assert_eq!(d.early_candidate(&short), None);
    }
}
