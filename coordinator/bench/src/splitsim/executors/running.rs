//! A job on an executor's threads ([`Running`]): its threads ([`Lane`]s) taking its runs
//! of pieces in order, in virtual time, and the nodes searched by a given time.

use super::super::recorded::JobRun;
use super::job_nodes::JobNodes;

/// One thread working on a job.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lane {
    /// Its id, unique in the replay.
    pub(super) id: u64,
    /// When the run of pieces it took last started, µs.
    pub(super) from: f64,
    /// When that run ends (when it joined, before it took one), µs.
    pub(super) busy: f64,
    /// The run it took last.
    pub(super) chunk: Option<usize>,
    /// It joined a job another thread started (it leaves when a job waits).
    pub(super) helper: bool,
}

/// A job on an executor's threads.
pub(super) struct Running {
    /// Started at, µs.
    pub(super) start: u64,
    /// The attempt it runs as.
    pub(super) attempt: u32,
    /// What it does: its pieces' nodes and solutions, in runs.
    pub(super) job: JobNodes,
    /// Runs taken so far.
    pub(super) next: usize,
    /// The threads on it.
    pub(super) lanes: Vec<Lane>,
    /// Changes whenever its threads' future changes (ids unique in the replay): a
    /// thread's end made before that is stale.
    pub(super) version: u64,
    /// What it kept when it handed back its unclaimed pieces (asked again, it keeps
    /// them: `PieceCursor::hand_back_split`).
    pub(super) kept: Option<usize>,
}

impl Running {
    pub(super) fn new(start: u64, attempt: u32, run: JobRun) -> Running {
        Running {
            start,
            attempt,
            job: JobNodes::new(run),
            next: 0,
            lanes: Vec::new(),
            version: 0,
            kept: None,
        }
    }

    /// Thread `id` joins it at `t` (`helper`: it did not start it) and takes a run.
    pub(super) fn join(&mut self, id: u64, t: f64, helper: bool, rate: f64) {
        self.lanes.push(Lane {
            id,
            from: t,
            busy: t,
            chunk: None,
            helper,
        });
        self.advance(t, true, None, rate);
    }

    /// Pieces not yet taken.
    pub(super) fn untaken(&self) -> usize {
        self.job.chunk_start(self.job.chunks()) - self.job.chunk_start(self.next)
    }

    /// The lane free first, other than `except`.
    fn earliest(&self, except: Option<u64>) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, l) in self.lanes.iter().enumerate() {
            if Some(l.id) == except {
                continue;
            }
            if best.is_none_or(|b| l.busy < self.lanes[b].busy) {
                best = Some(i);
            }
        }
        best
    }

    /// Lanes free before `t` (or at it, when `inclusive`), but `except`, take runs in
    /// order, the one free first first.
    pub(super) fn advance(&mut self, t: f64, inclusive: bool, except: Option<u64>, rate: f64) {
        while self.next < self.job.chunks() {
            let Some(i) = self.earliest(except) else {
                return;
            };
            let b = self.lanes[i].busy;
            if !(b < t || (inclusive && b <= t)) {
                return;
            }
            let d = self.job.chunk_nodes(self.next) as f64 * 1e6 / rate;
            let l = &mut self.lanes[i];
            l.from = b;
            l.busy = b + d;
            l.chunk = Some(self.next);
            self.next += 1;
        }
    }

    /// When each lane runs out of pieces if nothing changes: its id, and the time.
    pub(super) fn project(&self, rate: f64) -> Vec<(u64, f64)> {
        let mut busy: Vec<f64> = self.lanes.iter().map(|l| l.busy).collect();
        for c in self.next..self.job.chunks() {
            let mut i = 0;
            for (j, b) in busy.iter().enumerate() {
                if *b < busy[i] {
                    i = j;
                }
            }
            if let Some(b) = busy.get_mut(i) {
                *b += self.job.chunk_nodes(c) as f64 * 1e6 / rate;
            }
        }
        self.lanes.iter().map(|l| l.id).zip(busy).collect()
    }

    /// Nodes searched by `now`.
    pub(super) fn done(&self, now: f64, rate: f64) -> u64 {
        let taken = self.job.nodes_before(self.job.chunk_start(self.next));
        let left: f64 = (self.lanes.iter())
            .filter(|l| l.chunk.is_some())
            .map(|l| (l.busy - now).max(0.0) * rate / 1e6)
            .sum();
        taken.saturating_sub(left as u64)
    }
}
