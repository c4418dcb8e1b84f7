//! Depths started early: when the queue cannot fill idle slots, the depths after the one
//! being proved go out beside it (up to [`EARLY_AHEAD`] beyond it, while none of them has
//! found a solution), their results held back until every shallower depth is proved
//! empty. Their queued jobs are cut again when a depth before them is (`recut`).

use super::Deep;
use crate::scheduler::state::PosKey;
use crate::scheduler::Scheduler;
use proto::Settings;

/// Depths beyond the current one that may be started early: two, so that a small depth
/// costs no round trip of its own (depth d+2 goes out while d+1's jobs run and d's
/// results come back).
pub const EARLY_AHEAD: u8 = 2;

impl Deep {
    /// Whether `depth`, started early (beyond the current one), already holds every
    /// solution asked for: its other jobs can only add nodes, since its answer stands
    /// unless the current depth finds one, which would void it anyway.
    pub fn settled_early(&self, settings: &Settings, depth: u8) -> bool {
        let Some(want) = settings.max_solutions else {
            return false;
        };
        depth > self.current
            && self
                .depths
                .get(&depth)
                .is_some_and(|d| d.found.len() >= want as usize)
    }

    /// The next depth to start early: the first not started, at most [`EARLY_AHEAD`]
    /// beyond the current one, while no depth from the current one on has found a
    /// solution (then the current one is finishing already).
    pub fn early_candidate(&self, settings: &Settings) -> Option<u8> {
        if self.timed_out || !self.depths.contains_key(&self.current) {
            return None;
        }
        let last = self
            .current
            .saturating_add(EARLY_AHEAD)
            .min(settings.max_length);
        for d in self.current..=last {
            match self.depths.get(&d) {
                Some(s) if !s.found.is_empty() => return None,
                Some(_) => {}
                None => return Some(d),
            }
        }
        None
    }
}

impl Scheduler {
    /// Starts the next depth of split positions whose current depth is fully
    /// dispatched, oldest first, while capacity would idle.
    pub(in crate::scheduler) fn start_early(&mut self) {
        let mut keys = Vec::new();
        for (&req, r) in &self.requests {
            for &seq in &r.split {
                let Some(split) = r.lines.get(seq).and_then(|p| p.split.as_ref()) else {
                    continue;
                };
                if self.queue.holds_position(&r.table, req, seq) {
                    continue;
                }
                if let Some(d) = split.deep.early_candidate(&r.settings) {
                    keys.push((PosKey { req, seq }, d));
                }
            }
        }
        for (key, depth) in keys {
            if self.queue.len() >= self.executors.free_slots() {
                break;
            }
            self.make_depth_jobs(key, depth);
        }
    }
}
