//! The in-process executor seen through the coordinator's executor trait: what the CLI's
//! embedded default runs (`src/local.rs`), here for one call at a time.

use coordinator::{Event, Executor, ExecutorEvent, ExecutorId, Executors};
use proto::{Job, JobId};
use std::collections::BTreeMap;
use std::sync::{mpsc, Arc};
use worker::{Engine, Engines};

struct Local(worker::Executor);

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

/// One in-process executor of `threads` threads over `engine`.
pub fn executors(engine: Engine, threads: usize) -> Result<Executors, worker::Error> {
    let mut engines = Engines::default();
    engines.insert(engine);
    let (tx, events) = mpsc::channel::<Event>();
    let id = ExecutorId(1);
    let results = tx.clone();
    let sink: worker::ResultSink = Arc::new(move |r| {
        let _ = results.send(Event::Executor(ExecutorEvent::Result(id, r)));
    });
    let exec = worker::Executor::with_options(
        threads.max(1),
        Arc::new(engines),
        sink,
        worker::ExecutorOptions::default(),
    )?;
    let mut map: BTreeMap<ExecutorId, Box<dyn Executor + Send>> = BTreeMap::new();
    map.insert(id, Box::new(Local(exec)));
    Ok(Executors {
        executors: map,
        tx,
        events,
    })
}
