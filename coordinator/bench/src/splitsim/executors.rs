//! The simulated executors: the driver's handles on them, and their slots in virtual
//! time.
//!
//! The driver submits and cancels through a [`Handle`], which only posts what it was
//! told to the [`Outbox`]; the replay delivers it a latency later to the executor's
//! [`Slots`], which run each job for its recorded nodes at the replay's node rate.
//!
//! A job runs on the thread that starts it, taking its pieces in order. When an executor
//! shares jobs (as a worker does, `runner::RunnerOptions::share_jobs`), a thread with no
//! job waiting to start joins the running job with the most pieces not yet taken and
//! takes pieces from the same list; such a helper leaves at the end of a piece when a
//! job is waiting. To keep the replay fast, a job's pieces are taken in runs of pieces
//! ([`CHUNKS`] a job at most); a request to split is answered to the piece.
//!
//! # Layout
//! - this file: the driver's [`Handle`] on an executor, and what it posts ([`Order`]);
//! - `job_nodes`: a job's recorded pieces (`recorded`'s one mapping from a job to its
//!   nodes and solutions) laid out in runs for the threads ([`JobNodes`]);
//! - `running`: a job on an executor's threads, its threads taking its runs in virtual
//!   time;
//! - `slots`: every executor's threads and jobs ([`Slots`]): arrivals, starts, joins,
//!   leaves, ends, cancellations and heartbeats;
//! - `handback`: a request to hand back what a job has not started, answered to the
//!   piece.
//!
//! [`CHUNKS`]: job_nodes::CHUNKS
//! [`JobNodes`]: job_nodes::JobNodes

mod handback;
pub mod job_nodes;
mod running;
mod slots;

pub(super) use self::slots::Slots;

use coordinator::executor::{Executor, ExecutorId};
use proto::{Job, JobId};
use std::cell::RefCell;

/// The one table the simulated executors hold.
pub(super) const TABLE: &str = "trace";

/// What the driver told the executors, in order, not yet on the wire.
pub(super) type Outbox = RefCell<Vec<(ExecutorId, Order)>>;

/// One thing the driver told an executor.
pub(super) enum Order {
    /// Run this job.
    Submit(Job),
    /// Stop this job.
    Cancel(JobId),
    /// Hand back what this attempt of this job has not started.
    Split(JobId, u32),
}

/// The driver's handle on a simulated executor.
pub(super) struct Handle<'a> {
    /// Its id.
    pub id: ExecutorId,
    /// Its threads.
    pub threads: usize,
    /// Jobs it holds beyond its threads.
    pub queue_ahead: usize,
    /// Its threads share a job's pieces.
    pub share: bool,
    /// Where what it is told goes.
    pub outbox: &'a Outbox,
}

impl Executor for Handle<'_> {
    fn capacity(&self) -> usize {
        self.threads + self.queue_ahead
    }
    fn threads(&self) -> u32 {
        u32::try_from(self.threads).unwrap_or(u32::MAX)
    }
    fn tables(&self) -> Vec<String> {
        vec![TABLE.to_string()]
    }
    fn trusted(&self) -> bool {
        // The replay measures the search's schedule; checks of claims are not in it
        // (docs/scale.md says what they add).
        true
    }
    fn submit(&self, job: Job) {
        self.outbox.borrow_mut().push((self.id, Order::Submit(job)));
    }
    fn cancel(&self, job: JobId) {
        self.outbox.borrow_mut().push((self.id, Order::Cancel(job)));
    }
    fn can_split(&self) -> bool {
        true
    }
    fn shares_jobs(&self) -> bool {
        self.share
    }
    fn split(&self, job: JobId, attempt: u32) -> Option<proto::Handback> {
        self.outbox
            .borrow_mut()
            .push((self.id, Order::Split(job, attempt)));
        None
    }
    fn name(&self) -> String {
        format!("simulated {}", self.id.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::events::Ev;
    use super::super::recorded::{JobRun, Piece};
    use super::*;
    use proto::{SubtreeWork, Work};
    use std::collections::HashMap;

    /// One node per µs.
    const RATE: f64 = 1e6;

    /// A subtree job of `depth` whose pieces hold `pieces` nodes each.
    fn job_of(id: u64, depth: u8, pieces: &[u64]) -> (Job, JobRun) {
        let job = Job {
            id: JobId(id),
            attempt: 1,
            table: TABLE.to_string(),
            work: Work::Subtrees(SubtreeWork {
                position: tables::Position::SOLVED,
                depth,
                prefixes: Vec::new(),
                max_solutions: None,
                time_limit_ms: None,
                pieces: 1,
                split: false,
            }),
        };
        let run = JobRun {
            depth,
            nodes: pieces.iter().sum(),
            batch: None,
            pieces: (pieces.iter())
                .map(|&nodes| Piece {
                    owner: 0,
                    nodes,
                    solutions: Vec::new(),
                    moves: Vec::new(),
                })
                .collect(),
            runs: pieces.len(),
            want: usize::MAX,
            shape: (1, 4, 1),
            split: false,
        };
        (job, run)
    }

    /// [`job_of`] sent with `split`, its pieces the one-move prefixes `U`, `U2`, ….
    fn split_job_of(id: u64, depth: u8, pieces: &[u64]) -> (Job, JobRun) {
        let (job, mut run) = job_of(id, depth, pieces);
        run.split = true;
        for (p, m) in run.pieces.iter_mut().zip(tables::Move::ALL) {
            p.moves = vec![m];
        }
        (job, run)
    }

    use super::super::recorded::Costs;

    /// Each one-move extension's nodes: equal shares of 1,350 a one-move piece.
    struct EqualKids;

    impl Costs for EqualKids {
        fn children(&mut self, _: u8, moves: &[tables::Move], nodes: u64) -> Vec<u64> {
            let n = u64::from(proto::pieces::children(moves.last().copied()));
            (0..n)
                .map(|i| nodes * (i + 1) / n - nodes * i / n)
                .collect()
        }

        fn cost(&mut self, depth: u8, moves: &[tables::Move]) -> u64 {
            let (mut at, mut nodes) = (vec![moves[0]], 1_350);
            for &m in &moves[1..] {
                let kids = self.children(depth, &at, nodes);
                let i = proto::pieces::child_index(at.last().copied(), m).unwrap_or(0);
                nodes = kids[i as usize];
                at.push(m);
            }
            nodes
        }
    }

    /// One executor of `threads` threads; its events, run in time order, with every job
    /// that ended: (id, start, end, nodes).
    struct World {
        slots: Slots,
        runs: HashMap<u64, JobRun>,
        events: super::super::events::Events,
        ended: Vec<(u64, u64, u64, u64)>,
        now: u64,
    }

    const E: ExecutorId = ExecutorId(1);

    impl World {
        fn new(threads: usize, share: bool) -> World {
            World::at_rate(threads, share, RATE)
        }

        fn at_rate(threads: usize, share: bool, rate: f64) -> World {
            World {
                slots: Slots::new(1, threads, rate, share),
                runs: HashMap::new(),
                events: Default::default(),
                ended: Vec::new(),
                now: 0,
            }
        }

        fn arrive(&mut self, (job, run): (Job, JobRun)) {
            self.runs.insert(job.id.0, run);
            self.slots.arrive(E, job);
            self.settle();
        }

        fn settle(&mut self) {
            let runs = &self.runs;
            let mut make = |j: &Job| Ok(runs[&j.id.0].clone());
            self.slots.fill(self.now, &mut make).unwrap();
            for (at, ev) in self.slots.take_due() {
                self.events.push(at, ev);
            }
        }

        /// Runs the events up to `until`.
        fn run_to(&mut self, until: u64) {
            while self.events.next_at().is_some_and(|t| t <= until) {
                let Some((t, ev)) = self.events.pop() else {
                    break;
                };
                self.now = t;
                match ev {
                    Ev::Free(e, id, lane, v) => {
                        if let Some((j, _, _)) = self.slots.free(e, id, lane, v, t) {
                            self.ended.push((j.id, j.start_us, j.end_us, j.nodes));
                        }
                    }
                    Ev::Leave(e) => self.slots.leave(e, t),
                    _ => unreachable!("only the executor's own events"),
                }
                self.settle();
            }
            self.now = until;
        }
    }

    #[test]
    fn a_free_thread_takes_pieces_of_a_running_job() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100, 100, 100, 100]));
        w.run_to(10_000);
        assert_eq!(w.ended, vec![(1, 0, 200, 400)]);
        // One job a thread, as before: the other thread idles.
        let mut w = World::new(2, false);
        w.arrive(job_of(1, 14, &[100, 100, 100, 100]));
        w.run_to(10_000);
        assert_eq!(w.ended, vec![(1, 0, 400, 400)]);
    }

    #[test]
    fn a_shared_job_hands_back_what_none_of_its_threads_started() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 20]));
        w.run_to(50);
        // Pieces 0 and 1 run; the six each thread took ahead are kept.
        let h = w.slots.split(E, 1, 1, 50, &mut EqualKids);
        assert_eq!(h.kept, Some(14));
        assert!(h.split.is_empty(), "not sent with split");
        for (at, ev) in w.slots.take_due() {
            w.events.push(at, ev);
        }
        w.run_to(10_000);
        assert_eq!(w.ended, vec![(1, 0, 700, 1_400)]);
    }

    #[test]
    fn a_job_with_every_piece_taken_hands_back_what_its_running_pieces_have_not_entered() {
        let mut w = World::new(2, true);
        w.arrive(split_job_of(1, 14, &[1_350, 1_350]));
        w.run_to(50);
        // Both pieces run, 50 nodes in: each keeps the part its search is in on each of
        // the three levels (1,350 nodes: 90 an extension, 6 a second-level one, …).
        let h = w.slots.split(E, 1, 1, 50, &mut EqualKids);
        assert_eq!(h.kept, Some(2));
        let paths: Vec<(u32, Vec<u32>)> = h
            .split
            .iter()
            .map(|s| (s.piece, s.entered.clone()))
            .collect();
        assert_eq!(paths.len(), 2);
        for (k, (piece, path)) in paths.iter().enumerate() {
            assert_eq!(*piece as usize, k);
            assert_eq!(path.len(), proto::pieces::SPLIT_LEVELS, "{path:?}");
            assert_eq!(path[0], 1, "still in the first extension");
        }
        for (at, ev) in w.slots.take_due() {
            w.events.push(at, ev);
        }
        w.run_to(10_000);
        let [(id, start, end, nodes)] = w.ended[..] else {
            panic!("{:?}", w.ended)
        };
        assert_eq!((id, start), (1, 0));
        // Each thread ends the third-level part it was in, not its 1,350-node piece.
        assert!((50..60).contains(&end), "ended at {end}");
        assert!((100..120).contains(&nodes), "{nodes} nodes");
    }

    #[test]
    fn a_helper_leaves_at_its_pieces_end_for_a_waiting_job() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 4]));
        w.run_to(50);
        w.arrive(job_of(2, 14, &[100]));
        w.run_to(10_000);
        // The helper ends piece 1 at 100 and starts job 2; job 1's own thread searches
        // pieces 2 and 3.
        assert_eq!(w.ended, vec![(2, 100, 200, 100), (1, 0, 300, 400)]);
    }

    #[test]
    fn a_shallower_running_job_is_helped_before_a_deeper_one_starts() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 4]));
        w.arrive(job_of(2, 15, &[100]));
        w.run_to(10_000);
        // The second thread helps depth 14 first: job 2 starts once job 1 has no piece
        // left to take.
        assert_eq!(w.ended, vec![(1, 0, 200, 400), (2, 200, 300, 100)]);
    }

    #[test]
    fn a_thread_leaves_a_deeper_job_at_its_pieces_end_for_a_shallower_one() {
        // 100 nodes take 333.3 µs: a piece ends between two ticks, and the thread leaves
        // there rather than take the next piece.
        let mut w = World::at_rate(1, true, 3e5);
        w.arrive(job_of(1, 15, &[100; 4]));
        w.run_to(400);
        w.arrive(job_of(2, 14, &[100]));
        w.run_to(10_000);
        // Piece 1 ends at 666.7; job 2 runs from there, then job 1's pieces 2 and 3.
        assert_eq!(w.ended, vec![(2, 667, 1_001, 100), (1, 0, 1_668, 400)]);
    }

    #[test]
    fn a_cancelled_shared_job_counts_what_its_threads_searched() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 4]));
        w.run_to(150);
        let j = w.slots.cancel(E, 1, 150).unwrap();
        assert_eq!((j.nodes, j.cancelled), (300, true));
        w.run_to(10_000);
        assert!(w.ended.is_empty(), "a cancelled job does not end again");
    }
}
