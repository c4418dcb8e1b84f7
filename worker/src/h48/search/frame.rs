//! One level of the explicit depth-first stack: a node's children and which comes next.

use super::*;

/// One level of the explicit depth-first stack: the children of a node, generated with
/// their table entries prefetched, and which of them comes next.
#[derive(Clone, Copy)]
pub(super) struct Frame {
    pub(super) children: [std::mem::MaybeUninit<Child>; 18],
    /// The next child to evaluate.
    pub(super) next: u8,
    /// Moves left below the children.
    pub(super) rr: u8,
    /// The node's allowed front and back moves (tight-bound restrictions applied).
    pub(super) mf: u32,
    pub(super) mb: u32,
    /// The move that led to the node: 0 none (the root), 1 a front move, 2 a back move.
    pub(super) via: u8,
    /// The node and its inverse (children's cubes are made from them when needed).
    pub(super) pn: Cube,
    pub(super) pi: Cube,
    /// `live[..nl]`: the children still in the running, in order.
    pub(super) live: [u8; 18],
    pub(super) nl: u8,
    /// Whether every live child's estimates are known (and within the bound).
    pub(super) resolved: bool,
    /// Per face, the estimate its two quarter turns share (see [`expand`]); `Known(0)`
    /// where none is shared.
    pub(super) shared: [Estimate; 6],
}

/// `0, 1, …, 17`: every child live.
pub(super) const ALL_KIDS: [u8; 18] = {
    let mut a = [0u8; 18];
    let mut j = 0;
    while j < 18 {
        a[j] = j as u8;
        j += 1;
    }
    a
};

pub(super) const EMPTY_FRAME: Frame = Frame {
    children: [std::mem::MaybeUninit::uninit(); 18],
    next: 0,
    rr: 0,
    mf: 0,
    mb: 0,
    via: 0,
    pn: Cube::SOLVED,
    pi: Cube::SOLVED,
    live: [0; 18],
    nl: 0,
    resolved: false,
    shared: [Estimate::Known(0); 6],
};
