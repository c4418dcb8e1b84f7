//! Positions with symmetries, through the real binary: the reduced search (one prefix per
//! class of the position's symmetry, the solutions made whole again) returns exactly the
//! solutions of the unreduced one (`--no-symmetry`), with fewer nodes, embedded and on a
//! cluster that loses a worker mid-search.

use crate::common;

use common::*;
use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

/// "Anaconda": 14 moves, 6 symmetries.
const ANACONDA: &str = "L U B' U' R L' B R' F B' D R D' F'";
/// "Cube in a cube": 15 moves, 6 symmetries.
const CUBE_IN_CUBE: &str = "F L F U' R U F2 L2 U' L' B D' B' L2 U";

/// The solutions (and the nodes) of one embedded `solve --format jsonl` run.
fn solve(scramble: &str, extra: &[&str]) -> (BTreeSet<String>, u64) {
    let o = Command::new(bin())
        .args(["solve", "--table", "h48h0k4", "--threads", "2", "--quiet"])
        .args(["--format", "jsonl"])
        .args(extra)
        .arg(scramble)
        .env("CUBESWARM_TABLES", tables_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    records(&String::from_utf8_lossy(&o.stdout), scramble)
}

/// The solutions and nodes of JSONL records, each solution checked on `scramble`.
fn records(out: &str, scramble: &str) -> (BTreeSet<String>, u64) {
    let position = tables::Position::parse(scramble).unwrap();
    let mut nodes = 0;
    let mut got = BTreeSet::new();
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = v["solution"].as_str().unwrap().to_string();
        assert!(
            position.is_solved_by(&tables::parse_moves(&s).unwrap()),
            "{s}"
        );
        nodes = v["nodes"].as_u64().unwrap();
        assert!(got.insert(s), "a solution twice: {out}");
    }
    (got, nodes)
}

#[test]
fn every_solution_of_the_unreduced_search_and_fewer_nodes() {
    for (scramble, extra) in [
        (ANACONDA, &["--all"][..]),
        (ANACONDA, &["-n", "1000"][..]),
        (CUBE_IN_CUBE, &["--all"][..]),
    ] {
        let (reduced, reduced_nodes) = solve(scramble, extra);
        let mut whole_args = extra.to_vec();
        whole_args.push("--no-symmetry");
        let (whole, whole_nodes) = solve(scramble, &whole_args);
        assert!(whole.len() > 6, "{scramble}: {whole:?}");
        assert_eq!(reduced, whole, "{scramble} {extra:?}");
        assert!(
            reduced_nodes * 2 < whole_nodes,
            "{scramble}: {reduced_nodes} nodes reduced, {whole_nodes} not"
        );
    }
}

#[test]
fn a_cluster_that_loses_a_worker_mid_search_returns_every_solution() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("symmetry-cluster");
    let (whole, _) = solve(CUBE_IN_CUBE, &["--all", "--no-symmetry"]);
    let (c, url) = coordinator(&dir, &["--lease", "2", "--heartbeat", "0.25"]);
    let mut w1 = worker(&dir, "w1", &url, &["--table", "h48h0k4"], &tables);
    let out = dir.join("out.jsonl");
    let mut cl = spawn_client(
        &dir,
        "client",
        &[
            "solve",
            "--coordinator",
            &url,
            "--all",
            "--format",
            "jsonl",
            "--output",
            out.to_str().unwrap(),
            "--quiet",
            CUBE_IN_CUBE,
        ],
    );
    // The shallow job, then the first subtree job: the split has begun on w1 alone.
    eventually(Duration::from_secs(120), "w1's first subtree job", || {
        w1.log().matches("job received").count() >= 2
    });
    w1.signal("KILL");
    let _ = w1.wait(Duration::from_secs(10));
    let w2 = worker(&dir, "w2", &url, &["--table", "h48h0k4"], &tables);
    let st = cl.wait(Duration::from_secs(600));
    assert!(st.success(), "client: {st}\n{}", cl.log());
    let (got, _) = records(&std::fs::read_to_string(&out).unwrap(), CUBE_IN_CUBE);
    assert_eq!(got, whole);
    drop(c);
    assert!(w2.log().contains("job received"), "w2 did no job");
}
