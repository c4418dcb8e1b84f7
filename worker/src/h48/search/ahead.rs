//! Tasks taken ahead of their start ([`AHEAD`]): a task of [`search_lanes`] and its
//! root, made and its main-table entries prefetched when the task is taken.
//!
//! [`search_lanes`]: super::search_lanes

use super::lookup::{Lookup, Probe, Pruner};
use super::Gate;
use super::MAX_DEPTH;
use tables::{Cube, Move};

/// How many tasks [`search_lanes`] takes from its source before it starts them, each
/// task's root made and its two table entries prefetched when it is taken. A split depth
/// near the lower bound is tens of thousands of prefixes of a few nodes each, and a start
/// that read its root's entries cold waited for two random lines: a third of the time of
/// a 15-move solve at h5 was there (docs/performance.md, "choices the search makes").
///
/// [`search_lanes`]: super::search_lanes
pub(super) const AHEAD: usize = 4;

/// A task taken from the source of [`search_lanes`](super::search_lanes) ahead of its
/// start.
#[derive(Clone, Copy)]
pub(super) struct Task<'t> {
    pub(super) id: usize,
    pub(super) prefix: &'t [Move],
    pub(super) max_solutions: usize,
    /// Its gate, where it is split where it runs.
    pub(super) gate: Option<&'t Gate>,
    /// Its root, made and prefetched when it was taken (`None`: the start makes none).
    pub(super) root: Option<Root>,
}

/// A task's root: the position after its prefix, its inverse, and their probes, whose
/// main-table entries were prefetched.
#[derive(Clone, Copy)]
pub(super) struct Root {
    pub(super) n: Cube,
    pub(super) i: Cube,
    pub(super) pn: Probe,
    pub(super) pi: Probe,
}

impl Root {
    /// The root of `prefix` on `cube` at `depth`, its entries prefetched; `None` where
    /// the start will not read them (no moves left, or a prefix it refuses).
    #[inline(always)]
    pub(super) fn prefetched<L: Lookup>(
        p: &Pruner<L>,
        cube: &Cube,
        prefix: &[Move],
        depth: u8,
    ) -> Option<Root> {
        if prefix.len() >= usize::from(depth) || usize::from(depth) > MAX_DEPTH {
            return None;
        }
        let root = Root::of(p, cube, prefix);
        p.table.prefetch(root.pn.idx);
        p.table.prefetch(root.pi.idx);
        Some(root)
    }

    /// The root of `prefix` on `cube`, nothing prefetched.
    #[inline(always)]
    pub(super) fn of<L: Lookup>(p: &Pruner<L>, cube: &Cube, prefix: &[Move]) -> Root {
        let mut n = *cube;
        for &m in prefix {
            n = n.apply_move(m);
        }
        let i = n.inverse();
        let pn = p.probe(&n, p.corner_word(&n));
        let pi = p.probe(&i, p.corner_word(&i));
        Root { n, i, pn, pi }
    }
}
