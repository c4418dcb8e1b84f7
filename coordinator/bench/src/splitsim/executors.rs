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
}

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
}

/// One executor's jobs.
#[derive(Default)]
struct Exec {
    /// On its threads, by job id.
    running: HashMap<u64, Running>,
    /// Arrived, waiting for a thread (in arrival order).
    waiting: VecDeque<Job>,
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
        let r = self.execs.get_mut(&e)?.running.remove(&id)?;
        let job = SimJob {
            id,
            depth: r.run.depth,
            exec: e.0,
            start_us: r.start,
            end_us: now,
            nodes: r.run.nodes,
            cancelled: false,
        };
        let result = JobResult {
            id: JobId(id),
            attempt: r.attempt,
            micros: now - r.start,
            output: Ok(r.run.output),
        };
        Some((job, result, r.run.solves))
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
                let run = recorded.run(&job)?;
                let end = now + ((run.nodes as f64) * 1e6 / self.rate).ceil() as u64;
                started.push((e, job.id.0, end));
                let r = Running {
                    start: now,
                    attempt: job.attempt,
                    run,
                };
                x.running.insert(job.id.0, r);
            }
        }
        Ok(started)
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
