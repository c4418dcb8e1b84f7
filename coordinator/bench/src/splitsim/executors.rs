//! The simulated executors: the driver's handles on them, and their slots in virtual
//! time.
//!
//! The driver submits and cancels through a [`Handle`], which only posts what it was
//! told to the [`Outbox`]; the replay delivers it a latency later to the executor's
//! [`Slots`], which run each job for its recorded nodes at the replay's node rate.

use super::recorded::{JobRun, Recorded};
use super::report::SimJob;
use crate::trace::TraceError;
use coordinator::executor::{Executor, ExecutorId, LiveJob};
use proto::{Job, JobId, JobResult};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The one table the simulated executors hold.
pub(super) const TABLE: &str = "trace";

/// What the driver told the executors, in order, not yet on the wire.
pub(super) type Outbox = RefCell<Vec<(ExecutorId, Order)>>;

/// One thing the driver told an executor.
pub(super) enum Order {
    /// Run this job.
    Submit(Job),
    /// Stop this job.
    Cancel(JobId),
    /// Hand back what this attempt of this job has not started.
    Split(JobId, u32),
}

/// Pieces a worker has started beyond the one this model's sequential run is in when it
/// is asked to split: its other lanes' (`runner::LANES`, 3, interleaved on the thread;
/// the tasks it took ahead of their start are handed back too).
const TAKEN_AHEAD: usize = 2;

/// The driver's handle on a simulated executor.
pub(super) struct Handle<'a> {
    /// Its id.
    pub id: ExecutorId,
    /// Its threads.
    pub threads: usize,
    /// Jobs it holds beyond its threads.
    pub queue_ahead: usize,
    /// Where what it is told goes.
    pub outbox: &'a Outbox,
}

impl Executor for Handle<'_> {
    fn capacity(&self) -> usize {
        self.threads + self.queue_ahead
    }
    fn threads(&self) -> u32 {
        u32::try_from(self.threads).unwrap_or(u32::MAX)
    }
    fn tables(&self) -> Vec<String> {
        vec![TABLE.to_string()]
    }
    fn submit(&self, job: Job) {
        self.outbox.borrow_mut().push((self.id, Order::Submit(job)));
    }
    fn cancel(&self, job: JobId) {
        self.outbox.borrow_mut().push((self.id, Order::Cancel(job)));
    }
    fn can_split(&self) -> bool {
        true
    }
    fn split(&self, job: JobId, attempt: u32) -> Option<proto::Handback> {
        self.outbox
            .borrow_mut()
            .push((self.id, Order::Split(job, attempt)));
        None
    }
    fn name(&self) -> String {
        format!("simulated {}", self.id.0)
    }
}

/// A job on a slot.
struct Running {
    /// Started at, µs.
    start: u64,
    /// The attempt it runs as.
    attempt: u32,
    /// What it does.
    run: JobRun,
    /// When it ends, µs (a split moves it earlier).
    end: u64,
}

/// One executor's jobs.
#[derive(Default)]
struct Exec {
    /// On its threads, by job id.
    running: HashMap<u64, Running>,
    /// Arrived, waiting for a thread (in arrival order).
    waiting: VecDeque<Job>,
    /// Waiting jobs (id, attempt) asked to split before they started: they start none.
    handed: Vec<(u64, u32)>,
}

/// Every simulated executor's threads and the jobs they hold.
pub(super) struct Slots {
    execs: BTreeMap<ExecutorId, Exec>,
    /// Threads of each executor.
    threads: usize,
    /// Nodes per second of one thread.
    rate: f64,
}

impl Slots {
    /// Executors `1..=workers` of `threads` threads each, searching `rate` nodes per second
    /// per thread.
    pub fn new(workers: usize, threads: usize, rate: f64) -> Slots {
        Slots {
            execs: (1..=workers as u64)
                .map(|k| (ExecutorId(k), Exec::default()))
                .collect(),
            threads,
            rate,
        }
    }

    /// The executors' ids.
    pub fn ids(&self) -> impl Iterator<Item = ExecutorId> + '_ {
        self.execs.keys().copied()
    }

    /// Threads over every executor.
    pub fn threads_in_all(&self) -> usize {
        self.execs.len() * self.threads
    }

    /// Jobs on threads, and jobs waiting for one, over every executor.
    pub fn held(&self) -> (usize, usize) {
        let running = self.execs.values().map(|e| e.running.len()).sum();
        let waiting = self.execs.values().map(|e| e.waiting.len()).sum();
        (running, waiting)
    }

    /// `job` reached executor `e`: it waits for a thread.
    pub fn arrive(&mut self, e: ExecutorId, job: Job) {
        if let Some(x) = self.execs.get_mut(&e) {
            x.waiting.push_back(job);
        }
    }

    /// Job `id` ran to its end on executor `e` at `now`: what it did, its result, and
    /// whether it holds an optimal solution (none if it no longer runs there).
    pub fn finish(
        &mut self,
        e: ExecutorId,
        id: u64,
        now: u64,
    ) -> Option<(SimJob, JobResult, bool)> {
        let x = self.execs.get_mut(&e)?;
        if x.running.get(&id)?.end != now {
            // Its end moved earlier when it handed back pieces: that Finish was it.
            return None;
        }
        let r = x.running.remove(&id)?;
        let (output, solves) = r.run.output();
        let job = SimJob {
            id,
            depth: r.run.depth,
            exec: e.0,
            start_us: r.start,
            end_us: now,
            nodes: r.run.nodes,
            cancelled: false,
            shape: r.run.shape,
        };
        let result = JobResult {
            id: JobId(id),
            attempt: r.attempt,
            micros: now - r.start,
            output: Ok(output),
        };
        Some((job, result, solves))
    }

    /// A cancellation of job `id` reached executor `e` at `now`: a waiting job is dropped,
    /// a running one stops (what it did until then, if it ran).
    pub fn cancel(&mut self, e: ExecutorId, id: u64, now: u64) -> Option<SimJob> {
        let x = self.execs.get_mut(&e)?;
        x.waiting.retain(|j| j.id.0 != id);
        let r = x.running.remove(&id)?;
        let nodes = ((now - r.start) as f64 * self.rate / 1e6) as u64;
        Some(SimJob {
            id,
            depth: r.run.depth,
            exec: e.0,
            start_us: r.start,
            end_us: now,
            nodes: nodes.min(r.run.nodes),
            cancelled: true,
            shape: r.run.shape,
        })
    }

    /// Free threads take waiting jobs at `now`, executor by executor: each started job
    /// with the time it ends.
    pub fn start_waiting(
        &mut self,
        now: u64,
        recorded: &mut Recorded<'_>,
    ) -> Result<Vec<(ExecutorId, u64, u64)>, TraceError> {
        let mut started = Vec::new();
        for (&e, x) in self.execs.iter_mut() {
            while x.running.len() < self.threads {
                let Some(job) = x.waiting.pop_front() else {
                    break;
                };
                let mut run = recorded.run(&job)?;
                if let Some(i) = (x.handed.iter()).position(|&h| h == (job.id.0, job.attempt)) {
                    x.handed.swap_remove(i);
                    run.keep(0);
                }
                let end = now + ((run.nodes as f64) * 1e6 / self.rate).ceil() as u64;
                started.push((e, job.id.0, end));
                let r = Running {
                    start: now,
                    attempt: job.attempt,
                    run,
                    end,
                };
                x.running.insert(job.id.0, r);
            }
        }
        Ok(started)
    }

    /// A request to split attempt `attempt` of job `id` reached executor `e` at `now`:
    /// its answer, and the job's new end when it moved.
    pub fn split(
        &mut self,
        e: ExecutorId,
        id: u64,
        attempt: u32,
        now: u64,
    ) -> (proto::Handback, Option<u64>) {
        let mut h = proto::Handback {
            job: proto::JobId(id),
            attempt,
            kept: None,
        };
        let Some(x) = self.execs.get_mut(&e) else {
            return (h, None);
        };
        if x.waiting
            .iter()
            .any(|j| j.id.0 == id && j.attempt == attempt)
        {
            x.handed.push((id, attempt));
            h.kept = Some(0);
            return (h, None);
        }
        let Some(r) = x.running.get_mut(&id).filter(|r| r.attempt == attempt) else {
            return (h, None);
        };
        if r.run.batch.is_some() {
            return (h, None);
        }
        // The piece its search is in, and those it took ahead.
        let done = ((now - r.start) as f64 * self.rate / 1e6) as u64;
        let mut k = 0;
        let mut acc = 0u64;
        while k < r.run.pieces.len() && acc + r.run.pieces[k].nodes <= done {
            acc += r.run.pieces[k].nodes;
            k += 1;
        }
        let kept = (k + 1 + TAKEN_AHEAD).min(r.run.pieces.len());
        h.kept = Some(kept as u32);
        let before = r.run.runs;
        r.run.keep(kept);
        if r.run.runs == before {
            return (h, None);
        }
        let end = r.start + ((r.run.nodes as f64) * 1e6 / self.rate).ceil() as u64;
        r.end = end.max(now);
        (h, Some(r.end))
    }

    /// What executor `e` holds at `now`, as its heartbeat lists it.
    pub fn live(&self, e: ExecutorId, now: u64) -> Vec<LiveJob> {
        let Some(x) = self.execs.get(&e) else {
            return Vec::new();
        };
        let running = x.running.iter().map(|(&id, r)| LiveJob {
            job: JobId(id),
            attempt: r.attempt,
            nodes: (((now - r.start) as f64 * self.rate / 1e6) as u64).min(r.run.nodes),
        });
        let waiting = x.waiting.iter().map(|j| LiveJob {
            job: j.id,
            attempt: j.attempt,
            nodes: 0,
        });
        let mut live: Vec<LiveJob> = running.chain(waiting).collect();
        live.sort_by_key(|l| l.job);
        live
    }
}
