//! A depth started early is cut on the counts of the last depth proved empty before it
//! (a depth still open counts only in part: a unit whose job handed back pieces would
//! rank as light). When a depth before it is proved empty, the jobs it has not sent yet
//! are cut again on the new counts, so that they go out in the order the position's
//! whole counts give, as the depth would have been cut had it not started early.

use super::Pending;
use crate::scheduler::state::{Kind, PosKey};
use crate::scheduler::{cut, Scheduler};
use proto::JobId;

impl Scheduler {
    /// Cuts again the queued jobs of the depths of split position `key` ranked on older
    /// counts than it has now.
    pub(super) fn recut_early(&mut self, key: PosKey) {
        let stale: Vec<(u8, Vec<JobId>)> = match self.pos_mut(key).and_then(|p| p.split.as_ref()) {
            Some(split) => (split.deep.open_depths().into_iter())
                .filter_map(|(d, stale, o)| stale.then_some((d, o)))
                .collect(),
            None => return,
        };
        if stale.is_empty() {
            return;
        }
        let pending = self.pending_prefixes(key);
        for (depth, open) in stale {
            let queued: Vec<(JobId, Vec<cut::Unit>)> = (open.iter())
                .filter_map(|id| {
                    let j = self.jobs.get(id)?;
                    match (&j.kind, j.lease, &j.handed) {
                        (Kind::Subtrees { prefixes, .. }, None, None) => {
                            Some((*id, prefixes.clone()))
                        }
                        _ => None,
                    }
                })
                .collect();
            let units: Vec<cut::Unit> =
                queued.iter().flat_map(|(_, u)| u.iter().copied()).collect();
            let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_mut()) else {
                return;
            };
            let Some(groups) = split.deep.regroup(depth, &units, queued.len(), &pending) else {
                continue;
            };
            for (id, _) in &queued {
                split.deep.replace_job(depth, *id, None);
            }
            for (id, _) in &queued {
                self.remove_job(*id);
            }
            self.counters.recut_jobs += queued.len() as u64;
            self.add_depth_jobs(key, depth, groups);
        }
    }

    /// The prefixes with units in the open jobs of split position `key`, by depth.
    pub(super) fn pending_prefixes(&mut self, key: PosKey) -> Pending {
        let mut out = Pending::new();
        let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_ref()) else {
            return out;
        };
        for (depth, _, open) in split.deep.open_depths() {
            let set = out.entry(depth).or_default();
            for id in open {
                if let Some(Kind::Subtrees { prefixes, .. }) = self.jobs.get(&id).map(|j| &j.kind) {
                    set.extend(prefixes.iter().map(|&u| cut::prefix_of(u)));
                }
            }
        }
        out
    }
}
