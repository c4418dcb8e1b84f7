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

use super::engines::Engines;
use super::job::{micros_since, panic_error, run_job_split};
use super::options::{RunnerOptions, ShareEvent};
use super::pieces::PieceCursor;
use super::subtrees::{Plan, SubtreeSearch, Tally};
use crate::stop::deadline_after;
use crate::{Engine, Error, H48Solver, StopToken};
use proto::{Job, JobError, JobId, JobOutput, JobResult, SubtreeResult, SubtreeWork, Work};
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::Instant;

/// The depth a job's work counts at: a subtree job's own, a batch job's 0 (it goes first).
fn depth_of(job: &Job) -> u8 {
    match &job.work {
        Work::Subtrees(w) => w.depth,
        Work::Batch { .. } => 0,
    }
}

/// Where results go: called once per job, from the pool thread that sends it.
pub type ResultSink = Arc<dyn Fn(JobResult) + Send + Sync>;

/// Locks `m`, recovering it if a thread panicked while holding it (what each lock guards
/// stays valid: every update under it is a single push, removal or field write, or a
/// whole replacement).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One submitted job not finished: its stop token and its node count so far.
struct Pending {
    /// The job's stop token (the submission's: every clone shares its flag).
    stop: StopToken,
    /// Search nodes counted so far, by every thread of the job.
    nodes: Arc<AtomicU64>,
    /// The attempt submitted.
    attempt: u32,
    /// Its pieces claimed, for a request to split it (`None`: a batch job, not split).
    cursor: Option<Arc<PieceCursor>>,
    /// Its pieces (a subtree job's).
    pieces: usize,
}

/// The jobs submitted and not finished, by id: one entry per submission (a job sent again
/// while an earlier attempt still runs gets its own), so that one cancel reaches them all
/// and a finished job removes only its own.
type PendingMap = Mutex<HashMap<JobId, Vec<Pending>>>;

/// A submitted job not started yet.
struct Queued {
    /// The job.
    job: Job,
    /// What its threads will share.
    ticket: Ticket,
}

/// What the threads of a job share beyond the job itself, made at its submission.
struct Ticket {
    /// Its stop token (shares its flag with its [`Pending`] entry).
    stop: StopToken,
    /// Its node count (the [`Pending`] entry's).
    nodes: Arc<AtomicU64>,
    /// Its pieces claimed (the [`Pending`] entry's).
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

/// A running subtree job that threads other than its starter may join: what they share.
struct SharedJob {
    /// The job's id.
    id: JobId,
    /// The job's attempt.
    attempt: u32,
    /// Its place in submission order (ties between jobs to join).
    seq: u64,
    /// The job's work.
    work: SubtreeWork,
    /// The solver it started with.
    solver: H48Solver,
    /// Its pieces and solution count.
    plan: Plan,
    /// Its stop token, with the job's deadline.
    stop: StopToken,
    /// Its pieces claimed.
    cursor: Arc<PieceCursor>,
    /// Its node count.
    nodes: Arc<AtomicU64>,
    /// Solutions kept so far by all its threads.
    found: AtomicUsize,
    /// When it started.
    start: Instant,
    /// Where its result goes.
    on_result: ResultSink,
    /// Who is in it, and what those who left found.
    state: Mutex<Membership>,
}

/// A shared job's threads and what they found (the job's lock).
#[derive(Default)]
struct Membership {
    /// What the threads that left found.
    tally: Tally,
    /// The error of the first panic of one of its threads.
    panic: Option<JobError>,
    /// Threads searching it now.
    threads: usize,
    /// Its starter left: no thread joins any more.
    closed: bool,
    /// The threads that searched at least one piece.
    searchers: Vec<ThreadId>,
}

/// A thread's next work.
enum Task {
    /// Start this job.
    Start(Queued),
    /// Help this job (joined already).
    Help(Arc<SharedJob>),
}

impl SharedJob {
    /// The view its threads search through.
    fn search(&self) -> SubtreeSearch<'_> {
        SubtreeSearch {
            solver: &self.solver,
            work: &self.work,
            plan: &self.plan,
            stop: &self.stop,
            cursor: &self.cursor,
            nodes: &self.nodes,
            found: &self.found,
        }
    }

    /// Whether no thread searches it now.
    fn idle(&self) -> bool {
        lock(&self.state).threads == 0
    }

    /// Adds this thread to the job: false when the job is closed.
    fn join(&self) -> bool {
        let mut m = lock(&self.state);
        if m.closed {
            return false;
        }
        m.threads += 1;
        true
    }

    /// This thread leaves the job with what it found (or its panic), closing it when it
    /// can claim nothing more. Returns the job's output and searcher count when this
    /// thread is the last to leave a closed job: it sends the result.
    fn leave(
        &self,
        found: std::thread::Result<Tally>,
    ) -> Option<(Result<Vec<SubtreeResult>, JobError>, usize)> {
        let (tally, panic, searchers) = {
            let mut m = lock(&self.state);
            match found {
                Ok(tally) => {
                    let me = std::thread::current().id();
                    if tally.searched() > 0 && !m.searchers.contains(&me) {
                        m.searchers.push(me);
                    }
                    m.tally.absorb(tally);
                }
                Err(payload) => {
                    if m.panic.is_none() {
                        m.panic = Some(panic_error(payload.as_ref()));
                    }
                    // The result is the panic's error: the other threads need not go on.
                    self.stop.cancel();
                }
            }
            m.threads = m.threads.saturating_sub(1);
            // Every reason to claim nothing more is permanent (see the module doc).
            m.closed |= self.search().unclaimed() == 0;
            if !m.closed || m.threads > 0 {
                return None;
            }
            (
                std::mem::take(&mut m.tally),
                m.panic.take(),
                m.searchers.len(),
            )
        };
        let output = match panic {
            Some(e) => Err(e),
            None => catch_unwind(AssertUnwindSafe(|| self.search().finish(tally)))
                .unwrap_or_else(|payload| Err(panic_error(payload.as_ref()))),
        };
        Some((output, searchers))
    }
}

impl Inner {
    /// The loop of each pool thread (see the module doc), until the runner is dropped
    /// and no job is queued.
    fn work(&self) {
        while let Some(task) = self.next_task() {
            match task {
                Task::Start(q) => self.start(q),
                Task::Help(job) => {
                    self.options.tell(ShareEvent::Joined(job.id));
                    self.take_part(&job, true);
                }
            }
        }
    }

    /// The queue's shallowest depth, for the threads' claims (under the `state` lock).
    fn note_queue(&self, st: &State) {
        let d = st
            .queue
            .iter()
            .map(|q| depth_of(&q.job))
            .min()
            .unwrap_or(u8::MAX);
        self.waiting.store(d, Ordering::Relaxed);
    }

    /// Whether a thread searching a job of `depth` (`helper`: one it did not start)
    /// stops claiming its pieces: see the module doc.
    fn should_leave(&self, depth: u8, helper: bool) -> bool {
        let waiting = self.waiting.load(Ordering::Relaxed);
        let open = self.open.load(Ordering::Relaxed);
        depth > waiting.min(open) || (helper && depth >= waiting)
    }

    /// This thread's next work, waiting for some; `None` when it should end.
    fn next_task(&self) -> Option<Task> {
        let mut st = lock(&self.state);
        loop {
            // The shallowest queued job (the oldest of its depth), and the shallowest
            // listed job with pieces to claim (the oldest of its depth: the coordinator
            // sends the most promising first, and an old job done sooner answers sooner).
            let queued = (st.queue.iter().enumerate())
                .map(|(i, q)| (depth_of(&q.job), i))
                .min();
            let mut listed: Option<(u8, u64, usize)> = None;
            let mut to_close: Option<usize> = None;
            if self.options.share_jobs {
                for (i, j) in st.running.iter().enumerate() {
                    let n = j.search().unclaimed();
                    if n == 0 {
                        // Left by its threads and now unable to claim (cancelled or
                        // handed back meanwhile): a thread must close it.
                        if j.idle() {
                            to_close = Some(i);
                        }
                        continue;
                    }
                    let key = (j.work.depth, j.seq, i);
                    if listed.is_none_or(|l| key < l) {
                        listed = Some(key);
                    }
                }
            }
            let open = listed.map_or(u8::MAX, |l| l.0);
            self.open.store(open, Ordering::Relaxed);
            let pick = match (queued, to_close, listed) {
                (_, Some(i), _) => Some((false, i)),
                (Some((qd, i)), _, l) if l.is_none_or(|l| qd <= l.0) => Some((true, i)),
                (_, _, Some(l)) => Some((false, l.2)),
                _ => None,
            };
            match pick {
                Some((true, i)) => {
                    let Some(q) = st.queue.remove(i) else {
                        continue;
                    };
                    self.note_queue(&st);
                    return Some(Task::Start(q));
                }
                Some((false, i)) => {
                    let job = Arc::clone(&st.running[i]);
                    if job.join() {
                        return Some(Task::Help(job));
                    }
                    // Closed: the thread that sends its result unlists it soon;
                    // unlisted now, it is not chosen again.
                    st.running.retain(|j| !Arc::ptr_eq(j, &job));
                    continue;
                }
                None => {}
            }
            if st.closing {
                return None;
            }
            st = self.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Runs job `q` from its start: a subtree job shared with the threads that join it
    /// (when sharing is on), any other on this thread alone.
    fn start(&self, q: Queued) {
        let start = Instant::now();
        let engines = Arc::clone(&lock(&self.engines));
        let Queued { job, ticket } = q;
        let solver = match engines.get(&job.table) {
            Some(Engine::Optimal(solver)) if self.options.share_jobs => Some(solver.clone()),
            _ => None,
        };
        let Job {
            id,
            attempt,
            table,
            work,
        } = job;
        let job = match (solver, work) {
            (Some(solver), Work::Subtrees(work)) => {
                return self.start_shared((id, attempt), work, solver, ticket, start);
            }
            (_, work) => Job {
                id,
                attempt,
                table,
                work,
            },
        };
        // Searches catch their own panics (see the module doc of `runner`); this one is
        // the last net, so that no panic takes the pool down (rayon would abort) and
        // every job still sends one result.
        let t = &ticket;
        let result = catch_unwind(AssertUnwindSafe(|| {
            run_job_split(&engines, &job, &t.stop, &t.nodes, &self.options, &t.cursor)
        }))
        .unwrap_or_else(|payload| JobResult {
            id,
            attempt,
            micros: micros_since(start),
            output: Err(panic_error(payload.as_ref())),
        });
        self.send(&ticket.stop, &ticket.on_result, result, None);
    }

    /// Starts subtree job `work` (`id`, `attempt`) on `solver`, lists it for other
    /// threads to join, and takes part in it until no piece is left to claim.
    fn start_shared(
        &self,
        (id, attempt): (JobId, u32),
        work: SubtreeWork,
        solver: H48Solver,
        ticket: Ticket,
        start: Instant,
    ) {
        // The same order as one thread: the seam first, then the job's own checks.
        let plan = catch_unwind(AssertUnwindSafe(|| {
            self.options.before(&work.position);
            Plan::new(&work)
        }));
        let error = match plan {
            Ok(Ok(plan)) => {
                let job = Arc::new(SharedJob {
                    id,
                    attempt,
                    seq: ticket.seq,
                    stop: (ticket.stop).with_deadline(deadline_after(start, work.time_limit_ms)),
                    work,
                    solver,
                    plan,
                    cursor: ticket.cursor,
                    nodes: ticket.nodes,
                    found: AtomicUsize::new(0),
                    start,
                    on_result: ticket.on_result,
                    state: Mutex::new(Membership {
                        threads: 1,
                        ..Membership::default()
                    }),
                });
                lock(&self.state).running.push(Arc::clone(&job));
                self.open.fetch_min(job.work.depth, Ordering::Relaxed);
                self.wake.notify_all();
                self.options.tell(ShareEvent::Listed(id));
                return self.take_part(&job, false);
            }
            Ok(Err(e)) => e,
            Err(payload) => panic_error(payload.as_ref()),
        };
        let result = JobResult {
            id,
            attempt,
            micros: micros_since(start),
            output: Err(error),
        };
        self.send(&ticket.stop, &ticket.on_result, result, None);
    }

    /// Searches pieces of `job` on this thread (joined already; `helper`: a job it did
    /// not start) until it can claim no more or should leave (see the module doc), then
    /// leaves it; the last thread out of a closed job unlists it and sends its result.
    fn take_part(&self, job: &Arc<SharedJob>, helper: bool) {
        let depth = job.work.depth;
        let leave = || self.should_leave(depth, helper);
        let found = catch_unwind(AssertUnwindSafe(|| job.search().participate(&leave)));
        let last = job.leave(found);
        let Some((output, searchers)) = last else {
            // Left with pieces to claim, it waits for a free thread: wake one.
            self.open.fetch_min(depth, Ordering::Relaxed);
            self.wake.notify_one();
            return;
        };
        lock(&self.state).running.retain(|j| !Arc::ptr_eq(j, job));
        let result = JobResult {
            id: job.id,
            attempt: job.attempt,
            micros: micros_since(job.start),
            output: output.map(JobOutput::Subtrees),
        };
        self.send(&job.stop, &job.on_result, result, Some(searchers));
    }

    /// Forgets the job of `stop` and sends its result (`searchers`: a shared job's, told
    /// to the hook first).
    fn send(
        &self,
        stop: &StopToken,
        on_result: &ResultSink,
        result: JobResult,
        searchers: Option<usize>,
    ) {
        {
            let mut map = lock(&self.pending);
            if let Some(tokens) = map.get_mut(&result.id) {
                tokens.retain(|t| !t.stop.shares_flag(stop));
                if tokens.is_empty() {
                    map.remove(&result.id);
                }
            }
        }
        if let Some(searchers) = searchers {
            self.options.tell(ShareEvent::Ended {
                job: result.id,
                searchers,
            });
        }
        let _ = catch_unwind(AssertUnwindSafe(|| on_result(result)));
    }
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

    /// Jobs submitted and not finished (queued or running).
    pub fn pending(&self) -> usize {
        lock(&self.inner.pending).values().map(Vec::len).sum()
    }

    /// Queues `job`: it starts on the next free pool thread (see [`run_job`](super::run_job)
    /// for what it does), and its result goes to the callback.
    pub fn submit(&self, job: Job) {
        self.submit_with(job, Arc::clone(&self.inner.on_result));
    }

    /// [`JobRunner::submit`] with this job's result sent to `on_result` instead of the
    /// executor's callback: an executor kept between runs sends each result to the run
    /// that submitted the job, even one that arrives after that run ended.
    pub fn submit_with(&self, job: Job, on_result: ResultSink) {
        let stop = StopToken::new();
        let nodes = Arc::new(AtomicU64::new(0));
        let cursor = Arc::new(PieceCursor::default());
        lock(&self.inner.pending)
            .entry(job.id)
            .or_default()
            .push(Pending {
                stop: stop.clone(),
                nodes: Arc::clone(&nodes),
                attempt: job.attempt,
                cursor: matches!(job.work, Work::Subtrees(_)).then(|| Arc::clone(&cursor)),
                pieces: match &job.work {
                    Work::Subtrees(w) => {
                        let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
                        proto::pieces::total(&w.prefixes, w.depth, levels)
                    }
                    Work::Batch { .. } => 0,
                },
            });
        {
            let mut st = lock(&self.inner.state);
            let seq = st.next_seq;
            st.next_seq += 1;
            st.queue.push_back(Queued {
                job,
                ticket: Ticket {
                    stop,
                    nodes,
                    cursor,
                    on_result,
                    seq,
                },
            });
            self.inner.note_queue(&st);
        }
        self.inner.wake.notify_one();
    }

    /// Stops job `id` (every submitted job of that id, queued or running, on every thread
    /// searching it): it sends what it found so far, with [`proto::Stop::Cancelled`].
    /// Returns whether such a job was pending.
    pub fn cancel(&self, id: JobId) -> bool {
        let found = match lock(&self.inner.pending).get(&id) {
            Some(tokens) => {
                tokens.iter().for_each(|t| t.stop.cancel());
                true
            }
            None => false,
        };
        // A listed job no thread searches now must be closed by one.
        self.inner.wake.notify_one();
        found
    }

    /// Stops attempt `attempt` of job `id` from claiming more of its pieces, on every
    /// thread searching it (a subtree job; a batch job runs on, and this is `None`): how
    /// many it claimed (each is searched), the rest handed back (see
    /// [`proto::Handback`]). `None` when no such attempt is pending here (it ended, and
    /// its result is on its way). A job still queued hands back every piece.
    pub fn split(&self, id: JobId, attempt: u32) -> Option<u32> {
        let map = lock(&self.inner.pending);
        let p = map.get(&id)?.iter().find(|p| p.attempt == attempt)?;
        let kept = p.cursor.as_ref()?.hand_back();
        // A listed job no thread searches now must be closed by one.
        self.inner.wake.notify_one();
        if (kept as usize) < p.pieces {
            tracing::debug!(
                job = id.0,
                attempt,
                kept,
                pieces = p.pieces,
                "split: the pieces not claimed handed back"
            );
        }
        Some(kept)
    }

    /// Stops every pending job (for shutdown: each still sends its partial result).
    pub fn cancel_all(&self) {
        lock(&self.inner.pending)
            .values()
            .flatten()
            .for_each(|t| t.stop.cancel());
    }

    /// The search nodes job `id` has counted so far (positions and subtrees finished, by
    /// every thread searching it; the largest over its pending submissions), or `None`
    /// when it is not pending.
    pub fn nodes_so_far(&self, id: JobId) -> Option<u64> {
        lock(&self.inner.pending)
            .get(&id)
            .and_then(|v| v.iter().map(|t| t.nodes.load(Ordering::Relaxed)).max())
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
