//! The executor interface: what the driver needs from whatever runs its jobs.
//!
//! The in-process rayon executor (the embedded default), a remote worker over its gRPC
//! stream, and the simulation's fake executors are implementations of [`Executor`].
//! Results do not come back through the trait: each executor posts them, tagged with its
//! [`ExecutorId`], into the driver's event stream as [`ExecutorEvent`]s, so one loop serves
//! every executor alike.

use proto::{Handback, Job, JobId, JobResult};

/// An executor's identity within one coordinator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExecutorId(pub u64);

/// Something that runs jobs.
pub trait Executor {
    /// How many jobs it may hold at once (its threads, plus any it queues ahead).
    fn capacity(&self) -> usize;
    /// How many jobs it runs at once, for people (status, events): its capacity unless it
    /// queues jobs ahead.
    fn threads(&self) -> u32 {
        u32::try_from(self.capacity()).unwrap_or(u32::MAX)
    }
    /// The tables it holds, by name (a job naming another is never sent to it).
    fn tables(&self) -> Vec<String>;
    /// Starts a job; its result is posted to the event stream when it ends. An executor
    /// that cannot take it any more (its stream is gone) drops it: its `Gone` event is
    /// on its way and the job goes back to the queue then.
    fn submit(&self, job: Job);
    /// Stops a job; what it found so far comes back as a cancelled result.
    fn cancel(&self, job: JobId);
    /// Whether it can hand back the pieces of a running subtree job it has not started
    /// ([`Executor::split`]); one that cannot is never asked.
    fn can_split(&self) -> bool {
        false
    }
    /// Whether its threads share a job's pieces: a thread with no job to start helps a
    /// running subtree job, so that fewer jobs than threads still keep every thread busy
    /// (a worker's `RunnerOptions::share_jobs`).
    fn shares_jobs(&self) -> bool {
        false
    }
    /// Asks it to hand back what attempt `attempt` of `job` has not started: the answer
    /// now (an executor in this process), or `None` when it comes later as an
    /// [`ExecutorEvent::Handback`] (over a stream).
    fn split(&self, job: JobId, attempt: u32) -> Option<Handback> {
        let _ = (job, attempt);
        None
    }
    /// Whether its answers are taken on its word: an executor in this process is; one
    /// on another machine is not, and its claims that a search holds no solution are
    /// checked by running them again elsewhere (the scheduler's `verify`).
    fn trusted(&self) -> bool {
        false
    }
    /// Its name for people (a worker's id, its host).
    fn name(&self) -> String {
        "in-process".to_string()
    }
    /// Where it runs, for people: a remote worker's address as the coordinator sees it
    /// (empty: in this process).
    fn host(&self) -> String {
        String::new()
    }
    /// It was silent past its lease and has been forgotten: its jobs run elsewhere now.
    /// A remote worker's stream is ended, so that it joins again if it is alive.
    fn lease_expired(&self) {}
    /// The coordinator shuts down: finish or hand back what runs, take nothing new.
    fn drain(&self) {}
}

/// A search's node count so far, for one running job (from a heartbeat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveJob {
    /// The job.
    pub job: JobId,
    /// The attempt it runs as.
    pub attempt: u32,
    /// Search nodes counted so far.
    pub nodes: u64,
}

/// What an executor reports to the driver.
#[derive(Debug)]
pub enum ExecutorEvent {
    /// A job ended (completed, exhausted, cancelled or failed).
    Result(ExecutorId, JobResult),
    /// The executor is alive, running these jobs.
    Heartbeat(ExecutorId, Vec<LiveJob>),
    /// It runs `threads` at once from now on and may hold `slots` jobs (0: draining).
    Capacity {
        /// The executor.
        id: ExecutorId,
        /// Its threads.
        threads: u32,
        /// Jobs it may hold.
        slots: usize,
    },
    /// Its answer to a request to split a job ([`Executor::split`]).
    Handback(ExecutorId, Handback),
    /// The executor is gone: its jobs go back to the queue.
    Gone(ExecutorId),
}
