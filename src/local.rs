//! The embedded default: the coordinator's driver over one in-process executor.
//!
//! [`Local`] is the in-process executor (one long-lived rayon pool running jobs on the
//! mapped tables) seen through the coordinator's [`coordinator::Executor`] trait; its
//! results go into the driver's event stream like a remote worker's would.

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
    let mut engines = Engines::default();
    engines.insert(engine);
    let (tx, events) = mpsc::channel::<Event>();
    let results = tx.clone();
    let sink: worker::ResultSink = Arc::new(move |r| {
        let _ = results.send(Event::Executor(ExecutorEvent::Result(LOCAL, r)));
    });
    let exec = worker::Executor::new(threads.max(1), Arc::new(engines), sink)
        .context("starting the solver threads")?;
    let mut map: BTreeMap<ExecutorId, Box<dyn Executor>> = BTreeMap::new();
    map.insert(LOCAL, Box::new(Local(Arc::new(exec))));
    Ok(Executors {
        executors: map,
        tx,
        events,
    })
}

/// The H48 table to use: `table`, or the largest present, building h48h0k4 if none is
/// (and building a named table that is missing).
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
                worker::catalog::build(dir, "h48h0k4", true)?;
                "h48h0k4".to_string()
            }
        },
    };
    let entry = worker::catalog::find(&name)
        .filter(|e| e.method == proto::Method::Optimal)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "unknown H48 table {name:?}; `cubeswarm tables list` shows the known ones"
            )
        })?;
    if table.is_some() && !entry.present(dir) {
        eprintln!("table {name} is not in {}; building it…", dir.display());
        entry.build(dir, true)?;
    }
    Ok(name)
}

/// Opens the engine for `table` ("twophase" builds its tables if missing).
pub fn open_engine(dir: &Path, table: &str, progress: bool) -> anyhow::Result<Engine> {
    if table == worker::catalog::TWOPHASE {
        let s = worker::TwoPhaseSolver::open_or_build(dir, progress)
            .with_context(|| format!("two-phase tables in {}", dir.display()))?;
        return Ok(Engine::TwoPhase(s));
    }
    worker::catalog::open(dir, table, TableMemory::default())
        .with_context(|| format!("opening table {table}"))
}
