//! A child's estimates, resolved one memory step at a time ([`Est`]), and the child
//! itself ([`Kid`]) with its inverse made only when needed.

use super::lookup::{Lookup, Probe, Pruner};
use tables::moves::MOVE_CUBES;
use tables::{Cube, Move};

/// An estimate of a child, resolved one memory step at a time.
#[derive(Clone, Copy)]
pub(super) enum Est {
    /// Known (reused from the parent, or read).
    Known(u8),
    /// The corner word is read; the main-table index is not computed yet.
    Word(u32),
    /// The main-table entry is prefetched.
    At(Probe),
    /// The main table said "at most the base": the fallback entry is prefetched.
    Fallback(Probe),
    /// Nothing computed yet (for an inverse estimate: the inverse cube is not made yet).
    Later,
    /// The estimate the child shares with the other quarter turn of its face, kept in the
    /// frame (`Frame::shared`): see `expand`.
    Shared,
}

impl Est {
    /// Moves the estimate of `c` one step on: reads what an earlier step prefetched, or
    /// computes an index and prefetches its entry. Returns the estimate once known, `None`
    /// while it waits for a prefetched entry.
    #[inline(always)]
    pub(super) fn advance<L: Lookup>(
        &mut self,
        p: &Pruner<L>,
        c: &Cube,
        lookups: &mut u64,
    ) -> Option<u8> {
        if let Est::Word(w) = *self {
            let idx = p.index(c, w);
            p.table.prefetch(idx);
            *self = Est::At(Probe {
                cd: (w >> 18) as u8,
                idx,
            });
            return None;
        }
        self.read(p, lookups)
    }

    /// [`Est::advance`] for an estimate whose index is already computed (every shared
    /// estimate is): reads what an earlier step prefetched, or gives the known value.
    #[inline(always)]
    pub(super) fn read<L: Lookup>(&mut self, p: &Pruner<L>, lookups: &mut u64) -> Option<u8> {
        match *self {
            Est::Known(v) => return Some(v),
            Est::At(pr) => {
                *lookups += 1;
                match p.table.first(pr.idx) {
                    Some(v) => *self = Est::Known(pr.cd.max(v)),
                    None => {
                        p.table.prefetch_fallback(pr.idx);
                        *self = Est::Fallback(pr);
                        return None;
                    }
                }
            }
            Est::Fallback(pr) => *self = Est::Known(pr.cd.max(p.table.fallback(pr.idx))),
            // Started (`Later`, `Word`) or read from the frame (`Shared`) before it gets
            // here; 0 is a valid bound if it did not.
            Est::Word(_) | Est::Later | Est::Shared => *self = Est::Known(0),
        }
        match *self {
            Est::Known(v) => Some(v),
            _ => None,
        }
    }
}

#[derive(Clone, Copy)]
pub(super) struct Kid {
    pub(super) m: Move,
    pub(super) back: bool,
    pub(super) n: Cube,
    /// The inverse: computed only once it is needed (most children are pruned by their
    /// first estimate), unless an estimate of it comes first.
    pub(super) i: Cube,
    pub(super) i_ready: bool,
    pub(super) hn: Est,
    pub(super) hi: Est,
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

impl Kid {
    /// Whether one of the child's estimates is its face's shared one (a quarter turn).
    #[inline(always)]
    pub(super) fn shared(&self) -> bool {
        matches!(self.hn, Est::Shared) || matches!(self.hi, Est::Shared)
    }

    /// Starts the normal estimate if it is not started yet (a front quarter turn, whose
    /// shared inverse estimate came first), then moves it one step on (see
    /// [`Est::advance`]); a corner bound over `rr` gives `Some(u8::MAX)`.
    #[inline(always)]
    pub(super) fn normal_estimate<L: Lookup>(
        &mut self,
        p: &Pruner<L>,
        rr: u8,
        lookups: &mut u64,
    ) -> Option<u8> {
        if let Est::Later = self.hn {
            let w = p.corner_word(&self.n);
            if (w >> 18) as u8 > rr {
                return Some(u8::MAX);
            }
            self.hn = Est::Word(w);
        }
        self.hn.advance(p, &self.n, lookups)
    }

    /// Makes the inverse cube if it is not made yet (`pi`: the parent's inverse).
    #[inline(always)]
    pub(super) fn make_inverse(&mut self, pi: &Cube) {
        if !self.i_ready {
            self.i = child_inverse(pi, self.m, self.back);
            self.i_ready = true;
        }
    }

    /// Makes the inverse cube if it is not made yet (`pi`: the parent's inverse), then
    /// moves the inverse estimate one step on (see [`Est::advance`]); a corner bound
    /// over `rr` gives `Some(u8::MAX)`.
    #[inline(always)]
    pub(super) fn inverse_estimate<L: Lookup>(
        &mut self,
        p: &Pruner<L>,
        pi: &Cube,
        rr: u8,
        lookups: &mut u64,
    ) -> Option<u8> {
        if !self.i_ready {
            self.i = child_inverse(pi, self.m, self.back);
            self.i_ready = true;
            if let Est::Later = self.hi {
                let w = p.corner_word(&self.i);
                if (w >> 18) as u8 > rr {
                    return Some(u8::MAX);
                }
                self.hi = Est::Word(w);
            }
        }
        self.hi.advance(p, &self.i, lookups)
    }
}
