//! The executor: `run_job` for batch and subtree jobs (typed errors, order, budgets,
//! subtree accounting) and the `JobRunner` pool (results once per job, cancellation by
//! id, subtree jobs shared between its threads). Every solution returned is checked to
//! solve its position.
//!
//! Run: `cargo test -p cubeswarm-worker --test it runner::` (uses the cached test tables).

use crate::h48_common;

use proto::{
    BatchItem, Internal, Job, JobError, JobId, JobOutput, JobResult, Method, PositionError,
    PositionResult, Settings, SettingsError, Stop, SubtreeResult, SubtreeWork, Work,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tables::canonical::sequences;
use tables::progress::Silent;
use tables::{parse_moves, Cube, Move, Position, SplitMix64};
use worker::{
    catalog, run_job, run_job_split, run_job_with, Engines, Error, JobRunner, PieceCursor,
    RunnerOptions, ShareEvent, StopToken, TableMemory,
};

const SUPERFLIP: &str = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";

/// The test tables directory, with h48h0k4 and the two-phase tables in it.
fn dir() -> PathBuf {
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

/// h48h0k4 and twophase, opened once (straight from the maps: no private copies).
pub(crate) fn engines() -> Arc<Engines> {
    static E: OnceLock<Arc<Engines>> = OnceLock::new();
    E.get_or_init(|| {
        Arc::new(
            Engines::open(&dir(), &["h48h0k4", "twophase"], TableMemory::Mapped)
                .expect("opening the test tables"),
        )
    })
    .clone()
}

fn position(moves: &str) -> Position {
    Position::parse(moves).unwrap()
}

fn batch(id: u64, table: &str, settings: Settings, positions: &[Position]) -> Job {
    Job {
        id: JobId(id),
        attempt: 1,
        table: table.into(),
        work: Work::Batch {
            settings,
            items: positions
                .iter()
                .enumerate()
                .map(|(i, &position)| BatchItem {
                    line: 100 + i as u64,
                    position,
                })
                .collect(),
        },
    }
}

pub(crate) fn subtrees(id: u64, work: SubtreeWork) -> Job {
    Job {
        id: JobId(id),
        attempt: 1,
        table: "h48h0k4".into(),
        work: Work::Subtrees(work),
    }
}

pub(crate) fn subtree_work(p: Position, depth: u8, prefixes: Vec<Vec<Move>>) -> SubtreeWork {
    SubtreeWork {
        position: p,
        depth,
        prefixes,
        max_solutions: None,
        time_limit_ms: None,
        pieces: 0,
        split: false,
    }
}

fn two_phase(max_length: u8) -> Settings {
    Settings {
        method: Method::TwoPhase,
        max_length,
        ..Settings::default()
    }
}

pub(crate) fn run(job: &Job) -> JobResult {
    run_job(&engines(), job, &StopToken::new())
}

fn batch_output(r: JobResult) -> Vec<PositionResult> {
    match r.output {
        Ok(JobOutput::Batch(v)) => v
            .into_iter()
            .map(|a| a.unwrap_or_else(|e| panic!("position failed: {e:?}")))
            .collect(),
        other => panic!("expected a batch output, got {other:?}"),
    }
}

pub(crate) fn subtree_output(r: JobResult) -> Vec<SubtreeResult> {
    match r.output {
        Ok(JobOutput::Subtrees(v)) => v,
        other => panic!("expected a subtree output, got {other:?}"),
    }
}

/// Every subtree result names a prefix of `work`, once, and each of its solutions has the
/// job's length, begins with that prefix and solves the position.
fn check_subtrees(work: &SubtreeWork, results: &[SubtreeResult]) {
    let mut seen = BTreeSet::new();
    for r in results {
        assert!(seen.insert(r.prefix), "prefix {} twice", r.prefix);
        let prefix = &work.prefixes[r.prefix as usize];
        for s in &r.solutions {
            assert_eq!(s.len(), usize::from(work.depth));
            assert!(s.starts_with(prefix), "{s:?} under {prefix:?}");
            assert!(work.position.is_solved_by(s), "{s:?}");
        }
    }
}

#[test]
fn executor_jobs_on_a_table_they_cannot_use_get_the_typed_error() {
    let p = position("R U R' U'");
    let r = run(&batch(7, "h48h5k2", Settings::default(), &[p]));
    assert_eq!((r.id, r.attempt), (JobId(7), 1));
    assert_eq!(
        r.output,
        Err(JobError::MissingTable {
            name: "h48h5k2".into()
        })
    );
    assert_eq!(
        run(&batch(1, "no such table", Settings::default(), &[p])).output,
        Err(JobError::MissingTable {
            name: "no such table".into()
        })
    );
    assert_eq!(
        run(&batch(1, "h48h0k4", two_phase(20), &[p])).output,
        Err(JobError::WrongTable {
            name: "h48h0k4".into(),
            method: Method::TwoPhase
        })
    );
    assert_eq!(
        run(&batch(1, "twophase", Settings::default(), &[p])).output,
        Err(JobError::WrongTable {
            name: "twophase".into(),
            method: Method::Optimal
        })
    );
    let mut on_twophase = subtrees(1, subtree_work(p, 4, sequences(1)));
    on_twophase.table = "twophase".into();
    assert_eq!(
        run(&on_twophase).output,
        Err(JobError::WrongTable {
            name: "twophase".into(),
            method: Method::Optimal
        })
    );
}

#[test]
fn executor_invalid_settings_are_a_job_error() {
    let p = position("R U R' U'");
    let bad = Settings {
        min_length: 5,
        max_length: 4,
        ..Settings::default()
    };
    assert!(matches!(
        run(&batch(1, "h48h0k4", bad, &[p])).output,
        Err(JobError::InvalidSettings(SettingsError::MinAboveMax {
            min: 5,
            max: 4
        }))
    ));
    let all = Settings {
        max_solutions: None,
        ..two_phase(20)
    };
    assert!(matches!(
        run(&batch(1, "twophase", all, &[p])).output,
        Err(JobError::InvalidSettings(
            SettingsError::EverySolutionTwoPhase
        ))
    ));
    assert!(matches!(
        run(&subtrees(1, subtree_work(p, 31, sequences(1)))).output,
        Err(JobError::InvalidSettings(SettingsError::MaxLength {
            value: 31
        }))
    ));
    let none = SubtreeWork {
        max_solutions: Some(0),
        ..subtree_work(p, 4, sequences(1))
    };
    assert!(matches!(
        run(&subtrees(1, none)).output,
        Err(JobError::InvalidSettings(SettingsError::NoSolutions))
    ));
}

#[test]
fn executor_engines_refuse_unknown_and_missing_tables() {
    assert!(matches!(
        Engines::open(&dir(), &["h48h99k2"], TableMemory::Mapped),
        Err(Error::UnknownTable(_))
    ));
    let empty = dir().join("definitely-empty-dir");
    assert!(matches!(
        Engines::open(&empty, &["h48h0k4"], TableMemory::Mapped),
        Err(Error::TableNotFound { .. })
    ));
    assert!(matches!(
        Engines::open(&empty, &["twophase"], TableMemory::Mapped),
        Err(Error::Table(_))
    ));
    assert_eq!(engines().names(), ["h48h0k4", "twophase"]);
}

#[test]
fn executor_batch_items_are_solved_in_order_with_their_line_ids() {
    let mut rng = SplitMix64::new(11);
    let positions: Vec<Position> = (0..6)
        .map(|_| Position::new(Cube::random(&mut rng)).unwrap())
        .collect();
    let out = batch_output(run(&batch(3, "twophase", two_phase(20), &positions)));
    assert_eq!(out.len(), positions.len());
    for (i, (r, p)) in out.iter().zip(&positions).enumerate() {
        assert_eq!(r.line, 100 + i as u64);
        assert_eq!(r.stop, Stop::Completed);
        assert_eq!(r.solutions.len(), 1);
        assert!(r.solutions[0].len() <= 20 && p.is_solved_by(&r.solutions[0]));
    }
    let short = [position("R U R' U'"), position("F2 D L' B")];
    let out = batch_output(run(&batch(4, "h48h0k4", Settings::default(), &short)));
    assert_eq!(out.len(), 2);
    for (r, p) in out.iter().zip(&short) {
        assert!(r.optimal && r.solutions[0].len() <= 4 && p.is_solved_by(&r.solutions[0]));
        assert_eq!(r.stop, Stop::Completed);
        assert_eq!(r.depth_exhausted, Some(r.solutions[0].len() as u8 - 1));
    }
}

/// A subtree job over every canonical 2-move prefix at the optimal depth finds every
/// optimal solution (the same as the whole-tree search), each verified, every subtree
/// searched whole; its nodes are the sum of single-prefix jobs' nodes; one depth less,
/// nothing; and asked for one solution, it returns exactly one.
#[test]
fn executor_subtree_jobs_split_a_depth_without_losing_anything() {
    let (c, p, d) = twelve_mover();
    let solver = h48_common::h0k4();
    let work = subtree_work(p, d, sequences(2));
    let results = subtree_output(run(&subtrees(1, work.clone())));
    assert_eq!(results.len(), 243);
    check_subtrees(&work, &results);
    assert!(results.iter().all(|r| r.stop == Stop::Exhausted));
    let found: BTreeSet<Vec<Move>> = results.iter().flat_map(|r| r.solutions.clone()).collect();
    assert!(!found.is_empty());
    let whole = solver.search(&c, &[], d, usize::MAX, &StopToken::new());
    assert_eq!(found, whole.solutions.into_iter().collect());
    let mut single_nodes = 0;
    for (i, prefix) in work.prefixes.iter().enumerate() {
        let one = subtree_work(p, d, vec![prefix.clone()]);
        let r = subtree_output(run(&subtrees(2, one)));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].prefix, 0);
        assert_eq!(r[0].solutions, results[i].solutions, "prefix {prefix:?}");
        single_nodes += r[0].nodes;
    }
    assert_eq!(results.iter().map(|r| r.nodes).sum::<u64>(), single_nodes);

    let shorter = subtree_work(p, d - 1, sequences(2));
    let r = subtree_output(run(&subtrees(3, shorter)));
    assert_eq!(r.len(), 243);
    assert!(r
        .iter()
        .all(|r| r.solutions.is_empty() && r.stop == Stop::Exhausted));

    let first = SubtreeWork {
        max_solutions: Some(1),
        ..work.clone()
    };
    let r = subtree_output(run(&subtrees(4, first.clone())));
    check_subtrees(&first, &r);
    assert_eq!(r.iter().map(|r| r.solutions.len()).sum::<usize>(), 1);
    let holder = r.iter().find(|r| !r.solutions.is_empty()).unwrap();
    assert_eq!(holder.stop, Stop::Completed);
}

/// A budget of 1 ms on positions that need far longer: the reason is the time limit.
#[test]
fn executor_a_deadline_of_one_millisecond_is_a_time_limit() {
    let hard = position(SUPERFLIP);
    let optimal = Settings {
        time_limit_ms: Some(1),
        ..Settings::default()
    };
    let out = batch_output(run(&batch(1, "h48h0k4", optimal, &[hard, hard])));
    assert_eq!(out.len(), 2, "a time limit stops the item, not the job");
    for r in &out {
        assert_eq!(r.stop, Stop::TimeLimit);
        assert!(r.solutions.is_empty() && !r.optimal);
    }
    let random = Position::new(Cube::random(&mut SplitMix64::new(4))).unwrap();
    let tight = Settings {
        time_limit_ms: Some(1),
        ..two_phase(14)
    };
    let out = batch_output(run(&batch(2, "twophase", tight, &[random])));
    assert_eq!(out[0].stop, Stop::TimeLimit);
    let work = SubtreeWork {
        time_limit_ms: Some(1),
        ..subtree_work(hard, 19, sequences(2))
    };
    let r = subtree_output(run(&subtrees(3, work.clone())));
    check_subtrees(&work, &r);
    assert!(
        r.len() < 243,
        "prefixes are not handed out after the deadline"
    );
    // The subtrees in flight stopped on the deadline (one may have been empty at once).
    assert!(
        r.iter()
            .all(|r| r.stop == Stop::TimeLimit || r.stop == Stop::Exhausted),
        "{r:?}"
    );
    assert!(r.iter().all(|r| r.solutions.is_empty()));
}

/// An executor whose results arrive on a channel.
fn executor(threads: usize) -> (JobRunner, mpsc::Receiver<JobResult>) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let sink = Arc::new(move |r: JobResult| {
        if let Ok(tx) = tx.lock() {
            let _ = tx.send(r);
        }
    });
    (JobRunner::new(threads, engines(), sink).unwrap(), rx)
}

const WAIT: Duration = Duration::from_secs(600);

#[test]
fn executor_runs_every_job_once_and_reports_each() {
    fn shareable<T: Send + Sync>(_: &T) {}
    let (ex, rx) = executor(2);
    shareable(&ex);
    assert_eq!(ex.threads(), 2);
    assert_eq!(ex.tables(), ["h48h0k4", "twophase"]);
    let mut rng = SplitMix64::new(5);
    let mut expected = BTreeSet::new();
    for id in 0..6u64 {
        let positions: Vec<Position> = (0..3)
            .map(|_| Position::new(Cube::random(&mut rng)).unwrap())
            .collect();
        let table = if id == 3 { "missing" } else { "twophase" };
        ex.submit(batch(id, table, two_phase(20), &positions));
        expected.insert(JobId(id));
    }
    let mut seen = BTreeSet::new();
    for _ in 0..6 {
        let r = rx.recv_timeout(WAIT).expect("a result");
        assert!(seen.insert(r.id), "{} twice", r.id);
        if r.id == JobId(3) {
            assert!(matches!(r.output, Err(JobError::MissingTable { .. })));
        } else {
            assert_eq!(batch_output(r).len(), 3);
        }
    }
    assert_eq!(seen, expected);
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
    assert_eq!(ex.pending(), 0);
    assert!(!ex.cancel(JobId(1)), "finished jobs are forgotten");
}

/// `JobRunner::replace_engines`: the same tables in other memory replace the engines for
/// the jobs that start afterwards (the executor lets go of the old ones), other tables
/// are refused, and jobs solve as before.
#[test]
fn replaced_engines_serve_later_jobs_and_the_old_ones_are_let_go() {
    let first =
        Arc::new(Engines::open(&dir(), &["h48h0k4", "twophase"], TableMemory::Mapped).unwrap());
    let (tx, rx) = mpsc::channel();
    let sink: worker::ResultSink = Arc::new(move |r| {
        let _ = tx.send(r);
    });
    let ex = JobRunner::new(1, Arc::clone(&first), sink).unwrap();
    assert_eq!(Arc::strong_count(&first), 2);
    let only_h0 = Arc::new(Engines::open(&dir(), &["h48h0k4"], TableMemory::Mapped).unwrap());
    assert!(!ex.replace_engines(only_h0), "other tables are refused");
    assert_eq!(Arc::strong_count(&first), 2);
    let copy =
        Arc::new(Engines::open(&dir(), &["h48h0k4", "twophase"], TableMemory::HugePages).unwrap());
    assert!(ex.replace_engines(Arc::clone(&copy)));
    assert_eq!(
        Arc::strong_count(&first),
        1,
        "the executor holds the old engines no more"
    );
    let p = position("R U2 F' L D B2 R' U");
    ex.submit(batch(1, "h48h0k4", Settings::default(), &[p]));
    let r = rx.recv_timeout(WAIT).expect("a result");
    let got = batch_output(r);
    let solution = &got[0].solutions[0];
    assert!(p.is_solved_by(solution));
    assert!(solution.len() <= 8);
    assert_eq!(ex.tables(), ["h48h0k4", "twophase"]);
}

/// `JobRunner::cancel` stops a running job, which still sends what it has, each started
/// part stopped with `Stop::Cancelled`.
#[test]
fn executor_cancel_stops_a_running_job_which_still_reports() {
    let (ex, rx) = executor(1);
    let hard = position(SUPERFLIP);
    // The cancel must reach the job once it has started: wait longer each time it came
    // too early (the job then reports no item at all).
    let mut wait = Duration::from_millis(200);
    let items = loop {
        ex.submit(batch(1, "h48h0k4", Settings::default(), &[hard, hard]));
        std::thread::sleep(wait);
        assert_eq!(ex.pending(), 1);
        assert!(ex.cancel(JobId(1)));
        let r = rx.recv_timeout(WAIT).expect("a result after the cancel");
        assert_eq!(r.id, JobId(1));
        let items = batch_output(r);
        if !items.is_empty() {
            break items;
        }
        wait *= 2;
    };
    assert_eq!(items.len(), 1, "the item not started is not reported");
    assert_eq!(items[0].stop, Stop::Cancelled);
    assert!(items[0].solutions.is_empty());
    assert_eq!(ex.pending(), 0);

    // A subtree job, stopped by cancel_all.
    let work = subtree_work(hard, 18, sequences(2));
    ex.submit(subtrees(2, work.clone()));
    std::thread::sleep(Duration::from_millis(300));
    ex.cancel_all();
    let r = subtree_output(rx.recv_timeout(WAIT).expect("a result after the cancel"));
    check_subtrees(&work, &r);
    assert!(r.len() < 243);
    assert!(r.iter().all(|r| r.solutions.is_empty()));
    assert!(r
        .iter()
        .all(|r| r.stop == Stop::Cancelled || r.stop == Stop::Exhausted));
    assert!(
        r.is_empty() || r.iter().any(|r| r.stop == Stop::Cancelled),
        "the subtrees in flight say they were cancelled: {r:?}"
    );
}

#[test]
fn executor_counts_a_running_jobs_nodes_as_its_subtrees_finish() {
    let (ex, rx) = executor(1);
    // Superflip's 43,254 4-move subtrees at depth 15: each is quick, all of them far more
    // work than this test waits for.
    let work = subtree_work(position(SUPERFLIP), 15, sequences(4));
    assert_eq!(ex.nodes_so_far(JobId(3)), None, "not submitted yet");
    ex.submit(subtrees(3, work.clone()));
    // Some subtrees finish long before the job does: their nodes show while it runs.
    let seen = loop {
        if let Some(n) = ex.nodes_so_far(JobId(3)).filter(|&n| n > 0) {
            break n;
        }
        assert!(
            rx.try_recv().is_err(),
            "the job ended before it reported any node"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(ex.cancel(JobId(3)));
    let r = subtree_output(rx.recv_timeout(WAIT).expect("a result after the cancel"));
    check_subtrees(&work, &r);
    let total: u64 = r.iter().map(|s| s.nodes).sum();
    assert!(
        total >= seen,
        "the result counts at least what was reported: {total} < {seen}"
    );
    assert_eq!(
        ex.nodes_so_far(JobId(3)),
        None,
        "a finished job is forgotten"
    );
}

/// Options whose seam panics on `target`.
fn panicking_on(target: Position) -> RunnerOptions {
    RunnerOptions {
        before_position: Some(worker::failpoint::panic_on(target)),
        ..RunnerOptions::default()
    }
}

fn is_panic(e: &JobError) -> bool {
    matches!(e, JobError::Internal(Internal::Panic { message }) if message.contains("failpoint"))
}

#[test]
fn executor_a_panicking_position_costs_that_position_only() {
    let ps = [position("R U"), position("F2 D"), position("L B'")];
    let job = batch(1, "twophase", two_phase(20), &ps);
    let Work::Batch { items, .. } = &job.work else {
        panic!("a batch job")
    };
    let lines: Vec<u64> = items.iter().map(|i| i.line).collect();
    let r = run_job_with(
        &engines(),
        &job,
        &StopToken::new(),
        &AtomicU64::new(0),
        &panicking_on(ps[1]),
    );
    let Ok(JobOutput::Batch(answers)) = r.output else {
        panic!("expected a batch output, got {:?}", r.output)
    };
    assert_eq!(answers.len(), 3);
    match &answers[1] {
        Err(PositionError { line, error }) => {
            assert_eq!(*line, lines[1]);
            assert!(is_panic(error), "{error:?}");
            assert!(error
                .to_string()
                .starts_with("internal error: the search panicked"));
        }
        other => panic!("expected the panic of line 2, got {other:?}"),
    }
    for (i, a) in [(0, &answers[0]), (2, &answers[2])] {
        let r = a.as_ref().expect("the other positions are solved");
        assert_eq!(r.line, lines[i]);
        assert!(ps[i].is_solved_by(&r.solutions[0]));
    }
}

#[test]
fn executor_a_panicking_subtree_job_is_an_internal_error() {
    let p = position("R U R' U'");
    let job = subtrees(1, subtree_work(p, 4, sequences(1)));
    let r = run_job_with(
        &engines(),
        &job,
        &StopToken::new(),
        &AtomicU64::new(0),
        &panicking_on(p),
    );
    assert!(matches!(&r.output, Err(e) if is_panic(e)), "{:?}", r.output);
}

/// The pool sends a result for a job that panics (no lease is needed to finish its
/// lines), and keeps working afterwards.
#[test]
fn executor_pool_reports_a_panicking_job_and_goes_on() {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let sink = Arc::new(move |r: JobResult| {
        if let Ok(tx) = tx.lock() {
            let _ = tx.send(r);
        }
    });
    let bad = position("R U R' U'");
    let ex = JobRunner::with_options(1, engines(), sink, panicking_on(bad)).unwrap();
    ex.submit(subtrees(1, subtree_work(bad, 4, sequences(1))));
    ex.submit(batch(2, "twophase", two_phase(20), &[position("R2")]));
    let mut got: Vec<JobResult> = (0..2).map(|_| rx.recv_timeout(WAIT).unwrap()).collect();
    got.sort_by_key(|r| r.id);
    assert!(matches!(&got[0].output, Err(e) if is_panic(e)));
    assert_eq!(batch_output(got[1].clone())[0].solutions.len(), 1);
    assert_eq!(ex.pending(), 0);
}

#[test]
fn executor_job_errors_say_what_happened_once() {
    let cases = [
        (
            JobError::TableUnreadable {
                path: "/t/h48h0k4".into(),
                reason: "permission denied".into(),
            },
            "table file /t/h48h0k4 cannot be read: permission denied",
        ),
        (
            JobError::TableDamaged {
                path: "/t/cocsep".into(),
                reason: "truncated".into(),
            },
            "table file /t/cocsep is damaged: truncated",
        ),
        (
            JobError::Internal(Internal::Threads {
                reason: "no memory".into(),
            }),
            "internal error: cannot start the executor's threads: no memory",
        ),
        (
            JobError::Undecodable {
                reason: "job.work is missing".into(),
            },
            "the executor cannot decode the job: job.work is missing",
        ),
        (
            JobError::InvalidSettings(SettingsError::NoSolutions),
            "invalid settings: max_solutions must be at least 1",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
        assert!(std::error::Error::source(&e).is_none());
    }
}

/// A 12-move scramble: its cube, its position and its optimal length.
pub(crate) fn twelve_mover() -> (Cube, Position, u8) {
    let c = Cube::from_moves(&parse_moves("R U R' U' F2 D L' B D2 R' F U'").unwrap());
    let p = Position::new(c).unwrap();
    let d = h48_common::h0k4()
        .solve(
            &p,
            &Settings::default().validate().unwrap(),
            &StopToken::new(),
        )
        .unwrap()
        .solutions[0]
        .len() as u8;
    (c, p, d)
}

/// A subtree job searched as its pieces (one or two moves longer) finds what it finds
/// whole, prefix by prefix; one whose cursor stops at piece `k` (handed back from there)
/// answers for exactly the prefixes of its first `k` pieces, with the solutions in them.
#[test]
fn executor_subtree_pieces_find_what_whole_prefixes_find_and_a_hand_back_keeps_its_first_pieces() {
    let (_, p, d) = twelve_mover();
    let whole = subtree_output(run(&subtrees(1, subtree_work(p, d, sequences(2)))));
    for levels in 1..=2u8 {
        let work = SubtreeWork {
            pieces: levels,
            ..subtree_work(p, d, sequences(2))
        };
        let r = subtree_output(run(&subtrees(2, work.clone())));
        check_subtrees(&work, &r);
        assert_eq!(r.len(), whole.len());
        for (a, b) in r.iter().zip(&whole) {
            assert_eq!((a.prefix, &a.solutions), (b.prefix, &b.solutions));
            assert_eq!(a.stop, Stop::Exhausted);
        }
    }
    // Handed back from piece k: the pieces before k, in order, and nothing else.
    let work = SubtreeWork {
        pieces: 1,
        ..subtree_work(p, d, sequences(2))
    };
    let mut pieces: Vec<(usize, Vec<Move>)> = Vec::new();
    for (i, prefix) in work.prefixes.iter().enumerate() {
        proto::pieces::for_each_piece(prefix, 1, &mut |q| pieces.push((i, q.to_vec())));
    }
    let all: Vec<Vec<Move>> = whole.iter().flat_map(|r| r.solutions.clone()).collect();
    let job = subtrees(3, work.clone());
    for k in [
        0,
        1,
        7,
        100,
        pieces.len() / 2,
        pieces.len() - 1,
        pieces.len(),
    ] {
        let cursor = PieceCursor::handing_back_from(k as u32);
        let r = run_job_split(
            &engines(),
            &job,
            &StopToken::new(),
            &AtomicU64::new(0),
            &RunnerOptions::default(),
            &cursor,
        );
        let r = subtree_output(r);
        let owners: BTreeSet<u32> = pieces[..k].iter().map(|(i, _)| *i as u32).collect();
        let answered: BTreeSet<u32> = r.iter().map(|r| r.prefix).collect();
        assert_eq!(answered, owners, "handed back from piece {k}");
        let kept: BTreeSet<Vec<Move>> = (all.iter())
            .filter(|s| pieces[..k].iter().any(|(_, q)| s.starts_with(q)))
            .cloned()
            .collect();
        let found: BTreeSet<Vec<Move>> = r.iter().flat_map(|r| r.solutions.clone()).collect();
        assert_eq!(found, kept, "handed back from piece {k}");
    }
}

/// A pool's job asked to split hands back what it has not started: a job still queued
/// behind a busy thread hands back everything and then answers for nothing; a job not
/// held (ended, or never sent) is `None`; a batch job is never split.
#[test]
fn executor_split_of_a_queued_job_hands_back_everything() {
    let (tx, rx) = mpsc::channel();
    let sink: worker::ResultSink = Arc::new(move |r| {
        let _ = tx.send(r);
    });
    let exec = JobRunner::new(1, engines(), sink).unwrap();
    // A long job holds the one thread.
    let hard = position(SUPERFLIP);
    exec.submit(subtrees(1, subtree_work(hard, 20, sequences(2))));
    let queued = SubtreeWork {
        pieces: 1,
        ..subtree_work(hard, 20, sequences(1))
    };
    exec.submit(subtrees(2, queued));
    assert_eq!(exec.split(JobId(2), 1), Some((0, Vec::new())));
    // Asked again: the same answer.
    assert_eq!(exec.split(JobId(2), 1), Some((0, Vec::new())));
    assert_eq!(exec.split(JobId(2), 2), None, "another attempt is not held");
    assert_eq!(exec.split(JobId(9), 1), None, "never sent");
    exec.cancel(JobId(1));
    let mut got = Vec::new();
    while got.len() < 2 {
        got.push(
            rx.recv_timeout(Duration::from_secs(60))
                .expect("both jobs answer"),
        );
    }
    let second = got.into_iter().find(|r| r.id == JobId(2)).unwrap();
    assert_eq!(subtree_output(second), Vec::new());
    assert_eq!(exec.split(JobId(2), 1), None, "ended");
}

/// An executor of `threads` threads, sharing subtree jobs when `share`, whose results
/// and share events arrive on channels. The starter of a shared job waits (within
/// [`WAIT`]) until another thread has joined it before it claims a piece, so that every
/// job is shared whatever the machine's load (the runner must have a free thread).
fn sharing_executor(
    threads: usize,
    share: bool,
) -> (
    JobRunner,
    mpsc::Receiver<JobResult>,
    mpsc::Receiver<ShareEvent>,
) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let sink = Arc::new(move |r: JobResult| {
        if let Ok(tx) = tx.lock() {
            let _ = tx.send(r);
        }
    });
    let (etx, erx) = mpsc::channel();
    let etx = std::sync::Mutex::new(etx);
    let joins = (
        std::sync::Mutex::new(BTreeSet::new()),
        std::sync::Condvar::new(),
    );
    let options = RunnerOptions {
        share_jobs: share,
        on_share: Some(Arc::new(move |e| {
            let (seen, changed) = &joins;
            match e {
                ShareEvent::Joined(id) => {
                    seen.lock().unwrap().insert(id);
                    changed.notify_all();
                }
                ShareEvent::Listed(id) => {
                    let seen = seen.lock().unwrap();
                    let _ = changed.wait_timeout_while(seen, WAIT, |s| !s.contains(&id));
                }
                ShareEvent::Ended { .. } => {}
            }
            if let Ok(tx) = etx.lock() {
                let _ = tx.send(e);
            }
        })),
        ..RunnerOptions::default()
    };
    let ex = JobRunner::with_options(threads, engines(), sink, options).unwrap();
    (ex, rx, erx)
}

/// The threads that searched job `id`, from its `Ended` event (its `Joined` events are
/// skipped).
fn searchers_of(events: &mpsc::Receiver<ShareEvent>, id: JobId) -> usize {
    loop {
        match events.recv_timeout(WAIT).expect("the job's end is told") {
            ShareEvent::Ended { job, searchers } if job == id => return searchers,
            _ => {}
        }
    }
}

/// Whether job `id` was joined by a helper (`true`) or ended first (`false`).
fn joined(events: &mpsc::Receiver<ShareEvent>, id: JobId) -> bool {
    loop {
        match events.recv_timeout(WAIT).expect("an event of the job") {
            ShareEvent::Joined(job) if job == id => return true,
            ShareEvent::Ended { job, .. } if job == id => return false,
            _ => {}
        }
    }
}

/// A 14-mover at its optimal depth, every 2-move prefix cut into its pieces one move
/// longer (some 3,000 of them): a tenth of a second on one thread.
fn fourteen_mover_pieces() -> SubtreeWork {
    let p = position("R U R' U' F2 D L' B D2 R' F U' R2 L2");
    SubtreeWork {
        pieces: 1,
        ..subtree_work(p, 14, sequences(2))
    }
}

/// Superflip's 43,254 4-move subtrees at depth 15: each is quick, all of them far more
/// work than a test waits for.
fn long_work() -> SubtreeWork {
    subtree_work(position(SUPERFLIP), 15, sequences(4))
}

/// A subtree job on a runner with nothing else to do is searched by more than one of its
/// threads, and its result is the one thread's, prefix by prefix (nodes, solutions,
/// stops); with sharing off it is searched by one thread, with the same result.
#[test]
fn executor_a_shared_subtree_job_answers_what_one_thread_answers() {
    let work = fourteen_mover_pieces();
    let alone = subtree_output(run(&subtrees(1, work.clone())));
    assert_eq!(alone.len(), 243);
    assert!(alone.iter().any(|r| !r.solutions.is_empty()));
    let (ex, rx, events) = sharing_executor(3, true);
    let mut shared = false;
    // A helper joins before the starter claims (see `sharing_executor`); whether both
    // end up searching pieces is up to the scheduler: try until they did.
    for id in 1..=20 {
        ex.submit(subtrees(id, work.clone()));
        let r = rx.recv_timeout(WAIT).expect("a result");
        assert_eq!(r.id, JobId(id));
        assert_eq!(subtree_output(r), alone, "job {id}");
        if searchers_of(&events, JobId(id)) > 1 {
            shared = true;
            break;
        }
    }
    assert!(shared, "no job was searched by two threads in 20 tries");
    assert_eq!(ex.pending(), 0);

    let (ex, rx, events) = sharing_executor(2, false);
    ex.submit(subtrees(30, work.clone()));
    let r = rx.recv_timeout(WAIT).expect("a result");
    assert_eq!(subtree_output(r), alone);
    assert!(events.try_recv().is_err(), "nothing is shared");
}

/// A shared job asked for one solution, among prefixes that hold several (the
/// checkerboard's six optimal solutions, in a few of its 3-move prefixes, put last so that
/// both threads are searching when they come), returns exactly one, verified; its subtree
/// says it stopped there.
#[test]
fn executor_a_shared_job_counts_its_solutions_over_all_its_threads() {
    let checkerboard = position("R2 L2 U2 D2 F2 B2");
    let all = subtree_work(checkerboard, 6, sequences(3));
    let every = subtree_output(run(&subtrees(1, all.clone())));
    assert_eq!(every.iter().map(|r| r.solutions.len()).sum::<usize>(), 6);
    let holds = |i: usize| {
        every
            .iter()
            .any(|r| r.prefix as usize == i && !r.solutions.is_empty())
    };
    let (holders, empty): (Vec<_>, Vec<_>) = (all.prefixes.iter().enumerate())
        .map(|(i, p)| (p.clone(), holds(i)))
        .partition(|(_, holds)| *holds);
    let prefixes = (empty.into_iter().chain(holders)).map(|(p, _)| p).collect();
    let first = SubtreeWork {
        max_solutions: Some(1),
        pieces: 1,
        ..subtree_work(checkerboard, 6, prefixes)
    };
    let (ex, rx, events) = sharing_executor(4, true);
    let mut shared = false;
    for id in 1..=20 {
        ex.submit(subtrees(id, first.clone()));
        let r = subtree_output(rx.recv_timeout(WAIT).expect("a result"));
        check_subtrees(&first, &r);
        assert_eq!(r.iter().map(|r| r.solutions.len()).sum::<usize>(), 1);
        let holder = r.iter().find(|r| !r.solutions.is_empty()).unwrap();
        assert_eq!(holder.stop, Stop::Completed);
        if searchers_of(&events, JobId(id)) > 1 {
            shared = true;
            break;
        }
    }
    assert!(shared, "no job was searched by two threads in 20 tries");
}

/// A split of a job that helpers are searching answers `k`, and the job's result is
/// exactly that of one thread handed back from piece `k`.
#[test]
fn executor_a_split_stops_every_thread_of_a_shared_job_at_one_piece() {
    let work = fourteen_mover_pieces();
    let (ex, rx, events) = sharing_executor(3, true);
    for id in 1..=20 {
        let job = subtrees(id, work.clone());
        ex.submit(job.clone());
        let k = if joined(&events, JobId(id)) {
            ex.split(JobId(id), 1).map(|(k, split)| {
                assert!(split.is_empty(), "a job sent without split splits no piece");
                k
            })
        } else {
            None
        };
        let r = rx.recv_timeout(WAIT).expect("a result");
        let Some(k) = k else {
            // It ended before a helper joined, or before the split: again.
            continue;
        };
        let got = subtree_output(r);
        check_subtrees(&work, &got);
        let replay = run_job_split(
            &engines(),
            &job,
            &StopToken::new(),
            &AtomicU64::new(0),
            &RunnerOptions::default(),
            &PieceCursor::handing_back_from(k),
        );
        assert_eq!(got, subtree_output(replay), "handed back from piece {k}");
        assert_eq!(ex.split(JobId(id), 1), None, "ended");
        return;
    }
    panic!("no job was split while shared in 20 tries");
}

/// A cancelled shared job sends one result, every subtree in flight stopped; a runner
/// dropped after `cancel_all` runs the job still queued, sends every result and lets its
/// threads end (its sink is let go).
#[test]
fn executor_a_cancelled_shared_job_reports_once_and_a_dropped_runner_ends() {
    let (ex, rx, events) = sharing_executor(2, true);
    let work = long_work();
    ex.submit(subtrees(1, work.clone()));
    assert!(joined(&events, JobId(1)), "a helper joins the long job");
    assert!(ex.cancel(JobId(1)));
    let r = rx.recv_timeout(WAIT).expect("a result after the cancel");
    assert_eq!(r.id, JobId(1));
    let r = subtree_output(r);
    check_subtrees(&work, &r);
    assert!(r.len() < work.prefixes.len());
    assert!(r.iter().all(|r| r.solutions.is_empty()));
    assert!(r
        .iter()
        .all(|r| r.stop == Stop::Cancelled || r.stop == Stop::Exhausted));
    // Its end is told (some threads may have been cancelled before any piece ended).
    let _ = searchers_of(&events, JobId(1));
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "one result"
    );
    assert_eq!(ex.pending(), 0);

    ex.submit(subtrees(2, work.clone()));
    assert!(joined(&events, JobId(2)));
    ex.cancel_all();
    ex.submit(batch(3, "twophase", two_phase(20), &[position("R U F")]));
    drop(ex);
    let mut got: Vec<JobResult> = (0..2)
        .map(|_| rx.recv_timeout(WAIT).expect("every job sends its result"))
        .collect();
    got.sort_by_key(|r| r.id);
    check_subtrees(&work, &subtree_output(got[0].clone()));
    assert_eq!(batch_output(got[1].clone())[0].solutions.len(), 1);
    assert!(
        matches!(
            rx.recv_timeout(WAIT),
            Err(mpsc::RecvTimeoutError::Disconnected)
        ),
        "the threads end and let the sink go"
    );
}

/// A job submitted while the threads share a long job starts before the long one ends:
/// the helper leaves it for the job waiting.
#[test]
fn executor_a_waiting_job_starts_before_threads_help() {
    let (ex, rx, events) = sharing_executor(2, true);
    ex.submit(subtrees(1, long_work()));
    assert!(joined(&events, JobId(1)), "a helper joins the long job");
    ex.submit(batch(2, "twophase", two_phase(20), &[position("R U F")]));
    let r = rx.recv_timeout(WAIT).expect("the short job's result");
    assert_eq!(r.id, JobId(2), "the short job is not starved");
    assert_eq!(batch_output(r)[0].solutions.len(), 1);
    assert!(ex.cancel(JobId(1)));
    let r = rx.recv_timeout(WAIT).expect("the long job's result");
    assert_eq!(r.id, JobId(1));
    check_subtrees(&long_work(), &subtree_output(r));
}

/// Polls until job `id` has searched nodes on `ex` (it runs), under a generous bound.
fn wait_running(ex: &JobRunner, id: JobId) {
    let start = std::time::Instant::now();
    while ex.nodes_so_far(id).unwrap_or(0) == 0 {
        assert!(start.elapsed() < WAIT, "job {id:?} never ran");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A shallower depth goes first: the one thread leaves a deep job it started for a
/// shallower job submitted after it, then takes the deep job up again where it left it,
/// which still answers every prefix it claimed.
#[test]
fn executor_a_thread_leaves_a_deeper_job_for_a_shallower_one_and_comes_back() {
    let (ex, rx) = executor(1);
    assert!(ex.shares_jobs());
    ex.submit(subtrees(1, long_work()));
    wait_running(&ex, JobId(1));
    ex.submit(subtrees(2, fourteen_mover_pieces()));
    let r = rx.recv_timeout(WAIT).expect("the shallow job's result");
    assert_eq!(r.id, JobId(2), "depth 14 ends before depth 15");
    check_subtrees(&fourteen_mover_pieces(), &subtree_output(r));
    let before = ex
        .nodes_so_far(JobId(1))
        .expect("the deep job is still held");
    let start = std::time::Instant::now();
    while ex.nodes_so_far(JobId(1)).unwrap_or(0) == before {
        assert!(start.elapsed() < WAIT, "the deep job is taken up again");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(ex.cancel(JobId(1)));
    let r = rx.recv_timeout(WAIT).expect("the deep job's result");
    assert_eq!(r.id, JobId(1));
    check_subtrees(&long_work(), &subtree_output(r));
}

/// A job left by its thread for a shallower one and cancelled while no thread searches
/// it still sends its result, once: the next free thread closes it.
#[test]
fn executor_a_job_cancelled_while_no_thread_searches_it_still_reports() {
    let (ex, rx) = executor(1);
    ex.submit(subtrees(1, long_work()));
    wait_running(&ex, JobId(1));
    let shallow = || subtree_work(position(SUPERFLIP), 14, sequences(4));
    ex.submit(subtrees(2, shallow()));
    wait_running(&ex, JobId(2));
    assert!(ex.cancel(JobId(1)));
    assert!(ex.cancel(JobId(2)));
    let mut ids = Vec::new();
    for _ in 0..2 {
        let r = rx.recv_timeout(WAIT).expect("a result");
        let work = if r.id == JobId(1) {
            long_work()
        } else {
            shallow()
        };
        ids.push(r.id);
        check_subtrees(&work, &subtree_output(r));
    }
    ids.sort();
    assert_eq!(ids, vec![JobId(1), JobId(2)]);
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "one result each"
    );
}
