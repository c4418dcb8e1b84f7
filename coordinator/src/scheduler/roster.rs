//! The executors a scheduler knows, with the indexes that keep dispatch and leases cheap
//! with a thousand executors: free slots in all, executors with room, and the busy ones
//! ordered by lease renewal. Every change to an executor goes through [`Roster::update`]
//! (or insert/remove), which keeps the indexes in step.

use crate::executor::ExecutorId;
use proto::JobId;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// One executor as the scheduler sees it.
#[derive(Debug)]
pub(crate) struct ExecState {
    /// Jobs it may run at once (0: draining, it gets no new jobs).
    pub capacity: usize,
    /// The tables it holds.
    pub tables: BTreeSet<String>,
    /// The jobs it runs (their leases are its).
    pub running: BTreeSet<JobId>,
    /// When it last gave a sign of life (µs).
    pub lease_renewed: u64,
    /// An answer of its failed its check: it gets no more work (its capacity stays 0).
    pub distrusted: bool,
    /// Its answers are taken on its word (an executor in this process).
    pub trusted: bool,
    /// It hands back a running job's unstarted pieces when asked.
    pub hands_back: bool,
    /// Its threads share a job's pieces: a thread with no job of its own helps a running
    /// one, so one job keeps all of them busy.
    pub shares: bool,
    /// Jobs it runs at once (its capacity less the jobs it queues ahead); 0: as many
    /// as its capacity.
    pub threads: usize,
}

impl ExecState {
    fn free(&self) -> usize {
        self.capacity.saturating_sub(self.running.len())
    }

    /// Its threads without a job (a job sent now starts at once).
    fn idle(&self) -> usize {
        let threads = match self.threads {
            0 => self.capacity,
            t => t.min(self.capacity),
        };
        threads.saturating_sub(self.running.len())
    }

    fn mark(&self) -> Mark {
        Mark {
            capacity: self.capacity,
            free: self.free(),
            idle: self.idle(),
            busy: !self.running.is_empty(),
            renewed: self.lease_renewed,
        }
    }
}

/// What the indexes know of one executor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Mark {
    capacity: usize,
    free: usize,
    idle: usize,
    busy: bool,
    renewed: u64,
}

/// The executors, by id, and their indexes.
#[derive(Debug, Default)]
pub(crate) struct Roster {
    executors: BTreeMap<ExecutorId, ExecState>,
    /// Free slots over every executor.
    free_slots: usize,
    /// Threads without a job over every executor.
    idle_threads: usize,
    /// Executors with a thread without a job.
    with_idle: BTreeSet<ExecutorId>,
    /// Capacity over every executor.
    capacity: usize,
    /// Executors running at least one job.
    busy: usize,
    /// Executors with a free slot, for dispatch.
    with_room: BTreeSet<ExecutorId>,
    /// Busy executors by lease renewal, for lease expiry.
    leases: BTreeSet<(u64, ExecutorId)>,
}

impl Roster {
    /// Adds `e` as `id`; an executor already under that id is removed first and
    /// returned.
    pub fn insert(&mut self, id: ExecutorId, e: ExecState) -> Option<ExecState> {
        let old = self.remove(id);
        self.reindex(id, Mark::default(), e.mark());
        self.executors.insert(id, e);
        old
    }

    /// Removes an executor.
    pub fn remove(&mut self, id: ExecutorId) -> Option<ExecState> {
        let e = self.executors.remove(&id)?;
        self.reindex(id, e.mark(), Mark::default());
        Some(e)
    }

    /// Changes an executor (`None` when it is unknown).
    pub fn update<T>(&mut self, id: ExecutorId, f: impl FnOnce(&mut ExecState) -> T) -> Option<T> {
        let e = self.executors.get_mut(&id)?;
        let before = e.mark();
        let out = f(e);
        let after = e.mark();
        if before != after {
            self.reindex(id, before, after);
        }
        Some(out)
    }

    pub fn get(&self, id: ExecutorId) -> Option<&ExecState> {
        self.executors.get(&id)
    }

    pub fn ids(&self) -> impl Iterator<Item = ExecutorId> + '_ {
        self.executors.keys().copied()
    }

    pub fn values(&self) -> impl Iterator<Item = &ExecState> {
        self.executors.values()
    }

    pub fn len(&self) -> usize {
        self.executors.len()
    }

    pub fn free_slots(&self) -> usize {
        self.free_slots
    }

    /// Threads without a job (free slots less the room executors keep for jobs queued
    /// ahead).
    pub fn idle_threads(&self) -> usize {
        self.idle_threads
    }

    /// The first executor with a thread without a job after `after`, in id order.
    pub fn next_with_idle(&self, after: Option<ExecutorId>) -> Option<ExecutorId> {
        match after {
            None => self.with_idle.first().copied(),
            Some(a) => self
                .with_idle
                .range((Bound::Excluded(a), Bound::Unbounded))
                .next()
                .copied(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn busy(&self) -> usize {
        self.busy
    }

    /// The first executor with room after `after` (from the first with `None`), in id
    /// order.
    pub fn next_with_room(&self, after: Option<ExecutorId>) -> Option<ExecutorId> {
        match after {
            None => self.with_room.first().copied(),
            Some(a) => self
                .with_room
                .range((Bound::Excluded(a), Bound::Unbounded))
                .next()
                .copied(),
        }
    }

    /// The busy executor renewed longest ago, with its renewal time.
    pub fn oldest_lease(&self) -> Option<(u64, ExecutorId)> {
        self.leases.first().copied()
    }

    fn reindex(&mut self, id: ExecutorId, b: Mark, a: Mark) {
        // Each sum holds the executor's old share, so neither subtraction underflows.
        self.free_slots = self.free_slots - b.free + a.free;
        self.idle_threads = self.idle_threads - b.idle + a.idle;
        match (b.idle > 0, a.idle > 0) {
            (true, false) => {
                self.with_idle.remove(&id);
            }
            (false, true) => {
                self.with_idle.insert(id);
            }
            _ => {}
        }
        self.capacity = self.capacity - b.capacity + a.capacity;
        match (b.busy, a.busy) {
            (true, false) => {
                self.busy -= 1;
                self.leases.remove(&(b.renewed, id));
            }
            (false, true) => {
                self.busy += 1;
                self.leases.insert((a.renewed, id));
            }
            (true, true) if b.renewed != a.renewed => {
                self.leases.remove(&(b.renewed, id));
                self.leases.insert((a.renewed, id));
            }
            _ => {}
        }
        match (b.free > 0, a.free > 0) {
            (true, false) => {
                self.with_room.remove(&id);
            }
            (false, true) => {
                self.with_room.insert(id);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(capacity: usize, renewed: u64) -> ExecState {
        ExecState {
            capacity,
            tables: BTreeSet::new(),
            running: BTreeSet::new(),
            lease_renewed: renewed,
            distrusted: false,
            trusted: false,
            hands_back: false,
            shares: false,
            threads: 0,
        }
    }

    #[test]
    fn indexes_follow_every_change() {
        let mut p = Roster::default();
        p.insert(ExecutorId(1), exec(2, 0));
        p.insert(ExecutorId(2), exec(1, 0));
        assert_eq!((p.free_slots(), p.capacity(), p.busy()), (3, 3, 0));
        p.update(ExecutorId(2), |e| e.running.insert(JobId(7)));
        assert_eq!((p.free_slots(), p.busy()), (2, 1));
        assert_eq!(p.next_with_room(None), Some(ExecutorId(1)));
        assert_eq!(p.next_with_room(Some(ExecutorId(1))), None);
        assert_eq!(p.oldest_lease(), Some((0, ExecutorId(2))));
        p.update(ExecutorId(2), |e| e.lease_renewed = 5);
        assert_eq!(p.oldest_lease(), Some((5, ExecutorId(2))));
        // Draining below what runs: no room, still busy.
        p.update(ExecutorId(1), |e| {
            e.running.insert(JobId(8));
            e.capacity = 0;
        });
        assert_eq!((p.free_slots(), p.capacity(), p.busy()), (0, 1, 2));
        assert_eq!(p.next_with_room(None), None);
        // Rejoining under the same id replaces the old state.
        let old = p.insert(ExecutorId(1), exec(4, 9));
        assert_eq!(old.map(|e| e.running.len()), Some(1));
        assert_eq!((p.free_slots(), p.capacity(), p.busy()), (4, 5, 1));
        p.remove(ExecutorId(2));
        assert_eq!(
            (p.free_slots(), p.capacity(), p.busy(), p.len()),
            (4, 4, 0, 1)
        );
        assert_eq!(p.oldest_lease(), None);
    }
}
