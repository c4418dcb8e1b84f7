//! What ranks a depth's units and sizes its jobs: each prefix's (and each unit's below a
//! prefix) node count at the deepest depth that counted it whole, scaled to one depth;
//! the nodes a depth is predicted to hold ([`BRANCHING`] times as many per move as the
//! deepest depth proved empty); and the depth's units grouped into jobs in rank order.

use super::{Deep, Pending};
use crate::scheduler::cut::{self, Counts, Plan};
use crate::scheduler::BRANCHING;
use std::collections::HashMap;
use std::sync::Arc;

impl Deep {
    /// The nodes `depth` should hold: [`BRANCHING`] times as many per move as the deepest
    /// depth searched whole (0 before one was).
    pub fn predicted_nodes(&self, depth: u8) -> f64 {
        match self.last_full {
            Some((d, n)) if d < depth => n as f64 * BRANCHING.powi(i32::from(depth - d)),
            _ => 0.0,
        }
    }

    /// The units of `depth` (prefixes, or the descendants of split ones: see [`cut`]), in
    /// rank order, cut into about `slots * per_slot` jobs (more when a job would exceed
    /// `job_nodes`, the nodes a job should hold at most). Units found too heavy for a job
    /// stay split from here on. Each job comes with the nodes it is predicted to hold.
    pub fn groups(
        &mut self,
        depth: u8,
        slots: usize,
        per_slot: usize,
        job_nodes: u64,
        pending: &Pending,
    ) -> Vec<(Vec<cut::Unit>, f64)> {
        let prefixes = Arc::clone(&self.prefixes.list);
        let n = prefixes.len();
        if n == 0 {
            return Vec::new();
        }
        let (counts, children, _) = self.scaled_counts(pending);
        let settled = self.settled_depth();
        self.depths.entry(depth).or_default().ranked_on = settled;
        // The units of a position with symmetries: the lightest of each class (all of them
        // for the probe).
        let units: Option<Vec<cut::Unit>> = match &self.prefixes.reduced {
            Some(r) if self.probe != Some(depth) => {
                let cost = |i: u32| match self.count_depth.get(i as usize) {
                    Some(&d) if d > 0 => counts[i as usize],
                    _ => u64::MAX / 2,
                };
                let kept = r.1.keep(cost);
                let below =
                    (kept.pairs.iter()).filter_map(|&(i, m)| cut::child_id(cut::Unit::from(i), m));
                let whole = kept.prefixes.iter().map(|&i| cut::Unit::from(i));
                Some(whole.chain(below).collect())
            }
            _ => None,
        };
        let counted = Counts {
            units: units.as_deref(),
            prefixes: &counts,
            children: &children,
            split: &self.split,
        };
        // A reduced depth's units, measured once: for the total and for the cut.
        let measured = units
            .is_some()
            .then(|| cut::measured_units(&prefixes, &counted));
        let total: u64 = match &measured {
            Some(m) => m.iter().map(|u| u.1).sum(),
            // Units split at an earlier depth are counted by their children.
            None => {
                (counts.iter().enumerate())
                    .filter(|(i, _)| !self.split.contains(&(*i as cut::Unit)))
                    .map(|(_, &c)| c)
                    .sum::<u64>()
                    + (children.iter())
                        .filter(|(u, _)| !self.split.contains(u))
                        .map(|(_, &c)| c)
                        .sum::<u64>()
            }
        };
        // Counts are from an earlier depth: about BRANCHING times fewer nodes per move of
        // depth.
        let predicted = self.predicted_nodes(depth);
        let scale = if predicted > 0.0 && total > 0 {
            predicted / total as f64
        } else {
            BRANCHING
        };
        let by_nodes = (total as f64 * scale / job_nodes.max(1) as f64) as usize;
        let n = units.as_ref().map_or(n, Vec::len).max(1);
        let plan = Plan {
            jobs: (slots * per_slot.max(1)).max(by_nodes).clamp(1, n),
        };
        let out = match measured {
            Some(m) => cut::cut_measured(&prefixes, &counted, m, plan),
            None => cut::cut(&prefixes, &counted, plan),
        };
        self.split.extend(out.newly_split);
        (out.groups.into_iter())
            .zip(out.nodes.into_iter().map(|n| n as f64 * scale))
            .collect()
    }

    /// The counts that rank a depth: each prefix's at the deepest depth that counted it
    /// whole (one proved empty, or an open one where `pending` holds none of its units),
    /// scaled to the newest of them (an older depth's count stands for [`BRANCHING`] times
    /// as many nodes per move of depth): by prefix, by unit below a prefix, and that newest
    /// depth (0: none counted yet).
    fn scaled_counts(&self, pending: &Pending) -> (Vec<u64>, HashMap<cut::Unit, u64>, u8) {
        let mut counts = self.counts.clone();
        let mut count_depth = self.count_depth.clone();
        let mut child_counts = self.child_counts.clone();
        for (&e, s) in self.depths.range(self.current..) {
            let open = pending.get(&e);
            let mut whole: HashMap<cut::Unit, u64> = HashMap::new();
            for &(i, n) in &s.counted {
                let top = cut::prefix_of(i);
                if open.is_some_and(|o| o.contains(&top)) {
                    continue;
                }
                *whole.entry(top).or_default() += n;
                if cut::level(i) > 0 {
                    let c = child_counts.entry(i).or_insert((0, 0));
                    *c = match c.1 == e {
                        true => (c.0 + n, e),
                        false => (n, e),
                    };
                }
            }
            for (top, n) in whole {
                let top = top as usize;
                if top >= counts.len() {
                    counts.resize(top + 1, 0);
                }
                if top >= count_depth.len() {
                    count_depth.resize(top + 1, 0);
                }
                counts[top] = n;
                count_depth[top] = e;
            }
        }
        let newest = (count_depth.iter())
            .chain(child_counts.values().map(|(_, d)| d))
            .copied()
            .max()
            .unwrap_or(0);
        let norm = |c: u64, d: u8| {
            c.saturating_mul((BRANCHING as u64).saturating_pow(u32::from(newest.saturating_sub(d))))
        };
        let counts: Vec<u64> = (counts.iter().enumerate())
            .map(|(i, &c)| norm(c, count_depth.get(i).copied().unwrap_or(newest)))
            .collect();
        let children: HashMap<cut::Unit, u64> = (child_counts.iter())
            .map(|(&u, &(c, d))| (u, norm(c, d)))
            .collect();
        (counts, children, newest)
    }

    /// `units` of `depth` (the units of its jobs not sent yet, when the depth was cut
    /// early and a depth before it has since been proved empty) ranked again on the
    /// counts as they are now, and grouped into `jobs` jobs of equal predicted nodes,
    /// each with its prediction. `None` when nothing is counted to rank them by.
    pub fn regroup(
        &mut self,
        depth: u8,
        units: &[cut::Unit],
        jobs: usize,
        pending: &Pending,
    ) -> Option<Vec<(Vec<cut::Unit>, f64)>> {
        let (counts, children, newest) = self.scaled_counts(pending);
        if newest == 0 || units.is_empty() {
            return None;
        }
        let prefixes = Arc::clone(&self.prefixes.list);
        let counted = Counts {
            units: Some(units),
            prefixes: &counts,
            children: &children,
            split: &self.split,
        };
        let measured = cut::measured_units(&prefixes, &counted);
        let plan = Plan {
            jobs: jobs.clamp(1, measured.len().max(1)),
        };
        let out = cut::cut_measured(&prefixes, &counted, measured, plan);
        self.split.extend(out.newly_split);
        self.depths.entry(depth).or_default().ranked_on = self.settled_depth();
        let scale = BRANCHING.powi(i32::from(depth) - i32::from(newest));
        Some(
            (out.groups.into_iter())
                .zip(out.nodes.into_iter().map(|n| n as f64 * scale))
                .collect(),
        )
    }

    /// The newest depth of the counts of depths proved empty (0: none).
    pub(super) fn settled_depth(&self) -> u8 {
        (self.count_depth.iter())
            .chain(self.child_counts.values().map(|(_, d)| d))
            .copied()
            .max()
            .unwrap_or(0)
    }
}
