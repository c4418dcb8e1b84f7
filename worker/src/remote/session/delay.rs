//! A link's one-way latency, added in the process ([`SessionOptions::link_delay`]): every
//! message in either direction is held until the latency has passed since it was sent,
//! in order. It is how a hollow cluster on loopback meets the latency of a real network
//! (this kernel has no netem); a worker in production has none, and then nothing here
//! runs.
//!
//! [`SessionOptions::link_delay`]: super::SessionOptions::link_delay

use proto::wire;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

/// One message from the coordinator, or the stream's end or error.
type Incoming = Result<Option<wire::CoordinatorMessage>, Status>;

/// The messages a worker sends, each released `latency` after it was queued. Two tasks:
/// one stamps each message as it is queued (never waiting), one releases them in order;
/// both end when the worker's side closes, after the last message is released.
pub(super) fn outgoing(
    mut queued: mpsc::Receiver<wire::WorkerMessage>,
    latency: Duration,
) -> ReceiverStream<wire::WorkerMessage> {
    let (stamped_tx, mut stamped) = mpsc::unbounded_channel();
    let (released_tx, released) = mpsc::channel(super::OUTBOUND);
    tokio::spawn(async move {
        while let Some(m) = queued.recv().await {
            if stamped_tx.send((Instant::now(), m)).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        while let Some((sent, m)) = stamped.recv().await {
            sleep_until(sent + latency).await;
            if released_tx.send(m).await.is_err() {
                break;
            }
        }
    });
    ReceiverStream::new(released)
}

/// The coordinator's messages as the worker reads them: straight from the stream, or
/// each one `latency` after it arrived.
pub(super) enum Inbound {
    /// No added latency.
    Direct(tonic::Streaming<wire::CoordinatorMessage>),
    /// Messages stamped on arrival by a task that reads the stream.
    Delayed {
        /// Stamped messages, in arrival order.
        stamped: mpsc::UnboundedReceiver<(Instant, Incoming)>,
        /// The message taken and not yet released (kept across a dropped
        /// [`Inbound::message`], so that a `select!` loses nothing).
        pending: Option<(Instant, Incoming)>,
        /// The one-way latency.
        latency: Duration,
    },
}

impl Inbound {
    /// The stream `inbound`, delayed by `latency` when it is not zero.
    pub(super) fn new(
        mut inbound: tonic::Streaming<wire::CoordinatorMessage>,
        latency: Duration,
    ) -> Inbound {
        if latency.is_zero() {
            return Inbound::Direct(inbound);
        }
        let (tx, stamped) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let m = inbound.message().await;
                let last = !matches!(m, Ok(Some(_)));
                if tx.send((Instant::now(), m)).is_err() || last {
                    break;
                }
            }
        });
        Inbound::Delayed {
            stamped,
            pending: None,
            latency,
        }
    }

    /// The next message (cancel-safe, as [`tonic::Streaming::message`] is).
    pub(super) async fn message(&mut self) -> Incoming {
        match self {
            Inbound::Direct(s) => s.message().await,
            Inbound::Delayed {
                stamped,
                pending,
                latency,
            } => {
                if pending.is_none() {
                    *pending = Some(stamped.recv().await.unwrap_or((Instant::now(), Ok(None))));
                }
                let due = pending
                    .as_ref()
                    .map_or_else(Instant::now, |(t, _)| *t + *latency);
                sleep_until(due).await;
                pending.take().map_or(Ok(None), |(_, m)| m)
            }
        }
    }
}
