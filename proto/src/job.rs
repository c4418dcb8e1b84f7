//! Jobs, their results, and cancellation.

use tables::{Move, Position};

/// A job's identity, unique within one coordinator's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "job {}", self.0)
    }
}

/// Which solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Shortest solutions (H48 tables + IDA*), proved optimal.
    Optimal,
    /// Kociemba's two-phase algorithm: fast, at most `max_length` moves.
    TwoPhase,
}

/// What is asked for each position (never how it runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Which solver.
    pub method: Method,
    /// Shortest length tried (optimal method).
    pub min_length: u8,
    /// Longest length accepted.
    pub max_length: u8,
    /// How many solutions: `Some(n)` = up to n, `None` = every optimal solution.
    pub max_solutions: Option<u32>,
    /// Budget of one position, in milliseconds of wall time from its start.
    pub time_limit_ms: Option<u64>,
    /// Budget of one position in phase-1 probes (two-phase method).
    pub probe_limit: Option<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            method: Method::Optimal,
            min_length: 0,
            max_length: 20,
            max_solutions: Some(1),
            time_limit_ms: None,
            probe_limit: None,
        }
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

/// What a job produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutput {
    /// One result per batch position, in the job's order.
    Batch(Vec<PositionResult>),
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
    #[error("invalid settings: {reason}")]
    InvalidSettings {
        /// What is wrong.
        reason: String,
    },
    /// A solution failed verification: a bug, reported instead of returned.
    #[error("internal error: solution {moves} does not solve the position")]
    Verification {
        /// The faulty solution, in standard notation.
        moves: String,
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
