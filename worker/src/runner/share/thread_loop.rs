//! What each pool thread does (see `share`'s module doc, "How a thread chooses its
//! work"): it chooses its next work, starts a job (shared when it is a subtree job and
//! sharing is on), takes part in a shared job, and sends a job's result.

use super::shared_job::{Membership, SharedJob};
use super::{lock, Inner, Queued, ResultSink, State, Ticket};
use crate::runner::job::{micros_since, panic_error, run_job_split};
use crate::runner::options::ShareEvent;
use crate::runner::subtrees::{Plan, Searcher};
use crate::stop::deadline_after;
use crate::StopToken;
use proto::{Job, JobId, JobOutput, JobResult, SubtreeWork, Work};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The depth a job's work counts at: a subtree job's own, a batch job's 0 (it goes first).
fn depth_of(job: &Job) -> u8 {
    match &job.work {
        Work::Subtrees(w) => w.depth,
        Work::Batch { .. } => 0,
    }
}

/// A thread's next work.
enum Task {
    /// Start this job.
    Start(Queued),
    /// Help this job (joined already).
    Help(Arc<SharedJob>),
}

impl Inner {
    /// The loop of each pool thread (see `share`'s module doc), until the runner is
    /// dropped and no job is queued.
    pub(super) fn work(&self) {
        while let Some(task) = self.next_task() {
            match task {
                Task::Start(q) => self.start(q),
                Task::Help(job) => {
                    self.options.tell(ShareEvent::Joined(job.id));
                    self.take_part(&job, true);
                }
            }
        }
    }

    /// The queue's shallowest depth, for the threads' claims (under the `state` lock).
    pub(super) fn note_queue(&self, st: &State) {
        let d = st
            .queue
            .iter()
            .map(|q| depth_of(&q.job))
            .min()
            .unwrap_or(u8::MAX);
        self.waiting.store(d, Ordering::Relaxed);
    }

    /// Whether a thread searching a job of `depth` (`helper`: one it did not start)
    /// stops claiming its pieces: see `share`'s module doc.
    fn should_leave(&self, depth: u8, helper: bool) -> bool {
        let waiting = self.waiting.load(Ordering::Relaxed);
        let open = self.open.load(Ordering::Relaxed);
        depth > waiting.min(open) || (helper && depth >= waiting)
    }

    /// This thread's next work, waiting for some; `None` when it should end.
    fn next_task(&self) -> Option<Task> {
        let mut st = lock(&self.state);
        loop {
            // The shallowest queued job (the oldest of its depth), and the shallowest
            // listed job with pieces to claim (the oldest of its depth: the coordinator
            // sends the most promising first, and an old job done sooner answers sooner).
            let queued = (st.queue.iter().enumerate())
                .map(|(i, q)| (depth_of(&q.job), i))
                .min();
            let mut listed: Option<(u8, u64, usize)> = None;
            let mut to_close: Option<usize> = None;
            if self.options.share_jobs {
                for (i, j) in st.running.iter().enumerate() {
                    let n = j.search().unclaimed();
                    if n == 0 {
                        // Left by its threads and now unable to claim (cancelled or
                        // handed back meanwhile): a thread must close it.
                        if j.idle() {
                            to_close = Some(i);
                        }
                        continue;
                    }
                    let key = (j.work.depth, j.seq, i);
                    if listed.is_none_or(|l| key < l) {
                        listed = Some(key);
                    }
                }
            }
            let open = listed.map_or(u8::MAX, |l| l.0);
            self.open.store(open, Ordering::Relaxed);
            let pick = match (queued, to_close, listed) {
                (_, Some(i), _) => Some((false, i)),
                (Some((qd, i)), _, l) if l.is_none_or(|l| qd <= l.0) => Some((true, i)),
                (_, _, Some(l)) => Some((false, l.2)),
                _ => None,
            };
            match pick {
                Some((true, i)) => {
                    let Some(q) = st.queue.remove(i) else {
                        continue;
                    };
                    self.note_queue(&st);
                    return Some(Task::Start(q));
                }
                Some((false, i)) => {
                    let job = Arc::clone(&st.running[i]);
                    if job.join() {
                        return Some(Task::Help(job));
                    }
                    // Closed: the thread that sends its result unlists it soon;
                    // unlisted now, it is not chosen again.
                    st.running.retain(|j| !Arc::ptr_eq(j, &job));
                    continue;
                }
                None => {}
            }
            if st.closing {
                return None;
            }
            st = self.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Runs job `q` from its start: a subtree job shared with the threads that join it
    /// (when sharing is on), any other on this thread alone.
    fn start(&self, q: Queued) {
        let start = Instant::now();
        let engines = Arc::clone(&lock(&self.engines));
        let Queued { job, ticket } = q;
        let solver = match engines.get(&job.table) {
            Some(engine) if self.options.share_jobs => Searcher::of(engine),
            _ => None,
        };
        let Job {
            id,
            attempt,
            table,
            work,
        } = job;
        let job = match (solver, work) {
            (Some(solver), Work::Subtrees(work)) => {
                return self.start_shared((id, attempt), work, solver, ticket, start);
            }
            (_, work) => Job {
                id,
                attempt,
                table,
                work,
            },
        };
        // Searches catch their own panics (see the module doc of `runner`); this one is
        // the last net, so that no panic takes the pool down (rayon would abort) and
        // every job still sends one result.
        let t = &ticket;
        let result = catch_unwind(AssertUnwindSafe(|| {
            run_job_split(&engines, &job, &t.stop, &t.nodes, &self.options, &t.cursor)
        }))
        .unwrap_or_else(|payload| JobResult {
            id,
            attempt,
            micros: micros_since(start),
            output: Err(panic_error(payload.as_ref())),
        });
        self.send(&ticket.stop, &ticket.on_result, result, None);
    }

    /// Starts subtree job `work` (`id`, `attempt`) on `solver`, lists it for other
    /// threads to join, and takes part in it until no piece is left to claim.
    fn start_shared(
        &self,
        (id, attempt): (JobId, u32),
        work: SubtreeWork,
        solver: Searcher,
        ticket: Ticket,
        start: Instant,
    ) {
        // The same order as one thread: the seam first, then the job's own checks.
        let plan = catch_unwind(AssertUnwindSafe(|| {
            self.options.before(&work.position);
            Plan::new(&work, &solver)
        }));
        let error = match plan {
            Ok(Ok(plan)) => {
                let job = Arc::new(SharedJob {
                    id,
                    attempt,
                    seq: ticket.seq,
                    stop: (ticket.stop).with_deadline(deadline_after(start, work.time_limit_ms)),
                    work,
                    solver,
                    plan,
                    cursor: ticket.cursor,
                    nodes: ticket.nodes,
                    found: AtomicUsize::new(0),
                    start,
                    on_result: ticket.on_result,
                    state: Mutex::new(Membership {
                        threads: 1,
                        ..Membership::default()
                    }),
                });
                lock(&self.state).running.push(Arc::clone(&job));
                self.open.fetch_min(job.work.depth, Ordering::Relaxed);
                self.wake.notify_all();
                self.options.tell(ShareEvent::Listed(id));
                return self.take_part(&job, false);
            }
            Ok(Err(e)) => e,
            Err(payload) => panic_error(payload.as_ref()),
        };
        let result = JobResult {
            id,
            attempt,
            micros: micros_since(start),
            output: Err(error),
        };
        self.send(&ticket.stop, &ticket.on_result, result, None);
    }

    /// Searches pieces of `job` on this thread (joined already; `helper`: a job it did
    /// not start) until it can claim no more or should leave (see `share`'s module doc),
    /// then leaves it; the last thread out of a closed job unlists it and sends its
    /// result.
    fn take_part(&self, job: &Arc<SharedJob>, helper: bool) {
        let depth = job.work.depth;
        let leave = || self.should_leave(depth, helper);
        let found = catch_unwind(AssertUnwindSafe(|| job.search().participate(&leave)));
        let last = job.leave(found);
        let Some((output, searchers)) = last else {
            // Left with pieces to claim, it waits for a free thread: wake one.
            self.open.fetch_min(depth, Ordering::Relaxed);
            self.wake.notify_one();
            return;
        };
        lock(&self.state).running.retain(|j| !Arc::ptr_eq(j, job));
        let result = JobResult {
            id: job.id,
            attempt: job.attempt,
            micros: micros_since(job.start),
            output: output.map(JobOutput::Subtrees),
        };
        self.send(&job.stop, &job.on_result, result, Some(searchers));
    }

    /// Forgets the job of `stop` and sends its result (`searchers`: a shared job's, told
    /// to the hook first).
    fn send(
        &self,
        stop: &StopToken,
        on_result: &ResultSink,
        result: JobResult,
        searchers: Option<usize>,
    ) {
        {
            let mut map = lock(&self.pending);
            if let Some(tokens) = map.get_mut(&result.id) {
                tokens.retain(|t| !t.stop.shares_flag(stop));
                if tokens.is_empty() {
                    map.remove(&result.id);
                }
            }
        }
        if let Some(searchers) = searchers {
            self.options.tell(ShareEvent::Ended {
                job: result.id,
                searchers,
            });
        }
        let _ = catch_unwind(AssertUnwindSafe(|| on_result(result)));
    }
}
