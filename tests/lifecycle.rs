//! Every request ends with its client (issue 17), end to end with real processes on
//! loopback: a killed client's search stops on the cluster within seconds; a request
//! whose table no worker holds is refused at once; a worker refused for its token is
//! counted and logged; a connection that never speaks is closed.

mod common;

use common::*;
use std::io::Read;
use std::time::{Duration, Instant};

/// The coordinator's `/metrics` address (it was started with `--metrics-listen`).
fn metrics_addr(c: &mut Proc) -> String {
    let m = c.wait_for("metrics listening on ", Duration::from_secs(10));
    m.split_whitespace().next().unwrap().to_string()
}

/// A gauge or counter of the coordinator's `/metrics`.
fn metric(addr: &str, name: &str) -> u64 {
    let text = http_get(addr, "/metrics");
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
}

/// Polls until `ok`, at most `limit`.
fn eventually(limit: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A hard position for the small test table: minutes of search on it.
const HARD: &str = "U' L2 F L2 B R2 B F' D2 L2 F' D2 F R' B D F' L U' R' U2";

#[test]
fn a_killed_clients_optimal_search_stops_on_the_cluster() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("client-gone");
    let (mut c, url) = coordinator(&dir, &["--metrics-listen", "127.0.0.1:0"]);
    let m = metrics_addr(&mut c);
    let w1 = worker(&dir, "w1", &url, &["--table", "h48h0k4"], &tables);
    let w2 = worker(&dir, "w2", &url, &["--table", "h48h0k4"], &tables);
    for (n, sig) in [(1, "KILL"), (2, "INT"), (3, "TERM")] {
        let client = spawn_client(
            &dir,
            &format!("client{n}"),
            &["solve", "--coordinator", &url, "--quiet", HARD],
        );
        eventually(Duration::from_secs(120), "jobs running", || {
            metric(&m, "cubeswarm_jobs_running") > 0
        });
        client.signal(sig);
        // Within a few seconds the coordinator holds none of its jobs, queued or
        // running (and has told the workers to cancel what ran).
        eventually(
            Duration::from_secs(10),
            &format!("SIG{sig}: jobs dropped"),
            || {
                metric(&m, "cubeswarm_jobs_running") == 0
                    && metric(&m, "cubeswarm_jobs_queued") == 0
            },
        );
        drop(client);
        // And no job is dispatched for it afterwards.
        let dispatched = metric(&m, "cubeswarm_jobs_dispatched_total");
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(metric(&m, "cubeswarm_jobs_dispatched_total"), dispatched);
        assert_eq!(metric(&m, "cubeswarm_jobs_running"), 0);
    }
    assert!(
        c.log().contains("client gone; its jobs are dropped"),
        "{}",
        c.log()
    );
    drop((w1, w2));
}

#[test]
fn a_table_no_worker_holds_is_refused_at_once() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("no-table");
    let (_c, url) = coordinator(&dir, &["--worker-grace", "0"]);
    let _w = worker(&dir, "w", &url, &["--table", "twophase"], &tables);
    let mut client = spawn_client(
        &dir,
        "client",
        &[
            "solve",
            "--coordinator",
            &url,
            "--table",
            "h48h0k4",
            "--quiet",
            "R U",
        ],
    );
    let st = client.wait(Duration::from_secs(60));
    assert!(!st.success());
    let log = client.log();
    assert!(
        log.contains("no connected worker holds table h48h0k4"),
        "{log}"
    );
}

#[test]
fn a_worker_refused_for_its_token_is_counted_and_logged() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("token-count");
    let good = dir.join("good");
    let bad = dir.join("bad");
    std::fs::write(&good, "right-token\n").unwrap();
    std::fs::write(&bad, "wrong-token\n").unwrap();
    let (mut c, url) = coordinator(
        &dir,
        &[
            "--token-file",
            good.to_str().unwrap(),
            "--metrics-listen",
            "127.0.0.1:0",
        ],
    );
    let m = metrics_addr(&mut c);
    assert_eq!(metric(&m, "cubeswarm_workers_refused_total"), 0);
    refused_worker(
        &dir,
        "w-bad",
        &url,
        &["--table", "twophase", "--token-file", bad.to_str().unwrap()],
        &tables,
    );
    refused_worker(&dir, "w-none", &url, &["--table", "twophase"], &tables);
    assert_eq!(metric(&m, "cubeswarm_workers_refused_total"), 2);
    assert!(c.log().contains("worker refused"), "{}", c.log());
}

#[test]
fn a_connection_that_never_speaks_is_closed() {
    let _g = serial();
    let dir = scratch("silent");
    let (_c, url) = coordinator(&dir, &["--handshake-timeout", "1"]);
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut buf = [0u8; 16];
    // The coordinator closes it: end of stream, not a read timeout.
    assert_eq!(s.read(&mut buf).unwrap(), 0);
}
