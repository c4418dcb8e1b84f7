//! The final answer for one input line.

use crate::job::{JobError, Method, Settings, Stop};
use tables::{Move, ParseError};

/// What solving one input line produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The input's line number (1-based; 1 for a position given on the command line).
    pub line: u64,
    /// The input text as given (trimmed).
    pub input: String,
    /// The solutions, or why there are none.
    pub outcome: Result<Solved, RecordError>,
}

/// What the solver found for a position (possibly nothing: see [`Solved::note`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solved {
    /// Solutions, shortest first, each verified.
    pub solutions: Vec<Vec<Move>>,
    /// Whether the first solution is proved optimal.
    pub optimal: bool,
    /// Optimal method: the longest length proved to have no solution.
    pub depth_exhausted: Option<u8>,
    /// Search nodes, over every job of the position.
    pub nodes: u64,
    /// Table lookups (optimal) or probes (two-phase).
    pub lookups: u64,
    /// Wall time from the position's first dispatch to its record, in microseconds.
    pub micros: u64,
    /// Why the search stopped.
    pub stop: Stop,
}

/// Why a line has no solutions at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The line is not a position.
    #[error("{0}")]
    Parse(ParseError),
    /// The line is not valid UTF-8.
    #[error("line is not valid UTF-8")]
    NotUtf8,
    /// A job of the position failed.
    #[error("{0}")]
    Job(JobError),
}

impl Solved {
    /// The remark that goes with the result, as `settings` asked it: why there are no
    /// solutions, or that a budget cut the search short. `None` for a plain success.
    pub fn note(&self, settings: &Settings) -> Option<String> {
        let max_length = settings.max_length;
        match settings.method {
            Method::Optimal => match self.stop {
                Stop::TimeLimit => Some(match self.depth_exhausted {
                    Some(d) => format!("time limit reached; no solution of {d} moves or fewer"),
                    None => "time limit reached".to_string(),
                }),
                _ if self.solutions.is_empty() => {
                    Some(format!("no solution of at most {max_length} moves"))
                }
                _ => None,
            },
            Method::TwoPhase if self.solutions.is_empty() => Some(match self.stop {
                Stop::TimeLimit => format!(
                    "no solution within {max_length} moves found within the time limit of {:?}",
                    std::time::Duration::from_millis(settings.time_limit_ms.unwrap_or(0))
                ),
                Stop::ProbeLimit => format!(
                    "no solution within {max_length} moves found within the limit of {} probes",
                    settings.probe_limit.unwrap_or(0)
                ),
                Stop::Cancelled => format!(
                    "search cancelled before a solution within {max_length} moves was found"
                ),
                Stop::Completed | Stop::Exhausted => {
                    format!("no solution within {max_length} moves")
                }
            }),
            Method::TwoPhase => None,
        }
    }
}
