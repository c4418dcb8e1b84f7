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
//!   executor and tells it ([`Executor::lease_expired`](crate::Executor::lease_expired):
//!   a remote worker's stream ends).
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
//!
//! # Layout
//! - `event`: what the driver consumes, one event type for every adapter.
//! - `executors`: the executors as the driver holds them: joined, heard from, given the
//!   scheduler's actions, forgotten at a lease expiry.
//! - `requests`: the requests as the driver holds them: opened, their records released
//!   to their sinks, their progress sent, ended.
//! - `run_loop`: the loop every adapter runs.
//! - `sink`: where a request's records, progress and end go.
//! - `stats`: what the operator's view needs beyond the scheduler's counters.
//! - `view`: the driver's state as status pages read it.

mod event;
mod executors;
mod requests;
mod run_loop;
mod sink;
pub mod stats;
mod view;

pub use event::{ClientKey, Event, Line, Open, OpenRequest, Query};
pub use run_loop::{run_loop, Disconnected};
pub use sink::{RequestError, RequestProgress, RequestSink};
pub use stats::Stats;
pub use view::{ExecutorView, RequestView};

use self::executors::Exec;
use self::requests::Req;
use crate::executor::ExecutorId;
use crate::scheduler::{Config, Scheduler};
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

    /// Takes one event at time `now` (µs).
    pub fn handle(&mut self, event: Event, now: u64) {
        self.now = self.now.max(now);
        self.sched.advance_clock(self.now);
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
