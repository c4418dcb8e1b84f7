//! The scheduler: a deterministic state machine with no threads and no clock of its own.
//!
//! Requests (a scramble set, or one scramble) come in as positions; the scheduler cuts
//! them into [`Job`]s, hands the jobs to executors with free capacity that hold the
//! right table, keeps a lease on every dispatched job, routes results back to their
//! positions, and releases one [`Record`] per input line, in input order.
//!
//! Everything it decides comes out as [`Action`]s (dispatch a job to an executor, cancel
//! a job on an executor) that a driver carries out; everything that happens comes in
//! through method calls with the current time in microseconds. The same machine serves
//! the embedded default, the cluster, and the simulation tests that replay seeded fault
//! schedules.
//!
//! # Leases
//! A dispatched job belongs to one executor until it answers or its lease ends (the
//! executor's heartbeats renew it). An executor that goes away, or whose lease ends (it
//! is then forgotten until it joins again), puts the job back in the queue with the next
//! attempt number. Results are keyed by job id: the first complete one wins, whatever its
//! attempt; a late, repeated, partial (cancelled) or superseded one changes nothing.
//!
//! # Cost
//! Built for a thousand executors and millions of lines: dispatch visits only executors
//! with a free slot, leases and time limits wait in ordered indexes, the lines in flight
//! sit in a window indexed by sequence number, and [`Scheduler::progress`] is a few
//! lookups. Nothing is proportional to the input's size, and little to the number of
//! executors.

use crate::deepen::{self, AfterShallow, Deep, Step};
use crate::executor::ExecutorId;
use crate::inflight::InFlight;
use crate::pool::{ExecState, Pool};
use proto::{
    answer_line, BatchItem, Job, JobError, JobId, JobOutput, JobResult, Method, PositionAnswer,
    PositionResult, Record, RecordError, Settings, Solved, Stop, SubtreeWork, Work,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use tables::{Move, Position};

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
    /// Subtree jobs per executor slot and depth, at least.
    pub jobs_per_slot: usize,
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

/// Most ungrouped positions room is made for ahead of time.
const MAX_PREALLOC: usize = 1024;

/// The priority of a queued job: older requests, then earlier lines, then shallower
/// depths, then more promising subtree groups first.
type Priority = (RequestId, u64, u8, u32);

/// Where a position is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct PosKey {
    req: RequestId,
    seq: u64,
}

/// What a job does (materialised into a [`Job`] at each dispatch). Positions are named
/// by their sequence number in the job's request.
#[derive(Clone, Debug)]
enum Kind {
    /// Whole positions with the request's settings (two-phase).
    Batch { seqs: Vec<u64> },
    /// One optimal position searched whole up to `split_depth - 1`.
    Shallow { seq: u64 },
    /// Subtrees of one optimal position at one depth.
    Subtrees {
        seq: u64,
        depth: u8,
        prefixes: Vec<u32>,
    },
}

impl Kind {
    /// The positions the job answers for.
    fn seqs(&self) -> &[u64] {
        match self {
            Kind::Batch { seqs } => seqs,
            Kind::Shallow { seq } | Kind::Subtrees { seq, .. } => std::slice::from_ref(seq),
        }
    }

    /// The one position of a single-position job (a batch job belongs to its request).
    fn single(&self) -> Option<u64> {
        match self {
            Kind::Batch { .. } => None,
            Kind::Shallow { seq } | Kind::Subtrees { seq, .. } => Some(*seq),
        }
    }
}

/// Queued jobs, by the table they need, each set in priority order.
#[derive(Debug, Default)]
struct Queue {
    by_table: BTreeMap<String, BTreeSet<(Priority, JobId)>>,
    len: usize,
}

impl Queue {
    fn insert(&mut self, table: &str, prio: Priority, id: JobId) {
        if !self.by_table.contains_key(table) {
            self.by_table.insert(table.to_string(), BTreeSet::new());
        }
        if let Some(set) = self.by_table.get_mut(table) {
            if set.insert((prio, id)) {
                self.len += 1;
            }
        }
    }

    fn remove(&mut self, table: &str, prio: Priority, id: JobId) {
        if let Some(set) = self.by_table.get_mut(table) {
            if set.remove(&(prio, id)) {
                self.len -= 1;
            }
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most urgent job needing one of `tables`.
    fn best_for(&self, tables: &BTreeSet<String>) -> Option<(Priority, JobId)> {
        tables
            .iter()
            .filter_map(|t| self.by_table.get(t)?.first().copied())
            .min()
    }

    /// Whether a job of position `seq` of `req` waits in the queue.
    fn holds_position(&self, table: &str, req: RequestId, seq: u64) -> bool {
        let lo = ((req, seq, 0, 0), JobId(0));
        let hi = ((req, seq, u8::MAX, u32::MAX), JobId(u64::MAX));
        self.by_table
            .get(table)
            .is_some_and(|set| set.range(lo..=hi).next().is_some())
    }
}

#[derive(Debug)]
struct JobState {
    /// The request it serves.
    req: RequestId,
    /// The table it needs.
    table: String,
    kind: Kind,
    /// The attempt last dispatched (0: never).
    attempt: u32,
    /// The executor running it (`None`: queued).
    lease: Option<ExecutorId>,
    prio: Priority,
}

/// The open single-position jobs of one position, without an allocation for the common
/// case of one.
#[derive(Debug, Default)]
enum JobSet {
    #[default]
    Empty,
    One(JobId),
    Many(BTreeSet<JobId>),
}

impl JobSet {
    fn insert(&mut self, id: JobId) {
        match self {
            JobSet::Empty => *self = JobSet::One(id),
            JobSet::One(x) if *x == id => {}
            JobSet::One(x) => *self = JobSet::Many(BTreeSet::from([*x, id])),
            JobSet::Many(set) => {
                set.insert(id);
            }
        }
    }

    fn remove(&mut self, id: JobId) {
        match self {
            JobSet::One(x) if *x == id => *self = JobSet::Empty,
            JobSet::Many(set) => {
                set.remove(&id);
            }
            _ => {}
        }
    }

    fn take(&mut self) -> Vec<JobId> {
        match std::mem::take(self) {
            JobSet::Empty => Vec::new(),
            JobSet::One(x) => vec![x],
            JobSet::Many(set) => set.into_iter().collect(),
        }
    }
}

/// A split optimal position: its deepening, and when its time runs out.
#[derive(Debug)]
struct Split {
    deep: Deep,
    /// End of its time limit (µs), if it has one.
    deadline: Option<u64>,
}

/// One position in flight.
#[derive(Debug)]
struct Pos {
    line: u64,
    input: String,
    position: Position,
    /// When its first job was dispatched (µs).
    started: Option<u64>,
    /// Its open single-position jobs (shallow, subtrees).
    jobs: JobSet,
    /// Deepening state, once an optimal position is split.
    split: Option<Box<Split>>,
    /// Resume hint: every length up to this one is known to have no solution.
    proved_empty: Option<u8>,
}

/// One request: its settings, its lines in flight, its jobs.
#[derive(Debug)]
struct Request {
    settings: Settings,
    table: String,
    /// Lines read and not yet released: positions in flight and records waiting.
    lines: InFlight<Pos>,
    /// Two-phase positions not yet in a job.
    ungrouped: Vec<u64>,
    /// Every open job of the request.
    jobs: BTreeSet<JobId>,
    /// Positions in split (deepening) state, by sequence number.
    split: BTreeSet<u64>,
    /// No more lines will come.
    input_done: bool,
}

/// The scheduler. See the module documentation.
#[derive(Debug)]
pub struct Scheduler {
    cfg: Config,
    prefixes: Arc<Vec<Vec<Move>>>,
    now: u64,
    next_job: u64,
    next_request: u64,
    executors: Pool,
    jobs: HashMap<JobId, JobState>,
    queue: Queue,
    requests: BTreeMap<RequestId, Request>,
    /// Time limits of split positions: (deadline, position).
    deadlines: BTreeSet<(u64, PosKey)>,
    actions: Vec<Action>,
    counters: Counters,
}

impl Scheduler {
    /// A scheduler with no executors and no requests.
    pub fn new(cfg: Config) -> Scheduler {
        let prefixes = Arc::new(tables::canonical::sequences(cfg.prefix_len));
        Scheduler {
            cfg,
            prefixes,
            now: 0,
            next_job: 1,
            next_request: 1,
            executors: Pool::default(),
            jobs: HashMap::new(),
            queue: Queue::default(),
            requests: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            actions: Vec::new(),
            counters: Counters::default(),
        }
    }

    /// Moves the clock to `now` (µs, monotonic) and acts on what that ends: leases and
    /// positions' time limits.
    pub fn tick(&mut self, now: u64) {
        self.now = self.now.max(now);
        let now = self.now;
        // Leases: an executor's heartbeat renews all of its leases.
        if let Some(lease) = self.cfg.lease_us {
            while let Some((renewed, id)) = self.executors.oldest_lease() {
                if renewed.saturating_add(lease) > now {
                    break;
                }
                // Silent past its lease: presumed gone. Its jobs go back to the queue and
                // it gets no more; if it is alive after all it must join again.
                let Some(e) = self.executors.remove(id) else {
                    break;
                };
                for job in e.running {
                    self.counters.lease_expiries += 1;
                    self.actions.push(Action::Cancel { on: id, job });
                    self.requeue(job);
                }
            }
        }
        // Time limits of split positions.
        while let Some(&(deadline, key)) = self.deadlines.first() {
            if deadline > now {
                break;
            }
            self.deadlines.remove(&(deadline, key));
            self.finish_split(key, Stop::TimeLimit);
        }
    }

    /// When the next tick is due (µs), if anything waits on the clock.
    pub fn next_deadline(&self) -> Option<u64> {
        let lease = self.cfg.lease_us.and_then(|l| {
            let (renewed, _) = self.executors.oldest_lease()?;
            Some(renewed.saturating_add(l))
        });
        let limit = self.deadlines.first().map(|&(d, _)| d);
        lease.into_iter().chain(limit).min()
    }

    // ----- executors -----

    /// An executor joined. An id already known is the same executor starting afresh:
    /// whatever it ran goes back to the queue first.
    pub fn add_executor(&mut self, id: ExecutorId, capacity: usize, tables: Vec<String>) {
        self.remove_executor(id);
        self.executors.insert(
            id,
            ExecState {
                capacity: capacity.max(1),
                tables: tables.into_iter().collect(),
                running: BTreeSet::new(),
                lease_renewed: self.now,
            },
        );
    }

    /// An executor is gone (or hands back its jobs as it shuts down): its jobs go back to
    /// the queue. A result it sends later is still taken if its job is still open.
    pub fn remove_executor(&mut self, id: ExecutorId) {
        if let Some(e) = self.executors.remove(id) {
            for job in e.running {
                self.requeue(job);
            }
        }
    }

    /// Sets how many jobs an executor may run at once; false when it is unknown. 0
    /// drains it: it gets no new jobs, while those it runs go on and their results are
    /// taken as usual. Below what it runs now, it gets no new job until it is under.
    pub fn set_capacity(&mut self, id: ExecutorId, capacity: usize) -> bool {
        self.executors
            .update(id, |e| e.capacity = capacity)
            .is_some()
    }

    /// The jobs an executor runs, with the attempt each was sent as.
    pub fn running_on(&self, id: ExecutorId) -> Vec<(JobId, u32)> {
        let Some(e) = self.executors.get(id) else {
            return Vec::new();
        };
        e.running
            .iter()
            .map(|&job| (job, self.jobs.get(&job).map_or(0, |j| j.attempt)))
            .collect()
    }

    /// The executor is alive: its leases are renewed.
    pub fn heartbeat(&mut self, id: ExecutorId) {
        let now = self.now;
        self.executors.update(id, |e| e.lease_renewed = now);
    }

    /// Whether `id` is a known executor (one silent past its lease is forgotten).
    pub fn has_executor(&self, id: ExecutorId) -> bool {
        self.executors.get(id).is_some()
    }

    /// Whether some known executor that takes jobs (capacity above 0) holds `table`.
    pub fn can_run(&self, table: &str) -> bool {
        self.executors
            .values()
            .any(|e| e.capacity > 0 && e.tables.contains(table))
    }

    /// An executor's capacity and the jobs it runs (`None`: not known).
    pub fn executor_state(&self, id: ExecutorId) -> Option<(usize, usize)> {
        self.executors
            .get(id)
            .map(|e| (e.capacity, e.running.len()))
    }

    /// Executors known.
    pub fn executor_count(&self) -> usize {
        self.executors.len()
    }

    /// Whom job `job` serves and where it is: its request, its input line, its current
    /// attempt and the executor holding it (`None`: queued); `None` once it is done.
    pub fn job_of(&self, job: JobId) -> Option<(RequestId, u64, u32, Option<ExecutorId>)> {
        self.jobs
            .get(&job)
            .map(|j| (j.req, j.prio.1, j.attempt, j.lease))
    }

    /// Jobs running and queued.
    pub fn job_counts(&self) -> (usize, usize) {
        let running = self.executors.values().map(|e| e.running.len()).sum();
        (running, self.queue.len())
    }

    /// Counters so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// How far `req` has come (zeros but the executor counts for a request not known).
    pub fn progress(&self, req: RequestId) -> Progress {
        let mut p = Progress {
            busy_executors: self.executors.busy(),
            executors: self.executors.len(),
            ..Progress::default()
        };
        let Some(r) = self.requests.get(&req) else {
            return p;
        };
        p.records = r.lines.released();
        p.lines = r.lines.next_seq();
        p.input_done = r.input_done;
        p.deepening = r.split.first().and_then(|&seq| {
            let pos = r.lines.get(seq)?;
            let deep = &pos.split.as_ref()?.deep;
            Some(Deepening {
                line: pos.line,
                depth: deep.current(),
                depth_exhausted: deep.exhausted(),
                nodes: deep.nodes(),
            })
        });
        p
    }

    // ----- requests -----

    /// Opens a request: positions of one input, all with `settings`, needing `table`.
    pub fn open_request(&mut self, settings: Settings, table: String) -> RequestId {
        let id = RequestId(self.next_request);
        self.next_request += 1;
        self.requests.insert(
            id,
            Request {
                settings,
                table,
                lines: InFlight::default(),
                ungrouped: Vec::new(),
                jobs: BTreeSet::new(),
                split: BTreeSet::new(),
                input_done: false,
            },
        );
        id
    }

    /// Adds one input line: a position to solve, or the error that the line is not one
    /// (which becomes its record at once).
    pub fn push_line(
        &mut self,
        req: RequestId,
        line: u64,
        input: String,
        parsed: Result<Position, RecordError>,
    ) {
        self.push_line_resumed(req, line, input, parsed, None);
    }

    /// Adds one input line, as [`push_line`](Self::push_line), with a resume hint for an
    /// optimal position: every length up to `proved_empty` is already known to have no
    /// solution (a client that lost the coordinator mid-search sends the deepest length
    /// it saw proved empty). Deepening starts past it (the shallow job only computes the
    /// lower bound when the hint reaches `split_depth - 1`), and the record is a fresh
    /// search's (same solutions, same `optimal` flag) but for nodes and time, with
    /// `depth_exhausted` at least the hint. A hint at or beyond `max_length` gives the
    /// record "no solution within `max_length`" at once. Ignored for two-phase.
    pub fn push_line_resumed(
        &mut self,
        req: RequestId,
        line: u64,
        input: String,
        parsed: Result<Position, RecordError>,
        proved_empty: Option<u8>,
    ) {
        let batch_size = self.cfg.batch_size.max(1);
        let Some(r) = self.requests.get_mut(&req) else {
            return;
        };
        let position = match parsed {
            Ok(p) => p,
            Err(e) => {
                r.lines.push_ready(Record {
                    line,
                    input,
                    outcome: Err(e),
                });
                return;
            }
        };
        let proved_empty = match r.settings.method {
            Method::Optimal => proved_empty,
            Method::TwoPhase => None,
        };
        if proved_empty.is_some_and(|d| d >= r.settings.max_length) {
            let outcome = Ok(deepen::nothing_within(&r.settings));
            r.lines.push_ready(Record {
                line,
                input,
                outcome,
            });
            return;
        }
        let seq = r.lines.push_open(Pos {
            line,
            input,
            position,
            started: None,
            jobs: JobSet::Empty,
            split: None,
            proved_empty,
        });
        match r.settings.method {
            Method::TwoPhase => {
                r.ungrouped.push(seq);
                if r.ungrouped.len() >= batch_size {
                    self.group(req);
                }
            }
            Method::Optimal => {
                self.new_job(req, Kind::Shallow { seq }, (req, seq, 0, 0));
            }
        }
    }

    /// No more lines will come for `req`.
    pub fn end_input(&mut self, req: RequestId) {
        if let Some(r) = self.requests.get_mut(&req) {
            r.input_done = true;
        }
        self.group(req);
    }

    /// Records of `req` ready for release, in input order.
    pub fn take_records(&mut self, req: RequestId) -> Vec<Record> {
        std::iter::from_fn(|| self.next_record(req)).collect()
    }

    /// The next record of `req`, if it is ready for release (records come in input
    /// order).
    pub fn next_record(&mut self, req: RequestId) -> Option<Record> {
        let rec = self.requests.get_mut(&req)?.lines.pop_ready()?;
        self.counters.records += 1;
        Some(rec)
    }

    /// Whether every line of `req` has been released.
    pub fn is_done(&self, req: RequestId) -> bool {
        self.requests
            .get(&req)
            .is_none_or(|r| r.input_done && r.lines.len() == 0)
    }

    /// Forgets `req`, cancelling whatever of it still runs.
    pub fn close_request(&mut self, req: RequestId) {
        let Some(r) = self.requests.remove(&req) else {
            return;
        };
        for id in r.jobs {
            let Some(j) = self.jobs.remove(&id) else {
                continue;
            };
            self.queue.remove(&j.table, j.prio, id);
            if let Some(exec) = j.lease {
                self.free_slot(exec, id);
                self.actions.push(Action::Cancel { on: exec, job: id });
            }
        }
        self.deadlines.retain(|&(_, key)| key.req != req);
    }

    /// What the driver must do now: dispatches to free executors, cancellations.
    pub fn take_actions(&mut self) -> Vec<Action> {
        self.dispatch();
        std::mem::take(&mut self.actions)
    }

    // ----- results -----

    /// A result came from executor `from`.
    pub fn on_result(&mut self, from: ExecutorId, result: JobResult) {
        let id = result.id;
        let Some(job) = self.jobs.get(&id) else {
            // Finished, superseded or cancelled already: a late or repeated answer.
            self.counters.ignored_results += 1;
            self.free_slot(from, id);
            return;
        };
        let current = job.lease == Some(from) && result.attempt == job.attempt;
        let whole = match &result.output {
            Ok(out) => complete(&job.kind, out, self.requests.get(&job.req)),
            Err(_) => true,
        };
        if current {
            let now = self.now;
            self.executors.update(from, |e| {
                e.running.remove(&id);
                e.lease_renewed = now;
            });
        }
        if let Err(JobError::MissingTable { name }) = &result.output {
            // The executor said it had the table and has not: never again.
            self.executors.update(from, |e| e.tables.remove(name));
        }
        let retry = matches!(result.output, Err(JobError::MissingTable { .. })) || !whole;
        if retry {
            if current {
                // Handed back (drain), cut short, or sent where the table is missing.
                self.requeue(id);
            } else {
                self.counters.ignored_results += 1;
            }
            return;
        }
        // Accepted: the first complete answer wins.
        let Some(job) = self.remove_job(id) else {
            return;
        };
        if let Some(exec) = job.lease {
            if exec != from || !current {
                // Another attempt still runs somewhere: stop it.
                self.free_slot(exec, id);
                self.actions.push(Action::Cancel { on: exec, job: id });
            }
        }
        self.counters.jobs_done += 1;
        self.apply(job.req, job.kind, result);
    }

    // ----- internals -----

    fn free_slot(&mut self, exec: ExecutorId, job: JobId) {
        self.executors.update(exec, |e| e.running.remove(&job));
    }

    fn new_job(&mut self, req: RequestId, kind: Kind, prio: Priority) -> Option<JobId> {
        let r = self.requests.get_mut(&req)?;
        let id = JobId(self.next_job);
        self.next_job += 1;
        r.jobs.insert(id);
        if let Some(p) = kind.single().and_then(|seq| r.lines.get_mut(seq)) {
            p.jobs.insert(id);
        }
        let table = r.table.clone();
        self.queue.insert(&table, prio, id);
        self.jobs.insert(
            id,
            JobState {
                req,
                table,
                kind,
                attempt: 0,
                lease: None,
                prio,
            },
        );
        self.counters.jobs_created += 1;
        Some(id)
    }

    /// Forgets a job everywhere but on its executor (the caller frees or cancels that).
    fn remove_job(&mut self, id: JobId) -> Option<JobState> {
        let j = self.jobs.remove(&id)?;
        self.queue.remove(&j.table, j.prio, id);
        if let Some(r) = self.requests.get_mut(&j.req) {
            r.jobs.remove(&id);
            if let Some(p) = j.kind.single().and_then(|seq| r.lines.get_mut(seq)) {
                p.jobs.remove(id);
            }
        }
        Some(j)
    }

    /// Puts a job back in the queue for its next attempt.
    fn requeue(&mut self, id: JobId) {
        let Some(j) = self.jobs.get_mut(&id) else {
            return;
        };
        let lease = j.lease.take();
        self.queue.insert(&j.table, j.prio, id);
        self.counters.requeued += 1;
        if let Some(exec) = lease {
            self.free_slot(exec, id);
        }
    }

    fn pos_mut(&mut self, key: PosKey) -> Option<&mut Pos> {
        self.requests.get_mut(&key.req)?.lines.get_mut(key.seq)
    }

    /// Cuts the ungrouped two-phase positions of `req` into jobs (a last partial one
    /// too).
    fn group(&mut self, req: RequestId) {
        let batch_size = self.cfg.batch_size.max(1);
        let Some(r) = self.requests.get_mut(&req) else {
            return;
        };
        if r.ungrouped.is_empty() {
            return;
        }
        let mut seqs = std::mem::replace(
            &mut r.ungrouped,
            Vec::with_capacity(batch_size.min(MAX_PREALLOC)),
        );
        while !seqs.is_empty() {
            let rest = seqs.split_off(batch_size.min(seqs.len()));
            let first = seqs.first().copied().unwrap_or_default();
            self.new_job(req, Kind::Batch { seqs }, (req, first, 0, 0));
            seqs = rest;
        }
    }

    fn dispatch(&mut self) {
        // Idle capacity with nothing queued: flush partial two-phase groups, and start
        // the next depth of split positions early.
        if self.queue.len() < self.executors.free_slots() {
            let reqs: Vec<RequestId> = self
                .requests
                .iter()
                .filter(|(_, r)| !r.ungrouped.is_empty())
                .map(|(&id, _)| id)
                .collect();
            for req in reqs {
                self.group(req);
            }
            if self.cfg.early_start && self.queue.len() < self.executors.free_slots() {
                self.start_early();
            }
        }
        // Fill executors with room, round-robin in id order, one job each per round.
        let mut cursor = None;
        let mut progressed = false;
        while !self.queue.is_empty() {
            let Some(exec) = self.executors.next_with_room(cursor) else {
                if !progressed {
                    break;
                }
                progressed = false;
                cursor = None;
                continue;
            };
            cursor = Some(exec);
            let Some(e) = self.executors.get(exec) else {
                continue;
            };
            let Some((prio, id)) = self.queue.best_for(&e.tables) else {
                continue;
            };
            if let Some(j) = self.jobs.get(&id) {
                self.queue.remove(&j.table, prio, id);
            }
            if let Some(job) = self.materialise(id, exec) {
                self.actions.push(Action::Dispatch { to: exec, job });
                progressed = true;
            }
        }
    }

    /// Builds the wire job for the next attempt of `id` on `exec`, and leases it.
    fn materialise(&mut self, id: JobId, exec: ExecutorId) -> Option<Job> {
        let now = self.now;
        let j = self.jobs.get(&id)?;
        let req = self.requests.get(&j.req)?;
        let settings = &req.settings;
        let item = |seq: u64| {
            req.lines.get(seq).map(|p| BatchItem {
                line: p.line,
                position: p.position,
            })
        };
        let work = match &j.kind {
            Kind::Batch { seqs } => Work::Batch {
                settings: settings.clone(),
                items: seqs.iter().filter_map(|&seq| item(seq)).collect(),
            },
            Kind::Shallow { seq } => {
                let p = req.lines.get(*seq)?;
                let searched = deepen::resumed_settings(settings, p.proved_empty);
                Work::Batch {
                    settings: deepen::shallow_settings(&searched, self.cfg.split_depth),
                    items: item(*seq).into_iter().collect(),
                }
            }
            Kind::Subtrees {
                seq,
                depth,
                prefixes,
            } => {
                let p = req.lines.get(*seq)?;
                let deep = &p.split.as_ref()?.deep;
                let time_limit_ms = settings.time_limit_ms.map(|l| {
                    let spent = now.saturating_sub(p.started.unwrap_or(now)) / 1000;
                    l.saturating_sub(spent).max(1)
                });
                Work::Subtrees(SubtreeWork {
                    position: p.position,
                    depth: *depth,
                    prefixes: prefixes
                        .iter()
                        .filter_map(|&i| self.prefixes.get(i as usize).cloned())
                        .collect(),
                    max_solutions: deep.remaining(settings, *depth).map(|n| n as u32),
                    time_limit_ms,
                })
            }
        };
        let attempt = j.attempt.saturating_add(1);
        let job = Job {
            id,
            attempt,
            table: j.table.clone(),
            work,
        };
        // Leased from here on.
        let j = self.jobs.get_mut(&id)?;
        j.attempt = attempt;
        j.lease = Some(exec);
        if let Some(r) = self.requests.get_mut(&j.req) {
            for &seq in j.kind.seqs() {
                if let Some(p) = r.lines.get_mut(seq) {
                    p.started.get_or_insert(now);
                }
            }
        }
        self.executors.update(exec, |e| {
            if e.running.is_empty() {
                e.lease_renewed = now;
            }
            e.running.insert(id);
        });
        self.counters.dispatched += 1;
        Some(job)
    }

    /// Routes an accepted result to its positions.
    fn apply(&mut self, req: RequestId, kind: Kind, result: JobResult) {
        let out = match result.output {
            Ok(out) => out,
            Err(e) => {
                for &seq in kind.seqs() {
                    self.finish(PosKey { req, seq }, Err(RecordError::Job(e.clone())));
                }
                return;
            }
        };
        match (kind, out) {
            (Kind::Batch { seqs }, JobOutput::Batch(results)) => {
                for (seq, r) in seqs.into_iter().zip(results) {
                    let key = PosKey { req, seq };
                    match r {
                        Ok(r) => {
                            self.counters.nodes += r.nodes;
                            self.finish(key, Ok(deepen::solved(r)));
                        }
                        // This position failed (a panic, a table): its line only.
                        Err(e) => self.finish(key, Err(RecordError::Job(e.error))),
                    }
                }
            }
            (Kind::Shallow { seq }, JobOutput::Batch(mut results)) => {
                let key = PosKey { req, seq };
                match results.pop() {
                    Some(Ok(r)) => {
                        self.counters.nodes += r.nodes;
                        self.after_shallow(key, r);
                    }
                    Some(Err(e)) => self.finish(key, Err(RecordError::Job(e.error))),
                    None => {}
                }
            }
            (
                Kind::Subtrees {
                    seq,
                    depth,
                    prefixes,
                },
                JobOutput::Subtrees(results),
            ) => {
                let nodes: u64 = results.iter().map(|r| r.nodes).sum();
                self.counters.nodes += nodes;
                let key = PosKey { req, seq };
                let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_mut()) else {
                    return;
                };
                split.deep.absorb(result.id, depth, &prefixes, results);
                self.advance(key);
            }
            // A result of another shape than its job: `complete` refused it already.
            _ => {}
        }
    }

    fn after_shallow(&mut self, key: PosKey, r: PositionResult) {
        let split_depth = self.cfg.split_depth;
        let Some(req) = self.requests.get_mut(&key.req) else {
            return;
        };
        let Some(p) = req.lines.get_mut(key.seq) else {
            return;
        };
        match deepen::after_shallow(&req.settings, split_depth, r, p.proved_empty) {
            AfterShallow::Done(solved) => self.finish(key, Ok(solved)),
            AfterShallow::Deepen(deep) => {
                let deadline = req.settings.time_limit_ms.and_then(|l| {
                    let start = p.started?;
                    Some(start.saturating_add(l.saturating_mul(1000)))
                });
                p.split = Some(Box::new(Split { deep, deadline }));
                req.split.insert(key.seq);
                if let Some(d) = deadline {
                    self.deadlines.insert((d, key));
                }
                self.advance(key);
            }
        }
    }

    /// Moves a split position on: new depths' jobs, or its record.
    fn advance(&mut self, key: PosKey) {
        loop {
            let Some(req) = self.requests.get_mut(&key.req) else {
                return;
            };
            let Some(split) = req.lines.get_mut(key.seq).and_then(|p| p.split.as_mut()) else {
                return;
            };
            match split.deep.step(&req.settings) {
                Step::Wait => return,
                Step::Finished(stop) => {
                    self.finish_split(key, stop);
                    return;
                }
                Step::NeedJobs(depth) => {
                    self.make_depth_jobs(key, depth);
                }
            }
        }
    }

    /// Makes the subtree jobs of `depth` for a split position.
    fn make_depth_jobs(&mut self, key: PosKey, depth: u8) {
        let slots = self.executors.capacity().max(1);
        let groups = {
            let prefixes = Arc::clone(&self.prefixes);
            let cfg = self.cfg.clone();
            let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_mut()) else {
                return;
            };
            split.deep.open_depth(depth);
            split.deep.groups(&prefixes, slots, &cfg)
        };
        for (g, prefixes) in groups.into_iter().enumerate() {
            let kind = Kind::Subtrees {
                seq: key.seq,
                depth,
                prefixes,
            };
            let Some(id) = self.new_job(key.req, kind, (key.req, key.seq, depth, g as u32)) else {
                return;
            };
            if let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_mut()) {
                split.deep.add_job(depth, id);
            }
        }
    }

    /// Starts the next depth of split positions whose current depth is fully
    /// dispatched, oldest first, while capacity would idle.
    fn start_early(&mut self) {
        let mut keys = Vec::new();
        for (&req, r) in &self.requests {
            for &seq in &r.split {
                let Some(split) = r.lines.get(seq).and_then(|p| p.split.as_ref()) else {
                    continue;
                };
                if self.queue.holds_position(&r.table, req, seq) {
                    continue;
                }
                if let Some(d) = split.deep.early_candidate(&r.settings) {
                    keys.push((PosKey { req, seq }, d));
                }
            }
        }
        for (key, depth) in keys {
            if self.queue.len() >= self.executors.free_slots() {
                break;
            }
            self.make_depth_jobs(key, depth);
        }
    }

    /// Finishes a split position (solutions found, space exhausted, or out of time).
    fn finish_split(&mut self, key: PosKey, stop: Stop) {
        let now = self.now;
        let Some(req) = self.requests.get(&key.req) else {
            return;
        };
        let Some(p) = req.lines.get(key.seq) else {
            return;
        };
        let Some(split) = &p.split else { return };
        let micros = now.saturating_sub(p.started.unwrap_or(now));
        let solved = split.deep.record(&req.settings, stop, micros);
        self.finish(key, Ok(solved));
    }

    /// Cancels every open job of a position.
    fn drop_jobs_of(&mut self, key: PosKey) {
        let ids = match self.pos_mut(key) {
            Some(p) => p.jobs.take(),
            None => return,
        };
        for id in ids {
            let Some(j) = self.remove_job(id) else {
                continue;
            };
            if let Some(exec) = j.lease {
                self.free_slot(exec, id);
                self.actions.push(Action::Cancel { on: exec, job: id });
            }
        }
    }

    /// A position's record is known: cancel what of it still runs, queue the record.
    fn finish(&mut self, key: PosKey, outcome: Result<Solved, RecordError>) {
        self.drop_jobs_of(key);
        let Some(r) = self.requests.get_mut(&key.req) else {
            return;
        };
        let closed = r.lines.close(key.seq, |p| Record {
            line: p.line,
            input: std::mem::take(&mut p.input),
            outcome,
        });
        if let Some(split) = closed.and_then(|p| p.split) {
            r.split.remove(&key.seq);
            if let Some(d) = split.deadline {
                self.deadlines.remove(&(d, key));
            }
        }
    }
}

/// Whether `out` is a complete answer to a job of `kind`: every position or subtree
/// answered (or the job's solution count reached), nothing cut short by a cancellation.
/// Whether a batch position's answer was cut short by a cancellation (an error is not).
fn cancelled(a: &PositionAnswer) -> bool {
    a.as_ref().is_ok_and(|r| r.stop == Stop::Cancelled)
}

fn complete(kind: &Kind, out: &JobOutput, req: Option<&Request>) -> bool {
    match (kind, out) {
        (Kind::Batch { seqs }, JobOutput::Batch(rs)) => {
            let Some(req) = req else { return false };
            rs.len() == seqs.len()
                && rs.iter().zip(seqs).all(|(r, &seq)| {
                    !cancelled(r) && req.lines.get(seq).is_some_and(|p| p.line == answer_line(r))
                })
        }
        (Kind::Shallow { .. }, JobOutput::Batch(rs)) => rs.len() == 1 && !cancelled(&rs[0]),
        (Kind::Subtrees { prefixes, .. }, JobOutput::Subtrees(rs)) => {
            if rs.iter().any(|r| r.stop == Stop::Cancelled) {
                return false;
            }
            if rs.iter().any(|r| r.prefix as usize >= prefixes.len()) {
                return false;
            }
            let found = rs.iter().any(|r| !r.solutions.is_empty());
            let timed = rs.iter().any(|r| r.stop == Stop::TimeLimit);
            rs.len() == prefixes.len() || found || timed
        }
        _ => false,
    }
}
