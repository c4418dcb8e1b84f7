//! The Clients service: a client opens a request on a bidirectional stream, sends its
//! lines and reads its records back; the request is the driver's, and ends with the
//! client ([`Event::ClientGone`] when its stream closes, whenever that is).

use super::{BoxStream, Shared};
use coordinator::driver::{
    ClientKey, Event, Line, OpenRequest, RequestError, RequestProgress, RequestSink,
};
use coordinator::input::InputLine;
use proto::wire::{self as w, clients_server, solve_response::Msg as ToClient};
use proto::{Error, Record, RecordError, Settings, Violation};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_stream::StreamExt as _;
use tonic::{Request, Response, Status, Streaming};

/// Messages to a client's stream.
pub type ClientTx = mpsc::UnboundedSender<Result<w::SolveResponse, Status>>;

/// Records per response message at most.
const RECORDS_PER_MESSAGE: usize = 1024;
/// A response message is sent once its records reach this many bytes (a record of a
/// line of the longest a client sends is far smaller; see `client::outgoing`).
const RECORD_BYTES: usize = 1 << 20;

/// The message that ends a response stream with OK (never sent to the client): the
/// stream ends when it is read, whoever else still holds a sender.
fn end_marker() -> Result<w::SolveResponse, Status> {
    Ok(w::SolveResponse { msg: None })
}

/// A client's stream as the request's sink.
struct ClientSink {
    out: ClientTx,
    /// Records not yet sent (a message holds up to [`RECORDS_PER_MESSAGE`], and
    /// [`RECORD_BYTES`] or one record more).
    pending: Vec<w::Record>,
    /// Their encoded size.
    pending_bytes: usize,
    /// Tells the connection's handler that the request is over.
    ended: Option<oneshot::Sender<()>>,
    /// Lines in flight: a permit per line the handler may post.
    window: Arc<Semaphore>,
}

fn gone() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the client's stream is closed",
    )
}

impl RequestSink for ClientSink {
    fn room(&mut self, n: u64) {
        self.window
            .add_permits(usize::try_from(n).unwrap_or(Semaphore::MAX_PERMITS));
    }

    fn record(&mut self, record: Record) -> std::io::Result<()> {
        let r = w::Record::from(&record);
        self.pending_bytes += prost::Message::encoded_len(&r);
        self.pending.push(r);
        if self.pending.len() >= RECORDS_PER_MESSAGE || self.pending_bytes >= RECORD_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.pending_bytes = 0;
        let msg = w::SolveResponse {
            msg: Some(ToClient::Records(w::Records {
                records: std::mem::take(&mut self.pending),
            })),
        };
        self.out.send(Ok(msg)).map_err(|_| gone())
    }

    fn progress(&mut self, p: &RequestProgress) -> std::io::Result<()> {
        let msg = w::Progress {
            records: p.records,
            lines: p.lines,
            depth: p.deepening.map_or(0, |d| u32::from(d.depth)),
            proved_empty: p.deepening.and_then(|d| d.depth_exhausted).map(u32::from),
            nodes: p.deepening.map_or(0, |d| d.nodes) + p.live_nodes,
            workers_busy: p.busy_executors as u32,
            workers: p.executors as u32,
        };
        self.out
            .send(Ok(w::SolveResponse {
                msg: Some(ToClient::Progress(msg)),
            }))
            .map_err(|_| gone())
    }

    fn end(&mut self, how: Result<(), RequestError>) {
        self.window.close();
        if let Some(tx) = self.ended.take() {
            let _ = tx.send(());
        }
        let last = match how {
            Ok(()) => end_marker(),
            Err(RequestError::NoExecutorForTable { table }) => {
                Err(Error::NoWorkerForTable { table }.into())
            }
            Err(RequestError::ShuttingDown) => Err(Error::ShuttingDown.into()),
            Err(RequestError::Input(e) | RequestError::Output(e)) => {
                Err(Status::aborted(e.to_string()))
            }
            Err(RequestError::ClientGone) => return,
        };
        let _ = self.out.send(last);
    }
}

pub(super) struct ClientsSvc(pub(super) Arc<Shared>);

#[tonic::async_trait]
impl clients_server::Clients for ClientsSvc {
    type SolveStream = BoxStream<w::SolveResponse>;

    async fn solve(
        &self,
        req: Request<Streaming<w::SolveRequest>>,
    ) -> Result<Response<Self::SolveStream>, Status> {
        let mut inbound = req.into_inner();
        let first = inbound
            .message()
            .await
            .map_err(|s| unreceived(&s).map_or(s, Status::from))?;
        let (settings, open) = match checked_open(&self.0, first) {
            Ok(opened) => opened,
            Err(e) => {
                self.0.metrics.client_refused();
                return Err(e);
            }
        };
        let key = ClientKey(self.0.next_client.fetch_add(1, Ordering::Relaxed));
        let (out, rx) = mpsc::unbounded_channel();
        let window = Arc::new(Semaphore::new(0));
        let (ended, ended_rx) = oneshot::channel();
        self.0.post(Event::Open(
            key,
            Box::new(OpenRequest {
                settings,
                table: open.table,
                sink: Box::new(ClientSink {
                    out: out.clone(),
                    pending: Vec::new(),
                    pending_bytes: 0,
                    ended: Some(ended),
                    window: window.clone(),
                }),
                wait_for_executors_us: open.wait_for_workers_ms.map(|ms| ms.saturating_mul(1000)),
            }),
        ))?;
        let relay = Relay {
            shared: self.0.clone(),
            key,
            window,
            out,
            ended: ended_rx,
        };
        tokio::spawn(relay.run(inbound));
        let stream = UnboundedReceiverStream::new(rx)
            .take_while(|m| !matches!(m, Ok(w::SolveResponse { msg: None })));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn status(
        &self,
        _req: Request<w::StatusRequest>,
    ) -> Result<Response<w::ClusterStatus>, Status> {
        let (tx, rx) = oneshot::channel();
        self.0.post(Event::Query(Box::new(move |d| {
            let _ = tx.send(super::status::cluster_status(d));
        })))?;
        let s = rx.await.map_err(|_| Status::from(Error::ShuttingDown))?;
        Ok(Response::new(s))
    }
}

/// Why a client's message could not be received, to tell it; `None` when its stream
/// broke (it reads nothing more). The decoder answers OUT_OF_RANGE for a message over the
/// size limit and INTERNAL for one it cannot read; a broken stream's status carries the
/// transport's error as its source.
fn unreceived(s: &Status) -> Option<Error> {
    let detail = s.message().to_string();
    match s.code() {
        tonic::Code::OutOfRange => Some(Error::MessageTooLarge { detail }),
        tonic::Code::Internal if std::error::Error::source(s).is_none() => {
            Some(Error::Unreadable { detail })
        }
        _ => None,
    }
}

/// The request a client's first message opens, its settings checked, and its table
/// known; `Err`: why the client is refused (the caller counts it).
fn checked_open(
    shared: &Shared,
    first: Option<w::SolveRequest>,
) -> Result<(Settings, w::Open), Status> {
    let open = match first.and_then(|m| m.msg) {
        Some(w::solve_request::Msg::Open(o)) => o,
        _ => return Err(Error::from(Violation::NoOpen).into()),
    };
    let settings: Settings = open
        .settings
        .ok_or(proto::DecodeError::Missing("open.settings"))
        .and_then(Settings::try_from)
        .map_err(Error::from)
        .and_then(|s| Ok(s.validate()?.into_inner()))?;
    if !shared.known_tables.contains(&open.table) {
        return Err(Error::UnknownTable {
            name: open.table,
            known: shared.known_tables.clone(),
        }
        .into());
    }
    Ok((settings, open))
}

/// What relays a client's lines to its open request.
struct Relay {
    shared: Arc<Shared>,
    key: ClientKey,
    /// Lines in flight: a permit per line that may be posted.
    window: Arc<Semaphore>,
    /// The client's responses (errors that end its stream go there).
    out: ClientTx,
    /// Fires when the request is over.
    ended: oneshot::Receiver<()>,
}

impl Relay {
    /// Posts the client's lines to the driver until its end, a breach of the protocol,
    /// the request's end or the client's departure; then tells the driver the client
    /// is gone.
    async fn run(mut self, mut inbound: Streaming<w::SolveRequest>) {
        let mut last_id = 0u64;
        loop {
            let m = tokio::select! {
                m = inbound.message() => m,
                _ = self.out.closed() => break,
                _ = &mut self.ended => break,
            };
            let Some(lines) = self.lines_of(m).await else {
                break;
            };
            let (shared, out) = (&self.shared, &self.out);
            if let Err(reason) =
                post_lines(shared, self.key, lines, &mut last_id, &self.window, out).await
            {
                let _ = out.send(Err(Error::from(reason).into()));
                break;
            }
            if out.is_closed() {
                break;
            }
        }
        let _ = self.shared.post(Event::ClientGone(self.key));
    }

    /// The lines of the client's message `m`; `None` when the stream is to end (the
    /// client's end, once the request is over or the client gone; a message out of
    /// place or unreadable, said to the client; a closed stream).
    async fn lines_of(
        &mut self,
        m: Result<Option<w::SolveRequest>, Status>,
    ) -> Option<Vec<w::Line>> {
        use w::solve_request::Msg;
        match m {
            Ok(Some(w::SolveRequest {
                msg: Some(Msg::Lines(l)),
            })) => Some(l.lines),
            Ok(Some(w::SolveRequest {
                msg: Some(Msg::End(_)),
            })) => {
                let _ = self.shared.post(Event::End(self.key));
                // The request lives until its records are out or its client goes away,
                // whichever comes first.
                tokio::select! {
                    _ = self.out.closed() => {}
                    _ = &mut self.ended => {}
                }
                None
            }
            Ok(Some(_)) => {
                let _ = self
                    .out
                    .send(Err(Error::from(Violation::Unexpected).into()));
                None
            }
            Ok(None) => None,
            Err(s) => {
                // Too large or not a message: the stream ends with why, never with OK.
                if let Some(e) = unreceived(&s) {
                    tracing::info!(client = self.key.0, "a client's message refused: {e}");
                    let _ = self.out.send(Err(e.into()));
                }
                None
            }
        }
    }
}

/// Checks and posts one message's lines, each after a permit of the window (the client
/// waits with us: flow control). `Err`: the protocol breach that ends the stream.
async fn post_lines(
    shared: &Shared,
    key: ClientKey,
    lines: Vec<w::Line>,
    last_id: &mut u64,
    window: &Semaphore,
    out: &ClientTx,
) -> Result<(), Violation> {
    for l in lines {
        if l.id <= *last_id {
            return Err(Violation::LineIdsNotIncreasing {
                id: l.id,
                after: *last_id,
            });
        }
        *last_id = l.id;
        let proved_empty = match l.proved_empty.map(u8::try_from) {
            None => None,
            Some(Ok(d)) => Some(d),
            Some(Err(_)) => return Err(Violation::ProvedEmptyOutOfRange { line: l.id }),
        };
        let permit = tokio::select! {
            p = window.acquire() => p,
            _ = out.closed() => return Ok(()),
        };
        match permit {
            Ok(p) => p.forget(),
            Err(_) => return Ok(()),
        }
        let parsed = if l.not_utf8 {
            Err(RecordError::NotUtf8)
        } else {
            tables::Position::parse(&l.text).map_err(RecordError::from)
        };
        let line = InputLine {
            line: l.id,
            input: l.text,
            parsed,
        };
        if shared
            .post(Event::Lines(key, vec![Line { line, proved_empty }]))
            .is_err()
        {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_go_in_messages_of_a_bounded_size() {
        let (out, mut rx) = mpsc::unbounded_channel();
        let mut sink = ClientSink {
            out,
            pending: Vec::new(),
            pending_bytes: 0,
            ended: None,
            window: Arc::new(Semaphore::new(0)),
        };
        // Records of 100 kB each (a line as long as a client sends is 64 KiB at most).
        let input = "R ".repeat(50_000);
        for line in 1..=40 {
            let record = Record {
                line,
                input: input.clone(),
                outcome: Err(RecordError::NotUtf8),
            };
            sink.record(record).unwrap();
        }
        sink.flush().unwrap();
        let mut got = 0;
        while let Ok(m) = rx.try_recv() {
            let m = m.unwrap();
            let size = prost::Message::encoded_len(&m);
            assert!(size <= RECORD_BYTES + 2 * input.len(), "{size} bytes");
            if let Some(ToClient::Records(rs)) = m.msg {
                got += rs.records.len();
            }
        }
        assert_eq!(got, 40);
    }

    #[test]
    fn a_message_too_large_or_unreadable_is_said_a_broken_stream_is_not() {
        let too_large = unreceived(&Status::out_of_range("found 17000000 bytes"));
        assert!(matches!(too_large, Some(Error::MessageTooLarge { .. })));
        let status = Status::from(too_large.unwrap());
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        assert!(status.message().contains("16777216"), "{status:?}");
        let garbled = unreceived(&Status::internal("failed to decode Protobuf message"));
        assert!(matches!(garbled, Some(Error::Unreadable { .. })));
        let mut reset = Status::internal("h2 protocol error: stream reset");
        reset.set_source(Arc::new(std::io::Error::other("reset")));
        assert!(unreceived(&reset).is_none());
        assert!(unreceived(&Status::cancelled("gone")).is_none());
    }
}
