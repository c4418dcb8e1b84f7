//! Workers that lie, over the real protocol: a test double joins a real coordinator as a
//! worker (Hello, Welcome, jobs, heartbeats, results) beside an honest worker, and a real
//! client's records must come out right all the same.
//!
//! - A liar answers its own jobs with a one-move "solution": the coordinator checks every
//!   solution, refuses the answer, counts it, and gives the liar no more work.
//! - A squatter answers jobs it was never given (guessing their lines): its answers are
//!   ignored.
//! - A sitter never answers, while heartbeating a list of nothing: the jobs it sits on
//!   are taken back once its heartbeats have not listed them for a lease.
//! - A real worker process made a liar by the test seam (`CUBESWARM_FAILPOINT=lie-empty`:
//!   every subtree it is given "searched, no solution, one node") beside two honest ones:
//!   its claims are run again elsewhere, it is caught and distrusted, and the records are
//!   the known optimal ones.

use crate::common;

use common::*;
use proto::wire::{self as w, coordinator_message, worker_message};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::wrappers::ReceiverStream;

/// How the double misbehaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rogue {
    /// Answers each of its jobs with "U" for every position.
    Liar,
    /// Answers the jobs numbered around each of its own (not its own) with "U", and never
    /// answers its own; its heartbeats list nothing.
    Squatter,
    /// Never answers; its heartbeats list nothing.
    Sitter,
}

/// "U" as every position's one solution, for the lines of `job` (its own) or the
/// `batch` lines after its last one when `shift` says so.
fn claims(lines: &[u64], shift: i64, batch: u64) -> w::JobResult {
    let results = lines
        .iter()
        .map(|&l| proto::PositionResult {
            line: (l as i64 + shift * batch as i64) as u64,
            solutions: vec![vec![tables::Move::ALL[0]]],
            optimal: true,
            lower_bound: 1,
            depth_exhausted: Some(0),
            nodes: 1,
            lookups: 0,
            micros: 1,
            stop: proto::Stop::Completed,
        })
        .map(Ok)
        .collect();
    w::JobResult::from(&proto::JobResult {
        id: proto::JobId(0),
        attempt: 1,
        micros: 1,
        output: Ok(proto::JobOutput::Batch(results)),
    })
}

/// A workers' client of the coordinator at `url`, without a token.
async fn connect(url: String) -> w::workers_client::WorkersClient<proto::transport::Authed> {
    let ch = tonic::transport::Endpoint::from_shared(url)
        .unwrap()
        .connect()
        .await
        .unwrap();
    proto::transport::workers_client(ch, proto::transport::Auth::new(None).unwrap())
}

/// Runs the double against `url` until the process ends; counts the answers it sent.
fn spawn_rogue(url: String, how: Rogue, batch: u64, sent: Arc<AtomicU64>) {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut client = connect(url).await;
            let (out, rx) = tokio::sync::mpsc::channel::<w::WorkerMessage>(64);
            let msg = |m| w::WorkerMessage { msg: Some(m) };
            let hello = w::Hello {
                worker_id: format!("rogue-{how:?}"),
                threads: 4,
                tables: vec![w::TableInfo {
                    name: proto::catalog::TWOPHASE.to_string(),
                    files: Vec::new(),
                }],
                version: proto::VERSION.to_string(),
                protocol: proto::PROTOCOL,
                splits: false,
                shares: false,
            };
            out.send(msg(worker_message::Msg::Hello(hello)))
                .await
                .unwrap();
            let mut inbound = client
                .join(ReceiverStream::new(rx))
                .await
                .unwrap()
                .into_inner();
            let beat = out.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let hb = worker_message::Msg::Heartbeat(w::Heartbeat { running: vec![] });
                    if beat.send(msg(hb)).await.is_err() {
                        return;
                    }
                }
            });
            // The jobs it was given (a squatter answers only others).
            let mut held = std::collections::BTreeSet::new();
            while let Ok(Some(m)) = inbound.message().await {
                let Some(coordinator_message::Msg::Job(job)) = m.msg else {
                    continue;
                };
                let job = proto::Job::try_from(job).unwrap();
                held.insert(job.id.0);
                let proto::Work::Batch { items, .. } = &job.work else {
                    continue;
                };
                let lines: Vec<u64> = items.iter().map(|i| i.line).collect();
                let answers: Vec<(u64, w::JobResult)> = match how {
                    Rogue::Liar => vec![(job.id.0, claims(&lines, 0, batch))],
                    Rogue::Sitter => Vec::new(),
                    Rogue::Squatter => (1..=8)
                        .flat_map(|k| [k as i64, -(k as i64)])
                        .filter(|&k| job.id.0 as i64 + k > 0)
                        .filter(|&k| !held.contains(&((job.id.0 as i64 + k) as u64)))
                        .map(|k| ((job.id.0 as i64 + k) as u64, claims(&lines, k, batch)))
                        .collect(),
                };
                for (id, mut r) in answers {
                    r.id = id;
                    r.attempt = if how == Rogue::Liar { job.attempt } else { 1 };
                    if out.send(msg(worker_message::Msg::Result(r))).await.is_err() {
                        return;
                    }
                    sent.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    });
}

/// 600 two-phase lines through a coordinator (batches of 20) with an honest worker and
/// the double: every record solves its line, nothing is lost or doubled, the client
/// exits 0.
fn run_with(how: Rogue) -> (Proc, String, u64) {
    let _one = serial();
    let dir = scratch(&format!("rogue-{how:?}"));
    let tables = tables_dir();
    let (mut c, url) = coordinator(
        &dir,
        &[
            "--metrics-listen",
            "127.0.0.1:0",
            "--batch-size",
            "20",
            "--heartbeat",
            "0.1",
            "--lease",
            "1",
        ],
    );
    let metrics = metrics_addr(&mut c);
    let sent = Arc::new(AtomicU64::new(0));
    spawn_rogue(url.clone(), how, 20, Arc::clone(&sent));
    eventually(Duration::from_secs(30), "the double joined", || {
        metric(&metrics, "cubeswarm_workers_connected") == 1
    });
    let _honest = worker(&dir, "honest", &url, &[], &tables);
    let input = dir.join("in.txt");
    let lines = write_input(&input, 600, 0);
    let out = dir.join("out.txt");
    let (st, _, err) = solve_file(&url, &input, &out, &["--method", "twophase"]);
    assert!(st.success(), "{st}: {err}");
    check_records(&lines, &out, 20);
    if how != Rogue::Sitter {
        assert!(
            sent.load(Ordering::Relaxed) > 0,
            "the double never answered"
        );
    }
    (c, metrics, sent.load(Ordering::Relaxed))
}

#[test]
fn a_liars_answers_are_refused_and_it_gets_no_more_work() {
    let (_c, metrics, _) = run_with(Rogue::Liar);
    assert!(metric(&metrics, "cubeswarm_results_rejected_total") >= 1);
    assert_eq!(metric(&metrics, "cubeswarm_workers_distrusted_total"), 1);
}

/// Its answers are ignored (one that lands on a job dispatched to it meanwhile is refused
/// by the check instead: either way no record is wrong).
#[test]
fn answers_for_jobs_never_given_are_ignored() {
    let (_c, metrics, _) = run_with(Rogue::Squatter);
    assert!(metric(&metrics, "cubeswarm_results_ignored_total") >= 1);
}

#[test]
fn jobs_a_worker_sits_on_without_listing_them_come_back() {
    let (_c, metrics, _) = run_with(Rogue::Sitter);
    assert!(metric(&metrics, "cubeswarm_jobs_lost_total") >= 1);
    assert_eq!(metric(&metrics, "cubeswarm_results_rejected_total"), 0);
}

/// A worker that says "no solution here" to every subtree job, beside two honest
/// workers, on positions of known optimal length that are split into subtrees: every
/// record is still optimal, and the liar is caught (its claims disagree with the runs of
/// the same searches elsewhere), counted and distrusted.
#[test]
fn a_worker_that_claims_every_subtree_empty_is_caught_and_the_records_stay_right() {
    let _one = serial();
    let tables = tables_dir();
    let dir = scratch("liar");
    let (mut c, url) = coordinator(
        &dir,
        &[
            "--metrics-listen",
            "127.0.0.1:0",
            "--heartbeat",
            "0.25",
            "--lease",
            "5",
        ],
    );
    let metrics = metrics_addr(&mut c);
    let honest: Vec<Proc> = (1..=2)
        .map(|i| {
            worker(
                &dir,
                &format!("w{i}"),
                &url,
                &["--table", "h48h0k4"],
                &tables,
            )
        })
        .collect();
    let mut liar = Proc::start(
        "liar",
        &dir,
        &[
            "worker",
            "--coordinator",
            &url,
            "--threads",
            "1",
            "--table",
            "h48h0k4",
        ],
        &[
            ("CUBESWARM_TABLES", &tables),
            ("CUBESWARM_FAILPOINT", std::path::Path::new("lie-empty")),
        ],
    );
    liar.wait_for("connected to coordinator", Duration::from_secs(120));
    // The two 15-movers: split past depth 12, a few seconds each.
    let known: Vec<(usize, String)> = known_optimal()
        .into_iter()
        .filter(|(n, _)| *n == 15)
        .collect();
    assert!(known.len() >= 2);
    let input = dir.join("in.txt");
    let text: String = known.iter().map(|(_, s)| format!("{s}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let out = dir.join("out.jsonl");
    let (st, _, err) = solve_file(&url, &input, &out, &["--format", "jsonl"]);
    assert!(st.success(), "{err}");
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), known.len());
    for (r, (len, scramble)) in records.iter().zip(&known) {
        assert_eq!(r["length"], *len as u64, "{r}");
        assert_eq!(r["optimal"], true, "{r}");
        let sol = tables::parse_moves(r["solution"].as_str().unwrap()).unwrap();
        assert!(tables::Position::parse(scramble)
            .unwrap()
            .is_solved_by(&sol));
    }
    let [caught, distrusted, checked] = metrics_of(
        &metrics,
        [
            "cubeswarm_workers_caught_lying_total",
            "cubeswarm_workers_distrusted_total",
            "cubeswarm_claims_checked_total",
        ],
    );
    assert_eq!((caught, distrusted), (1, 1), "{}", liar.log());
    assert!(checked > 0);
    drop(honest);
}

fn metrics_of<const N: usize>(addr: &str, names: [&str; N]) -> [u64; N] {
    let v = metrics(addr, &names);
    std::array::from_fn(|i| v[i])
}

/// The coordinator's resident memory, from `/proc` (kB).
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    (status.lines())
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Messages near the size bound (a Hello whose version is 15 MB, refused, four times)
/// leave the coordinator's memory where it was: what decoding them took goes back to the
/// system when freed, not kept by the allocator at its high-water mark.
#[test]
fn huge_messages_leave_the_coordinators_memory_where_it_was() {
    let _one = serial();
    let dir = scratch("huge");
    let (c, url) = coordinator(&dir, &[]);
    let pid = c.child.id();
    // What it holds once serving (one small request answered first).
    let _ = solve_r_u(&url, &[]);
    let before = rss_kb(pid);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..4 {
        rt.block_on(async {
            let mut client = connect(url.clone()).await;
            let (out, rx) = tokio::sync::mpsc::channel::<w::WorkerMessage>(1);
            let hello = w::Hello {
                worker_id: "huge".into(),
                threads: 1,
                tables: Vec::new(),
                version: "v".repeat(15 << 20),
                protocol: proto::PROTOCOL,
                splits: false,
                shares: false,
            };
            out.send(w::WorkerMessage {
                msg: Some(worker_message::Msg::Hello(hello)),
            })
            .await
            .unwrap();
            drop(out);
            // Refused: another version.
            if let Ok(r) = client.join(ReceiverStream::new(rx)).await {
                let mut inbound = r.into_inner();
                while let Ok(Some(_)) = inbound.message().await {}
            }
        });
    }
    let after = rss_kb(pid);
    assert!(
        after < before + 20 * 1024,
        "RSS {before} kB before four 15 MB messages, {after} kB after"
    );
    assert!(c.log().contains("refused"), "{}", c.log());
}
