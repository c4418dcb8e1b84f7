//! The executors' measured pace: how long a job's round trip adds to its own run, and how
//! many nodes one slot searches per second. A split depth's jobs are sized from both: a
//! job is worth more than one per slot only when it outlasts its round trip several
//! times over (see [`Pace::jobs_per_slot`]).

use std::collections::VecDeque;

/// Round trips kept: the smallest of them is the estimate.
const SAMPLES: usize = 32;

/// Node rate assumed until enough subtree work has been timed.
const DEFAULT_RATE: f64 = 3e7;

/// Work timed before the measured node rate is trusted, µs of slot time.
const RATE_AFTER_US: u64 = 100_000;

/// Measured round trips and node rate. See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Pace {
    /// Recent round-trip overheads, µs: dispatch to result, less the job's own run.
    overheads: VecDeque<u64>,
    /// Subtree nodes and the slot time they took, µs.
    nodes: u64,
    micros: u64,
}

impl Pace {
    /// A job dispatched at `dispatched` came back at `now`, having run `micros` for `nodes`
    /// nodes (`subtree`: a subtree job, whose rate is representative).
    pub(crate) fn record(
        &mut self,
        dispatched: u64,
        now: u64,
        micros: u64,
        nodes: u64,
        subtree: bool,
    ) {
        let overhead = now.saturating_sub(dispatched).saturating_sub(micros);
        if self.overheads.len() == SAMPLES {
            self.overheads.pop_front();
        }
        self.overheads.push_back(overhead);
        if subtree {
            self.nodes = self.nodes.saturating_add(nodes);
            self.micros = self.micros.saturating_add(micros);
        }
    }

    /// The round trip a job adds, µs: the smallest recent one (a job queued behind
    /// another on its executor only looks slower). 0 before any result.
    pub(crate) fn overhead_us(&self) -> u64 {
        self.overheads.iter().copied().min().unwrap_or(0)
    }

    /// Nodes per second of one slot.
    pub(crate) fn node_rate(&self) -> f64 {
        if self.micros < RATE_AFTER_US {
            return DEFAULT_RATE;
        }
        self.nodes as f64 * 1e6 / self.micros as f64
    }

    /// The nodes a job must hold to last `overheads` round trips.
    pub(crate) fn min_job(&self, overheads: f64) -> f64 {
        self.node_rate() * self.overhead_us() as f64 / 1e6 * overheads
    }

    /// Jobs per slot for a depth predicted to hold `nodes` over `slots` slots, at most
    /// `most`: one per slot unless each of `k` per slot still lasts `overheads` round
    /// trips. More jobs than slots balance the load (a slot that drew a light job takes
    /// another) but each costs a round trip its slot may wait out; fewer than one per
    /// slot only leave slots idle.
    pub(crate) fn jobs_per_slot(
        &self,
        nodes: f64,
        slots: usize,
        most: usize,
        overheads: f64,
    ) -> usize {
        let min_job = self.min_job(overheads);
        if min_job <= 0.0 {
            return most.max(1);
        }
        let k = nodes / (slots.max(1) as f64 * min_job);
        (k.floor() as usize).clamp(1, most.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_recent_round_trip_is_the_estimate() {
        let mut p = Pace::default();
        assert_eq!(p.overhead_us(), 0);
        p.record(0, 5_000, 1_000, 10, true);
        p.record(10_000, 12_500, 500, 10, true);
        assert_eq!(p.overhead_us(), 2_000);
        for i in 0..SAMPLES as u64 {
            p.record(i, i + 7_000, 0, 0, false);
        }
        assert_eq!(p.overhead_us(), 7_000, "old samples age out");
    }

    #[test]
    fn the_node_rate_is_measured_once_enough_work_was_timed() {
        let mut p = Pace::default();
        p.record(0, 10, 10, 1_000_000, true);
        assert_eq!(p.node_rate(), DEFAULT_RATE);
        p.record(0, 200_000, 200_000, 2_000_000, true);
        p.record(0, 10, 10, 5_000_000, false);
        let r = p.node_rate();
        assert!((r - 3e6 / 0.20001).abs() < 1.0, "{r}");
    }

    #[test]
    fn jobs_outlast_their_round_trip_or_there_is_one_per_slot() {
        let mut p = Pace::default();
        // No round trip measured (one process): as many as allowed.
        assert_eq!(p.jobs_per_slot(1e3, 4, 8, 10.0), 8);
        // 2 ms round trips at 3e7 nodes/s: a job of 10 round trips holds 6e5 nodes.
        p.record(0, 2_000, 0, 0, false);
        assert_eq!(p.jobs_per_slot(1e3, 4, 8, 10.0), 1);
        assert_eq!(p.jobs_per_slot(4.0 * 6e5 * 3.0, 4, 8, 10.0), 3);
        assert_eq!(p.jobs_per_slot(1e12, 4, 8, 10.0), 8);
    }
}
