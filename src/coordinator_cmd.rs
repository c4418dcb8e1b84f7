//! `cubeswarm coordinator`: the cluster's scheduler behind gRPC.

use crate::Common;
use anyhow::Context as _;
use clap::Args;
use server::{ServedFile, ServerConfig};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Flags of `coordinator`.
#[derive(Args)]
pub struct CoordinatorArgs {
    /// Address for gRPC (workers, clients, table fetches, health). Port 0 picks a free
    /// port; the chosen address is logged ("grpc listening on ADDR").
    #[arg(long, default_value = "127.0.0.1:7070")]
    listen: SocketAddr,
    /// Address for Prometheus metrics (`/metrics`) and liveness (`/healthz`) over HTTP.
    #[arg(long)]
    metrics_listen: Option<SocketAddr>,
    /// A worker silent this long (seconds) loses its jobs to others.
    #[arg(long, default_value_t = 30.0)]
    lease: f64,
    /// Workers send a heartbeat this often (seconds).
    #[arg(long, default_value_t = 5.0)]
    heartbeat: f64,
    /// Serve TLS with this PEM certificate chain (with --tls-key).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The certificate's PEM private key.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Do not serve the table files of --tables-dir to workers.
    #[arg(long)]
    no_serve_tables: bool,
    /// On SIGTERM, how long (seconds) open streams get to close.
    #[arg(long, default_value_t = 5.0)]
    shutdown_grace: f64,
    /// Two-phase positions per job.
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    /// Cut a symmetric position into every move prefix, as if it had no symmetry (to
    /// measure the reduction; the solutions are the same).
    #[arg(long)]
    no_symmetry: bool,
    /// For this long (seconds) after the coordinator starts, a request whose table no
    /// connected worker holds waits for one to join instead of being refused (workers
    /// join again after a restart) [default: the lease].
    #[arg(long)]
    worker_grace: Option<f64>,
    /// A connection that sends nothing for this long (seconds) is closed.
    #[arg(long, default_value_t = 10.0)]
    handshake_timeout: f64,
    /// Which workers' claims that a search holds no solution (or exactly these) are run
    /// again on another worker: `sample` (every claim of a new worker, then a falling
    /// rate, at least --verify-rate), `every` (every claim twice: for runs that must be
    /// proved; records wait for a second worker), `off` (every worker's word is taken).
    #[arg(long, value_enum, default_value_t = VerifyArg::Sample)]
    verify: VerifyArg,
    /// The lowest share of a worker's claims checked once it has a record, 0.001 to 1.
    #[arg(long, default_value_t = 0.01)]
    verify_rate: f64,
}

/// `--verify`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum VerifyArg {
    Sample,
    Every,
    Off,
}

fn seconds(name: &str, v: f64) -> anyhow::Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v < 1e7) {
        anyhow::bail!("--{name} must be a positive number of seconds");
    }
    Ok(Duration::from_secs_f64(v))
}

/// The catalog's table files present in `dir`, with their header checksums. A file whose
/// header does not open is left out, with a warning (workers fetching it would refuse it).
fn served_files(dir: &Path) -> Vec<ServedFile> {
    let mut out = Vec::new();
    for file in proto::catalog::files() {
        let path = tables::tablefile::table_path(dir, file);
        if !path.exists() {
            continue;
        }
        match tables::tablefile::TableFile::open(&path, file) {
            Ok(t) => {
                let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                out.push(ServedFile {
                    info: proto::wire::TableFileInfo {
                        file: file.to_string(),
                        checksum: t.header().checksum,
                        bytes,
                    },
                    path,
                });
            }
            Err(e) => tracing::warn!("not serving {}: {e}", path.display()),
        }
    }
    out
}

/// Buffers of a megabyte or more (a message near [`proto::MAX_MESSAGE_BYTES`] being
/// decoded) go back to the system when freed. glibc's default raises its threshold for
/// that after the first large free, and then keeps such buffers in its heap at their
/// high-water mark: eight refused 15 MB messages left a coordinator at 45 MB from 12
/// (tests/it/rogue.rs, `huge_messages_leave_the_coordinators_memory_where_it_was`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_large_buffers() {
    // SAFETY: mallopt only sets a tuning parameter of glibc's allocator; it is called
    // once, before the runtime's threads start, and takes no pointer.
    let ok = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20) };
    if ok != 1 {
        tracing::debug!("mallopt(M_MMAP_THRESHOLD) was refused");
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_buffers() {}

/// Runs the coordinator until SIGTERM or SIGINT.
pub fn run(dir: &Path, common: &Common, a: CoordinatorArgs) -> anyhow::Result<()> {
    return_large_buffers();
    let lease = seconds("lease", a.lease)?;
    let heartbeat = seconds("heartbeat", a.heartbeat)?;
    if heartbeat >= lease {
        anyhow::bail!("--heartbeat must be shorter than --lease");
    }
    let token = proto::transport::read_token(common.token_file.as_deref())?;
    if token.is_none() {
        tracing::warn!("no token (--token-file or $CUBESWARM_TOKEN): anyone who reaches the port can use the cluster");
    }
    let files = if a.no_serve_tables {
        Vec::new()
    } else {
        served_files(dir)
    };
    if !(0.001..=1.0).contains(&a.verify_rate) {
        anyhow::bail!("--verify-rate must be a share from 0.001 to 1");
    }
    let scheduler = coordinator::Config {
        lease_us: Some(lease.as_micros() as u64),
        batch_size: a.batch_size.max(1),
        symmetry: !a.no_symmetry,
        verify: coordinator::Verify {
            mode: match a.verify {
                VerifyArg::Sample => coordinator::VerifyMode::Sample,
                VerifyArg::Every => coordinator::VerifyMode::Every,
                VerifyArg::Off => coordinator::VerifyMode::Off,
            },
            floor: a.verify_rate,
            // Which claims are checked must not be foreseeable from outside.
            seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
                ^ u64::from(std::process::id()).rotate_left(32),
            ..coordinator::Verify::default()
        },
        ..coordinator::Config::default()
    };
    let cfg = ServerConfig {
        scheduler,
        heartbeat,
        token,
        tls: a.tls_cert.clone().zip(a.tls_key.clone()),
        files,
        known_tables: proto::catalog::names()
            .into_iter()
            .map(String::from)
            .collect(),
        shutdown_grace: seconds("shutdown-grace", a.shutdown_grace)?,
        startup_grace: match a.worker_grace {
            Some(0.0) => Duration::ZERO,
            Some(g) => seconds("worker-grace", g)?,
            None => lease,
        },
        handshake_timeout: seconds("handshake-timeout", a.handshake_timeout)?,
        http: proto::http::HttpLimits::default(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let grpc = tokio::net::TcpListener::bind(a.listen)
            .await
            .with_context(|| format!("cannot listen on {}", a.listen))?;
        let metrics = match a.metrics_listen {
            Some(m) => Some(
                tokio::net::TcpListener::bind(m)
                    .await
                    .with_context(|| format!("cannot listen on {m}"))?,
            ),
            None => None,
        };
        let served: Vec<String> = cfg.files.iter().map(|f| f.info.file.clone()).collect();
        let server = server::start(cfg, grpc, metrics)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        tracing::info!(
            version = proto::VERSION,
            tables = ?served,
            "grpc listening on {}",
            server.grpc
        );
        if let Some(m) = server.metrics {
            tracing::info!("metrics listening on {m}");
        }
        wait_for_signal().await?;
        tracing::info!("shutting down: workers drain, clients reconnect later");
        server.shutdown().await;
        Ok(())
    })
}

/// Waits for SIGTERM or SIGINT.
pub async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}
