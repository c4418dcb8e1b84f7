//! A hollow cluster on loopback: the real coordinator and client, and hollow workers
//! (`cubeswarm bench hollow-worker`: the real worker session, its search a recorded
//! trace's, its link delayed in the process). One worker is SIGKILLed mid-search and
//! another joins; the client's record must be the trace's: its length, every one of its
//! optimal solutions, and the optimal flag.

use crate::common::*;
use std::collections::BTreeSet;
use std::time::Duration;

/// The trace: 18a, recorded with `--all` (h48h3k2, 6.8e9 nodes, four solutions of 18).
const TRACE: &str = "bench/traces/trace-18a.jsonl.gz";
/// Nodes a hollow thread searches a second: the search takes some 8 s on 8 × 4 slots.
const RATE: &str = "2.5e7";

/// The trace's header line.
fn header() -> serde_json::Value {
    let path = root().join(TRACE);
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "gzip -dc {}", path.display());
    let text = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

fn hollow(dir: &std::path::Path, name: &str, url: &str) -> Proc {
    let trace = root().join(TRACE);
    let args = [
        "bench",
        "hollow-worker",
        "--coordinator",
        url,
        "--trace",
        trace.to_str().unwrap(),
        "--rate",
        RATE,
        "--threads",
        "4",
        "--latency-ms",
        "1",
        "--worker-id",
        name,
    ];
    let mut p = Proc::start(name, dir, &args, &[]);
    p.wait_for("connected to coordinator", Duration::from_secs(120));
    p
}

#[test]
fn a_hollow_cluster_losing_a_worker_gives_the_traces_record() {
    let _g = serial();
    let h = header();
    let dir = scratch("hollow");
    let (mut c, url) = coordinator(&dir, &["--metrics-listen", "127.0.0.1:0"]);
    let addr = metrics_addr(&mut c);
    let mut workers: Vec<Proc> = (1..=8)
        .map(|i| hollow(&dir, &format!("hollow-{i}"), &url))
        .collect();
    let out = dir.join("out.jsonl");
    let position = h["position"].as_str().unwrap();
    let table = h["table"].as_str().unwrap();
    let mut client = spawn_client(
        &dir,
        "client",
        &[
            "solve",
            "--coordinator",
            &url,
            "--table",
            table,
            "--all",
            "--quiet",
            "--format",
            "jsonl",
            "--output",
            out.to_str().unwrap(),
            position,
        ],
    );
    // Mid-search: a few hundred jobs answered, the optimal depth not yet reached.
    eventually(Duration::from_secs(300), "200 jobs answered", || {
        metric(&addr, "cubeswarm_jobs_done_total") >= 200
    });
    let killed = workers.remove(2);
    killed.signal("KILL");
    drop(killed);
    workers.push(hollow(&dir, "hollow-9", &url));
    let status = client.wait(Duration::from_secs(600));
    assert!(status.success(), "client: {}", client.log());
    // One JSONL line per solution.
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<serde_json::Value> = (text.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let solutions: BTreeSet<&str> = (lines.iter())
        .map(|r| r["solution"].as_str().unwrap())
        .collect();
    let want: BTreeSet<&str> = (h["solutions"].as_array().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(solutions, want, "{text}");
    assert_eq!(lines.len(), want.len(), "{text}");
    for r in &lines {
        assert_eq!(r["length"], h["optimal"], "{r}");
        assert_eq!(r["optimal"], true, "{r}");
    }
    // The killed worker's jobs were run again elsewhere.
    let [requeued, connected] = metrics(
        &addr,
        &[
            "cubeswarm_jobs_requeued_total",
            "cubeswarm_workers_connected",
        ],
    )[..] else {
        unreachable!()
    };
    assert!(requeued >= 1, "no job of the killed worker was run again");
    assert_eq!(connected, 8);
}
