//! A job's recorded nodes as the simulated executors spend them ([`JobNodes`]): the
//! nodes of its first `k` pieces for every `k`, and its pieces grouped in runs that a
//! thread takes at once ([`CHUNKS`] a job at most, to keep the replay fast).
//!
//! The mapping from a job, and from each of its pieces, to the recorded nodes it searches
//! and the solutions it finds is the replay's one mapping, [`Recorded::run`] (a
//! [`JobRun`]: its pieces in the order its threads take them, each with its nodes and
//! solutions, and what it reports when it ends), which the hollow worker shares. This
//! file only lays those pieces out for the executors' threads; nothing here knows
//! threads, time or events.
//!
//! [`Recorded::run`]: crate::splitsim::recorded::Recorded::run

use super::super::recorded::JobRun;

/// Runs of pieces a job's pieces are taken in at most (see the module doc).
pub const CHUNKS: usize = 256;

/// A job's recorded work: its pieces' nodes and solutions, and the runs its threads take
/// them in.
#[derive(Clone, Debug)]
pub struct JobNodes {
    /// What it does: its pieces, with their recorded nodes and solutions, and its output.
    pub run: JobRun,
    /// Nodes of its first `k` pieces, for every `k` (a shallow job: one piece).
    cum: Vec<u64>,
    /// Where its runs of pieces start, and the end of the last (its pieces to search).
    bounds: Vec<usize>,
}

impl JobNodes {
    /// The recorded work of `run`, its pieces to search in runs of about equal nodes.
    pub fn new(run: JobRun) -> JobNodes {
        let mut cum = vec![0u64];
        if run.batch.is_some() {
            cum.push(run.nodes);
        } else {
            for p in &run.pieces {
                let last = cum.last().copied().unwrap_or(0);
                cum.push(last + p.nodes);
            }
        }
        let runs = if run.batch.is_some() { 1 } else { run.runs };
        let total = cum[runs];
        let target = (total / CHUNKS as u64).max(1);
        let mut bounds = vec![0usize];
        let mut acc = 0u64;
        for k in 0..runs {
            acc += cum[k + 1] - cum[k];
            if acc >= target || k + 1 == runs {
                bounds.push(k + 1);
                acc = 0;
            }
        }
        JobNodes { run, cum, bounds }
    }

    /// Runs of pieces it searches.
    pub fn chunks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The nodes of run `c`.
    pub fn chunk_nodes(&self, c: usize) -> u64 {
        self.cum[self.bounds[c + 1]] - self.cum[self.bounds[c]]
    }

    /// The first piece of run `c` (`c` = [`JobNodes::chunks`]: the end of the last run,
    /// its pieces to search).
    pub fn chunk_start(&self, c: usize) -> usize {
        self.bounds[c]
    }

    /// The nodes of its first `k` pieces.
    pub fn nodes_before(&self, k: usize) -> u64 {
        self.cum[k]
    }

    /// The pieces started by a thread in run `c` once `done` nodes of the job are searched
    /// (its pieces before the run's counted in): those up to the one it is in, within the
    /// run.
    pub fn pieces_started(&self, c: usize, done: u64) -> usize {
        let mut k = self.bounds[c];
        while k + 1 < self.bounds[c + 1] && self.cum[k + 1] <= done {
            k += 1;
        }
        k + 1
    }

    /// Keeps only its first `kept` pieces (the rest were handed back): the run `kept`
    /// falls in is cut there, and the runs after it go.
    pub fn keep(&mut self, kept: usize) {
        if kept >= self.run.runs {
            return;
        }
        self.run.keep(kept);
        self.bounds.retain(|&b| b < kept);
        self.bounds.push(kept);
    }

    /// Counts its pieces' nodes again (after some kept only part of theirs: see
    /// [`JobRun::keep_entered`]); its runs stay as they are.
    pub fn recount(&mut self) {
        if self.run.batch.is_some() {
            return;
        }
        let mut cum = vec![0u64];
        for p in &self.run.pieces {
            let last = cum.last().copied().unwrap_or(0);
            cum.push(last + p.nodes);
        }
        self.cum = cum;
    }
}
