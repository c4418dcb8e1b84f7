//! The scheduler's public vocabulary: its configuration, request ids, the actions it asks
//! of a driver, and the figures it reports.

use crate::executor::ExecutorId;
use proto::{Job, JobId};
use tables::{Move, Position};

/// How the scheduler cuts work (what is asked is in [`Settings`](proto::Settings)).
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
    /// A depth from `split_depth` on is still searched whole, in one job, while the
    /// depth after it is predicted to hold at most this many nodes (13 times as many per
    /// depth, [`BRANCHING`](super::BRANCHING), as the previous whole job measured): a
    /// split depth costs its 43,254 subtree starts and their bookkeeping whatever its
    /// nodes, which was most of a 15-mover's time. The depth after the whole ones is
    /// split, small, and ranked by nothing; its counts rank the next (a deep depth
    /// searched in no order visited 1.3 times the nodes). 0: every depth from
    /// `split_depth` on is split.
    pub whole_nodes: u64,
    /// Cut a split position with symmetries into one prefix per orbit of its symmetry
    /// group, and make its solutions whole from those ([`tables::symmetry::PrefixOrbits`]);
    /// `false`: every prefix, as for a position with none (to measure the reduction).
    pub symmetry: bool,
    /// Subtree jobs per executor slot and depth, at most (fewer when the jobs would be
    /// too small to outlast `job_round_trips` round trips; at least one per slot). A
    /// first solution is met inside its job, on the threads that job has, while every
    /// other thread searches on: at 8, the replays at 64 × 4 threads searched up to 1.84
    /// times the one thread's nodes before it (19a); at 32, 0.79–1.07.
    pub jobs_per_slot: usize,
    /// How many of the executors' measured round trips a job must last for a depth to
    /// get more than one job per slot.
    pub job_round_trips: f64,
    /// Nodes a subtree job should hold, predicted from the previous depth (more jobs
    /// than `jobs_per_slot` asks for when a depth is large).
    pub job_nodes: u64,
    /// Start depth d+1 of a position on idle capacity before d is proved empty.
    pub early_start: bool,
    /// Most moves a subtree job's pieces add to its units (0 to
    /// [`proto::pieces::MAX_PIECE_LEVELS`]; fewer where the units are predicted small:
    /// `tail::piece_levels`). *Why* 2, not 3: the third cuts the heaviest pieces 12 to
    /// 15 ways (19b-all's depth-18 straggler at 1,024 threads, 0.683 → 0.832; seven of
    /// the 12 traces at 0.8 there, five at 2), but the job holding a first solution gets
    /// less of its worker, whose threads may leave it for a waiting job at each piece's
    /// end, and the first-solution replays at 64 and 256 threads lose 5.5% and 4%
    /// (`docs/performance.md`, "One position over many threads").
    pub piece_levels: u8,
    /// Whether subtree jobs are sent so that a hand-back also takes the moves a running
    /// piece has not entered (`SubtreeWork::split`; see `handback`): without it a piece
    /// a thread started is searched whole there, and a depth's end waits for its
    /// heaviest piece.
    pub split_running: bool,
    /// Whether a solution solves its position: every solution in an answer is checked
    /// with it before the answer is accepted. The real check applies the moves; the
    /// simulation, whose executors make their answers up, checks them against its own
    /// made-up truth.
    pub solves: fn(&Position, &[Move]) -> bool,
    /// How executors' claims that a search holds no solution (or exactly these) are
    /// checked by running them again elsewhere.
    pub verify: super::verify::Verify,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            lease_us: None,
            batch_size: 128,
            split_depth: 12,
            prefix_len: 4,
            whole_nodes: 1_000_000,
            symmetry: true,
            jobs_per_slot: 32,
            job_round_trips: 10.0,
            job_nodes: 30_000_000,
            early_start: true,
            piece_levels: 2,
            split_running: true,
            solves: Position::is_solved_by,
            verify: super::verify::Verify::default(),
        }
    }
}

/// A request's identity (a scramble set or one scramble of one client).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// Why an answer was refused (for the log: the executor that sent it gets no more
/// work).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The executor that sent it.
    pub from: ExecutorId,
    /// The job it answered.
    pub job: JobId,
    /// The input line whose solution failed.
    pub line: u64,
    /// What was wrong with it.
    pub reason: RejectReason,
}

/// What was wrong with a refused solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RejectReason {
    /// Applying it to its position does not give the solved cube.
    #[error("the solution does not solve its position")]
    DoesNotSolve,
    /// Longer than the request's `max_length`.
    #[error("the solution is longer than the longest asked")]
    TooLong,
    /// A subtree's solution of another length than its depth.
    #[error("the solution's length is not its subtree's depth")]
    WrongDepth,
    /// A subtree's solution that does not begin with its subtree's prefix.
    #[error("the solution does not begin with its subtree's prefix")]
    WrongPrefix,
    /// An answer for a position or subtree its job does not hold.
    #[error("the answer names a position or subtree its job does not hold")]
    Unasked,
    /// A claim (no solution in a subtree, or exactly these) that two other runs of the
    /// same search contradicted, agreeing with each other.
    #[error("its claim disagreed with two runs of the same search on other executors")]
    Disagreed,
}

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
    /// Ask executor `on` to hand back the pieces of `job` it has not started.
    Split {
        /// The executor.
        on: ExecutorId,
        /// The job.
        job: JobId,
        /// Its attempt there.
        attempt: u32,
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
    /// Jobs whose result was accepted (a check's answer counts once it is compared).
    pub jobs_done: u64,
    /// Jobs put back in the queue (lease ended, executor gone, handed back).
    pub requeued: u64,
    /// Leases that ended.
    pub lease_expiries: u64,
    /// Results ignored (late, repeated, partial or superseded, or from an executor the
    /// job is not leased to).
    pub ignored_results: u64,
    /// Results refused because a solution in them failed its check (it does not solve
    /// its position, or has a length or prefix its job rules out).
    pub rejected_results: u64,
    /// Executors given no more work because an answer of theirs was refused.
    pub distrusted_executors: u64,
    /// Leased jobs an executor's heartbeats did not list for a lease (its jobs went back
    /// to the queue and it was forgotten, as at a lease expiry).
    pub lost_jobs: u64,
    /// Records released.
    pub records: u64,
    /// Search nodes in accepted results.
    pub nodes: u64,
    /// Running jobs asked to hand back their unstarted pieces.
    pub splits_asked: u64,
    /// Jobs that handed back pieces.
    pub splits: u64,
    /// Units and pieces handed back (each went into a new job).
    pub pieces_handed_back: u64,
    /// Nodes of accepted subtree jobs sent while a shallower depth of their position was
    /// still being proved empty (a depth started early: idle threads took its jobs).
    pub early_nodes: u64,
    /// Hand-backs ignored: for a job finished, cancelled or superseded, or not asked.
    /// (Not results: a job that hands back still answers with one.)
    pub ignored_handbacks: u64,
    /// Queued jobs of a depth started early, cut again once a depth before it was
    /// proved empty (on its whole counts).
    pub recut_jobs: u64,
    /// Claims opened to a check: run again on another executor (see `verify`).
    pub checks: u64,
    /// Of those, opened to vouch for an executor whose claims held a record back.
    pub vouch_checks: u64,
    /// Checks whose second run agreed with the claim.
    pub checks_agreed: u64,
    /// Checks whose second run disagreed (a third decides).
    pub check_disputes: u64,
    /// Checks that could not be decided (a run ran out of the position's time).
    pub inconclusive_checks: u64,
    /// Disputes no third executor could settle, apart only in node counts (both
    /// executors suspect from then on).
    pub undecided_checks: u64,
    /// Search nodes of the checks' runs (not in `nodes`).
    pub check_nodes: u64,
    /// Claims with implausibly few nodes for their prediction, checked at once.
    pub implausible_claims: u64,
    /// Claims no other executor could check (none held the table).
    pub unverifiable_claims: u64,
    /// Executors caught lying by a check (also in `distrusted_executors`).
    pub liars: u64,
    /// Open positions searched again because an executor that claimed something about
    /// them lied.
    pub restarted_positions: u64,
    /// Jobs taken back from an executor that held them far past what they should take
    /// (listed in its heartbeats, never answered).
    pub overdue_jobs: u64,
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
