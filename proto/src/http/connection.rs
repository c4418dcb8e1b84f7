//! One accepted connection, served by hyper within the listener's limits.

use super::activity::{Activity, Tracked};
use super::HttpLimits;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

/// Serves `stream` until it closes, breaks a limit, or `stop` turns true (then the
/// request in flight is finished first).
pub(super) async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    router: axum::Router,
    limits: HttpLimits,
    mut stop: watch::Receiver<bool>,
) {
    let opened = Instant::now();
    let activity = Activity::new(opened);
    let io = TokioIo::new(Tracked::new(stream, activity.clone()));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let conn = builder.serve_connection(io, TowerToHyperService::new(router));
    let mut conn = std::pin::pin!(conn);
    let wind_down_at = opened + limits.max_lifetime;
    let drop_at = wind_down_at + limits.idle_timeout;
    // Whether the connection was told to finish its request in flight and close.
    let mut winding_down = false;
    loop {
        let idle_until = activity.last() + limits.idle_timeout;
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(%peer, "HTTP connection closed: {e}");
                }
                return;
            }
            () = sleep_until(idle_until) => {
                // Bytes may have moved since the deadline was taken: look again.
                if activity.last() + limits.idle_timeout <= Instant::now() {
                    let idle = limits.idle_timeout;
                    tracing::debug!(%peer, "HTTP connection closed: no byte moved for {idle:?}");
                    return;
                }
            }
            () = sleep_until(wind_down_at), if !winding_down => {
                conn.as_mut().graceful_shutdown();
                winding_down = true;
            }
            _ = stop.wait_for(|s| *s), if !winding_down => {
                conn.as_mut().graceful_shutdown();
                winding_down = true;
            }
            () = sleep_until(drop_at) => {
                let open = limits.max_lifetime + limits.idle_timeout;
                tracing::debug!(%peer, "HTTP connection closed: open for {open:?}");
                return;
            }
        }
    }
}
