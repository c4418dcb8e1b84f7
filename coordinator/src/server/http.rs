//! The coordinator's HTTP endpoint: `/metrics` for Prometheus and `/healthz` for
//! liveness, on their own listener.

use super::metrics::Metrics;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// `/metrics` (Prometheus text format) and `/healthz` (the process answers: liveness
/// depends on nothing outside it).
pub(super) async fn serve_metrics(l: TcpListener, m: Arc<Metrics>, stop: oneshot::Receiver<()>) {
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(move || {
                let m = m.clone();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        m.render(),
                    )
                }
            }),
        )
        .route("/healthz", get(|| async { "ok\n" }));
    let r = axum::serve(l, app)
        .with_graceful_shutdown(async move {
            let _ = stop.await;
        })
        .await;
    if let Err(e) = r {
        tracing::warn!("metrics endpoint ended: {e}");
    }
}
