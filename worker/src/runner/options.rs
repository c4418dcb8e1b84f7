//! [`RunnerOptions`]: how a [`JobRunner`](super::JobRunner) (or
//! [`run_job_with`](super::run_job_with)) runs jobs, beyond the jobs themselves.

use crate::failpoint::PositionHook;
use proto::JobId;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// What a [`RunnerOptions::on_share`] hook is told about a subtree job shared between
/// threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareEvent {
    /// Subtree job `0` was listed for other threads to join: told by the thread that
    /// started it, before it claims its first piece.
    Listed(JobId),
    /// A thread that did not start job `0` joined it, to search its pieces not claimed.
    Joined(JobId),
    /// A shared job's result is about to be sent.
    Ended {
        /// The job.
        job: JobId,
        /// The threads that searched at least one of its pieces (its starting thread
        /// included).
        searchers: usize,
    },
}

/// Called with each [`ShareEvent`].
pub type ShareHook = Arc<dyn Fn(ShareEvent) + Send + Sync>;

/// How a [`JobRunner`](super::JobRunner) (or [`run_job_with`](super::run_job_with)) runs
/// jobs, beyond the jobs themselves.
#[derive(Clone)]
pub struct RunnerOptions {
    /// Called with each position before it is searched (each batch position, each
    /// subtree job's position): the fault-injection seam of the tests (see
    /// [`crate::failpoint`]). `None` in production.
    pub before_position: Option<PositionHook>,
    /// Whether a [`JobRunner`](super::JobRunner) thread with no job to start helps a
    /// running subtree job, searching the pieces its thread has not claimed yet (the
    /// default, `true`). `false` runs each job on one thread from its start to its end,
    /// as before sharing: for side-by-side measurement. The results are the same either
    /// way (see [`JobRunner`](super::JobRunner)); only the threads that search differ.
    pub share_jobs: bool,
    /// Told when a subtree job is listed for sharing, when a thread joins a job it did
    /// not start and when a shared job ends: the test seam of sharing (a hook that waits
    /// on [`ShareEvent::Listed`] holds the job's starter back). `None` in production.
    pub on_share: Option<ShareHook>,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            before_position: None,
            share_jobs: true,
            on_share: None,
        }
    }
}

impl RunnerOptions {
    /// The options the environment asks for: the test seam of
    /// [`crate::failpoint::FAILPOINT_ENV`] when it is set.
    pub fn from_env() -> Result<RunnerOptions, crate::failpoint::FailpointError> {
        Ok(RunnerOptions {
            before_position: crate::failpoint::from_env()?,
            ..RunnerOptions::default()
        })
    }

    /// Calls the [`RunnerOptions::before_position`] hook (which may panic: a test's
    /// injected fault, caught by the caller).
    pub(super) fn before(&self, position: &tables::Position) {
        if let Some(hook) = &self.before_position {
            hook(position);
        }
    }

    /// Calls the [`RunnerOptions::on_share`] hook; a panic in it is dropped (a test seam
    /// never takes a thread of the runner down).
    pub(super) fn tell(&self, event: ShareEvent) {
        if let Some(hook) = &self.on_share {
            let _ = catch_unwind(AssertUnwindSafe(|| hook(event)));
        }
    }
}

impl std::fmt::Debug for RunnerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerOptions")
            .field("before_position", &self.before_position.is_some())
            .field("share_jobs", &self.share_jobs)
            .field("on_share", &self.on_share.is_some())
            .finish()
    }
}
