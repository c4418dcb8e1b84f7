//! Jobs, their results, and cancellation.

pub use crate::method::Method;
pub use crate::settings::{Settings, SettingsError};
use tables::{Move, Position};

/// A job's identity, unique within one coordinator's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "job {}", self.0)
    }
}

/// One unit of work, owned by one executor at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Identity; results are keyed by it.
    pub id: JobId,
    /// 1 for the first dispatch, one more each time the job is put back and sent again.
    pub attempt: u32,
    /// The table the job needs (an executor without it never receives the job).
    pub table: String,
    /// What to do.
    pub work: Work,
}

/// The work of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Work {
    /// Solve each position whole, one after the other, as `settings` ask.
    Batch {
        /// What is asked of every position.
        settings: Settings,
        /// The positions with their input line ids.
        items: Vec<BatchItem>,
    },
    /// Search some move-prefix subtrees of one position at one depth.
    Subtrees(SubtreeWork),
}

/// A position of a batch job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchItem {
    /// The input line id the result goes back to.
    pub line: u64,
    /// The checked position.
    pub position: Position,
}

/// Solutions of exactly `depth` moves beginning with one of `prefixes` (canonical
/// sequences), for the optimal method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubtreeWork {
    /// The position.
    pub position: Position,
    /// The exact solution length searched.
    pub depth: u8,
    /// The subtrees, most promising first.
    pub prefixes: Vec<Vec<Move>>,
    /// Stop after this many solutions in the whole job (`None`: find all).
    pub max_solutions: Option<u32>,
    /// Wall-time budget of the job in milliseconds (what is left of the position's).
    pub time_limit_ms: Option<u64>,
    /// Each prefix is searched as its pieces, its canonical extensions by this many
    /// moves (see [`crate::pieces`]; 0: whole, one search a prefix), so that the job can
    /// hand back what it has not started. Results still come one per prefix started.
    pub pieces: u8,
    /// Each piece's search takes its first moves in move order ([`crate::pieces`]'s
    /// [`splittable`](crate::pieces::splittable) ones), so that a hand-back can also take
    /// the moves a running piece has not entered ([`crate::Handback::split`]).
    pub split: bool,
}

/// Why a search (or a job) stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stop {
    /// It found what was asked.
    Completed,
    /// It searched everything it was given: nothing more to find.
    Exhausted,
    /// A cancellation reached it.
    Cancelled,
    /// The time budget ran out.
    TimeLimit,
    /// The probe budget ran out (two-phase).
    ProbeLimit,
}

/// What a batch job found for one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionResult {
    /// The input line id.
    pub line: u64,
    /// Solutions, shortest first, each verified.
    pub solutions: Vec<Vec<Move>>,
    /// Whether the first solution is proved optimal.
    pub optimal: bool,
    /// A proved lower bound on the position's distance.
    pub lower_bound: u8,
    /// Optimal method: the longest length proved to have no solution.
    pub depth_exhausted: Option<u8>,
    /// Search nodes.
    pub nodes: u64,
    /// Table lookups (optimal) or phase-1 probes (two-phase).
    pub lookups: u64,
    /// Wall time spent on the position, in microseconds.
    pub micros: u64,
    /// Why the search stopped.
    pub stop: Stop,
}

impl PositionResult {
    /// A result with nothing found yet, stopped by `stop` (line and micros 0: the
    /// executor, which knows them, sets them).
    pub fn empty(stop: Stop) -> PositionResult {
        PositionResult {
            line: 0,
            solutions: Vec::new(),
            optimal: false,
            lower_bound: 0,
            depth_exhausted: None,
            nodes: 0,
            lookups: 0,
            micros: 0,
            stop,
        }
    }
}

/// What a subtree job found for one of its prefixes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubtreeResult {
    /// Index of the prefix in the job's `prefixes`.
    pub prefix: u32,
    /// Solutions of the job's depth in this subtree, each verified.
    pub solutions: Vec<Vec<Move>>,
    /// Search nodes (the coordinator ranks the next depth's subtrees by them).
    pub nodes: u64,
    /// Main-table lookups.
    pub lookups: u64,
    /// `Exhausted` when the whole subtree was searched.
    pub stop: Stop,
}

/// A batch position that could not be solved (its engine failed or panicked): the other
/// positions of its job are solved and reported as usual.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionError {
    /// The input line id.
    pub line: u64,
    /// What happened.
    pub error: JobError,
}

/// One batch position's answer.
pub type PositionAnswer = Result<PositionResult, PositionError>;

/// The input line id of a batch position's answer.
pub fn answer_line(a: &PositionAnswer) -> u64 {
    match a {
        Ok(r) => r.line,
        Err(e) => e.line,
    }
}

/// What a job produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutput {
    /// One answer per batch position, in the job's order.
    Batch(Vec<PositionAnswer>),
    /// One result per prefix that was started; prefixes not listed were not searched.
    Subtrees(Vec<SubtreeResult>),
}

/// Why a job could not run at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// The executor does not hold the table the job names.
    #[error("table {name} is not available on this executor")]
    MissingTable {
        /// The table's name.
        name: String,
    },
    /// The table named is not one the job's method can use.
    #[error("table {name} cannot serve a {method:?} job")]
    WrongTable {
        /// The table's name.
        name: String,
        /// The method asked.
        method: Method,
    },
    /// The settings cannot be honoured.
    #[error("invalid settings: {0}")]
    InvalidSettings(SettingsError),
    /// A solution failed verification: a bug, reported instead of returned.
    #[error("internal error: solution {moves} does not solve the position")]
    Verification {
        /// The faulty solution, in standard notation.
        moves: String,
    },
    /// A table file the engine reads could not be read (missing, permissions, I/O).
    #[error("table file {path} cannot be read: {reason}")]
    TableUnreadable {
        /// The file (or, for a table missing altogether, its name).
        path: String,
        /// The operating system's or the reader's reason.
        reason: String,
    },
    /// A table file holds something other than what it should (header, length, checksum,
    /// contents).
    #[error("table file {path} is damaged: {reason}")]
    TableDamaged {
        /// The file (or the table's name).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The executor failed, not the job's input: a bug or the machine.
    #[error("internal error: {0}")]
    Internal(Internal),
    /// The executor could not decode the job it was sent (a peer of another build).
    #[error("the executor cannot decode the job: {reason}")]
    Undecodable {
        /// The decoder's message.
        reason: String,
    },
}

/// What failed inside an executor ([`JobError::Internal`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Internal {
    /// The search panicked (a bug); the message is the panic's.
    #[error("the search panicked: {message}")]
    Panic {
        /// The panic's message (or a note that it had none that is text).
        message: String,
    },
    /// The executor's threads could not be started.
    #[error("cannot start the executor's threads: {reason}")]
    Threads {
        /// The system's reason.
        reason: String,
    },
}

/// A job's answer, keyed by job id and attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobResult {
    /// The job answered.
    pub id: JobId,
    /// The attempt that produced it.
    pub attempt: u32,
    /// Wall time of the job on the executor, in microseconds.
    pub micros: u64,
    /// What it produced, or why it could not run.
    pub output: Result<JobOutput, JobError>,
}

/// Stop a job: what it found so far comes back as its result, with [`Stop::Cancelled`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancel {
    /// The job to stop.
    pub job: JobId,
}
