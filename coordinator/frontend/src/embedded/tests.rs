//! The embedded executors through the driver, on the test tables.

use super::*;
use coordinator::Source;
use proto::{Method, Settings};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The workspace's root (the test tables are shared by every crate's tests).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// h48h0k4 in the shared test tables, built once per run.
fn h0k4() -> (PathBuf, Engine) {
    let dir = root().join("target/test-tables");
    std::fs::create_dir_all(&dir).unwrap();
    if !proto::catalog::find("h48h0k4").unwrap().present(&dir) {
        worker::catalog::build(&dir, "h48h0k4", &tables::progress::Silent).unwrap();
    }
    let engine = worker::catalog::open(&dir, "h48h0k4", TableMemory::Mapped).unwrap();
    (dir, engine)
}

/// Counts the jobs an executor received.
struct Counting(Box<dyn Executor + Send>, Arc<AtomicUsize>);

impl Executor for Counting {
    fn capacity(&self) -> usize {
        self.0.capacity()
    }
    fn tables(&self) -> Vec<String> {
        self.0.tables()
    }
    fn submit(&self, job: Job) {
        self.1.fetch_add(1, Ordering::Relaxed);
        self.0.submit(job)
    }
    fn cancel(&self, job: JobId) {
        self.0.cancel(job)
    }
}

/// Known-length positions solved through the coordinator, each split over two
/// executors, come back at exactly their length, proved optimal, verified.
#[test]
fn known_lengths_split_over_two_executors_keep_their_proofs() {
    let (_, engine) = h0k4();
    let mut pool = Embedded::with_engine(engine, Default::default())
        .executors(2, 1)
        .unwrap();
    let counts = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
    let ids: Vec<ExecutorId> = pool.executors.keys().copied().collect();
    for (id, n) in ids.iter().zip(&counts) {
        let inner = pool.executors.remove(id).unwrap();
        pool.executors
            .insert(*id, Box::new(Counting(inner, Arc::clone(n))));
    }
    let known =
        std::fs::read_to_string(root().join("worker/tests/data/known_optimal.txt")).unwrap();
    let cases: Vec<(usize, String)> = known
        .lines()
        .filter(|l| !l.starts_with('#'))
        .take(2)
        .map(|l| {
            let (n, s) = l.split_once('|').unwrap();
            (n.trim().parse().unwrap(), s.trim().to_string())
        })
        .collect();
    let input = cases
        .iter()
        .map(|c| c.1.clone())
        .collect::<Vec<_>>()
        .join("\n");
    let mut records = Vec::new();
    let settings = Settings {
        method: Method::Optimal,
        ..Settings::default()
    };
    coordinator::run(
        coordinator::Config::default(),
        &pool,
        settings,
        "h48h0k4".into(),
        Source::Lines(input.as_bytes()),
        &mut |r| {
            records.push(r);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(records.len(), cases.len());
    for (r, (len, scramble)) in records.iter().zip(&cases) {
        let s = r.outcome.as_ref().unwrap();
        let p = tables::Position::parse(scramble).unwrap();
        assert_eq!(s.solutions.len(), 1);
        assert_eq!(s.solutions[0].len(), *len, "{scramble}");
        assert!(s.optimal);
        assert_eq!(s.depth_exhausted, Some(*len as u8 - 1));
        assert!(p.is_solved_by(&s.solutions[0]));
    }
    for n in &counts {
        assert!(
            n.load(Ordering::Relaxed) > 4,
            "both executors got subtree jobs"
        );
    }
}

/// `solve`'s executor over the two-phase tables with the move table beside them (the
/// tables searched from their maps while a copy is made): random positions come back
/// solved within 20 moves.
#[test]
fn two_phase_with_the_move_table_solves_from_the_maps() {
    let tables = root().join("target/test-tables");
    worker::TwoPhaseSolver::open_or_build(&tables, &tables::progress::Silent).unwrap();
    let dir = root().join("target/test-tables-p1m");
    std::fs::create_dir_all(&dir).unwrap();
    for name in worker::twophase::TwoPhaseTables::table_names() {
        let link = tables::tablefile::table_path(&dir, name);
        if !link.exists() {
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(tables::tablefile::table_path(&tables, name), &link)
                .unwrap();
        }
    }
    let p1m = proto::catalog::TWOPHASE_P1M;
    if !tables::tablefile::table_path(&dir, p1m).exists() {
        worker::catalog::build_file(&dir, p1m, &tables::progress::Silent).unwrap();
    }
    let tables = Embedded::open(
        &dir,
        proto::catalog::TWOPHASE,
        &Dialect::CLI,
        &tables::progress::Silent,
    )
    .unwrap();
    let pool = tables.executors(1, 1).unwrap();
    let mut rng = tables::SplitMix64::new(5);
    let cubes: Vec<tables::Cube> = (0..20).map(|_| tables::Cube::random(&mut rng)).collect();
    let input = cubes
        .iter()
        .map(tables::facelet::to_facelets)
        .collect::<Vec<_>>()
        .join("\n");
    let settings = Settings {
        method: Method::TwoPhase,
        ..Settings::default()
    };
    let mut records = Vec::new();
    coordinator::run(
        coordinator::Config::default(),
        &pool,
        settings,
        proto::catalog::TWOPHASE.into(),
        Source::Lines(input.as_bytes()),
        &mut |r| {
            records.push(r);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(records.len(), cubes.len());
    for (r, cube) in records.iter().zip(&cubes) {
        let s = r.outcome.as_ref().unwrap();
        assert!(s.solutions[0].len() <= 20);
        assert!(cube.apply_moves(&s.solutions[0]).is_solved());
    }
}

/// The embedded default (no lease: `Config::default()`) with one line whose search
/// panics: the run finishes, that line's record is an internal error, and every other
/// line is solved.
#[test]
fn a_panicking_line_is_an_error_record_and_the_run_finishes() {
    let (_, engine) = h0k4();
    let bad = "R U F";
    let options = worker::RunnerOptions {
        before_position: Some(worker::failpoint::panic_on(
            tables::Position::parse(bad).unwrap(),
        )),
        ..worker::RunnerOptions::default()
    };
    let pool = Embedded::with_engine(engine, options)
        .executors(2, 1)
        .unwrap();
    let lines = ["R U", bad, "F2 D L", "B' R2"];
    let mut records = Vec::new();
    coordinator::run(
        coordinator::Config::default(),
        &pool,
        Settings::default(),
        "h48h0k4".into(),
        Source::Lines(lines.join("\n").as_bytes()),
        &mut |r| {
            records.push(r);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(records.len(), lines.len());
    for (r, text) in records.iter().zip(lines) {
        assert_eq!(r.input, text);
        if text == bad {
            let e = r.outcome.as_ref().unwrap_err();
            assert!(
                matches!(
                    e,
                    proto::RecordError::Job(proto::JobError::Internal(
                        proto::Internal::Panic { .. }
                    ))
                ),
                "{e:?}"
            );
            assert!(e
                .to_string()
                .starts_with("internal error: the search panicked"));
        } else {
            let s = r.outcome.as_ref().unwrap();
            let p = tables::Position::parse(text).unwrap();
            assert!(p.is_solved_by(&s.solutions[0]) && s.optimal, "{text}");
        }
    }
}

/// Runs one after another on the same tables reuse the same executor (a thread pool per
/// process, not per call), and each run gets its own positions' records.
#[test]
fn an_idle_executor_serves_the_next_run() {
    let (_, engine) = h0k4();
    let tables = Embedded::with_engine(engine, Default::default());
    let settings = Settings::default();
    let mut first = None;
    for (k, scramble) in ["R U F", "D2 L' B", "F R' U2 L"].into_iter().enumerate() {
        let pool = tables.executors(1, 2).unwrap();
        let line = InputLine {
            line: 1,
            input: scramble.into(),
            parsed: Ok(tables::Position::parse(scramble).unwrap()),
        };
        let rec = one(
            coordinator::Config::default(),
            &pool,
            &settings,
            "h48h0k4",
            line,
            None,
        )
        .unwrap();
        let s = rec.outcome.as_ref().unwrap();
        let p = tables::Position::parse(scramble).unwrap();
        assert!(p.is_solved_by(&s.solutions[0]) && s.optimal, "{scramble}");
        assert_eq!(rec.input, scramble);
        drop(pool);
        let idle = lock(&tables.idle);
        assert_eq!(idle.len(), 1, "run {k}: the executor was given back");
        match &first {
            None => first = Some(Arc::as_ptr(&idle[0])),
            Some(p) => assert_eq!(*p, Arc::as_ptr(&idle[0]), "run {k} reused it"),
        }
    }
    // Two runs at once get two executors; both are kept afterwards.
    let a = tables.executors(1, 2).unwrap();
    let b = tables.executors(1, 2).unwrap();
    assert!(lock(&tables.idle).is_empty());
    drop((a, b));
    assert_eq!(lock(&tables.idle).len(), 2);
}

/// One position as the input line of a run.
fn line_of(scramble: &str) -> InputLine {
    InputLine {
        line: 1,
        input: scramble.into(),
        parsed: Ok(tables::Position::parse(scramble).unwrap()),
    }
}

/// An interrupt that is asked but never stops the run changes nothing: the same
/// solutions, proved optimal, as the run without one.
#[test]
fn an_interrupt_that_never_stops_leaves_the_record_as_it_was() {
    let (_, engine) = h0k4();
    let tables = Embedded::with_engine(engine, Default::default());
    let settings = Settings::default();
    let scramble = "R U F D L B R2 U'";
    let plain = one(
        coordinator::Config::default(),
        &tables.executors(1, 1).unwrap(),
        &settings,
        "h48h0k4",
        line_of(scramble),
        None,
    )
    .unwrap();
    let mut asked = 0u32;
    let mut stop = || {
        asked += 1;
        false
    };
    let interrupt = Interrupt {
        every: Duration::from_micros(1),
        stop: &mut stop,
    };
    let pool = tables.executors(1, 1).unwrap();
    let watched = one(
        coordinator::Config::default(),
        &pool,
        &settings,
        "h48h0k4",
        line_of(scramble),
        Some(interrupt),
    )
    .unwrap();
    assert!(asked > 0, "the interrupt was asked");
    let (a, b) = (plain.outcome.unwrap(), watched.outcome.unwrap());
    assert_eq!((a.solutions, a.optimal), (b.solutions, b.optimal));
    assert_eq!((plain.line, plain.input), (watched.line, watched.input));
}

/// An interrupt ends a search of minutes: the run returns `Interrupted` once it is asked
/// to stop, the job is cancelled (its partial result comes back at once), and the
/// executor solves the next run.
#[test]
fn an_interrupted_run_cancels_its_search() {
    let (_, engine) = h0k4();
    let tables = Embedded::with_engine(engine, Default::default());
    let settings = Settings::default();
    let pool = tables.executors(1, 1).unwrap();
    // A 20-move position: its optimal search with the test table takes minutes.
    let hard = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";
    let mut asked = 0u32;
    let mut stop = || {
        asked += 1;
        asked >= 3
    };
    let interrupt = Interrupt {
        every: Duration::from_millis(1),
        stop: &mut stop,
    };
    let got = one(
        coordinator::Config::default(),
        &pool,
        &settings,
        "h48h0k4",
        line_of(hard),
        Some(interrupt),
    );
    assert!(
        matches!(got, Err(Error::Run(coordinator::RunError::Interrupted))),
        "{got:?}"
    );
    assert_eq!(asked, 3);
    // The running job's result, cancelled (or empty, had it not started): it comes back
    // long before the search would end.
    loop {
        let r = match pool.events.recv_timeout(Duration::from_secs(60)) {
            Ok(Event::Executor(ExecutorEvent::Result(_, r))) => r,
            Ok(_) => continue,
            Err(e) => panic!("the interrupted job never came back: {e}"),
        };
        let stops: Vec<proto::Stop> = match r.output.unwrap() {
            proto::JobOutput::Batch(answers) => {
                answers.into_iter().map(|a| a.unwrap().stop).collect()
            }
            proto::JobOutput::Subtrees(subtrees) => subtrees.into_iter().map(|s| s.stop).collect(),
        };
        if stops.is_empty() || stops.contains(&proto::Stop::Cancelled) {
            break;
        }
    }
    drop(pool);
    let rec = one(
        coordinator::Config::default(),
        &tables.executors(1, 1).unwrap(),
        &settings,
        "h48h0k4",
        line_of("R U"),
        None,
    )
    .unwrap();
    assert!(tables::Position::parse("R U")
        .unwrap()
        .is_solved_by(&rec.outcome.unwrap().solutions[0]));
}
