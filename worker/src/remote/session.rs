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
//! 2. Jobs run on an in-process [`JobRunner`](crate::JobRunner) made for this connection
//!    (its results go back on this connection only: a result never reaches a coordinator
//!    that did not send the job). Cancel stops a job (its partial result is sent). A
//!    heartbeat lists the running jobs every period.
//! 3. A lost connection cancels every running job (the coordinator puts them back in its
//!    queue), and the worker dials again after an exponential backoff with jitter, for
//!    ever; the backoff starts over after each Welcome.
//! 4. Shutdown (SIGTERM) sends Draining and Capacity 0, keeps sending results and
//!    heartbeats until the running jobs end or the grace period runs out, then cancels
//!    the rest (their results, marked cancelled, are sent: not complete, they are run
//!    again elsewhere), closes the stream (which hands back anything unanswered), and
//!    returns. A worker that is not connected returns at once. A coordinator's Drain
//!    does the same, then the worker dials again (the coordinator is restarting).
//!
//! Layout: `prepare` (tables fetched, checked, opened), `link` (one connection: dial,
//! Hello, Welcome, how it ends), `delay` (a latency added in the process), `conn` (the jobs, results, heartbeats and drain of an
//! established stream); the process-wide loop ([`run`], [`serve`]) is here.

mod conn;
mod delay;
mod link;
mod prepare;

pub use self::prepare::prepare;

use self::link::Link;
use super::fetch::FetchError;
use super::health::Health;
use super::tableset::{ServedTables, TableSet, TableSetError};
use crate::{Engines, TableMemory};
use proto::backoff::{Backoff, BackoffPolicy};
use proto::transport::{ClientConfig, TransportError};
use proto::wire;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::sleep;
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
    /// A one-way latency added in the process to every message in both directions
    /// (`session::delay`): how a hollow cluster on loopback meets a real network's. Zero
    /// (none) in production.
    pub link_delay: Duration,
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
            link_delay: Duration::ZERO,
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
    pub tables: ServedTables,
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
    /// The tables cannot be held in memory as `--memory` asks on this host.
    #[error("{0}")]
    Memory(super::memory_fit::MemoryFitError),
    /// The executor could not start.
    #[error("cannot start the solver threads: {0}")]
    JobRunner(crate::Error),
    /// The test seam's environment variable is set to something unusable.
    #[error("{0}")]
    Failpoint(crate::failpoint::FailpointError),
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
        splits: true,
        // Its runner shares jobs (`RunnerOptions::share_jobs`, on from the environment).
        shares: crate::RunnerOptions::default().share_jobs,
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
