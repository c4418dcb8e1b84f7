//! The two-phase search proper.
//!
//! # Directions
//! The position is searched from six directions: conjugated by the identity, URF3 and
//! URF3² (so that each of the three axes plays the UD axis once), and the same for the
//! inverse position. Each direction is also searched with premoves: a position `p · c`
//! for a quarter turn `p` of R, L, F or B, whose solutions `s` give `s + p` for `c` (a
//! decomposition no plain direction produces). Hard positions (no solution by two levels
//! past the first possible one) add canonical two-move premoves. Directions are
//! interleaved by level = premoves + phase-1 depth, so every probe of a level has the
//! same phase-2 budget, and short solutions from any direction come before long ones.
//!
//! # Phase 1
//! IDA* on raw (flip, UDSlice, twist) coordinates with 16-bit move tables; the pruning
//! index (FlipUDSlice class, conjugated twist) is computed per node from tables of some
//! hundred kilobytes (the UDSlice's class and symmetry, the conjugated flip, the class
//! row of the representative slice: see `TwoPhaseTables::p1_index_from`), after an
//! in-cache bound on (UDSlice class, twist). The children's 4-bit entries are prefetched
//! together; the search keeps an explicit stack, and two directions of a level run
//! interleaved on the thread ([`Lane`]): while one waits for its prefetched entries the
//! other works. With two moves left no pruning entry is read at all: the last
//! move must be a quarter turn of R, L, F or B reaching the phase-2 group, which the raw
//! coordinates decide (the twist alone almost always). With the optional move table
//! (`twophase-p1m`) a node's one entry gives all its children's distances: only the
//! children within the bound are generated, and only those to be expanded are located
//! and prefetched ([`Searcher::expand_p1m`]); the tree is the same. A node inside the
//! phase-2 group with one to four moves left is not entered: its continuations back into
//! the group would be phase-2 moves only, ending with a phase-2 move, and a phase-1
//! solution ending with a phase-2 move was already examined one level earlier.
//!
//! # Probes and phase 2
//! At a phase-1 solution (a probe) the position is rebuilt from the path with cached
//! prefix cubes and rejected, cheapest test first, if the phase-2 distance of its corner
//! permutation, of (corner permutation, slice permutation), or the phase-2 table
//! (corner-permutation class, edge8 permutation) exceeds the remaining budget; otherwise
//! phase-2 IDA* runs from that bound up to the budget.
//!
//! Move sequences are canonical in both phases and across the boundary: never the same
//! face twice in a row, and of two opposite faces the one with the smaller index first.
//! Nothing in the search allocates except recording a solution.
//!
//! # Layout
//! - this file: the search's constants, its shared state (`Searcher`), the run over the
//!   directions and levels, and phase 1 (a lane's start, expansion and steps);
//! - `limits`: the probe budget, the stop token and what a run found;
//! - `directions`: the positions searched (the position or its inverse, by the three
//!   diagonal symmetries, with premoves);
//! - `frames`: a lane's explicit stack and its frames;
//! - `phase2`: a phase-1 solution handed to phase 2, the phase-2 search, a solution
//!   recorded;
//! - `tests`: the module's tests.

use super::tables::{decode, TwoPhaseTables, PHASE2_MOVES};
use super::{Goal, Stop};
use crate::StopToken;
use ::tables::canonical::{AFTER, START};
use ::tables::coord::basic::{Flip, Twist, UdSlice};
use ::tables::coord::Coord;
use ::tables::{symmetries, Cube, Move};
use std::cell::Cell;

mod directions;
mod frames;
mod limits;
mod phase2;

use self::directions::{add_directions, Direction, TWO_PREMOVES_AFTER};
use self::frames::{Lane, P1Node, LANES};
pub(crate) use self::limits::{Limits, Outcome};

/// Deepest path either phase can hold (`max_length` is at most 30).
const MAX_PATH: usize = 32;

/// Moves a phase-1 solution may end with: R, R', F, F', L, L', B, B'.
const LAST_PHASE1: u32 =
    (1 << 3) | (1 << 5) | (1 << 6) | (1 << 8) | (1 << 12) | (1 << 14) | (1 << 15) | (1 << 17);

/// `P2_ALLOWED[f]`: the canonical rule's [`AFTER`] masks translated to bit masks over the
/// ten phase-2 moves.
const P2_ALLOWED: [u16; 7] = {
    let mut a = [0u16; 7];
    let mut f = 0;
    while f < 7 {
        let mut k = 0;
        while k < 10 {
            if AFTER[f] & (1 << PHASE2_MOVES[k]) != 0 {
                a[f] |= 1 << k;
            }
            k += 1;
        }
        f += 1;
    }
    a
};

/// Kociemba's permutation index (as `tables::coord::basic::perm_index`) of a permutation
/// of `0..N`, counting the larger entries to the left of each with one popcount.
#[inline(always)]
fn perm_index<const N: usize>(p: [u8; N]) -> u16 {
    let mut seen = 0u32;
    let mut larger = [0u32; N];
    for i in 0..N {
        let v = u32::from(p[i] & 15);
        larger[i] = (seen >> (v + 1)).count_ones();
        seen |= 1 << v;
    }
    let mut x = 0u32;
    for i in (1..N).rev() {
        x = (x + larger[i]) * i as u32;
    }
    x as u16
}

/// Appends `m` to a move sequence, merging it with an earlier move of the same face when
/// only moves of the opposite face (which commute with it) stand between them.
fn push_merged(moves: &mut Vec<Move>, m: Move) {
    for j in (0..moves.len()).rev() {
        let prev = moves[j];
        if prev.axis() != m.axis() {
            break;
        }
        if prev.face() == m.face() {
            let power = (prev.power() + m.power()) % 4;
            if power == 0 {
                moves.remove(j);
            } else {
                moves[j] = Move::new(m.face(), power);
            }
            return;
        }
    }
    moves.push(m);
}

/// Per-search state shared by the lanes; the tables are read-only.
struct Searcher<'a> {
    t: &'a TwoPhaseTables,
    limits: &'a Limits,
    want: usize,
    /// Longest solution still wanted: `max_length`, lowered in an anytime search to one
    /// less than the longest of the `want` shortest solutions held.
    cap: u8,
    /// Whether to keep searching for shorter solutions once `want` are held.
    anytime: bool,
    /// Proved lower bound on the optimal length: an anytime search that reaches it stops.
    floor: u8,
    /// Solutions already held by the caller (for distinctness), then ours.
    known: Vec<Vec<Move>>,
    fresh: usize,
    nodes: u64,
    probes: u64,
    /// Nodes at the last limits check.
    next_check: u64,
    stop: Option<Stop>,
}

/// Runs the two-phase search for up to `opts.max_solutions` solutions in total, counting
/// those in `known` (found earlier, kept distinct from ours). In an anytime search
/// (`opts.anytime`) it goes on once that many are held, for shorter ones only, until the
/// limits stop it, the `want` shortest reach `floor` (a proved lower bound), or every
/// level up to the longest still wanted was searched (then none shorter exists).
pub(crate) fn run(
    t: &TwoPhaseTables,
    cube: &Cube,
    opts: &Goal,
    floor: u8,
    limits: &Limits,
    known: Vec<Vec<Move>>,
) -> Outcome {
    let syms = symmetries();
    let inverse = cube.inverse();
    let mut bases: Vec<(Cube, usize, bool)> = Vec::with_capacity(6);
    for (inv, base) in [(false, cube), (true, &inverse)] {
        for sym in [0usize, 16, 32] {
            let c = syms.conjugate(base, sym);
            // A symmetric position gives the same search twice: skip repeats.
            if !bases.iter().any(|b| b.0 == c) {
                bases.push((c, sym, inv));
            }
        }
    }
    let mut dirs: Vec<Direction> = Vec::with_capacity(54);
    add_directions(t, &bases, 0, &mut dirs);
    add_directions(t, &bases, 1, &mut dirs);
    let mut two_premoves = false;
    let mut s = Searcher {
        t,
        limits,
        want: opts.max_solutions,
        cap: opts.max_length,
        anytime: opts.anytime,
        floor,
        fresh: known.len(),
        known,
        nodes: 0,
        probes: 0,
        next_check: 4096,
        stop: None,
    };
    let mut lanes: Vec<Box<Lane>> = (0..LANES).map(|_| Lane::new()).collect();
    let easiest = dirs.iter().map(|d| d.h1 + d.npre).min().unwrap_or(0);
    let mut level = 0;
    'levels: while level <= s.cap {
        if !two_premoves && level >= easiest + TWO_PREMOVES_AFTER {
            // A hard position: more starting points pay off now.
            add_directions(t, &bases, 2, &mut dirs);
            two_premoves = true;
        }
        // The directions of this level, up to LANES of them at a time, taken in order.
        let mut next_dir = 0;
        let mut running = 0;
        loop {
            while running < LANES && next_dir < dirs.len() {
                let d = dirs[next_dir];
                next_dir += 1;
                let pre = d.npre;
                if level < pre || d.h1 > level - pre {
                    continue;
                }
                let depth = level - pre;
                if depth > 0 && d.h1 == 0 && depth < 5 {
                    continue;
                }
                let lane = &mut lanes[running];
                lane.dir = d;
                lane.limit = s.cap - pre;
                lane.cubes[0] = d.cube;
                lane.valid = 1;
                lane.top = 0;
                s.start(lane, depth);
                if s.stop.is_some() {
                    break 'levels;
                }
                if lane.top > 0 {
                    running += 1;
                }
            }
            if running == 0 {
                break;
            }
            if s.cap < level {
                // An anytime search found a solution shorter than this level's.
                break;
            }
            let mut k = 0;
            while k < running {
                if s.step(&mut lanes[k]) {
                    k += 1;
                } else {
                    if s.stop.is_some() {
                        break 'levels;
                    }
                    running -= 1;
                    lanes.swap(k, running);
                }
            }
        }
        level += 1;
    }
    let solutions = s.known.split_off(s.fresh);
    Outcome {
        solutions,
        nodes: s.nodes,
        probes: s.probes,
        stop: s.stop,
    }
}

impl Searcher<'_> {
    /// Starts `lane` on its direction with `togo` phase-1 moves: searches it at once when
    /// that needs no pruning table (0 to 2 moves), else expands the root.
    fn start(&mut self, lane: &mut Lane, togo: u8) {
        let d = lane.dir;
        match togo {
            0 => self.probe(lane, 0, START),
            1 => self.phase1_last(lane, d.flip, d.slice, d.twist, 0, START),
            2 => self.phase1_two(lane, d.flip, d.slice, d.twist, 0, START),
            _ => {
                let (entry, sp) = match &self.t.p1m {
                    Some(p1m) => {
                        let (i, sp) = self.t.p1m_locate(d.flip, d.slice, d.twist);
                        (p1m.get(i), sp)
                    }
                    None => (0, 0),
                };
                let node = P1Node {
                    flip: d.flip,
                    slice: d.slice,
                    twist: d.twist,
                    h: d.h1,
                    entry,
                    sp,
                };
                self.expand(lane, 0, node, togo, START);
                lane.top = 1;
            }
        }
    }

    /// Generates the children of a phase-1 node at `depth` with `togo >= 3` moves left
    /// into `lane.frames[depth]`: their coordinates, the in-cache (UDSlice class, twist)
    /// bound, and for those it does not prune the pruning index, whose entry is
    /// prefetched. With the move table ([`Searcher::expand_p1m`]) instead.
    fn expand(&mut self, lane: &mut Lane, depth: usize, node: P1Node, togo: u8, last: usize) {
        if self.t.p1m.is_some() {
            self.expand_p1m(lane, depth, node, togo, last);
            return;
        }
        let P1Node {
            flip, slice, twist, ..
        } = node;
        let t = self.t;
        let f = &mut lane.frames[depth];
        let mut mask = AFTER[last];
        let (fr, sr, tr) = (flip as usize * 18, slice as usize * 18, twist as usize * 18);
        let mut n = 0;
        while mask != 0 {
            let m = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let nf = t.flip_move[fr + m];
            let ns = t.slice_move[sr + m];
            let nt = t.twist_move[tr + m];
            let (ss, tc) = t.slice_class_twist(ns, nt);
            if t.p1_cheap(ss, tc) >= togo {
                continue;
            }
            let idx = t.p1_index_from(nf, ns, ss, tc);
            f.children[n] = (m as u8, nf, ns, nt, idx, 0, 0);
            n += 1;
        }
        // The prefetches back to back, once every index is known: walks issued together
        // overlap (see the H48 search's `Burst`).
        for c in &f.children[..n] {
            t.p1.prefetch(c.4);
        }
        self.nodes += u64::from(AFTER[last].count_ones());
        f.ready(n, depth, togo);
    }

    /// [`Searcher::expand`] with the move table: the node's entry gives every child's
    /// distance, so only the children within the bound are generated, and only those
    /// that will be expanded in turn are located in the table (their entries prefetched).
    fn expand_p1m(&mut self, lane: &mut Lane, depth: usize, node: P1Node, togo: u8, last: usize) {
        let t = self.t;
        let Some(p1m) = &t.p1m else { return };
        let f = &mut lane.frames[depth];
        let digits = decode(node.entry);
        let perm = p1m.perm(node.sp);
        let left = togo - 1;
        let mut mask = AFTER[last];
        let (fr, sr, tr) = (
            node.flip as usize * 18,
            node.slice as usize * 18,
            node.twist as usize * 18,
        );
        let mut n = 0;
        while mask != 0 {
            let m = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let digit = ((digits >> (2 * u32::from(perm[m]))) & 3) as u8;
            // The child's distance: the node's, less one, plus the digit.
            let h = (node.h + digit).saturating_sub(1);
            if h >= togo {
                continue;
            }
            let nf = t.flip_move[fr + m];
            let ns = t.slice_move[sr + m];
            let nt = t.twist_move[tr + m];
            let (idx, sp) = if left >= 3 && !(h == 0 && left < 5) {
                let (idx, sp) = t.p1m_locate(nf, ns, nt);
                p1m.prefetch(idx);
                (idx, sp)
            } else {
                (0, 0)
            };
            f.children[n] = (m as u8, nf, ns, nt, idx, h, sp);
            n += 1;
        }
        self.nodes += u64::from(AFTER[last].count_ones());
        f.ready(n, depth, togo);
    }

    /// Advances `lane` until it has prefetched table entries (true: come back later) or
    /// its search is over (false).
    ///
    /// A node's children are generated with their pruning entries prefetched (see
    /// [`Searcher::expand`]) and read only after the other lanes have had a turn, so the
    /// reads overlap with each other and with the other lanes' work.
    fn step(&mut self, lane: &mut Lane) -> bool {
        let t = self.t;
        while lane.top > 0 {
            if self.stop.is_some() {
                lane.top = 0;
                break;
            }
            let top = lane.top - 1;
            let f = &mut lane.frames[top];
            let togo = f.togo;
            if f.next == f.n {
                lane.top = top;
                if let Some(stop) = self.limits.poll(self.nodes, &mut self.next_check) {
                    self.stop = Some(stop);
                }
                continue;
            }
            let (m, nf, ns, nt, idx, kid_h, sp) = f.children[f.next as usize];
            f.next += 1;
            let depth = f.depth as usize;
            let h = match &t.p1m {
                Some(_) => kid_h,
                None => t.p1.get(idx),
            };
            if h >= togo {
                continue;
            }
            let left = togo - 1;
            // In the phase-2 group with 1..=4 moves left: every continuation back into
            // the group would be phase-2 moves only, ending with a phase-2 move.
            if h == 0 && (1..5).contains(&left) {
                continue;
            }
            lane.path1[depth] = m;
            if lane.valid > depth + 1 {
                lane.valid = depth + 1;
            }
            let last = m as usize / 3;
            match left {
                1 => self.phase1_last(lane, nf, ns, nt, depth + 1, last),
                2 => self.phase1_two(lane, nf, ns, nt, depth + 1, last),
                _ => {
                    let entry = t.p1m.as_ref().map_or(0, |p1m| p1m.get(idx));
                    let node = P1Node {
                        flip: nf,
                        slice: ns,
                        twist: nt,
                        h,
                        entry,
                        sp,
                    };
                    self.expand(lane, depth + 1, node, left, last);
                    lane.top = top + 2;
                    return true;
                }
            }
        }
        false
    }

    /// Two phase-1 moves left: instead of looking up the distance of each child, look
    /// at its children directly (the second move must be a quarter turn of R, L, F or B
    /// reaching the phase-2 group, which the twist alone usually rules out: one row of
    /// the twist move table, already in cache).
    #[allow(clippy::too_many_arguments)]
    fn phase1_two(
        &mut self,
        lane: &mut Lane,
        flip: u16,
        slice: u16,
        twist: u16,
        depth: usize,
        last: usize,
    ) {
        let t = self.t;
        let mut mask = AFTER[last];
        let (fr, sr, tr) = (flip as usize * 18, slice as usize * 18, twist as usize * 18);
        while mask != 0 {
            let m = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let nt = t.twist_move[tr + m];
            let row = &t.twist_move[nt as usize * 18..nt as usize * 18 + 18];
            let mut quarters = AFTER[m / 3] & LAST_PHASE1;
            let mut any = false;
            while quarters != 0 {
                let q = quarters.trailing_zeros() as usize;
                quarters &= quarters - 1;
                any |= row[q] == 0;
            }
            if !any {
                continue;
            }
            self.nodes += 1;
            lane.path1[depth] = m as u8;
            if lane.valid > depth + 1 {
                lane.valid = depth + 1;
            }
            self.phase1_last(
                lane,
                t.flip_move[fr + m],
                t.slice_move[sr + m],
                nt,
                depth + 1,
                m / 3,
            );
            if self.stop.is_some() {
                return;
            }
        }
    }

    /// The last phase-1 move: the child must be in the phase-2 group, which the raw
    /// coordinates tell without a table lookup (flip 0, twist 0, slice edges in the slice).
    #[allow(clippy::too_many_arguments)]
    fn phase1_last(
        &mut self,
        lane: &mut Lane,
        flip: u16,
        slice: u16,
        twist: u16,
        depth: usize,
        last: usize,
    ) {
        let t = self.t;
        let mut mask = AFTER[last] & LAST_PHASE1;
        let (fr, sr, tr) = (flip as usize * 18, slice as usize * 18, twist as usize * 18);
        while mask != 0 {
            let m = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            self.nodes += 1;
            if t.flip_move[fr + m] != 0 || t.twist_move[tr + m] != 0 || t.slice_move[sr + m] != 0 {
                continue;
            }
            lane.path1[depth] = m as u8;
            if lane.valid > depth + 1 {
                lane.valid = depth + 1;
            }
            self.probe(lane, depth + 1, m / 3);
            if self.stop.is_some() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
