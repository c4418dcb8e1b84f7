//! Kociemba's two-phase solver: fast solutions of at most `max_length` moves (20 by
//! default, which every position has).
//!
//! # Layout
//! - [`tables`]: [`TwoPhaseTables`], the three table files (`twophase-fsym`, `twophase-p1`,
//!   `twophase-p2`, memory-mapped) and the small tables computed at open.
//! - `search` (private): phase-1 IDA* on (FlipUDSlice class, twist) from six directions
//!   (three axes, position and inverse), each also with premoves, interleaved by length;
//!   each phase-1 solution is checked with small corner/slice tables and the phase-2 table,
//!   then completed by phase-2 IDA* within the remaining budget.
//! - `short` (private): plain IDA* up to [`SHORT_OPTIMAL_DEPTH`] moves with the phase-1
//!   table of all three axes as heuristic, so short scrambles get optimal answers.
//! - `huge` (private): the tables' 4-bit view over a map or its huge-page copy.
//! - [`bench`](mod@bench): CPU time per position on uniformly random states.
//!
//! [`TwoPhaseSolver`] holds the tables behind an `Arc`: clone it freely and solve many
//! positions from many threads against one copy.
//!
//! # Guarantees
//! [`TwoPhaseSolver::solve`] never returns a solution longer than `max_length`, returns
//! distinct solutions, and verifies every solution by applying it to the position before
//! returning it ([`Error::Verification`] if that ever failed, which would be a bug). The
//! search is complete: if no solution of at most `max_length` moves exists and no budget
//! ran out, it stops with [`Stop::Exhausted`]. With the default `max_length` of 20 every
//! position is solved, in about half a millisecond of CPU on average (see
//! [`bench`](mod@bench)).

pub mod bench;
mod huge;
mod search;
mod short;
pub mod tables;

pub use tables::{TableMemory, TwoPhaseTables};

use crate::{Error, StopToken};
use ::tables::{format_moves, Position};
pub(crate) use proto::Stop;
use proto::{PositionResult, ValidSettings};
use std::path::Path;
use std::sync::Arc;

/// Scrambles whose optimal length is at most this get a proved-optimal solution.
pub const SHORT_OPTIMAL_DEPTH: u8 = 7;

/// What one solve asks of the search (the checked settings).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Goal {
    /// Longest solution accepted (1..=30).
    pub(crate) max_length: u8,
    /// How many distinct solutions to find (at least 1).
    pub(crate) max_solutions: usize,
    /// Keep shortening them until the deadline (see [`proto::Settings::anytime`]).
    pub(crate) anytime: bool,
}

/// A two-phase solver over opened tables: `Send + Sync`, cheap to clone and share.
#[derive(Clone, Debug)]
pub struct TwoPhaseSolver {
    /// The tables (shared by every clone).
    tables: Arc<TwoPhaseTables>,
}

impl From<Arc<TwoPhaseTables>> for TwoPhaseSolver {
    fn from(tables: Arc<TwoPhaseTables>) -> Self {
        TwoPhaseSolver { tables }
    }
}

impl TwoPhaseSolver {
    /// Opens the table files in `dir` (see [`TwoPhaseTables::open`]).
    pub fn open(dir: &Path) -> Result<Self, Error> {
        TwoPhaseSolver::open_with(dir, TableMemory::default())
    }

    /// [`TwoPhaseSolver::open`], reading the pruning tables as `memory` says.
    pub fn open_with(dir: &Path, memory: TableMemory) -> Result<Self, Error> {
        Ok(Arc::new(TwoPhaseTables::open_with(dir, memory)?).into())
    }

    /// Opens the tables in `dir`, first building any file that is missing (see
    /// [`TwoPhaseTables::open_or_build`]).
    pub fn open_or_build(
        dir: &Path,
        progress: &dyn ::tables::progress::Progress,
    ) -> Result<Self, Error> {
        Ok(Arc::new(TwoPhaseTables::open_or_build(dir, progress)?).into())
    }

    /// The tables.
    pub fn tables(&self) -> &TwoPhaseTables {
        &self.tables
    }

    /// Solves `position` on the calling thread within `max_length` moves, finding up to
    /// `max_solutions` distinct solutions, sorted by length (stably: among equal lengths,
    /// in the order found). `probe_limit` bounds the phase-1 solutions examined; the
    /// deadline is `stop`'s (`time_limit_ms`, `min_length` and `method` are not read).
    ///
    /// The stop reason is [`Stop::Completed`] when `max_solutions` were found,
    /// [`Stop::Exhausted`] when the search space within `max_length` was searched
    /// completely (no solution, or fewer than asked, exist), else [`Stop::TimeLimit`],
    /// [`Stop::ProbeLimit`] or [`Stop::Cancelled`], with what was found so far. `lookups`
    /// counts phase-1 probes; `lower_bound` is proved by the short-scramble search, and
    /// `optimal` says whether the first solution reaches it.
    ///
    /// The settings were validated ([`proto::Settings::validate`]: `max_length` at most
    /// 30, a solution count of at least 1). Errors: [`Error::Verification`] (a bug) if a
    /// solution failed verification.
    pub fn solve(
        &self,
        position: &Position,
        settings: &ValidSettings,
        stop: &StopToken,
    ) -> Result<PositionResult, Error> {
        let goal = Goal {
            max_length: settings.max_length,
            max_solutions: settings.solution_count(),
            anytime: settings.anytime,
        };
        solve(&self.tables, position, goal, settings.probe_limit, stop)
    }
}

fn solve(
    tables: &TwoPhaseTables,
    position: &Position,
    goal: Goal,
    probe_limit: Option<u64>,
    stop: &StopToken,
) -> Result<PositionResult, Error> {
    let cube = position.cube();
    let mut out = PositionResult::empty(Stop::Exhausted);
    if cube.is_solved() {
        out.solutions.push(Vec::new());
        out.optimal = true;
        out.stop = Stop::Completed;
        return Ok(out);
    }
    out.lower_bound = 1;
    if goal.max_length == 0 {
        out.depth_exhausted = Some(0);
        return Ok(out);
    }
    let limits = search::Limits::new(probe_limit, stop);
    // An anytime search within 20 moves always answers: its deadline counts from its
    // first solution (which every position has within 20 moves, found in milliseconds).
    let limits = if goal.anytime && goal.max_length >= proto::DEFAULT_MAX_LENGTH {
        limits.deadline_after_first_solution()
    } else {
        limits
    };
    // Short scrambles: optimal answers by plain IDA*.
    let short_depth = SHORT_OPTIMAL_DEPTH.min(goal.max_length);
    let short = short::search(tables, cube, short_depth, goal.max_solutions, &limits);
    out.nodes += short.nodes;
    let mut why = short.stop;
    let mut solutions = short.solutions;
    // Proved lower bound on the optimal length.
    out.lower_bound = short.lower_bound.max(1);
    if solutions.len() < goal.max_solutions && why.is_none() {
        let more = search::run(
            tables,
            cube,
            &goal,
            out.lower_bound,
            &limits,
            solutions.clone(),
        );
        out.nodes += more.nodes;
        out.lookups += more.probes;
        why = more.stop;
        solutions.extend(more.solutions);
        if goal.anytime && why.is_none() && !solutions.is_empty() {
            // Every level up to one below the longest kept was searched: nothing shorter
            // exists, so the shortest found is optimal.
            let shortest = solutions.iter().map(Vec::len).min().unwrap_or(0);
            out.lower_bound = out
                .lower_bound
                .max(u8::try_from(shortest).unwrap_or(u8::MAX));
        }
    }
    solutions.sort_by_key(Vec::len);
    // An anytime search keeps every improvement it found: report the shortest asked.
    solutions.truncate(goal.max_solutions);
    for s in &solutions {
        if !position.is_solved_by(s) || s.len() > usize::from(goal.max_length) {
            return Err(Error::Verification {
                moves: format_moves(s),
            });
        }
    }
    out.optimal = solutions
        .first()
        .is_some_and(|s| s.len() <= usize::from(out.lower_bound));
    out.stop = why.unwrap_or(if solutions.len() >= goal.max_solutions {
        Stop::Completed
    } else {
        Stop::Exhausted
    });
    out.depth_exhausted = if solutions.is_empty() && out.stop == Stop::Exhausted {
        Some(goal.max_length)
    } else {
        out.lower_bound.checked_sub(1)
    };
    out.solutions = solutions;
    Ok(out)
}
