//! The in-process executor: jobs in, results out.
//!
//! # Layout
//! - [`Engines`] (`engines`): the opened solvers of a process, by table name.
//! - [`run_job`] (`job`): the entry point of both engines for a job: one [`proto::Job`]
//!   on the calling thread, one [`proto::JobResult`] back (a job that cannot run is a
//!   result with a [`proto::JobError`], never a panic); [`run_job_split`] takes a subtree
//!   job's pieces through a [`PieceCursor`] (`pieces`), which a split stops.
//! - `subtrees`: a subtree job's search, by one thread or several claiming its pieces
//!   from one cursor, and its result put together from what each found.
//! - [`JobRunner`] (`share`): long-lived threads (a rayon pool's, for as long as the
//!   executor lives: a local run's, or one per connection of a worker process) that run
//!   submitted jobs, a free thread helping a running subtree job; each job can be
//!   cancelled by id and hands its result to a callback.
//! - [`RunnerOptions`] (`options`): the test seams and the switch of sharing.
//!
//! A panic in a search is a bug, and it costs its own position only: it is caught around
//! each position of a batch (that position's answer is [`proto::JobError::Internal`], the
//! others are solved) and around each thread's part of a subtree job (the job's result
//! is that error), so every job sends exactly one result and no line waits for a lease
//! that may not exist.

mod engines;
mod job;
mod options;
mod pieces;
mod share;
mod subtrees;

pub use self::engines::Engines;
pub use self::job::{run_job, run_job_counted, run_job_split, run_job_with};
pub use self::options::{RunnerOptions, ShareEvent, ShareHook};
pub use self::pieces::PieceCursor;
pub use self::share::{JobRunner, ResultSink};
