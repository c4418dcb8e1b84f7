//! The driver's state as status pages read it: its open requests, and the [`Stats`] it
//! keeps for them.

use super::stats::Stats;
use super::{ClientKey, Driver};
use crate::executor::ExecutorId;

/// One open request, seen from outside.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestView {
    /// Its key (the client connection's number on a coordinator).
    pub key: ClientKey,
    /// The table its jobs need.
    pub table: String,
    /// Lines received.
    pub lines: u64,
    /// Records released.
    pub records: u64,
    /// No more lines will come.
    pub input_done: bool,
    /// The oldest hard position being deepened, if any.
    pub deepening: Option<crate::Deepening>,
    /// When it opened (µs, driver clock).
    pub opened_us: u64,
    /// Records per second over about the last minute.
    pub rate: f64,
}

/// What one executor looks like from outside (for status pages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorView {
    /// Its id.
    pub id: ExecutorId,
    /// Its name.
    pub name: String,
    /// Where it runs (see [`Executor::host`](crate::executor::Executor::host)).
    pub host: String,
    /// Its threads.
    pub threads: u32,
    /// Jobs it may hold now (0: draining).
    pub slots: usize,
    /// Jobs it runs.
    pub running: usize,
    /// Its tables.
    pub tables: Vec<String>,
}

impl Driver<'_> {
    /// The executors, by id.
    pub fn executors(&self) -> Vec<ExecutorView> {
        self.executors
            .iter()
            .map(|(&id, e)| {
                let state = self.sched.executor_state(id);
                ExecutorView {
                    id,
                    name: e.exec.name(),
                    host: e.exec.host(),
                    threads: e.threads,
                    slots: state.map_or(0, |s| s.0),
                    running: state.map_or(0, |s| s.1),
                    tables: e.exec.tables(),
                }
            })
            .collect()
    }

    /// The open requests, by key.
    pub fn requests(&self) -> Vec<RequestView> {
        self.requests
            .iter()
            .map(|(&key, r)| {
                let p = self.sched.progress(r.id);
                let (opened_us, rate) = self.stats.request(key, self.now, r.records);
                RequestView {
                    key,
                    table: r.table.clone(),
                    lines: r.lines,
                    records: r.records,
                    input_done: p.input_done,
                    deepening: p.deepening,
                    opened_us,
                    rate,
                }
            })
            .collect()
    }

    /// Rates, recent events and histograms.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Samples the rates when due.
    pub(super) fn sample_stats(&mut self) {
        if !self.stats.sample_due(self.now) {
            return;
        }
        let records = self.sched.counters().records;
        let reqs = self.requests.iter().map(|(&k, r)| (k, r.records));
        self.stats.sample(self.now, records, reqs);
    }
}
