//! `cubeswarm worker`: this machine's engines serving a coordinator.
//!
//! Parses the flags, binds the health endpoint, installs the signal handlers and runs
//! [`worker::remote::run`] on a small tokio runtime (the searches run on the executor's own
//! threads, not on tokio's).

use crate::Common;
use anyhow::Context as _;
use clap::{Args, ValueEnum};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use worker::remote::{Health, ServedTables, SessionOptions, WorkerConfig};
use worker::TableMemory;

/// How the large tables are held in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Memory {
    /// Read straight from the memory-mapped files: every worker on the machine shares one
    /// copy in the page cache.
    Mapped,
    /// A private copy per process in transparent huge pages (fewer TLB misses).
    HugePages,
}

impl From<Memory> for TableMemory {
    fn from(m: Memory) -> Self {
        match m {
            Memory::Mapped => TableMemory::Mapped,
            Memory::HugePages => TableMemory::HugePages,
        }
    }
}

/// Flags of `worker`.
#[derive(Args)]
pub struct WorkerArgs {
    /// The coordinator's URL: http://HOST:PORT, or https://HOST:PORT with --tls-ca.
    #[arg(long, env = "CUBESWARM_COORDINATOR")]
    coordinator: String,
    /// Jobs run at once [default: all cores].
    #[arg(long, short = 't')]
    threads: Option<usize>,
    /// A table to serve (repeatable) [default: every table whose files are in the tables
    /// directory].
    #[arg(long = "table", value_name = "NAME")]
    tables: Vec<String>,
    /// A table to fetch from the coordinator when its files are missing here (repeatable);
    /// it is then served too.
    #[arg(long = "fetch", value_name = "NAME")]
    fetch: Vec<String>,
    /// How the large tables are held in memory: `huge-pages` (a private copy; the faster
    /// search), or `mapped` (one copy in the page cache shared by every worker on the
    /// machine) when several workers' copies would not fit in memory.
    #[arg(long, value_enum, default_value_t = Memory::HugePages)]
    memory: Memory,
    /// Seconds running jobs get to finish after SIGTERM before they are handed back.
    #[arg(long, default_value_t = 25.0)]
    grace_period: f64,
    /// The worker's name in the coordinator's logs and status [default: HOSTNAME-PID].
    #[arg(long)]
    worker_id: Option<String>,
    /// Serve GET /healthz (liveness) and /readyz (readiness) over HTTP on this address,
    /// e.g. 0.0.0.0:8080.
    #[arg(long, value_name = "ADDR")]
    health_listen: Option<SocketAddr>,
}

/// Runs the worker until SIGTERM or SIGINT (then drains and returns `Ok`), or until the
/// coordinator refuses it.
pub fn run(dir: &Path, common: &Common, a: WorkerArgs) -> anyhow::Result<()> {
    if !(a.grace_period.is_finite() && a.grace_period >= 0.0) {
        anyhow::bail!("--grace-period must be a number of seconds, 0 or more");
    }
    let threads = frontend::settings::threads(a.threads, &frontend::Dialect::CLI)?;
    let mut session = SessionOptions::new(common.client_config(&a.coordinator)?);
    // Check the URL and TLS files now rather than after the tables.
    session.coordinator.endpoint()?;
    session.threads = threads;
    session.grace = Duration::from_secs_f64(a.grace_period.min(1e9));
    if let Some(id) = a.worker_id {
        session.worker_id = id;
    }
    let tables = if a.tables.is_empty() {
        ServedTables::AllPresent
    } else {
        let mut names = a.tables.clone();
        names.extend(a.fetch.iter().filter(|f| !a.tables.contains(f)).cloned());
        ServedTables::Named(names)
    };
    let config = WorkerConfig {
        session,
        tables_dir: dir.to_path_buf(),
        tables,
        fetch: a.fetch,
        memory: a.memory.into(),
    };
    let rt = io_runtime()?;
    let result = rt.block_on(async move {
        let shutdown = on_signal()?;
        let health = Arc::new(Health::new());
        if let Some(addr) = a.health_listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr} for health probes"))?;
            tracing::info!("health probes on http://{addr}/healthz and /readyz");
            tokio::spawn(worker::remote::serve_health(listener, Arc::clone(&health)));
        }
        worker::remote::run(config, health, shutdown).await?;
        Ok::<(), anyhow::Error>(())
    });
    // Table checks still running on a blocking thread (a shutdown while starting) are not
    // waited for.
    rt.shutdown_timeout(Duration::from_millis(500));
    result
}

/// The small runtime a worker's connection runs on (the searches run on the executor's
/// own threads, not on tokio's).
pub(crate) fn io_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("cubeswarm-io")
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Completes at SIGTERM or SIGINT (installed now, inside the runtime).
pub(crate) fn on_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received"),
            _ = int.recv() => tracing::info!("SIGINT received"),
        }
    })
}
