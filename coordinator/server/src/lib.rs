//! The coordinator as a gRPC server: workers join over a bidirectional stream, clients
//! send scramble sets and read records back, workers fetch tables; health and metrics.
//!
//! # Shape
//! - One thread runs the [`Driver`] (the same one the embedded default runs); everything
//!   else posts [`Event`]s to it.
//! - `workers`: a joined worker is a [`RemoteWorker`], an executor of the driver over its
//!   stream. `clients`: a client's request is a driver request whose sink is its stream;
//!   it ends when the client goes. `tables`: table files streamed to workers.
//! - The handlers check the token, decode and validate what peers send (a bad message is
//!   a typed error for that peer only), and post events.
//! - [`metrics`] and `http`: Prometheus counters and gauges, on their own HTTP listener.
//! - Connections that send nothing within [`HANDSHAKE_TIMEOUT`] are closed; the metrics
//!   listener's connections are bounded by [`ServerConfig::http`].
//!
//! The coordinator keeps no durable state: a client's output file is its journal, and a
//! worker's jobs are requeued when its stream ends or its lease runs out.

mod clients;
mod http;
pub mod metrics;
mod status;
mod tables;
mod workers;

pub use clients::ClientTx;
pub use workers::{RemoteWorker, WorkerTx, QUEUED_AHEAD};

use self::clients::ClientsSvc;
use self::metrics::Metrics;
use self::tables::TablesSvc;
use self::workers::WorkersSvc;
use coordinator::driver::{run_loop, Driver, DriverConfig, Event};
use coordinator::scheduler::Config;
use proto::wire::{self as w, clients_server, tables_server, workers_server};
use proto::{Error, MAX_MESSAGE_BYTES};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::{mpsc as std_mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::Router;
use tonic::{Request, Status};
use tonic_health::server::HealthReporter;

/// A table file the coordinator serves to workers.
#[derive(Clone, Debug)]
pub struct ServedFile {
    /// Its name, size and body checksum.
    pub info: w::TableFileInfo,
    /// Where it is.
    pub path: PathBuf,
}

/// How the coordinator runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The scheduler's settings (its lease is the workers' lease).
    pub scheduler: Config,
    /// How often workers must send a heartbeat.
    pub heartbeat: Duration,
    /// The bearer token every RPC must carry (`None`: no authentication).
    pub token: Option<String>,
    /// PEM certificate chain and key: serve TLS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Table files served to workers (they also set the reference checksums).
    pub files: Vec<ServedFile>,
    /// Table names a request may name (the catalog).
    pub known_tables: Vec<String>,
    /// How long a shutdown waits for open streams before it returns anyway.
    pub shutdown_grace: Duration,
    /// For this long after the start, a request whose table no connected worker holds
    /// waits for one instead of being refused (workers join again after a restart).
    pub startup_grace: Duration,
    /// A connection silent this long from its start is closed (see
    /// [`HANDSHAKE_TIMEOUT`], the default).
    pub handshake_timeout: Duration,
    /// The bounds of the metrics listener's connections (head and idle timeouts, lifetime,
    /// how many at once), so idle ones cannot take the process's descriptors.
    pub http: proto::http::HttpLimits,
}

/// Shared by every handler.
struct Shared {
    core: std_mpsc::Sender<Event>,
    metrics: Arc<Metrics>,
    next_executor: AtomicU64,
    next_client: AtomicU64,
    heartbeat: Duration,
    lease: Duration,
    /// The reference checksum of each table file: the served files', else the first
    /// worker's to report it.
    checksums: Mutex<HashMap<String, u64>>,
    files: BTreeMap<String, ServedFile>,
    known_tables: Vec<String>,
}

impl Shared {
    /// What the handlers share under `cfg`, posting their events to the driver on `core`.
    fn new(cfg: &ServerConfig, core: std_mpsc::Sender<Event>, metrics: Arc<Metrics>) -> Shared {
        let mut checksums = HashMap::new();
        for f in &cfg.files {
            checksums.insert(f.info.file.clone(), f.info.checksum);
        }
        Shared {
            core,
            metrics,
            next_executor: AtomicU64::new(1),
            next_client: AtomicU64::new(1),
            heartbeat: cfg.heartbeat,
            lease: Duration::from_micros(cfg.scheduler.lease_us.unwrap_or(30_000_000)),
            checksums: Mutex::new(checksums),
            files: cfg
                .files
                .iter()
                .map(|f| (f.info.file.clone(), f.clone()))
                .collect(),
            known_tables: cfg.known_tables.clone(),
        }
    }

    fn post(&self, m: Event) -> Result<(), Status> {
        self.core
            .send(m)
            .map_err(|_| Status::from(Error::ShuttingDown))
    }
}

/// A running coordinator.
pub struct Server {
    /// The gRPC address it listens on.
    pub grpc: SocketAddr,
    /// The metrics address, if any.
    pub metrics: Option<SocketAddr>,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    grace: Duration,
}

impl Server {
    /// Stops: health says not serving, workers are told to drain, clients' streams end
    /// with UNAVAILABLE (they reconnect), and open streams get `shutdown_grace` to close.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match tokio::time::timeout(self.grace, &mut self.task).await {
            Ok(Ok(Err(e))) => tracing::warn!("server ended with an error: {e}"),
            Ok(_) => {}
            Err(_) => {
                tracing::warn!("open streams did not close within the grace period");
                self.task.abort();
            }
        }
    }

    /// Waits until the server ends on its own (it does not, short of an error).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
}

/// Starts the coordinator on `grpc` (and the metrics endpoint on `metrics`).
pub async fn start(
    cfg: ServerConfig,
    grpc: TcpListener,
    metrics_listener: Option<TcpListener>,
) -> Result<Server, Box<dyn std::error::Error + Send + Sync>> {
    let metrics = Arc::new(Metrics::new());
    let (core_tx, core_rx) = std_mpsc::channel();
    spawn_driver(&cfg, core_rx, metrics.clone())?;
    let shared = Arc::new(Shared::new(&cfg, core_tx.clone(), metrics.clone()));
    let (health, router) = grpc_router(&cfg, &shared, &metrics)?;
    let grpc_addr = grpc.local_addr()?;
    let metrics_addr = match &metrics_listener {
        Some(l) => Some(l.local_addr()?),
        None => None,
    };
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (metrics_stop_tx, metrics_stop_rx) = oneshot::channel::<()>();
    if let Some(l) = metrics_listener {
        let state = http::HttpState {
            metrics: metrics.clone(),
            core: core_tx.clone(),
            token: cfg.token.clone(),
        };
        tokio::spawn(http::serve_http(l, state, cfg.http, metrics_stop_rx));
    }
    set_serving(&health).await;
    metrics.set_ready(true);
    let incoming = first_byte_within(grpc, cfg.handshake_timeout);
    let signal = stopped(stop_rx, health, metrics, core_tx, metrics_stop_tx);
    let task =
        tokio::spawn(async move { router.serve_with_incoming_shutdown(incoming, signal).await });
    Ok(Server {
        grpc: grpc_addr,
        metrics: metrics_addr,
        shutdown: Some(stop_tx),
        task,
        grace: cfg.shutdown_grace,
    })
}

/// Starts the driver's thread: it runs the events of `core_rx` and publishes its
/// counters to `metrics` after every round.
fn spawn_driver(
    cfg: &ServerConfig,
    core_rx: std_mpsc::Receiver<Event>,
    metrics: Arc<Metrics>,
) -> std::io::Result<()> {
    let driver_cfg = DriverConfig {
        scheduler: cfg.scheduler.clone(),
        progress_every_us: Some(PROGRESS_EVERY.as_micros() as u64),
        min_window_slots: 8,
        startup_grace_us: cfg.startup_grace.as_micros() as u64,
    };
    std::thread::Builder::new()
        .name("coordinator-driver".into())
        .spawn(move || {
            let start = Instant::now();
            let clock = move || start.elapsed().as_micros() as u64;
            let mut driver = Driver::new(driver_cfg);
            let _ = run_loop(
                &mut driver,
                &core_rx,
                &clock,
                &mut |d| metrics.publish(d.scheduler(), d.executor_count()),
                &mut |_| false,
            );
        })?;
    Ok(())
}

/// The gRPC services (health; workers, clients and tables behind the token check, the
/// refused workers and clients counted) on the transport, and the health reporter.
fn grpc_router(
    cfg: &ServerConfig,
    shared: &Arc<Shared>,
    metrics: &Arc<Metrics>,
) -> Result<(HealthReporter, Router), Box<dyn std::error::Error + Send + Sync>> {
    let (health, health_service) = tonic_health::server::health_reporter();
    let token = cfg.token.clone();
    let auth = move |req: Request<()>| -> Result<Request<()>, Status> {
        if let Some(t) = &token {
            proto::transport::check_bearer(&req, t)?;
        }
        Ok(req)
    };
    // Workers and clients refused for their token are counted as refused, and logged.
    let worker_auth = counted(
        auth.clone(),
        metrics.clone(),
        Metrics::worker_refused,
        "worker",
    );
    let client_auth = counted(
        auth.clone(),
        metrics.clone(),
        Metrics::client_refused,
        "client",
    );
    let workers = workers_server::WorkersServer::new(WorkersSvc(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let clients = clients_server::ClientsServer::new(ClientsSvc(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let tables = tables_server::TablesServer::new(TablesSvc(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let router = transport(cfg)?
        .add_service(health_service)
        .add_service(InterceptedService::new(workers, worker_auth))
        .add_service(InterceptedService::new(clients, client_auth))
        .add_service(InterceptedService::new(tables, auth));
    Ok((health, router))
}

/// The gRPC transport: HTTP/2 keepalive pings, no delay, and TLS when `cfg` says so.
fn transport(
    cfg: &ServerConfig,
) -> Result<tonic::transport::Server, Box<dyn std::error::Error + Send + Sync>> {
    let mut builder = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(10)))
        .http2_keepalive_timeout(Some(Duration::from_secs(20)))
        .tcp_nodelay(true);
    if let Some((cert, key)) = &cfg.tls {
        let read = |p: &PathBuf, what: &str| {
            std::fs::read(p).map_err(|e| format!("cannot read TLS {what} {}: {e}", p.display()))
        };
        let identity =
            tonic::transport::Identity::from_pem(read(cert, "certificate")?, read(key, "key")?);
        builder =
            builder.tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))?;
    }
    Ok(builder)
}

/// Health says every service serves.
async fn set_serving(health: &HealthReporter) {
    health
        .set_serving::<workers_server::WorkersServer<WorkersSvc>>()
        .await;
    health
        .set_serving::<clients_server::ClientsServer<ClientsSvc>>()
        .await;
    health
        .set_serving::<tables_server::TablesServer<TablesSvc>>()
        .await;
    health
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
}

/// The server's shutdown signal: once `stop_rx` fires (or its sender is gone), the
/// coordinator is not ready, health says not serving, every worker's and client's stream
/// is ended, and the metrics listener is told to stop.
async fn stopped(
    stop_rx: oneshot::Receiver<()>,
    health: HealthReporter,
    metrics: Arc<Metrics>,
    core_tx: std_mpsc::Sender<Event>,
    metrics_stop_tx: oneshot::Sender<()>,
) {
    let _ = stop_rx.await;
    metrics.set_ready(false);
    health
        .set_service_status("", tonic_health::ServingStatus::NotServing)
        .await;
    health
        .set_not_serving::<clients_server::ClientsServer<ClientsSvc>>()
        .await;
    health
        .set_not_serving::<workers_server::WorkersServer<WorkersSvc>>()
        .await;
    // Ends every worker's and client's stream so the server can finish.
    let _ = core_tx.send(Event::Shutdown);
    let _ = metrics_stop_tx.send(());
}

/// `auth`, each refusal counted with `count` and logged as a refused `who` (without the
/// token).
fn counted(
    auth: impl Fn(Request<()>) -> Result<Request<()>, Status> + Clone,
    metrics: Arc<Metrics>,
    count: fn(&Metrics),
    who: &'static str,
) -> impl Fn(Request<()>) -> Result<Request<()>, Status> + Clone {
    move |req| {
        let peer = req.remote_addr();
        auth(req).inspect_err(|e| {
            count(&metrics);
            tracing::warn!(peer = ?peer, "{who} refused: {}", e.message());
        })
    }
}

/// How often a request's progress goes to its client.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long a new connection may stay silent before it is closed, by default: a peer that has not
/// sent its first byte (the HTTP/2 preface, or a TLS hello) by then never will. Idle
/// connections that did speak are watched by HTTP/2 keepalive pings.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections waiting for their first byte, at most (beyond this, new ones are closed
/// at once: a flood of silent connections cannot hold the coordinator's memory).
const MAX_SILENT: usize = 1024;

/// The accepted connections of `listener` that send a first byte within `timeout`; the
/// others are closed.
fn first_byte_within(
    listener: TcpListener,
    timeout: Duration,
) -> ReceiverStream<std::io::Result<TcpStream>> {
    let (tx, rx) = mpsc::channel(64);
    let silent = Arc::new(tokio::sync::Semaphore::new(MAX_SILENT));
    tokio::spawn(async move {
        loop {
            // The server is gone (its incoming stream dropped): stop listening.
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = tx.closed() => return,
            };
            let stream = match accepted {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of file descriptors and the like: wait a moment, go on.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(permit) = silent.clone().try_acquire_owned() else {
                tracing::warn!("too many silent connections; closing a new one");
                continue;
            };
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut byte = [0u8; 1];
                let spoke = tokio::time::timeout(timeout, stream.peek(&mut byte)).await;
                drop(permit);
                match spoke {
                    Ok(Ok(n)) if n > 0 => {
                        let _ = tx.send(Ok(stream)).await;
                    }
                    Ok(_) => {}
                    Err(_) => tracing::debug!("closing a connection silent for {timeout:?}"),
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;
