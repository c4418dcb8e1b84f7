//! Every request ends with its client (issue 17), end to end with real processes on
//! loopback: a killed client's search stops on the cluster within seconds; a request
//! whose table no worker holds is refused at once; a connection that never speaks is
//! closed, on the gRPC port and on the metrics port. (A worker or client refused for its
//! token is counted: `tests/it/cluster.rs`.)

use crate::common;

use common::*;
use std::io::Read;
use std::time::Duration;

/// A hard position for the small test table: minutes of search on it.
const HARD: &str = "U' L2 F L2 B R2 B F' D2 L2 F' D2 F R' B D F' L U' R' U2";

/// Jobs dispatched, and results the coordinator took in (accepted, ignored, or handed
/// back for another attempt), from one reading of `/metrics`. Every dispatch is answered
/// by one result; with no worker leaving, every requeue is a result handed back, so the
/// two are equal once no job is out.
fn dispatched_and_answered(m: &str) -> (u64, u64) {
    let v = metrics(
        m,
        &[
            "cubeswarm_jobs_dispatched_total",
            "cubeswarm_jobs_done_total",
            "cubeswarm_results_ignored_total",
            "cubeswarm_jobs_requeued_total",
        ],
    );
    (v[0], v[1] + v[2] + v[3])
}

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
        let mut dispatched = 0;
        eventually(
            Duration::from_secs(10),
            &format!("SIG{sig}: jobs dropped"),
            || {
                let v = metrics(
                    &m,
                    &[
                        "cubeswarm_jobs_running",
                        "cubeswarm_jobs_queued",
                        "cubeswarm_jobs_dispatched_total",
                    ],
                );
                dispatched = v[2];
                v[0] == 0 && v[1] == 0
            },
        );
        drop(client);
        // And no job is dispatched for it afterwards, not even once the workers' results
        // of the cancelled jobs are in (the last the coordinator hears of them).
        eventually(
            Duration::from_secs(60),
            &format!("SIG{sig}: every job dispatched answered"),
            || {
                let (sent, answered) = dispatched_and_answered(&m);
                sent != dispatched || answered == sent
            },
        );
        assert_eq!(
            metric(&m, "cubeswarm_jobs_dispatched_total"),
            dispatched,
            "SIG{sig}: jobs dispatched after the client left"
        );
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

/// Lowers the soft limit on open files of process `pid` to `n`.
#[cfg(target_os = "linux")]
fn limit_files(pid: u32, n: u64) {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a null new limit only reads the current one into `old`, a valid rlimit.
    let r = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_NOFILE,
            std::ptr::null(),
            &mut old,
        )
    };
    assert_eq!(r, 0, "prlimit: {}", std::io::Error::last_os_error());
    let new = libc::rlimit {
        rlim_cur: n.min(old.rlim_max),
        rlim_max: old.rlim_max,
    };
    // SAFETY: `new` is a valid rlimit; the old one is not asked for.
    let r = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_NOFILE,
            &new,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, 0, "prlimit: {}", std::io::Error::last_os_error());
}

/// A GET's whole answer; panics if none comes within `limit`.
fn get_within(addr: &str, path: &str, limit: Duration) -> String {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(limit)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    if let Err(e) = s.read_to_string(&mut out) {
        panic!("no whole answer to GET {path} within {limit:?} ({e}): {out:?}");
    }
    out
}

#[cfg(target_os = "linux")]
#[test]
fn idle_connections_to_the_metrics_port_are_closed_and_healthz_keeps_answering() {
    let _g = serial();
    let dir = scratch("http-idle");
    let (mut c, url) = coordinator(&dir, &["--metrics-listen", "127.0.0.1:0"]);
    let m = metrics_addr(&mut c);
    // Descriptors for what the coordinator holds now and 300 more: room for the
    // connections its metrics listener serves at once, not for every idle one below.
    let pid = c.child.id();
    let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64;
    limit_files(pid, open + 300);
    let idle: Vec<std::net::TcpStream> = (0..400)
        .map(|_| std::net::TcpStream::connect(&m).unwrap())
        .collect();
    let r = get_within(&m, "/healthz", Duration::from_secs(20));
    assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("ok\n"), "{r}");
    // Every idle connection is closed by the coordinator: end of stream or a reset, not
    // a read timeout.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    for (i, mut s) in idle.into_iter().enumerate() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        let mut buf = [0u8; 256];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    panic!("idle connection {i} still open after 30 s")
                }
                Err(_) => break,
            }
        }
    }
    // The descriptors are back: the metrics and the gRPC port answer.
    let r = get_within(&m, "/metrics", Duration::from_secs(20));
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert_eq!(
        health(&url),
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
}
