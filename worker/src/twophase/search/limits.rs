//! The limits of one two-phase run (probe budget, stop token, a deadline held back until
//! the first solution) and what a run found.

use super::*;

/// The probe budget and the stop token, shared by the short search and the two-phase
/// search.
pub(crate) struct Limits {
    /// Probe limit.
    pub(super) probe_limit: Option<u64>,
    /// Cancellation and the deadline.
    pub(super) stop: StopToken,
    /// Whether the deadline counts yet: an anytime search within 20 moves (which every
    /// position has, found in milliseconds) holds it back until its first solution, so
    /// that it always answers; cancellation always counts.
    pub(super) deadline_armed: Cell<bool>,
}

impl Limits {
    /// A probe budget and a stop token whose deadline counts from the start.
    pub(crate) fn new(probe_limit: Option<u64>, stop: &StopToken) -> Limits {
        Limits {
            probe_limit,
            stop: stop.clone(),
            deadline_armed: Cell::new(true),
        }
    }

    /// [`Limits::new`] with the deadline held back until [`Limits::arm`].
    pub(crate) fn deadline_after_first_solution(mut self) -> Limits {
        self.deadline_armed = Cell::new(false);
        self
    }

    /// Makes the deadline count (a solution is held).
    pub(crate) fn arm(&self) {
        self.deadline_armed.set(true);
    }

    /// Whether time is up or the search was cancelled (call every few thousand nodes).
    pub(crate) fn check(&self) -> Option<Stop> {
        match self.stop.check() {
            Some(Stop::TimeLimit) if !self.deadline_armed.get() => None,
            other => other,
        }
    }

    /// [`Limits::check`] once `nodes` has passed `*next_check`, then moves `next_check`
    /// a few thousand nodes on: the cheap periodic poll both searches use.
    #[inline]
    pub(crate) fn poll(&self, nodes: u64, next_check: &mut u64) -> Option<Stop> {
        if nodes < *next_check {
            return None;
        }
        *next_check = nodes + 4096;
        self.check()
    }
}

/// What one run found.
pub(crate) struct Outcome {
    /// New solutions (mapped back to the original position).
    pub(crate) solutions: Vec<Vec<Move>>,
    /// Nodes visited.
    pub(crate) nodes: u64,
    /// Probes.
    pub(crate) probes: u64,
    /// Why it stopped early, if it did (`Completed` = enough solutions).
    pub(crate) stop: Option<Stop>,
}
