//! The search of a hollow worker (`cubeswarm bench hollow-worker`): a recorded trace's,
//! charged as the replay charges it. Each subtree job's pieces cost and hold what
//! `splitsim`'s [`Recorded`] says the same job's pieces cost and hold in a replay (one
//! mapping from a job to its recorded nodes, for both), held on the worker's threads at a
//! node rate per thread; the shallow job answers as the recording's did.
//!
//! Everything else about a hollow worker is the real worker's: `worker::hollow` has the
//! engine, and the worker session serves it.

use crate::splitsim::recorded::{shallow_result, Recorded};
use crate::trace::Trace;
use proto::{Job, JobId, PositionResult, SubtreeWork, ValidSettings, Work};
use std::sync::Mutex;
use tables::{Move, Position};
use worker::hollow::{hold, settle, HollowPiece, HollowSearch};
use worker::{Error, StopToken};

/// A trace's search at a node rate per thread.
pub struct TraceSearch {
    /// The trace's job costs, made as they are first asked for (shared by the worker's
    /// threads: asked once a job).
    recorded: Mutex<Recorded<'static>>,
    /// The trace (kept for the process's life: the costs borrow it).
    trace: &'static Trace,
    /// Nodes a thread searches a second.
    rate: f64,
}

impl TraceSearch {
    /// The search of `trace` at `rate` nodes a second per thread, its depths' counts
    /// worked out now (a second or so a depth). The trace lives as long as the process (a
    /// hollow worker serves one trace).
    pub fn new(trace: Trace, rate: f64) -> TraceSearch {
        let trace: &'static Trace = Box::leak(Box::new(trace));
        let mut recorded = Recorded::new(trace);
        // Every depth a job can be of: from the split to two past the last recorded (a
        // depth started early).
        let last = trace.depths.keys().next_back().copied().unwrap_or(0);
        for depth in trace.header.split_depth..=last.saturating_add(2) {
            if let Err(e) = recorded.warm(depth) {
                tracing::warn!("hollow search, depth {depth}: {e}");
            }
        }
        TraceSearch {
            recorded: Mutex::new(recorded),
            trace,
            rate,
        }
    }

    /// The table the trace was recorded with: what the hollow worker says it holds.
    pub fn table(&self) -> &str {
        &self.trace.header.table
    }
}

impl HollowSearch for TraceSearch {
    fn pieces(&self, work: &SubtreeWork) -> Vec<HollowPiece> {
        let job = Job {
            id: JobId(0),
            attempt: 1,
            table: self.trace.header.table.clone(),
            work: Work::Subtrees(work.clone()),
        };
        let mut recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
        match recorded.run(&job) {
            Ok(run) => (run.pieces.into_iter())
                .map(|p| HollowPiece {
                    nodes: p.nodes,
                    solutions: p.solutions,
                    moves: p.moves,
                })
                .collect(),
            // A depth the trace cannot cost (it says why when it is replayed): nothing in
            // it, at no cost.
            Err(e) => {
                tracing::warn!("hollow search: {e}");
                Vec::new()
            }
        }
    }

    fn rate(&self) -> f64 {
        self.rate
    }

    fn children(&self, depth: u8, moves: &[Move], nodes: u64) -> Vec<u64> {
        let mut recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
        match recorded.children(depth, moves, nodes) {
            Ok(kids) => kids,
            // Not to be: the piece's own count was had at the same depth.
            Err(e) => {
                tracing::warn!("hollow search: {e}");
                Vec::new()
            }
        }
    }

    fn position(
        &self,
        _position: &Position,
        _settings: &ValidSettings,
        stop: &StopToken,
    ) -> Result<PositionResult, Error> {
        let mut r = shallow_result(&self.trace.header, 0);
        if let Some(s) = hold(r.nodes, self.rate, stop).or_else(|| settle(stop)) {
            r.stop = s;
            r.depth_exhausted = None;
        }
        Ok(r)
    }
}
