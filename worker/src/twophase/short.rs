//! Optimal solutions for short scrambles: IDA* over whole positions up to a small depth,
//! with the largest of the three axes' phase-1 distances as heuristic (each is a lower
//! bound on the distance to solved, so the first solutions found are optimal).
//!
//! For a random position the heuristic alone exceeds the depth limit, so this costs three
//! table lookups; for a scramble of a few moves it finds an optimal solution in
//! microseconds.

use super::search::Limits;
use super::tables::TwoPhaseTables;
use super::Stop;
use ::tables::canonical::{AFTER, START};
use ::tables::coord::basic::{Flip, Twist, UdSlice};
use ::tables::coord::Coord;
use ::tables::{symmetries, Cube, Move};

/// The symmetries that turn the RL and FB axes into the UD axis.
const AXIS_SYMS: [usize; 3] = [0, 16, 32];

/// What the short search found.
pub(crate) struct ShortOutcome {
    /// Optimal solutions (all of the same length), possibly none.
    pub(crate) solutions: Vec<Vec<Move>>,
    /// Nodes visited.
    pub(crate) nodes: u64,
    /// Why it stopped early, if it did.
    pub(crate) stop: Option<Stop>,
    /// A proved lower bound on the optimal length.
    pub(crate) lower_bound: u8,
}

/// Raw phase-1 coordinates of the three axes.
type AxisCoords = [(u16, u16, u16); 3];

struct Short<'a> {
    t: &'a TwoPhaseTables,
    limits: &'a Limits,
    /// `conj[k][m]`: move `m` as seen on axis `k`.
    conj: [[u8; 18]; 3],
    path: [u8; 32],
    want: usize,
    solutions: Vec<Vec<Move>>,
    nodes: u64,
    next_check: u64,
    stop: Option<Stop>,
}

/// Finds up to `want` optimal solutions of at most `max_depth` moves.
pub(crate) fn search(
    t: &TwoPhaseTables,
    cube: &Cube,
    max_depth: u8,
    want: usize,
    limits: &Limits,
) -> ShortOutcome {
    let syms = symmetries();
    let mut coords: AxisCoords = [(0, 0, 0); 3];
    let mut conj = [[0u8; 18]; 3];
    for (k, &s) in AXIS_SYMS.iter().enumerate() {
        let c = syms.conjugate(cube, s);
        coords[k] = (
            Flip.index(&c) as u16,
            UdSlice.index(&c) as u16,
            Twist.index(&c) as u16,
        );
        for (slot, m) in conj[k].iter_mut().zip(syms.conj_move[s]) {
            *slot = m.index() as u8;
        }
    }
    let mut s = Short {
        t,
        limits,
        conj,
        path: [0; 32],
        want,
        solutions: Vec::new(),
        nodes: 0,
        next_check: 4096,
        stop: None,
    };
    let h = s.bound(&coords);
    let mut lower_bound = h;
    for depth in h..=max_depth {
        s.dfs(*cube, &coords, 0, depth, START);
        if !s.solutions.is_empty() || s.stop.is_some() {
            break;
        }
        lower_bound = depth + 1;
    }
    ShortOutcome {
        solutions: s.solutions,
        nodes: s.nodes,
        stop: s.stop,
        lower_bound,
    }
}

impl Short<'_> {
    /// Largest phase-1 distance over the three axes.
    #[inline]
    fn bound(&self, c: &AxisCoords) -> u8 {
        c.iter()
            .map(|&(f, s, tw)| self.t.p1.get(self.t.p1_index(f, s, tw)))
            .max()
            .unwrap_or(0)
    }

    fn dfs(&mut self, cube: Cube, coords: &AxisCoords, depth: usize, togo: u8, last: usize) {
        if togo == 0 {
            if cube.is_solved() {
                let moves: Vec<Move> = self.path[..depth]
                    .iter()
                    .map(|&m| Move::ALL[m as usize])
                    .collect();
                self.solutions.push(moves);
                if self.solutions.len() >= self.want {
                    self.stop = Some(Stop::Completed);
                }
            }
            return;
        }
        let t = self.t;
        let mut mask = AFTER[last];
        while mask != 0 {
            let m = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            self.nodes += 1;
            let mut next: AxisCoords = [(0, 0, 0); 3];
            for k in 0..3 {
                let mk = self.conj[k][m] as usize;
                let (f, s, tw) = coords[k];
                next[k] = (
                    t.flip_move[f as usize * 18 + mk],
                    t.slice_move[s as usize * 18 + mk],
                    t.twist_move[tw as usize * 18 + mk],
                );
            }
            if self.bound(&next) >= togo {
                continue;
            }
            self.path[depth] = m as u8;
            self.dfs(
                cube.apply_move(Move::ALL[m]),
                &next,
                depth + 1,
                togo - 1,
                m / 3,
            );
            if self.stop.is_some() {
                return;
            }
            if let Some(stop) = self.limits.poll(self.nodes, &mut self.next_check) {
                self.stop = Some(stop);
                return;
            }
        }
    }
}
