//! The runner's record of the jobs submitted and not finished ([`Pending`]), one entry
//! per submission, and the requests that reach them by id: submit, cancel, node count.

use super::{lock, JobRunner, Queued, ResultSink, Ticket};
use crate::runner::pieces::PieceCursor;
use crate::StopToken;
use proto::{Job, JobId, Work};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One submitted job not finished: its stop token and its node count so far.
pub(super) struct Pending {
    /// The job's stop token (the submission's: every clone shares its flag).
    pub(super) stop: StopToken,
    /// Search nodes counted so far, by every thread of the job.
    pub(super) nodes: Arc<AtomicU64>,
    /// The attempt submitted.
    pub(super) attempt: u32,
    /// Its pieces claimed, for a request to split it (`None`: a batch job, not split).
    pub(super) cursor: Option<Arc<PieceCursor>>,
    /// Its pieces (a subtree job's).
    pub(super) pieces: usize,
}

/// The jobs submitted and not finished, by id: one entry per submission (a job sent again
/// while an earlier attempt still runs gets its own), so that one cancel reaches them all
/// and a finished job removes only its own.
pub(super) type PendingMap = Mutex<HashMap<JobId, Vec<Pending>>>;

impl JobRunner {
    /// Jobs submitted and not finished (queued or running).
    pub fn pending(&self) -> usize {
        lock(&self.inner.pending).values().map(Vec::len).sum()
    }

    /// Queues `job`: it starts on the next free pool thread (see
    /// [`run_job`](crate::runner::run_job) for what it does), and its result goes to the
    /// callback.
    pub fn submit(&self, job: Job) {
        self.submit_with(job, Arc::clone(&self.inner.on_result));
    }

    /// [`JobRunner::submit`] with this job's result sent to `on_result` instead of the
    /// executor's callback: an executor kept between runs sends each result to the run
    /// that submitted the job, even one that arrives after that run ended.
    pub fn submit_with(&self, job: Job, on_result: ResultSink) {
        let stop = StopToken::new();
        let nodes = Arc::new(AtomicU64::new(0));
        let cursor = Arc::new(match &job.work {
            Work::Subtrees(w) => PieceCursor::for_work(w),
            Work::Batch { .. } => PieceCursor::default(),
        });
        lock(&self.inner.pending)
            .entry(job.id)
            .or_default()
            .push(Pending {
                stop: stop.clone(),
                nodes: Arc::clone(&nodes),
                attempt: job.attempt,
                cursor: matches!(job.work, Work::Subtrees(_)).then(|| Arc::clone(&cursor)),
                pieces: match &job.work {
                    Work::Subtrees(w) => {
                        let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
                        proto::pieces::total(&w.prefixes, w.depth, levels)
                    }
                    Work::Batch { .. } => 0,
                },
            });
        {
            let mut st = lock(&self.inner.state);
            let seq = st.next_seq;
            st.next_seq += 1;
            st.queue.push_back(Queued {
                job,
                ticket: Ticket {
                    stop,
                    nodes,
                    cursor,
                    on_result,
                    seq,
                },
            });
            self.inner.note_queue(&st);
        }
        self.inner.wake.notify_one();
    }

    /// Stops job `id` (every submitted job of that id, queued or running, on every thread
    /// searching it): it sends what it found so far, with [`proto::Stop::Cancelled`].
    /// Returns whether such a job was pending.
    pub fn cancel(&self, id: JobId) -> bool {
        let found = match lock(&self.inner.pending).get(&id) {
            Some(tokens) => {
                tokens.iter().for_each(|t| t.stop.cancel());
                true
            }
            None => false,
        };
        // A listed job no thread searches now must be closed by one.
        self.inner.wake.notify_one();
        found
    }

    /// Stops every pending job (for shutdown: each still sends its partial result).
    pub fn cancel_all(&self) {
        lock(&self.inner.pending)
            .values()
            .flatten()
            .for_each(|t| t.stop.cancel());
    }

    /// The search nodes job `id` has counted so far (positions and subtrees finished, by
    /// every thread searching it; the largest over its pending submissions), or `None`
    /// when it is not pending.
    pub fn nodes_so_far(&self, id: JobId) -> Option<u64> {
        lock(&self.inner.pending)
            .get(&id)
            .and_then(|v| v.iter().map(|t| t.nodes.load(Ordering::Relaxed)).max())
    }
}
