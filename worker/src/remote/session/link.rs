//! One connection to the coordinator: dial, Hello, Welcome, then the jobs ([`super::conn`]);
//! how a connection ends.

use super::conn::{end_for, message, Conn};
use super::delay::{self, Inbound};
use super::{
    connect_failed, End, SessionOptions, WorkerError, DEFAULT_HEARTBEAT, HEARTBEAT_RANGE, OUTBOUND,
};
use crate::remote::health::Health;
use crate::{Engines, JobRunner, ResultSink};
use proto::transport::Auth;
use proto::wire::{self, coordinator_message, worker_message};
use proto::JobResult;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};

/// What every connection of a worker shares.
pub(super) struct Link<'a> {
    pub(super) options: &'a SessionOptions,
    pub(super) endpoint: &'a Endpoint,
    pub(super) auth: &'a Auth,
    pub(super) hello: &'a wire::Hello,
    pub(super) engines: &'a Arc<Engines>,
    pub(super) threads: usize,
    pub(super) health: &'a Health,
}

impl Link<'_> {
    /// One connection: dial, Hello, Welcome, then [`Conn::run`].
    pub(super) async fn connection<F: Future<Output = ()>>(
        &self,
        mut shutdown: Pin<&mut F>,
    ) -> End {
        let lost = |reason: String| End::Lost {
            reason,
            welcomed: false,
        };
        let channel: Channel = tokio::select! {
            _ = &mut shutdown => return End::Exit,
            c = self.endpoint.connect() => match c {
                Ok(c) => c,
                Err(e) => return match connect_failed(&self.options.coordinator.url, e) {
                    Ok(reason) => lost(reason),
                    Err(e) => End::Fatal(e),
                },
            },
        };
        let mut client = proto::transport::workers_client(channel, self.auth.clone());
        let (out, out_rx) = mpsc::channel::<wire::WorkerMessage>(OUTBOUND);
        if out
            .send(message(worker_message::Msg::Hello(self.hello.clone())))
            .await
            .is_err()
        {
            return lost("the outgoing stream closed before Hello".to_string());
        }
        let wait = self.options.welcome_timeout;
        let latency = self.options.link_delay;
        let outgoing = match latency.is_zero() {
            true => ReceiverStream::new(out_rx),
            false => delay::outgoing(out_rx, latency),
        };
        let call = tokio::time::timeout(wait, client.join(outgoing));
        let mut inbound = tokio::select! {
            _ = &mut shutdown => return End::Exit,
            r = call => match r {
                Err(_) => return lost(format!("no answer to Hello within {wait:?}")),
                Ok(Err(status)) => return end_for(status, false),
                Ok(Ok(response)) => Inbound::new(response.into_inner(), latency),
            },
        };
        let first = tokio::select! {
            _ = &mut shutdown => return End::Exit,
            r = tokio::time::timeout(wait, inbound.message()) => r,
        };
        let welcome = match first {
            Err(_) => return lost(format!("no Welcome within {wait:?}")),
            Ok(Err(status)) => return end_for(status, false),
            Ok(Ok(None)) => {
                return lost("the coordinator closed the stream before its Welcome".to_string())
            }
            Ok(Ok(Some(wire::CoordinatorMessage {
                msg: Some(coordinator_message::Msg::Welcome(w)),
            }))) => w,
            Ok(Ok(Some(_))) => {
                return lost("protocol: the coordinator's first message is not Welcome".into())
            }
        };
        let heartbeat = heartbeat_period(&welcome);
        tracing::info!(
            coordinator = %self.options.coordinator.url,
            executor = welcome.executor,
            heartbeat_ms = heartbeat.as_millis() as u64,
            lease_ms = welcome.lease_ms,
            "connected to coordinator"
        );
        // This connection's executor: its results can only go back on this connection.
        let (results_tx, results) = mpsc::unbounded_channel::<JobResult>();
        let sink: ResultSink = Arc::new(move |r| {
            let _ = results_tx.send(r);
        });
        let options = match crate::RunnerOptions::from_env() {
            Ok(o) => o,
            Err(e) => return End::Fatal(WorkerError::Failpoint(e)),
        };
        let executor =
            match JobRunner::with_options(self.threads, Arc::clone(self.engines), sink, options) {
                Ok(e) => e,
                Err(e) => return End::Fatal(WorkerError::JobRunner(e)),
            };
        self.health.set_connected(true);
        let mut conn = Conn {
            options: self.options,
            health: self.health,
            out,
            executor,
            running: BTreeMap::new(),
            drain: None,
        };
        let end = conn.run(inbound, results, heartbeat, shutdown).await;
        self.health.set_connected(false);
        let left = conn.running.len();
        conn.executor.cancel_all();
        if left > 0 && !matches!(end, End::Exit) {
            tracing::warn!("{left} running job(s) cancelled with the connection");
        }
        end
    }
}

/// The heartbeat period a Welcome asks for, within [`HEARTBEAT_RANGE`] and shorter than
/// the lease.
pub(super) fn heartbeat_period(w: &wire::Welcome) -> Duration {
    let mut period = if w.heartbeat_ms == 0 {
        DEFAULT_HEARTBEAT
    } else {
        Duration::from_millis(w.heartbeat_ms)
    };
    if w.lease_ms > 0 {
        period = period.min(Duration::from_millis(w.lease_ms / 3));
    }
    period.clamp(HEARTBEAT_RANGE.0, HEARTBEAT_RANGE.1)
}
