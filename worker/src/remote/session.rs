//! A worker's life with its coordinator.
//!
//! [`run`] is the whole process: fetch missing tables ([`prepare`]), check and open them,
//! say "worker ready", then [`serve`]. [`serve`] dials the coordinator and keeps one
//! `Workers.Join` stream:
//!
//! 1. Hello (worker id, threads, checked tables, version, protocol), then Welcome
//!    (executor id, heartbeat period, lease). A refusal — UNAUTHENTICATED, PERMISSION_DENIED
//!    or FAILED_PRECONDITION — ends the worker with the coordinator's reason: retrying
//!    would not change it.
//! 2. Jobs run on an in-process [`Executor`] made for this connection (its results go
//!    back on this connection only: a result never reaches a coordinator that did not
//!    send the job). Cancel stops a job (its partial result is sent). A heartbeat lists
//!    the running jobs every period.
//! 3. A lost connection cancels every running job (the coordinator puts them back in its
//!    queue), and the worker dials again after an exponential backoff with jitter, for
//!    ever; the backoff starts over after each Welcome.
//! 4. Shutdown (SIGTERM) sends Draining and Capacity 0, keeps sending results and
//!    heartbeats until the running jobs end or the grace period runs out, then cancels
//!    the rest (their results, marked cancelled, are sent: not complete, they are run
//!    again elsewhere), closes the stream (which hands back anything unanswered), and
//!    returns. A worker that is not connected returns at once. A coordinator's Drain
//!    does the same, then the worker dials again (the coordinator is restarting).

use super::backoff::{Backoff, BackoffPolicy};
use super::fetch::{fetch_tables, FetchError};
use super::health::Health;
use super::tableset::{TableChoice, TableSet, TableSetError};
use crate::{Engines, Executor, ResultSink, TableMemory};
use proto::catalog;
use proto::transport::{Auth, ClientConfig, TransportError};
use proto::wire::{self, coordinator_message, worker_message};
use proto::{Job, JobError, JobId, JobResult};
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{sleep, sleep_until, Instant, MissedTickBehavior};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::Code;

/// Messages queued towards the coordinator before the sender waits.
const OUTBOUND: usize = 256;
/// The heartbeat period when the Welcome gives none.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);
/// The shortest and longest heartbeat periods honoured (a Welcome is a peer's word).
const HEARTBEAT_RANGE: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(60));
/// After the grace period, how long cancelled jobs get to report before the stream closes.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// How a worker meets its coordinator.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// Where the coordinator is, its token and TLS.
    pub coordinator: ClientConfig,
    /// The worker's name, stable across reconnections (see [`default_worker_id`]).
    pub worker_id: String,
    /// Jobs run at once (executor threads); 0: one per core.
    pub threads: usize,
    /// On shutdown, how long running jobs may take to finish before they are handed back.
    pub grace: Duration,
    /// Delays between connection attempts.
    pub backoff: BackoffPolicy,
    /// How long the coordinator may take to answer Hello with Welcome.
    pub welcome_timeout: Duration,
    /// After the worker closed its side, how long it waits for the coordinator to close.
    pub close_timeout: Duration,
}

impl SessionOptions {
    /// Options for the coordinator `coordinator`: the default worker id, every core, a
    /// 25 s grace period, the default backoff.
    pub fn new(coordinator: ClientConfig) -> SessionOptions {
        SessionOptions {
            coordinator,
            worker_id: default_worker_id(),
            threads: 0,
            grace: Duration::from_secs(25),
            backoff: BackoffPolicy::default(),
            welcome_timeout: Duration::from_secs(10),
            close_timeout: Duration::from_secs(2),
        }
    }
}

/// Everything `cubeswarm worker` is told.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// How to meet the coordinator.
    pub session: SessionOptions,
    /// Where the table files are.
    pub tables_dir: PathBuf,
    /// Which tables to serve.
    pub tables: TableChoice,
    /// Catalog tables to fetch from the coordinator when their files are missing (before
    /// the check).
    pub fetch: Vec<String>,
    /// How the engines read the large tables.
    pub memory: TableMemory,
}

/// Why a worker stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The coordinator's URL, token or TLS files are not usable.
    #[error("coordinator connection settings: {0}")]
    Transport(TransportError),
    /// The coordinator refused this worker (wrong token, other version or protocol, a
    /// table that differs from the cluster's).
    #[error("coordinator refused this worker: {message}")]
    Refused {
        /// The gRPC code.
        code: Code,
        /// The coordinator's reason.
        message: String,
    },
    /// The tables cannot be served.
    #[error("{0}")]
    Tables(TableSetError),
    /// A table could not be fetched.
    #[error("{0}")]
    Fetch(FetchError),
    /// The executor could not start.
    #[error("cannot start the solver threads: {0}")]
    Executor(crate::Error),
}

/// The checked tables and their opened engines, ready to serve.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// What the Hello says.
    pub tables: TableSet,
    /// The engines, shared with every connection's executor.
    pub engines: Arc<Engines>,
}

/// `<host name>-<process id>`: stable while the process lives, distinct between the
/// workers of one machine.
pub fn default_worker_id() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is a live, writable buffer of exactly `buf.len()` bytes for the whole
    // call, and gethostname writes at most that many bytes into it. Only the bytes before
    // the first NUL (or the whole buffer when it was truncated without one) are read.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let host = if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(buf.get(..end).unwrap_or(&[])).into_owned()
    } else {
        String::new()
    };
    let host = if host.is_empty() { "worker" } else { &host };
    format!("{host}-{}", std::process::id())
}

/// A seed that differs between processes and starts.
fn seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}

/// The executor threads `threads` means (0: one per core).
fn resolve_threads(threads: usize) -> usize {
    if threads > 0 {
        threads
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The whole worker process: [`prepare`], mark `health` ready and log "worker ready",
/// then [`serve`] until `shutdown` completes (and the drain is done) or the coordinator
/// refuses the worker. A shutdown before the worker is ready returns at once.
pub async fn run(
    config: WorkerConfig,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), WorkerError> {
    tokio::pin!(shutdown);
    let prepared = tokio::select! {
        _ = &mut shutdown => {
            tracing::info!("stopped before the worker was ready");
            return Ok(());
        }
        p = prepare(&config) => p?,
    };
    health.set_ready();
    tracing::info!(
        tables = ?prepared.tables.names(),
        threads = resolve_threads(config.session.threads),
        memory = ?config.memory,
        worker_id = %config.session.worker_id,
        "worker ready"
    );
    serve(&config.session, &prepared, &health, shutdown).await
}

/// Fetches the tables of `config.fetch` whose files are missing (retrying while the
/// coordinator cannot be reached), checks every table served (body checksums), and opens
/// the engines.
pub async fn prepare(config: &WorkerConfig) -> Result<Prepared, WorkerError> {
    let dir = config.tables_dir.clone();
    let mut to_fetch = Vec::new();
    for name in &config.fetch {
        let entry = catalog::find(name)
            .ok_or_else(|| WorkerError::Fetch(FetchError::UnknownTable { name: name.clone() }))?;
        if !entry.present(&dir) {
            to_fetch.push(name.clone());
        }
    }
    if !to_fetch.is_empty() {
        fetch_with_retries(&config.session, &dir, &to_fetch).await?;
    }
    let choice = config.tables.clone();
    let memory = config.memory;
    let blocking = tokio::task::spawn_blocking(move || {
        let tables = TableSet::check(&dir, &choice)?;
        let engines = tables.open(memory)?;
        Ok::<_, TableSetError>(Prepared {
            tables,
            engines: Arc::new(engines),
        })
    });
    match blocking.await {
        Ok(r) => r.map_err(WorkerError::Tables),
        Err(e) => Err(WorkerError::Executor(crate::Error::Io {
            path: config.tables_dir.clone(),
            error: std::io::Error::other(format!("checking the tables did not finish: {e}")),
        })),
    }
}

/// Whether a fetch failure may go away by trying again (the coordinator is away or
/// restarting), as opposed to a refusal or a damaged file.
fn transient(e: &FetchError) -> bool {
    match e {
        FetchError::Rpc { status, .. } => matches!(
            status.code(),
            Code::Unavailable
                | Code::Unknown
                | Code::DeadlineExceeded
                | Code::Aborted
                | Code::Cancelled
                | Code::ResourceExhausted
                | Code::Internal
        ),
        FetchError::Truncated { .. } => true,
        _ => false,
    }
}

/// Fetches the missing files of `names`, retrying with backoff while the coordinator is
/// away or the stream breaks.
async fn fetch_with_retries(
    options: &SessionOptions,
    dir: &std::path::Path,
    names: &[String],
) -> Result<(), WorkerError> {
    let endpoint = options
        .coordinator
        .endpoint()
        .map_err(WorkerError::Transport)?;
    let auth = options.coordinator.auth().map_err(WorkerError::Transport)?;
    let mut backoff = Backoff::new(options.backoff.clone(), seed());
    loop {
        let reason = match endpoint.connect().await {
            Ok(channel) => {
                let mut client = proto::transport::tables_client(channel, auth.clone());
                match fetch_tables(&mut client, dir, names).await {
                    Ok(files) => {
                        tracing::info!(files = files.len(), "tables fetched: {names:?}");
                        return Ok(());
                    }
                    Err(e) if transient(&e) => e.to_string(),
                    Err(e) => return Err(WorkerError::Fetch(e)),
                }
            }
            Err(e) => connect_failed(&options.coordinator.url, e)?,
        };
        let delay = backoff.next_delay();
        tracing::warn!("fetching tables: {reason}; retrying in {delay:.1?}");
        sleep(delay).await;
    }
}

/// A failed dial: a refused certificate is a configuration error and ends the worker,
/// anything else (refused, unreachable, timed out) is an outage to wait out.
fn connect_failed(url: &str, e: tonic::transport::Error) -> Result<String, WorkerError> {
    match proto::transport::certificate_error(&e) {
        Some(reason) => Err(WorkerError::Transport(TransportError::Certificate {
            url: url.to_string(),
            reason,
        })),
        None => Ok(format!(
            "cannot connect to {url}: {}",
            proto::transport::error_chain(&e)
        )),
    }
}

/// How one connection ended.
enum End {
    /// Done: the worker shuts down.
    Exit,
    /// The connection is gone (or drained at the coordinator's request): dial again.
    Lost {
        /// Why, for the log.
        reason: String,
        /// Whether a Welcome was received (the backoff then starts over).
        welcomed: bool,
    },
    /// The coordinator refused the worker, or the worker cannot go on.
    Fatal(WorkerError),
}

/// Serves the coordinator of `options` with the engines of `prepared` until `shutdown`
/// completes and the drain is done (`Ok`), or the coordinator refuses this worker
/// ([`WorkerError::Refused`]). Connection failures are retried for ever.
pub async fn serve(
    options: &SessionOptions,
    prepared: &Prepared,
    health: &Health,
    shutdown: impl Future<Output = ()>,
) -> Result<(), WorkerError> {
    tokio::pin!(shutdown);
    let endpoint = options
        .coordinator
        .endpoint()
        .map_err(WorkerError::Transport)?;
    let auth = options.coordinator.auth().map_err(WorkerError::Transport)?;
    let threads = resolve_threads(options.threads);
    let hello = wire::Hello {
        worker_id: options.worker_id.clone(),
        threads: u32::try_from(threads).unwrap_or(u32::MAX),
        tables: prepared.tables.hello_tables(),
        version: proto::VERSION.to_string(),
        protocol: proto::PROTOCOL,
    };
    let link = Link {
        options,
        endpoint: &endpoint,
        auth: &auth,
        hello: &hello,
        engines: &prepared.engines,
        threads,
        health,
    };
    let mut backoff = Backoff::new(options.backoff.clone(), seed());
    loop {
        let end = link.connection(shutdown.as_mut()).await;
        let (reason, welcomed) = match end {
            End::Exit => return Ok(()),
            End::Fatal(e) => return Err(e),
            End::Lost { reason, welcomed } => (reason, welcomed),
        };
        if welcomed {
            backoff.reset();
        }
        let delay = backoff.next_delay();
        tracing::warn!(
            coordinator = %options.coordinator.url,
            "coordinator unavailable: {reason}; retrying in {delay:.1?}"
        );
        tokio::select! {
            _ = &mut shutdown => {
                tracing::info!("shutting down (not connected)");
                return Ok(());
            }
            _ = sleep(delay) => {}
        }
    }
}

/// What every connection of a worker shares.
struct Link<'a> {
    options: &'a SessionOptions,
    endpoint: &'a Endpoint,
    auth: &'a Auth,
    hello: &'a wire::Hello,
    engines: &'a Arc<Engines>,
    threads: usize,
    health: &'a Health,
}

/// The end for an error status from the coordinator.
fn end_for(status: tonic::Status, welcomed: bool) -> End {
    match status.code() {
        Code::Unauthenticated | Code::PermissionDenied | Code::FailedPrecondition => {
            let message = if status.message().is_empty() {
                status.code().description().to_string()
            } else {
                status.message().to_string()
            };
            End::Fatal(WorkerError::Refused {
                code: status.code(),
                message,
            })
        }
        code => End::Lost {
            reason: format!("{}: {}", code.description(), status.message()),
            welcomed,
        },
    }
}

fn message(msg: worker_message::Msg) -> wire::WorkerMessage {
    wire::WorkerMessage { msg: Some(msg) }
}

impl Link<'_> {
    /// One connection: dial, Hello, Welcome, then [`Conn::run`].
    async fn connection<F: Future<Output = ()>>(&self, mut shutdown: Pin<&mut F>) -> End {
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
        let call = tokio::time::timeout(wait, client.join(ReceiverStream::new(out_rx)));
        let mut inbound = tokio::select! {
            _ = &mut shutdown => return End::Exit,
            r = call => match r {
                Err(_) => return lost(format!("no answer to Hello within {wait:?}")),
                Ok(Err(status)) => return end_for(status, false),
                Ok(Ok(response)) => response.into_inner(),
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
        let executor = match Executor::new(self.threads, Arc::clone(self.engines), sink) {
            Ok(e) => e,
            Err(e) => return End::Fatal(WorkerError::Executor(e)),
        };
        self.health.set_connected(true);
        let mut conn = Conn {
            link: self,
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
fn heartbeat_period(w: &wire::Welcome) -> Duration {
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

/// A drain under way.
struct Drain {
    /// The process exits after it (a shutdown), rather than dialling again (a
    /// coordinator's Drain).
    exit: bool,
    /// When the running jobs are cancelled.
    grace_end: Instant,
    /// Once cancelled: when the worker stops waiting for their results.
    cancel_end: Option<Instant>,
}

/// One live connection.
struct Conn<'a> {
    link: &'a Link<'a>,
    /// Towards the coordinator (dropping it closes the worker's side).
    out: mpsc::Sender<wire::WorkerMessage>,
    /// This connection's executor.
    executor: Executor,
    /// The jobs submitted and not answered: (job, attempt) → submissions.
    running: BTreeMap<(u64, u32), u32>,
    /// Set once draining.
    drain: Option<Drain>,
}

/// What the connection loop does next.
enum Step {
    Go,
    Close,
    End(End),
}

impl Conn<'_> {
    /// Sends `msg`; `false` if the connection is gone.
    async fn send(&self, msg: worker_message::Msg) -> bool {
        self.out.send(message(msg)).await.is_ok()
    }

    fn lost(&self, reason: String) -> End {
        match &self.drain {
            Some(d) if d.exit => End::Exit,
            _ => End::Lost {
                reason,
                welcomed: true,
            },
        }
    }

    async fn run<F: Future<Output = ()>>(
        &mut self,
        mut inbound: tonic::Streaming<wire::CoordinatorMessage>,
        mut results: mpsc::UnboundedReceiver<JobResult>,
        heartbeat: Duration,
        mut shutdown: Pin<&mut F>,
    ) -> End {
        let mut tick = tokio::time::interval_at(Instant::now() + heartbeat, heartbeat);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut shutdown_seen = false;
        loop {
            if self.drain.is_some() && self.running.is_empty() {
                return self.close(inbound).await;
            }
            let deadline = self
                .drain
                .as_ref()
                .map(|d| d.cancel_end.unwrap_or(d.grace_end));
            let step = tokio::select! {
                m = inbound.message() => match m {
                    Ok(Some(m)) => self.on_message(m).await,
                    Ok(None) => Step::End(self.lost("the coordinator closed the stream".into())),
                    Err(status) => Step::End(match end_for(status, true) {
                        End::Lost { reason, .. } => self.lost(reason),
                        other => other,
                    }),
                },
                Some(r) = results.recv() => self.on_result(r).await,
                _ = tick.tick() => self.heartbeat().await,
                _ = &mut shutdown, if !shutdown_seen => {
                    shutdown_seen = true;
                    tracing::info!("shutdown requested: draining");
                    self.link.health.set_draining();
                    self.start_drain(true).await
                }
                _ = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    self.on_deadline()
                }
            };
            match step {
                Step::Go => {}
                Step::Close => return self.close(inbound).await,
                Step::End(end) => return end,
            }
        }
    }

    async fn on_message(&mut self, m: wire::CoordinatorMessage) -> Step {
        use coordinator_message::Msg;
        match m.msg {
            Some(Msg::Job(job)) => self.on_job(job).await,
            Some(Msg::Cancel(c)) => {
                if !self.executor.cancel(JobId(c.job)) {
                    tracing::debug!(job = c.job, "cancel of a job not running here");
                }
                Step::Go
            }
            Some(Msg::Drain(_)) => {
                tracing::info!("the coordinator asks this worker to drain");
                self.start_drain(false).await
            }
            Some(Msg::Welcome(_)) => {
                tracing::debug!("a second Welcome, ignored");
                Step::Go
            }
            // A message of a later protocol revision.
            None => Step::Go,
        }
    }

    async fn on_job(&mut self, job: wire::Job) -> Step {
        let (id, attempt) = (job.id, job.attempt);
        tracing::debug!(job = id, attempt, table = %job.table, "job received");
        if self.drain.is_some() {
            // Not run: closing the stream hands it back.
            tracing::info!(job = id, attempt, "job declined while draining");
            return Step::Go;
        }
        match Job::try_from(job) {
            Ok(job) => {
                *self.running.entry((id, attempt)).or_default() += 1;
                self.executor.submit(job);
                Step::Go
            }
            Err(e) => {
                tracing::warn!(job = id, attempt, "undecodable job: {e}");
                let result = JobResult {
                    id: JobId(id),
                    attempt,
                    micros: 0,
                    output: Err(JobError::InvalidSettings {
                        reason: format!("the worker cannot decode the job: {e}"),
                    }),
                };
                self.send_result(&result).await
            }
        }
    }

    async fn on_result(&mut self, r: JobResult) -> Step {
        let key = (r.id.0, r.attempt);
        if let Some(n) = self.running.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.running.remove(&key);
            }
        }
        self.send_result(&r).await
    }

    async fn send_result(&self, r: &JobResult) -> Step {
        if self
            .send(worker_message::Msg::Result(wire::JobResult::from(r)))
            .await
        {
            Step::Go
        } else {
            Step::End(self.lost("the stream closed while sending a result".into()))
        }
    }

    async fn heartbeat(&self) -> Step {
        let running = self
            .running
            .keys()
            .map(|&(job, attempt)| wire::JobProgress {
                job,
                attempt,
                nodes: self.executor.nodes_so_far(JobId(job)).unwrap_or(0),
            })
            .collect();
        if self
            .send(worker_message::Msg::Heartbeat(wire::Heartbeat { running }))
            .await
        {
            Step::Go
        } else {
            Step::End(self.lost("the stream closed while sending a heartbeat".into()))
        }
    }

    /// Stops taking jobs: Draining and Capacity 0, then the grace period.
    async fn start_drain(&mut self, exit: bool) -> Step {
        if let Some(d) = &mut self.drain {
            d.exit |= exit;
            return Step::Go;
        }
        let grace = self.link.options.grace;
        self.drain = Some(Drain {
            exit,
            grace_end: Instant::now() + grace,
            cancel_end: None,
        });
        tracing::info!(
            running = self.running.len(),
            "draining: finishing running jobs within {grace:?}"
        );
        let grace_ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
        let sent = self
            .send(worker_message::Msg::Draining(wire::Draining { grace_ms }))
            .await
            && self
                .send(worker_message::Msg::Capacity(wire::Capacity { slots: 0 }))
                .await;
        if sent {
            Step::Go
        } else {
            Step::End(self.lost("the stream closed while draining".into()))
        }
    }

    /// The grace period ran out (cancel what runs), or the cancelled jobs took too long
    /// to report (close anyway).
    fn on_deadline(&mut self) -> Step {
        let Some(d) = &mut self.drain else {
            return Step::Go;
        };
        if d.cancel_end.is_none() {
            tracing::info!(
                running = self.running.len(),
                "grace period over: cancelling the running jobs"
            );
            d.cancel_end = Some(Instant::now() + CANCEL_WAIT);
            self.executor.cancel_all();
            Step::Go
        } else {
            tracing::warn!(
                running = self.running.len(),
                "cancelled jobs did not report in time; handing them back"
            );
            Step::Close
        }
    }

    /// Closes the worker's side of the stream and waits (briefly) for the coordinator to
    /// close its own, so that everything sent is delivered.
    async fn close(&mut self, mut inbound: tonic::Streaming<wire::CoordinatorMessage>) -> End {
        let (out, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.out, out));
        let wait = self.link.options.close_timeout;
        let until = Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(until, inbound.message()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(Ok(None)) | Ok(Err(_)) => break,
                Err(_) => {
                    tracing::debug!("the coordinator did not close the stream within {wait:?}");
                    break;
                }
            }
        }
        let exit = self.drain.as_ref().is_some_and(|d| d.exit);
        if exit {
            tracing::info!("drained: stream closed");
            End::Exit
        } else {
            End::Lost {
                reason: "drained at the coordinator's request".into(),
                welcomed: true,
            }
        }
    }
}
