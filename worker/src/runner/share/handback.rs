//! Hand-backs: a running job asked to give back the pieces it has not started stops
//! claiming them, on every thread searching it, and says how many it claimed.

use super::{lock, JobRunner};
use proto::{JobId, PieceSplit};

impl JobRunner {
    /// Stops attempt `attempt` of job `id` from claiming more of its pieces, on every
    /// thread searching it (a subtree job; a batch job runs on, and this is `None`): how
    /// many it claimed (each is searched), the rest handed back (see
    /// [`proto::Handback`]). `None` when no such attempt is pending here (it ended, and
    /// its result is on its way). A job still queued hands back every piece. A job sent
    /// with `split` also names the kept pieces that hand back the moves their search has
    /// not entered ([`proto::Handback::split`]).
    pub fn split(&self, id: JobId, attempt: u32) -> Option<(u32, Vec<PieceSplit>)> {
        let map = lock(&self.inner.pending);
        let p = map.get(&id)?.iter().find(|p| p.attempt == attempt)?;
        let (kept, split) = p.cursor.as_ref()?.hand_back_split();
        // A listed job no thread searches now must be closed by one.
        self.inner.wake.notify_one();
        if (kept as usize) < p.pieces {
            tracing::debug!(
                job = id.0,
                attempt,
                kept,
                pieces = p.pieces,
                running_split = split.len(),
                "split: the pieces not claimed handed back"
            );
        }
        Some((kept, split))
    }
}
