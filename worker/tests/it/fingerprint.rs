//! A claim's fingerprint, as the coordinator checks it (its `verify`): the units a job
//! answered whole, run again as a job of those units alone at the job's piece level,
//! give the same node counts and solutions, unit by unit, however the first run was cut
//! (handed back from any piece) and on however many threads it ran. (That one job's
//! result does not depend on its threads is `runner`'s shared-job test.)

use crate::runner::{engines, run, subtree_output, subtree_work, subtrees, twelve_mover};
use proto::{Stop, SubtreeWork};
use std::sync::atomic::AtomicU64;
use tables::canonical::sequences;
use tables::Move;
use worker::{run_job_split, PieceCursor, RunnerOptions, StopToken};

/// The pieces of each unit of `work` at its job's piece level.
fn pieces_per_unit(work: &SubtreeWork) -> Vec<usize> {
    let levels = proto::pieces::job_levels(&work.prefixes, work.depth, work.pieces);
    (work.prefixes.iter())
        .map(|p| proto::pieces::count(p, proto::pieces::levels_for(p.len(), work.depth, levels)))
        .collect()
}

#[test]
fn units_answered_whole_run_again_alone_give_the_same_counts_and_solutions() {
    let (_, p, d) = twelve_mover();
    // Every 2-move prefix at the solution's depth: some units hold solutions.
    let work = SubtreeWork {
        pieces: 2,
        ..subtree_work(p, d, sequences(2))
    };
    let per_unit = pieces_per_unit(&work);
    let total: usize = per_unit.iter().sum();
    let job = subtrees(1, work.clone());
    let mut compared = 0;
    for k in [total / 7, total / 3, total - 1, total] {
        let claim = subtree_output(run_job_split(
            &engines(),
            &job,
            &StopToken::new(),
            &AtomicU64::new(0),
            &RunnerOptions::default(),
            &PieceCursor::handing_back_from(k as u32),
        ));
        // The units whose every piece is among the first k.
        let mut at = 0;
        let whole = per_unit
            .iter()
            .take_while(|&&n| {
                at += n;
                at <= k
            })
            .count();
        let again = SubtreeWork {
            prefixes: work.prefixes[..whole].to_vec(),
            pieces: proto::pieces::job_levels(&work.prefixes, work.depth, work.pieces),
            ..work.clone()
        };
        let check = subtree_output(run(&subtrees(2, again)));
        assert_eq!(check.len(), whole, "handed back from piece {k}");
        let sorted = |s: &[Vec<Move>]| {
            let mut v = s.to_vec();
            v.sort();
            v
        };
        for (a, b) in claim.iter().take(whole).zip(&check) {
            assert_eq!(a.prefix, b.prefix);
            assert_eq!((a.stop, b.stop), (Stop::Exhausted, Stop::Exhausted));
            assert_eq!(
                (a.nodes, sorted(&a.solutions)),
                (b.nodes, sorted(&b.solutions)),
                "unit {} handed back from piece {k}",
                a.prefix
            );
            compared += 1;
        }
    }
    assert!(compared > 300, "{compared} units compared");
    // And a count is not a constant a liar could guess: units differ, and none is the
    // one node of a search that never ran.
    let all = subtree_output(run(&job));
    let counts: std::collections::BTreeSet<u64> = all.iter().map(|r| r.nodes).collect();
    assert!(counts.len() > 1 && !counts.contains(&1), "{counts:?}");
    assert!(all.iter().any(|r| !r.solutions.is_empty()));
}
