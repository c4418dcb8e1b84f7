//! The executors as the driver holds them: joined (their abilities told to the
//! scheduler), heard from (results, heartbeats, capacity, hand-backs, departures), given
//! the scheduler's actions, and dropped when the scheduler forgot them at a lease expiry.

use super::Driver;
use crate::executor::{Executor, ExecutorEvent, ExecutorId, LiveJob};
use crate::scheduler::Action;

/// An executor as the driver holds it.
pub(super) struct Exec<'s> {
    pub(super) exec: Box<dyn Executor + 's>,
    /// Its threads, for status (it may hold more jobs than that: see
    /// [`Executor::capacity`]).
    pub(super) threads: u32,
    /// Its running jobs' node counts at its last heartbeat.
    pub(super) live: Vec<LiveJob>,
}

impl<'s> Driver<'s> {
    /// Adds an executor.
    pub fn join(&mut self, id: ExecutorId, exec: Box<dyn Executor + 's>) {
        let threads = exec.threads();
        self.stats.joined(id, &exec.name(), threads, self.now);
        self.sched.add_executor(id, exec.capacity(), exec.tables());
        self.sched.set_splits(id, exec.can_split());
        self.sched.set_shares(id, exec.shares_jobs());
        self.sched.set_trusted(id, exec.trusted());
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

    pub(super) fn executor_event(&mut self, e: ExecutorEvent) {
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

    /// Carries out the scheduler's actions and drops the executors it forgot.
    pub(super) fn act(&mut self) {
        let mut actions = self.sched.take_actions();
        while !actions.is_empty() {
            // An executor in this process answers a request to hand back at once: its
            // pieces are dispatched in the same step.
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
}
