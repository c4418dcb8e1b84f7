//! `cubeswarm solve --coordinator URL`: the client of a cluster.
//!
//! # Layout
//! - [`run`]: the whole command for [`Options`]: the table to ask for, the output (the
//!   [`Journal`], resumed or new), the input reader, the session, the summary.
//! - `Session`: one request, over as many `Clients.Solve` streams as it takes. It keeps the
//!   lines sent that have no record yet (`pending`, oldest first); when a stream breaks it
//!   reconnects with backoff and sends `Open` and those lines again, then goes on reading
//!   the input. Records arrive in input order, so each must be for the oldest pending line.
//! - `Backoff`: 100 ms doubling to 5 s, with jitter, forever.
//! - `View`: the progress bar (whole cluster: positions per second, workers busy) or, for
//!   one position, the deepening's depth and proof so far.
//!
//! The client keeps no state but the output file, so a coordinator restart loses and
//! duplicates nothing: what has a record is in the journal, the rest is sent again. One
//! optimal position sent again carries the deepest length already proved empty
//! (`Line.proved_empty`), so the new coordinator does not search those depths again.
//!
//! Everything runs on one current-thread tokio runtime; the input is read on its own
//! thread (a file or standard input blocks) into a bounded channel.

use crate::journal::{Done, Journal};
use crate::output::{self, Format};
use crate::solve_cmd;
use anyhow::{anyhow, Context as _};
use coordinator::input::read_lines;
use proto::transport::{self, ClientConfig, TransportError};
use proto::wire as w;
use proto::{Method, RecordError, Settings};
use std::collections::VecDeque;
use std::future::Future;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// At most this many lines in one `Lines` message.
const CHUNK_LINES: usize = 256;
/// A `Lines` message is closed once its texts reach this many bytes.
const CHUNK_BYTES: usize = 64 << 10;
/// Lines read ahead of what is sent (the reader thread's channel).
const READ_AHEAD: usize = 4096;
/// Messages queued for the stream's sender (flow control does the rest).
const OUTGOING: usize = 4;
/// The first reconnection delay.
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
/// The longest reconnection delay.
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What to solve.
#[derive(Clone, Debug)]
pub enum Work {
    /// One position from the command line (line id 1).
    One(String),
    /// A file of positions, one per line ('-': standard input).
    File(PathBuf),
}

/// Everything the client needs, checked by `solve` (settings as for a local run).
#[derive(Clone, Debug)]
pub struct Options {
    /// How to reach the coordinator (URL, token, TLS).
    pub client: ClientConfig,
    /// What is asked for each position.
    pub settings: Settings,
    /// The H48 table (`--table`); `None`: the largest any connected worker holds.
    /// Two-phase always uses "twophase".
    pub table: Option<String>,
    /// The positions.
    pub work: Work,
    /// The output file (the journal); `None`: standard output.
    pub output: Option<PathBuf>,
    /// How records are written.
    pub format: Format,
    /// Continue `output`: skip the ids already in it (see [`Journal::resume`]).
    pub resume: bool,
    /// No progress bar and no summary (warnings are still shown).
    pub quiet: bool,
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Records received (and written) by this run.
    pub records: u64,
    /// Of which errors.
    pub errors: u64,
    /// Records already in the output file (`--resume`).
    pub resumed: u64,
    /// Streams that broke and were opened again.
    pub reconnections: u64,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// Runs `solve` on the cluster of `opts.client`: prints what a local `solve` prints, and
/// fails the way it fails (one position without a solution is an error).
pub fn run(opts: Options) -> anyhow::Result<Summary> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client's runtime")?
        .block_on(run_async(opts))
}

async fn run_async(opts: Options) -> anyhow::Result<Summary> {
    // Settings that can never work fail now, before any connection.
    opts.client.endpoint()?;
    opts.client.auth()?;
    let table = choose_table(&opts).await?;
    let start = Instant::now();
    let open = w::Open {
        settings: Some((&opts.settings).into()),
        table,
    };
    match &opts.work {
        Work::One(text) => {
            // Opened before solving, as locally: a bad path fails at once.
            let mut out: Box<dyn Write> = match &opts.output {
                Some(p) => Box::new(
                    std::fs::File::create(p)
                        .with_context(|| format!("cannot create output file {}", p.display()))?,
                ),
                None => Box::new(std::io::stdout()),
            };
            let line = w::Line {
                id: 1,
                text: text.clone(),
                proved_empty: None,
                not_utf8: false,
            };
            let view = View::single(!opts.quiet);
            let mut s = Session::new(&opts, open, Sink::One(None), view);
            s.pending.push_back(line);
            s.run().await?;
            s.view.finish();
            let summary = s.summary(start, 0);
            let Sink::One(Some(rec)) = s.sink else {
                return Err(anyhow!(
                    "the coordinator ended without a record for the position"
                ));
            };
            let rec = output::Record::from_proto(rec, &opts.settings);
            solve_cmd::write_single(&mut out, opts.format, &rec)?;
            Ok(summary)
        }
        Work::File(path) => {
            let (journal, done, resumed) = open_journal(&opts)?;
            let (reader, total): (Box<dyn BufRead + Send>, Option<u64>) = if path.as_os_str() == "-"
            {
                (Box::new(BufReader::new(std::io::stdin())), None)
            } else {
                let f = std::fs::File::open(path)
                    .with_context(|| format!("cannot open input file {}", path.display()))?;
                let len = f.metadata().ok().map(|m| m.len());
                (Box::new(BufReader::with_capacity(1 << 16, f)), len)
            };
            let skipped = Arc::new(AtomicU64::new(0));
            let (tx, rx) = mpsc::channel(READ_AHEAD);
            spawn_reader(reader, done, tx, Arc::clone(&skipped))?;
            let view = View::batch(!opts.quiet, total, skipped);
            let mut s = Session::new(&opts, open, Sink::Journal(journal), view);
            s.input = Some(rx);
            let r = s.run().await;
            s.view.finish();
            r.with_context(|| format!("solving {}", path.display()))?;
            let summary = s.summary(start, resumed);
            if !opts.quiet {
                solve_cmd::print_summary(summary.records, summary.errors, summary.seconds);
            }
            Ok(summary)
        }
    }
}

/// The output of a scramble set: resumed, new, or standard output; the ids done, and how
/// many records were kept.
fn open_journal(opts: &Options) -> anyhow::Result<(Journal, Done, u64)> {
    let Some(path) = &opts.output else {
        if opts.resume {
            return Err(anyhow!("--resume needs --output (the file to continue)"));
        }
        return Ok((Journal::stdout(opts.format)?, Done::default(), 0));
    };
    if let Work::File(input) = &opts.work {
        if let (Ok(a), Ok(b)) = (std::fs::canonicalize(input), std::fs::canonicalize(path)) {
            if a == b {
                return Err(anyhow!(
                    "--output {} is the input file; give another file",
                    path.display()
                ));
            }
        }
    }
    if !opts.resume {
        return Ok((Journal::create(path, opts.format)?, Done::default(), 0));
    }
    let (journal, r) = Journal::resume(path, opts.format)?;
    let kept = r.done.len() as u64;
    if !opts.quiet {
        match r.dropped {
            Some(id) => eprintln!(
                "resuming {}: {kept} records kept; the last one (line {id}{}) is solved again",
                path.display(),
                if r.torn { ", cut short" } else { "" },
            ),
            None => eprintln!("resuming {}: no records yet", path.display()),
        }
    }
    Ok((journal, r.done, kept))
}

/// What the input reader sends.
#[derive(Debug)]
enum Read {
    /// A position line to send (not already in the journal).
    Line(w::Line),
    /// The input ended.
    End,
    /// The input could not be read.
    Failed(std::io::Error),
}

/// Reads `input` on its own thread: blanks and comments skipped exactly as locally,
/// lines already done skipped (their bytes counted in `skipped`), the rest sent to `tx`.
fn spawn_reader(
    input: Box<dyn BufRead + Send>,
    mut done: Done,
    tx: mpsc::Sender<Read>,
    skipped: Arc<AtomicU64>,
) -> anyhow::Result<()> {
    std::thread::Builder::new()
        .name("input".into())
        .spawn(move || {
            let r = read_lines(input, |l| {
                if done.contains_next(l.line) {
                    skipped.fetch_add(l.input.len() as u64 + 1, Ordering::Relaxed);
                    return true;
                }
                let line = w::Line {
                    id: l.line,
                    not_utf8: matches!(l.parsed, Err(RecordError::NotUtf8)),
                    text: l.input,
                    proved_empty: None,
                };
                tx.blocking_send(Read::Line(line)).is_ok()
            });
            let _ = tx.blocking_send(match r {
                Ok(()) => Read::End,
                Err(e) => Read::Failed(e),
            });
        })
        .context("starting the input reader")?;
    Ok(())
}

// ---- the table -------------------------------------------------------------------------

/// The table every job of the request needs: "twophase", the `--table` asked for, or the
/// largest H48 table a connected worker holds.
async fn choose_table(opts: &Options) -> anyhow::Result<String> {
    if opts.settings.method == Method::TwoPhase {
        return Ok(proto::catalog::TWOPHASE.to_string());
    }
    if let Some(t) = &opts.table {
        return match proto::catalog::find(t) {
            Some(e) if e.method == Method::Optimal => Ok(t.clone()),
            _ => Err(anyhow!(
                "unknown H48 table {t:?}; `cubeswarm tables list` shows the known ones"
            )),
        };
    }
    let status = cluster_status(&opts.client).await?;
    let names: Vec<String> = status.workers.into_iter().flat_map(|w| w.tables).collect();
    largest_h48(&names).map(str::to_string).ok_or_else(|| {
        anyhow!(
            "no worker connected to {} holds an H48 table; start a worker with one, or name \
             the table with --table",
            opts.client.url
        )
    })
}

/// The H48 table of `names` with the most entries, by the catalog's one rule.
fn largest_h48(names: &[String]) -> Option<&'static str> {
    proto::catalog::largest_h48_where(|e| names.iter().any(|n| n == e.name))
}

/// `Clients.Status`, retried like a broken stream.
async fn cluster_status(cfg: &ClientConfig) -> anyhow::Result<w::ClusterStatus> {
    let mut backoff = Backoff::default();
    loop {
        let once = async {
            let channel = cfg.connect().await.map_err(Broken::transport)?;
            let auth = cfg.auth().map_err(|e| Broken::Fatal(e.into()))?;
            transport::clients_client(channel, auth)
                .status(w::StatusRequest {})
                .await
                .map(tonic::Response::into_inner)
                .map_err(|s| Broken::status(&s))
        };
        match once.await {
            Ok(s) => return Ok(s),
            Err(Broken::Fatal(e)) => return Err(e),
            Err(Broken::Retry(why)) => {
                let wait = backoff.next();
                tracing::warn!(
                    "cannot ask the coordinator at {} for its workers' tables ({why}); \
                     retrying in {wait:.1?}",
                    cfg.url
                );
                tokio::time::sleep(wait).await;
            }
        }
    }
}

// ---- failures and backoff ----------------------------------------------------------------

/// Why a stream ended before its work was done.
#[derive(Debug)]
enum Broken {
    /// The coordinator went away or the connection failed: connect and send again.
    Retry(String),
    /// Trying again cannot help (refused, a protocol violation, the output failed).
    Fatal(anyhow::Error),
}

impl Broken {
    /// A connection failure: retried, unless the configuration itself is wrong.
    fn transport(e: TransportError) -> Broken {
        match e {
            TransportError::Connect { .. } => Broken::Retry(e.to_string()),
            e => Broken::Fatal(e.into()),
        }
    }

    /// A gRPC status: refusals end the run with the coordinator's message, the rest
    /// (unavailable, reset, cancelled, ...) is a lost coordinator.
    fn status(s: &tonic::Status) -> Broken {
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
            | Code::AlreadyExists => {
                Broken::Fatal(anyhow!("coordinator refused the request: {message}"))
            }
            code => Broken::Retry(format!("{message} ({code:?})")),
        }
    }
}

/// Reconnection delays: 100 ms doubling to 5 s, each drawn between half and all of it.
#[derive(Debug)]
struct Backoff {
    /// The next delay before jitter.
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            next: BACKOFF_FIRST,
        }
    }
}

impl Backoff {
    /// The delay to wait now.
    fn next(&mut self) -> Duration {
        let d = self.next;
        self.next = (d * 2).min(BACKOFF_MAX);
        d.mul_f64(0.5 + 0.5 * unit_random())
    }

    /// The coordinator answered: the next failure waits the shortest delay again.
    fn reset(&mut self) {
        self.next = BACKOFF_FIRST;
    }
}

/// A number in [0, 1), different on each call (std's per-map random hash keys).
fn unit_random() -> f64 {
    use std::hash::BuildHasher;
    let r = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
    (r >> 11) as f64 / (1u64 << 53) as f64
}

// ---- the session ---------------------------------------------------------------------

/// Where records go.
enum Sink {
    /// A scramble set: the journal (or standard output).
    Journal(Journal),
    /// One position: its record, written at the end the way a local run writes it.
    One(Option<proto::Record>),
}

/// One request over as many streams as it takes.
struct Session {
    /// How to reach the coordinator.
    cfg: ClientConfig,
    /// The request's first message, sent on every stream.
    open: w::Open,
    /// The settings, to render records.
    settings: Settings,
    /// Lines read that have no record yet, oldest first (sent, or about to be).
    pending: VecDeque<w::Line>,
    /// The input reader; `None` once the input has ended.
    input: Option<mpsc::Receiver<Read>>,
    /// Optimal deepening of one position: the deepest length proved to have no solution
    /// (from Progress), sent again with the line on a new stream.
    proved_empty: Option<u32>,
    /// Where records go.
    sink: Sink,
    /// Progress shown to the user.
    view: View,
    /// Records received.
    records: u64,
    /// Of which errors.
    errors: u64,
    /// Streams opened again.
    reconnections: u64,
}

impl Session {
    fn new(opts: &Options, open: w::Open, sink: Sink, view: View) -> Session {
        Session {
            cfg: opts.client.clone(),
            open,
            settings: opts.settings.clone(),
            pending: VecDeque::new(),
            input: None,
            proved_empty: None,
            sink,
            view,
            records: 0,
            errors: 0,
            reconnections: 0,
        }
    }

    fn summary(&self, start: Instant, resumed: u64) -> Summary {
        Summary {
            records: self.records,
            errors: self.errors,
            resumed,
            reconnections: self.reconnections,
            seconds: start.elapsed().as_secs_f64(),
        }
    }

    /// Every line read has its record.
    fn finished(&self) -> bool {
        self.input.is_none() && self.pending.is_empty()
    }

    /// Streams until every line has its record, reconnecting as often as it takes.
    async fn run(&mut self) -> anyhow::Result<()> {
        let mut backoff = Backoff::default();
        loop {
            let mut answered = false;
            match self.stream(&mut answered).await {
                Ok(()) => return Ok(()),
                Err(Broken::Fatal(e)) => return Err(e),
                Err(Broken::Retry(why)) => {
                    if answered {
                        backoff.reset();
                    }
                    let wait = backoff.next();
                    let pending = self.pending.len();
                    let url = self.cfg.url.clone();
                    self.view.suspend(|| {
                        tracing::warn!(
                            "lost the coordinator at {url} ({why}); reconnecting in \
                             {wait:.1?}, then sending again the {pending} lines without a \
                             record"
                        )
                    });
                    tokio::time::sleep(wait).await;
                    self.reconnections += 1;
                }
            }
        }
    }

    /// One stream: connect, send Open, the pending lines, then the rest of the input and
    /// End, and take the records and progress that come back. `answered` is set once the
    /// coordinator sends anything.
    async fn stream(&mut self, answered: &mut bool) -> Result<(), Broken> {
        let channel = self.cfg.connect().await.map_err(Broken::transport)?;
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
            let want_input = self.input.is_some() && self.pending.len() - unsent < CHUNK_LINES;
            let can_send = tx.is_some() && (have_unsent || self.input.is_none());
            // End was sent: the request stream closes too; what is left is to listen.
            let mut close = false;
            tokio::select! {
                biased;
                r = poll_opt(&mut call) => {
                    call = None;
                    match r {
                        Ok(resp) => responses = Some(resp.into_inner()),
                        Err(s) => return self.ended(Broken::status(&s)),
                    }
                }
                m = next_message(&mut responses) => match m {
                    Ok(Some(msg)) => {
                        *answered = true;
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
                    Some(Read::Line(l)) => self.pending.push_back(l),
                    Some(Read::End) | None => self.input = None,
                    Some(Read::Failed(e)) => {
                        return Err(Broken::Fatal(anyhow!("reading the input: {e}")))
                    }
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
    /// line, sent on this stream) into the sink, progress into the view.
    fn take(&mut self, msg: w::SolveResponse, sent_upto: u64) -> Result<(), Broken> {
        match msg.msg {
            Some(w::solve_response::Msg::Records(rs)) => {
                let mut out = Vec::with_capacity(rs.records.len());
                let mut fault = None;
                for r in rs.records {
                    let front = self.pending.front().map(|l| l.id);
                    if front != Some(r.id) || r.id > sent_upto {
                        fault = Some(anyhow!(
                            "protocol violation: the coordinator sent a record for line {}, \
                             but the oldest line without one is {}",
                            r.id,
                            match front {
                                Some(f) if f <= sent_upto => f.to_string(),
                                _ => "none (every line sent has its record)".into(),
                            }
                        ));
                        break;
                    }
                    let rec = match proto::Record::try_from(r) {
                        Ok(rec) => rec,
                        Err(e) => {
                            fault = Some(anyhow!("the coordinator sent a bad record: {e}"));
                            break;
                        }
                    };
                    self.pending.pop_front();
                    self.records += 1;
                    if rec.outcome.is_err() {
                        self.errors += 1;
                    }
                    self.view.record(rec.input.len() as u64 + 1);
                    match &mut self.sink {
                        Sink::Journal(_) => {
                            out.push(output::Record::from_proto(rec, &self.settings))
                        }
                        Sink::One(got) => *got = Some(rec),
                    }
                }
                if let Sink::Journal(j) = &mut self.sink {
                    if !out.is_empty() {
                        j.write(&out)
                            .map_err(|e| Broken::Fatal(anyhow!("writing the output: {e}")))?;
                    }
                }
                match fault {
                    Some(e) => Err(Broken::Fatal(e)),
                    None => Ok(()),
                }
            }
            Some(w::solve_response::Msg::Progress(p)) => {
                if matches!(self.sink, Sink::One(_)) {
                    self.proved_empty = self.proved_empty.max(p.proved_empty);
                }
                self.view.progress(&p, self.proved_empty);
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

// ---- progress ---------------------------------------------------------------------------

/// What the user sees on stderr while the cluster works (nothing when not a terminal or
/// with --quiet).
struct View {
    /// The bar (scramble set) or spinner (one position).
    bar: Option<indicatif::ProgressBar>,
    /// One position: the spinner shows the deepening.
    single: bool,
    /// When the run began (positions per second).
    start: Instant,
    /// Input bytes of the records received.
    bytes: u64,
    /// Records received by this run.
    records: u64,
    /// Input bytes of the lines skipped as already done.
    skipped: Arc<AtomicU64>,
    /// Workers busy and connected, from the last Progress.
    workers: (u32, u32),
}

impl View {
    fn batch(show: bool, total: Option<u64>, skipped: Arc<AtomicU64>) -> View {
        View {
            bar: solve_cmd::progress_bar(show, total),
            single: false,
            start: Instant::now(),
            bytes: 0,
            records: 0,
            skipped,
            workers: (0, 0),
        }
    }

    fn single(show: bool) -> View {
        let bar = solve_cmd::progress_bar(show, None);
        if let Some(b) = &bar {
            b.set_message("waiting for the coordinator");
            b.enable_steady_tick(Duration::from_millis(200));
        }
        View {
            bar,
            single: true,
            start: Instant::now(),
            bytes: 0,
            records: 0,
            skipped: Arc::new(AtomicU64::new(0)),
            workers: (0, 0),
        }
    }

    /// A record of `bytes` input bytes arrived.
    fn record(&mut self, bytes: u64) {
        self.bytes += bytes;
        self.records += 1;
        if !self.single {
            self.show_batch();
        }
    }

    fn progress(&mut self, p: &w::Progress, proved_empty: Option<u32>) {
        self.workers = (p.workers_busy, p.workers);
        let Some(b) = &self.bar else { return };
        if self.single {
            let proof = proved_empty
                .map(|e| format!(", proved empty through {e}"))
                .unwrap_or_default();
            b.set_message(format!(
                "depth {}{proof}, {} nodes, {}/{} workers busy",
                p.depth, p.nodes, p.workers_busy, p.workers
            ));
        } else {
            self.show_batch();
        }
    }

    /// The scramble set's bar: input bytes done, positions per second, workers busy.
    fn show_batch(&self) {
        let Some(b) = &self.bar else { return };
        b.set_position(self.bytes + self.skipped.load(Ordering::Relaxed));
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let (busy, all) = self.workers;
        b.set_message(format!(
            "{} positions, {:.1}/s, {busy}/{all} workers busy",
            self.records,
            self.records as f64 / secs
        ));
    }

    /// Runs `f` (a warning) with the bar out of the way.
    fn suspend(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests;
