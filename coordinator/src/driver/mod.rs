//! The driver: the one loop that runs the coordinator, in one process and on a cluster.
//!
//! A [`Driver`] owns the [`Scheduler`], the executors, the requests with their
//! [`RequestSink`]s, and the clock. It consumes [`Event`]s (an executor joined, reported
//! or left; a client opened a request, sent lines, ended its input or went away; a
//! query; shutdown) and, at each [`Driver::step`], carries out the scheduler's decisions:
//! jobs to executors, cancellations, records to sinks in input order, progress, the end
//! of finished or abandoned requests. The embedded default ([`crate::run()`]) and the
//! gRPC server ([`crate::server`]) are adapters that turn their inputs into events and
//! call [`run_loop`]; the simulation tests call [`Driver::handle`] and
//! [`Driver::step`] themselves with a clock of their own.
//!
//! # Lifetimes of things
//! - **Leases** are enforced here and only here: the scheduler decides that an executor
//!   was silent past its lease (and requeues its jobs); the driver then drops the
//!   executor and tells it ([`Executor::lease_expired`]: a remote worker's stream ends).
//! - **A request lives as long as its client**: when its client is gone
//!   ([`Event::ClientGone`], or its sink refuses records or progress), or at a
//!   [`Event::Shutdown`], its queued jobs are dropped and its running jobs cancelled,
//!   whatever its kind.
//! - **A request no executor can serve** (none connected holds its table, or those that
//!   do are draining) is refused with [`RequestError::NoExecutorForTable`] at once, or
//!   after the wait its client asked for; a coordinator younger than
//!   [`DriverConfig::startup_grace_us`] first gives its workers that long to join again,
//!   and a request that was being served when its last executor left waits at least a
//!   lease for one to come back.

mod event;
mod run_loop;
mod sink;
pub mod stats;
mod view;

pub use event::{ClientKey, Event, Line, Open, OpenRequest, Query};
pub use run_loop::{run_loop, Disconnected};
pub use sink::{RequestError, RequestProgress, RequestSink};
pub use stats::Stats;
pub use view::RequestView;

use crate::executor::{Executor, ExecutorEvent, ExecutorId, LiveJob};
use crate::scheduler::{Action, Config, RequestId, Scheduler};
use std::collections::BTreeMap;

/// How the driver runs (what the scheduler does is in [`Config`]).
#[derive(Clone, Debug)]
pub struct DriverConfig {
    /// The scheduler's settings.
    pub scheduler: Config,
    /// How often (µs) each request's sink gets its progress (`None`: never).
    pub progress_every_us: Option<u64>,
    /// Executor threads assumed at least when a request's window of lines in flight is
    /// sized (a request may open before its executors join).
    pub min_window_slots: usize,
    /// For this long after the driver starts (µs), a request whose table no connected
    /// executor holds waits for one instead of being refused: after a coordinator
    /// restart its workers need a moment to join again.
    pub startup_grace_us: u64,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            scheduler: Config::default(),
            progress_every_us: None,
            min_window_slots: 1,
            startup_grace_us: 0,
        }
    }
}

/// An executor as the driver holds it.
struct Exec<'s> {
    exec: Box<dyn Executor + 's>,
    /// Its threads, for status (it may hold more jobs than that: see
    /// [`Executor::capacity`]).
    threads: u32,
    /// Its running jobs' node counts at its last heartbeat.
    live: Vec<LiveJob>,
}

/// A request as the driver holds it.
struct Req<'s> {
    id: RequestId,
    table: String,
    sink: Box<dyn RequestSink + 's>,
    /// Lines received.
    lines: u64,
    /// Records released.
    records: u64,
    /// How long it may wait for an executor that can run its jobs (µs).
    wait_us: u64,
    /// Since when no connected executor can run its jobs.
    unable_since: Option<u64>,
    /// Whether some executor could run its jobs at some point.
    served: bool,
}

/// What one executor looks like from outside (for status pages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorView {
    /// Its id.
    pub id: ExecutorId,
    /// Its name.
    pub name: String,
    /// Where it runs (see [`Executor::host`]).
    pub host: String,
    /// Its threads.
    pub threads: u32,
    /// Jobs it may hold now (0: draining).
    pub slots: usize,
    /// Jobs it runs.
    pub running: usize,
    /// Its tables.
    pub tables: Vec<String>,
}

/// The driver. See the module documentation.
pub struct Driver<'s> {
    sched: Scheduler,
    cfg: DriverConfig,
    executors: BTreeMap<ExecutorId, Exec<'s>>,
    requests: BTreeMap<ClientKey, Req<'s>>,
    now: u64,
    next_progress: u64,
    shut_down: bool,
    stats: Stats,
}

impl<'s> Driver<'s> {
    /// A driver with no executors and no requests, its clock at 0.
    pub fn new(cfg: DriverConfig) -> Driver<'s> {
        Driver {
            sched: Scheduler::new(cfg.scheduler.clone()),
            next_progress: cfg.progress_every_us.unwrap_or(0),
            cfg,
            executors: BTreeMap::new(),
            requests: BTreeMap::new(),
            now: 0,
            shut_down: false,
            stats: Stats::default(),
        }
    }

    /// The scheduler (read only: for metrics and status).
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// The driver's clock (µs since it started, as last given).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Whether a shutdown was handled.
    pub fn is_shut_down(&self) -> bool {
        self.shut_down
    }

    /// Executors connected.
    pub fn executor_count(&self) -> usize {
        self.executors.len()
    }

    /// Requests open.
    pub fn request_count(&self) -> usize {
        self.requests.len()
    }

    /// Whether the request of `key` is open.
    pub fn has_request(&self, key: ClientKey) -> bool {
        self.requests.contains_key(&key)
    }

    /// The executors, by id.
    pub fn executors(&self) -> Vec<ExecutorView> {
        self.executors
            .iter()
            .map(|(&id, e)| {
                let state = self.sched.executor_state(id);
                ExecutorView {
                    id,
                    name: e.exec.name(),
                    host: e.exec.host(),
                    threads: e.threads,
                    slots: state.map_or(0, |s| s.0),
                    running: state.map_or(0, |s| s.1),
                    tables: e.exec.tables(),
                }
            })
            .collect()
    }

    /// Adds an executor.
    pub fn join(&mut self, id: ExecutorId, exec: Box<dyn Executor + 's>) {
        let threads = exec.threads();
        self.stats.joined(id, &exec.name(), threads, self.now);
        self.sched.add_executor(id, exec.capacity(), exec.tables());
        self.sched.set_splits(id, exec.can_split());
        self.sched.set_shares(id, exec.shares_jobs());
        self.sched.set_threads(id, threads as usize);
        self.executors.insert(
            id,
            Exec {
                exec,
                threads,
                live: Vec::new(),
            },
        );
    }

    /// Sets the threads an executor reports for status (it joined with its capacity).
    pub fn set_threads(&mut self, id: ExecutorId, threads: u32) {
        if let Some(e) = self.executors.get_mut(&id) {
            e.threads = threads;
        }
    }

    /// Opens a request under `key` (a key already open is closed first).
    pub fn open(&mut self, key: ClientKey, open: Open<'s>) {
        self.end_request(key, Err(RequestError::ClientGone));
        // Sized by the jobs the executors may hold (their threads and what they queue).
        let threads: usize = self.executors.values().map(|e| e.exec.capacity()).sum();
        let window = crate::input::window(
            &self.cfg.scheduler,
            &open.settings,
            threads.max(self.cfg.min_window_slots),
        );
        let mut sink = open.sink;
        sink.room(window);
        let id = self.sched.open_request(open.settings, open.table.clone());
        self.stats.opened(key, &open.table, self.now);
        self.requests.insert(
            key,
            Req {
                id,
                table: open.table,
                sink,
                lines: 0,
                records: 0,
                wait_us: open.wait_for_executors_us.unwrap_or(0),
                unable_since: None,
                served: false,
            },
        );
    }

    /// Takes one event at time `now` (µs).
    pub fn handle(&mut self, event: Event, now: u64) {
        self.now = self.now.max(now);
        match event {
            Event::Executor(e) => self.executor_event(e),
            Event::Joined(id, exec) => self.join(id, exec),
            Event::Open(key, open) => self.open(key, (*open).into()),
            Event::Lines(key, lines) => {
                if let Some(r) = self.requests.get_mut(&key) {
                    for l in lines {
                        r.lines += 1;
                        let x = l.line;
                        self.stats.arrived(r.id, x.line, self.now);
                        self.sched.push_line_resumed(
                            r.id,
                            x.line,
                            x.input,
                            x.parsed,
                            l.proved_empty,
                        );
                    }
                }
            }
            Event::End(key) => {
                if let Some(r) = self.requests.get(&key) {
                    self.sched.end_input(r.id);
                }
            }
            Event::InputFailed(key, e) => self.end_request(key, Err(RequestError::Input(e))),
            Event::ClientGone(key) => {
                if self.requests.contains_key(&key) {
                    tracing::info!(client = key.0, "client gone; its jobs are dropped");
                }
                self.end_request(key, Err(RequestError::ClientGone));
            }
            Event::Query(q) => q(self),
            Event::Shutdown => self.shutdown(),
        }
    }

    fn executor_event(&mut self, e: ExecutorEvent) {
        match e {
            ExecutorEvent::Result(id, r) => {
                if self.cfg.scheduler.lease_us.is_some() {
                    // Any word from an executor renews its lease (a late answer too).
                    self.sched.heartbeat(id);
                }
                if let Some(x) = self.executors.get_mut(&id) {
                    if !x.live.is_empty() {
                        x.live.retain(|l| l.job != r.id);
                    }
                }
                self.stats.result(id, &r, self.now);
                self.sched.on_result(id, r);
                self.log_rejections();
            }
            ExecutorEvent::Heartbeat(id, live) => {
                let held: Vec<_> = live.iter().map(|l| (l.job, l.attempt)).collect();
                self.sched.heartbeat_with(id, &held);
                self.stats.heard(id, self.now);
                if let Some(x) = self.executors.get_mut(&id) {
                    x.live = live;
                }
            }
            ExecutorEvent::Capacity { id, threads, slots } => {
                self.sched.heartbeat(id);
                self.stats.heard(id, self.now);
                self.sched.set_capacity(id, slots);
                self.sched.set_threads(id, threads as usize);
                self.set_threads(id, threads);
            }
            ExecutorEvent::Handback(id, h) => {
                if self.cfg.scheduler.lease_us.is_some() {
                    self.sched.heartbeat(id);
                }
                self.sched.on_handback(id, h);
            }
            ExecutorEvent::Gone(id) => {
                if let Some(x) = self.executors.remove(&id) {
                    self.stats.left(id, &x.exec.name(), false, self.now);
                    tracing::info!(
                        executor = id.0,
                        worker = %x.exec.name(),
                        "worker left; its jobs go back to the queue"
                    );
                }
                self.sched.remove_executor(id);
            }
        }
    }

    /// Logs the answers the scheduler refused, naming their executors.
    fn log_rejections(&mut self) {
        for r in self.sched.take_rejections() {
            let name = self.executors.get(&r.from).map(|x| x.exec.name());
            tracing::warn!(
                executor = r.from.0,
                worker = name.as_deref().unwrap_or("?"),
                job = r.job.0,
                line = r.line,
                "answer refused: {}; the worker gets no more work",
                r.reason
            );
            self.stats
                .distrusted(name.as_deref().unwrap_or("?"), &r, self.now);
        }
    }

    /// The process running the driver was stalled for a while (stopped, starved): the
    /// executors' silence over that time was not theirs, so their leases are renewed
    /// before they are judged (their words from that time may still be on the way).
    pub fn forgive_stall(&mut self, now: u64) {
        self.now = self.now.max(now);
        self.sched.renew_all_leases(self.now);
    }

    /// Moves the clock to `now` and acts: leases and time limits, dispatches and
    /// cancellations, records to their sinks, the end of finished, abandoned and
    /// unservable requests, progress when due.
    pub fn step(&mut self, now: u64) {
        self.now = self.now.max(now);
        self.sched.tick(self.now);
        self.sample_stats();
        self.act();
        let mut ended = self.release();
        if self.cfg.progress_every_us.is_some() && self.now >= self.next_progress {
            ended |= self.progress();
            self.next_progress = self.now + self.cfg.progress_every_us.unwrap_or(0);
        }
        if ended {
            // The cancellations of the requests that ended.
            self.act();
        }
    }

    /// When the driver must step next even if no event comes (µs), if anything waits on
    /// the clock.
    pub fn next_wakeup(&self) -> Option<u64> {
        let progress = (self.cfg.progress_every_us.is_some() && !self.requests.is_empty())
            .then_some(self.next_progress);
        let waits = self
            .requests
            .values()
            .filter_map(|r| r.unable_since.map(|s| self.refusal_time(r, s)))
            .min();
        [self.sched.next_deadline(), progress, waits]
            .into_iter()
            .flatten()
            .min()
    }

    /// When a request that no executor can serve since `unable_since` is refused: after
    /// its own wait, not before the coordinator's startup grace ends, and, once it was
    /// served, not before a lease has passed (its workers may be reconnecting).
    fn refusal_time(&self, r: &Req<'_>, unable_since: u64) -> u64 {
        let lease = if r.served {
            self.cfg.scheduler.lease_us.unwrap_or(0)
        } else {
            0
        };
        unable_since
            .saturating_add(r.wait_us.max(lease))
            .max(self.cfg.startup_grace_us)
    }

    /// Carries out the scheduler's actions and drops the executors it forgot.
    fn act(&mut self) {
        let mut actions = self.sched.take_actions();
        while !actions.is_empty() {
            // An executor in this process answers a split at once: its pieces are
            // dispatched in the same step.
            let mut answered = false;
            for a in actions {
                answered |= self.carry_out(a);
            }
            actions = match answered {
                true => self.sched.take_actions(),
                false => Vec::new(),
            };
        }
        self.forget_expired();
    }

    /// Carries out one action of the scheduler; true when it answered at once.
    fn carry_out(&mut self, a: Action) -> bool {
        match a {
            Action::Dispatch { to, job } => {
                if let Some(e) = self.executors.get(&to) {
                    let of = self.sched.job_of(job.id).map(|j| (j.0, j.1));
                    self.stats.dispatched(of, &job, self.now);
                    e.exec.submit(job);
                }
            }
            Action::Cancel { on, job } => {
                if let Some(e) = self.executors.get(&on) {
                    e.exec.cancel(job);
                }
            }
            Action::Split { on, job, attempt } => {
                let answer = self
                    .executors
                    .get(&on)
                    .and_then(|e| e.exec.split(job, attempt));
                if let Some(h) = answer {
                    self.sched.on_handback(on, h);
                    return true;
                }
            }
        }
        false
    }

    /// Drops the executors the scheduler forgot.
    fn forget_expired(&mut self) {
        // Only a lease expiry (or lost jobs, which count as one) makes the scheduler
        // forget an executor the driver holds.
        if self.sched.executor_count() != self.executors.len() {
            let forgotten: Vec<ExecutorId> = self
                .executors
                .keys()
                .filter(|id| !self.sched.has_executor(**id))
                .copied()
                .collect();
            for id in forgotten {
                if let Some(x) = self.executors.remove(&id) {
                    self.stats.left(id, &x.exec.name(), true, self.now);
                    tracing::warn!(
                        executor = id.0,
                        worker = %x.exec.name(),
                        "lease expired (silent, or its heartbeat lost its jobs); the worker's jobs go back to the queue"
                    );
                    x.exec.lease_expired();
                }
            }
        }
    }

    /// Hands released records to their sinks and ends the requests that are over (true if
    /// any ended).
    fn release(&mut self) -> bool {
        let mut over: Vec<(ClientKey, Result<(), RequestError>)> = Vec::new();
        let mut refusals: Vec<(ClientKey, u64)> = Vec::new();
        'requests: for (&key, r) in self.requests.iter_mut() {
            // One at a time, as the scheduler releases them: nothing held twice.
            let mut n = 0;
            while let Some(rec) = self.sched.next_record(r.id) {
                n += 1;
                if let Err(e) = r.sink.record(rec) {
                    over.push((key, Err(RequestError::Output(e))));
                    continue 'requests;
                }
            }
            if n > 0 {
                r.records += n;
                if let Err(e) = r.sink.flush() {
                    over.push((key, Err(RequestError::Output(e))));
                    continue;
                }
                r.sink.room(n);
            }
            if self.sched.is_done(r.id) {
                over.push((key, Ok(())));
                continue;
            }
            if self.sched.can_run(&r.table) {
                r.unable_since = None;
                r.served = true;
            } else {
                refusals.push((key, *r.unable_since.get_or_insert(self.now)));
            }
        }
        for (key, since) in refusals {
            let due = self
                .requests
                .get(&key)
                .is_some_and(|r| self.now >= self.refusal_time(r, since));
            if due {
                let table = self.requests.get(&key).map(|r| r.table.clone());
                over.push((
                    key,
                    Err(RequestError::NoExecutorForTable {
                        table: table.unwrap_or_default(),
                    }),
                ));
            }
        }
        let ended = !over.is_empty();
        for (key, how) in over {
            self.end_request(key, how);
        }
        ended
    }

    /// Ends the request of `key` (if open): its jobs are dropped, its sink told.
    fn end_request(&mut self, key: ClientKey, how: Result<(), RequestError>) {
        let Some(mut r) = self.requests.remove(&key) else {
            return;
        };
        self.sched.close_request(r.id);
        let failure = how.as_ref().err().map(ToString::to_string);
        self.stats.ended(key, r.id, r.records, failure, self.now);
        if let Err(e) = &how {
            tracing::info!(client = key.0, "request ended: {e}");
        }
        r.sink.end(how);
    }

    /// Sends each request its progress (true if a client turned out to be gone).
    fn progress(&mut self) -> bool {
        let mut gone = Vec::new();
        for (&key, r) in self.requests.iter_mut() {
            let p = self.sched.progress(r.id);
            // The deepened position's jobs still running, as their executors last said.
            let live_nodes = p.deepening.map_or(0, |d| {
                self.executors
                    .iter()
                    .flat_map(|(&id, x)| x.live.iter().map(move |l| (id, l)))
                    .filter(|&(id, l)| {
                        self.sched.job_of(l.job) == Some((r.id, d.line, l.attempt, Some(id)))
                    })
                    .map(|(_, l)| l.nodes)
                    .sum()
            });
            let rp = RequestProgress {
                records: r.records,
                lines: r.lines,
                deepening: p.deepening,
                live_nodes,
                busy_executors: p.busy_executors,
                executors: self.executors.len(),
            };
            if let Err(e) = r.sink.progress(&rp) {
                gone.push((key, e));
            }
        }
        let ended = !gone.is_empty();
        for (key, e) in gone {
            self.end_request(key, Err(RequestError::Output(e)));
        }
        ended
    }

    fn shutdown(&mut self) {
        for x in self.executors.values() {
            x.exec.drain();
        }
        let keys: Vec<ClientKey> = self.requests.keys().copied().collect();
        for key in keys {
            self.end_request(key, Err(RequestError::ShuttingDown));
        }
        // The ended requests' running jobs are cancelled before the executors are dropped.
        self.act();
        self.executors.clear();
        self.shut_down = true;
    }
}
