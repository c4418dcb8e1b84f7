//! The embedded default: a table opened in this process ([`Embedded`]) and in-process
//! executors over it, seen through the coordinator's [`Executor`] trait, so that a solve
//! here goes through the same driver as a solve on a cluster.
//!
//! A table is searched from its memory map at once while a background thread copies it
//! into huge pages: jobs that start after the copy is made use it. An easy position's
//! first solution does not wait for a copy of up to tens of GB, and a long search runs at
//! the copy's speed soon after. The two-phase tables without their 564 MB move table are
//! copied at once instead (a fraction of a second), and built first if missing.
//!
//! The executors are kept between runs ([`Embedded::executors`] takes an idle one): a
//! process that solves one position per call (Python) pays for a thread pool once, not
//! per call. Each job's result goes to the run that submitted it.

use crate::{Dialect, Error};
use coordinator::input::InputLine;
use coordinator::{Event, Executor, ExecutorEvent, ExecutorId, Executors, Interrupt, Source};
use proto::{Job, JobId, Record, Settings};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;
use tables::progress::Progress;
use worker::{Engine, Engines, RunnerOptions, TableMemory};

/// How long a table is searched from its map before its copy begins: an easy position
/// is solved within this (and a one-shot process gone, without having faulted in and torn
/// down a copy it never used); a long search loses nothing.
const COPY_AFTER: Duration = Duration::from_millis(100);

/// The share of a table's file that must be in the page cache for `solve` to map it from
/// huge pages of the page cache before its first search ([`in_huge_page_cache`]).
#[cfg(target_os = "linux")]
const CACHED_AT_LEAST: f64 = 0.5;

/// Idle executors kept for the next run, at most.
const KEEP_IDLE: usize = 4;

/// The id of the first in-process executor (the others follow).
pub const FIRST_ID: ExecutorId = ExecutorId(1);

/// A table opened in this process, and the executors that solve on it.
pub struct Embedded {
    /// The catalog name of the table.
    table: String,
    /// The engines new jobs use: the mapped table, then its copy.
    engines: Mutex<Arc<Engines>>,
    /// Executors no run holds, with no job pending.
    idle: Mutex<Vec<Arc<worker::JobRunner>>>,
    /// Every executor made, to hand the copy to.
    made: Mutex<Vec<Weak<worker::JobRunner>>>,
    /// How jobs run (the test seam).
    options: RunnerOptions,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Embedded {
    /// Opens `table` in `dir` for solving: its files checked once ([`worker::catalog::verify_once`]:
    /// a damaged table is refused before it can answer), then mapped (and copied in the
    /// background), or for the two-phase tables without their move table, copied now and
    /// built first if missing.
    pub fn open(
        dir: &Path,
        table: &str,
        d: &Dialect,
        progress: &dyn Progress,
    ) -> Result<Arc<Embedded>, Error> {
        check(dir, table, progress)?;
        let options = RunnerOptions::from_env().map_err(|e| Error::Settings(e.to_string()))?;
        if table == proto::catalog::TWOPHASE {
            let p1m = tables::tablefile::table_path(dir, proto::catalog::TWOPHASE_P1M).exists();
            let missing = worker::twophase::TwoPhaseTables::missing(dir);
            if !p1m || !missing.is_empty() {
                if !missing.is_empty() {
                    d.say(&format!(
                        "building the two-phase tables in {} ({}, once)…",
                        dir.display(),
                        crate::table::size_of(proto::catalog::TWOPHASE)
                    ));
                }
                let s = worker::TwoPhaseSolver::open_or_build(dir, progress).map_err(|e| {
                    Error::table(format!("two-phase tables in {}", dir.display()), e)
                })?;
                return Ok(Embedded::with_engine(Engine::TwoPhase(s), options));
            }
        }
        if in_huge_page_cache(dir, table) {
            // Every map of the table is backed by huge pages already: nothing to copy.
            let engine = worker::catalog::open(dir, table, TableMemory::HugePages)
                .map_err(|e| Error::table(format!("opening table {table}"), e))?;
            return Ok(Embedded::with_engine(engine, options));
        }
        let mapped = worker::catalog::open(dir, table, TableMemory::Mapped)
            .map_err(|e| Error::table(format!("opening table {table}"), e))?;
        let embedded = Embedded::with_engine(mapped, options);
        let home = Arc::downgrade(&embedded);
        let (dir, table) = (dir.to_path_buf(), table.to_string());
        let copy = std::thread::Builder::new()
            .name("cubeswarm-table-copy".to_string())
            .spawn(move || copy_later(home, &dir, &table));
        // Without the copy, the mapped table serves: slower lookups, same answers.
        if let Err(e) = copy {
            tracing::warn!(error = %e, "no thread to copy the table into huge pages");
        }
        Ok(embedded)
    }

    /// `table` in `dir` checked and copied into huge pages now, before the first search
    /// (for benchmarks, which measure the search and not the copy).
    pub fn open_copied(
        dir: &Path,
        table: &str,
        progress: &dyn Progress,
    ) -> Result<Arc<Embedded>, Error> {
        check(dir, table, progress)?;
        let options = RunnerOptions::from_env().map_err(|e| Error::Settings(e.to_string()))?;
        let engine = if table == proto::catalog::TWOPHASE {
            worker::TwoPhaseSolver::open_or_build(dir, progress)
                .map(Engine::TwoPhase)
                .map_err(|e| Error::table(format!("two-phase tables in {}", dir.display()), e))?
        } else {
            worker::catalog::open(dir, table, TableMemory::HugePages)
                .map_err(|e| Error::table(format!("opening table {table}"), e))?
        };
        Ok(Embedded::with_engine(engine, options))
    }

    /// [`Embedded::open`], once per process for each table and directory: later calls
    /// get the same tables (mapped, or their copy once it is made) and its idle
    /// executors.
    pub fn shared(
        dir: &Path,
        table: &str,
        d: &Dialect,
        progress: &dyn Progress,
    ) -> Result<Arc<Embedded>, Error> {
        type Opened = Mutex<HashMap<(PathBuf, String), Arc<Embedded>>>;
        static OPENED: OnceLock<Opened> = OnceLock::new();
        let key = (dir.to_path_buf(), table.to_string());
        let mut opened = lock(OPENED.get_or_init(Default::default));
        if let Some(e) = opened.get(&key) {
            return Ok(Arc::clone(e));
        }
        let e = Embedded::open(dir, table, d, progress)?;
        opened.insert(key, Arc::clone(&e));
        Ok(e)
    }

    /// Solving on `engine` as it is, jobs run as `options` say.
    pub fn with_engine(engine: Engine, options: RunnerOptions) -> Arc<Embedded> {
        let table = engine.name().to_string();
        let mut engines = Engines::default();
        engines.insert(engine);
        Arc::new(Embedded {
            table,
            engines: Mutex::new(Arc::new(engines)),
            idle: Mutex::new(Vec::new()),
            made: Mutex::new(Vec::new()),
            options,
        })
    }

    /// The catalog name of the table.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// `count` executors of `threads` threads each (ids from [`FIRST_ID`] on) for one run,
    /// idle ones reused: each result goes to this run's event stream.
    pub fn executors(self: &Arc<Self>, count: usize, threads: usize) -> Result<Executors, Error> {
        let threads = threads.max(1);
        let (tx, events) = mpsc::channel::<Event>();
        let mut executors: BTreeMap<ExecutorId, Box<dyn Executor + Send>> = BTreeMap::new();
        for k in 0..count.max(1) {
            let id = ExecutorId(FIRST_ID.0 + k as u64);
            let results = tx.clone();
            let sink: worker::ResultSink = Arc::new(move |r| {
                let _ = results.send(Event::Executor(ExecutorEvent::Result(id, r)));
            });
            let exec = self.take(threads)?;
            executors.insert(
                id,
                Box::new(Local {
                    exec,
                    sink,
                    home: Arc::downgrade(self),
                }),
            );
        }
        Ok(Executors {
            executors,
            tx,
            events,
        })
    }

    /// An idle executor of `threads` threads on the current engines, or a new one.
    fn take(&self, threads: usize) -> Result<Arc<worker::JobRunner>, Error> {
        let engines = Arc::clone(&lock(&self.engines));
        let reused = {
            let mut idle = lock(&self.idle);
            let at = idle
                .iter()
                .position(|e| e.threads() == threads && e.pending() == 0);
            at.map(|i| idle.swap_remove(i))
        };
        if let Some(e) = reused {
            e.replace_engines(engines);
            return Ok(e);
        }
        // Results go to each job's run (`submit_with`); the executor's own sink is unused.
        let unused: worker::ResultSink = Arc::new(|_| {});
        let exec = worker::JobRunner::with_options(threads, engines, unused, self.options.clone())
            .map_err(|e| Error::table("starting the solver threads", e))?;
        let exec = Arc::new(exec);
        let mut made = lock(&self.made);
        made.retain(|w| w.strong_count() > 0);
        made.push(Arc::downgrade(&exec));
        Ok(exec)
    }

    /// Jobs that start from now on use `engines` (the table's copy).
    fn replace(&self, engines: Engines) {
        let engines = Arc::new(engines);
        *lock(&self.engines) = Arc::clone(&engines);
        for e in lock(&self.made).iter().filter_map(Weak::upgrade) {
            e.replace_engines(Arc::clone(&engines));
        }
    }
}

/// Checks the files of `table` present in `dir` once per file
/// ([`worker::catalog::verify_once`]): a damaged table is refused before it can answer,
/// and a file checked before is not read again until it changes.
fn check(dir: &Path, table: &str, progress: &dyn Progress) -> Result<(), Error> {
    let entry =
        worker::catalog::entry(table).map_err(|e| Error::table(format!("table {table}"), e))?;
    if entry.present(dir) {
        worker::catalog::verify_once(dir, entry, progress)
            .map_err(|e| Error::table(format!("checking table {table}"), e))?;
    }
    Ok(())
}

/// Whether the page cache holds the main table `table` of `dir` in huge pages, or could
/// be made to ([`tables::huge::page_cache_map`]: the file read again once if it was
/// cached in small pages, before anything in this process maps it). Then a map of it
/// searches at full speed from its first lookup, with no copy to make or hold.
///
/// Only for a file mostly in the page cache already ([`CACHED_AT_LEAST`]): reading a
/// whole file from disk first would make an easy position wait for it (0.94 GB at h5),
/// where the plain map answers it from a few pages.
fn in_huge_page_cache(dir: &Path, table: &str) -> bool {
    #[cfg(target_os = "linux")]
    if let Ok(file) = std::fs::File::open(tables::tablefile::table_path(dir, table)) {
        return tables::huge::cached_share(&file).is_some_and(|s| s >= CACHED_AT_LEAST)
            && tables::huge::page_cache_map(&file, None).is_some();
    }
    let _ = (dir, table);
    false
}

/// After [`COPY_AFTER`], copies the table into huge pages and hands the copy to the
/// executors, unless the tables were dropped by then.
fn copy_later(home: Weak<Embedded>, dir: &Path, table: &str) {
    std::thread::sleep(COPY_AFTER);
    if home.strong_count() == 0 {
        return;
    }
    let start = std::time::Instant::now();
    match worker::catalog::open(dir, table, TableMemory::HugePages) {
        Ok(engine) => {
            let Some(home) = home.upgrade() else { return };
            let mut engines = Engines::default();
            engines.insert(engine);
            home.replace(engines);
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
}

/// An in-process executor as one run's coordinator executor; given back to its
/// [`Embedded`] when the run drops it.
struct Local {
    exec: Arc<worker::JobRunner>,
    /// This run's event stream.
    sink: worker::ResultSink,
    home: Weak<Embedded>,
}

impl Executor for Local {
    fn capacity(&self) -> usize {
        self.exec.threads()
    }
    fn tables(&self) -> Vec<String> {
        self.exec.tables()
    }
    fn submit(&self, job: Job) {
        self.exec.submit_with(job, Arc::clone(&self.sink))
    }
    fn cancel(&self, job: JobId) {
        self.exec.cancel(job);
    }
    fn can_split(&self) -> bool {
        true
    }
    fn shares_jobs(&self) -> bool {
        self.exec.shares_jobs()
    }
    fn trusted(&self) -> bool {
        // This process's own threads.
        true
    }
    fn split(&self, job: JobId, attempt: u32) -> Option<proto::Handback> {
        let (kept, split) = match self.exec.split(job, attempt) {
            Some((kept, split)) => (Some(kept), split),
            None => (None, Vec::new()),
        };
        Some(proto::Handback {
            job,
            attempt,
            kept,
            split,
        })
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(home) = self.home.upgrade() {
            let mut idle = lock(&home.idle);
            if idle.len() < KEEP_IDLE {
                idle.push(Arc::clone(&self.exec));
            }
        }
    }
}

/// Solves one position through the driver on `executors` under the scheduler
/// configuration `cfg` ([`crate::Request::config`]), on the calling thread: its record.
/// `interrupt` may take the thread back early ([`coordinator::Interrupt`]).
pub fn one(
    cfg: coordinator::Config,
    executors: &Executors,
    settings: &Settings,
    table: &str,
    line: InputLine,
    interrupt: Option<Interrupt<'_>>,
) -> Result<Record, Error> {
    let mut got = None;
    coordinator::run_interruptible(
        cfg,
        executors,
        settings.clone(),
        table.to_string(),
        Source::<std::io::Empty>::One(line),
        &mut |r| {
            got = Some(r);
            Ok(())
        },
        interrupt,
    )?;
    got.ok_or(Error::Run(coordinator::RunError::Disconnected))
}

/// What a local batch run did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Records given to the sink, one per input line.
    pub records: u64,
    /// Records without a solution: error records and positions with none found
    /// ([`crate::output::failure`]).
    pub failed: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

/// The one local batch loop, behind `solve --input` and Python's `solve_many`: every line
/// of `source` solved through the driver on `executors`, its record given to `sink` in
/// input order as soon as it is released, with whether it failed. `interrupt` may stop
/// the run early.
#[allow(clippy::too_many_arguments)]
pub fn many<R: std::io::BufRead + Send>(
    cfg: coordinator::Config,
    executors: &Executors,
    settings: &Settings,
    table: &str,
    source: Source<R>,
    sink: &mut dyn FnMut(Record, bool) -> std::io::Result<()>,
    interrupt: Option<Interrupt<'_>>,
) -> Result<Tally, Error> {
    let mut failed = 0u64;
    let stats = coordinator::run_interruptible(
        cfg,
        executors,
        settings.clone(),
        table.to_string(),
        source,
        &mut |rec| {
            let bad = crate::output::failed(&rec);
            failed += u64::from(bad);
            sink(rec, bad)
        },
        interrupt,
    )?;
    Ok(Tally {
        records: stats.records,
        failed,
        seconds: stats.seconds,
    })
}

#[cfg(test)]
mod tests;
