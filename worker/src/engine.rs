//! An opened solver of either method, by the table name a job gives.

use crate::{Error, H48Solver, StopToken, TwoPhaseSolver};
use proto::{Method, PositionResult, ValidSettings};
use tables::Position;

/// One opened solver: what a job's `table` names. Cheap to clone (the tables are shared).
#[derive(Clone, Debug)]
pub enum Engine {
    /// The H48 optimal solver over one main table.
    Optimal(H48Solver),
    /// The two-phase solver.
    TwoPhase(TwoPhaseSolver),
    /// An optimal engine whose search is told, not done ([`crate::hollow`]): a bench's
    /// hollow worker.
    Hollow(crate::hollow::HollowEngine),
}

impl Engine {
    /// The catalog name of the table (`"h48h3k2"`, `"twophase"`).
    pub fn name(&self) -> &str {
        match self {
            Engine::Optimal(s) => s.table_name(),
            Engine::TwoPhase(_) => proto::catalog::TWOPHASE,
            Engine::Hollow(h) => h.name(),
        }
    }

    /// The method it serves.
    pub fn method(&self) -> Method {
        match self {
            Engine::Optimal(_) | Engine::Hollow(_) => Method::Optimal,
            Engine::TwoPhase(_) => Method::TwoPhase,
        }
    }

    /// Solves one position on the calling thread ([`H48Solver::solve`],
    /// [`TwoPhaseSolver::solve`]); `settings.method` is not read (the engine is the
    /// method). The result's `line` and `micros` are 0: the caller knows them.
    pub fn solve(
        &self,
        position: &Position,
        settings: &ValidSettings,
        stop: &StopToken,
    ) -> Result<PositionResult, Error> {
        match self {
            Engine::Optimal(s) => s.solve(position, settings, stop),
            Engine::TwoPhase(s) => s.solve(position, settings, stop),
            Engine::Hollow(h) => h.search().position(position, settings, stop),
        }
    }
}

impl From<H48Solver> for Engine {
    fn from(s: H48Solver) -> Self {
        Engine::Optimal(s)
    }
}

impl From<TwoPhaseSolver> for Engine {
    fn from(s: TwoPhaseSolver) -> Self {
        Engine::TwoPhase(s)
    }
}
