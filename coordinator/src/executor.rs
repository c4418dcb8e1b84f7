//! The executor interface: what the scheduler needs from whatever runs its jobs.
//!
//! The in-process executor (the embedded default) and the remote workers of a cluster
//! are two implementations of [`Executor`]. Results do not come back through the trait:
//! each executor posts them, tagged with its [`ExecutorId`], into the driver's event
//! stream (see [`crate::run`](mod@crate::run)), so one loop serves every executor alike.

use proto::{Job, JobId, JobResult};

/// An executor's identity within one coordinator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExecutorId(pub u64);

/// Something that runs jobs.
pub trait Executor: Send {
    /// How many jobs it runs at once (its threads).
    fn capacity(&self) -> usize;
    /// The tables it holds, by name (a job naming another is never sent to it).
    fn tables(&self) -> Vec<String>;
    /// Starts a job; its result is posted to the event stream when it ends.
    fn submit(&self, job: Job);
    /// Stops a job; what it found so far comes back as a cancelled result.
    fn cancel(&self, job: JobId);
}

/// What an executor reports to the driver.
#[derive(Debug)]
pub enum ExecutorEvent {
    /// A job ended (completed, exhausted, cancelled or failed).
    Result(ExecutorId, JobResult),
    /// The executor is gone: its jobs go back to the queue.
    Gone(ExecutorId),
}
