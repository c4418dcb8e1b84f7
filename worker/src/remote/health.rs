//! Probes over HTTP, on the same bounded server ([`proto::http`]) as the coordinator's
//! `/metrics`: `GET /healthz` and `GET /readyz`.
//!
//! - `/healthz` answers 200 whenever the process runs: liveness never depends on the
//!   coordinator, or a coordinator outage would restart every worker of the fleet.
//! - `/readyz` answers 200 once the tables are checked and opened, 503 before that and
//!   while draining.
//! - Any other path answers 404, any other method than GET and HEAD 405.

use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use proto::http::HttpLimits;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use tokio::net::TcpListener;

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

/// The probes as a router (one handler: the paths are few and the answers plain text).
pub fn router(health: Arc<Health>) -> axum::Router {
    axum::Router::new().fallback(answer).with_state(health)
}

/// Serves the probes on `listener`, within the default [`HttpLimits`], until the task is
/// dropped (it never returns on its own).
pub async fn serve_health(listener: TcpListener, health: Arc<Health>) {
    proto::http::serve(
        listener,
        router(health),
        HttpLimits::default(),
        std::future::pending(),
    )
    .await;
}

/// The answer to one probe (hyper leaves the body out for HEAD).
async fn answer(
    State(health): State<Arc<Health>>,
    method: Method,
    uri: Uri,
) -> (StatusCode, String) {
    if method != Method::GET && method != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD\n".to_string(),
        );
    }
    match uri.path() {
        "/healthz" => (StatusCode::OK, "ok\n".to_string()),
        "/readyz" if health.is_ready() => (StatusCode::OK, health.describe()),
        "/readyz" => (StatusCode::SERVICE_UNAVAILABLE, health.describe()),
        _ => (StatusCode::NOT_FOUND, "not found\n".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Sends `request` as it is and reads the whole answer (the server closes after it:
    /// each request asks for `Connection: close`).
    async fn get(addr: std::net::SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    fn req(method: &str, path: &str) -> String {
        format!("{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    }

    #[tokio::test]
    async fn liveness_always_readiness_only_when_ready_and_not_draining() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let health = Arc::new(Health::new());
        let server = tokio::spawn(serve_health(listener, Arc::clone(&health)));
        let r = get(addr, &req("GET", "/healthz")).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.ends_with("\r\n\r\nok\n"), "{r}");
        assert!(r.contains("content-type: text/plain; charset=utf-8"), "{r}");
        let r = get(addr, &req("GET", "/readyz")).await;
        assert!(r.starts_with("HTTP/1.1 503"), "{r}");
        assert!(
            r.ends_with("starting: checking tables\ncoordinator: not connected\n"),
            "{r}"
        );
        health.set_ready();
        health.set_connected(true);
        let r = get(addr, &req("GET", "/readyz?verbose=1")).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(
            r.ends_with("\r\n\r\nready\ncoordinator: connected\n"),
            "{r}"
        );
        let r = get(addr, &req("HEAD", "/readyz")).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.ends_with("\r\n\r\n"), "HEAD: no body: {r}");
        health.set_draining();
        health.set_ready();
        let r = get(addr, &req("GET", "/readyz")).await;
        assert!(r.starts_with("HTTP/1.1 503"), "{r}");
        assert!(r.contains("draining\n"), "{r}");
        let r = get(addr, &req("GET", "/healthz")).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        let r = get(addr, &req("GET", "/nope")).await;
        assert!(r.starts_with("HTTP/1.1 404"), "{r}");
        assert!(r.ends_with("not found\n"), "{r}");
        let r = get(addr, &req("POST", "/healthz")).await;
        assert!(r.starts_with("HTTP/1.1 405"), "{r}");
        assert!(r.ends_with("only GET and HEAD\n"), "{r}");
        // Garbage and oversized heads get an answer, never a crash.
        assert!(get(addr, "\u{1}\u{2}\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 4"));
        let big = req("GET", &format!("/healthz{}", "x".repeat(20_000)));
        assert!(get(addr, &big).await.starts_with("HTTP/1.1 4"));
        let r = get(addr, &req("GET", "/healthz")).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        server.abort();
    }
}
