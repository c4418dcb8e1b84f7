//! Probes over plain HTTP/1.1: `GET /healthz` and `GET /readyz`.
//!
//! - `/healthz` answers 200 whenever the process runs: liveness never depends on the
//!   coordinator, or a coordinator outage would restart every worker of the fleet.
//! - `/readyz` answers 200 once the tables are checked and opened, 503 before that and
//!   while draining.
//!
//! The responder is a few lines of tokio: one request per connection, read with a size
//! and time limit, answered, closed.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// The longest request head read (request line and headers).
const MAX_REQUEST: usize = 8 << 10;
/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Probe connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 32;

const STARTING: u8 = 0;
const READY: u8 = 1;
const DRAINING: u8 = 2;

/// What the probes report, shared by the worker and the responder.
#[derive(Debug, Default)]
pub struct Health {
    /// Starting (tables being checked), ready, or draining.
    state: AtomicU8,
    /// Whether a coordinator session is up (reported in the body, never a failure).
    connected: AtomicBool,
}

impl Health {
    /// A process that is starting: live, not ready.
    pub fn new() -> Health {
        Health::default()
    }

    /// The tables are checked and opened: ready (unless draining already).
    pub fn set_ready(&self) {
        let _ = self
            .state
            .compare_exchange(STARTING, READY, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The worker stops taking jobs: not ready any more, for good.
    pub fn set_draining(&self) {
        self.state.store(DRAINING, Ordering::SeqCst);
    }

    /// Whether a coordinator session is up.
    pub fn set_connected(&self, connected: bool) {
        self.connected.store(connected, Ordering::SeqCst);
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.state.load(Ordering::SeqCst) == READY
    }

    /// Whether the worker is draining.
    pub fn is_draining(&self) -> bool {
        self.state.load(Ordering::SeqCst) == DRAINING
    }

    /// Whether a coordinator session is up.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst)
    }

    /// The readiness body: one word and the coordinator's state.
    fn describe(&self) -> String {
        let state = match self.state.load(Ordering::SeqCst) {
            READY => "ready",
            DRAINING => "draining",
            _ => "starting: checking tables",
        };
        let link = if self.is_connected() {
            "connected"
        } else {
            "not connected"
        };
        format!("{state}\ncoordinator: {link}\n")
    }
}

/// Serves the probes on `listener` until the task is dropped (it never returns on its
/// own; accept errors are retried after a short pause).
pub async fn serve_health(listener: TcpListener, health: Arc<Health>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        match listener.accept().await {
            Ok((stream, _)) => {
                let health = Arc::clone(&health);
                tokio::spawn(async move {
                    let _permit = permit;
                    if let Err(e) = answer(stream, &health).await {
                        tracing::debug!("health probe connection: {e}");
                    }
                });
            }
            Err(e) => {
                // Out of file descriptors and the like: pause rather than spin.
                tracing::warn!("health endpoint: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Reads one request head and answers it.
async fn answer(mut stream: TcpStream, health: &Health) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(buf.get(..n).unwrap_or(&[]));
        }
        Ok::<(), std::io::Error>(())
    };
    match tokio::time::timeout(READ_TIMEOUT, read).await {
        Ok(r) => r?,
        Err(_) => return Ok(()),
    }
    let line = head
        .split(|&b| b == b'\n')
        .next()
        .map(|l| String::from_utf8_lossy(l).trim_end().to_string())
        .unwrap_or_default();
    let mut words = line.split(' ');
    let method = words.next().unwrap_or("");
    let target = words.next().unwrap_or("");
    // The path without any query string.
    let path = target.split('?').next().unwrap_or("");
    let (status, body) = match (method, path) {
        ("GET" | "HEAD", "/healthz") => ("200 OK", "ok\n".to_string()),
        ("GET" | "HEAD", "/readyz") => {
            let body = health.describe();
            if health.is_ready() {
                ("200 OK", body)
            } else {
                ("503 Service Unavailable", body)
            }
        }
        ("GET" | "HEAD", _) => ("404 Not Found", "not found\n".to_string()),
        _ => ("405 Method Not Allowed", "only GET and HEAD\n".to_string()),
    };
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != "HEAD" {
        response.push_str(&body);
    }
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(addr: std::net::SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn liveness_always_readiness_only_when_ready_and_not_draining() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let health = Arc::new(Health::new());
        let server = tokio::spawn(serve_health(listener, Arc::clone(&health)));
        let req = |p: &str| format!("GET {p} HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(get(addr, &req("/healthz"))
            .await
            .starts_with("HTTP/1.1 200"));
        let r = get(addr, &req("/readyz")).await;
        assert!(r.starts_with("HTTP/1.1 503"), "{r}");
        assert!(r.contains("checking tables"), "{r}");
        health.set_ready();
        health.set_connected(true);
        let r = get(addr, &req("/readyz?verbose=1")).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.contains("coordinator: connected"), "{r}");
        health.set_draining();
        health.set_ready();
        assert!(get(addr, &req("/readyz")).await.starts_with("HTTP/1.1 503"));
        assert!(get(addr, &req("/healthz"))
            .await
            .starts_with("HTTP/1.1 200"));
        assert!(get(addr, &req("/nope")).await.starts_with("HTTP/1.1 404"));
        assert!(get(addr, "POST /healthz HTTP/1.1\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 405"));
        // Garbage and oversized heads get an answer, never a crash.
        assert!(get(addr, "\u{1}\u{2}\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 405"));
        let big = format!("GET /healthz{} HTTP/1.1\r\n\r\n", "x".repeat(20_000));
        let mut s = TcpStream::connect(addr).await.unwrap();
        let _ = s.write_all(big.as_bytes()).await;
        let _ = s.read_to_end(&mut Vec::new()).await;
        assert!(get(addr, &req("/healthz"))
            .await
            .starts_with("HTTP/1.1 200"));
        server.abort();
    }
}
