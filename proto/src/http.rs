//! The one HTTP/1 server of every plain-HTTP listener of a cluster (the coordinator's
//! metrics, status page and liveness; a worker's probes), bounded so that connections a
//! peer opens and leaves idle cannot take the process's file descriptors.
//!
//! # Bounds
//! - A request's head must arrive within [`HttpLimits::header_timeout`], counted from the
//!   connection's opening or from the end of the previous answer: a connection that
//!   sends nothing, part of a head, or nothing more after an answer is closed then.
//! - A connection that moves no byte either way for [`HttpLimits::idle_timeout`] is
//!   closed: a peer that stops sending its body or stops reading its answer.
//! - After [`HttpLimits::max_lifetime`] a connection finishes the request in flight and
//!   closes (a peer that trickles bytes to stay under the other bounds).
//! - At most [`HttpLimits::max_connections`] are served at once. When that many are open,
//!   the listener is not accepted from until one closes: the rest wait in the kernel's
//!   listen backlog, costing no descriptor. A real client queued there (a liveness probe)
//!   is served as soon as an idle one times out; accepting and closing at once instead
//!   would refuse it for as long as idle connections hold every place.

mod activity;
mod connection;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

/// How long, how idle, and how many connections an HTTP listener serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// How long a request's head may take to arrive, from the connection's opening or the
    /// end of the previous answer. Real clients (probes, Prometheus, a browser) send theirs
    /// at once; this is what frees a place held by a connection that sends nothing.
    pub header_timeout: Duration,
    /// How long a connection may move no byte either way before it is closed: a peer that
    /// stops sending its body or stops reading its answer. It must exceed the slowest
    /// handler (a handler's wait moves no byte).
    pub idle_timeout: Duration,
    /// How long a connection may live: then it finishes the request in flight and closes,
    /// and is dropped if still open `idle_timeout` later. Bounds a peer that trickles bytes
    /// just fast enough for the other two.
    pub max_lifetime: Duration,
    /// Connections served at once; the rest wait in the listen backlog. Keeps the
    /// descriptors one listener can take well under a 1,024 file limit.
    pub max_connections: usize,
}

impl Default for HttpLimits {
    /// A 2 s head (under the 3 s timeout of the deployed liveness probes, so a probe
    /// queued behind idle connections is answered in time), 15 s without a byte (three
    /// times the coordinator's 5 s wait for its driver), a 60 s life, 256 connections.
    fn default() -> HttpLimits {
        HttpLimits {
            header_timeout: Duration::from_secs(2),
            idle_timeout: Duration::from_secs(15),
            max_lifetime: Duration::from_secs(60),
            max_connections: 256,
        }
    }
}

impl HttpLimits {
    /// The limits with every duration at most a century and at least one connection
    /// (so deadlines never overflow and the listener is always served).
    fn sane(self) -> HttpLimits {
        const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
        HttpLimits {
            header_timeout: self.header_timeout.min(CENTURY),
            idle_timeout: self.idle_timeout.min(CENTURY),
            max_lifetime: self.max_lifetime.min(CENTURY),
            max_connections: self
                .max_connections
                .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize)),
        }
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown` completes; then stops
/// accepting, lets each open connection finish its request in flight, and returns once
/// all are closed.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()>,
) {
    let limits = limits.sane();
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // A place first: while none is free, connections wait in the backlog.
        let place = tokio::select! {
            p = Arc::clone(&places).acquire_owned() => p,
            () = &mut shutdown => break,
        };
        let Ok(place) = place else { break };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut shutdown => break,
        };
        match accepted {
            Ok((stream, peer)) => {
                let conn = connection::serve(stream, peer, router.clone(), limits, stop_rx.clone());
                tokio::spawn(async move {
                    conn.await;
                    drop(place);
                });
            }
            // The peer gave up before it was accepted: nothing to do.
            Err(e) if is_peer_error(&e) => {}
            Err(e) => {
                // Out of descriptors and the like: say so, and give closing connections
                // time to free some (at most one warning a second).
                tracing::warn!("HTTP listener: accepting a connection: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection holds a place: all places back means all connections closed.
    let _ = places.acquire_many(limits.max_connections as u32).await;
}

/// Whether an accept error concerns only the connection being accepted.
fn is_peer_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused
    )
}
