//! One request over as many `Clients.Solve` streams as it takes.
//!
//! The session keeps the lines sent that have no record yet (`pending`, oldest first);
//! when a stream breaks it reconnects with backoff and sends `Open` and those lines
//! again, then goes on reading the input. Records arrive in input order, so each must be
//! for the oldest pending line. One optimal position sent again carries the deepest
//! length already proved empty (`Line.proved_empty`), so a new coordinator does not
//! search those depths again. The time without a working connection is bounded
//! ([`Outage`]). A line too long to send has its record made by the client or goes as its
//! position ([`outgoing`](super::outgoing)); its record takes its turn all the same.

use super::error::ClientError;
use super::journal::Journal;
use super::observer::{Notice, Observer};
use super::outage::Outage;
use super::outgoing::Outgoing;
use super::reader::Read;
use crate::output;
use proto::backoff::{Backoff, BackoffPolicy};
use proto::transport::{self, ClientConfig, TransportError};
use proto::wire as w;
use proto::Settings;
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// At most this many lines in one `Lines` message.
pub(super) const CHUNK_LINES: usize = 256;
/// A `Lines` message is closed once its texts reach this many bytes.
const CHUNK_BYTES: usize = 64 << 10;
/// Messages queued for the stream's sender (flow control does the rest).
const OUTGOING: usize = 4;

/// The client's reconnection delays: 100 ms doubling to 5 s, ±50 %.
pub(super) fn backoff() -> Backoff {
    let policy = BackoffPolicy {
        max: Duration::from_secs(5),
        ..BackoffPolicy::default()
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()).rotate_left(32);
    Backoff::new(policy, seed)
}

// ---- failures ----------------------------------------------------------------------------

/// Why a stream ended before its work was done.
#[derive(Debug)]
pub(super) enum Broken {
    /// The coordinator went away, the connection failed, or it did not answer in time:
    /// connect and send again.
    Retry(String),
    /// Trying again cannot help (refused, a protocol violation, the output failed).
    Fatal(ClientError),
}

impl Broken {
    /// A connection failure: retried, unless the configuration itself is wrong.
    pub(super) fn transport(e: TransportError) -> Broken {
        match e {
            TransportError::Connect { .. } => Broken::Retry(e.to_string()),
            e => Broken::Fatal(e.into()),
        }
    }

    /// A gRPC status: refusals end the run with the coordinator's message (among them
    /// FAILED_PRECONDITION: no connected worker holds the table, RESOURCE_EXHAUSTED: a
    /// message over the size limit), the rest (unavailable, reset, cancelled, ...) is a
    /// lost coordinator.
    pub(super) fn status(s: &tonic::Status) -> Broken {
        use tonic::Code;
        let message = if s.message().is_empty() {
            s.code().description().to_string()
        } else {
            s.message().to_string()
        };
        match s.code() {
            Code::Unauthenticated
            | Code::PermissionDenied
            | Code::InvalidArgument
            | Code::FailedPrecondition
            | Code::NotFound
            | Code::Unimplemented
            | Code::OutOfRange
            | Code::ResourceExhausted
            | Code::AlreadyExists => Broken::Fatal(ClientError::Refused {
                code: s.code(),
                message,
            }),
            code => Broken::Retry(format!("{message} ({code:?})")),
        }
    }
}

/// Retries `attempt` (a question to the coordinator before the request) with the
/// client's backoff while it fails with [`Broken::Retry`], within the bound of `outage`,
/// telling `observer` of each retry.
pub(super) async fn retrying<T, F, Fut>(
    cfg: &ClientConfig,
    outage: &mut Outage,
    observer: &mut dyn Observer,
    mut attempt: F,
) -> Result<T, ClientError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Broken>>,
{
    let mut backoff = backoff();
    loop {
        let deadline = outage.deadline();
        let once = attempt();
        let r = match deadline {
            Some(d) => tokio::time::timeout_at(d, once)
                .await
                .unwrap_or_else(|_| Err(Broken::Retry(no_answer(cfg)))),
            None => once.await,
        };
        match r {
            Ok(v) => {
                outage.connected();
                return Ok(v);
            }
            Err(Broken::Fatal(e)) => return Err(e),
            Err(Broken::Retry(why)) => {
                let wait = outage.failed(&cfg.url, &why, backoff.next_delay())?;
                observer.notice(&Notice::AskingAgain {
                    url: cfg.url.clone(),
                    why,
                    wait,
                });
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// The failure of an attempt that got no answer before the bound.
fn no_answer(cfg: &ClientConfig) -> String {
    format!("no answer from {}", cfg.url)
}

// ---- the session ---------------------------------------------------------------------

/// Where records go.
pub(super) enum Sink {
    /// A scramble set: the journal (or standard output).
    Journal(Journal),
    /// One position: its record, written at the end the way a local run writes it.
    One(Option<proto::Record>),
}

/// One request over as many streams as it takes.
pub(super) struct Session<'o> {
    /// How to reach the coordinator.
    cfg: ClientConfig,
    /// The request's first message, sent on every stream.
    open: w::Open,
    /// The settings, to render records.
    settings: Settings,
    /// Lines read that have no record yet, oldest first (sent, or about to be).
    pending: VecDeque<w::Line>,
    /// The texts of the pending lines sent as their positions, by id (their records get
    /// them back).
    restated: BTreeMap<u64, String>,
    /// Records the client made (lines too long to send that are no position), oldest
    /// first, each written once every line before it has its record.
    local: VecDeque<proto::Record>,
    /// The input reader; `None` once the input has ended.
    pub(super) input: Option<mpsc::Receiver<Read>>,
    /// The input's name, for a read error.
    pub(super) input_path: std::path::PathBuf,
    /// Optimal deepening of one position: the deepest length proved to have no solution
    /// (from Progress), sent again with the line on a new stream.
    proved_empty: Option<u32>,
    /// Where records go.
    pub(super) sink: Sink,
    /// Told of records, progress and notices.
    pub(super) observer: &'o mut dyn Observer,
    /// Input bytes of the records received and of the lines skipped as already done.
    bytes: u64,
    /// Input bytes of the lines skipped as already done (counted by the reader).
    skipped: Arc<AtomicU64>,
    /// The bound on the time without a working connection.
    outage: Outage,
    /// Records received.
    pub(super) records: u64,
    /// Of which have no solution.
    pub(super) errors: u64,
    /// Streams opened again.
    pub(super) reconnections: u64,
}

impl<'o> Session<'o> {
    /// A session of the request `open` (to `cfg`, settings for rendering), writing to
    /// `sink`; `skipped` counts the input bytes the reader skips.
    pub(super) fn new(
        cfg: &ClientConfig,
        open: w::Open,
        settings: &Settings,
        sink: Sink,
        observer: &'o mut dyn Observer,
        outage: Outage,
        skipped: Arc<AtomicU64>,
    ) -> Session<'o> {
        Session {
            cfg: cfg.clone(),
            open,
            settings: settings.clone(),
            pending: VecDeque::new(),
            restated: BTreeMap::new(),
            local: VecDeque::new(),
            input: None,
            input_path: std::path::PathBuf::new(),
            proved_empty: None,
            sink,
            observer,
            bytes: 0,
            skipped,
            outage,
            records: 0,
            errors: 0,
            reconnections: 0,
        }
    }

    /// Every line read has its record.
    fn finished(&self) -> bool {
        self.input.is_none() && self.pending.is_empty() && self.local.is_empty()
    }

    /// Takes a line of the input: to send, or its record.
    pub(super) fn queue(&mut self, line: Outgoing) -> Result<(), ClientError> {
        match line {
            Outgoing::Line(l) => self.pending.push_back(l),
            Outgoing::Restated { line, input } => {
                self.restated.insert(line.id, input);
                self.pending.push_back(line);
            }
            Outgoing::Record(r) => {
                self.local.push_back(r);
                let mut out = Vec::new();
                self.release_local(&mut out);
                self.deliver(out).map_err(ClientError::Write)?;
            }
        }
        Ok(())
    }

    /// Moves the records the client made whose turn it is (no pending line before them)
    /// to `out`.
    fn release_local(&mut self, out: &mut Vec<proto::Record>) {
        while let Some(r) = self.local.front() {
            if self.pending.front().is_some_and(|l| l.id < r.line) {
                return;
            }
            if let Some(r) = self.local.pop_front() {
                self.accept(r, out);
            }
        }
    }

    /// Counts a line's record, tells the observer, and puts it in `out` (or the sink of
    /// one position).
    fn accept(&mut self, rec: proto::Record, out: &mut Vec<proto::Record>) {
        self.records += 1;
        if output::failure(&rec, &self.settings).is_some() {
            self.errors += 1;
        }
        self.bytes += rec.input.len() as u64 + 1;
        let skipped = self.skipped.load(Ordering::Relaxed);
        self.observer.record(self.records, self.bytes + skipped);
        match &mut self.sink {
            Sink::Journal(_) => out.push(rec),
            Sink::One(got) => *got = Some(rec),
        }
    }

    /// Appends `records` to the journal (one write).
    fn deliver(&mut self, records: Vec<proto::Record>) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Journal(j) if !records.is_empty() => {
                j.write(&records)?;
                self.observer.records(&records);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Streams until every line has its record, reconnecting as often as it takes within
    /// the bound on the time without a working connection.
    pub(super) async fn run(&mut self) -> Result<(), ClientError> {
        if self.finished() {
            return Ok(());
        }
        let mut backoff = backoff();
        loop {
            let mut answered = false;
            let deadline = self.outage.deadline();
            match self.stream(&mut answered, deadline).await {
                Ok(()) => return Ok(()),
                Err(Broken::Fatal(e)) => return Err(e),
                Err(Broken::Retry(why)) => {
                    if answered {
                        backoff.reset();
                    }
                    let wait = self
                        .outage
                        .failed(&self.cfg.url, &why, backoff.next_delay())?;
                    self.observer.notice(&Notice::Reconnecting {
                        url: self.cfg.url.clone(),
                        why,
                        wait,
                        pending: self.pending.len(),
                    });
                    tokio::time::sleep(wait).await;
                    self.reconnections += 1;
                }
            }
        }
    }

    /// The coordinator answered on this stream: the connection works.
    fn answered(&mut self, answered: &mut bool) {
        if !*answered {
            *answered = true;
            self.outage.connected();
        }
    }

    /// One stream: connect, send Open, the pending lines, then the rest of the input and
    /// End, and take the records and progress that come back. `answered` is set once the
    /// coordinator answers (the call's response, or any message); until then the stream
    /// must be answered by `deadline`.
    async fn stream(
        &mut self,
        answered: &mut bool,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<(), Broken> {
        let silent = no_answer(&self.cfg);
        let channel = match deadline {
            Some(d) => tokio::time::timeout_at(d, self.cfg.connect())
                .await
                .map_err(|_| Broken::Retry(silent.clone()))?,
            None => self.cfg.connect().await,
        }
        .map_err(Broken::transport)?;
        let auth = self.cfg.auth().map_err(|e| Broken::Fatal(e.into()))?;
        let mut client = transport::clients_client(channel, auth);
        let (tx, rx) = mpsc::channel::<w::SolveRequest>(OUTGOING);
        tx.try_send(w::SolveRequest {
            msg: Some(w::solve_request::Msg::Open(self.open.clone())),
        })
        .map_err(|_| Broken::Retry("the request stream closed".into()))?;
        let mut tx = Some(tx);
        let mut call = Some(Box::pin(client.solve(ReceiverStream::new(rx))));
        let mut responses: Option<tonic::Streaming<w::SolveResponse>> = None;
        // The last line id sent on this stream.
        let mut sent_upto = 0u64;
        loop {
            let unsent = self.pending.partition_point(|l| l.id <= sent_upto);
            let have_unsent = unsent < self.pending.len();
            let want_input = self.input.is_some()
                && self.pending.len() - unsent + self.local.len() < CHUNK_LINES;
            let can_send = tx.is_some() && (have_unsent || self.input.is_none());
            // End was sent: the request stream closes too; what is left is to listen.
            let mut close = false;
            let waiting = !*answered && deadline.is_some();
            tokio::select! {
                biased;
                r = poll_opt(&mut call) => {
                    call = None;
                    match r {
                        Ok(resp) => {
                            self.answered(answered);
                            responses = Some(resp.into_inner());
                        }
                        Err(s) => return self.ended(Broken::status(&s)),
                    }
                }
                m = next_message(&mut responses) => match m {
                    Ok(Some(msg)) => {
                        self.answered(answered);
                        self.take(msg, sent_upto)?;
                    }
                    Ok(None) => {
                        return self.ended(Broken::Retry(
                            "the coordinator ended the stream before every line had its \
                             record"
                                .into(),
                        ))
                    }
                    Err(s) => return self.ended(Broken::status(&s)),
                },
                r = recv_opt(&mut self.input), if want_input => match r {
                    Some(Read::Line(l)) => self.queue(l).map_err(Broken::Fatal)?,
                    Some(Read::End) | None => self.input = None,
                    Some(Read::Failed(e)) => return Err(Broken::Fatal(ClientError::Input {
                        path: self.input_path.clone(),
                        source: e,
                    })),
                },
                permit = reserve_opt(&tx), if can_send => match permit {
                    Ok(p) if have_unsent => {
                        let (msg, last) = self.chunk(unsent);
                        p.send(msg);
                        sent_upto = last;
                    }
                    Ok(p) => {
                        p.send(w::SolveRequest {
                            msg: Some(w::solve_request::Msg::End(w::End {})),
                        });
                        close = true;
                    }
                    Err(_) => {
                        return self.ended(Broken::Retry("the request stream closed".into()))
                    }
                },
                () = sleep_until_opt(deadline), if waiting => {
                    return Err(Broken::Retry(silent));
                }
            }
            if close {
                tx = None;
            }
        }
    }

    /// A stream that ended (or broke) is a success if every line has its record by then.
    fn ended(&self, b: Broken) -> Result<(), Broken> {
        if self.finished() {
            Ok(())
        } else {
            Err(b)
        }
    }

    /// The next `Lines` message: pending lines from index `from`, at most a chunk; and
    /// the last id in it.
    fn chunk(&self, from: usize) -> (w::SolveRequest, u64) {
        let mut lines = Vec::new();
        let mut bytes = 0;
        for l in self.pending.range(from..) {
            if lines.len() >= CHUNK_LINES || (bytes >= CHUNK_BYTES && !lines.is_empty()) {
                break;
            }
            bytes += l.text.len() + 16;
            let mut l = l.clone();
            if matches!(self.sink, Sink::One(_)) {
                l.proved_empty = self.proved_empty;
            }
            lines.push(l);
        }
        let last = lines.last().map_or(0, |l| l.id);
        let msg = w::SolveRequest {
            msg: Some(w::solve_request::Msg::Lines(w::Lines { lines })),
        };
        (msg, last)
    }

    /// Takes one message of the coordinator: records (each must be for the oldest pending
    /// line, sent on this stream) into the sink, progress to the observer.
    fn take(&mut self, msg: w::SolveResponse, sent_upto: u64) -> Result<(), Broken> {
        match msg.msg {
            Some(w::solve_response::Msg::Records(rs)) => {
                let mut out = Vec::with_capacity(rs.records.len());
                let mut fault = None;
                for r in rs.records {
                    let front = self.pending.front().map(|l| l.id);
                    if front != Some(r.id) || r.id > sent_upto {
                        fault = Some(ClientError::OutOfOrder {
                            got: r.id,
                            oldest: front.filter(|&f| f <= sent_upto),
                        });
                        break;
                    }
                    let mut rec = match proto::Record::try_from(r) {
                        Ok(rec) => rec,
                        Err(e) => {
                            fault = Some(ClientError::BadRecord(e));
                            break;
                        }
                    };
                    self.release_local(&mut out);
                    self.pending.pop_front();
                    if let Some(input) = self.restated.remove(&rec.line) {
                        rec.input = input;
                    }
                    self.accept(rec, &mut out);
                }
                self.release_local(&mut out);
                self.deliver(out)
                    .map_err(|e| Broken::Fatal(ClientError::Write(e)))?;
                match fault {
                    Some(e) => Err(Broken::Fatal(e)),
                    None => Ok(()),
                }
            }
            Some(w::solve_response::Msg::Progress(p)) => {
                if matches!(self.sink, Sink::One(_)) {
                    self.proved_empty = self.proved_empty.max(p.proved_empty);
                }
                self.observer.progress(&p, self.proved_empty);
                Ok(())
            }
            // A message this client does not know (a newer coordinator): nothing to do.
            None => Ok(()),
        }
    }
}

/// Awaits a future that may be absent (never ready then).
async fn poll_opt<F: Future + Unpin>(f: &mut Option<F>) -> F::Output {
    match f.as_mut() {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `deadline`, or for ever without one.
async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// The next message of a response stream that may not have begun (never ready then).
async fn next_message<T>(s: &mut Option<tonic::Streaming<T>>) -> Result<Option<T>, tonic::Status> {
    match s.as_mut() {
        Some(s) => s.message().await,
        None => std::future::pending().await,
    }
}

/// The next input message, if the input has not ended.
async fn recv_opt(rx: &mut Option<mpsc::Receiver<Read>>) -> Option<Read> {
    match rx.as_mut() {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Room for one request message, if the request stream is still open.
async fn reserve_opt(
    tx: &Option<mpsc::Sender<w::SolveRequest>>,
) -> Result<mpsc::Permit<'_, w::SolveRequest>, mpsc::error::SendError<()>> {
    match tx {
        Some(tx) => tx.reserve().await,
        None => std::future::pending().await,
    }
}
