//! What the operator's view needs beyond the scheduler's counters: per-executor and
//! per-request rates, recent events, throughput over the last minutes, and histograms of
//! job run time and queue wait. Bounded in memory whatever the load; the driver feeds it
//! (a call per event), status pages and `/metrics` read it.

use super::event::ClientKey;
use crate::executor::ExecutorId;
use crate::scheduler::RequestId;
use proto::{Job, JobOutput, JobResult};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// How often rates are sampled (µs).
pub const SAMPLE_EVERY_US: u64 = 2_000_000;
/// Samples a rate spans (30 × 2 s: about a minute).
const RATE_SAMPLES: usize = 31;
/// Throughput steps kept (150 × 2 s: five minutes).
pub const THROUGHPUT_STEPS: usize = 150;
/// Recent events kept.
pub const EVENTS_KEPT: usize = 64;
/// Lines whose arrival time is kept at most (for the queue-wait histogram).
const ARRIVALS_KEPT: usize = 1 << 17;

/// Upper bounds (seconds) of the histograms' buckets (`+Inf` is implied).
pub const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0, 300.0, 1800.0,
];

/// A histogram of durations over [`BUCKETS`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Observations per bucket (not cumulative); the last one is `+Inf`.
    pub counts: [u64; BUCKETS.len() + 1],
    /// Sum of the observations (µs).
    pub sum_us: u64,
    /// Observations.
    pub count: u64,
}

impl Histogram {
    /// Adds a duration of `us` microseconds.
    pub fn observe(&mut self, us: u64) {
        let secs = us as f64 / 1e6;
        let i = BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BUCKETS.len());
        self.counts[i] += 1;
        self.sum_us = self.sum_us.saturating_add(us);
        self.count += 1;
    }
}

/// Values of a counter at sampling times, to read a recent rate off.
#[derive(Clone, Debug, Default)]
struct Series(VecDeque<(u64, u64)>);

impl Series {
    fn push(&mut self, now: u64, v: u64) {
        if self.0.len() == RATE_SAMPLES {
            self.0.pop_front();
        }
        self.0.push_back((now, v));
    }

    /// Per second, between the oldest sample and `(now, v)`.
    fn rate(&self, now: u64, v: u64) -> f64 {
        match self.0.front() {
            Some(&(t, v0)) if now > t => v.saturating_sub(v0) as f64 * 1e6 / (now - t) as f64,
            _ => 0.0,
        }
    }
}

/// What an executor did, seen from the driver.
#[derive(Clone, Debug, Default)]
pub struct ExecStats {
    /// When it joined (µs, driver clock).
    pub joined_us: u64,
    /// When it last said anything.
    pub last_heard_us: u64,
    /// Jobs it answered.
    pub jobs_done: u64,
    /// Positions of the batch jobs it answered.
    pub positions_done: u64,
    series: Series,
}

/// A request's times.
#[derive(Clone, Debug, Default)]
struct ReqStats {
    opened_us: u64,
    series: Series,
}

/// Something that happened (for the recent-events list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsEvent {
    /// Increasing from 1.
    pub seq: u64,
    /// When (µs, driver clock).
    pub at_us: u64,
    /// "worker_joined", "worker_left", "lease_expired", "worker_distrusted",
    /// "request_opened", "request_done", "request_failed".
    pub kind: &'static str,
    /// In words.
    pub text: String,
}

/// See the module documentation.
#[derive(Debug, Default)]
pub struct Stats {
    next_sample: u64,
    records: Series,
    /// Cluster positions per second, one per sampling step, oldest first.
    throughput: VecDeque<f64>,
    last_sample: Option<(u64, u64)>,
    execs: BTreeMap<ExecutorId, ExecStats>,
    reqs: BTreeMap<ClientKey, ReqStats>,
    events: VecDeque<StatsEvent>,
    next_seq: u64,
    arrivals: HashMap<(RequestId, u64), u64>,
    /// Executors' wall time per answered job.
    pub run_time: Histogram,
    /// From a line's arrival to the dispatch of its first job.
    pub queue_wait: Histogram,
}

impl Stats {
    pub(super) fn event(&mut self, now: u64, kind: &'static str, text: String) {
        if self.events.len() == EVENTS_KEPT {
            self.events.pop_front();
        }
        self.next_seq += 1;
        self.events.push_back(StatsEvent {
            seq: self.next_seq,
            at_us: now,
            kind,
            text,
        });
    }

    pub(super) fn joined(&mut self, id: ExecutorId, name: &str, threads: u32, now: u64) {
        self.execs.insert(
            id,
            ExecStats {
                joined_us: now,
                last_heard_us: now,
                ..ExecStats::default()
            },
        );
        self.event(
            now,
            "worker_joined",
            format!(
                "worker {name} joined ({threads} thread{})",
                if threads == 1 { "" } else { "s" }
            ),
        );
    }

    pub(super) fn heard(&mut self, id: ExecutorId, now: u64) {
        if let Some(x) = self.execs.get_mut(&id) {
            x.last_heard_us = now;
        }
    }

    pub(super) fn result(&mut self, id: ExecutorId, r: &JobResult, now: u64) {
        self.run_time.observe(r.micros);
        if let Some(x) = self.execs.get_mut(&id) {
            x.last_heard_us = now;
            x.jobs_done += 1;
            if let Ok(JobOutput::Batch(b)) = &r.output {
                x.positions_done += b.len() as u64;
            }
        }
    }

    pub(super) fn left(&mut self, id: ExecutorId, name: &str, expired: bool, now: u64) {
        self.execs.remove(&id);
        if expired {
            self.event(
                now,
                "lease_expired",
                format!("worker {name}: lease expired, its jobs requeued"),
            );
        } else {
            self.event(now, "worker_left", format!("worker {name} left"));
        }
    }

    pub(super) fn distrusted(&mut self, name: &str, r: &crate::scheduler::Rejection, now: u64) {
        self.event(
            now,
            "worker_distrusted",
            format!(
                "worker {name}: answer to job {} refused (line {}: {}); it gets no more work",
                r.job.0, r.line, r.reason
            ),
        );
    }

    pub(super) fn arrived(&mut self, req: RequestId, line: u64, now: u64) {
        if self.arrivals.len() < ARRIVALS_KEPT {
            self.arrivals.insert((req, line), now);
        }
    }

    /// A job of request and line `of` goes out: its lines' first dispatch ends their
    /// queue wait.
    pub(super) fn dispatched(&mut self, of: Option<(RequestId, u64)>, job: &Job, now: u64) {
        let (Some((req, line)), 1) = (of, job.attempt) else {
            return;
        };
        if self.arrivals.is_empty() {
            return;
        }
        let mut seen = |line: u64, h: &mut Histogram| {
            if let Some(t) = self.arrivals.remove(&(req, line)) {
                h.observe(now.saturating_sub(t));
            }
        };
        match &job.work {
            proto::job::Work::Batch { items, .. } => {
                for it in items {
                    seen(it.line, &mut self.queue_wait);
                }
            }
            proto::job::Work::Subtrees(_) => seen(line, &mut self.queue_wait),
        }
    }

    pub(super) fn opened(&mut self, key: ClientKey, table: &str, now: u64) {
        self.reqs.insert(
            key,
            ReqStats {
                opened_us: now,
                series: Series::default(),
            },
        );
        self.event(
            now,
            "request_opened",
            format!("client {} opened a request ({table})", key.0),
        );
    }

    pub(super) fn ended(
        &mut self,
        key: ClientKey,
        req: RequestId,
        records: u64,
        failure: Option<String>,
        now: u64,
    ) {
        let opened = self.reqs.remove(&key).map_or(now, |r| r.opened_us);
        if !self.arrivals.is_empty() {
            self.arrivals.retain(|&(r, _), _| r != req);
        }
        let secs = now.saturating_sub(opened) as f64 / 1e6;
        match failure {
            None => self.event(
                now,
                "request_done",
                format!(
                    "client {}: request done, {records} records in {secs:.1} s",
                    key.0
                ),
            ),
            Some(e) => self.event(
                now,
                "request_failed",
                format!(
                    "client {}: request ended after {records} records: {e}",
                    key.0
                ),
            ),
        }
    }

    /// Whether a sample is due at `now`.
    pub(super) fn sample_due(&self, now: u64) -> bool {
        now >= self.next_sample
    }

    /// Samples the counters: the cluster's records, each executor's positions and each
    /// request's records (`reqs`).
    pub(super) fn sample(
        &mut self,
        now: u64,
        records: u64,
        reqs: impl Iterator<Item = (ClientKey, u64)>,
    ) {
        self.next_sample = now + SAMPLE_EVERY_US;
        if let Some((t, v)) = self.last_sample {
            let dt = now.saturating_sub(t).max(1);
            // Steps missed while idle count as zero throughput.
            let missed = (dt / SAMPLE_EVERY_US)
                .saturating_sub(1)
                .min(THROUGHPUT_STEPS as u64);
            for _ in 0..missed {
                self.push_throughput(0.0);
            }
            let per = dt.min(SAMPLE_EVERY_US * 2);
            self.push_throughput(records.saturating_sub(v) as f64 * 1e6 / per as f64);
        }
        self.last_sample = Some((now, records));
        self.records.push(now, records);
        for x in self.execs.values_mut() {
            x.series.push(now, x.positions_done);
        }
        for (key, n) in reqs {
            if let Some(r) = self.reqs.get_mut(&key) {
                r.series.push(now, n);
            }
        }
    }

    fn push_throughput(&mut self, v: f64) {
        if self.throughput.len() == THROUGHPUT_STEPS {
            self.throughput.pop_front();
        }
        self.throughput.push_back(v);
    }

    /// The cluster's positions per second over about the last minute.
    pub fn rate(&self, now: u64, records: u64) -> f64 {
        self.records.rate(now, records)
    }

    /// Throughput steps, oldest first.
    pub fn throughput(&self) -> impl Iterator<Item = f64> + '_ {
        self.throughput.iter().copied()
    }

    /// An executor's figures.
    pub fn exec(&self, id: ExecutorId) -> Option<&ExecStats> {
        self.execs.get(&id)
    }

    /// An executor's positions per second over about the last minute.
    pub fn exec_rate(&self, id: ExecutorId, now: u64) -> f64 {
        self.execs
            .get(&id)
            .map_or(0.0, |x| x.series.rate(now, x.positions_done))
    }

    /// When a request opened, and its records per second over about the last minute.
    pub fn request(&self, key: ClientKey, now: u64, records: u64) -> (u64, f64) {
        self.reqs
            .get(&key)
            .map_or((now, 0.0), |r| (r.opened_us, r.series.rate(now, records)))
    }

    /// Recent events, oldest first.
    pub fn events(&self) -> impl Iterator<Item = &StatsEvent> {
        self.events.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_by_upper_bound() {
        let mut h = Histogram::default();
        h.observe(1_000); // 1 ms: the first bucket (le=0.001)
        h.observe(1_001);
        h.observe(3_600_000_000); // an hour: +Inf
        assert_eq!(h.counts[0], 1);
        assert_eq!(h.counts[1], 1);
        assert_eq!(h.counts[BUCKETS.len()], 1);
        assert_eq!(h.count, 3);
        assert_eq!(h.sum_us, 3_600_002_001);
    }

    #[test]
    fn rates_span_the_kept_samples_and_events_are_bounded() {
        let mut s = Stats::default();
        let k = ClientKey(7);
        s.opened(k, "twophase", 0);
        for i in 0..100u64 {
            // 10 records per second.
            s.sample(i * SAMPLE_EVERY_US, i * 20, [(k, i * 20)].into_iter());
        }
        let now = 100 * SAMPLE_EVERY_US;
        assert!((s.rate(now, 2000) - 10.0).abs() < 1e-9);
        assert!((s.request(k, now, 2000).1 - 10.0).abs() < 1e-9);
        assert_eq!(s.throughput().count(), 99);
        assert!(s.throughput().all(|v| (v - 10.0).abs() < 1e-9));
        for i in 0..200 {
            s.event(i, "worker_joined", format!("{i}"));
        }
        assert_eq!(s.events().count(), EVENTS_KEPT);
        assert_eq!(s.events().last().map(|e| e.seq), Some(201));
    }

    #[test]
    fn idle_steps_count_as_zero() {
        let mut s = Stats::default();
        s.sample(0, 0, std::iter::empty());
        s.sample(10 * SAMPLE_EVERY_US, 0, std::iter::empty());
        assert_eq!(s.throughput().count(), 10);
    }
}
