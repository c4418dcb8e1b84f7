//! `solve --trace` of a short position through the real binary, then `bench split` of
//! that trace: the replay searches the nodes the recorded run searched; and `bench
//! refine-trace` of it: the 6- and 7-move counts added, nothing else changed.

use crate::common;

use benchtools::splitsim::{simulate, SplitOptions};
use benchtools::trace::{Trace, VERSION};
use common::{bin, scratch, tables_dir};
use std::process::Command;

/// A 14-move position (the split depth, 12, and beyond searched as subtree jobs).
const SCRAMBLE: &str = "R U2 F' L D2 B R' U F2 D' L2 B' U R2";

/// `solve --all --trace PATH` of [`SCRAMBLE`] at h48h0k4; its stdout.
fn record(path: &std::path::Path) -> String {
    let o = Command::new(bin())
        .args([
            "solve",
            "--table",
            "h48h0k4",
            "--all",
            "--threads",
            "2",
            "--quiet",
        ])
        .arg("--trace")
        .arg(path)
        .arg(SCRAMBLE)
        .env("CUBESWARM_TABLES", tables_dir())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `cubeswarm bench split` of the trace at `path` on 2 workers of 3 threads, which must
/// succeed: what it printed.
fn replay_command(path: &std::path::Path) -> String {
    let o = Command::new(bin())
        .args([
            "bench",
            "split",
            "--workers",
            "2",
            "--threads",
            "3",
            "--trace",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_trace_written_by_solve_replays_to_its_node_count() {
    let dir = scratch("split-trace");
    let path = dir.join("trace-short.jsonl.gz");
    let stdout = record(&path);
    let trace = Trace::load(&path).unwrap();
    let optimal = trace.header.optimal.expect("a solution");
    assert!(optimal >= trace.header.split_depth, "{optimal}");
    assert!(
        stdout.contains(&format!("({optimal} moves, optimal)")),
        "{stdout}"
    );
    // Every depth from the lower bound to the optimal one, each searched whole.
    let first = trace.header.lower_bound.max(trace.header.split_depth);
    let depths: Vec<u8> = trace.depths.keys().copied().collect();
    assert_eq!(depths, (first..=optimal).collect::<Vec<u8>>());
    assert!(trace.depths.values().all(|d| d.complete));
    // The recorded run's accepted jobs up to the optimal depth, by their own results.
    let recorded: u64 = trace
        .jobs
        .iter()
        .filter(|j| j.depth <= optimal && j.outcome != "cancelled" && j.outcome != "lost")
        .map(|j| j.nodes)
        .sum();
    let replayed = simulate(
        &trace,
        &SplitOptions {
            workers: 1,
            threads: 1,
            latency_us: 0,
            max_solutions: None,
            ..SplitOptions::default()
        },
    )
    .unwrap();
    assert_eq!(replayed.nodes, recorded);
    assert_eq!(replayed.solutions.len(), trace.header.solutions.len());
    // And through the command: its last line names the configuration.
    let out = replay_command(&path);
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("efficiency ") && last.ends_with(" at 6 threads"),
        "{out}"
    );
}

#[test]
fn refine_trace_adds_the_finer_counts_and_changes_nothing_else() {
    let dir = scratch("refine-trace");
    let path = dir.join("trace-short.jsonl.gz");
    let out = dir.join("trace-refined.jsonl.gz");
    record(&path);
    let o = Command::new(bin())
        .args([
            "bench",
            "refine-trace",
            "--threads",
            "2",
            "--fraction",
            "1e-4",
        ])
        .arg("--trace")
        .arg(&path)
        .arg("--output")
        .arg(&out)
        .env("CUBESWARM_TABLES", tables_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.lines().any(|l| l.starts_with("refined in ")),
        "{stdout}"
    );
    let (before, after) = (Trace::load(&path).unwrap(), Trace::load(&out).unwrap());
    assert_eq!(after.header.version, VERSION);
    assert_eq!(after.jobs, before.jobs);
    assert_eq!(
        after.depths.keys().collect::<Vec<_>>(),
        before.depths.keys().collect::<Vec<_>>()
    );
    let mut entries = 0;
    for (d, cells) in &after.depths {
        let old = &before.depths[d];
        assert_eq!(
            (&cells.counts, &cells.fine),
            (&old.counts, &old.fine),
            "depth {d}"
        );
        assert!(old.finer.is_empty());
        entries += cells.finer.len();
        // Every refined 5-move prefix is one whose count the recording kept.
        for (p, kids) in cells
            .finer
            .iter()
            .filter(|(p, _)| p.split(' ').count() == 5)
        {
            let moves = tables::parse_moves(p).unwrap();
            let i = benchtools::trace::rank(&moves[..4]).unwrap() as u32;
            let fine = cells.fine.iter().find(|(j, _)| *j == i).expect(p);
            assert!(fine.1[moves[4].index()] > 0, "{p}");
            assert!(kids.iter().sum::<u64>() > 0, "{p}");
        }
    }
    assert!(entries > 0, "{stdout}");
    // The refined trace replays.
    replay_command(&out);
}
