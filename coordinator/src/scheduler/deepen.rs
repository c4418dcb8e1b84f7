//! One optimal position spread over many jobs: iterative deepening over move-prefix
//! subtrees.
//!
//! A position first runs whole up to `split_depth - 1` in one job (a "shallow" job: most
//! scrambles of a batch are not that short, but it costs milliseconds and yields the
//! lower bound); more whole jobs of one depth each follow while the depth after the next
//! is predicted small (`Config::whole_nodes`, decided in `shallow`, each such job
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
//!
//! # Layout
//! This file holds the deepening state of one position ([`Deep`]); its parts:
//! - `prefixes`: what a position's depths are cut into ([`Prefixes`]: every canonical
//!   prefix, or one per symmetry class), and the probe that measures them.
//! - `shallow`: the whole jobs before the split, and what their result leaves (the
//!   record, another whole job, or the deepening's start).
//! - `depth`: one depth's life: its jobs open, their results absorbed, the depth proved
//!   empty, the position's record.
//! - `early`: depths started early on idle capacity ([`EARLY_AHEAD`]).
//! - `rank`: the node counts that rank a depth's units, and the nodes a depth is
//!   predicted to hold.
//! - `jobs`: the scheduler's side: a split position moved on, its depths' jobs made,
//!   queued and dropped, its record.
//! - `recut`: a depth started early cut again once a depth before it is proved empty.

use super::cut;
use proto::{JobId, Stop};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use tables::Move;

mod depth;
mod early;
mod jobs;
mod prefixes;
mod rank;
mod recut;
mod shallow;

pub use self::early::EARLY_AHEAD;
pub use self::prefixes::Prefixes;
pub use self::shallow::{
    after_shallow, nothing_within, resumed_settings, shallow_settings, solved, AfterShallow,
};

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
}

#[cfg(test)]
mod tests;
