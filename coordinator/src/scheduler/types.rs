//! The scheduler's public vocabulary: its configuration, request ids, the actions it asks
//! of a driver, and the figures it reports.

use crate::executor::ExecutorId;
use proto::{Job, JobId};

/// How the scheduler cuts work (what is asked is in [`Settings`]).
#[derive(Clone, Debug)]
pub struct Config {
    /// How long a dispatched job may go without a word from its executor before it is
    /// put back (`None`: never, for executors that cannot vanish, as in one process).
    pub lease_us: Option<u64>,
    /// Two-phase positions per job.
    pub batch_size: usize,
    /// Optimal method: depths below this are searched whole in one job per position;
    /// from this depth on, a position is split into move-prefix subtrees.
    pub split_depth: u8,
    /// Length of the move prefixes a split depth is cut into (4: 43,254 subtrees).
    pub prefix_len: usize,
    /// Subtree jobs per executor slot and depth, at most (fewer when the jobs would be
    /// too small to outlast `job_round_trips` round trips; at least one per slot).
    pub jobs_per_slot: usize,
    /// How many of the executors' measured round trips a job must last for a depth to
    /// get more than one job per slot.
    pub job_round_trips: f64,
    /// Nodes a subtree job should hold, predicted from the previous depth (more jobs
    /// than `jobs_per_slot` asks for when a depth is large).
    pub job_nodes: u64,
    /// Start depth d+1 of a position on idle capacity before d is proved empty.
    pub early_start: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            lease_us: None,
            batch_size: 128,
            split_depth: 12,
            prefix_len: 4,
            jobs_per_slot: 8,
            job_round_trips: 10.0,
            job_nodes: 30_000_000,
            early_start: true,
        }
    }
}

/// A request's identity (a scramble set or one scramble of one client).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// What the driver must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send `job` to executor `to`.
    Dispatch {
        /// The executor.
        to: ExecutorId,
        /// The job.
        job: Job,
    },
    /// Stop `job` on executor `on`.
    Cancel {
        /// The executor.
        on: ExecutorId,
        /// The job.
        job: JobId,
    },
}

/// Counters, for progress and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Jobs made.
    pub jobs_created: u64,
    /// Jobs sent to an executor (each attempt counts).
    pub dispatched: u64,
    /// Jobs whose result was accepted.
    pub jobs_done: u64,
    /// Jobs put back in the queue (lease ended, executor gone, handed back).
    pub requeued: u64,
    /// Leases that ended.
    pub lease_expiries: u64,
    /// Results ignored (late, repeated, partial or superseded).
    pub ignored_results: u64,
    /// Records released.
    pub records: u64,
    /// Search nodes in accepted results.
    pub nodes: u64,
}

/// How far a request has come: cheap enough to poll every second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Records released so far.
    pub records: u64,
    /// Lines pushed so far (positions and lines that are not).
    pub lines: u64,
    /// No more lines will come.
    pub input_done: bool,
    /// The oldest open optimal position that is being deepened, if any.
    pub deepening: Option<Deepening>,
    /// Executors running at least one job (of any request).
    pub busy_executors: usize,
    /// Executors known.
    pub executors: usize,
}

/// Where the deepening of one optimal position stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deepening {
    /// Its input line.
    pub line: u64,
    /// The depth being searched (or proved empty).
    pub depth: u8,
    /// The longest length proved to have no solution so far.
    pub depth_exhausted: Option<u8>,
    /// Search nodes of its accepted jobs so far.
    pub nodes: u64,
}
