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
//! is then forgotten until it joins again), puts the job back in the queue with the next attempt number. Results are keyed by job
//! id: the first complete one wins, whatever its attempt; a late, repeated, partial
//! (cancelled) or superseded one changes nothing.

use crate::deepen::{self, Deep, Step};
use crate::executor::ExecutorId;
use proto::{
    BatchItem, Job, JobError, JobId, JobOutput, JobResult, Method, PositionResult, Record,
    RecordError, Settings, Solved, Stop, SubtreeWork, Work,
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

/// The priority of a queued job: older requests, then earlier lines, then shallower
/// depths, then more promising subtree groups first.
type Priority = (RequestId, u64, u8, u32);

/// Where a position is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct PosKey {
    req: RequestId,
    seq: u64,
}

/// A dispatched job's holder.
#[derive(Clone, Copy, Debug)]
struct Lease {
    exec: ExecutorId,
}

/// What a job does (materialised into a [`Job`] at each dispatch).
#[derive(Clone, Debug)]
enum Kind {
    /// Whole positions with the request's settings (two-phase).
    Batch { positions: Vec<PosKey> },
    /// One optimal position searched whole up to `split_depth - 1`.
    Shallow { position: PosKey },
    /// Subtrees of one optimal position at one depth.
    Subtrees {
        position: PosKey,
        depth: u8,
        prefixes: Vec<u32>,
    },
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
}

#[derive(Debug)]
struct JobState {
    /// The table it needs.
    table: String,
    kind: Kind,
    attempt: u32,
    lease: Option<Lease>,
    prio: Priority,
}

#[derive(Debug)]
struct ExecState {
    capacity: usize,
    tables: BTreeSet<String>,
    running: BTreeSet<JobId>,
    lease_renewed: u64,
}

/// One position in flight.
#[derive(Debug)]
struct Pos {
    line: u64,
    input: String,
    position: Position,
    /// When its first job was dispatched (µs).
    started: Option<u64>,
    /// Its open jobs.
    jobs: BTreeSet<JobId>,
    /// Deepening state, once an optimal position is split.
    deep: Option<Box<Deep>>,
}

/// One request: its settings, its positions in flight, its records waiting for their turn.
#[derive(Debug)]
struct Request {
    settings: Settings,
    table: String,
    /// Positions in flight, by input sequence number.
    positions: BTreeMap<u64, Pos>,
    /// Two-phase positions not yet in a job.
    ungrouped: Vec<u64>,
    /// Finished records not yet released (the reorder buffer).
    ready: BTreeMap<u64, Record>,
    /// Next sequence number to release.
    next_release: u64,
    /// Next sequence number to assign.
    next_seq: u64,
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
    executors: BTreeMap<ExecutorId, ExecState>,
    jobs: HashMap<JobId, JobState>,
    queue: Queue,
    requests: BTreeMap<RequestId, Request>,
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
            executors: BTreeMap::new(),
            jobs: HashMap::new(),
            queue: Queue::default(),
            requests: BTreeMap::new(),
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
            let expired: Vec<ExecutorId> = self
                .executors
                .iter()
                .filter(|(_, e)| !e.running.is_empty() && e.lease_renewed + lease <= now)
                .map(|(&id, _)| id)
                .collect();
            for id in expired {
                // Silent past its lease: presumed gone. Its jobs go back to the queue and
                // it gets no more; if it is alive after all it must join again.
                if let Some(e) = self.executors.remove(&id) {
                    for job in e.running {
                        self.counters.lease_expiries += 1;
                        self.actions.push(Action::Cancel { on: id, job });
                        self.requeue(job);
                    }
                }
            }
        }
        // Time limits of split positions.
        let mut late = Vec::new();
        for (&req, r) in &self.requests {
            let Some(limit) = r.settings.time_limit_ms else {
                continue;
            };
            for (&seq, p) in &r.positions {
                if p.deep.is_some() && p.started.is_some_and(|s| s + limit * 1000 <= now) {
                    late.push(PosKey { req, seq });
                }
            }
        }
        for key in late {
            self.finish_deep(key, Stop::TimeLimit);
        }
    }

    /// When the next tick is due (µs), if anything waits on the clock.
    pub fn next_deadline(&self) -> Option<u64> {
        let leases = self.cfg.lease_us.and_then(|l| {
            self.executors
                .values()
                .filter(|e| !e.running.is_empty())
                .map(|e| e.lease_renewed + l)
                .min()
        });
        let limits = self
            .requests
            .values()
            .filter_map(|r| {
                let limit = r.settings.time_limit_ms? * 1000;
                r.positions
                    .values()
                    .filter(|p| p.deep.is_some())
                    .filter_map(|p| Some(p.started? + limit))
                    .min()
            })
            .min();
        leases.into_iter().chain(limits).min()
    }

    // ----- executors -----

    /// An executor joined (or came back under a new id).
    pub fn add_executor(&mut self, id: ExecutorId, capacity: usize, tables: Vec<String>) {
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

    /// An executor is gone: its jobs go back to the queue.
    pub fn remove_executor(&mut self, id: ExecutorId) {
        if let Some(e) = self.executors.remove(&id) {
            for job in e.running {
                self.requeue(job);
            }
        }
    }

    /// The executor is alive: its leases are renewed.
    pub fn heartbeat(&mut self, id: ExecutorId) {
        if let Some(e) = self.executors.get_mut(&id) {
            e.lease_renewed = self.now;
        }
    }

    /// Executors known.
    pub fn executor_count(&self) -> usize {
        self.executors.len()
    }

    /// Jobs running and queued.
    pub fn job_counts(&self) -> (usize, usize) {
        let running = self.executors.values().map(|e| e.running.len()).sum();
        (running, self.queue.len())
    }

    /// Whether `req` waits on jobs that no executor can run (none holds its table).
    pub fn is_stalled(&self, req: RequestId) -> bool {
        let Some(r) = self.requests.get(&req) else {
            return false;
        };
        !self.queue.is_empty()
            && self.executors.values().all(|e| e.running.is_empty())
            && !self.executors.values().any(|e| e.tables.contains(&r.table))
    }

    /// The table `req` needs.
    pub fn table_of(&self, req: RequestId) -> String {
        self.requests
            .get(&req)
            .map(|r| r.table.clone())
            .unwrap_or_default()
    }

    /// Counters so far.
    pub fn counters(&self) -> Counters {
        self.counters
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
                positions: BTreeMap::new(),
                ungrouped: Vec::new(),
                ready: BTreeMap::new(),
                next_release: 0,
                next_seq: 0,
                input_done: false,
            },
        );
        id
    }

    /// Lines of `req` read but not yet released as records.
    pub fn in_flight(&self, req: RequestId) -> u64 {
        self.requests
            .get(&req)
            .map_or(0, |r| r.next_seq - r.next_release)
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
        let batch_size = self.cfg.batch_size.max(1);
        let Some(r) = self.requests.get_mut(&req) else {
            return;
        };
        let seq = r.next_seq;
        r.next_seq += 1;
        let position = match parsed {
            Ok(p) => p,
            Err(e) => {
                r.ready.insert(
                    seq,
                    Record {
                        line,
                        input,
                        outcome: Err(e),
                    },
                );
                return;
            }
        };
        r.positions.insert(
            seq,
            Pos {
                line,
                input,
                position,
                started: None,
                jobs: BTreeSet::new(),
                deep: None,
            },
        );
        match r.settings.method {
            Method::TwoPhase => {
                r.ungrouped.push(seq);
                if r.ungrouped.len() >= batch_size {
                    self.group(req);
                }
            }
            Method::Optimal => {
                let key = PosKey { req, seq };
                self.new_job(Kind::Shallow { position: key }, (req, seq, 0, 0));
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
        let Some(r) = self.requests.get_mut(&req) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Some(rec) = r.ready.remove(&r.next_release) {
            r.next_release += 1;
            out.push(rec);
        }
        self.counters.records += out.len() as u64;
        out
    }

    /// Whether every line of `req` has been released.
    pub fn is_done(&self, req: RequestId) -> bool {
        self.requests
            .get(&req)
            .is_none_or(|r| r.input_done && r.next_release == r.next_seq)
    }

    /// Forgets `req`, cancelling whatever of it still runs.
    pub fn close_request(&mut self, req: RequestId) {
        let keys: Vec<PosKey> = match self.requests.get(&req) {
            Some(r) => r.positions.keys().map(|&seq| PosKey { req, seq }).collect(),
            None => return,
        };
        for key in keys {
            self.drop_jobs_of(key);
        }
        self.requests.remove(&req);
    }

    /// What the driver must do now: dispatches to free executors, cancellations.
    pub fn take_actions(&mut self) -> Vec<Action> {
        self.dispatch();
        std::mem::take(&mut self.actions)
    }

    // ----- results -----

    /// A result came from executor `from`.
    pub fn on_result(&mut self, from: ExecutorId, result: JobResult) {
        let Some(job) = self.jobs.get(&result.id) else {
            // Finished, superseded or cancelled already: a late or repeated answer.
            self.counters.ignored_results += 1;
            self.free_slot(from, result.id);
            return;
        };
        let current = job
            .lease
            .is_some_and(|l| l.exec == from && result.attempt == job.attempt);
        let whole = match &result.output {
            Ok(out) => complete(&job.kind, out, &self.requests),
            Err(_) => true,
        };
        if current {
            self.free_slot(from, result.id);
            if let Some(e) = self.executors.get_mut(&from) {
                e.lease_renewed = self.now;
            }
        }
        if let Err(JobError::MissingTable { name }) = &result.output {
            // The executor said it had the table and has not: never again.
            if let Some(e) = self.executors.get_mut(&from) {
                e.tables.remove(name);
            }
        }
        let retry = matches!(result.output, Err(JobError::MissingTable { .. })) || !whole;
        if retry {
            if current {
                // Handed back (drain), cut short, or sent where the table is missing.
                self.requeue(result.id);
            } else {
                self.counters.ignored_results += 1;
            }
            return;
        }
        // Accepted: the first complete answer wins.
        let Some(job) = self.jobs.remove(&result.id) else {
            return;
        };
        self.queue.remove(&job.table, job.prio, result.id);
        if let Some(l) = job.lease {
            if l.exec != from || !current {
                // Another attempt still runs somewhere: stop it.
                self.free_slot(l.exec, result.id);
                self.actions.push(Action::Cancel {
                    on: l.exec,
                    job: result.id,
                });
            }
        }
        self.counters.jobs_done += 1;
        self.apply(job.kind, result);
    }

    // ----- internals -----

    fn free_slot(&mut self, exec: ExecutorId, job: JobId) {
        if let Some(e) = self.executors.get_mut(&exec) {
            e.running.remove(&job);
        }
    }

    fn new_job(&mut self, kind: Kind, prio: Priority) -> JobId {
        let id = JobId(self.next_job);
        self.next_job += 1;
        for key in kind_positions(&kind) {
            if let Some(p) = self.pos_mut(key) {
                p.jobs.insert(id);
            }
        }
        let table = self
            .requests
            .get(&kind_request(&kind))
            .map(|r| r.table.clone())
            .unwrap_or_default();
        self.queue.insert(&table, prio, id);
        self.jobs.insert(
            id,
            JobState {
                table,
                kind,
                attempt: 0,
                lease: None,
                prio,
            },
        );
        self.counters.jobs_created += 1;
        id
    }

    /// Puts a job back in the queue for its next attempt.
    fn requeue(&mut self, id: JobId) {
        if let Some(j) = self.jobs.get_mut(&id) {
            if let Some(l) = j.lease.take() {
                if let Some(e) = self.executors.get_mut(&l.exec) {
                    e.running.remove(&id);
                }
            }
            self.queue.insert(&j.table, j.prio, id);
            self.counters.requeued += 1;
        }
    }

    fn pos_mut(&mut self, key: PosKey) -> Option<&mut Pos> {
        self.requests.get_mut(&key.req)?.positions.get_mut(&key.seq)
    }

    /// Cuts the ungrouped two-phase positions of `req` into jobs (a last partial one
    /// too).
    fn group(&mut self, req: RequestId) {
        let batch_size = self.cfg.batch_size.max(1);
        let Some(r) = self.requests.get_mut(&req) else {
            return;
        };
        let seqs = std::mem::take(&mut r.ungrouped);
        for chunk in seqs.chunks(batch_size) {
            let positions: Vec<PosKey> = chunk.iter().map(|&seq| PosKey { req, seq }).collect();
            let prio = (req, chunk[0], 0, 0);
            self.new_job(Kind::Batch { positions }, prio);
        }
    }

    fn free_capacity(&self) -> usize {
        self.executors
            .values()
            .map(|e| e.capacity.saturating_sub(e.running.len()))
            .sum()
    }

    fn dispatch(&mut self) {
        // Idle capacity with nothing queued: flush partial two-phase groups, and start
        // the next depth of split positions early.
        if self.queue.len() < self.free_capacity() {
            let reqs: Vec<RequestId> = self.requests.keys().copied().collect();
            for req in reqs {
                self.group(req);
            }
            if self.cfg.early_start && self.queue.len() < self.free_capacity() {
                self.start_early();
            }
        }
        if self.queue.is_empty() {
            return;
        }
        // Fill executors, the emptiest first, one job at a time.
        loop {
            let mut progressed = false;
            let ids: Vec<ExecutorId> = self.executors.keys().copied().collect();
            for exec in ids {
                let Some(e) = self.executors.get(&exec) else {
                    continue;
                };
                if e.running.len() >= e.capacity {
                    continue;
                }
                let Some((prio, id)) = self.queue.best_for(&e.tables) else {
                    continue;
                };
                let table = self
                    .jobs
                    .get(&id)
                    .map(|j| j.table.clone())
                    .unwrap_or_default();
                self.queue.remove(&table, prio, id);
                if let Some(job) = self.materialise(id, exec) {
                    self.actions.push(Action::Dispatch { to: exec, job });
                    progressed = true;
                }
            }
            if !progressed || self.queue.is_empty() {
                break;
            }
        }
    }

    /// Builds the wire job for the next attempt of `id` on `exec`.
    fn materialise(&mut self, id: JobId, exec: ExecutorId) -> Option<Job> {
        let now = self.now;
        let (kind, attempt) = {
            let j = self.jobs.get_mut(&id)?;
            j.attempt += 1;
            j.lease = Some(Lease { exec });
            (j.kind.clone(), j.attempt)
        };
        if let Some(e) = self.executors.get_mut(&exec) {
            if e.running.is_empty() {
                e.lease_renewed = now;
            }
            e.running.insert(id);
        }
        for key in kind_positions(&kind) {
            if let Some(p) = self.pos_mut(key) {
                p.started.get_or_insert(now);
            }
        }
        let req = self.requests.get(&kind_request(&kind))?;
        let settings = &req.settings;
        let item = |key: &PosKey| {
            req.positions.get(&key.seq).map(|p| BatchItem {
                line: p.line,
                position: p.position,
            })
        };
        let work = match &kind {
            Kind::Batch { positions } => Work::Batch {
                settings: settings.clone(),
                items: positions.iter().filter_map(item).collect(),
            },
            Kind::Shallow { position } => Work::Batch {
                settings: deepen::shallow_settings(settings, self.cfg.split_depth),
                items: item(position).into_iter().collect(),
            },
            Kind::Subtrees {
                position,
                depth,
                prefixes,
            } => {
                let p = req.positions.get(&position.seq)?;
                let deep = p.deep.as_ref()?;
                let time_limit_ms = settings.time_limit_ms.map(|l| {
                    let spent = (now - p.started.unwrap_or(now)) / 1000;
                    l.saturating_sub(spent).max(1)
                });
                Work::Subtrees(SubtreeWork {
                    position: p.position,
                    depth: *depth,
                    prefixes: prefixes
                        .iter()
                        .map(|&i| self.prefixes[i as usize].clone())
                        .collect(),
                    max_solutions: deep.remaining(settings, *depth).map(|n| n as u32),
                    time_limit_ms,
                })
            }
        };
        self.counters.dispatched += 1;
        Some(Job {
            id,
            attempt,
            table: req.table.clone(),
            work,
        })
    }

    /// Routes an accepted result to its positions.
    fn apply(&mut self, kind: Kind, result: JobResult) {
        let out = match result.output {
            Ok(out) => out,
            Err(e) => {
                for key in kind_positions(&kind) {
                    self.finish(key, Err(RecordError::Job(e.clone())));
                }
                return;
            }
        };
        match (kind, out) {
            (Kind::Batch { positions }, JobOutput::Batch(results)) => {
                for (key, r) in positions.into_iter().zip(results) {
                    self.counters.nodes += r.nodes;
                    self.finish(key, Ok(solved_from(&r)));
                }
            }
            (Kind::Shallow { position }, JobOutput::Batch(mut results)) => {
                let Some(r) = results.pop() else { return };
                self.counters.nodes += r.nodes;
                self.after_shallow(position, r);
            }
            (
                Kind::Subtrees {
                    position,
                    depth,
                    prefixes,
                },
                JobOutput::Subtrees(results),
            ) => {
                let id = result.id;
                let nodes: u64 = results.iter().map(|r| r.nodes).sum();
                self.counters.nodes += nodes;
                let Some(p) = self.pos_mut(position) else {
                    return;
                };
                p.jobs.remove(&id);
                let Some(deep) = p.deep.as_mut() else { return };
                deep.absorb(id, depth, &prefixes, results);
                self.advance(position);
            }
            // A result of another shape than its job: `complete` refused it already.
            _ => {}
        }
    }

    fn after_shallow(&mut self, key: PosKey, r: PositionResult) {
        let Some(req) = self.requests.get(&key.req) else {
            return;
        };
        let settings = req.settings.clone();
        match Deep::after_shallow(&settings, self.cfg.split_depth, &r) {
            None => self.finish(key, Ok(solved_from(&r))),
            Some(deep) => {
                if let Some(p) = self.pos_mut(key) {
                    p.jobs.clear();
                    p.deep = Some(Box::new(deep));
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
            let settings = req.settings.clone();
            let Some(p) = req.positions.get_mut(&key.seq) else {
                return;
            };
            let Some(deep) = p.deep.as_mut() else { return };
            match deep.step(&settings) {
                Step::Wait => return,
                Step::Finished(stop) => {
                    self.finish_deep(key, stop);
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
        let slots: usize = self
            .executors
            .values()
            .map(|e| e.capacity)
            .sum::<usize>()
            .max(1);
        let groups = {
            let prefixes = Arc::clone(&self.prefixes);
            let cfg = self.cfg.clone();
            let Some(p) = self.pos_mut(key) else { return };
            let Some(deep) = p.deep.as_mut() else { return };
            deep.open_depth(depth);
            deep.groups(&prefixes, slots, &cfg)
        };
        for (g, prefixes) in groups.into_iter().enumerate() {
            let id = self.new_job(
                Kind::Subtrees {
                    position: key,
                    depth,
                    prefixes,
                },
                (key.req, key.seq, depth, g as u32),
            );
            if let Some(deep) = self.pos_mut(key).and_then(|p| p.deep.as_mut()) {
                deep.add_job(depth, id);
            }
        }
    }

    /// Starts the next depth of split positions whose current depth is fully
    /// dispatched, oldest first, while capacity would idle.
    fn start_early(&mut self) {
        let mut keys = Vec::new();
        for (&req, r) in &self.requests {
            for (&seq, p) in &r.positions {
                let Some(deep) = &p.deep else { continue };
                let queued = p
                    .jobs
                    .iter()
                    .any(|id| self.jobs.get(id).is_some_and(|j| j.lease.is_none()));
                if !queued {
                    if let Some(d) = deep.early_candidate(&r.settings) {
                        keys.push((PosKey { req, seq }, d));
                    }
                }
            }
        }
        for (key, depth) in keys {
            if self.queue.len() >= self.free_capacity() {
                break;
            }
            self.make_depth_jobs(key, depth);
        }
    }

    /// Finishes a split position (solutions found, space exhausted, or out of time).
    fn finish_deep(&mut self, key: PosKey, stop: Stop) {
        let now = self.now;
        let Some(req) = self.requests.get(&key.req) else {
            return;
        };
        let settings = req.settings.clone();
        let Some(p) = req.positions.get(&key.seq) else {
            return;
        };
        let Some(deep) = &p.deep else { return };
        let micros = now.saturating_sub(p.started.unwrap_or(now));
        let solved = deep.record(&settings, stop, micros);
        self.finish(key, Ok(solved));
    }

    /// Cancels every open job of a position.
    fn drop_jobs_of(&mut self, key: PosKey) {
        let ids: Vec<JobId> = match self.pos_mut(key) {
            Some(p) => std::mem::take(&mut p.jobs).into_iter().collect(),
            None => return,
        };
        for id in ids {
            // A batch job shared with other positions lives on for them.
            if let Some(j) = self.jobs.get(&id) {
                if kind_positions(&j.kind).len() > 1 {
                    continue;
                }
            }
            if let Some(j) = self.jobs.remove(&id) {
                self.queue.remove(&j.table, j.prio, id);
                if let Some(l) = j.lease {
                    self.free_slot(l.exec, id);
                    self.actions.push(Action::Cancel {
                        on: l.exec,
                        job: id,
                    });
                }
            }
        }
    }

    /// A position's record is known: cancel what of it still runs, queue the record.
    fn finish(&mut self, key: PosKey, outcome: Result<Solved, RecordError>) {
        self.drop_jobs_of(key);
        let Some(r) = self.requests.get_mut(&key.req) else {
            return;
        };
        let Some(p) = r.positions.remove(&key.seq) else {
            return;
        };
        r.ready.insert(
            key.seq,
            Record {
                line: p.line,
                input: p.input,
                outcome,
            },
        );
    }
}

fn kind_request(kind: &Kind) -> RequestId {
    match kind {
        Kind::Batch { positions } => positions.first().map_or(RequestId(0), |k| k.req),
        Kind::Shallow { position } | Kind::Subtrees { position, .. } => position.req,
    }
}

fn kind_positions(kind: &Kind) -> Vec<PosKey> {
    match kind {
        Kind::Batch { positions } => positions.clone(),
        Kind::Shallow { position } | Kind::Subtrees { position, .. } => vec![*position],
    }
}

/// Whether `out` is a complete answer to a job of `kind`: every position or subtree
/// answered (or the job's solution count reached), nothing cut short by a cancellation.
fn complete(kind: &Kind, out: &JobOutput, requests: &BTreeMap<RequestId, Request>) -> bool {
    match (kind, out) {
        (Kind::Batch { positions }, JobOutput::Batch(rs)) => {
            let lines: Option<Vec<u64>> = positions
                .iter()
                .map(|k| {
                    requests
                        .get(&k.req)
                        .and_then(|r| r.positions.get(&k.seq))
                        .map(|p| p.line)
                })
                .collect();
            let Some(lines) = lines else { return false };
            rs.len() == lines.len()
                && rs.iter().zip(&lines).all(|(r, &l)| r.line == l)
                && rs.iter().all(|r| r.stop != Stop::Cancelled)
        }
        (Kind::Shallow { .. }, JobOutput::Batch(rs)) => {
            rs.len() == 1 && rs[0].stop != Stop::Cancelled
        }
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

fn solved_from(r: &PositionResult) -> Solved {
    Solved {
        solutions: r.solutions.clone(),
        optimal: r.optimal,
        depth_exhausted: r.depth_exhausted,
        nodes: r.nodes,
        lookups: r.lookups,
        micros: r.micros,
        stop: r.stop,
    }
}
