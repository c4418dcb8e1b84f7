//! The coordinator's HTTP endpoint, on its own listener: `/metrics` for Prometheus,
//! `/healthz` for liveness, and the operator's live page: `/` (one static page of plain
//! JavaScript, no external resources) polling `/api/status` (the cluster's status as
//! JSON, the same as `cubeswarm status --format json`).
//!
//! When the coordinator has a token, `/api/status` wants it (`Authorization: Bearer`,
//! which the page sends once typed in its login field); the page itself holds no data,
//! and `/healthz` and `/metrics` stay open for probes and Prometheus.
//!
//! The listener is served by [`proto::http::serve`] within `ServerConfig::http`: idle
//! connections are closed and only so many are served at once, so they cannot take the
//! process's descriptors (and with them `/healthz` and the gRPC port).

use super::metrics::Metrics;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use coordinator::driver::{Driver, Event};
use proto::http::HttpLimits;
use std::sync::{mpsc as std_mpsc, Arc};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The live page.
const PAGE: &str = include_str!("page.html");

/// The page may run its own inline script and style and fetch from its origin, nothing
/// else.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; \
                           style-src 'unsafe-inline'; connect-src 'self'; img-src data:";

/// How long a request waits for the driver's answer.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// What the endpoint serves from.
#[derive(Clone)]
pub(super) struct HttpState {
    /// The counters and gauges the core publishes.
    pub metrics: Arc<Metrics>,
    /// The driver's event channel (status is read on its thread).
    pub core: std_mpsc::Sender<Event>,
    /// The token `/api/status` wants, if any.
    pub token: Option<String>,
}

impl HttpState {
    /// Runs `f` on the driver's thread and returns what it says (`None`: the driver is
    /// gone or did not answer in time).
    async fn query<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Driver<'_>) -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        let q: coordinator::driver::Query = Box::new(move |d| {
            let _ = tx.send(f(d));
        });
        self.core.send(Event::Query(q)).ok()?;
        tokio::time::timeout(QUERY_TIMEOUT, rx).await.ok()?.ok()
    }

    /// Whether `headers` carry the token (or none is needed).
    fn authorized(&self, headers: &HeaderMap) -> bool {
        let Some(t) = &self.token else {
            return true;
        };
        let got = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        proto::transport::constant_time_eq(got.as_bytes(), t.as_bytes())
    }
}

/// A JSON body with `code`.
fn json(code: StatusCode, v: &serde_json::Value) -> Response {
    (
        code,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        v.to_string(),
    )
        .into_response()
}

async fn status(
    axum::extract::State(s): axum::extract::State<HttpState>,
    headers: HeaderMap,
) -> Response {
    if !s.authorized(&headers) {
        return json(
            StatusCode::UNAUTHORIZED,
            &serde_json::json!({"error": "this coordinator wants its token: Authorization: Bearer TOKEN"}),
        );
    }
    match s.query(super::status::cluster_status).await {
        Some(st) => json(StatusCode::OK, &proto::status_json::to_json(&st)),
        None => json(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({"error": "the coordinator is shutting down"}),
        ),
    }
}

async fn metrics(axum::extract::State(s): axum::extract::State<HttpState>) -> Response {
    let mut body = s.metrics.render();
    // The driver's figures (histograms, per-worker); left out if it does not answer.
    if let Some(more) = s.query(super::metrics::render_driver).await {
        body.push_str(&more);
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, PAGE_POLICY),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
        .into_response()
}

/// Serves the endpoint on `l` within `limits` until `stop`.
pub(super) async fn serve_http(
    l: TcpListener,
    state: HttpState,
    limits: HttpLimits,
    stop: oneshot::Receiver<()>,
) {
    use axum::routing::get;
    let app = axum::Router::new()
        .route("/", get(page))
        .route("/api/status", get(status))
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .with_state(state);
    proto::http::serve(l, app, limits, async move {
        let _ = stop.await;
    })
    .await;
}
