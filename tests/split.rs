//! `solve --trace` of a short position through the real binary, then `bench split` of
//! that trace: the replay searches the nodes the recorded run searched.

mod common;

use benchtools::splitsim::{simulate, SplitOptions};
use benchtools::trace::Trace;
use common::{bin, scratch, tables_dir};
use std::process::Command;

#[test]
fn a_trace_written_by_solve_replays_to_its_node_count() {
    let dir = scratch("split-trace");
    let path = dir.join("trace-short.jsonl.gz");
    // 14 moves: the split depth (12) and beyond are searched as subtree jobs.
    let scramble = "R U2 F' L D2 B R' U F2 D' L2 B' U R2";
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
        .arg(&path)
        .arg(scramble)
        .env("CUBESWARM_TABLES", tables_dir())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let trace = Trace::load(&path).unwrap();
    let optimal = trace.header.optimal.expect("a solution");
    assert!(optimal >= trace.header.split_depth, "{optimal}");
    let stdout = String::from_utf8_lossy(&o.stdout);
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
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("efficiency ") && last.ends_with(" at 6 threads"),
        "{out}"
    );
}
