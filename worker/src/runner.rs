//! The in-process executor: jobs in, results out.
//!
//! - [`Engines`]: the opened solvers of a process, by table name.
//! - [`run_job`]: the entry point of both engines for a job: one [`Job`] on the calling
//!   thread, one [`JobResult`] back (a job that cannot run is a result with a
//!   [`JobError`], never a panic).
//! - [`JobRunner`]: a rayon pool that lives as long as the executor (a local run's, or
//!   one per connection of a worker process); each submitted job runs [`run_job`] on one
//!   of its threads, can be cancelled by id, and hands its result to a callback.
//!
//! A panic in a search is a bug, and it costs its own position only: it is caught around
//! each position of a batch (that position's answer is [`JobError::Internal`], the others
//! are solved) and around a subtree job (the job's result is that error), so every job
//! sends exactly one result and no line waits for a lease that may not exist.

use crate::failpoint::PositionHook;
use crate::h48::SearchOutcome;
use crate::stop::deadline_after;
use crate::{catalog, Engine, Error, H48Solver, StopToken, TableMemory};
use proto::{
    Internal, Job, JobError, JobId, JobOutput, JobResult, Method, PositionAnswer, PositionError,
    SettingsError, Stop, SubtreeResult, SubtreeWork, Work, MAX_LENGTH,
};
use std::any::Any;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tables::tablefile::TableFileError;
use tables::{format_moves, Move};

/// Subtrees a subtree job interleaves on its thread (see
/// [`H48Solver::search_lanes`]) to hide the table's latency: three, measured against two,
/// four and six on a Zen 5 core (docs/performance.md, "three lanes").
const LANES: usize = 3;

/// The opened solvers of a process, by catalog table name.
#[derive(Clone, Debug, Default)]
pub struct Engines {
    /// Each engine under [`Engine::name`].
    by_name: BTreeMap<String, Engine>,
}

impl Engines {
    /// Opens the tables `names` (catalog names, see [`catalog`]) from `dir`, reading the
    /// large tables as `memory` says. Fails on the first name that is unknown or whose
    /// files are missing or bad.
    pub fn open(dir: &Path, names: &[&str], memory: TableMemory) -> Result<Engines, Error> {
        let mut engines = Engines::default();
        for name in names {
            engines.insert(catalog::open(dir, name, memory)?);
        }
        Ok(engines)
    }

    /// Adds an opened engine (replacing one of the same name).
    pub fn insert(&mut self, engine: Engine) {
        self.by_name.insert(engine.name().to_string(), engine);
    }

    /// The engine of table `name`.
    pub fn get(&self, name: &str) -> Option<&Engine> {
        self.by_name.get(name)
    }

    /// The table names held, sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }
}

/// Microseconds since `start`.
fn micros_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The job error for an engine error: each failure as what it is.
fn job_error(e: Error) -> JobError {
    match e {
        Error::Verification { moves } => JobError::Verification { moves },
        Error::Settings(s) => JobError::InvalidSettings(s),
        Error::Table(TableFileError::Io { path, error }) => JobError::TableUnreadable {
            path: path.display().to_string(),
            reason: error.to_string(),
        },
        Error::Table(other) => {
            // Every other table file error is "<path>: <what is wrong>".
            let text = other.to_string();
            let (path, reason) = text.split_once(": ").unwrap_or(("", &text));
            JobError::TableDamaged {
                path: path.to_string(),
                reason: reason.to_string(),
            }
        }
        Error::TableNotFound { name, dir } => JobError::TableUnreadable {
            path: dir.join(name).display().to_string(),
            reason: "not found".to_string(),
        },
        Error::Io { path, error } => JobError::TableUnreadable {
            path: path.display().to_string(),
            reason: error.to_string(),
        },
        Error::BadTable { name, reason } => JobError::TableDamaged { path: name, reason },
        // Only `tables build --base` chooses a base; a job never does.
        Error::BadBase { name, base } => JobError::TableUnreadable {
            path: name.clone(),
            reason: Error::BadBase { name, base }.to_string(),
        },
        Error::UnknownTable(name) => JobError::MissingTable { name },
        Error::NotEnoughMemory {
            name,
            needed,
            available,
        } => JobError::TableUnreadable {
            path: name,
            reason: format!("needs about {needed} bytes of memory, only {available} available"),
        },
        Error::Threads(e) => JobError::Internal(Internal::Threads {
            reason: e.to_string(),
        }),
    }
}

/// The error of a caught panic, with its message when it has one.
fn panic_error(payload: &(dyn Any + Send)) -> JobError {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a text message)".to_string()
    };
    JobError::Internal(Internal::Panic { message })
}

/// How an [`JobRunner`] (or [`run_job_with`]) runs jobs, beyond the jobs themselves.
#[derive(Clone, Default)]
pub struct RunnerOptions {
    /// Called with each position before it is searched (each batch position, each
    /// subtree job's position): the fault-injection seam of the tests (see
    /// [`crate::failpoint`]). `None` in production.
    pub before_position: Option<PositionHook>,
}

impl RunnerOptions {
    /// The options the environment asks for: the test seam of
    /// [`crate::failpoint::FAILPOINT_ENV`] when it is set.
    pub fn from_env() -> Result<RunnerOptions, crate::failpoint::FailpointError> {
        Ok(RunnerOptions {
            before_position: crate::failpoint::from_env()?,
        })
    }

    fn before(&self, position: &tables::Position) {
        if let Some(hook) = &self.before_position {
            hook(position);
        }
    }
}

impl std::fmt::Debug for RunnerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerOptions")
            .field("before_position", &self.before_position.is_some())
            .finish()
    }
}

/// Runs `job` on the calling thread with the engines of `engines`, stopping early when
/// `stop` says so, and returns its result (never panics on a bad job: a job that cannot
/// run is an `Err` output).
///
/// - [`Work::Batch`]: the items are solved in order, each on its own budget
///   (`settings.time_limit_ms` from that item's start). Cancellation stops the job: the
///   item running reports what it found with [`Stop::Cancelled`], the items not started
///   are not reported.
/// - [`Work::Subtrees`]: the prefixes are searched in their given order, two interleaved
///   on this thread, until `max_solutions` were found in the whole job (the job then
///   hands out no more prefixes, and a subtree's solutions beyond the count are dropped,
///   its stop then [`Stop::Completed`]) or the job's budget (`time_limit_ms` from its
///   start) runs out. One [`SubtreeResult`] per prefix started, in prefix order.
///
/// Errors of the whole job: [`JobError::MissingTable`] when `engines` lacks the table,
/// [`JobError::WrongTable`] when the table's method is not the one asked (a subtree job
/// needs an H48 table), [`JobError::InvalidSettings`] (the settings are validated here,
/// once, by [`proto::Settings::validate`]); for a subtree job also the errors below.
/// Errors of one batch position (the others are still solved): [`JobError::Verification`]
/// (a bug) when a solution does not solve its position, [`JobError::TableUnreadable`],
/// [`JobError::TableDamaged`], and [`JobError::Internal`] for a panic. Every solution
/// returned is verified against the position.
pub fn run_job(engines: &Engines, job: &Job, stop: &StopToken) -> JobResult {
    run_job_counted(engines, job, stop, &AtomicU64::new(0))
}

/// [`run_job`], adding the search nodes of each position or subtree to `nodes` as it
/// finishes, for progress reports while the job runs.
pub fn run_job_counted(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    nodes: &AtomicU64,
) -> JobResult {
    run_job_with(engines, job, stop, nodes, &RunnerOptions::default())
}

/// [`run_job_counted`] with `options` (the test seam).
pub fn run_job_with(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    nodes: &AtomicU64,
    options: &RunnerOptions,
) -> JobResult {
    run_job_split(engines, job, stop, nodes, options, &PieceCursor::default())
}

/// [`run_job_with`], a subtree job taking its pieces through `cursor`: what it has not
/// started when [`PieceCursor::hand_back`] is called is not searched, and its result
/// lists the prefixes of the pieces it started (their last one maybe in part).
pub fn run_job_split(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    nodes: &AtomicU64,
    options: &RunnerOptions,
    cursor: &PieceCursor,
) -> JobResult {
    let start = Instant::now();
    let output = run_work(engines, job, stop, start, nodes, options, cursor);
    JobResult {
        id: job.id,
        attempt: job.attempt,
        micros: micros_since(start),
        output,
    }
}

fn run_work(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    start: Instant,
    nodes: &AtomicU64,
    options: &RunnerOptions,
    cursor: &PieceCursor,
) -> Result<JobOutput, JobError> {
    let engine = engines
        .get(&job.table)
        .ok_or_else(|| JobError::MissingTable {
            name: job.table.clone(),
        })?;
    let wrong = |method| JobError::WrongTable {
        name: job.table.clone(),
        method,
    };
    match &job.work {
        Work::Batch { settings, items } => {
            if engine.method() != settings.method {
                return Err(wrong(settings.method));
            }
            let settings = settings
                .clone()
                .validate()
                .map_err(JobError::InvalidSettings)?;
            let mut results: Vec<PositionAnswer> = Vec::with_capacity(items.len());
            for item in items {
                if stop.is_cancelled() {
                    break;
                }
                let t = Instant::now();
                let item_stop = stop.with_deadline(deadline_after(t, settings.time_limit_ms));
                let solved = catch_unwind(AssertUnwindSafe(|| {
                    options.before(&item.position);
                    engine.solve(&item.position, &settings, &item_stop)
                }));
                let answer = match solved {
                    Ok(Ok(mut r)) => {
                        nodes.fetch_add(r.nodes, Ordering::Relaxed);
                        r.line = item.line;
                        r.micros = micros_since(t);
                        Ok(r)
                    }
                    Ok(Err(e)) => Err(job_error(e)),
                    Err(payload) => Err(panic_error(payload.as_ref())),
                };
                results.push(answer.map_err(|error| PositionError {
                    line: item.line,
                    error,
                }));
            }
            Ok(JobOutput::Batch(results))
        }
        Work::Subtrees(work) => match engine {
            Engine::Optimal(solver) => {
                let stop = stop.with_deadline(deadline_after(start, work.time_limit_ms));
                catch_unwind(AssertUnwindSafe(|| {
                    options.before(&work.position);
                    run_subtrees(solver, work, &stop, nodes, cursor)
                }))
                .unwrap_or_else(|payload| Err(panic_error(payload.as_ref())))
                .map(JobOutput::Subtrees)
            }
            Engine::TwoPhase(_) => Err(wrong(Method::Optimal)),
        },
    }
}

/// How many of a subtree job's pieces (see [`proto::pieces`]) have been started, and
/// whether the others were handed back: shared by the job's thread, which takes pieces
/// in order, and whoever answers a request to split the job ([`JobRunner::split`]).
#[derive(Debug)]
pub struct PieceCursor {
    /// Pieces started, and [`HANDED_BACK`] once the rest were handed back.
    started: AtomicU32,
    /// No piece from this one on starts (`u32::MAX`: any may).
    limit: u32,
}

impl Default for PieceCursor {
    fn default() -> Self {
        PieceCursor {
            started: AtomicU32::new(0),
            limit: u32::MAX,
        }
    }
}

/// Set in a [`PieceCursor`] once the pieces not started are handed back.
const HANDED_BACK: u32 = 1 << 31;

impl PieceCursor {
    /// Piece `k` starts (pieces start in order, `k` the count started so far): false
    /// when the pieces from here on were handed back.
    fn start(&self, k: u32) -> bool {
        if k + 1 >= HANDED_BACK || k >= self.limit {
            return false;
        }
        // Only the job's thread moves the count, to `k + 1`; a hand-back sets the flag.
        (self.started)
            .compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// A cursor whose job starts its first `k` pieces at most, as if asked to hand back
    /// once it had started them (a replay of a split, for tests).
    pub fn handing_back_from(k: u32) -> PieceCursor {
        PieceCursor {
            started: AtomicU32::new(0),
            limit: k,
        }
    }

    /// Stops the job from starting pieces: how many it has started (the same answer
    /// again when asked again).
    pub fn hand_back(&self) -> u32 {
        self.started.fetch_or(HANDED_BACK, Ordering::AcqRel) & !HANDED_BACK
    }

    /// Whether the pieces not started were handed back.
    fn handed_back(&self) -> bool {
        let s = self.started.load(Ordering::Acquire);
        s & HANDED_BACK != 0 || s >= self.limit
    }
}

/// A subtree job's pieces, flat: their moves, and for each its span and its prefix.
struct Pieces {
    moves: Vec<Move>,
    /// Start in `moves`, length, index of its prefix in the job.
    spans: Vec<(usize, usize, usize)>,
}

impl Pieces {
    /// The pieces of `work` in the order both ends enumerate them
    /// ([`proto::pieces::for_each_piece`] over the prefixes in order).
    fn of(work: &SubtreeWork) -> Pieces {
        let levels = proto::pieces::job_levels(&work.prefixes, work.depth, work.pieces);
        let mut p = Pieces {
            moves: Vec::new(),
            spans: Vec::with_capacity(work.prefixes.len()),
        };
        for (i, prefix) in work.prefixes.iter().enumerate() {
            let l = proto::pieces::levels_for(prefix.len(), work.depth, levels);
            proto::pieces::for_each_piece(prefix, l, &mut |piece| {
                p.spans.push((p.moves.len(), piece.len(), i));
                p.moves.extend_from_slice(piece);
            });
        }
        p
    }

    fn get(&self, k: usize) -> Option<(&[Move], usize)> {
        let &(start, len, owner) = self.spans.get(k)?;
        Some((self.moves.get(start..start + len)?, owner))
    }
}

/// One prefix's result so far: its pieces' merged.
fn merge(into: &mut SubtreeResult, nodes: u64, lookups: u64, stop: Stop) {
    into.nodes += nodes;
    into.lookups += lookups;
    let rank = |s: Stop| match s {
        Stop::Exhausted => 0,
        Stop::Completed => 1,
        Stop::ProbeLimit => 2,
        Stop::TimeLimit => 3,
        Stop::Cancelled => 4,
    };
    if rank(stop) > rank(into.stop) {
        into.stop = stop;
    }
}

/// The subtrees of `work`, [`LANES`] at a time on this thread, as their pieces, taken
/// through `cursor` (see [`run_job`]).
fn run_subtrees(
    solver: &H48Solver,
    work: &SubtreeWork,
    stop: &StopToken,
    nodes: &AtomicU64,
    cursor: &PieceCursor,
) -> Result<Vec<SubtreeResult>, JobError> {
    // A subtree job is not made from settings by its receiver: its two limits are
    // checked here, against the same constants and errors as settings.
    if work.depth > MAX_LENGTH {
        return Err(JobError::InvalidSettings(SettingsError::MaxLength {
            value: work.depth,
        }));
    }
    let want = match work.max_solutions {
        Some(0) => return Err(JobError::InvalidSettings(SettingsError::NoSolutions)),
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => usize::MAX,
    };
    let position = &work.position;
    let depth = usize::from(work.depth);
    let pieces = Pieces::of(work);
    // Solutions kept so far in the whole job (read when handing out, written when done).
    let found = Cell::new(0usize);
    // The last piece started (every piece before it was too).
    let started = Cell::new(None::<usize>);
    // Pieces are taken (their entries prefetched) a few ahead of their start; the
    // cursor counts those started, so that a hand-back gives up the taken ones too.
    let mut taken = 0usize;
    let mut next = || {
        if found.get() >= want || stop.check().is_some() || cursor.handed_back() {
            return None;
        }
        let (piece, _) = pieces.get(taken)?;
        taken += 1;
        Some((taken - 1, piece, want - found.get()))
    };
    let mut admit = |k: usize| {
        let ok = u32::try_from(k).is_ok_and(|k| cursor.start(k));
        if ok {
            started.set(Some(k));
        }
        ok
    };
    // One result per prefix started, by prefix index.
    let mut results: BTreeMap<usize, SubtreeResult> = BTreeMap::new();
    let mut fault: Option<JobError> = None;
    let mut done = |k: usize, out: SearchOutcome| {
        let Some((piece, owner)) = pieces.get(k) else {
            return;
        };
        nodes.fetch_add(out.nodes, Ordering::Relaxed);
        if out.invalid > 0 && fault.is_none() {
            fault = Some(JobError::Verification {
                moves: "(dropped by the search)".into(),
            });
        }
        for s in &out.solutions {
            let ok = s.len() == depth && s.starts_with(piece) && position.is_solved_by(s);
            if !ok && fault.is_none() {
                fault = Some(JobError::Verification {
                    moves: format_moves(s),
                });
            }
        }
        let mut solutions = out.solutions;
        let mut why = out.stop;
        let room = want.saturating_sub(found.get());
        if solutions.len() > room {
            // Another lane found its share first: the job asked for no more.
            solutions.truncate(room);
            why = Stop::Completed;
        }
        found.set(found.get() + solutions.len());
        let r = results.entry(owner).or_insert_with(|| SubtreeResult {
            prefix: u32::try_from(owner).unwrap_or(u32::MAX),
            solutions: Vec::new(),
            nodes: 0,
            lookups: 0,
            stop: Stop::Exhausted,
        });
        r.solutions.extend(solutions);
        merge(r, out.nodes, out.lookups, why);
    };
    solver.search_lanes(
        position.cube(),
        work.depth,
        LANES,
        stop,
        &mut next,
        &mut admit,
        &mut done,
    );
    if let Some(e) = fault {
        return Err(e);
    }
    // A prefix whose later pieces never started, neither handed back nor past the last
    // piece, was cut short: by the job's solution count, or by its stop.
    if let Some(last) = started.get() {
        let next_piece = pieces.get(last + 1);
        if let (Some((_, owner)), false) = (next_piece, cursor.handed_back()) {
            if let Some(r) = results.get_mut(&owner) {
                let why = match stop.check() {
                    Some(why) => why,
                    None => Stop::Completed,
                };
                merge(r, 0, 0, why);
            }
        }
    }
    Ok(results.into_values().collect())
}

/// One submitted job not finished: its stop token and its node count so far.
struct Pending {
    stop: StopToken,
    nodes: Arc<AtomicU64>,
    /// The attempt submitted.
    attempt: u32,
    /// Its pieces started, for a request to split it (`None`: a batch job, not split).
    cursor: Option<Arc<PieceCursor>>,
    /// Its pieces (a subtree job's).
    pieces: usize,
}

/// The jobs submitted and not finished, by id: one entry per submission (a job sent again
/// while an earlier attempt still runs gets its own), so that one cancel reaches them all
/// and a finished job removes only its own.
type PendingMap = Mutex<HashMap<JobId, Vec<Pending>>>;

/// Locks `m`, recovering it if a thread panicked while holding it (what it guards stays
/// valid: every update of the pending map is a single push or removal, and the engines
/// are replaced whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where results go: called once per job, from the pool thread that ran it.
pub type ResultSink = Arc<dyn Fn(JobResult) + Send + Sync>;

/// Runs jobs on one long-lived rayon pool of `threads` threads, one job per thread at a
/// time, and hands each result to a callback.
///
/// Results are sent from the pool thread that ran the job, once per job, including for
/// cancelled jobs (with what they found). A job the engines cannot run gets a result with
/// an `Err` output; a bad job never panics the executor. Dropping the executor does not
/// wait for its jobs: call [`JobRunner::cancel_all`] first to have them stop and report.
pub struct JobRunner {
    /// The one pool of the process.
    pool: rayon::ThreadPool,
    /// The opened solvers, shared with the pool's threads; a job takes the ones current
    /// when it starts (see [`JobRunner::replace_engines`]).
    engines: Arc<Mutex<Arc<Engines>>>,
    /// Where results go.
    on_result: ResultSink,
    /// The tokens of the jobs submitted and not finished, for [`JobRunner::cancel`].
    pending: Arc<PendingMap>,
    /// How jobs run (the test seam).
    options: Arc<RunnerOptions>,
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
        Ok(JobRunner {
            pool,
            engines: Arc::new(Mutex::new(engines)),
            on_result,
            pending: Arc::new(Mutex::new(HashMap::new())),
            options: Arc::new(options),
        })
    }

    /// The number of threads, i.e. of jobs run at once.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The tables the executor can serve (catalog names, sorted).
    pub fn tables(&self) -> Vec<String> {
        lock(&self.engines).names()
    }

    /// Jobs that start from now on solve with `engines`, which must serve the same
    /// tables (the same solvers in another memory: a mapped table replaced by its copy
    /// in huge pages once the copy is made); running jobs finish on the ones they
    /// started with. Returns whether they were replaced (not when the tables differ).
    pub fn replace_engines(&self, engines: Arc<Engines>) -> bool {
        let mut cur = lock(&self.engines);
        if cur.names() != engines.names() {
            return false;
        }
        *cur = engines;
        true
    }

    /// Jobs submitted and not finished (queued or running).
    pub fn pending(&self) -> usize {
        lock(&self.pending).values().map(Vec::len).sum()
    }

    /// Queues `job`: it runs [`run_job`] on the next free pool thread, and its result goes
    /// to the callback.
    pub fn submit(&self, job: Job) {
        self.submit_with(job, Arc::clone(&self.on_result));
    }

    /// [`JobRunner::submit`] with this job's result sent to `on_result` instead of the
    /// executor's callback: an executor kept between runs sends each result to the run
    /// that submitted the job, even one that arrives after that run ended.
    pub fn submit_with(&self, job: Job, on_result: ResultSink) {
        let token = StopToken::new();
        let nodes = Arc::new(AtomicU64::new(0));
        let cursor = Arc::new(PieceCursor::default());
        lock(&self.pending)
            .entry(job.id)
            .or_default()
            .push(Pending {
                stop: token.clone(),
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
        let engines = Arc::clone(&self.engines);
        let pending = Arc::clone(&self.pending);
        let options = Arc::clone(&self.options);
        self.pool.spawn(move || {
            // Searches catch their own panics (see the module doc); this one is the last
            // net, so that no panic takes the pool down (rayon would abort) and every job
            // still sends one result.
            let start = Instant::now();
            let engines = Arc::clone(&lock(&engines));
            let result = catch_unwind(AssertUnwindSafe(|| {
                run_job_split(&engines, &job, &token, &nodes, &options, &cursor)
            }))
            .unwrap_or_else(|payload| JobResult {
                id: job.id,
                attempt: job.attempt,
                micros: micros_since(start),
                output: Err(panic_error(payload.as_ref())),
            });
            {
                let mut map = lock(&pending);
                if let Some(tokens) = map.get_mut(&job.id) {
                    tokens.retain(|t| !t.stop.shares_flag(&token));
                    if tokens.is_empty() {
                        map.remove(&job.id);
                    }
                }
            }
            let _ = catch_unwind(AssertUnwindSafe(|| on_result(result)));
        });
    }

    /// Stops job `id` (every submitted job of that id, queued or running): it sends what
    /// it found so far, with [`Stop::Cancelled`]. Returns whether such a job was pending.
    pub fn cancel(&self, id: JobId) -> bool {
        match lock(&self.pending).get(&id) {
            Some(tokens) => {
                tokens.iter().for_each(|t| t.stop.cancel());
                true
            }
            None => false,
        }
    }

    /// Stops attempt `attempt` of job `id` from starting more of its pieces (a subtree
    /// job; a batch job runs on, and this is `None`): how many it started, the rest handed
    /// back (see [`proto::Handback`]). `None` when no such attempt is pending here (it
    /// ended, and its result is on its way). A job still queued hands back every piece.
    pub fn split(&self, id: JobId, attempt: u32) -> Option<u32> {
        let map = lock(&self.pending);
        let p = map.get(&id)?.iter().find(|p| p.attempt == attempt)?;
        let kept = p.cursor.as_ref()?.hand_back();
        if (kept as usize) < p.pieces {
            tracing::debug!(
                job = id.0,
                attempt,
                kept,
                pieces = p.pieces,
                "split: the pieces not started handed back"
            );
        }
        Some(kept)
    }

    /// Stops every pending job (for shutdown: each still sends its partial result).
    pub fn cancel_all(&self) {
        lock(&self.pending)
            .values()
            .flatten()
            .for_each(|t| t.stop.cancel());
    }

    /// The search nodes job `id` has counted so far (positions and subtrees finished; the
    /// largest over its pending submissions), or `None` when it is not pending.
    pub fn nodes_so_far(&self, id: JobId) -> Option<u64> {
        lock(&self.pending)
            .get(&id)
            .and_then(|v| v.iter().map(|t| t.nodes.load(Ordering::Relaxed)).max())
    }
}
