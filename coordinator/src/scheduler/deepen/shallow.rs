//! A position's whole ("shallow") jobs before it is split: their settings, and what a
//! result leaves to do: the position's record, another whole job of one depth more
//! (while the depth after it is predicted small: `Config::whole_nodes`), or the
//! deepening's start from past every length proved empty.

use super::prefixes::PROBE_BELOW;
use super::{Deep, Prefixes};
use crate::scheduler::state::{Kind, PosKey, Split};
use crate::scheduler::{Scheduler, BRANCHING};
use proto::{PositionResult, Settings, Solved, Stop};
use std::collections::{BTreeMap, BTreeSet, HashMap};

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

impl Scheduler {
    /// A whole job's result (every length up to `cap` searched): the position's record,
    /// its next whole job, or its split.
    pub(in crate::scheduler) fn after_shallow(
        &mut self,
        key: PosKey,
        cap: u8,
        mut r: PositionResult,
    ) {
        let whole_nodes = self.cfg.whole_nodes;
        let Some(req) = self.requests.get_mut(&key.req) else {
            return;
        };
        let Some(p) = req.lines.get_mut(key.seq) else {
            return;
        };
        // The depths after `cap` are predicted from this job's nodes (all of them its
        // last depth's, an overestimate for a job of several depths), BRANCHING times as
        // many each; a job that searched nothing (a lower bound past its cap) predicts
        // nothing. The next depth is searched whole while the one after it is small too
        // (see [`Config::whole_nodes`]).
        let own = r.nodes;
        r.nodes = r.nodes.saturating_add(p.earlier.0);
        r.lookups = r.lookups.saturating_add(p.earlier.1);
        let (every, len, reduce) = (&self.prefixes, self.cfg.prefix_len, self.cfg.symmetry);
        let prefixes = || Prefixes::of(&p.position, len, every, reduce);
        let split = cap.saturating_add(1);
        let (nodes, lookups) = (r.nodes, r.lookups);
        match after_shallow(&req.settings, split, r, p.proved_empty, prefixes) {
            AfterShallow::Done(solved) => self.finish(key, Ok(solved)),
            AfterShallow::Deepen(deep)
                if own > 0
                    && deep.current() == split
                    && deep.exhausted() == Some(cap)
                    && (own as f64) * (BRANCHING * BRANCHING) <= whole_nodes as f64 =>
            {
                // Every length up to `cap` proved empty, and the next is small: searched
                // whole too (a split depth costs its subtrees' starts whatever its nodes).
                p.proved_empty = Some(cap);
                p.earlier = (nodes, lookups);
                let (req, seq) = (key.req, key.seq);
                self.new_job(req, Kind::Shallow { seq, cap: split }, (req, seq, split, 0));
            }
            AfterShallow::Deepen(deep) => {
                let deadline = req.settings.time_limit_ms.and_then(|l| {
                    let start = p.started?;
                    Some(start.saturating_add(l.saturating_mul(1000)))
                });
                p.split = Some(Box::new(Split { deep, deadline }));
                req.split.insert(key.seq);
                if let Some(d) = deadline {
                    self.deadlines.insert((d, key));
                }
                self.advance(key);
            }
        }
    }
}
