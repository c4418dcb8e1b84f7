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
    Parse(BadLine),
    /// The line is not valid UTF-8.
    #[error("line is not valid UTF-8")]
    NotUtf8,
    /// A job of the position failed.
    #[error("{0}")]
    Job(JobError),
}

impl From<ParseError> for RecordError {
    fn from(e: ParseError) -> Self {
        RecordError::Parse(e.into())
    }
}

/// Why a line is not a position, in the form that crosses the wire: which check refused
/// it and the parser's complete message (a [`ParseError`]'s text, which names the token or
/// sticker at fault). Made from the [`ParseError`] where the line is parsed, so a client
/// never parses the line again to learn why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BadLine {
    /// Which check refused the line.
    pub kind: BadLineKind,
    /// The parser's message.
    pub message: String,
}

/// Which check refused a line (the variants of [`ParseError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BadLineKind {
    /// A token of a scramble is not a move.
    Notation,
    /// A facelet string is malformed or describes an impossible cube.
    Facelets,
    /// The cube is not solvable.
    Unsolvable,
    /// The text is longer than a position's text may be.
    TooLong,
}

impl From<ParseError> for BadLine {
    fn from(e: ParseError) -> Self {
        let kind = match &e {
            ParseError::Notation(_) | ParseError::Neither { .. } => BadLineKind::Notation,
            ParseError::TooLong { .. } => BadLineKind::TooLong,
            ParseError::Facelets(_) => BadLineKind::Facelets,
            ParseError::Unsolvable(_) => BadLineKind::Unsolvable,
        };
        BadLine {
            kind,
            message: e.to_string(),
        }
    }
}

impl Solved {
    /// The length a solution must have to be proved optimal: the shortest solution's,
    /// when it is proved optimal ([`Solved::optimal`]); `None` when no solution is. A
    /// longer solution listed with it (`-n`, `--all`) is not optimal.
    pub fn optimal_length(&self) -> Option<usize> {
        if self.optimal {
            self.solutions.iter().map(Vec::len).min()
        } else {
            None
        }
    }

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
