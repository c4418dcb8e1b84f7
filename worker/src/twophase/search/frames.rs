//! The phase-1 stack machine's state: a lane (one direction's explicit stack, several
//! interleaved on one thread) and its frames (the children of a node).

use super::*;

/// A phase-1 child: move, flip, UDSlice, twist, its pruning index (or move-table index),
/// and, with the move table, its distance and symmetry pair.
pub(super) type P1Child = (u8, u16, u16, u16, u64, u8, u8);

/// A phase-1 node to expand: its coordinates and, with the move table, its distance, its
/// entry and its symmetry pair (see [`TwoPhaseTables::p1m_locate`]).
#[derive(Clone, Copy)]
pub(super) struct P1Node {
    pub(super) flip: u16,
    pub(super) slice: u16,
    pub(super) twist: u16,
    pub(super) h: u8,
    pub(super) entry: u32,
    pub(super) sp: u8,
}

/// One level of a lane's phase-1 stack: the children of a node.
#[derive(Clone, Copy)]
pub(super) struct P1Frame {
    pub(super) children: [P1Child; 18],
    pub(super) n: u8,
    pub(super) next: u8,
    /// Moves on the path before the children, and moves left including theirs.
    pub(super) depth: u8,
    pub(super) togo: u8,
}

impl P1Frame {
    /// Makes the first `n` children the frame's, to be taken from the first, at `depth`
    /// with `togo` moves left including theirs.
    #[inline(always)]
    pub(super) fn ready(&mut self, n: usize, depth: usize, togo: u8) {
        self.n = n as u8;
        self.next = 0;
        self.depth = depth as u8;
        self.togo = togo;
    }
}

pub(super) const EMPTY_P1_FRAME: P1Frame = P1Frame {
    children: [(0, 0, 0, 0, 0, 0, 0); 18],
    n: 0,
    next: 0,
    depth: 0,
    togo: 0,
};

/// One phase-1 search (one direction at one level) in an explicit stack, so that several
/// run interleaved on one thread: after a lane prefetches table entries the thread turns
/// to the next lane, and finds the entries in cache when it comes back.
pub(super) struct Lane {
    pub(super) dir: Direction,
    /// Longest phase-1 + phase-2 length for this direction (`max_length` less its
    /// premoves).
    pub(super) limit: u8,
    /// Phase-1 moves (indices into `Move::ALL`).
    pub(super) path1: [u8; MAX_PATH],
    /// Phase-2 moves.
    pub(super) path2: [u8; MAX_PATH],
    /// `cubes[i]`: the direction's position after `path1[..i]`; valid for `i < valid`.
    pub(super) cubes: [Cube; MAX_PATH + 1],
    pub(super) valid: usize,
    pub(super) frames: [P1Frame; MAX_PATH],
    /// `frames[..top]` are live (0: finished).
    pub(super) top: usize,
}

impl Lane {
    pub(super) fn new() -> Box<Lane> {
        Box::new(Lane {
            dir: Direction {
                cube: Cube::SOLVED,
                sym: 0,
                inverse: false,
                flip: 0,
                slice: 0,
                twist: 0,
                h1: 0,
                pre: [0; 2],
                npre: 0,
            },
            limit: 0,
            path1: [0; MAX_PATH],
            path2: [0; MAX_PATH],
            cubes: [Cube::SOLVED; MAX_PATH + 1],
            valid: 0,
            frames: [EMPTY_P1_FRAME; MAX_PATH],
            top: 0,
        })
    }
}

/// Directions searched side by side on one thread (see [`Lane`]). Measured with
/// `cubeswarm bench twophase --count 3000 --seed 7`, alternating runs: 2 lanes 0.46-0.49
/// ms, 3 0.48-0.51, 6 0.51-0.52, one direction at a time 0.49-0.55.
pub(super) const LANES: usize = 2;
