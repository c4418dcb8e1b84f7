//! The embedded default: the coordinator's driver over one in-process executor.
//!
//! [`Local`] is the in-process executor (one long-lived rayon pool running jobs on the
//! mapped tables) seen through the coordinator's [`coordinator::Executor`] trait; its
//! results go into the driver's event stream like a remote worker's would.

use crate::progress::Bars;
use anyhow::Context as _;
use coordinator::{Event, Executor, ExecutorEvent, ExecutorId, Executors};
use proto::{Job, JobId};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{mpsc, Arc};
use worker::{Engine, Engines, TableMemory};

/// The in-process executor as a coordinator executor.
pub struct Local(Arc<worker::Executor>);

impl Executor for Local {
    fn capacity(&self) -> usize {
        self.0.threads()
    }
    fn tables(&self) -> Vec<String> {
        self.0.tables()
    }
    fn submit(&self, job: Job) {
        self.0.submit(job)
    }
    fn cancel(&self, job: JobId) {
        self.0.cancel(job);
    }
}

/// The id of the one local executor.
pub const LOCAL: ExecutorId = ExecutorId(1);

/// An executor pool of one in-process executor with `threads` threads over `engine`.
pub fn executors(engine: Engine, threads: usize) -> anyhow::Result<Executors> {
    let options = worker::ExecutorOptions::from_env()?;
    Ok(executor_pool(engine, 1, threads, options)?.0)
}

/// How long `solve` searches the mapped table before it starts copying it.
const COPY_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// The embedded executor for `solve`: an H48 table is searched from its memory map at
/// once, while a background thread copies it into huge pages (from [`COPY_AFTER`] on);
/// jobs that start after the copy is made use it (the first solution of an easy position does not wait for a copy
/// of up to tens of GB, and a long search runs at the copy's speed soon after). So are
/// the two-phase tables when the 564 MB move table is among them (its copy takes over a
/// second); without it they open as [`open_engine`] does (copied at once, in a fraction
/// of a second, and built first if missing).
pub fn solving_executors(
    dir: &Path,
    table: &str,
    threads: usize,
    progress: bool,
) -> anyhow::Result<Executors> {
    check_tables(dir, table, progress)?;
    if table == proto::catalog::TWOPHASE {
        let p1m = tables::tablefile::table_path(dir, proto::catalog::TWOPHASE_P1M).exists();
        if !p1m || !worker::twophase::TwoPhaseTables::missing(dir).is_empty() {
            return executors(open_engine(dir, table, progress)?, threads);
        }
    }
    let mapped = worker::catalog::open(dir, table, TableMemory::Mapped)
        .with_context(|| format!("opening table {table}"))?;
    let options = worker::ExecutorOptions::from_env()?;
    let (pool, execs) = executor_pool(mapped, 1, threads, options)?;
    let (dir, table) = (dir.to_path_buf(), table.to_string());
    let copy = move || {
        // An easy position is solved within this (and the process gone, without having
        // faulted in and torn down a copy it never used); a long search loses nothing.
        std::thread::sleep(COPY_AFTER);
        let start = std::time::Instant::now();
        match worker::catalog::open(&dir, &table, TableMemory::HugePages) {
            Ok(engine) => {
                let mut engines = Engines::default();
                engines.insert(engine);
                let engines = Arc::new(engines);
                for e in &execs {
                    e.replace_engines(Arc::clone(&engines));
                }
                tracing::debug!(
                    table,
                    secs = start.elapsed().as_secs_f64(),
                    "table copied into huge pages; new jobs use the copy"
                );
            }
            // The mapped table keeps serving: slower lookups, same answers.
            Err(e) => {
                tracing::warn!(table, error = %e, "copying the table into huge pages failed; searching the mapped table")
            }
        }
    };
    std::thread::Builder::new()
        .name("cubeswarm-table-copy".to_string())
        .spawn(copy)
        .context("starting the table copy thread")?;
    Ok(pool)
}

/// An executor pool of `count` in-process executors of `threads` threads each, all over
/// `engine` (one copy of its tables), ids 1, 2, …, running jobs as `options` say; and
/// the executors themselves.
pub fn executor_pool(
    engine: Engine,
    count: usize,
    threads: usize,
    options: worker::ExecutorOptions,
) -> anyhow::Result<(Executors, Vec<Arc<worker::Executor>>)> {
    let mut engines = Engines::default();
    engines.insert(engine);
    let engines = Arc::new(engines);
    let (tx, events) = mpsc::channel::<Event>();
    let mut map: BTreeMap<ExecutorId, Box<dyn Executor + Send>> = BTreeMap::new();
    let mut execs = Vec::new();
    for k in 0..count.max(1) {
        let id = ExecutorId(LOCAL.0 + k as u64);
        let results = tx.clone();
        let sink: worker::ResultSink = Arc::new(move |r| {
            let _ = results.send(Event::Executor(ExecutorEvent::Result(id, r)));
        });
        let exec = worker::Executor::with_options(
            threads.max(1),
            Arc::clone(&engines),
            sink,
            options.clone(),
        )
        .context("starting the solver threads")?;
        let exec = Arc::new(exec);
        execs.push(Arc::clone(&exec));
        map.insert(id, Box::new(Local(exec)));
    }
    Ok((
        Executors {
            executors: map,
            tx,
            events,
        },
        execs,
    ))
}

/// The H48 table to use: `table`, or the largest present, building h48h0k4 if none is
/// (and building a named table that is missing, and a present table's missing eoesep
/// fallback).
pub fn optimal_table(dir: &Path, table: Option<&str>) -> anyhow::Result<String> {
    let name = match table {
        Some(t) => t.to_string(),
        None => match worker::catalog::largest_h48_available(dir) {
            Some(t) => t.to_string(),
            None => {
                eprintln!(
                    "no H48 table in {}; building h48h0k4 (about 60 MB, once)…",
                    dir.display()
                );
                worker::catalog::build(dir, "h48h0k4", &Bars::new(true))?;
                "h48h0k4".to_string()
            }
        },
    };
    let entry = proto::catalog::find(&name)
        .filter(|e| e.method == proto::Method::Optimal)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "unknown H48 table {name:?}; `cubeswarm tables list` shows the known ones"
            )
        })?;
    if table.is_some() && !entry.present(dir) {
        eprintln!("table {name} is not in {}; building it…", dir.display());
        worker::catalog::build_entry(dir, entry, &Bars::new(true))?;
    }
    if let Some(f) = worker::catalog::missing_fallback(dir, entry) {
        eprintln!(
            "{f}, the fallback of table {name}, is not in {}; building it (4.6 MB, seconds)…",
            dir.display()
        );
        worker::catalog::build_file(dir, f, &Bars::new(true))?;
    }
    Ok(name)
}

/// Checks the files of `table` present in `dir` once per file, with a bar where
/// `progress` ([`worker::catalog::verify_once`]): a damaged table is refused before it
/// can answer, and a file checked before is not read again until it changes.
fn check_tables(dir: &Path, table: &str, progress: bool) -> anyhow::Result<()> {
    let entry = worker::catalog::entry(table)?;
    if entry.present(dir) {
        worker::catalog::verify_once(dir, entry, &Bars::new(progress))
            .with_context(|| format!("checking table {table}"))?;
    }
    Ok(())
}

/// Opens the engine for `table` ("twophase" builds its tables if missing).
pub fn open_engine(dir: &Path, table: &str, progress: bool) -> anyhow::Result<Engine> {
    check_tables(dir, table, progress)?;
    if table == proto::catalog::TWOPHASE {
        let s = worker::TwoPhaseSolver::open_or_build(dir, &Bars::new(progress))
            .with_context(|| format!("two-phase tables in {}", dir.display()))?;
        return Ok(Engine::TwoPhase(s));
    }
    worker::catalog::open(dir, table, TableMemory::default())
        .with_context(|| format!("opening table {table}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordinator::Source;
    use proto::{Method, Settings};
    use std::sync::atomic::{AtomicUsize, Ordering};

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
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tables");
        std::fs::create_dir_all(&dir).unwrap();
        if !proto::catalog::find("h48h0k4").unwrap().present(&dir) {
            worker::catalog::build(&dir, "h48h0k4", &tables::progress::Silent).unwrap();
        }
        let engine = open_engine(&dir, "h48h0k4", false).unwrap();
        let mut pool = executor_pool(engine, 2, 1, Default::default()).unwrap().0;
        let counts = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
        let ids: Vec<ExecutorId> = pool.executors.keys().copied().collect();
        for (id, n) in ids.iter().zip(&counts) {
            let inner = pool.executors.remove(id).unwrap();
            pool.executors
                .insert(*id, Box::new(Counting(inner, Arc::clone(n))));
        }
        let known = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("worker/tests/data/known_optimal.txt"),
        )
        .unwrap();
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
        let tables = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tables");
        worker::TwoPhaseSolver::open_or_build(&tables, &tables::progress::Silent).unwrap();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tables-p1m");
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
        let pool = solving_executors(&dir, proto::catalog::TWOPHASE, 1, false).unwrap();
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
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tables");
        std::fs::create_dir_all(&dir).unwrap();
        if !proto::catalog::find("h48h0k4").unwrap().present(&dir) {
            worker::catalog::build(&dir, "h48h0k4", &tables::progress::Silent).unwrap();
        }
        let engine = open_engine(&dir, "h48h0k4", false).unwrap();
        let bad = "R U F";
        let options = worker::ExecutorOptions {
            before_position: Some(worker::failpoint::panic_on(
                tables::Position::parse(bad).unwrap(),
            )),
        };
        let pool = executor_pool(engine, 2, 1, options).unwrap().0;
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
}
