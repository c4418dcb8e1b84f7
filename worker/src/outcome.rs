//! What one solve of one position found, the same shape for both engines.

use proto::{PositionResult, Stop};
use tables::Move;

/// What [`H48Solver::solve`](crate::H48Solver::solve) or
/// [`TwoPhaseSolver::solve`](crate::TwoPhaseSolver::solve) found: a
/// [`proto::PositionResult`] without the input line and the wall time, which the caller
/// knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Solutions, shortest first, each verified against the position.
    pub solutions: Vec<Vec<Move>>,
    /// Whether the first solution is proved optimal.
    pub optimal: bool,
    /// A proved lower bound on the position's distance.
    pub lower_bound: u8,
    /// The longest length proved to have no solution (see the engine's `solve`).
    pub depth_exhausted: Option<u8>,
    /// Search nodes.
    pub nodes: u64,
    /// Main-table lookups (optimal) or phase-1 probes (two-phase).
    pub lookups: u64,
    /// Why the search stopped: [`Stop::Completed`] when it found what was asked,
    /// [`Stop::Exhausted`] when nothing (more) exists within the lengths asked, else the
    /// budget or cancellation that stopped it.
    pub stop: Stop,
}

impl Outcome {
    /// An outcome with nothing found yet, stopped by `stop`.
    pub(crate) fn empty(stop: Stop) -> Outcome {
        Outcome {
            solutions: Vec::new(),
            optimal: false,
            lower_bound: 0,
            depth_exhausted: None,
            nodes: 0,
            lookups: 0,
            stop,
        }
    }

    /// The result of input line `line`, solved in `micros` microseconds.
    pub fn into_result(self, line: u64, micros: u64) -> PositionResult {
        PositionResult {
            line,
            solutions: self.solutions,
            optimal: self.optimal,
            lower_bound: self.lower_bound,
            depth_exhausted: self.depth_exhausted,
            nodes: self.nodes,
            lookups: self.lookups,
            micros,
            stop: self.stop,
        }
    }
}
