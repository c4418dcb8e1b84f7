//! One recorded optimal search ([`Trace`]) replayed through the real [`Driver`] and
//! [`Scheduler`](crate::Scheduler) in simulated time: `cubeswarm bench split`.
//!
//! `workers` simulated executors of `threads` slots each join a driver, which runs one
//! request holding the trace's position, as a coordinator would; the replay is the
//! driver's neighbours and clock. Each dispatched subtree job runs on one slot for its
//! prefixes' recorded node counts divided by a per-thread node rate, stopping at a prefix
//! that holds a solution once the job has as many as it asks for; every message
//! (dispatch, result, cancellation, heartbeat) takes `latency`. A cancelled job stops
//! when the cancellation reaches it. The driver steps after every event, and at the time
//! it asks to be woken; an answer or a heartbeat is taken at its own time (the driver
//! steps to it first, so that the scheduler's clock reads it). Executors heartbeat until
//! the request ends (with the position's record); the replay ends when nothing is left
//! on the wire or on a slot after that, and what the record's release cancelled is
//! counted up to its cancellation, as wasted. What a job costs and finds is
//! `recorded`'s.
//!
//! # Layout
//! - this file: the options, the replay loop, the idle time by cause;
//! - `recorded`: the trace as job costs and outputs;
//! - `executors`: the driver's handles on the simulated executors, and their slots;
//! - `events`: the messages and job ends to come, in virtual time;
//! - `report`: the jobs run and the figures made of them.

mod events;
mod executors;
pub(crate) mod recorded;
mod report;

pub use report::{Idle, SimJob, SplitReport};

use crate::trace::{Header, Trace, TraceError};
use coordinator::driver::{
    ClientKey, Driver, DriverConfig, Event, Line, Open, RequestError, RequestSink,
};
use coordinator::executor::ExecutorEvent;
use coordinator::input::InputLine;
use coordinator::scheduler::Config;
use events::{Ev, Events};
use executors::{Handle, Order, Outbox, Slots, TABLE};
use proto::{Method, Record, Settings};
use recorded::Recorded;
use report::Log;
use std::cell::RefCell;
use tables::Position;

/// What to replay.
#[derive(Clone, Debug)]
pub struct SplitOptions {
    /// Simulated executors.
    pub workers: usize,
    /// Threads of each.
    pub threads: usize,
    /// Jobs each executor holds beyond its threads, queued to start at once when a
    /// thread frees (its capacity to the scheduler is `threads + queue_ahead`).
    pub queue_ahead: usize,
    /// One-way message latency, µs.
    pub latency_us: u64,
    /// Heartbeat period, µs (`None`: no heartbeats and no leases, as in one process).
    /// Leases last three periods: a job on the wire for longer than that is lost to the
    /// scheduler, as on a real cluster.
    pub heartbeat_us: Option<u64>,
    /// Nodes per second of one thread (`None`: the trace's).
    pub node_rate: Option<f64>,
    /// Solutions asked for (`None`: all optimal ones).
    pub max_solutions: Option<u32>,
    /// Whether an executor's free thread joins its running jobs when none waits (as a
    /// worker's do, `RunnerOptions::share_jobs`), or sits idle (as before they did).
    pub share: bool,
    /// The scheduler's configuration (its `split_depth` is the trace's).
    pub config: Config,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            workers: 1,
            threads: 1,
            queue_ahead: 0,
            latency_us: 1000,
            heartbeat_us: None,
            node_rate: None,
            max_solutions: Some(1),
            share: true,
            config: Config::default(),
        }
    }
}

/// Why a replay cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// The trace does not fit the replay.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The position cannot be parsed.
    #[error("the trace's position {0:?} is not a position")]
    Position(String),
    /// The scheduler released no record (a bug, or a trace without a solution).
    #[error("the replay ended without the position's record")]
    NoRecord,
    /// The request ended without its record (its executors were lost, say).
    #[error("the replay's request ended without its record: {0}")]
    Ended(String),
    /// The record is an error.
    #[error("the replay's record is an error: {0}")]
    Record(String),
}

/// The one request of a replay.
const KEY: ClientKey = ClientKey(1);

/// What the request's client saw.
#[derive(Default)]
struct Seen {
    /// The position's record.
    record: Option<Record>,
    /// The request's end: `Ok`, or why it ended without its record.
    end: Option<Result<(), String>>,
}

/// The request's client.
struct Client<'a>(&'a RefCell<Seen>);

impl RequestSink for Client<'_> {
    fn record(&mut self, record: Record) -> std::io::Result<()> {
        self.0.borrow_mut().record.get_or_insert(record);
        Ok(())
    }
    fn end(&mut self, how: Result<(), RequestError>) {
        self.0.borrow_mut().end = Some(how.map_err(|e| e.to_string()));
    }
}

/// Replays `trace` as `opts` say, and the one-thread run it is compared with.
pub fn replay(trace: &Trace, opts: &SplitOptions) -> Result<SplitReport, SplitError> {
    let one = SplitOptions {
        workers: 1,
        threads: 1,
        queue_ahead: 0,
        latency_us: 0,
        heartbeat_us: None,
        config: Config::default(),
        ..opts.clone()
    };
    let base = simulate(trace, &one)?;
    let mut r = simulate(trace, opts)?;
    r.one_thread_us = base.wall_us;
    r.one_thread_nodes = base.nodes;
    Ok(r)
}

/// Replays `trace` as `opts` say (the one-thread fields are this run's own).
pub fn simulate(trace: &Trace, opts: &SplitOptions) -> Result<SplitReport, SplitError> {
    let h = &trace.header;
    let position =
        Position::parse(&h.position).map_err(|_| SplitError::Position(h.position.clone()))?;
    let rate = opts.node_rate.unwrap_or(h.node_rate).max(1.0);
    let (workers, threads) = (opts.workers.max(1), opts.threads.max(1));
    let outbox = Outbox::default();
    let seen = RefCell::new(Seen::default());
    let slots = Slots::new(workers, threads, rate, opts.share);
    let driver = opened(h, opts, position, &slots, &outbox, &seen);
    // The replay (its driver holds the request's client) ends before `seen` is read.
    let (log, wall, optimal) = {
        let mut replay = Replay {
            driver,
            outbox: &outbox,
            seen: &seen,
            slots,
            recorded: Recorded::new(trace),
            events: Events::default(),
            log: Log::default(),
            wall: None,
            now: 0,
            latency: opts.latency_us,
            heartbeat: opts.heartbeat_us,
        };
        replay.run()?;
        let c = replay.driver.scheduler().counters();
        (replay.log.created, replay.log.dispatched) = (c.jobs_created, c.dispatched);
        replay.log.splits_asked = c.splits_asked;
        let wall = replay.wall.unwrap_or(replay.now);
        (replay.log, wall, replay.recorded.optimal())
    };
    let seen = seen.into_inner();
    let record = match (seen.record, seen.end) {
        (Some(record), _) => record,
        (None, Some(Err(why))) => return Err(SplitError::Ended(why)),
        (None, _) => return Err(SplitError::NoRecord),
    };
    let solved = record
        .outcome
        .map_err(|e| SplitError::Record(e.to_string()))?;
    Ok(SplitReport::new(
        workers * threads,
        wall,
        solved.solutions,
        log,
        optimal,
    ))
}

/// The scheduler's configuration for a replay of the trace of header `h`: `opts`'s, with
/// the trace's split depth, every depth from it on split, and leases of three heartbeats.
fn scheduler_config(h: &Header, opts: &SplitOptions) -> Config {
    let mut cfg = opts.config.clone();
    cfg.split_depth = h.split_depth;
    // The trace holds every depth from its split depth on split, as it was recorded.
    cfg.whole_nodes = 0;
    if let Some(hb) = opts.heartbeat_us {
        cfg.lease_us.get_or_insert(hb.saturating_mul(3));
    }
    cfg
}

/// A driver with the simulated executors of `slots` joined (their orders go to
/// `outbox`) and the one request open (its client is `seen`), its one line, `position`,
/// sent and its end too.
fn opened<'a>(
    h: &Header,
    opts: &SplitOptions,
    position: Position,
    slots: &Slots,
    outbox: &'a Outbox,
    seen: &'a RefCell<Seen>,
) -> Driver<'a> {
    let mut driver = Driver::new(DriverConfig {
        scheduler: scheduler_config(h, opts),
        ..DriverConfig::default()
    });
    for id in slots.ids() {
        let handle = Handle {
            id,
            threads: opts.threads.max(1),
            queue_ahead: opts.queue_ahead,
            share: opts.share,
            outbox,
        };
        driver.join(id, Box::new(handle));
    }
    let settings = Settings {
        method: Method::Optimal,
        max_solutions: opts.max_solutions,
        ..Settings::default()
    };
    driver.open(
        KEY,
        Open {
            settings,
            table: TABLE.to_string(),
            sink: Box::new(Client(seen)),
            wait_for_executors_us: None,
        },
    );
    let line = InputLine {
        line: 1,
        input: h.position.clone(),
        parsed: Ok(position),
    };
    driver.handle(Event::Lines(KEY, vec![Line::from(line)]), 0);
    driver.handle(Event::End(KEY), 0);
    driver
}

/// A replay under way: the driver, its simulated executors, and what is on the wire.
struct Replay<'a> {
    /// The driver, with its one request.
    driver: Driver<'a>,
    /// The orders the driver gave the executors since it last stepped.
    outbox: &'a Outbox,
    /// What the request's client saw.
    seen: &'a RefCell<Seen>,
    /// The simulated executors' threads and queues.
    slots: Slots,
    /// What each job costs and finds.
    recorded: Recorded<'a>,
    /// The messages and job ends to come.
    events: Events,
    /// The jobs run, and the idle time until the record.
    log: Log,
    /// When the record came.
    wall: Option<u64>,
    /// The virtual time, µs.
    now: u64,
    /// One-way message latency, µs.
    latency: u64,
    /// Heartbeat period, µs.
    heartbeat: Option<u64>,
}

impl Replay<'_> {
    /// Runs events in time order, the driver stepped after each and woken when it asks,
    /// until nothing is left on the wire or on a slot after the request's end.
    fn run(&mut self) -> Result<(), SplitError> {
        if let Some(hb) = self.heartbeat {
            for id in self.slots.ids() {
                self.events.push(hb, Ev::Beat(id));
            }
        }
        loop {
            let open = self.step();
            // While the request is open, the driver is also woken when it asks to be.
            let wake = (self.driver.next_wakeup())
                .filter(|&w| w > self.now && open)
                .into_iter();
            let Some(t) = self.events.next_at().into_iter().chain(wake).min() else {
                break;
            };
            if self.wall.is_none() {
                let optimal = self.recorded.optimal();
                idle(
                    &mut self.log.idle,
                    t - self.now,
                    &self.driver,
                    &self.slots,
                    optimal,
                );
            }
            self.now = t;
            if self.events.next_at() != Some(t) {
                continue;
            }
            let Some((_, ev)) = self.events.pop() else {
                break;
            };
            self.take(ev, open);
            let recorded = &mut self.recorded;
            self.slots.fill(self.now, &mut |j| recorded.run(j))?;
            for (at, ev) in self.slots.take_due() {
                self.events.push(at, ev);
            }
        }
        Ok(())
    }

    /// Steps the driver at `now` and puts the orders it gave on the wire; notes when the
    /// record came. Whether the request is still open.
    fn step(&mut self) -> bool {
        let (now, lat) = (self.now, self.latency);
        self.driver.step(now);
        for (to, order) in self.outbox.borrow_mut().drain(..) {
            match order {
                Order::Submit(job) => self.events.push(now + lat, Ev::Arrive(to, job)),
                Order::Cancel(job) => self.events.push(now + lat, Ev::Cancel(to, job.0)),
                Order::Split(job, attempt) => {
                    self.events.push(now + lat, Ev::Split(to, job.0, attempt))
                }
            }
        }
        if self.wall.is_none() && self.seen.borrow().record.is_some() {
            self.wall = Some(now);
        }
        self.seen.borrow().end.is_none()
    }

    /// Takes event `ev` at `now` (`open`: the request is still open).
    fn take(&mut self, ev: Ev, open: bool) {
        let (now, lat) = (self.now, self.latency);
        match ev {
            Ev::Arrive(e, job) => self.slots.arrive(e, job),
            Ev::Leave(e) => self.slots.leave(e, now),
            Ev::Free(e, id, lane, v) => {
                if let Some((job, result, solves)) = self.slots.free(e, id, lane, v, now) {
                    if solves && self.log.first_solution.is_none() {
                        self.log.first_solution = Some(now);
                    }
                    self.log.jobs.push(job);
                    self.events.push(now + lat, Ev::Result(e, result));
                }
            }
            Ev::Result(e, r) => {
                self.driver.step(now);
                self.driver.handle(ExecutorEvent::Result(e, r).into(), now);
            }
            Ev::Cancel(e, id) => self.log.jobs.extend(self.slots.cancel(e, id, now)),
            Ev::Split(e, id, attempt) => {
                let h = self.slots.split(e, id, attempt, now, &mut self.recorded);

                self.log.splits += u64::from(h.kept.is_some());
                self.events.push(now + lat, Ev::Handback(e, h));
            }
            Ev::Handback(e, h) => {
                self.driver.step(now);
                self.driver
                    .handle(ExecutorEvent::Handback(e, h).into(), now);
            }
            Ev::Beat(e) => {
                if let (true, Some(hb)) = (open, self.heartbeat) {
                    let live = self.slots.live(e, now);
                    self.events.push(now + lat, Ev::Heard(e, live));
                    self.events.push(now + hb, Ev::Beat(e));
                }
            }
            Ev::Heard(e, live) => {
                self.driver.step(now);
                self.driver
                    .handle(ExecutorEvent::Heartbeat(e, live).into(), now);
            }
        }
    }
}

/// Adds the idle slot time of the next `span` µs, by cause, as the driver and the slots
/// stand.
fn idle(idle: &mut Idle, span: u64, driver: &Driver<'_>, slots: &Slots, optimal: u8) {
    if span == 0 {
        return;
    }
    let span = span as f64;
    let (busy, held) = slots.held();
    let (sched_running, _) = driver.scheduler().job_counts();
    let total = slots.threads_in_all() as f64;
    // Held by the scheduler, not (or no longer) by an executor: on the wire.
    let wire = (sched_running.saturating_sub(held) as f64).min(total - busy as f64);
    let free = (total - busy as f64 - wire).max(0.0);
    idle.dispatch += wire * span;
    let deepening = driver.requests().first().and_then(|r| r.deepening);
    match deepening {
        None => idle.start += free * span,
        Some(d) if d.depth >= optimal => idle.tail += free * span,
        Some(_) => idle.depth += free * span,
    }
}
