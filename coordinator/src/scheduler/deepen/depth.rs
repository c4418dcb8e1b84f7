//! One depth of a split position, from its start to its end: its jobs counted open (and
//! replaced when they hand back or are cut again), their results absorbed, the depth
//! proved empty (its counts then rank the next depths) or ending the position, and the
//! position's record.

use super::{Deep, Step};
use crate::scheduler::cut;
use proto::{JobId, Settings, Solved, Stop, SubtreeResult};

impl Deep {
    /// Solutions still wanted at `depth` (`None`: all).
    pub fn remaining(&self, settings: &Settings, depth: u8) -> Option<usize> {
        let found = self.depths.get(&depth).map_or(0, |d| d.found.len());
        settings
            .max_solutions
            .map(|n| (n as usize).saturating_sub(found).max(1))
    }

    /// Forgets the open jobs of `depth` (they were dropped).
    pub fn close_jobs(&mut self, depth: u8) {
        if let Some(d) = self.depths.get_mut(&depth) {
            d.open.clear();
        }
    }

    /// Registers `depth` as started.
    pub fn open_depth(&mut self, depth: u8) {
        self.depths.entry(depth).or_default();
    }

    /// Job `old` of `depth` is replaced by `new` (`None`: by nothing).
    pub fn replace_job(&mut self, depth: u8, old: JobId, new: Option<JobId>) {
        let d = self.depths.entry(depth).or_default();
        d.open.remove(&old);
        d.open.extend(new);
    }

    /// Registers a job of `depth`.
    pub fn add_job(&mut self, depth: u8, id: JobId) {
        self.depths.entry(depth).or_default().open.insert(id);
    }

    /// Takes in an accepted subtree job's results. `prefixes` are the job's prefix
    /// indices, in the order the job listed them.
    pub fn absorb(
        &mut self,
        id: JobId,
        depth: u8,
        prefixes: &[cut::Unit],
        results: Vec<SubtreeResult>,
    ) {
        if self.counts.is_empty() {
            self.counts = vec![0; prefix_count_hint(prefixes)];
        }
        let state = self.depths.entry(depth).or_default();
        state.open.remove(&id);
        for r in results {
            let Some(&i) = prefixes.get(r.prefix as usize) else {
                continue;
            };
            state.counted.push((i, r.nodes));
            self.nodes += r.nodes;
            state.nodes += r.nodes;
            self.lookups += r.lookups;
            if r.stop == Stop::TimeLimit {
                self.timed_out = true;
            }
            if self.probe != Some(depth) {
                state.found.extend(r.solutions);
            }
        }
    }

    /// Takes the counts of `depth`, proved empty, as the ones that rank the next depths.
    /// A unit may answer in parts (pieces handed back go to other jobs): the counts of one
    /// depth add up; a deeper depth's replace an older one's.
    fn settle(&mut self, depth: u8, counted: &[(cut::Unit, u64)]) {
        for &(i, nodes) in counted {
            let add = |c: &mut u64, d: &mut u8| {
                if depth > *d || *c == 0 {
                    (*c, *d) = (nodes, depth);
                } else if depth == *d {
                    *c += nodes;
                }
            };
            if cut::level(i) > 0 {
                let e = self.child_counts.entry(i).or_insert((0, 0));
                add(&mut e.0, &mut e.1);
            }
            // A piece counts for its prefix too.
            let top = cut::prefix_of(i) as usize;
            if top >= self.counts.len() {
                self.counts.resize(top + 1, 0);
            }
            if top >= self.count_depth.len() {
                self.count_depth.resize(top + 1, 0);
            }
            add(&mut self.counts[top], &mut self.count_depth[top]);
        }
    }

    /// Moves on as far as the results allow.
    pub fn step(&mut self, settings: &Settings) -> Step {
        if self.timed_out {
            return Step::Finished(Stop::TimeLimit);
        }
        if let Some(p) = self.probe {
            match self.depths.get(&p) {
                None => return Step::NeedJobs(p),
                Some(s) if !s.open.is_empty() => return Step::Wait,
                Some(_) => {
                    if let Some(s) = self.depths.remove(&p) {
                        self.settle(p, &s.counted);
                    }
                    self.probe = None;
                }
            }
        }
        let want = settings.max_solutions.map_or(usize::MAX, |n| n as usize);
        loop {
            let d = self.current;
            if d > settings.max_length {
                return Step::Finished(Stop::Exhausted);
            }
            let Some(state) = self.depths.get(&d) else {
                return Step::NeedJobs(d);
            };
            if state.found.len() >= want || (state.open.is_empty() && !state.found.is_empty()) {
                return Step::Finished(Stop::Completed);
            }
            if !state.open.is_empty() {
                return Step::Wait;
            }
            // Every subtree of depth d searched, nothing found: d is proved empty.
            self.exhausted = Some(d);
            if let Some(s) = self.depths.remove(&d) {
                self.settle(d, &s.counted);
                self.last_full = Some((d, s.nodes));
            }
            let Some(next) = d.checked_add(1) else {
                return Step::Finished(Stop::Exhausted);
            };
            self.current = next;
        }
    }

    /// The position's record.
    pub fn record(&self, settings: &Settings, stop: Stop, micros: u64) -> Solved {
        let want = settings.max_solutions.map_or(usize::MAX, |n| n as usize);
        let mut solutions = match stop {
            Stop::Exhausted => Vec::new(),
            _ => (self.depths.get(&self.current))
                .map(|s| self.prefixes.whole(&s.found))
                .unwrap_or_default(),
        };
        solutions.sort();
        solutions.dedup();
        solutions.truncate(want);
        Solved {
            optimal: self.optimal && !solutions.is_empty(),
            solutions,
            depth_exhausted: self.exhausted,
            nodes: self.nodes,
            lookups: self.lookups,
            micros,
            stop,
        }
    }

    /// The started depths from the current one on, each with its open jobs, and whether
    /// they were ranked before the last depth proved empty was.
    pub fn open_depths(&self) -> Vec<(u8, bool, Vec<JobId>)> {
        let settled = self.settled_depth();
        (self.depths.range(self.current..))
            .map(|(&d, s)| (d, s.ranked_on < settled, s.open.iter().copied().collect()))
            .collect()
    }

    /// The deepest depth started (`None`: none).
    pub fn deepest_started(&self) -> Option<u8> {
        self.depths.keys().next_back().copied()
    }
}

/// How many prefixes a depth has (the counts table grows on demand beyond the hint).
fn prefix_count_hint(prefixes: &[cut::Unit]) -> usize {
    // Only prefixes: a split unit's id is far past them (see [`cut`]).
    (prefixes.iter())
        .filter(|&&i| cut::level(i) == 0)
        .map(|&i| i as usize + 1)
        .max()
        .unwrap_or(0)
}
