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
//! - [`bench`](mod@bench): CPU time per position on uniformly random states.
//!
//! # Guarantees
//! [`solve`] checks the position first (an unsolvable one is [`TwoPhaseError::Unsolvable`]
//! and is never searched), never returns a solution longer than `max_length`, returns
//! distinct solutions, and verifies every solution by applying it to the position before
//! returning it ([`TwoPhaseError::Verification`] if that ever failed, which would be a bug).
//! The search is complete: if no solution of at most `max_length` moves exists and no
//! budget ran out, the answer is [`TwoPhaseError::NoSolutionWithin`]. With the default
//! `max_length` of 20 every position is solved, in about half a millisecond of CPU on
//! average (see [`bench`](mod@bench)).

pub mod bench;
mod huge;
mod search;
mod short;
pub mod tables;

pub use tables::{TableMemory, TwoPhaseTables};

use ::tables::tablefile::TableFileError;
use ::tables::{format_moves, Cube, CubieError, Move};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Scrambles whose optimal length is at most this get a proved-optimal solution.
pub const SHORT_OPTIMAL_DEPTH: u8 = 7;

/// Longest `max_length` accepted (no position needs more than 20; two-phase solutions of
/// more than 30 moves are never useful).
pub const MAX_LENGTH_LIMIT: u8 = 30;

/// Everything that can go wrong in the two-phase solver.
#[derive(Debug, thiserror::Error)]
pub enum TwoPhaseError {
    /// A table file is missing, unreadable or damaged.
    #[error(transparent)]
    Table(#[from] TableFileError),
    /// A table file is well-formed but is not the table it claims to be.
    #[error("table {name} is not a valid two-phase table: {reason}")]
    BadTable {
        /// The table's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `build` was asked for a table this solver does not have.
    #[error("unknown two-phase table {name:?} (known: twophase-fsym, twophase-p1, twophase-p2)")]
    UnknownTable {
        /// The name asked for.
        name: String,
    },
    /// The position cannot be reached from the solved cube.
    #[error("unsolvable position: {0}")]
    Unsolvable(CubieError),
    /// The options are out of range.
    #[error("invalid option: {0}")]
    InvalidOption(&'static str),
    /// The whole search space was searched: no solution of at most `max_length` moves.
    #[error("no solution within {max_length} moves")]
    NoSolutionWithin {
        /// The bound asked for.
        max_length: u8,
    },
    /// The time limit passed before any solution of at most `max_length` moves was found.
    #[error("no solution within {max_length} moves found within the time limit of {limit:?}")]
    TimedOut {
        /// The bound asked for.
        max_length: u8,
        /// The time limit.
        limit: Duration,
    },
    /// The probe limit was reached before any solution of at most `max_length` moves.
    #[error("no solution within {max_length} moves found within the limit of {limit} probes")]
    ProbeLimit {
        /// The bound asked for.
        max_length: u8,
        /// The limit.
        limit: u64,
    },
    /// The cancel flag was raised before any solution was found.
    #[error("search cancelled before a solution within {max_length} moves was found")]
    Cancelled {
        /// The bound asked for.
        max_length: u8,
    },
    /// A solution failed verification (an internal error; please report it).
    #[error("internal error: solution {moves} does not solve the position")]
    Verification {
        /// The faulty solution.
        moves: String,
    },
}

/// Options of [`solve`].
#[derive(Clone, Debug)]
pub struct TwoPhaseOptions {
    /// Longest solution accepted (1..=30; 20 always succeeds).
    pub max_length: u8,
    /// How many distinct solutions to find (at least 1).
    pub max_solutions: usize,
    /// Stop after this much time and return the solutions found so far (an error if none).
    pub time_limit: Option<Duration>,
    /// Stop after this many probes (phase-1 solutions examined) and return the solutions
    /// found so far (an error if none).
    pub probe_limit: Option<u64>,
    /// Stop as soon as this flag is raised (checked every few thousand nodes).
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for TwoPhaseOptions {
    fn default() -> Self {
        TwoPhaseOptions {
            max_length: 20,
            max_solutions: 1,
            time_limit: None,
            probe_limit: None,
            cancel: None,
        }
    }
}

/// One solution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwoPhaseSolution {
    /// The moves, to be applied to the position in order.
    pub moves: Vec<Move>,
    /// Proved optimal: no shorter solution exists (short scrambles, or a solution as long
    /// as a proved lower bound).
    pub optimal: bool,
}

/// What [`solve`] found.
#[derive(Clone, Debug, Default)]
pub struct TwoPhaseResult {
    /// Distinct solutions, at most `max_solutions`, each at most `max_length` moves.
    pub solutions: Vec<TwoPhaseSolution>,
    /// Phase-1 solutions examined (each a potential phase-2 search).
    pub probes: u64,
    /// Search nodes visited (both phases and the short-scramble search).
    pub nodes: u64,
}

/// Why a search stopped before it was complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Enough solutions.
    Done,
    /// Time limit.
    Time,
    /// Probe limit.
    Probes,
    /// Cancel flag.
    Cancelled,
}

/// Solves `cube` within `opts.max_length` moves.
///
/// Errors: [`TwoPhaseError::Unsolvable`] for an impossible position,
/// [`TwoPhaseError::InvalidOption`] for a `max_length` of 0 or above 30 or a
/// `max_solutions` of 0, and, when no solution was found, [`TwoPhaseError::NoSolutionWithin`],
/// [`TwoPhaseError::TimedOut`], [`TwoPhaseError::ProbeLimit`] or
/// [`TwoPhaseError::Cancelled`].
pub fn solve(
    tables: &TwoPhaseTables,
    cube: &Cube,
    opts: &TwoPhaseOptions,
) -> Result<TwoPhaseResult, TwoPhaseError> {
    cube.check().map_err(TwoPhaseError::Unsolvable)?;
    if opts.max_length > MAX_LENGTH_LIMIT {
        return Err(TwoPhaseError::InvalidOption(
            "max_length must be at most 30",
        ));
    }
    if opts.max_solutions == 0 {
        return Err(TwoPhaseError::InvalidOption(
            "max_solutions must be at least 1",
        ));
    }
    let mut result = TwoPhaseResult::default();
    if cube.is_solved() {
        result.solutions.push(TwoPhaseSolution {
            moves: Vec::new(),
            optimal: true,
        });
        return Ok(result);
    }
    if opts.max_length == 0 {
        return Err(TwoPhaseError::NoSolutionWithin { max_length: 0 });
    }
    let limits = search::Limits::new(opts);
    // Short scrambles: optimal answers by plain IDA*.
    let short_depth = SHORT_OPTIMAL_DEPTH.min(opts.max_length);
    let short = short::search(tables, cube, short_depth, opts.max_solutions, &limits);
    result.nodes += short.nodes;
    let mut stop = short.stop;
    for moves in short.solutions {
        result.solutions.push(TwoPhaseSolution {
            moves,
            optimal: true,
        });
    }
    // Proved lower bound on the optimal length.
    let lower_bound = short.lower_bound;
    if result.solutions.len() < opts.max_solutions && stop.is_none() {
        let found: Vec<Vec<Move>> = result.solutions.iter().map(|s| s.moves.clone()).collect();
        let out = search::run(tables, cube, opts, &limits, found);
        result.nodes += out.nodes;
        result.probes += out.probes;
        stop = out.stop;
        for moves in out.solutions {
            let optimal = moves.len() as u8 <= lower_bound;
            result.solutions.push(TwoPhaseSolution { moves, optimal });
        }
    }
    for s in &result.solutions {
        if !cube.apply_moves(&s.moves).is_solved() || s.moves.len() > opts.max_length as usize {
            return Err(TwoPhaseError::Verification {
                moves: format_moves(&s.moves),
            });
        }
    }
    if result.solutions.is_empty() {
        let max_length = opts.max_length;
        return Err(match stop {
            None | Some(Stop::Done) => TwoPhaseError::NoSolutionWithin { max_length },
            Some(Stop::Time) => TwoPhaseError::TimedOut {
                max_length,
                limit: opts.time_limit.unwrap_or_default(),
            },
            Some(Stop::Probes) => TwoPhaseError::ProbeLimit {
                max_length,
                limit: opts.probe_limit.unwrap_or_default(),
            },
            Some(Stop::Cancelled) => TwoPhaseError::Cancelled { max_length },
        });
    }
    Ok(result)
}
