//! The deepening state's own tests: ranking on whole counts, early starts.

use super::*;
use proto::{Settings, SubtreeResult};
use std::sync::Arc;

/// A position being proved at `current`, no depth started.
fn deep_at(current: u8) -> Deep {
    Deep {
        prefixes: Prefixes {
            list: Arc::new(Vec::new()),
            reduced: None,
        },
        probe: None,
        lower_bound: current,
        optimal: true,
        exhausted: None,
        current,
        counts: Vec::new(),
        child_counts: HashMap::new(),
        count_depth: Vec::new(),
        split: BTreeSet::new(),
        last_full: None,
        depths: BTreeMap::new(),
        nodes: 0,
        lookups: 0,
        timed_out: false,
    }
}

/// A whole subtree of `nodes` for entry `prefix` of a job's list.
fn searched(prefix: u32, nodes: u64) -> SubtreeResult {
    SubtreeResult {
        prefix,
        solutions: Vec::new(),
        nodes,
        lookups: 0,
        stop: Stop::Exhausted,
    }
}

/// Where units `a`, `b` and `c` come in `groups`' order.
fn order(groups: &[(Vec<cut::Unit>, f64)], of: [cut::Unit; 3]) -> Vec<cut::Unit> {
    let flat: Vec<cut::Unit> = groups.iter().flat_map(|g| g.0.iter().copied()).collect();
    let mut out: Vec<cut::Unit> = of.to_vec();
    out.sort_by_key(|u| flat.iter().position(|x| x == u));
    out
}

#[test]
fn a_depth_ranks_the_next_on_whole_counts_only_and_regroups_once_proved() {
    let settings = Settings {
        max_length: 20,
        max_solutions: Some(1),
        ..Settings::default()
    };
    // One-move prefixes; 9, 10 and 11 (faces past U, R, F: not scaled) are measured.
    // One job a depth, so that no unit is too big for its job and cut.
    let mut d = deep_at(14);
    d.prefixes.list = Arc::new(tables::canonical::sequences(1));
    d.add_job(14, JobId(1));
    d.absorb(
        JobId(1),
        14,
        &[9, 10, 11],
        vec![searched(0, 100), searched(1, 10), searched(2, 1)],
    );
    assert_eq!(d.step(&settings), Step::NeedJobs(15));
    assert_eq!(d.exhausted(), Some(14));
    let none = Pending::new();
    let g15 = d.groups(15, 1, 1, u64::MAX, &none);
    assert_eq!(order(&g15, [9, 10, 11]), vec![9, 10, 11]);
    d.add_job(15, JobId(2));
    d.add_job(15, JobId(3));
    // Depth 15 in part: 10 whole, 11 only in part (its other pieces are out).
    d.absorb(
        JobId(2),
        15,
        &[10, 11],
        vec![searched(0, 5_000), searched(1, 2_000)],
    );
    let mut pending = Pending::new();
    pending.entry(15).or_default().insert(11);
    // Depth 16 started early: 10 at its whole 15 count, 9 at 13 times its 14 count
    // (1,300), 11 too (13): its part (2,000) does not count.
    let g16 = d.groups(16, 1, 1, u64::MAX, &pending);
    assert_eq!(order(&g16, [9, 10, 11]), vec![10, 9, 11]);
    d.add_job(16, JobId(4));
    assert_eq!(d.step(&settings), Step::Wait);
    assert!(d.open_depths().iter().all(|(_, stale, _)| !stale));
    // 11's last piece: 15 is proved empty, and 16 was ranked before that.
    d.absorb(JobId(3), 15, &[11], vec![searched(0, 20_000)]);
    assert_eq!(d.step(&settings), Step::Wait);
    assert_eq!((d.exhausted(), d.current()), (Some(15), 16));
    let open = d.open_depths();
    assert_eq!(open, vec![(16, true, vec![JobId(4)])]);
    let again = d.regroup(16, &[9, 10, 11], 1, &none);
    let again = again.expect("counted");
    assert_eq!(order(&again, [9, 10, 11]), vec![11, 10, 9]);
    assert!(d.open_depths().iter().all(|(_, stale, _)| !stale));
}

#[test]
fn depths_start_early_up_to_two_ahead_while_none_has_a_solution() {
    let settings = Settings {
        max_length: 20,
        max_solutions: Some(1),
        ..Settings::default()
    };
    let mut d = deep_at(15);
    assert_eq!(d.early_candidate(&settings), None, "15 is not started");
    d.open_depth(15);
    assert_eq!(d.early_candidate(&settings), Some(16));
    d.open_depth(16);
    assert_eq!(d.early_candidate(&settings), Some(17));
    d.open_depth(17);
    assert_eq!(d.early_candidate(&settings), None, "three ahead is too far");
    // A solution at 16 settles what is deeper: nothing more starts.
    let mut d = deep_at(15);
    d.open_depth(15);
    d.open_depth(16);
    d.depths.entry(16).or_default().found.push(Vec::new());
    assert_eq!(d.early_candidate(&settings), None);
    // Nor beyond the longest length asked for.
    let short = Settings {
        max_length: 16,
        ..settings
    };
    let mut d = deep_at(15);
    d.open_depth(15);
    d.open_depth(16);
    assert_eq!(d.early_candidate(&short), None);
}
