//! The driver's state as status pages read it: its open requests, and the [`Stats`] it
//! keeps for them.

use super::stats::Stats;
use super::{ClientKey, Driver};

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

impl Driver<'_> {
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
