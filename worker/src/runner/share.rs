//! [`JobRunner`]: a pool of long-lived threads that run submitted jobs, a subtree job
//! shared by the threads that have nothing to start.
//!
//! # How a thread chooses its work
//! Shallower depths first: a deeper depth's answer only counts once every shallower one
//! is proved empty. Each of the pool's threads loops: it takes the shallowest work there
//! is, a job submitted and not started (the oldest of its depth; a batch job counts as
//! depth 0) or a running subtree job with pieces not claimed (the oldest of its depth:
//! the coordinator sends the most promising first, and a job done sooner answers
//! sooner), the job to start when both are as shallow; else it sleeps
//! until a job is submitted, a subtree job is listed or left with pieces to claim, or the
//! runner is dropped (then, once nothing is left to do, it ends). A thread searching a
//! job stops claiming its pieces when a shallower depth has work here (a waiting job, or
//! a running one with pieces not claimed), and a thread that joined a job it did not
//! start (a helper) also when a job of its own depth waits to start; it finishes the
//! pieces it claimed and goes back to the loop. A job all of whose threads left with
//! pieces still to claim stays listed and is taken up again by the next free thread.
//! Batch jobs are never shared, nor is anything with [`RunnerOptions::share_jobs`] off.
//!
//! # Why it is sound
//! - Every thread of a job claims its pieces from the job's one [`PieceCursor`], in
//!   order, so the pieces claimed are the first `k`; a split answers `k` and stops every
//!   thread's claims at once; a piece claimed is searched (unless the job is cancelled).
//! - Locks: the runner's `state` (queue, running shared jobs, closing) is taken before a
//!   shared job's own lock, never after (a thread joins a job under both; it leaves under
//!   the job's alone, and only then takes `state` to unlist it). The pending map and the
//!   engines are each locked alone. No lock is held while searching or while calling a
//!   result sink or a hook.
//! - Who sends a shared job's result: a thread leaving the job closes it when it can
//!   claim nothing more (all claimed, handed back, its solutions found, or stopped:
//!   every one of them permanent), checked under the job's lock; a closed job admits no
//!   more threads. Each thread leaving adds what it found to the job's tally under the
//!   job's lock; the one that leaves a closed job with no thread left in it takes the
//!   tally, unlists the job and sends the result, exactly once. A job left by all its
//!   threads while it could still claim is not closed: it stays listed, and a free
//!   thread joins it (one that can claim nothing closes it at once: a job cancelled or
//!   handed back while no thread searched it). A
//!   thread's panic is caught around its search: the job's result is that panic's
//!   error, its stop token is raised so the other threads end soon, and they still
//!   leave (and one of them sends).
//!
//! # Layout
//! - this file: what the runner and its threads share, and [`JobRunner`]'s pool;
//! - `thread_loop`: what each pool thread does: choose its next work, start a job, take
//!   part in a shared one, send a result;
//! - `shared_job`: a running subtree job its threads share: joining, leaving, and who
//!   sends its result;
//! - `pending`: the jobs submitted and not finished: submitting, cancelling, node counts;
//! - `handback`: a running job's hand-back of the pieces it has not started.

mod handback;
mod pending;
mod shared_job;
mod thread_loop;

use self::pending::PendingMap;
use self::shared_job::SharedJob;
use super::engines::Engines;
use super::options::RunnerOptions;
use super::pieces::PieceCursor;
use crate::{Error, StopToken};
use proto::{Job, JobResult};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicU8};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Where results go: called once per job, from the pool thread that sends it.
pub type ResultSink = Arc<dyn Fn(JobResult) + Send + Sync>;

/// Locks `m`, recovering it if a thread panicked while holding it (what each lock guards
/// stays valid: every update under it is a single push, removal or field write, or a
/// whole replacement).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A submitted job not started yet.
struct Queued {
    /// The job.
    job: Job,
    /// What its threads will share.
    ticket: Ticket,
}

/// What the threads of a job share beyond the job itself, made at its submission.
struct Ticket {
    /// Its stop token (shares its flag with its [`Pending`](pending::Pending) entry).
    stop: StopToken,
    /// Its node count (the [`Pending`](pending::Pending) entry's).
    nodes: Arc<AtomicU64>,
    /// Its pieces claimed (the [`Pending`](pending::Pending) entry's).
    cursor: Arc<PieceCursor>,
    /// Where its result goes.
    on_result: ResultSink,
    /// Its place in submission order.
    seq: u64,
}

/// What the threads choose their work from (the runner's `state` lock).
#[derive(Default)]
struct State {
    /// Jobs submitted and not started, oldest first.
    queue: VecDeque<Queued>,
    /// Subtree jobs started and not closed, which other threads may join.
    running: Vec<Arc<SharedJob>>,
    /// The runner was dropped: threads end once the queue is empty.
    closing: bool,
    /// The submission number of the next job.
    next_seq: u64,
}

/// What the runner and its threads share.
struct Inner {
    /// The queue, the running shared jobs and the closing flag.
    state: Mutex<State>,
    /// Wakes sleeping threads: a job submitted, a shared job started, or closing.
    wake: Condvar,
    /// The shallowest depth of a job in the queue (`u8::MAX`: none), and of a listed job
    /// with pieces to claim (as last looked at), read by the threads before each claim
    /// without the lock.
    waiting: AtomicU8,
    open: AtomicU8,
    /// The opened solvers; a job takes the ones current when it starts (see
    /// [`JobRunner::replace_engines`]).
    engines: Mutex<Arc<Engines>>,
    /// The jobs submitted and not finished, for [`JobRunner::cancel`] and the like.
    pending: PendingMap,
    /// How jobs run.
    options: RunnerOptions,
    /// The executor's result sink (held here, so that it is let go once every thread
    /// has ended).
    on_result: ResultSink,
}

/// Runs jobs on one long-lived rayon pool of `threads` threads and hands each result to a
/// callback; a thread with no job to start helps a running subtree job (see the module
/// doc, and [`RunnerOptions::share_jobs`]).
///
/// Results are sent once per job, from a thread that ran it, including for cancelled
/// jobs (with what they found). A job the engines cannot run gets a result with an `Err`
/// output; a bad job never panics the executor. A shared job's result is the one a single
/// thread would send for the same pieces claimed: one [`SubtreeResult`] per prefix
/// started, in prefix order, each prefix's pieces merged. Dropping the executor does not
/// wait for its jobs: the jobs queued still run and send their results, then the threads
/// end; call [`JobRunner::cancel_all`] first to have them stop and report sooner.
///
/// [`SubtreeResult`]: proto::SubtreeResult
pub struct JobRunner {
    /// The one pool of the process: its threads run [`Inner::work`].
    pool: rayon::ThreadPool,
    /// What the runner and its threads share.
    inner: Arc<Inner>,
}

impl std::fmt::Debug for JobRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobRunner")
            .field("threads", &self.threads())
            .field("tables", &self.tables())
            .field("pending", &self.pending())
            .finish()
    }
}

impl JobRunner {
    /// Starts the pool: `threads` threads (0: one per core), solving with `engines`, and
    /// sending each job's result to `on_result`.
    pub fn new(
        threads: usize,
        engines: Arc<Engines>,
        on_result: ResultSink,
    ) -> Result<JobRunner, Error> {
        JobRunner::with_options(threads, engines, on_result, RunnerOptions::default())
    }

    /// [`JobRunner::new`] with `options`.
    pub fn with_options(
        threads: usize,
        engines: Arc<Engines>,
        on_result: ResultSink,
        options: RunnerOptions,
    ) -> Result<JobRunner, Error> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cubeswarm-job-{i}"))
            .build()
            .map_err(Error::Threads)?;
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            waiting: AtomicU8::new(u8::MAX),
            open: AtomicU8::new(u8::MAX),
            engines: Mutex::new(engines),
            pending: Mutex::new(HashMap::new()),
            options,
            on_result,
        });
        let looping = Arc::clone(&inner);
        // Once on each thread: the loop never returns before the runner is dropped, so
        // each thread runs exactly one.
        pool.spawn_broadcast(move |_| looping.work());
        Ok(JobRunner { pool, inner })
    }

    /// Whether a thread with nothing to start helps a running subtree job
    /// ([`RunnerOptions::share_jobs`]).
    pub fn shares_jobs(&self) -> bool {
        self.inner.options.share_jobs
    }

    /// The number of threads, i.e. of jobs started at once.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The tables the executor can serve (catalog names, sorted).
    pub fn tables(&self) -> Vec<String> {
        lock(&self.inner.engines).names()
    }

    /// Jobs that start from now on solve with `engines`, which must serve the same
    /// tables (the same solvers in another memory: a mapped table replaced by its copy
    /// in huge pages once the copy is made); running jobs finish on the ones they
    /// started with (the threads that join them too). Returns whether they were replaced
    /// (not when the tables differ).
    pub fn replace_engines(&self, engines: Arc<Engines>) -> bool {
        let mut cur = lock(&self.inner.engines);
        if cur.names() != engines.names() {
            return false;
        }
        *cur = engines;
        true
    }
}

impl Drop for JobRunner {
    /// Tells the threads to end once the queue is empty (the jobs queued still run and
    /// send their results; nothing waits for them).
    fn drop(&mut self) {
        lock(&self.inner.state).closing = true;
        self.inner.wake.notify_all();
    }
}
