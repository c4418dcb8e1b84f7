//! Every simulated executor's threads and the jobs they hold ([`Slots`]), in virtual
//! time: jobs arrive and wait, free threads start or join them, threads run out of
//! pieces or leave their job for a shallower one, jobs end or are cancelled, and a
//! heartbeat lists what an executor holds.

use super::super::events::Ev;
use super::super::recorded::JobRun;
use super::super::report::SimJob;
use super::running::Running;
use crate::trace::TraceError;
use coordinator::executor::{ExecutorId, LiveJob};
use proto::{Job, JobId, JobResult};
use std::collections::{BTreeMap, VecDeque};

/// One executor's jobs.
#[derive(Default)]
pub(super) struct Exec {
    /// On its threads, by job id (in id order: a thread's choices between equal times go
    /// to the lowest id, so that a replay is the same in every process).
    pub(super) running: BTreeMap<u64, Running>,
    /// Arrived, waiting for a thread (in arrival order).
    pub(super) waiting: VecDeque<Job>,
    /// Waiting jobs (id, attempt) asked to split before they started: they start none.
    pub(super) handed: Vec<(u64, u32)>,
    /// When a helper is due to leave its job for a waiting one.
    pub(super) leave_at: Option<u64>,
}

impl Exec {
    /// Threads on a job.
    fn busy(&self) -> usize {
        self.running.values().map(|r| r.lanes.len()).sum()
    }

    /// The thread that leaves its job first, at the end of its run (`later`: one still
    /// in its run at `t` too): its run's end, its job and its lane. A thread leaves a job
    /// that still has pieces to take when a shallower depth has work here (a waiting job,
    /// or a running one with pieces not taken), and a helper also for a waiting job of
    /// its own depth; a job left by all its threads waits, its pieces kept, for a free
    /// one. Deeper depths only count once shallower ones are empty: they wait.
    /// Lanes are brought up to `t` only for a `later` one: one at the end of its run by
    /// `t` leaves there rather than take another.
    fn leaver(&mut self, t: f64, rate: f64, later: bool) -> Option<(f64, u64, u64)> {
        let waiting = self.waiting.iter().map(job_depth).min().unwrap_or(u8::MAX);
        let mut open = u8::MAX;
        for r in self.running.values_mut() {
            if later {
                r.advance(t, true, None, rate);
            }
            if r.next < r.job.chunks() && r.job.run.batch.is_none() {
                open = open.min(r.job.run.depth);
            }
        }
        let shallowest = waiting.min(open);
        let mut pick: Option<(f64, u64, u64)> = None;
        for (&id, r) in &self.running {
            if r.next >= r.job.chunks() {
                // Its threads end with its last runs.
                continue;
            }
            let d = r.job.run.depth;
            for l in &r.lanes {
                let leaves = d > shallowest || (l.helper && d >= waiting);
                let due = if later { l.busy > t } else { l.busy <= t };
                if leaves && due && pick.is_none_or(|(b, _, _)| l.busy < b) {
                    pick = Some((l.busy, id, l.id));
                }
            }
        }
        pick
    }
}

/// Every simulated executor's threads and the jobs they hold.
pub(crate) struct Slots {
    pub(super) execs: BTreeMap<ExecutorId, Exec>,
    /// Threads of each executor.
    threads: usize,
    /// Nodes per second of one thread.
    pub(super) rate: f64,
    /// Whether a free thread joins a running job (see `executors`' module doc).
    share: bool,
    /// Ids made so far (lanes', versions').
    made: u64,
    /// Events made since the replay last took them: threads running out of pieces, and
    /// helpers due to leave.
    due: Vec<(u64, Ev)>,
}

/// A job's depth (a batch job's: 0, it goes first).
fn job_depth(job: &Job) -> u8 {
    match &job.work {
        proto::Work::Subtrees(w) => w.depth,
        proto::Work::Batch { .. } => 0,
    }
}

/// The µs tick at or after `t`.
fn tick(t: f64) -> u64 {
    t.max(0.0).ceil() as u64
}

impl Slots {
    /// Executors `1..=workers` of `threads` threads each, searching `rate` nodes per second
    /// per thread; free threads join running jobs when `share`.
    pub fn new(workers: usize, threads: usize, rate: f64, share: bool) -> Slots {
        Slots {
            execs: (1..=workers as u64)
                .map(|k| (ExecutorId(k), Exec::default()))
                .collect(),
            threads,
            rate,
            share,
            made: 0,
            due: Vec::new(),
        }
    }

    /// The events made since last asked.
    pub fn take_due(&mut self) -> Vec<(u64, Ev)> {
        std::mem::take(&mut self.due)
    }

    /// The executors' ids.
    pub fn ids(&self) -> impl Iterator<Item = ExecutorId> + '_ {
        self.execs.keys().copied()
    }

    /// Threads over every executor.
    pub fn threads_in_all(&self) -> usize {
        self.execs.len() * self.threads
    }

    /// Threads on a job, and jobs held (on threads or waiting), over every executor.
    pub fn held(&self) -> (usize, usize) {
        let busy = self.execs.values().map(Exec::busy).sum();
        let jobs = (self.execs.values())
            .map(|e| e.running.len() + e.waiting.len())
            .sum();
        (busy, jobs)
    }

    /// `job` reached executor `e`: it waits for a thread.
    pub fn arrive(&mut self, e: ExecutorId, job: Job) {
        if let Some(x) = self.execs.get_mut(&e) {
            x.waiting.push_back(job);
        }
    }

    /// A new id.
    fn fresh(&mut self) -> u64 {
        self.made += 1;
        self.made
    }

    /// Job `id` of executor `e` got a new future at `now`: a new version, and its lanes'
    /// ends.
    pub(super) fn reproject(&mut self, e: ExecutorId, id: u64, now: u64) {
        let v = self.fresh();
        let rate = self.rate;
        let Some(r) = self.execs.get_mut(&e).and_then(|x| x.running.get_mut(&id)) else {
            return;
        };
        r.version = v;
        for (lane, t) in r.project(rate) {
            self.due.push((tick(t).max(now), Ev::Free(e, id, lane, v)));
        }
    }

    /// Lane `lane` of job `id` on executor `e` ran out of pieces at `now` (as version `v`
    /// of the job foresaw): the thread is free; when it was the job's last, the job ended:
    /// what it did, its result, and whether it holds an optimal solution.
    pub fn free(
        &mut self,
        e: ExecutorId,
        id: u64,
        lane: u64,
        v: u64,
        now: u64,
    ) -> Option<(SimJob, JobResult, bool)> {
        let rate = self.rate;
        let x = self.execs.get_mut(&e)?;
        let r = x.running.get_mut(&id).filter(|r| r.version == v)?;
        r.advance(now as f64, true, None, rate);
        if (r.lanes.iter()).any(|l| l.id == lane && l.busy > now as f64) {
            // It took more than foreseen (rounding): it ends later.
            self.reproject(e, id, now);
            return None;
        }
        r.lanes.retain(|l| l.id != lane);
        if !r.lanes.is_empty() || r.next < r.job.chunks() {
            return None;
        }
        let r = x.running.remove(&id)?;
        let (output, solves) = r.job.run.output();
        let job = SimJob {
            id,
            depth: r.job.run.depth,
            exec: e.0,
            start_us: r.start,
            end_us: now,
            nodes: r.job.run.nodes,
            cancelled: false,
            shape: r.job.run.shape,
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
        let mut r = x.running.remove(&id)?;
        r.advance(now as f64, false, None, self.rate);
        let nodes = r.done(now as f64, self.rate);
        Some(SimJob {
            id,
            depth: r.job.run.depth,
            exec: e.0,
            start_us: r.start,
            end_us: now,
            nodes: nodes.min(r.job.run.nodes),
            cancelled: true,
            shape: r.job.run.shape,
        })
    }

    /// A leave, due at `now` on executor `e`: the thread that should leave its job (see
    /// [`Exec::leaver`]) and is at the end of its run leaves it (the job gets a new future,
    /// or waits for a thread with its pieces not taken), and takes other work.
    pub fn leave(&mut self, e: ExecutorId, now: u64) {
        let rate = self.rate;
        let Some(x) = self.execs.get_mut(&e) else {
            return;
        };
        if x.leave_at != Some(now) {
            return;
        }
        x.leave_at = None;
        let t = now as f64;
        let Some((_, id, lane)) = x.leaver(t, rate, false).filter(|(b, ..)| *b <= t) else {
            self.plan_leave(e, now);
            return;
        };
        if let Some(r) = x.running.get_mut(&id) {
            r.lanes.retain(|l| l.id != lane);
            r.advance(t, true, None, rate);
        }
        self.reproject(e, id, now);
    }

    /// Free threads take waiting jobs at `now`, executor by executor, and then, when
    /// executors share, join running jobs; a helper is set to leave where a job waits.
    pub fn fill(
        &mut self,
        now: u64,
        make: &mut dyn FnMut(&Job) -> Result<JobRun, TraceError>,
    ) -> Result<(), TraceError> {
        let ids: Vec<ExecutorId> = self.execs.keys().copied().collect();
        let t = now as f64;
        for e in ids {
            while let Some(x) = self.execs.get_mut(&e) {
                if x.busy() >= self.threads {
                    break;
                }
                // The shallowest waiting job (the first of its depth), and the
                // shallowest running job with pieces not taken (the first started).
                let rate = self.rate;
                let wait = (x.waiting.iter().enumerate())
                    .map(|(i, j)| (job_depth(j), i))
                    .min();
                let mut help: Option<(u8, u64, u64)> = None;
                if self.share {
                    for (&id, r) in x.running.iter_mut() {
                        if r.job.run.batch.is_some() {
                            continue;
                        }
                        r.advance(t, true, None, rate);
                        let key = (r.job.run.depth, r.start, id);
                        if r.untaken() > 0 && help.is_none_or(|h| key < h) {
                            help = Some(key);
                        }
                    }
                }
                let start_waiting = match (wait, help) {
                    (Some((wd, _)), Some((hd, ..))) => wd <= hd,
                    (w, _) => w.is_some(),
                };
                if start_waiting {
                    let Some(job) = wait.and_then(|(_, i)| x.waiting.remove(i)) else {
                        break;
                    };
                    let mut run = make(&job)?;
                    if let Some(i) = (x.handed.iter()).position(|&h| h == (job.id.0, job.attempt)) {
                        x.handed.swap_remove(i);
                        run.keep(0);
                    }
                    let mut r = Running::new(now, job.attempt, run);
                    self.made += 1;
                    r.join(self.made, t, false, self.rate);
                    x.running.insert(job.id.0, r);
                    self.reproject(e, job.id.0, now);
                    continue;
                }
                let Some((.., id)) = help else {
                    break;
                };
                self.made += 1;
                let lane = self.made;
                if let Some(r) = x.running.get_mut(&id) {
                    r.join(lane, t, true, rate);
                }
                self.reproject(e, id, now);
            }
            self.plan_leave(e, now);
        }
        Ok(())
    }

    /// The next thread to leave its job on executor `e` (see [`Exec::leaver`]) is set to
    /// leave at the end of its run.
    fn plan_leave(&mut self, e: ExecutorId, now: u64) {
        if !self.share {
            return;
        }
        let rate = self.rate;
        let Some(x) = self.execs.get_mut(&e) else {
            return;
        };
        if let Some((b, _, _)) = x.leaver(now as f64, rate, true) {
            let at = tick(b).max(now);
            if x.leave_at != Some(at) {
                x.leave_at = Some(at);
                self.due.push((at, Ev::Leave(e)));
            }
        }
    }

    /// What executor `e` holds at `now`, as its heartbeat lists it.
    pub fn live(&self, e: ExecutorId, now: u64) -> Vec<LiveJob> {
        let Some(x) = self.execs.get(&e) else {
            return Vec::new();
        };
        let running = x.running.iter().map(|(&id, r)| LiveJob {
            job: JobId(id),
            attempt: r.attempt,
            nodes: r.done(now as f64, self.rate).min(r.job.run.nodes),
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
