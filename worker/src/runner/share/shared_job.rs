//! A running subtree job that threads other than its starter may join ([`SharedJob`]):
//! what they share, joining and leaving it, and which thread sends its result (see
//! `share`'s module doc, "Why it is sound").

use super::{lock, ResultSink};
use crate::runner::job::panic_error;
use crate::runner::pieces::PieceCursor;
use crate::runner::subtrees::{Plan, Searcher, SubtreeSearch, Tally};
use crate::StopToken;
use proto::{JobError, JobId, SubtreeResult, SubtreeWork};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Instant;

/// A running subtree job that threads other than its starter may join: what they share.
pub(super) struct SharedJob {
    /// The job's id.
    pub(super) id: JobId,
    /// The job's attempt.
    pub(super) attempt: u32,
    /// Its place in submission order (ties between jobs to join).
    pub(super) seq: u64,
    /// The job's work.
    pub(super) work: SubtreeWork,
    /// The searcher it started with.
    pub(super) solver: Searcher,
    /// Its pieces and solution count.
    pub(super) plan: Plan,
    /// Its stop token, with the job's deadline.
    pub(super) stop: StopToken,
    /// Its pieces claimed.
    pub(super) cursor: Arc<PieceCursor>,
    /// Its node count.
    pub(super) nodes: Arc<AtomicU64>,
    /// Solutions kept so far by all its threads.
    pub(super) found: AtomicUsize,
    /// When it started.
    pub(super) start: Instant,
    /// Where its result goes.
    pub(super) on_result: ResultSink,
    /// Who is in it, and what those who left found.
    pub(super) state: Mutex<Membership>,
}

/// A shared job's threads and what they found (the job's lock).
#[derive(Default)]
pub(super) struct Membership {
    /// What the threads that left found.
    pub(super) tally: Tally,
    /// The error of the first panic of one of its threads.
    pub(super) panic: Option<JobError>,
    /// Threads searching it now.
    pub(super) threads: usize,
    /// Its starter left: no thread joins any more.
    pub(super) closed: bool,
    /// The threads that searched at least one piece.
    pub(super) searchers: Vec<ThreadId>,
}

impl SharedJob {
    /// The view its threads search through.
    pub(super) fn search(&self) -> SubtreeSearch<'_> {
        SubtreeSearch {
            solver: &self.solver,
            work: &self.work,
            plan: &self.plan,
            stop: &self.stop,
            cursor: &self.cursor,
            nodes: &self.nodes,
            found: &self.found,
        }
    }

    /// Whether no thread searches it now.
    pub(super) fn idle(&self) -> bool {
        lock(&self.state).threads == 0
    }

    /// Adds this thread to the job: false when the job is closed.
    pub(super) fn join(&self) -> bool {
        let mut m = lock(&self.state);
        if m.closed {
            return false;
        }
        m.threads += 1;
        true
    }

    /// This thread leaves the job with what it found (or its panic), closing it when it
    /// can claim nothing more. Returns the job's output and searcher count when this
    /// thread is the last to leave a closed job: it sends the result.
    pub(super) fn leave(
        &self,
        found: std::thread::Result<Tally>,
    ) -> Option<(Result<Vec<SubtreeResult>, JobError>, usize)> {
        let (tally, panic, searchers) = {
            let mut m = lock(&self.state);
            match found {
                Ok(tally) => {
                    let me = std::thread::current().id();
                    if tally.searched() > 0 && !m.searchers.contains(&me) {
                        m.searchers.push(me);
                    }
                    m.tally.absorb(tally);
                }
                Err(payload) => {
                    if m.panic.is_none() {
                        m.panic = Some(panic_error(payload.as_ref()));
                    }
                    // The result is the panic's error: the other threads need not go on.
                    self.stop.cancel();
                }
            }
            m.threads = m.threads.saturating_sub(1);
            // Every reason to claim nothing more is permanent (see `share`'s module doc).
            m.closed |= self.search().unclaimed() == 0;
            if !m.closed || m.threads > 0 {
                return None;
            }
            (
                std::mem::take(&mut m.tally),
                m.panic.take(),
                m.searchers.len(),
            )
        };
        let output = match panic {
            Some(e) => Err(e),
            None => catch_unwind(AssertUnwindSafe(|| self.search().finish(tally)))
                .unwrap_or_else(|payload| Err(panic_error(payload.as_ref()))),
        };
        Some((output, searchers))
    }
}
