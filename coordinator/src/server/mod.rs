//! The coordinator as a gRPC server: workers join over a bidirectional stream, clients
//! send scramble sets and read records back, workers fetch tables; health and metrics.
//!
//! # Shape
//! - [`core`]: one thread owns the [`Scheduler`](crate::Scheduler); everything else posts
//!   messages to it.
//! - The handlers here check the token, decode and validate what peers send (a bad message
//!   is a typed error for that peer only), and forward.
//! - [`metrics`]: Prometheus counters and gauges, on their own HTTP listener.
//!
//! The coordinator keeps no durable state: a client's output file is its journal, and a
//! worker's jobs are requeued when its stream ends or its lease runs out.

pub mod core;
pub mod metrics;

use self::core::{CoreMsg, FromWorker, WorkerInfo};
use self::metrics::Metrics;
use crate::executor::ExecutorId;
use crate::input::InputLine;
use crate::scheduler::Config;
use proto::wire::{self as w, clients_server, tables_server, workers_server};
use proto::JobId;
use proto::{Error, RecordError, Settings, Violation, MAX_MESSAGE_BYTES, PROTOCOL, VERSION};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc as std_mpsc, Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_stream::wrappers::{ReceiverStream, UnboundedReceiverStream};
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

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
}

/// Shared by every handler.
struct Shared {
    core: std_mpsc::Sender<CoreMsg>,
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
    fn post(&self, m: CoreMsg) -> Result<(), Status> {
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
    let lease = Duration::from_micros(cfg.scheduler.lease_us.unwrap_or(30_000_000));
    let core = self::core::Core::new(cfg.scheduler.clone(), metrics.clone());
    std::thread::Builder::new()
        .name("coordinator-core".into())
        .spawn(move || core.run(core_rx))?;
    let mut checksums = HashMap::new();
    for f in &cfg.files {
        checksums.insert(f.info.file.clone(), f.info.checksum);
    }
    let shared = Arc::new(Shared {
        core: core_tx.clone(),
        metrics: metrics.clone(),
        next_executor: AtomicU64::new(1),
        next_client: AtomicU64::new(1),
        heartbeat: cfg.heartbeat,
        lease,
        checksums: Mutex::new(checksums),
        files: cfg
            .files
            .iter()
            .map(|f| (f.info.file.clone(), f.clone()))
            .collect(),
        known_tables: cfg.known_tables.clone(),
    });

    let (health, health_service) = tonic_health::server::health_reporter();
    let token = cfg.token.clone();
    let auth = move |req: Request<()>| -> Result<Request<()>, Status> {
        if let Some(t) = &token {
            proto::transport::check_bearer(&req, t)?;
        }
        Ok(req)
    };
    let workers = workers_server::WorkersServer::new(WorkersSvc(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let clients = clients_server::ClientsServer::new(ClientsSvc(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let tables = tables_server::TablesServer::new(TablesSvc(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
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
    let router = builder
        .add_service(health_service)
        .add_service(tonic::service::interceptor::InterceptedService::new(
            workers,
            auth.clone(),
        ))
        .add_service(tonic::service::interceptor::InterceptedService::new(
            clients,
            auth.clone(),
        ))
        .add_service(tonic::service::interceptor::InterceptedService::new(
            tables, auth,
        ));
    let grpc_addr = grpc.local_addr()?;
    let metrics_addr = match &metrics_listener {
        Some(l) => Some(l.local_addr()?),
        None => None,
    };
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (metrics_stop_tx, metrics_stop_rx) = oneshot::channel::<()>();
    if let Some(l) = metrics_listener {
        let m = metrics.clone();
        tokio::spawn(serve_metrics(l, m, metrics_stop_rx));
    }
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
    metrics.set_ready(true);
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(grpc);
    let shutdown_metrics = metrics.clone();
    let task = tokio::spawn(async move {
        router
            .serve_with_incoming_shutdown(incoming, async move {
                let _ = stop_rx.await;
                shutdown_metrics.set_ready(false);
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
                let _ = core_tx.send(CoreMsg::Shutdown);
                let _ = metrics_stop_tx.send(());
            })
            .await
    });
    Ok(Server {
        grpc: grpc_addr,
        metrics: metrics_addr,
        shutdown: Some(stop_tx),
        task,
        grace: cfg.shutdown_grace,
    })
}

/// `/metrics` (Prometheus text format) and `/healthz` (the process answers: liveness
/// depends on nothing outside it).
async fn serve_metrics(l: TcpListener, m: Arc<Metrics>, stop: oneshot::Receiver<()>) {
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(move || {
                let m = m.clone();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        m.render(),
                    )
                }
            }),
        )
        .route("/healthz", get(|| async { "ok\n" }));
    let r = axum::serve(l, app)
        .with_graceful_shutdown(async move {
            let _ = stop.await;
        })
        .await;
    if let Err(e) = r {
        tracing::warn!("metrics endpoint ended: {e}");
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

// ---- workers ---------------------------------------------------------------------------

struct WorkersSvc(Arc<Shared>);

impl WorkersSvc {
    /// Checks a Hello: protocol, version, table checksums. Returns the table names.
    fn check_hello(&self, hello: &w::Hello) -> Result<Vec<String>, Error> {
        if hello.protocol != PROTOCOL || hello.version != VERSION {
            return Err(Error::Version {
                peer: hello.version.clone(),
                peer_protocol: hello.protocol,
                ours: VERSION.to_string(),
            });
        }
        if hello.threads == 0 {
            return Err(Violation::ZeroThreads.into());
        }
        let mut sums = self
            .0
            .checksums
            .lock()
            .map_err(|_| Error::RegistryPoisoned)?;
        for t in &hello.tables {
            for f in &t.files {
                match sums.get(&f.file) {
                    Some(&ours) if ours != f.checksum => {
                        return Err(Error::TableMismatch {
                            file: f.file.clone(),
                            peer: f.checksum,
                            ours,
                        })
                    }
                    _ => {}
                }
            }
        }
        for t in &hello.tables {
            for f in &t.files {
                sums.entry(f.file.clone()).or_insert(f.checksum);
            }
        }
        Ok(hello.tables.iter().map(|t| t.name.clone()).collect())
    }
}

#[tonic::async_trait]
impl workers_server::Workers for WorkersSvc {
    type JoinStream = BoxStream<w::CoordinatorMessage>;

    async fn join(
        &self,
        req: Request<Streaming<w::WorkerMessage>>,
    ) -> Result<Response<Self::JoinStream>, Status> {
        use w::worker_message::Msg;
        let mut inbound = req.into_inner();
        let first = tokio::time::timeout(self.0.lease, inbound.message())
            .await
            .map_err(|_| Status::deadline_exceeded("no hello within the lease"))??;
        let hello = match first.and_then(|m| m.msg) {
            Some(Msg::Hello(h)) => h,
            _ => {
                self.0.metrics.worker_refused();
                return Err(Error::from(Violation::NoHello).into());
            }
        };
        let tables = match self.check_hello(&hello) {
            Ok(t) => t,
            Err(e) => {
                self.0.metrics.worker_refused();
                tracing::warn!(worker = %hello.worker_id, "worker refused: {e}");
                return Err(e.into());
            }
        };
        let id = ExecutorId(self.0.next_executor.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = mpsc::unbounded_channel();
        let welcome = w::CoordinatorMessage {
            msg: Some(w::coordinator_message::Msg::Welcome(w::Welcome {
                executor: id.0,
                heartbeat_ms: self.0.heartbeat.as_millis() as u64,
                lease_ms: self.0.lease.as_millis() as u64,
            })),
        };
        let _ = tx.send(Ok(welcome));
        self.0.post(CoreMsg::Join {
            id,
            info: WorkerInfo {
                worker_id: hello.worker_id.clone(),
                threads: hello.threads,
                tables,
            },
            tx: tx.clone(),
        })?;
        let shared = self.0.clone();
        tokio::spawn(async move {
            loop {
                let m = match inbound.message().await {
                    Ok(Some(m)) => m,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::info!(executor = id.0, "worker stream broke: {e}");
                        break;
                    }
                };
                let event = match m.msg {
                    Some(Msg::Heartbeat(h)) => FromWorker::Heartbeat(
                        h.running
                            .iter()
                            .map(|r| (JobId(r.job), r.attempt, r.nodes))
                            .collect(),
                    ),
                    Some(Msg::Result(r)) => match proto::JobResult::try_from(r) {
                        Ok(r) => FromWorker::Result(r),
                        Err(e) => {
                            // A result that cannot be read is as good as none: the job's
                            // lease will end and it runs elsewhere.
                            tracing::warn!(executor = id.0, "bad result from worker: {e}");
                            let _ = tx.send(Err(Error::Decode(e).into()));
                            break;
                        }
                    },
                    Some(Msg::Capacity(c)) => FromWorker::Capacity(c.slots),
                    Some(Msg::Draining(d)) => {
                        tracing::info!(executor = id.0, grace_ms = d.grace_ms, "worker draining");
                        FromWorker::Capacity(0)
                    }
                    Some(Msg::Hello(_)) | None => {
                        let _ = tx.send(Err(Error::from(Violation::HelloTwice).into()));
                        break;
                    }
                };
                if shared.post(CoreMsg::Worker { id, event }).is_err() {
                    break;
                }
            }
            let _ = shared.post(CoreMsg::Left { id });
        });
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }
}

// ---- clients ---------------------------------------------------------------------------

struct ClientsSvc(Arc<Shared>);

#[tonic::async_trait]
impl clients_server::Clients for ClientsSvc {
    type SolveStream = BoxStream<w::SolveResponse>;

    async fn solve(
        &self,
        req: Request<Streaming<w::SolveRequest>>,
    ) -> Result<Response<Self::SolveStream>, Status> {
        use w::solve_request::Msg;
        let mut inbound = req.into_inner();
        let open = match inbound.message().await?.and_then(|m| m.msg) {
            Some(Msg::Open(o)) => o,
            _ => {
                self.0.metrics.client_refused();
                return Err(Error::from(Violation::NoOpen).into());
            }
        };
        let settings: Settings = match open
            .settings
            .ok_or(proto::DecodeError::Missing("open.settings"))
            .and_then(Settings::try_from)
            .map_err(Error::from)
            .and_then(|s| Ok(s.validate()?.into_inner()))
        {
            Ok(s) => s,
            Err(e) => {
                self.0.metrics.client_refused();
                return Err(e.into());
            }
        };
        if !self.0.known_tables.contains(&open.table) {
            self.0.metrics.client_refused();
            return Err(Error::UnknownTable {
                name: open.table,
                known: self.0.known_tables.clone(),
            }
            .into());
        }
        let key = self.0.next_client.fetch_add(1, Ordering::Relaxed);
        let (out, rx) = mpsc::unbounded_channel();
        let window = Arc::new(Semaphore::new(0));
        self.0.post(CoreMsg::Open {
            key,
            settings,
            table: open.table,
            out: out.clone(),
            window: window.clone(),
        })?;
        let shared = self.0.clone();
        tokio::spawn(async move {
            let mut last_id = 0u64;
            let ended = loop {
                let m = tokio::select! {
                    m = inbound.message() => m,
                    _ = out.closed() => break false,
                };
                let lines = match m {
                    Ok(Some(w::SolveRequest {
                        msg: Some(Msg::Lines(l)),
                    })) => l.lines,
                    Ok(Some(w::SolveRequest {
                        msg: Some(Msg::End(_)),
                    })) => break true,
                    Ok(Some(_)) => {
                        let _ = out.send(Err(Error::from(Violation::Unexpected).into()));
                        break false;
                    }
                    Ok(None) | Err(_) => break false,
                };
                let mut bad = None;
                for l in lines {
                    if l.id <= last_id {
                        bad = Some(Violation::LineIdsNotIncreasing {
                            id: l.id,
                            after: last_id,
                        });
                        break;
                    }
                    last_id = l.id;
                    let proved_empty = match l.proved_empty.map(u8::try_from) {
                        None => None,
                        Some(Ok(d)) => Some(d),
                        Some(Err(_)) => {
                            bad = Some(Violation::ProvedEmptyOutOfRange { line: l.id });
                            break;
                        }
                    };
                    // Wait for room in the window (the client waits with us: flow control).
                    let permit = tokio::select! {
                        p = window.acquire() => p,
                        _ = out.closed() => break,
                    };
                    match permit {
                        Ok(p) => p.forget(),
                        Err(_) => break,
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
                        .post(CoreMsg::Line {
                            key,
                            line,
                            proved_empty,
                        })
                        .is_err()
                    {
                        break;
                    }
                }
                if let Some(reason) = bad {
                    let _ = out.send(Err(Error::from(reason).into()));
                    break false;
                }
                if out.is_closed() {
                    break false;
                }
            };
            let _ = shared.post(if ended {
                CoreMsg::End { key }
            } else {
                CoreMsg::Close { key }
            });
        });
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }

    async fn status(
        &self,
        _req: Request<w::StatusRequest>,
    ) -> Result<Response<w::ClusterStatus>, Status> {
        let (tx, rx) = oneshot::channel();
        self.0.post(CoreMsg::Status { reply: tx })?;
        let s = rx.await.map_err(|_| Status::from(Error::ShuttingDown))?;
        Ok(Response::new(s))
    }
}

// ---- tables ----------------------------------------------------------------------------

struct TablesSvc(Arc<Shared>);

/// Bytes per chunk of a table stream.
const CHUNK: usize = 1 << 20;

#[tonic::async_trait]
impl tables_server::Tables for TablesSvc {
    type FetchStream = BoxStream<w::FetchResponse>;

    async fn list(
        &self,
        _req: Request<w::ListTablesRequest>,
    ) -> Result<Response<w::ListTablesResponse>, Status> {
        Ok(Response::new(w::ListTablesResponse {
            files: self.0.files.values().map(|f| f.info.clone()).collect(),
        }))
    }

    async fn fetch(
        &self,
        req: Request<w::FetchRequest>,
    ) -> Result<Response<Self::FetchStream>, Status> {
        use tokio::io::AsyncReadExt;
        let name = req.into_inner().file;
        let Some(f) = self.0.files.get(&name).cloned() else {
            return Err(Error::FileNotServed {
                file: name,
                serving: self.0.files.keys().cloned().collect(),
            }
            .into());
        };
        let mut file = tokio::fs::File::open(&f.path)
            .await
            .map_err(|e| Error::FileUnreadable {
                path: f.path.display().to_string(),
                reason: e.to_string(),
            })?;
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(async move {
            use w::fetch_response::Msg;
            if tx
                .send(Ok(w::FetchResponse {
                    msg: Some(Msg::Start(w::FetchStart {
                        info: Some(f.info.clone()),
                    })),
                }))
                .await
                .is_err()
            {
                return;
            }
            let mut offset = 0u64;
            loop {
                let mut buf = vec![0u8; CHUNK];
                let mut filled = 0;
                while filled < CHUNK {
                    match file.read(&mut buf[filled..]).await {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) => {
                            let _ = tx
                                .send(Err(Error::FileUnreadable {
                                    path: f.path.display().to_string(),
                                    reason: e.to_string(),
                                }
                                .into()))
                                .await;
                            return;
                        }
                    }
                }
                if filled == 0 {
                    return;
                }
                buf.truncate(filled);
                let n = filled as u64;
                let msg = w::FetchResponse {
                    msg: Some(Msg::Chunk(w::Chunk { offset, data: buf })),
                };
                if tx.send(Ok(msg)).await.is_err() {
                    return;
                }
                offset += n;
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
