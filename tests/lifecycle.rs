//! Every request ends with its client (issue 17), end to end with real processes on
//! loopback: a killed client's search stops on the cluster within seconds; a request
//! whose table no worker holds is refused at once; a connection that never speaks is
//! closed. (A worker refused for its token is counted: `tests/cluster.rs`.)

mod common;

use common::*;
use std::io::Read;
use std::time::Duration;

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
fn a_connection_that_never_speaks_is_closed() {
    let _g = serial();
    let dir = scratch("silent");
    let (_c, url) = coordinator(&dir, &["--handshake-timeout", "1"]);
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // The coordinator closes it: end of stream (whatever it sent first), not a read
    // timeout.
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => continue,
            Err(e) => panic!("the silent connection is still open: {e}"),
        }
    }
}
