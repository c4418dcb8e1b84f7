//! The client against in-process fake coordinators (tonic on 127.0.0.1:0) that answer,
//! break, refuse or misbehave on a script, and log every request message they receive.

use super::session::{Broken, CHUNK_LINES};
use super::table::first_held;
use super::*;
use proto::transport::ClientConfig;
use proto::wire::clients_server::{Clients, ClientsServer};
use proto::{Method, Record, RecordError, Settings, Solved, Stop};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use tables::Position;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Code, Request, Response, Status};

/// What a fake coordinator does on one `Solve` stream.
#[derive(Clone, Copy, Debug)]
enum Script {
    /// Answers every line in order; ends the stream after End.
    Answer,
    /// Answers this many lines, then fails the stream with UNAVAILABLE.
    DropAfter(usize),
    /// Refuses the call.
    Refuse(Code, &'static str),
    /// On the first line: Progress with this proved-empty depth, then ends the stream
    /// without a record.
    ProgressThenEnd(u32),
    /// Answers each line with the next line's id.
    WrongId,
}

/// The request messages of each stream, in order.
type Log = Arc<Mutex<Vec<Vec<w::SolveRequest>>>>;

struct Fake {
    /// One script per stream, in order; later streams answer.
    scripts: Vec<Script>,
    log: Log,
    /// The tables its one worker holds (Status).
    tables: Vec<String>,
}

/// The record a real coordinator would send for `l`: its parse error, or solved by the
/// inverse of its scramble.
fn record_for(l: &w::Line) -> w::Record {
    let outcome = if l.not_utf8 {
        Err(RecordError::NotUtf8)
    } else {
        match Position::parse(&l.text) {
            Err(e) => Err(RecordError::from(e)),
            Ok(_) => {
                let moves = tables::parse_moves(&l.text).expect("test lines are scrambles");
                let sol = tables::notation::invert_moves(&moves);
                Ok(Solved {
                    depth_exhausted: (sol.len() as u8).checked_sub(1),
                    solutions: vec![sol],
                    optimal: true,
                    nodes: 5,
                    lookups: 3,
                    micros: 250,
                    stop: Stop::Completed,
                })
            }
        }
    };
    w::Record::from(&Record {
        line: l.id,
        input: l.text.clone(),
        outcome,
    })
}

fn records(rs: Vec<w::Record>) -> w::SolveResponse {
    w::SolveResponse {
        msg: Some(w::solve_response::Msg::Records(w::Records { records: rs })),
    }
}

#[tonic::async_trait]
impl Clients for Fake {
    type SolveStream = ReceiverStream<Result<w::SolveResponse, Status>>;

    async fn solve(
        &self,
        req: Request<tonic::Streaming<w::SolveRequest>>,
    ) -> Result<Response<Self::SolveStream>, Status> {
        let n = {
            let mut log = self.log.lock().unwrap();
            log.push(Vec::new());
            log.len() - 1
        };
        let script = self.scripts.get(n).copied().unwrap_or(Script::Answer);
        if let Script::Refuse(code, msg) = script {
            return Err(Status::new(code, msg));
        }
        let mut incoming = req.into_inner();
        let (tx, rx) = mpsc::channel(16);
        let log = Arc::clone(&self.log);
        tokio::spawn(async move {
            let mut answered = 0;
            while let Ok(Some(m)) = incoming.message().await {
                log.lock().unwrap()[n].push(m.clone());
                match m.msg {
                    Some(w::solve_request::Msg::Lines(ls)) => {
                        for l in ls.lines {
                            let rec = match script {
                                Script::DropAfter(k) if answered == k => {
                                    let _ = tx.send(Err(Status::unavailable("restarting"))).await;
                                    return;
                                }
                                Script::ProgressThenEnd(e) => {
                                    let p = w::Progress {
                                        depth: e + 1,
                                        proved_empty: Some(e),
                                        nodes: 123_456,
                                        workers_busy: 3,
                                        workers: 4,
                                        ..Default::default()
                                    };
                                    let msg = w::solve_response::Msg::Progress(p);
                                    let _ = tx.send(Ok(w::SolveResponse { msg: Some(msg) })).await;
                                    return;
                                }
                                Script::WrongId => {
                                    let mut r = record_for(&l);
                                    r.id += 1;
                                    r
                                }
                                _ => record_for(&l),
                            };
                            if tx.send(Ok(records(vec![rec]))).await.is_err() {
                                return;
                            }
                            answered += 1;
                        }
                    }
                    Some(w::solve_request::Msg::End(_)) => return,
                    _ => {}
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn status(
        &self,
        _: Request<w::StatusRequest>,
    ) -> Result<Response<w::ClusterStatus>, Status> {
        Ok(Response::new(w::ClusterStatus {
            workers: vec![w::WorkerStatus {
                executor: 1,
                worker_id: "fake".into(),
                threads: 4,
                tables: self.tables.clone(),
                ..Default::default()
            }],
            ..Default::default()
        }))
    }
}

/// A fake coordinator on `listener`, served by the returned runtime (dropping it stops
/// the server), with its log.
fn serve_on(
    rt: &tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    scripts: Vec<Script>,
    tables: &[&str],
) -> Log {
    let log = Log::default();
    let fake = Fake {
        scripts,
        log: Arc::clone(&log),
        tables: tables.iter().map(|t| t.to_string()).collect(),
    };
    rt.spawn(
        tonic::transport::Server::builder()
            .add_service(ClientsServer::new(fake))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    log
}

fn serve(scripts: Vec<Script>, tables: &[&str]) -> (tokio::runtime::Runtime, String, Log) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = serve_on(&rt, listener, scripts, tables);
    (rt, url, log)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cubeswarm-client-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn options(url: &str, work: Positions, output: Option<PathBuf>) -> Options {
    Options {
        client: ClientConfig::new(url),
        settings: Settings {
            method: Method::TwoPhase,
            ..Settings::default()
        },
        table: TableChoice::Named("twophase".into()),
        work,
        output: output.map_or(Output::Stdout, Output::File),
        format: Format::Jsonl,
        resume: false,
        connect_timeout: Some(Duration::from_secs(30)),
        wait_for_workers: None,
    }
}

/// Runs the client on its own thread; a hang fails the test instead of blocking it.
fn run_within(opts: Options) -> Result<Summary, ClientError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run(&opts, &mut Silent));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the client finished within a minute")
}

const MOVES: [&str; 18] = [
    "U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'", "D", "D2", "D'", "L", "L2", "L'", "B", "B2",
    "B'",
];

/// An input of `n` lines: scrambles, with comments, blanks, a bad move, a line that is not
/// UTF-8 and a CRLF line; and the ids (line numbers) that are positions.
fn write_input(path: &Path, n: usize) -> Vec<u64> {
    let mut data = Vec::new();
    let mut ids = Vec::new();
    for i in 0..n {
        let line: Vec<u8> = match i {
            0 => b"# a comment".to_vec(),
            1 => b"U'".to_vec(),
            2 => b"   ".to_vec(),
            3 => b"R Q2".to_vec(),
            4 => b"R \xff U".to_vec(),
            5 => b" F R\r".to_vec(),
            _ if i % 50 == 0 => b"".to_vec(),
            _ => format!(
                "{} {} {}",
                MOVES[i % 18],
                MOVES[(i / 18) % 18],
                MOVES[(i / 7) % 18]
            )
            .into_bytes(),
        };
        let skip = matches!(std::str::from_utf8(&line), Ok(t) if t.trim().is_empty() || t.trim().starts_with('#'));
        if !skip {
            ids.push(i as u64 + 1);
        }
        data.extend_from_slice(&line);
        data.push(b'\n');
    }
    std::fs::write(path, data).unwrap();
    ids
}

/// The ids of a JSONL output, in order, with the values of each line.
fn output_ids(path: &Path) -> (Vec<u64>, Vec<serde_json::Value>) {
    let text = std::fs::read_to_string(path).unwrap();
    let values: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids = values.iter().map(|v| v["id"].as_u64().unwrap()).collect();
    (ids, values)
}

/// The line ids a stream received, in order, and its messages' kinds ('O', 'L', 'E').
fn sent(session: &[w::SolveRequest]) -> (Vec<u64>, String) {
    let mut ids = Vec::new();
    let mut kinds = String::new();
    for m in session {
        match &m.msg {
            Some(w::solve_request::Msg::Open(_)) => kinds.push('O'),
            Some(w::solve_request::Msg::Lines(ls)) => {
                kinds.push('L');
                ids.extend(ls.lines.iter().map(|l| l.id));
            }
            Some(w::solve_request::Msg::End(_)) => kinds.push('E'),
            None => kinds.push('?'),
        }
    }
    (ids, kinds)
}

#[test]
fn a_scramble_set_comes_back_whole_in_input_order() {
    let (_rt, url, log) = serve(vec![Script::Answer], &[]);
    let dir = scratch("answer");
    let input = dir.join("in.txt");
    let out = dir.join("out.jsonl");
    let ids = write_input(&input, 700);
    let s = run_within(options(&url, Positions::File(input), Some(out.clone()))).unwrap();
    assert_eq!(s.records, ids.len() as u64);
    assert_eq!(s.errors, 2, "the bad move and the line that is not UTF-8");
    assert_eq!(s.reconnections, 0);
    let (got, values) = output_ids(&out);
    assert_eq!(got, ids);
    assert_eq!(values[0]["input"], "U'");
    assert_eq!(values[0]["solution"], "U");
    assert_eq!(values[0]["length"], 1);
    assert_eq!(values[1]["input"], "R Q2");
    assert!(values[1]["error"].as_str().unwrap().contains("Q2"));
    assert_eq!(values[2]["error"], "line is not valid UTF-8");
    assert_eq!(values[3]["input"], "F R");
    assert_eq!(values[3]["solution"], "R' F'");
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 1);
    let (sent_ids, kinds) = sent(&log[0]);
    assert_eq!(sent_ids, ids, "every line once, ids strictly increasing");
    assert!(kinds.starts_with("OL") && kinds.ends_with("LE"), "{kinds}");
    assert!(
        kinds.len() >= 2 + ids.len().div_ceil(CHUNK_LINES),
        "lines go in chunks of at most {CHUNK_LINES}: {kinds}"
    );
    let w::solve_request::Msg::Open(open) = log[0][0].msg.clone().unwrap() else {
        panic!("Open first")
    };
    assert_eq!(open.table, "twophase");
    let settings = Settings::try_from(open.settings.unwrap()).unwrap();
    assert_eq!(settings.method, Method::TwoPhase);
    // The non-UTF-8 line is sent as such.
    let five = log[0]
        .iter()
        .filter_map(|m| match &m.msg {
            Some(w::solve_request::Msg::Lines(ls)) => ls.lines.iter().find(|l| l.id == 5),
            _ => None,
        })
        .next()
        .unwrap();
    assert!(five.not_utf8 && five.text.is_empty());
}

#[test]
fn a_lost_coordinator_gets_exactly_the_lines_without_a_record_again() {
    const K: usize = 300;
    let (_rt, url, log) = serve(vec![Script::DropAfter(K)], &[]);
    let dir = scratch("drop");
    let input = dir.join("in.txt");
    let out = dir.join("out.jsonl");
    let ids = write_input(&input, 1000);
    let s = run_within(options(&url, Positions::File(input), Some(out.clone()))).unwrap();
    assert_eq!(s.reconnections, 1);
    assert_eq!(s.records, ids.len() as u64);
    let (got, _) = output_ids(&out);
    assert_eq!(got, ids, "every id exactly once, in order");
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 2);
    let (first_ids, _) = sent(&log[0]);
    assert!(
        first_ids.len() > K,
        "the first stream had lines beyond its records"
    );
    assert_eq!(first_ids[..], ids[..first_ids.len()]);
    // The second stream: Open again, then the lines without a record (first the pending
    // ones, then the rest of the input), none with a record already.
    let (again, kinds) = sent(&log[1]);
    assert!(kinds.starts_with("OL") && kinds.ends_with('E'), "{kinds}");
    assert_eq!(log[1][0], log[0][0], "the same Open");
    assert_eq!(again[..], ids[K..]);
}

#[test]
fn a_refused_client_stops_with_the_coordinators_message() {
    let (_rt, url, log) = serve(
        vec![Script::Refuse(
            Code::Unauthenticated,
            "missing or wrong token",
        )],
        &[],
    );
    let dir = scratch("refused");
    let input = dir.join("in.txt");
    write_input(&input, 20);
    let e = run_within(options(
        &url,
        Positions::File(input),
        Some(dir.join("out.jsonl")),
    ))
    .unwrap_err();
    let text = format!("{e:#}");
    assert!(
        text.contains("coordinator refused the request: missing or wrong token"),
        "{text}"
    );
    assert_eq!(log.lock().unwrap().len(), 1, "no retry");
    // Same for a request the coordinator finds invalid, on one position.
    let (_rt, url, _) = serve(
        vec![Script::Refuse(
            Code::InvalidArgument,
            "no worker may hold table x",
        )],
        &[],
    );
    let e = run_within(options(&url, Positions::One("R U".into()), None)).unwrap_err();
    assert_eq!(
        format!("{e:#}"),
        "coordinator refused the request: no worker may hold table x"
    );
}

#[test]
fn one_scramble_sent_again_carries_the_depth_proved_empty() {
    let (_rt, url, log) = serve(vec![Script::ProgressThenEnd(13)], &[]);
    let dir = scratch("single");
    let out = dir.join("out.txt");
    let mut o = options(&url, Positions::One("R U R'".into()), Some(out.clone()));
    o.format = Format::Text;
    let s = run_within(o).unwrap();
    assert_eq!((s.records, s.reconnections), (1, 1));
    // Exactly what a local run writes for one position.
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "1: R U' R' (3 moves, optimal)\n"
    );
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 2);
    let line = |n: usize| {
        let Some(w::solve_request::Msg::Lines(ls)) = log[n][1].msg.clone() else {
            panic!("Lines after Open")
        };
        assert_eq!(ls.lines.len(), 1);
        ls.lines[0].clone()
    };
    assert_eq!(line(0).proved_empty, None);
    assert_eq!((line(1).id, line(1).text.as_str()), (1, "R U R'"));
    assert_eq!(line(1).proved_empty, Some(13));
}

#[test]
fn resume_sends_only_what_the_journal_lacks() {
    let (_rt, url, log) = serve(vec![Script::Answer], &[]);
    let dir = scratch("resume");
    let input = dir.join("in.txt");
    let out = dir.join("out.jsonl");
    let ids = write_input(&input, 120);
    // A previous run wrote records for the first 10 lines, then crashed inside the 11th.
    let settings = options(&url, Positions::One(String::new()), None).settings;
    let text = std::fs::read(&input).unwrap();
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let mut journal = String::new();
    for &id in &ids[..11] {
        let raw = lines[id as usize - 1];
        let l = w::Line {
            id,
            text: std::str::from_utf8(raw)
                .map(|t| t.trim().to_string())
                .unwrap_or_default(),
            proved_empty: None,
            not_utf8: std::str::from_utf8(raw).is_err(),
        };
        let rec = Record::try_from(record_for(&l)).unwrap();
        journal.push_str(&output::render(&rec, &settings, Format::Jsonl));
    }
    std::fs::write(&out, &journal[..journal.len() - 9]).unwrap();
    let mut o = options(&url, Positions::File(input), Some(out.clone()));
    o.resume = true;
    let s = run_within(o).unwrap();
    // The torn 11th record goes, and so does the 10th (the last whole one).
    assert_eq!(s.resumed, 9);
    assert_eq!(s.records, ids.len() as u64 - 9);
    let (got, _) = output_ids(&out);
    assert_eq!(got, ids, "each id once");
    let (sent_ids, _) = sent(&log.lock().unwrap()[0]);
    assert_eq!(sent_ids[..], ids[9..]);
}

#[test]
fn the_first_candidate_table_a_worker_holds_is_asked_for() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let candidates = names(&["h48h2k2", "h48h1k2", "h48h0k4", "h48h0k2"]);
    assert_eq!(
        first_held(&candidates, &names(&["h48h0k2", "h48h0k4"])),
        Some("h48h0k4")
    );
    assert_eq!(
        first_held(&candidates, &names(&["twophase", "nonsense"])),
        None
    );

    let dir = scratch("tables");
    let (_rt, url, log) = serve(vec![], &["twophase", "h48h0k4", "h48h1k2"]);
    let mut o = options(&url, Positions::One("U2".into()), Some(dir.join("out")));
    o.settings.method = Method::Optimal;
    o.table = TableChoice::FirstHeld(candidates.clone());
    run_within(o).unwrap();
    let w::solve_request::Msg::Open(open) = log.lock().unwrap()[0][0].msg.clone().unwrap() else {
        panic!("Open first")
    };
    assert_eq!(open.table, "h48h1k2");

    let (_rt, url, log) = serve(vec![], &["twophase"]);
    let mut o = options(&url, Positions::One("U2".into()), None);
    o.settings.method = Method::Optimal;
    o.table = TableChoice::FirstHeld(candidates);
    let e = run_within(o).unwrap_err();
    assert!(e.to_string().contains("holds an H48 table"), "{e}");
    assert!(log.lock().unwrap().is_empty(), "no request without a table");
}

#[test]
fn records_out_of_order_are_a_protocol_violation() {
    let (_rt, url, log) = serve(vec![Script::WrongId], &[]);
    let dir = scratch("wrong");
    let input = dir.join("in.txt");
    write_input(&input, 10);
    let e = run_within(options(&url, Positions::File(input), Some(dir.join("o")))).unwrap_err();
    let text = format!("{e:#}");
    assert!(text.contains("protocol violation"), "{text}");
    assert!(text.contains("record for line 3"), "{text}");
    assert_eq!(log.lock().unwrap().len(), 1, "not retried");
}

#[test]
fn a_coordinator_that_is_not_up_yet_is_waited_for() {
    // A port nobody listens on yet.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let url = format!("http://{addr}");
    let (tx, rx) = std::sync::mpsc::channel();
    let (failed_tx, failed) = std::sync::mpsc::channel();
    let o = options(
        &url,
        Positions::One("B'".into()),
        Some(scratch("late").join("out")),
    );
    /// Says when the client has failed to connect and is about to try again.
    struct Retrying(std::sync::mpsc::Sender<()>);
    impl Observer for Retrying {
        fn notice(&mut self, notice: &Notice) {
            if matches!(notice, Notice::Reconnecting { .. }) {
                let _ = self.0.send(());
            }
        }
    }
    std::thread::spawn(move || {
        let _ = tx.send(run(&o, &mut Retrying(failed_tx)));
    });
    // The coordinator comes up once the client has found it down.
    failed
        .recv_timeout(Duration::from_secs(60))
        .expect("the client tried and failed first");
    let listener = rt.block_on(tokio::net::TcpListener::bind(addr)).unwrap();
    let log = serve_on(&rt, listener, vec![], &[]);
    let s = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("finished")
        .unwrap();
    assert!(s.reconnections >= 1, "{s:?}");
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn refusals_are_final_and_the_rest_is_retried() {
    let codes = [
        (Code::Unavailable, false),
        (Code::Unknown, false),
        (Code::Cancelled, false),
        (Code::Internal, false),
        (Code::Unauthenticated, true),
        (Code::PermissionDenied, true),
        (Code::InvalidArgument, true),
        (Code::FailedPrecondition, true),
        (Code::ResourceExhausted, true),
    ];
    for (code, fatal) in codes {
        let b = Broken::status(&Status::new(code, "m"));
        assert_eq!(matches!(b, Broken::Fatal(_)), fatal, "{code:?}");
    }
}

#[test]
fn no_worker_holding_the_table_is_final_and_the_wait_is_asked_for() {
    let (_rt, url, log) = serve(
        vec![Script::Refuse(
            Code::FailedPrecondition,
            "no connected worker holds table h48h0k4",
        )],
        &[],
    );
    let mut o = options(&url, Positions::One("R U".into()), None);
    o.table = TableChoice::Named("h48h0k4".into());
    o.settings.method = Method::Optimal;
    o.wait_for_workers = Some(Duration::from_millis(2500));
    let e = run_within(o).unwrap_err();
    assert_eq!(
        e.to_string(),
        "coordinator refused the request: no connected worker holds table h48h0k4"
    );
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 1, "not retried");
    // The refusal came at the call; the Open the fake logged is not there, so check the
    // Open sent on a stream that answers.
    drop(log);
    let (_rt, url, log) = serve(vec![Script::Answer], &[]);
    let mut o = options(&url, Positions::One("R U".into()), None);
    o.wait_for_workers = Some(Duration::from_millis(2500));
    run_within(o).unwrap();
    let w::solve_request::Msg::Open(open) = log.lock().unwrap()[0][0].msg.clone().unwrap() else {
        panic!("Open first")
    };
    assert_eq!(open.wait_for_workers_ms, Some(2500));
    let (_rt, url, log) = serve(vec![Script::Answer], &[]);
    run_within(options(&url, Positions::One("R U".into()), None)).unwrap();
    let w::solve_request::Msg::Open(open) = log.lock().unwrap()[0][0].msg.clone().unwrap() else {
        panic!("Open first")
    };
    assert_eq!(open.wait_for_workers_ms, None, "no wait unless asked");
}

#[test]
fn a_coordinator_that_never_answers_is_given_up_within_the_bound() {
    // Accepts connections (the kernel's backlog) and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let dir = scratch("silent");
    let input = dir.join("in.txt");
    write_input(&input, 20);
    let mut o = options(&url, Positions::File(input), Some(dir.join("out.jsonl")));
    o.connect_timeout = Some(Duration::from_millis(800));
    let e = run_within(o).unwrap_err();
    assert!(matches!(e, ClientError::GaveUp { .. }), "{e}");
    // Given up at the bound, not a backoff step before it.
    if let ClientError::GaveUp { tried, bound, .. } = &e {
        assert!(tried >= bound, "gave up after {tried:?} of {bound:?}");
    }
    let text = e.to_string();
    assert!(text.contains("without a working connection"), "{text}");
    assert!(text.contains(&format!("no answer from {url}")), "{text}");
    // The status call of a table choice is bounded the same way.
    let mut o = options(&url, Positions::One("R".into()), None);
    o.table = TableChoice::FirstHeld(vec!["h48h0k4".into()]);
    o.connect_timeout = Some(Duration::from_millis(500));
    let e = run_within(o).unwrap_err();
    assert!(matches!(e, ClientError::GaveUp { .. }), "{e}");
    drop(silent);
}

#[test]
fn resume_refuses_an_output_of_another_input_before_sending_anything() {
    let (_rt, url, log) = serve(vec![Script::Answer], &[]);
    let dir = scratch("resume-other");
    let first = dir.join("first.txt");
    let out = dir.join("out.jsonl");
    write_input(&first, 40);
    let s = run_within(options(
        &url,
        Positions::File(first.clone()),
        Some(out.clone()),
    ))
    .unwrap();
    assert_eq!(s.errors, 2);
    let before = std::fs::read_to_string(&out).unwrap();
    log.lock().unwrap().clear();
    // Another input: line 12 differs.
    let text = std::fs::read(&first).unwrap();
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    lines[11] = b"B2 D2";
    let other = dir.join("other.txt");
    std::fs::write(&other, lines.join(&b'\n')).unwrap();
    let mut o = options(&url, Positions::File(other), Some(out.clone()));
    o.resume = true;
    let e = run_within(o).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(
            e,
            ClientError::Journal(JournalError::InputDiffers { line: 12, .. })
        ),
        "{text}"
    );
    assert!(text.contains("is \"B2 D2\""), "{text}");
    assert!(log.lock().unwrap().is_empty(), "nothing sent");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        before,
        "nothing written"
    );
    // The same input resumes.
    let mut o = options(&url, Positions::File(first), Some(out.clone()));
    o.resume = true;
    let s = run_within(o).unwrap();
    assert_eq!(s.resumed + s.records, 38);
}

#[test]
fn no_message_is_over_the_limit_and_a_line_too_long_has_its_local_record() {
    let (_rt, url, log) = serve(vec![Script::Answer], &[]);
    let dir = scratch("long-lines");
    let input = dir.join("in.txt");
    // Many lines just under the length sent as it is (bad moves: the fake's solutions
    // stay short), then one far over a message.
    let medium = format!("{}Q", "R U ".repeat(outgoing::LINE_BYTES / 4 - 1));
    let long = "x".repeat(proto::MAX_MESSAGE_BYTES + 1);
    let mut text = format!("{medium}\n").repeat(300);
    text.push_str(&format!("{long}\nR U\n"));
    std::fs::write(&input, text).unwrap();
    let out = dir.join("out.jsonl");
    let s = run_within(options(&url, Positions::File(input), Some(out.clone()))).unwrap();
    assert_eq!((s.records, s.errors), (302, 301));
    let (ids, values) = output_ids(&out);
    assert_eq!(ids, (1..=302).collect::<Vec<u64>>());
    // The long line's record is the one a local run writes (past the bound on a
    // position's text, its text is not kept); it was never sent.
    let want = Position::parse(&long).unwrap_err().to_string();
    assert_eq!(values[300]["error"].as_str(), Some(want.as_str()));
    assert_eq!(values[300]["input"].as_str(), Some(""));
    let log = log.lock().unwrap();
    let (sent_ids, _) = sent(&log[0]);
    assert_eq!(sent_ids.len(), 301);
    assert!(!sent_ids.contains(&301));
    for m in log.iter().flatten() {
        let size = prost::Message::encoded_len(m);
        assert!(
            size <= 3 * outgoing::LINE_BYTES,
            "a message of {size} bytes"
        );
    }
}
