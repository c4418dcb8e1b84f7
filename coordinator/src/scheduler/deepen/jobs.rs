//! The scheduler's side of a split position: moved on as its results allow, its depths'
//! subtree jobs made and queued (sized by the measured pace, each job cut into pieces it
//! can hand back), the jobs of a depth dropped once it is settled, and the position
//! finished with its record.

use super::Step;
use crate::scheduler::state::{Kind, PosKey};
use crate::scheduler::{cut, tail, Scheduler};
use proto::{JobId, Stop};

impl Scheduler {
    /// Moves a split position on: new depths' jobs, or its record.
    pub(in crate::scheduler) fn advance(&mut self, key: PosKey) {
        let proved = (self.pos_mut(key).and_then(|p| p.split.as_ref())).map(|s| s.deep.exhausted());
        loop {
            let Some(req) = self.requests.get_mut(&key.req) else {
                return;
            };
            let Some(split) = req.lines.get_mut(key.seq).and_then(|p| p.split.as_mut()) else {
                return;
            };
            match split.deep.step(&req.settings) {
                Step::Wait => {
                    if split.deep.exhausted() != proved.flatten() {
                        self.recut_early(key);
                    }
                    return;
                }
                Step::Finished(stop) => {
                    self.finish_split(key, stop);
                    return;
                }
                Step::NeedJobs(depth) => {
                    self.make_depth_jobs(key, depth);
                }
            }
        }
    }

    /// Makes the subtree jobs of `depth` for a split position.
    pub(super) fn make_depth_jobs(&mut self, key: PosKey, depth: u8) {
        let slots = self.executors.capacity().max(1);
        let workers = self.executors.len().max(1);
        let shares = self.executors.values().all(|e| e.shares);
        let pending = self.pending_prefixes(key);
        let groups = {
            let cfg = self.cfg.clone();
            let pace = &self.pace;
            let Some(split) = self
                .requests
                .get_mut(&key.req)
                .and_then(|r| r.lines.get_mut(key.seq))
                .and_then(|p| p.split.as_mut())
            else {
                return;
            };
            split.deep.open_depth(depth);
            let per_slot = pace.jobs_per_slot(
                split.deep.predicted_nodes(depth),
                slots,
                cfg.jobs_per_slot,
                cfg.job_round_trips,
            );
            // Executors whose threads share a job need no job per slot: a depth too
            // small for one of `job_round_trips` round trips per slot is cut into fewer
            // (one per executor at least), so that the depths started early beside it
            // fit in the executors' room at once.
            let cut_for = match (shares, pace.min_job(cfg.job_round_trips)) {
                (true, m) if m > 0.0 => {
                    let fit = split.deep.predicted_nodes(depth) / m;
                    (fit as usize).clamp(workers.min(slots), slots)
                }
                _ => slots,
            };
            split
                .deep
                .groups(depth, cut_for, per_slot, cfg.job_nodes, &pending)
        };
        self.add_depth_jobs(key, depth, groups);
    }

    /// Queues `groups` (units, predicted nodes) as jobs of `depth` of a split position,
    /// ranked in their order.
    pub(super) fn add_depth_jobs(
        &mut self,
        key: PosKey,
        depth: u8,
        groups: Vec<(Vec<cut::Unit>, f64)>,
    ) {
        let hands_back = self.executors.values().any(|e| e.hands_back);
        for (g, (prefixes, nodes)) in groups.into_iter().enumerate() {
            let pieces = match hands_back {
                true => {
                    let deepest = cut::deepest_level(&prefixes);
                    tail::piece_levels(deepest, prefixes.len(), nodes, self.cfg.piece_levels)
                }
                false => 0,
            };
            let kind = Kind::Subtrees {
                seq: key.seq,
                depth,
                prefixes,
                pieces,
            };
            let Some(id) = self.new_job(key.req, kind, (key.req, key.seq, depth, g as u32)) else {
                return;
            };
            let predicted_us = (nodes / self.pace.node_rate() * 1e6) as u64;
            if let Some(j) = self.jobs.get_mut(&id) {
                j.predicted_us = predicted_us;
                j.predicted_nodes = nodes as u64;
            }
            if let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_mut()) {
                split.deep.add_job(depth, id);
            }
        }
    }

    /// Finishes a split position (solutions found, space exhausted, or out of time).
    pub(in crate::scheduler) fn finish_split(&mut self, key: PosKey, stop: Stop) {
        let now = self.now;
        let Some(req) = self.requests.get(&key.req) else {
            return;
        };
        let Some(p) = req.lines.get(key.seq) else {
            return;
        };
        let Some(split) = &p.split else { return };
        let micros = now.saturating_sub(p.started.unwrap_or(now));
        let solved = split.deep.record(&req.settings, stop, micros);
        self.finish(key, Ok(solved));
    }

    /// Cancels the open subtree jobs of one depth of a position (queued ones are
    /// forgotten, running ones told to stop).
    pub(in crate::scheduler) fn drop_depth_jobs(&mut self, key: PosKey, depth: u8) {
        let Some(p) = self.pos(key) else { return };
        let ids: Vec<JobId> = (p.jobs.iter())
            .filter(|id| {
                (self.jobs.get(id)).is_some_and(
                    |j| matches!(j.kind, Kind::Subtrees { depth: d, .. } if d == depth),
                )
            })
            .collect();
        for id in ids {
            self.cancel_job(id);
        }
    }
}
