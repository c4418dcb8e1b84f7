//! The bounds over real sockets on loopback, with short limits; every wait polls for an
//! event under a generous bound.

use super::*;
use axum::routing::get;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Far beyond any wait a passing test has.
const BOUND: Duration = Duration::from_secs(20);

/// A limit long enough never to be reached in a test.
const NEVER: Duration = Duration::from_secs(600);

/// What the test router's `/hold` handler saw.
struct Held {
    /// Handlers running now.
    in_flight: AtomicUsize,
    /// The most that ran at once.
    peak: AtomicUsize,
    /// Closed until the test lets the held handlers answer.
    gate: tokio::sync::Semaphore,
}

/// A running server of the test router.
struct Running {
    /// Where it listens.
    addr: SocketAddr,
    /// What its `/hold` handler saw.
    held: Arc<Held>,
    /// Completes its shutdown future.
    stop: Option<oneshot::Sender<()>>,
    /// The task running [`serve`].
    task: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A listener on loopback, and a second descriptor of its socket to read its accept
/// queue with (the socket listens until both are closed).
#[cfg(target_os = "linux")]
async fn bind_watched() -> (TcpListener, std::os::fd::OwnedFd) {
    use std::os::fd::AsFd;
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let fd = l.as_fd().try_clone_to_owned().unwrap();
    (l, fd)
}

/// Serves, on a new listener, `/healthz`, `/hold` (waits for the gate) and `/big`
/// (1 MiB) within `limits`.
async fn start(limits: HttpLimits) -> Running {
    start_on(TcpListener::bind("127.0.0.1:0").await.unwrap(), limits)
}

/// [`start`] on `l`.
fn start_on(l: TcpListener, limits: HttpLimits) -> Running {
    let addr = l.local_addr().unwrap();
    let held = Arc::new(Held {
        in_flight: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
        gate: tokio::sync::Semaphore::new(0),
    });
    let h = Arc::clone(&held);
    let router = axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/hold",
            get(move || async move {
                let now = h.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                h.peak.fetch_max(now, Ordering::SeqCst);
                let _ = h.gate.acquire().await.map(|p| p.forget());
                h.in_flight.fetch_sub(1, Ordering::SeqCst);
                "held\n"
            }),
        )
        .route("/big", get(|| async { vec![b'x'; 1 << 20] }));
    let (stop, stop_rx) = oneshot::channel();
    let task = tokio::spawn(serve(l, router, limits, async move {
        let _ = stop_rx.await;
    }));
    Running {
        addr,
        held,
        stop: Some(stop),
        task,
    }
}

/// Polls `ok` until it holds, at most [`BOUND`].
async fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let start = tokio::time::Instant::now();
    while !ok() {
        assert!(start.elapsed() < BOUND, "{what}: not within {BOUND:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `request` on a new connection, and the whole answer (the server closes after it).
async fn exchange(addr: SocketAddr, request: String) -> String {
    tokio::time::timeout(BOUND, async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        String::from_utf8_lossy(&out).into_owned()
    })
    .await
    .unwrap_or_else(|_| panic!("no answer to {request:?} within {BOUND:?}"))
}

fn closing_get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
}

const KEEP_ALIVE_GET: &str = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

/// Reads one answer to `/healthz` on a kept-alive connection; false if the server closed.
async fn read_ok(s: &mut TcpStream) -> bool {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"\r\n\r\nok\n") {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    assert!(got.starts_with(b"HTTP/1.1 200"), "{got:?}");
    true
}

/// Waits (at most [`BOUND`]) until the server closes `s`: end of stream or an error, after
/// whatever it sent before.
async fn closed_by_server(mut s: TcpStream, what: &str) {
    let r = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
    assert!(r.is_ok(), "{what}: still open after {BOUND:?}");
}

#[tokio::test]
async fn idle_connections_of_every_kind_are_closed_and_healthz_answers_with_every_place_taken() {
    let cap = 8;
    let server = start(HttpLimits {
        header_timeout: Duration::from_millis(300),
        idle_timeout: NEVER,
        max_lifetime: NEVER,
        max_connections: cap,
    })
    .await;
    let addr = server.addr;
    // Twice as many idle connections as places, of three kinds: silent, a head begun and
    // never finished, and kept alive after one complete request.
    let mut idle = Vec::new();
    for _ in 0..cap {
        idle.push(("silent", TcpStream::connect(addr).await.unwrap()));
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        idle.push(("partial head", s));
    }
    let mut kept = Vec::new();
    for _ in 0..cap {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(KEEP_ALIVE_GET.as_bytes()).await.unwrap();
        kept.push(s);
    }
    // A real client behind them all is answered (once idle ones free a place).
    let r = exchange(addr, closing_get("/healthz")).await;
    assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("ok\n"), "{r}");
    for mut s in kept {
        assert!(
            tokio::time::timeout(BOUND, read_ok(&mut s)).await.unwrap(),
            "the kept-alive connection's first request was not answered"
        );
        idle.push(("kept alive", s));
    }
    for (what, s) in idle {
        closed_by_server(s, what).await;
    }
    let r = exchange(addr, closing_get("/healthz")).await;
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
}

/// The connections waiting in the accept queue of the listening socket `fd` (Linux reports
/// it as `tcpi_unacked` of a listener's TCP_INFO).
#[cfg(target_os = "linux")]
fn accept_queue(fd: &std::os::fd::OwnedFd) -> u32 {
    use std::os::fd::AsRawFd;
    // SAFETY: tcp_info is plain integers, for which all zeros is a value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `fd` is an open socket; `info` and `len` are valid for writes of `len` bytes.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0, "TCP_INFO: {}", std::io::Error::last_os_error());
    info.tcpi_unacked
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn connections_beyond_the_cap_wait_in_the_backlog_until_a_place_frees() {
    let cap = 4;
    let extra = 3;
    let (l, listener) = bind_watched().await;
    let server = start_on(
        l,
        HttpLimits {
            header_timeout: NEVER,
            idle_timeout: NEVER,
            max_lifetime: NEVER,
            max_connections: cap,
        },
    );
    let held = Arc::clone(&server.held);
    let clients: Vec<_> = (0..cap + extra)
        .map(|_| tokio::spawn(exchange(server.addr, closing_get("/hold"))))
        .collect();
    // Each client is either served (its handler holds it) or waits in the backlog.
    eventually("every client served or waiting", || {
        held.in_flight.load(Ordering::SeqCst) + accept_queue(&listener) as usize == cap + extra
    })
    .await;
    assert_eq!(held.in_flight.load(Ordering::SeqCst), cap, "served at once");
    assert_eq!(accept_queue(&listener) as usize, extra, "waiting");
    assert_eq!(held.peak.load(Ordering::SeqCst), cap);
    held.gate.add_permits(cap + extra);
    for c in clients {
        let r = c.await.unwrap();
        assert!(
            r.starts_with("HTTP/1.1 200") && r.ends_with("held\n"),
            "{r}"
        );
    }
    assert_eq!(
        held.peak.load(Ordering::SeqCst),
        cap,
        "more than the cap at once"
    );
}

#[tokio::test]
async fn a_peer_that_stops_reading_its_answers_is_closed() {
    let server = start(HttpLimits {
        header_timeout: NEVER,
        idle_timeout: Duration::from_millis(300),
        max_lifetime: NEVER,
        max_connections: 4,
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    // Requests for 1 MiB answers, pipelined and never read: the server's writes stall,
    // then its reads, then ours; once it closes, our writes fail.
    let batch = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n".repeat(256);
    let r = tokio::time::timeout(BOUND, async {
        while s.write_all(batch.as_bytes()).await.is_ok() {}
    })
    .await;
    assert!(
        r.is_ok(),
        "a peer that reads nothing is still served after {BOUND:?}"
    );
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_after_its_lifetime() {
    let server = start(HttpLimits {
        header_timeout: NEVER,
        idle_timeout: NEVER,
        max_lifetime: Duration::from_millis(300),
        max_connections: 4,
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let r = tokio::time::timeout(BOUND, async {
        loop {
            if s.write_all(KEEP_ALIVE_GET.as_bytes()).await.is_err() || !read_ok(&mut s).await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(r.is_ok(), "a busy connection is still open after {BOUND:?}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn shutdown_finishes_the_request_in_flight_closes_the_rest_and_returns() {
    let (l, listener) = bind_watched().await;
    let mut server = start_on(
        l,
        HttpLimits {
            header_timeout: NEVER,
            idle_timeout: NEVER,
            max_lifetime: NEVER,
            max_connections: 8,
        },
    );
    let addr = server.addr;
    let held = Arc::clone(&server.held);
    let in_flight = tokio::spawn(exchange(addr, closing_get("/hold")));
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(KEEP_ALIVE_GET.as_bytes()).await.unwrap();
    assert!(tokio::time::timeout(BOUND, read_ok(&mut kept))
        .await
        .unwrap());
    let silent = TcpStream::connect(addr).await.unwrap();
    eventually("the request in flight", || {
        held.in_flight.load(Ordering::SeqCst) == 1
    })
    .await;
    eventually("every connection accepted", || accept_queue(&listener) == 0).await;
    // Only the server's descriptor keeps the socket listening now.
    drop(listener);
    let _ = server.stop.take().map(|s| s.send(()));
    closed_by_server(kept, "kept alive").await;
    closed_by_server(silent, "silent").await;
    eventually("the listener closed", || {
        std::net::TcpStream::connect(addr).is_err()
    })
    .await;
    assert!(
        !server.task.is_finished(),
        "returned with a request in flight"
    );
    held.gate.add_permits(1);
    let r = in_flight.await.unwrap();
    assert!(
        r.starts_with("HTTP/1.1 200") && r.ends_with("held\n"),
        "{r}"
    );
    let task = &mut server.task;
    tokio::time::timeout(BOUND, task)
        .await
        .expect("serve did not return")
        .unwrap();
}

#[test]
fn limits_are_made_sane() {
    let l = HttpLimits {
        header_timeout: Duration::MAX,
        idle_timeout: Duration::ZERO,
        max_lifetime: Duration::MAX,
        max_connections: 0,
    }
    .sane();
    assert!(l.header_timeout < Duration::MAX && l.max_lifetime < Duration::MAX);
    assert_eq!(l.max_connections, 1);
    assert_eq!(
        HttpLimits {
            max_connections: usize::MAX,
            ..HttpLimits::default()
        }
        .sane()
        .max_connections,
        Semaphore::MAX_PERMITS.min(u32::MAX as usize)
    );
}
