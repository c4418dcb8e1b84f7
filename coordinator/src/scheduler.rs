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
//! attempt number. A heartbeat lists the jobs its executor holds and renews each; a
//! leased job its heartbeats leave out for a whole lease is lost, which counts as a lease
//! expiry. Results are keyed by job id and taken only from the executor the job is leased
//! to: its first complete one wins, whatever its attempt; a late, repeated, partial
//! (cancelled), superseded or foreign one changes nothing.
//!
//! # Trust
//! Executors are peers, not oracles: every solution in an answer is checked against its
//! position and its job (length, subtree depth and prefix) before it can become a record.
//! An answer that fails is refused, its job goes back to the queue, and its executor gets
//! no more work ([`Scheduler::take_rejections`] tells the driver, which logs it).
//!
//! # Cost
//! Built for a thousand executors and millions of lines: dispatch visits only executors
//! with a free slot, leases and time limits wait in ordered indexes, the lines in flight
//! sit in a window indexed by sequence number, and [`Scheduler::progress`] is a few
//! lookups. Nothing is proportional to the input's size, and little to the number of
//! executors.
//!
//! # Layout
//! - [`deepen`]: one optimal position spread over move-prefix subtree jobs, depth by depth:
//!   - `deepen/prefixes`: the prefixes a depth is cut into (by symmetry class), the probe.
//!   - `deepen/shallow`: the whole jobs before the split, and the deepening's start.
//!   - `deepen/depth`: one depth's jobs open, results absorbed, proved empty; the record.
//!   - `deepen/early`: depths started early on idle threads, up to `EARLY_AHEAD` ahead.
//!   - `deepen/rank`: the counts that rank a depth's units, the nodes a depth will hold.
//!   - `deepen/jobs`: a split position moved on, its depths' jobs made, queued, dropped.
//!   - `deepen/recut`: an early depth's queued jobs cut again once a depth before settles.
//! - [`cut`]: unit ids, and one depth cut into jobs of about equal predicted nodes.
//! - `tail`: the end of a depth: hand-back granularity, whom to ask and when, past deeper.
//! - `handback`: what a hand-back does: a running job's unstarted pieces made new jobs.
//! - `roster`: the executors the scheduler knows, indexed by free slots and lease renewal.
//! - `inflight`: a request's lines in flight, released as records in input order.
//! - `requests`: a request's life: opened, fed lines, ended, closed.
//! - `dispatch`: jobs made, queued, requeued, grouped and sent to executors with room.
//! - `results`: answers taken or ignored, applied to their positions, records finished.
//! - `check`: every solution of an answer checked against its position and its job.
//! - `verify`: claims that a search holds no solution (or exactly these) run again on
//!   another executor, liars caught, records held until their claims are checked.
//! - `pace`: measured round trips and node rate, and the jobs per slot they call for.
//! - `state`: the bookkeeping: the queue, jobs, positions in flight, requests.
//! - `types`: the public vocabulary: [`Config`], [`Action`], [`Counters`], [`Progress`].

use self::deepen::Deep;
use self::inflight::InFlight;
use self::roster::{ExecState, Roster};
use crate::executor::ExecutorId;
use proto::{
    answer_line, BatchItem, Job, JobError, JobId, JobOutput, JobResult, Method, PositionAnswer,
    Record, RecordError, Settings, Solved, Stop, SubtreeWork, Work,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use tables::{Move, Position};

mod check;
pub mod cut;
pub mod deepen;
mod dispatch;
mod handback;
mod inflight;
mod pace;
mod requests;
mod results;
mod roster;
mod state;
mod tail;
mod types;
mod verify;

use self::state::*;
pub use self::types::{
    Action, Config, Counters, Deepening, Progress, RejectReason, Rejection, RequestId,
};
pub use self::verify::{Verify, VerifyMode};

/// How often running jobs are looked at for one held far too long (µs).
const OVERDUE_SCAN_US: u64 = 1_000_000;

/// The least time a job may be held before it is taken back (µs): a minute, or four
/// leases.
const OVERDUE_FLOOR_US: u64 = 60_000_000;

/// How long attempt `attempt` of a job predicted to take `predicted_us` may be held (µs):
/// 20 times its prediction, at least four leases and a minute, doubled at each attempt
/// (an honest job that is only slow ends on a later one).
fn overdue_us(lease: u64, predicted_us: u64, attempt: u32) -> u64 {
    let base = (4 * lease)
        .max(OVERDUE_FLOOR_US)
        .max(predicted_us.saturating_mul(20));
    base.saturating_mul(1 << attempt.saturating_sub(1).min(10))
}

/// The scheduler. See the module documentation.
#[derive(Debug)]
pub struct Scheduler {
    cfg: Config,
    prefixes: Arc<Vec<Vec<Move>>>,
    now: u64,
    next_job: u64,
    next_request: u64,
    executors: Roster,
    jobs: HashMap<JobId, JobState>,
    queue: Queue,
    requests: BTreeMap<RequestId, Request>,
    /// Time limits of split positions: (deadline, position).
    deadlines: BTreeSet<(u64, PosKey)>,
    actions: Vec<Action>,
    counters: Counters,
    /// Measured round trips and node rate.
    pace: pace::Pace,
    /// Answers refused since the driver last took them.
    rejections: Vec<Rejection>,
    /// Running jobs asked to hand back their unstarted pieces, not answered yet.
    asking: BTreeSet<JobId>,
    /// When idle slots last looked for a job to ask to hand back (µs).
    handback_scan: u64,
    /// No running job can be a straggler before this (µs; see `tail`): until then, with
    /// no slot idle and no thread to leave a deeper depth, a hand-back scan finds nothing.
    straggler_floor: u64,
    /// Claims being checked, and each executor's standing.
    verify: verify::Verifier,
    /// When running jobs were last looked at for one held too long (µs).
    overdue_scan: u64,
    /// When the caller last said it had been stalled (µs): jobs are not overdue for
    /// time before it.
    stalled_at: u64,
}

impl Scheduler {
    /// A scheduler with no executors and no requests.
    pub fn new(cfg: Config) -> Scheduler {
        let prefixes = canonical_prefixes(cfg.prefix_len);
        Scheduler {
            cfg,
            prefixes,
            now: 0,
            next_job: 1,
            next_request: 1,
            executors: Roster::default(),
            jobs: HashMap::new(),
            queue: Queue::default(),
            requests: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            actions: Vec::new(),
            counters: Counters::default(),
            pace: pace::Pace::default(),
            rejections: Vec::new(),
            asking: BTreeSet::new(),
            handback_scan: 0,
            straggler_floor: 0,
            verify: verify::Verifier::default(),
            overdue_scan: 0,
            stalled_at: 0,
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
        if let Some(lease) = self.cfg.lease_us {
            if now >= self.overdue_scan.saturating_add(OVERDUE_SCAN_US) {
                self.overdue_scan = now;
                self.take_back_overdue(lease);
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

    /// Takes back every job held far past what it should take (see [`overdue_us`]): a
    /// worker that lists a job in its heartbeats and never answers it (or answers a
    /// request to hand back with "I keep everything" and then nothing) holds it no longer
    /// than that. As for a job its heartbeats leave out, the executor and the scheduler
    /// disagree about its work: it is forgotten until it joins again (its stream is
    /// ended), and every job of its goes back to the queue.
    fn take_back_overdue(&mut self, lease: u64) {
        let now = self.now;
        let overdue: BTreeMap<ExecutorId, u64> = (self.jobs.values())
            .filter_map(|j| {
                let exec = j.lease?;
                // A stall of the coordinator's own (see `renew_all_leases`) is not the
                // job's time.
                let age = now.saturating_sub(j.dispatched.max(self.stalled_at));
                (age > overdue_us(lease, j.predicted_us, j.attempt)).then_some(exec)
            })
            .fold(BTreeMap::new(), |mut m, e| {
                *m.entry(e).or_insert(0) += 1;
                m
            });
        for (exec, n) in overdue {
            self.counters.overdue_jobs += n;
            if let Some(e) = self.executors.remove(exec) {
                for job in e.running {
                    self.actions.push(Action::Cancel { on: exec, job });
                    self.requeue(job);
                }
            }
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
                distrusted: false,
                trusted: false,
                hands_back: false,
                shares: false,
                threads: 0,
            },
        );
    }

    /// An executor is gone (or hands back its jobs as it shuts down): its jobs go back to
    /// the queue. A result it sends later is ignored (its jobs are not leased to it).
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
    /// A distrusted executor's capacity stays 0.
    pub fn set_capacity(&mut self, id: ExecutorId, capacity: usize) -> bool {
        self.executors
            .update(id, |e| {
                if !e.distrusted {
                    e.capacity = capacity;
                }
            })
            .is_some()
    }

    /// Executor `id`'s answers are taken on its word (an executor in this process): its
    /// claims are not checked.
    pub fn set_trusted(&mut self, id: ExecutorId, trusted: bool) {
        self.executors.update(id, |e| e.trusted = trusted);
    }

    /// Executor `id` hands back the unstarted pieces of its jobs when asked (or not).
    pub fn set_splits(&mut self, id: ExecutorId, hands_back: bool) {
        self.executors.update(id, |e| e.hands_back = hands_back);
    }

    /// Executor `id`'s threads share its jobs' pieces (or not): see
    /// [`Executor::shares_jobs`](crate::executor::Executor::shares_jobs).
    pub fn set_shares(&mut self, id: ExecutorId, shares: bool) {
        self.executors.update(id, |e| e.shares = shares);
    }

    /// Executor `id` runs `threads` jobs at once (its capacity less the jobs it queues
    /// ahead): a job sent to it beyond them waits for one. 0: all of its capacity.
    pub fn set_threads(&mut self, id: ExecutorId, threads: usize) {
        self.executors.update(id, |e| e.threads = threads);
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

    /// The executor's heartbeat lists the jobs it holds (`running`, with the attempt each
    /// runs as): its leases are renewed, and so is each listed job's. A job leased to it
    /// that its heartbeats have not listed for a whole lease is lost: the executor and the
    /// scheduler disagree about what it holds, so that counts as a lease expiry (every job
    /// of its goes back to the queue, and it is forgotten until it joins again). A job on
    /// its way to the executor is not listed yet; it has a lease to arrive.
    pub fn heartbeat_with(&mut self, id: ExecutorId, running: &[(JobId, u32)]) {
        let now = self.now;
        if self
            .executors
            .update(id, |e| e.lease_renewed = now)
            .is_none()
        {
            return;
        }
        let Some(e) = self.executors.get(id) else {
            return;
        };
        let lease = self.cfg.lease_us;
        let mut lost = 0u64;
        for job in &e.running {
            let Some(j) = self.jobs.get_mut(job) else {
                continue;
            };
            if running.iter().any(|&(r, a)| r == *job && a == j.attempt) {
                j.listed = now;
            } else if lease.is_some_and(|l| j.listed.saturating_add(l) <= now) {
                lost += 1;
            }
        }
        if lost == 0 {
            return;
        }
        self.counters.lost_jobs += lost;
        if let Some(e) = self.executors.remove(id) {
            for job in e.running {
                self.actions.push(Action::Cancel { on: id, job });
                self.requeue(job);
            }
        }
    }

    /// The caller itself was stalled until `now` (a stopped or starved process): the
    /// silence of every executor over that time was its own, not theirs, so every lease
    /// is renewed before any is judged, and no job is overdue for the time before it.
    pub fn renew_all_leases(&mut self, now: u64) {
        self.now = self.now.max(now);
        let now = self.now;
        self.stalled_at = now;
        let ids: Vec<ExecutorId> = self.executors.ids().collect();
        for id in ids {
            self.executors.update(id, |e| e.lease_renewed = now);
        }
        for j in self.jobs.values_mut().filter(|j| j.lease.is_some()) {
            j.listed = now;
        }
    }

    /// Whether an answer of executor `id` failed its check (it gets no more work).
    pub fn is_distrusted(&self, id: ExecutorId) -> bool {
        self.executors.get(id).is_some_and(|e| e.distrusted)
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

    /// Moves the clock to `now` without acting: an event handled between two ticks (the
    /// run loop takes a batch of them at once) is timed when it comes, not at the last
    /// tick. Timed at the last tick, a result looked as much quicker as it had waited, and
    /// the round trip measured from such results was 0 in a quarter of a hollow run's
    /// scans (20-superflip-all, 64 x 4).
    pub fn advance_clock(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    /// The round trip a job adds to its run as measured (µs; 0 before any result): what
    /// jobs are sized by and hand-backs wait for.
    pub fn round_trip_us(&self) -> u64 {
        self.pace.overhead_us()
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
}

/// The average growth of canonical half-turn-metric move sequences per move: a depth
/// holds about this many times the nodes of the depth before it, a unit about this many
/// times those of each of its children.
pub const BRANCHING: f64 = 13.0;

/// The canonical move sequences of `len` moves (the prefixes a split depth is cut into),
/// made once per process: every scheduler shares them, so that a driver made for one
/// position (a Python call) costs microseconds, not the milliseconds of the sequences.
fn canonical_prefixes(len: usize) -> Arc<Vec<Vec<Move>>> {
    type Made = std::sync::Mutex<std::collections::HashMap<usize, Arc<Vec<Vec<Move>>>>>;
    static MADE: std::sync::OnceLock<Made> = std::sync::OnceLock::new();
    let mut made = MADE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    Arc::clone(
        made.entry(len)
            .or_insert_with(|| Arc::new(tables::canonical::sequences(len))),
    )
}
