//! What a replay gave: the jobs run, and the figures made of them.

use tables::Move;

/// One job run on a simulated slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimJob {
    /// The job.
    pub id: u64,
    /// Its depth (0: the shallow job).
    pub depth: u8,
    /// The executor.
    pub exec: u64,
    /// Started and stopped on its slot, µs.
    pub start_us: u64,
    /// When it stopped.
    pub end_us: u64,
    /// Nodes it searched.
    pub nodes: u64,
    /// Whether a cancellation stopped it.
    pub cancelled: bool,
    /// Its shape: units, the longest unit's moves, piece levels (0s for a shallow job).
    pub shape: (u32, u8, u8),
}

impl SimJob {
    /// A job of depth `depth` that executor 1 ran from `start_us` to `end_us` to its end
    /// (not cancelled): a hand-made log's entry.
    pub fn ran(id: u64, depth: u8, start_us: u64, end_us: u64, nodes: u64) -> SimJob {
        SimJob {
            id,
            depth,
            exec: 1,
            start_us,
            end_us,
            nodes,
            cancelled: false,
            shape: (0, 0, 0),
        }
    }
}

/// Idle slot time by cause, in slot-µs, over the replay's wall time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Idle {
    /// Before the shallow job's result: the other slots wait for the lower bound.
    pub start: f64,
    /// Waiting for a depth that is not the last to end (nothing else to run).
    pub depth: f64,
    /// The last depth's last jobs: nothing left to hand out.
    pub tail: f64,
    /// A slot the scheduler counts as busy while its job or result is on the wire.
    pub dispatch: f64,
}

/// What a replay saw happen, for its report.
#[derive(Default)]
pub(super) struct Log {
    /// The jobs run, as they stopped.
    pub jobs: Vec<SimJob>,
    /// Idle slot time until the record.
    pub idle: Idle,
    /// When a job of the optimal depth holding a solution first ended on its slot (µs).
    pub first_solution: Option<u64>,
    /// Jobs that answered a request to split while they held it.
    pub splits: u64,
    /// The scheduler's own counts: jobs made, jobs dispatched (each attempt) and running
    /// jobs asked to hand back (what a real coordinator's metrics count).
    pub created: u64,
    pub dispatched: u64,
    pub splits_asked: u64,
}

/// What a replay gave.
#[derive(Clone, Debug)]
pub struct SplitReport {
    /// Threads in all.
    pub threads: usize,
    /// Time to the record, µs.
    pub wall_us: u64,
    /// The same trace on one thread, no latency, the default configuration, µs.
    pub one_thread_us: u64,
    /// Nodes searched in all (cancelled work included).
    pub nodes: u64,
    /// Nodes searched by the one-thread run.
    pub one_thread_nodes: u64,
    /// Nodes of jobs that started while a job of a shallower depth still ran: the early
    /// start at work (the shallow job, depth 0, does not count as a depth).
    pub early_started_nodes: u64,
    /// Nodes of jobs at depths past the optimal one (started early, and wasted).
    pub past_optimal_nodes: u64,
    /// Nodes of jobs stopped by a cancellation.
    pub cancelled_nodes: u64,
    /// Nodes at the optimal depth searched after the first solution was found.
    pub after_solution_nodes: u64,
    /// Idle slot time by cause.
    pub idle: Idle,
    /// Jobs run (each attempt).
    pub jobs: Vec<SimJob>,
    /// The solutions of the record.
    pub solutions: Vec<Vec<Move>>,
    /// Running jobs that answered a request to split (handing back what they had not
    /// started).
    pub splits: u64,
    /// Jobs the scheduler made, as `cubeswarm_jobs_created_total`.
    pub created: u64,
    /// Jobs the scheduler dispatched (each attempt), as `cubeswarm_jobs_dispatched_total`.
    pub dispatched: u64,
    /// Running jobs it asked to hand back, as `cubeswarm_splits_asked_total`.
    pub splits_asked: u64,
}

impl SplitReport {
    /// The report of a replay on `threads` threads whose record came at `wall_us` with
    /// `solutions`, from what it saw and the optimal depth; its one-thread figures are its
    /// own.
    pub(super) fn new(
        threads: usize,
        wall_us: u64,
        solutions: Vec<Vec<Move>>,
        log: Log,
        optimal: u8,
    ) -> SplitReport {
        let Log {
            mut jobs,
            idle,
            first_solution,
            splits,
            created,
            dispatched,
            splits_asked,
        } = log;
        jobs.sort_by_key(|j| (j.start_us, j.id));
        let mut r = SplitReport {
            threads,
            wall_us,
            one_thread_us: wall_us,
            nodes: 0,
            one_thread_nodes: 0,
            early_started_nodes: 0,
            past_optimal_nodes: 0,
            cancelled_nodes: 0,
            after_solution_nodes: 0,
            idle,
            jobs: Vec::new(),
            solutions,
            splits,
            created,
            dispatched,
            splits_asked,
        };
        // The last end of each depth's jobs, and of every depth shallower than each.
        let mut depth_end = std::collections::BTreeMap::<u8, u64>::new();
        for j in jobs.iter().filter(|j| j.depth != 0) {
            let e = depth_end.entry(j.depth).or_default();
            *e = (*e).max(j.end_us);
        }
        let shallower_end = |d: u8| depth_end.range(..d).map(|(_, &e)| e).max();
        for j in &jobs {
            r.nodes += j.nodes;
            if j.depth > optimal && j.depth != 0 {
                r.past_optimal_nodes += j.nodes;
            }
            if j.depth != 0 && shallower_end(j.depth).is_some_and(|e| j.start_us < e) {
                r.early_started_nodes += j.nodes;
            }
            if j.cancelled {
                r.cancelled_nodes += j.nodes;
            }
            if let Some(ts) = first_solution {
                if j.depth == optimal && j.end_us > ts {
                    let from = j.start_us.max(ts);
                    let share = (j.end_us - from) as f64 / (j.end_us - j.start_us).max(1) as f64;
                    r.after_solution_nodes += (j.nodes as f64 * share) as u64;
                }
            }
        }
        r.one_thread_nodes = r.nodes;
        r.jobs = jobs;
        r
    }

    /// One-thread time over this time.
    pub fn speedup(&self) -> f64 {
        self.one_thread_us as f64 / self.wall_us.max(1) as f64
    }

    /// Speedup per thread.
    pub fn efficiency(&self) -> f64 {
        self.speedup() / self.threads.max(1) as f64
    }

    /// The share of the slot time (threads × wall) not idle: what the scheduler keeps
    /// busy, whatever the work it runs.
    pub fn busy(&self) -> f64 {
        let slot_us = self.threads as f64 * self.wall_us as f64;
        let Idle {
            start,
            depth,
            tail,
            dispatch,
        } = self.idle;
        (1.0 - (start + depth + tail + dispatch) / slot_us.max(1.0)).max(0.0)
    }

    /// Nodes searched over the one-thread run's: above 1, work the one thread did not
    /// need (its first solution came earlier in its order, or cancelled work); below 1,
    /// a first solution met sooner than the one thread met it. The efficiency is
    /// [`SplitReport::busy`] over this, up to the one-thread run's own start.
    pub fn work(&self) -> f64 {
        self.nodes as f64 / self.one_thread_nodes.max(1) as f64
    }
}

impl std::fmt::Display for SplitReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |us: u64| us as f64 / 1e6;
        let slot_s = self.threads as f64 * s(self.wall_us);
        let pct = |x: f64| 100.0 * x / 1e6 / slot_s.max(1e-12);
        writeln!(
            f,
            "wall {:.3} s simulated; one thread {:.3} s; speedup {:.2}",
            s(self.wall_us),
            s(self.one_thread_us),
            self.speedup()
        )?;
        writeln!(
            f,
            "nodes {:.4e} = {:.3} x one thread ({:.4e}); started early {:.3e}, past the \
             optimal depth {:.3e}, cancelled {:.3e}, after the solution {:.3e}",
            self.nodes as f64,
            self.nodes as f64 / self.one_thread_nodes.max(1) as f64,
            self.one_thread_nodes as f64,
            self.early_started_nodes as f64,
            self.past_optimal_nodes as f64,
            self.cancelled_nodes as f64,
            self.after_solution_nodes as f64
        )?;
        writeln!(
            f,
            "idle: start {:.1}%, waiting for a depth {:.1}%, tail {:.1}%, dispatch {:.1}% \
             of {:.1} slot-seconds; {} jobs run, {} split; jobs made {}, dispatched {}, \
             hand-backs asked {}",
            pct(self.idle.start),
            pct(self.idle.depth),
            pct(self.idle.tail),
            pct(self.idle.dispatch),
            slot_s,
            self.jobs.len(),
            self.splits,
            self.created,
            self.dispatched,
            self.splits_asked
        )?;
        writeln!(
            f,
            "busy {:.3} of the slot time, over nodes {:.3} x one thread's",
            self.busy(),
            self.work()
        )?;
        write!(
            f,
            "efficiency {:.3} at {} threads",
            self.efficiency(),
            self.threads
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, depth: u8, start_us: u64, end_us: u64, nodes: u64) -> SimJob {
        SimJob::ran(id, depth, start_us, end_us, nodes)
    }

    /// A job counts as started early when a job of a shallower depth (not the shallow
    /// job) was still running as it started; past the optimal depth is its own count.
    #[test]
    fn early_started_nodes_are_those_overlapping_a_shallower_depth() {
        let log = Log {
            jobs: vec![
                job(1, 0, 0, 50, 1),
                job(2, 13, 60, 100, 10),
                job(3, 13, 60, 300, 20),
                job(4, 14, 200, 400, 40),
                job(5, 14, 310, 500, 80),
                job(6, 15, 450, 600, 160),
            ],
            ..Log::default()
        };
        let r = SplitReport::new(2, 600, Vec::new(), log, 14);
        // Job 4 started while job 3 (depth 13) ran; job 6 while job 5 (depth 14) ran.
        assert_eq!(r.early_started_nodes, 40 + 160);
        assert_eq!(r.past_optimal_nodes, 160);
        assert_eq!(r.nodes, 311);
    }
}
