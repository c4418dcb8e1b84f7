//! A child's estimates, resolved one memory step at a time ([`Estimate`]), and the child
//! itself ([`Child`]): its move and estimates, its cubes made only when needed.

use super::lookup::{Lookup, Probe, Pruner};
use tables::moves::MOVE_CUBES;
use tables::{Cube, Move};

/// Main-table indices whose prefetches are issued together, back to back, once the
/// indices of a lane step are all computed (a node's first estimates, or the second
/// estimates of a frame's children), or of two steps in a row for the largest tables
/// (`merge_steps` in the parent module).
///
/// A prefetch that misses the TLB cannot leave the core until its page walk is done; on
/// a virtual machine whose host maps guest memory in 4 kB pages, every random table
/// line does, and the walk takes longer than the core's reorder window lasts. Issued one
/// at a time between other work, each such walk stalls the core on its own; issued back
/// to back, their walks overlap. (`page_walk --burst`; docs/performance.md, "where the
/// time goes".)
pub(super) struct Burst {
    idx: [u64; BURST],
    n: usize,
}

/// Room for the indices of [`MERGE_MAX`] lane steps (at most 18 each).
const BURST: usize = 18 * MERGE_MAX;

/// The most lane steps whose prefetches are issued together.
pub(super) const MERGE_MAX: usize = 2;

impl Burst {
    #[inline(always)]
    pub(super) fn new() -> Burst {
        Burst {
            idx: [0; BURST],
            n: 0,
        }
    }

    /// Adds an index (at most 18 a lane step: one per child of a node).
    #[inline(always)]
    pub(super) fn push(&mut self, idx: u64) {
        if let Some(slot) = self.idx.get_mut(self.n) {
            *slot = idx;
            self.n += 1;
        }
    }

    /// Prefetches every index added, and empties the burst.
    #[inline(always)]
    pub(super) fn issue<L: Lookup>(&mut self, p: &Pruner<L>) {
        for &i in &self.idx[..self.n] {
            p.table.prefetch(i);
        }
        self.n = 0;
    }
}

/// An estimate of a child, resolved one memory step at a time.
#[derive(Clone, Copy)]
pub(super) enum Estimate {
    /// Known (reused from the parent, or read).
    Known(u8),
    /// The main-table entry is prefetched.
    At(Probe),
    /// The main table said "at most the base": the fallback entry is prefetched.
    Fallback(Probe),
    /// Nothing computed yet (not even the child's cube on that side).
    Later,
}

impl Estimate {
    /// Starts the estimate of `c`: its corner word and bound, then (when the bound is
    /// within `rr`) its main-table index, added to `burst` to be prefetched. A corner
    /// bound over `rr` gives `Known` of it at once.
    #[inline(always)]
    pub(super) fn start<L: Lookup>(p: &Pruner<L>, c: &Cube, rr: u8, burst: &mut Burst) -> Estimate {
        Estimate::from_word(p, c, p.corner_word(c), rr, burst)
    }

    /// [`Estimate::start`] with the corner word of `c` already read, the entry's index
    /// added to `burst` instead of prefetched at once.
    #[inline(always)]
    pub(super) fn from_word<L: Lookup>(
        p: &Pruner<L>,
        c: &Cube,
        w: u32,
        rr: u8,
        burst: &mut Burst,
    ) -> Estimate {
        let cd = (w >> 18) as u8;
        if cd > rr {
            return Estimate::Known(cd);
        }
        let pr = p.probe(c, w);
        burst.push(pr.idx);
        Estimate::At(pr)
    }

    /// Reads what an earlier step prefetched, or gives the known value. Returns the
    /// estimate once known, `None` while it waits for a prefetched (fallback) entry. `rr`:
    /// the moves left below the child (the fallback is only read when it could prune).
    #[inline(always)]
    pub(super) fn read<L: Lookup>(
        &mut self,
        p: &Pruner<L>,
        rr: u8,
        lookups: &mut u64,
    ) -> Option<u8> {
        // Tested in turn, the common cases first (a `match` becomes an indirect jump).
        if let Estimate::Known(v) = *self {
            return Some(v);
        }
        if let Estimate::At(pr) = *self {
            *lookups += 1;
            let v = match p.table.first(pr.idx) {
                Some(v) => pr.cd.max(v),
                // "At most the base" cannot prune a child with `rr >= base` moves left:
                // the corner bound stands in, and the fallback read (a second random
                // access) is saved. What is lost is the fallback's exact value, which could
                // only have made the child's bound tight (`== rr`, a half-turn restriction)
                // or pruned a half-turn descendant that reuses it: 0.7% more nodes at
                // h48h5k2 (base 9), 11% less time; see docs/performance.md.
                None if p.table.at_most() <= rr => pr.cd,
                None => {
                    p.table.prefetch_fallback(&pr);
                    *self = Estimate::Fallback(pr);
                    return None;
                }
            };
            *self = Estimate::Known(v);
            return Some(v);
        }
        self.read_rare(p)
    }

    /// [`Estimate::read`] of a fallback entry (under 1% of reads), or of an estimate that was
    /// never started (0 is a valid bound).
    #[cold]
    #[inline(never)]
    fn read_rare<L: Lookup>(&mut self, p: &Pruner<L>) -> Option<u8> {
        let v = match *self {
            Estimate::Fallback(pr) => pr.cd.max(p.table.fallback(&pr)),
            Estimate::Known(v) => v,
            Estimate::At(_) | Estimate::Later => 0,
        };
        *self = Estimate::Known(v);
        Some(v)
    }
}

/// A child of a node: its move and its two estimates. Its cubes are not kept: most
/// children are pruned by their first estimate, so each cube is made from the parent's
/// (`Frame::pn`, `Frame::pi`) only where it is needed.
///
/// The estimate on the side the move is made on is the face's shared one for a quarter
/// turn (in `Frame::shared`, read once for both), and the parent's for a half turn
/// (`first`); `other` is the other side's.
#[derive(Clone, Copy)]
pub(super) struct Child {
    pub(super) m: Move,
    pub(super) face: u8,
    pub(super) back: bool,
    pub(super) quarter: bool,
    /// A half turn's estimate on the side it is made on (the parent's).
    pub(super) first: u8,
    pub(super) other: Estimate,
}

/// The child of a node (normal cube `n`) by move `m` on the back or the front side.
#[inline(always)]
pub(super) fn child_normal(n: &Cube, m: Move, back: bool) -> Cube {
    let mc = &MOVE_CUBES[m.index()];
    if back {
        mc.compose(n)
    } else {
        n.compose(mc)
    }
}

/// The inverse of the child of a node (whose inverse is `i`) by move `m` on the back or
/// the front side.
#[inline(always)]
pub(super) fn child_inverse(i: &Cube, m: Move, back: bool) -> Cube {
    let minv = &MOVE_CUBES[m.inverse().index()];
    if back {
        i.compose(minv)
    } else {
        minv.compose(i)
    }
}

impl Child {
    /// A quarter turn `m` of face `face` made on the back (or front) side, its estimates
    /// still to come.
    #[inline(always)]
    pub(super) fn quarter_turn(m: Move, face: usize, back: bool) -> Child {
        Child {
            m,
            face: face as u8,
            back,
            quarter: true,
            first: 0,
            other: Estimate::Later,
        }
    }

    /// Moves the child's estimates one memory step on: the one of the side its move is
    /// made on first (the face's `shared` one for a quarter turn; a half turn's is its
    /// parent's, within the bound by the tight-bound rule), then the other (started from
    /// the child's cube on that side, made from the parent's `pn` or `pi`). Returns
    /// `Some(true)` once both are known and within `rr`, `Some(false)` once one is over
    /// it, `None` while an entry is on its way.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn resolve<L: Lookup>(
        &mut self,
        p: &Pruner<L>,
        shared: &mut Estimate,
        pn: &Cube,
        pi: &Cube,
        rr: u8,
        lookups: &mut u64,
        burst: &mut Burst,
    ) -> Option<bool> {
        if self.quarter {
            match shared.read(p, rr, lookups) {
                Some(v) if v > rr => return Some(false),
                Some(_) => {}
                None => return None,
            }
        }
        if let Estimate::Later = self.other {
            let c = if self.back {
                child_inverse(pi, self.m, true)
            } else {
                child_normal(pn, self.m, false)
            };
            self.other = Estimate::start(p, &c, rr, burst);
            if let Estimate::At(_) = self.other {
                return None;
            }
        }
        self.other.read(p, rr, lookups).map(|v| v <= rr)
    }

    /// Both estimates (normal, inverse), once [`Child::resolve`] has said `Some(true)`.
    #[inline(always)]
    pub(super) fn values(&self, shared: &Estimate) -> (u8, u8) {
        let value = |e: &Estimate| match e {
            Estimate::Known(v) => *v,
            _ => 0,
        };
        let moved = if self.quarter {
            value(shared)
        } else {
            self.first
        };
        let other = value(&self.other);
        if self.back {
            (moved, other)
        } else {
            (other, moved)
        }
    }
}
