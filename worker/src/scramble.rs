//! Random-state scrambles, as the WCA makes them: each is a uniformly random legal state,
//! written as a two-phase solution of its inverse, so that applying the scramble to a
//! solved cube gives the state.
//!
//! # Filtering
//! States too close to solved are drawn again. The rule is the WCA's Regulation 4b3
//! (<https://www.worldcubeassociation.org/regulations/#4b3>): "An official scramble
//! sequence must produce a random state from all states that require at least 2 moves to
//! solve (equal probability for each state)". The 3x3x3 has no exception in 4b3a–4b3f,
//! and TNoodle, the WCA's scramble program (github.com/thewca/tnoodle-lib), implements it
//! the same way: `wcaMinScrambleDistance = 2` in `scrambles/.../scrambles/Puzzle.java`
//! (not overridden by `ThreeByThreeCubePuzzle`), and `generateWcaScramble` draws again
//! while `solveIn(wcaMinScrambleDistance - 1)` finds a solution. Here [`WCA_MIN_MOVES`] is
//! 2 and a state is drawn again while [`solvable_within`] finds a solution of at most 1
//! move: the solved cube and the 18 one-move states (19 of the 4.3·10^19 states, never
//! drawn in practice, and checked for every state all the same).
//!
//! # Reproducibility
//! Scramble `index` of `seed` draws its state from its own generator
//! ([`state_rng`], made from the pair alone), so it is the same whatever the count asked,
//! the thread count, or the order in which scrambles are made. The two-phase search
//! itself is deterministic.

use crate::{Error, StopToken, TwoPhaseSolver};
use proto::{Method, Settings, ValidSettings};
use rayon::prelude::*;
use std::ops::Range;
use tables::canonical::allowed_after;
use tables::facelet::to_facelets;
use tables::{format_moves, Cube, Move, Position, SplitMix64};

/// The fewest moves a scramble's state may need to be solved (WCA Regulation 4b3, see the
/// [module documentation](self)).
pub const WCA_MIN_MOVES: u8 = 2;

/// One scramble: its number, the state it makes and the moves that make it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scramble {
    /// Its number within its seed (from 0): `(seed, index)` makes it again.
    pub index: u64,
    /// The uniformly random state (at least [`WCA_MIN_MOVES`] from solved).
    pub state: Cube,
    /// The moves that take the solved cube to `state` (at most 20).
    pub moves: Vec<Move>,
}

impl Scramble {
    /// The moves in standard notation (`"R U2 F' ..."`).
    pub fn text(&self) -> String {
        format_moves(&self.moves)
    }

    /// The state's 54-character facelet string (URFDLB order).
    pub fn facelets(&self) -> String {
        to_facelets(&self.state)
    }
}

/// The generator of scramble `index` of `seed`: its own stream, made from the pair alone.
/// Distinct indices of one seed start from distinct states (each step below is a
/// bijection of 64-bit words).
pub fn state_rng(seed: u64, index: u64) -> SplitMix64 {
    let key = SplitMix64::new(seed).next_u64();
    SplitMix64::new(SplitMix64::new(key ^ index).next_u64())
}

/// The state of scramble `index` of `seed`: uniformly random among the states that need
/// at least [`WCA_MIN_MOVES`] moves.
pub fn random_state(seed: u64, index: u64) -> Cube {
    let mut rng = state_rng(seed, index);
    first_long_enough(|| Cube::random(&mut rng))
}

/// The first state `draw` gives that needs at least [`WCA_MIN_MOVES`] moves: drawing
/// again keeps the draw uniform over the states that remain.
fn first_long_enough(mut draw: impl FnMut() -> Cube) -> Cube {
    loop {
        let c = draw();
        if !solvable_within(&c, WCA_MIN_MOVES - 1) {
            return c;
        }
    }
}

/// Whether `cube` has a solution of at most `depth` moves: a plain depth-first search
/// over canonical sequences (about 13.35^`depth` nodes; for the small depths of a filter).
pub fn solvable_within(cube: &Cube, depth: u8) -> bool {
    fn dfs(c: &Cube, left: u8, last: Option<Move>) -> bool {
        if c.is_solved() {
            return true;
        }
        if left == 0 {
            return false;
        }
        let allowed = allowed_after(last);
        Move::ALL
            .into_iter()
            .filter(|m| allowed & (1 << m.index()) != 0)
            .any(|m| dfs(&c.apply_move(m), left - 1, Some(m)))
    }
    dfs(cube, depth, None)
}

/// Why a scramble could not be made: a bug either way, reported instead of returned.
/// Each message is complete on its own (no `source` chain that would repeat it).
#[derive(Debug, thiserror::Error)]
pub enum ScrambleError {
    /// The two-phase solver failed (its settings, or a solution that failed its own check).
    #[error("{0}")]
    Solver(Error),
    /// The state's inverse got no solution, or its moves do not make the state.
    #[error("internal error: no scramble for the state {facelets}: {why}")]
    Failed {
        /// The state, as a facelet string.
        facelets: String,
        /// What went wrong.
        why: String,
    },
}

impl From<Error> for ScrambleError {
    fn from(e: Error) -> Self {
        ScrambleError::Solver(e)
    }
}

/// Makes scrambles with a two-phase solver (`Send + Sync`, cheap to clone).
#[derive(Clone, Debug)]
pub struct Scrambler {
    /// The solver that writes each state's inverse as moves.
    solver: TwoPhaseSolver,
    /// What is asked of it: one two-phase solution of at most 20 moves.
    settings: ValidSettings,
}

impl Scrambler {
    /// A scrambler over `solver`'s tables.
    pub fn new(solver: TwoPhaseSolver) -> Result<Scrambler, ScrambleError> {
        let settings = Settings {
            method: Method::TwoPhase,
            max_length: proto::DEFAULT_MAX_LENGTH,
            max_solutions: Some(1),
            ..Settings::default()
        }
        .validate()
        .map_err(Error::Settings)?;
        Ok(Scrambler { solver, settings })
    }

    /// Scramble `index` of `seed`, on the calling thread. Its moves are checked to make
    /// its state before it is returned ([`ScrambleError::Failed`] if they did not, or if
    /// no solution was found).
    pub fn scramble(&self, seed: u64, index: u64) -> Result<Scramble, ScrambleError> {
        let state = random_state(seed, index);
        let failed = |why: String| ScrambleError::Failed {
            facelets: to_facelets(&state),
            why,
        };
        let inverse = Position::new(state.inverse()).map_err(|e| failed(e.to_string()))?;
        let result = self
            .solver
            .solve(&inverse, &self.settings, &StopToken::new())?;
        let moves = result
            .solutions
            .into_iter()
            .next()
            .ok_or_else(|| failed(format!("no solution of its inverse ({:?})", result.stop)))?;
        if Cube::from_moves(&moves) != state {
            return Err(failed(format!("{} does not make it", format_moves(&moves))));
        }
        Ok(Scramble {
            index,
            state,
            moves,
        })
    }

    /// Scrambles `indices` of `seed`, in index order, made in parallel on the current
    /// rayon pool (run it inside `ThreadPool::install` to choose the threads). The first
    /// error, if any, is returned.
    pub fn scrambles(
        &self,
        seed: u64,
        indices: Range<u64>,
    ) -> Result<Vec<Scramble>, ScrambleError> {
        indices
            .into_par_iter()
            .map(|i| self.scramble(seed, i))
            .collect()
    }
}

#[cfg(test)]
mod tests;
