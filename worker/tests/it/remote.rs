//! The worker process against fake, in-process coordinators on 127.0.0.1:0: fetching a
//! table file (a good stream, and every kind of bad one), the table check that refuses a
//! damaged file, and the session (Hello with the checked tables, real jobs, Cancel,
//! reconnection, refusal, draining on shutdown).
//!
//! Run: `cargo test -p cubeswarm-worker --test it remote::` (uses the cached test tables:
//! h48h0k4, cocsep and the two-phase files in `target/test-tables`).

use crate::h48_common;

use proto::transport::{tables_client, Auth, ClientConfig};
use proto::wire::{
    self, coordinator_message, fetch_response, tables_server::TablesServer, worker_message,
    workers_server::WorkersServer,
};
use proto::{JobError, JobOutput, JobResult, Stop};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tables::progress::Silent;
use tables::tablefile::{table_path, TableFile, TableFileError, HEADER_LEN};
use tables::Position;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tonic::{Code, Request, Response, Status, Streaming};
use worker::remote::{
    fetch_file, serve, BackoffPolicy, FetchError, Health, Prepared, ServedTables, SessionOptions,
    TableSet, TableSetError, WorkerError,
};
use worker::{catalog, TableMemory};

/// How long a test waits for anything before it fails (generous: CI has 2 busy cores).
const PATIENCE: Duration = Duration::from_secs(60);

/// The test tables: h48h0k4 (with cocsep) and the two-phase files.
fn tables_dir() -> PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let dir = h48_common::ensure("h48h0k4");
        let tp = proto::catalog::find("twophase").expect("twophase is in the catalog");
        if !tp.present(&dir) {
            catalog::build_entry(&dir, tp, &Silent).expect("building the two-phase tables");
        }
        dir
    })
    .clone()
}

/// A fresh scratch directory.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cubeswarm-remote-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every entry of `dir`.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A listener on 127.0.0.1:0 and its URL.
async fn listen() -> (TcpListenerStream, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    (TcpListenerStream::new(listener), url)
}

// ---- fetch -------------------------------------------------------------------------------

/// A Tables service that answers every Fetch with the same scripted messages (with
/// `resumes`, less the chunks before the offset asked for, as a coordinator that resumes).
#[derive(Clone)]
struct FakeTables {
    script: Arc<Vec<wire::FetchResponse>>,
    resumes: bool,
}

#[tonic::async_trait]
impl wire::tables_server::Tables for FakeTables {
    async fn list(
        &self,
        _: Request<wire::ListTablesRequest>,
    ) -> Result<Response<wire::ListTablesResponse>, Status> {
        Ok(Response::new(wire::ListTablesResponse { files: vec![] }))
    }

    type FetchStream = ReceiverStream<Result<wire::FetchResponse, Status>>;

    async fn fetch(
        &self,
        req: Request<wire::FetchRequest>,
    ) -> Result<Response<Self::FetchStream>, Status> {
        let (tx, rx) = mpsc::channel(4);
        let script = Arc::clone(&self.script);
        let from = if self.resumes {
            req.into_inner().offset
        } else {
            0
        };
        tokio::spawn(async move {
            for m in script.iter().filter(|m| match &m.msg {
                Some(fetch_response::Msg::Chunk(c)) => c.offset >= from,
                _ => true,
            }) {
                if tx.send(Ok(m.clone())).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

fn start(file: &str, checksum: u64, bytes: u64) -> wire::FetchResponse {
    wire::FetchResponse {
        msg: Some(fetch_response::Msg::Start(wire::FetchStart {
            info: Some(wire::TableFileInfo {
                file: file.into(),
                checksum,
                bytes,
            }),
        })),
    }
}

fn chunk(offset: u64, data: &[u8]) -> wire::FetchResponse {
    wire::FetchResponse {
        msg: Some(fetch_response::Msg::Chunk(wire::Chunk {
            offset,
            data: data.to_vec().into(),
        })),
    }
}

/// `bytes` cut into 64 KiB chunks at their true offsets.
fn chunks(bytes: &[u8]) -> Vec<wire::FetchResponse> {
    bytes
        .chunks(64 << 10)
        .enumerate()
        .map(|(i, c)| chunk((i * (64 << 10)) as u64, c))
        .collect()
}

/// Fetches `file` into a fresh directory from a server playing `script`.
async fn fetch_with(
    name: &str,
    file: &str,
    script: Vec<wire::FetchResponse>,
) -> (PathBuf, Result<worker::remote::FetchedFile, FetchError>) {
    let dir = scratch(name);
    let r = fetch_into(&dir, file, script, false).await;
    (dir, r)
}

/// Fetches `file` into `dir` (as it is: a partial fetch there is resumed) from a server
/// playing `script`, resuming at the offset asked for when `resumes`.
async fn fetch_into(
    dir: &Path,
    file: &str,
    script: Vec<wire::FetchResponse>,
    resumes: bool,
) -> Result<worker::remote::FetchedFile, FetchError> {
    let (incoming, url) = listen().await;
    let svc = TablesServer::new(FakeTables {
        script: Arc::new(script),
        resumes,
    });
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(svc)
            .serve_with_incoming(incoming),
    );
    let channel = ClientConfig::new(url).connect().await.unwrap();
    let mut client = tables_client(channel, Auth::new(None).unwrap());
    fetch_file(&mut client, dir, file).await
}

/// cocsep (a real 616 kB table file): its bytes and header checksum.
fn cocsep() -> (Vec<u8>, u64) {
    let path = table_path(&tables_dir(), "cocsep");
    let checksum = TableFile::open(&path, "cocsep").unwrap().header().checksum;
    (std::fs::read(&path).unwrap(), checksum)
}

#[test]
fn the_catalog_knows_the_exact_size_of_every_file_a_fetch_announces() {
    let dir = tables_dir();
    for f in [
        "cocsep",
        "h48h0k4",
        "twophase-fsym",
        "twophase-p1",
        "twophase-p2",
    ] {
        let len = std::fs::metadata(table_path(&dir, f)).unwrap().len();
        assert_eq!(proto::catalog::file_bytes(f), Some(len), "{f}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_stream_is_checked_and_renamed_into_place() {
    let (bytes, checksum) = cocsep();
    let mut script = vec![start("cocsep", checksum, bytes.len() as u64)];
    script.extend(chunks(&bytes));
    let (dir, r) = fetch_with("good", "cocsep", script).await;
    let got = r.unwrap();
    assert_eq!(got.checksum, checksum);
    assert_eq!(got.bytes, bytes.len() as u64);
    assert_eq!(entries(&dir), ["cocsep.tbl"], "no temporary file left");
    assert_eq!(std::fs::read(table_path(&dir, "cocsep")).unwrap(), bytes);
    TableFile::open(table_path(&dir, "cocsep"), "cocsep")
        .unwrap()
        .verify()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_streams_are_typed_errors_and_leave_nothing() {
    let (bytes, checksum) = cocsep();
    let len = bytes.len() as u64;
    let body = |v: &[u8]| {
        let mut s = vec![start("cocsep", checksum, len)];
        s.extend(chunks(v));
        s
    };
    // Truncated: the stream ends 1000 bytes early.
    let (dir, r) = fetch_with("trunc", "cocsep", body(&bytes[..bytes.len() - 1000])).await;
    assert!(
        matches!(r, Err(FetchError::Truncated { received, .. }) if received == len - 1000),
        "{r:?}"
    );
    // Only the partial fetch is left, for a resume.
    assert_eq!(entries(&dir), ["cocsep.tbl.fetch"]);
    assert_eq!(
        std::fs::read(worker::remote::partial_path(&dir, "cocsep")).unwrap(),
        &bytes[..bytes.len() - 1000]
    );

    // The announced checksum is not the file's.
    let mut s = body(&bytes);
    s[0] = start("cocsep", checksum ^ 1, len);
    let (dir, r) = fetch_with("sum", "cocsep", s).await;
    assert!(
        matches!(r, Err(FetchError::ChecksumNotAnnounced { header, .. }) if header == checksum),
        "{r:?}"
    );
    assert!(entries(&dir).is_empty());

    // A damaged body under the announced (header's) checksum.
    let mut damaged = bytes.clone();
    damaged[HEADER_LEN + 12345] ^= 0x10;
    let (dir, r) = fetch_with("damaged", "cocsep", body(&damaged)).await;
    assert!(
        matches!(
            r,
            Err(FetchError::Table(TableFileError::ChecksumMismatch { .. }))
        ),
        "{r:?}"
    );
    assert!(entries(&dir).is_empty());

    // Non-contiguous offsets: the second chunk skips a byte.
    let mut s = vec![
        start("cocsep", checksum, len),
        chunk(0, &bytes[..5000]),
        chunk(5001, &bytes[5001..]),
    ];
    let (dir, r) = fetch_with("gap", "cocsep", s.clone()).await;
    assert!(
        matches!(
            r,
            Err(FetchError::Gap {
                expected: 5000,
                offset: 5001,
                ..
            })
        ),
        "{r:?}"
    );
    assert!(entries(&dir).is_empty());

    // More bytes than announced.
    s = body(&bytes);
    s.push(chunk(len, b"extra"));
    let (dir, r) = fetch_with("over", "cocsep", s).await;
    assert!(matches!(r, Err(FetchError::Oversize { .. })), "{r:?}");
    assert!(entries(&dir).is_empty());

    // A size that is not the catalog's, another file, no Start.
    let (_, r) = fetch_with("size", "cocsep", vec![start("cocsep", checksum, len + 1)]).await;
    assert!(matches!(r, Err(FetchError::WrongSize { .. })), "{r:?}");
    let (_, r) = fetch_with("file", "cocsep", vec![start("h48h0k4", checksum, len)]).await;
    assert!(matches!(r, Err(FetchError::WrongFile { .. })), "{r:?}");
    let (dir, r) = fetch_with("nostart", "cocsep", chunks(&bytes)).await;
    assert!(matches!(r, Err(FetchError::NoStart { .. })), "{r:?}");
    assert!(entries(&dir).is_empty());
}

/// The whole cocsep stream, as a coordinator sends it.
fn cocsep_script() -> (Vec<u8>, Vec<wire::FetchResponse>) {
    let (bytes, checksum) = cocsep();
    let mut script = vec![start("cocsep", checksum, bytes.len() as u64)];
    script.extend(chunks(&bytes));
    (bytes, script)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_fetch_resumes_from_the_bytes_held() {
    let (bytes, script) = cocsep_script();
    let dir = scratch("resume");
    let held = 3 * (64 << 10);
    std::fs::write(worker::remote::partial_path(&dir, "cocsep"), &bytes[..held]).unwrap();
    let got = fetch_into(&dir, "cocsep", script, true).await.unwrap();
    assert_eq!(got.resumed_from, held as u64);
    assert_eq!(entries(&dir), ["cocsep.tbl"], "the partial file is gone");
    assert_eq!(std::fs::read(table_path(&dir, "cocsep")).unwrap(), bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_held_that_changed_on_disk_fail_the_check_of_the_resumed_file() {
    // The bytes a resume keeps never pass through the receive loop: they are read back
    // from the partial file and hashed with the rest. One of them damaged on disk between
    // the two attempts fails the body checksum, and nothing is put in place.
    let (bytes, script) = cocsep_script();
    let dir = scratch("resume-damaged");
    // (The fake coordinator resumes on its 64 KiB chunk boundaries.)
    let mut held = bytes[..4 * (64 << 10)].to_vec();
    held[HEADER_LEN + 1234] ^= 0x04;
    std::fs::write(worker::remote::partial_path(&dir, "cocsep"), &held).unwrap();
    let r = fetch_into(&dir, "cocsep", script.clone(), true).await;
    assert!(
        matches!(
            r,
            Err(FetchError::Table(TableFileError::ChecksumMismatch { .. }))
        ),
        "{r:?}"
    );
    assert!(
        entries(&dir).is_empty(),
        "the damaged partial file is removed"
    );
    let got = fetch_into(&dir, "cocsep", script, true).await.unwrap();
    assert_eq!(got.resumed_from, 0);
    assert_eq!(std::fs::read(table_path(&dir, "cocsep")).unwrap(), bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_fetch_of_another_version_is_discarded() {
    let (bytes, script) = cocsep_script();
    let dir = scratch("other-version");
    // Another table file named cocsep (another length and checksum): its first bytes.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let body = vec![7u8; 100_000];
    tables::tablefile::write_table(
        &table_path(&other, "cocsep"),
        &tables::tablefile::TableMeta::new("cocsep", 100_000, 8),
        &body,
    )
    .unwrap();
    let old = std::fs::read(table_path(&other, "cocsep")).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
    std::fs::write(
        worker::remote::partial_path(&dir, "cocsep"),
        &old[..HEADER_LEN + 50_000],
    )
    .unwrap();
    let got = fetch_into(&dir, "cocsep", script.clone(), true)
        .await
        .unwrap();
    assert_eq!(got.resumed_from, 0, "fetched again from zero");
    assert_eq!(entries(&dir), ["cocsep.tbl"]);
    assert_eq!(std::fs::read(table_path(&dir, "cocsep")).unwrap(), bytes);

    // A coordinator that ignores the offset (an older one) sends from zero: followed.
    std::fs::remove_file(table_path(&dir, "cocsep")).unwrap();
    std::fs::write(
        worker::remote::partial_path(&dir, "cocsep"),
        &bytes[..200_000],
    )
    .unwrap();
    let got = fetch_into(&dir, "cocsep", script, false).await.unwrap();
    assert_eq!(got.resumed_from, 0);
    assert_eq!(std::fs::read(table_path(&dir, "cocsep")).unwrap(), bytes);
}

// ---- the table check ---------------------------------------------------------------------

#[test]
fn a_damaged_table_is_refused_naming_the_file() {
    let src = tables_dir();
    let dir = scratch("damaged-table");
    std::os::unix::fs::symlink(table_path(&src, "h48h0k4"), table_path(&dir, "h48h0k4")).unwrap();
    let mut bytes = std::fs::read(table_path(&src, "cocsep")).unwrap();
    bytes[HEADER_LEN + 777] ^= 1;
    std::fs::write(table_path(&dir, "cocsep"), &bytes).unwrap();
    let err = TableSet::check(&dir, &ServedTables::AllPresent).unwrap_err();
    assert!(
        matches!(
            err,
            TableSetError::Damaged(TableFileError::ChecksumMismatch { .. })
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("cocsep.tbl") && msg.contains("damaged"),
        "{msg}"
    );
}

#[test]
fn no_table_or_a_missing_one_is_a_clear_error() {
    let dir = scratch("empty");
    let msg = TableSet::check(&dir, &ServedTables::AllPresent)
        .unwrap_err()
        .to_string();
    assert!(msg.contains(&dir.display().to_string()), "{msg}");
    assert!(
        msg.contains("tables build") && msg.contains("--fetch"),
        "{msg}"
    );
    let err = TableSet::check(&dir, &ServedTables::Named(vec!["twophase".into()])).unwrap_err();
    assert!(
        err.to_string().contains("twophase-p1"),
        "names the missing files: {err}"
    );
    let err = TableSet::check(&dir, &ServedTables::Named(vec!["nope".into()])).unwrap_err();
    assert!(matches!(err, TableSetError::Unknown { .. }), "{err:?}");
}

// ---- the session ---------------------------------------------------------------------------

/// twophase and h48h0k4, checked and opened once (straight from the maps).
fn prepared() -> Prepared {
    static P: OnceLock<Prepared> = OnceLock::new();
    P.get_or_init(|| {
        let choice = ServedTables::Named(vec!["twophase".into(), "h48h0k4".into()]);
        let tables = TableSet::check(&tables_dir(), &choice).unwrap();
        let engines = tables.open(TableMemory::Mapped).unwrap();
        Prepared {
            tables,
            engines: Arc::new(engines),
        }
    })
    .clone()
}

/// One connection as the fake coordinator sees it.
struct Joined {
    hello: wire::Hello,
    to_worker: mpsc::Sender<Result<wire::CoordinatorMessage, Status>>,
    from_worker: Streaming<wire::WorkerMessage>,
}

/// A Workers service that hands every connection (after its Hello) to the test.
#[derive(Clone)]
struct FakeCoordinator {
    joined: mpsc::UnboundedSender<Joined>,
}

#[tonic::async_trait]
impl wire::workers_server::Workers for FakeCoordinator {
    type JoinStream = ReceiverStream<Result<wire::CoordinatorMessage, Status>>;

    async fn join(
        &self,
        req: Request<Streaming<wire::WorkerMessage>>,
    ) -> Result<Response<Self::JoinStream>, Status> {
        let mut from_worker = req.into_inner();
        let hello = match from_worker.message().await? {
            Some(wire::WorkerMessage {
                msg: Some(worker_message::Msg::Hello(h)),
            }) => h,
            _ => return Err(Status::invalid_argument("Hello first")),
        };
        let (to_worker, rx) = mpsc::channel(16);
        let _ = self.joined.send(Joined {
            hello,
            to_worker,
            from_worker,
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// A fake coordinator, and a worker serving it until the returned sender fires.
struct Harness {
    joined: mpsc::UnboundedReceiver<Joined>,
    stop: Option<oneshot::Sender<()>>,
    worker: tokio::task::JoinHandle<Result<(), WorkerError>>,
    health: Arc<Health>,
}

async fn harness(grace: Duration) -> Harness {
    let prepared = prepared();
    let (tx, joined) = mpsc::unbounded_channel();
    let (incoming, url) = listen().await;
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(WorkersServer::new(FakeCoordinator { joined: tx }))
            .serve_with_incoming(incoming),
    );
    let mut options = SessionOptions::new(ClientConfig::new(url));
    options.worker_id = "test-worker".into();
    options.threads = 2;
    options.grace = grace;
    options.backoff = BackoffPolicy {
        initial: Duration::from_millis(20),
        max: Duration::from_millis(200),
        ..BackoffPolicy::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let health = Arc::new(Health::new());
    let h = Arc::clone(&health);
    let worker = tokio::spawn(async move {
        serve(&options, &prepared, &h, async {
            let _ = stopped.await;
        })
        .await
    });
    Harness {
        joined,
        stop: Some(stop),
        worker,
        health,
    }
}

impl Harness {
    async fn next_connection(&mut self) -> Joined {
        tokio::time::timeout(PATIENCE, self.joined.recv())
            .await
            .expect("the worker connects")
            .expect("the server runs")
    }
}

impl Joined {
    async fn send(&self, msg: coordinator_message::Msg) {
        self.to_worker
            .send(Ok(wire::CoordinatorMessage { msg: Some(msg) }))
            .await
            .expect("the worker listens");
    }

    async fn welcome(&self) {
        self.send(coordinator_message::Msg::Welcome(wire::Welcome {
            executor: 7,
            heartbeat_ms: 100,
            lease_ms: 3000,
        }))
        .await;
    }

    /// The worker's next message (`None`: it closed the stream).
    async fn recv(&mut self) -> Option<worker_message::Msg> {
        tokio::time::timeout(PATIENCE, self.from_worker.message())
            .await
            .expect("the worker says something")
            .ok()
            .flatten()
            .map(|m| m.msg.expect("a message"))
    }

    /// The worker's messages up to the result of `job`, which is returned decoded, and
    /// the heartbeats seen on the way.
    async fn result_of(&mut self, job: u64) -> (JobResult, Vec<wire::Heartbeat>) {
        let mut beats = Vec::new();
        loop {
            match self.recv().await {
                Some(worker_message::Msg::Result(r)) if r.id == job => {
                    return (JobResult::try_from(r).expect("a valid result"), beats)
                }
                Some(worker_message::Msg::Heartbeat(h)) => beats.push(h),
                Some(_) => {}
                None => panic!("the worker closed the stream before job {job}'s result"),
            }
        }
    }

    /// Waits for a heartbeat that lists `job` as running.
    async fn running(&mut self, job: u64) {
        loop {
            match self.recv().await {
                Some(worker_message::Msg::Heartbeat(h))
                    if h.running.iter().any(|p| p.job == job) =>
                {
                    return
                }
                Some(_) => {}
                None => panic!("the worker closed the stream"),
            }
        }
    }
}

fn batch_job(id: u64, table: &str, method: proto::Method, scramble: &str) -> wire::Job {
    wire::Job::from(&proto::Job {
        id: proto::JobId(id),
        attempt: 1,
        table: table.into(),
        work: proto::Work::Batch {
            settings: proto::Settings {
                method,
                ..proto::Settings::default()
            },
            items: vec![proto::BatchItem {
                line: 1,
                position: Position::parse(scramble).unwrap(),
            }],
        },
    })
}

const SUPERFLIP: &str = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_says_hello_runs_cancels_and_reconnects() {
    let mut h = harness(Duration::from_secs(5)).await;
    let mut c = h.next_connection().await;
    // Hello: who, how many threads, every checked table with its files, the version.
    assert_eq!(c.hello.worker_id, "test-worker");
    assert_eq!(c.hello.threads, 2);
    assert_eq!(c.hello.version, proto::VERSION);
    assert_eq!(c.hello.protocol, proto::PROTOCOL);
    let names: Vec<&str> = c.hello.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["twophase", "h48h0k4"]);
    let h0 = &c.hello.tables[1];
    let files: Vec<&str> = h0.files.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(files, ["h48h0k4", "cocsep"]);
    let path = table_path(&tables_dir(), "cocsep");
    assert_eq!(
        h0.files[1].checksum,
        TableFile::open(&path, "cocsep").unwrap().header().checksum
    );
    assert_eq!(h0.files[1].bytes, std::fs::metadata(&path).unwrap().len());
    c.welcome().await;

    // A real job: its result is verified and comes back under its id and attempt.
    let scramble = "R U F' D2 L";
    c.send(coordinator_message::Msg::Job(batch_job(
        1,
        "twophase",
        proto::Method::TwoPhase,
        scramble,
    )))
    .await;
    let (r, _) = c.result_of(1).await;
    assert_eq!(r.attempt, 1);
    let Ok(JobOutput::Batch(items)) = r.output else {
        panic!("{r:?}")
    };
    assert!(Position::parse(scramble)
        .unwrap()
        .is_solved_by(&items[0].as_ref().unwrap().solutions[0]));

    // A long job shows up in heartbeats; Cancel stops it, and its result says so.
    c.send(coordinator_message::Msg::Job(batch_job(
        2,
        "h48h0k4",
        proto::Method::Optimal,
        SUPERFLIP,
    )))
    .await;
    c.running(2).await;
    c.send(coordinator_message::Msg::Cancel(wire::Cancel { job: 2 }))
        .await;
    let (r, _) = c.result_of(2).await;
    let Ok(JobOutput::Batch(items)) = r.output else {
        panic!("{r:?}")
    };
    assert_eq!(items[0].as_ref().unwrap().stop, Stop::Cancelled);

    // A job the worker cannot decode is answered, not left to its lease.
    c.send(coordinator_message::Msg::Job(wire::Job {
        id: 3,
        attempt: 2,
        table: "twophase".into(),
        work: None,
    }))
    .await;
    let (r, _) = c.result_of(3).await;
    assert_eq!(r.attempt, 2);
    assert!(
        matches!(r.output, Err(JobError::Undecodable { .. })),
        "{r:?}"
    );
    assert!(h.health.is_connected());

    // The coordinator goes away mid-job: the worker comes back and says Hello again.
    c.send(coordinator_message::Msg::Job(batch_job(
        4,
        "h48h0k4",
        proto::Method::Optimal,
        SUPERFLIP,
    )))
    .await;
    c.running(4).await;
    drop(c);
    let mut c = h.next_connection().await;
    assert_eq!(c.hello.worker_id, "test-worker");
    c.welcome().await;
    // Nothing of the old connection comes back on the new one.
    for _ in 0..3 {
        match c.recv().await {
            Some(worker_message::Msg::Heartbeat(hb)) => assert!(hb.running.is_empty()),
            other => panic!("{other:?}"),
        }
    }

    // Shutdown with nothing running: Draining, Capacity 0, the stream closes, Ok.
    h.stop.take().unwrap().send(()).unwrap();
    let mut saw = (false, false);
    while let Some(m) = c.recv().await {
        match m {
            worker_message::Msg::Draining(d) => {
                assert_eq!(d.grace_ms, 5000);
                saw.0 = true
            }
            worker_message::Msg::Capacity(cap) => {
                assert_eq!(cap.slots, 0);
                saw.1 = true
            }
            _ => {}
        }
    }
    assert_eq!(saw, (true, true));
    drop(c);
    tokio::time::timeout(PATIENCE, h.worker)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_then_hands_back_what_outlives_the_grace_period() {
    let mut h = harness(Duration::from_millis(300)).await;
    let mut c = h.next_connection().await;
    c.welcome().await;
    c.send(coordinator_message::Msg::Job(batch_job(
        9,
        "h48h0k4",
        proto::Method::Optimal,
        SUPERFLIP,
    )))
    .await;
    c.running(9).await;
    h.stop.take().unwrap().send(()).unwrap();
    // Draining and Capacity 0 first; heartbeats go on; after the grace period the job is
    // cancelled and its (incomplete) result sent; then the stream closes.
    let mut order = Vec::new();
    while let Some(m) = c.recv().await {
        match m {
            worker_message::Msg::Draining(d) => {
                assert_eq!(d.grace_ms, 300);
                order.push("draining");
            }
            worker_message::Msg::Capacity(cap) => {
                assert_eq!(cap.slots, 0);
                order.push("capacity");
            }
            worker_message::Msg::Result(r) => {
                let r = JobResult::try_from(r).unwrap();
                assert_eq!(r.id.0, 9);
                let Ok(JobOutput::Batch(items)) = r.output else {
                    panic!("{r:?}")
                };
                assert_eq!(items[0].as_ref().unwrap().stop, Stop::Cancelled);
                order.push("result");
            }
            _ => {}
        }
        if order.len() == 2 {
            assert!(h.health.is_draining());
        }
    }
    assert_eq!(order, ["draining", "capacity", "result"]);
    drop(c);
    tokio::time::timeout(PATIENCE, h.worker)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_ends_the_worker_with_the_coordinator_reason() {
    let mut h = harness(Duration::from_secs(1)).await;
    let c = h.next_connection().await;
    c.to_worker
        .send(Err(Status::failed_precondition(
            "version mismatch: peer has 0.0.1 (protocol 1), coordinator has 0.1.0 (protocol 1)",
        )))
        .await
        .unwrap();
    let err = tokio::time::timeout(PATIENCE, h.worker)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            err,
            WorkerError::Refused {
                code: Code::FailedPrecondition,
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("coordinator refused this worker: version mismatch"),
        "{msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_is_not_connected_stops_at_once() {
    // A port nobody listens on (bound, then closed).
    let addr = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let options = SessionOptions::new(ClientConfig::new(format!("http://{addr}")));
    let prepared = prepared();
    let health = Health::new();
    let t = std::time::Instant::now();
    let r = tokio::time::timeout(
        PATIENCE,
        serve(
            &options,
            &prepared,
            &health,
            tokio::time::sleep(Duration::from_millis(300)),
        ),
    )
    .await
    .unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}
