//! Prometheus metrics: the core publishes its counters here, an HTTP endpoint renders
//! them in the text exposition format.

use crate::scheduler::Scheduler;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// The figures the core publishes (each a plain atomic: readers never block the core).
pub struct Metrics {
    start: Instant,
    jobs_queued: AtomicU64,
    jobs_running: AtomicU64,
    jobs_created: AtomicU64,
    jobs_dispatched: AtomicU64,
    jobs_done: AtomicU64,
    jobs_requeued: AtomicU64,
    lease_expiries: AtomicU64,
    ignored_results: AtomicU64,
    positions: AtomicU64,
    nodes: AtomicU64,
    workers: AtomicU64,
    workers_refused: AtomicU64,
    clients_refused: AtomicU64,
    ready: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// All zero.
    pub fn new() -> Metrics {
        Metrics {
            start: Instant::now(),
            jobs_queued: AtomicU64::new(0),
            jobs_running: AtomicU64::new(0),
            jobs_created: AtomicU64::new(0),
            jobs_dispatched: AtomicU64::new(0),
            jobs_done: AtomicU64::new(0),
            jobs_requeued: AtomicU64::new(0),
            lease_expiries: AtomicU64::new(0),
            ignored_results: AtomicU64::new(0),
            positions: AtomicU64::new(0),
            nodes: AtomicU64::new(0),
            workers: AtomicU64::new(0),
            workers_refused: AtomicU64::new(0),
            clients_refused: AtomicU64::new(0),
            ready: AtomicU64::new(0),
        }
    }

    /// Copies the scheduler's counters (called by the core after every round of events).
    pub fn publish(&self, sched: &Scheduler, workers: usize) {
        let c = sched.counters();
        let (running, queued) = sched.job_counts();
        self.jobs_queued.store(queued as u64, Relaxed);
        self.jobs_running.store(running as u64, Relaxed);
        self.jobs_created.store(c.jobs_created, Relaxed);
        self.jobs_dispatched.store(c.dispatched, Relaxed);
        self.jobs_done.store(c.jobs_done, Relaxed);
        self.jobs_requeued.store(c.requeued, Relaxed);
        self.lease_expiries.store(c.lease_expiries, Relaxed);
        self.ignored_results.store(c.ignored_results, Relaxed);
        self.positions.store(c.records, Relaxed);
        self.nodes.store(c.nodes, Relaxed);
        self.workers.store(workers as u64, Relaxed);
    }

    /// A worker was refused (token, version or table mismatch).
    pub fn worker_refused(&self) {
        self.workers_refused.fetch_add(1, Relaxed);
    }

    /// A client was refused (token, bad request).
    pub fn client_refused(&self) {
        self.clients_refused.fetch_add(1, Relaxed);
    }

    /// Whether the coordinator serves (for the health service and the metric).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(u64::from(ready), Relaxed);
    }

    /// The text exposition format.
    ///
    /// Rates (positions/s, nodes/s) are Prometheus' business:
    /// `rate(cubeswarm_positions_total[1m])`. The process-lifetime averages are given too
    /// for a quick look without a Prometheus server.
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(2048);
        let mut put = |name: &str, kind: &str, help: &str, v: u64| {
            let _ = writeln!(s, "# HELP {name} {help}");
            let _ = writeln!(s, "# TYPE {name} {kind}");
            let _ = writeln!(s, "{name} {v}");
        };
        put(
            "cubeswarm_jobs_queued",
            "gauge",
            "Jobs waiting for a worker.",
            self.jobs_queued.load(Relaxed),
        );
        put(
            "cubeswarm_jobs_running",
            "gauge",
            "Jobs dispatched and not answered.",
            self.jobs_running.load(Relaxed),
        );
        put(
            "cubeswarm_jobs_created_total",
            "counter",
            "Jobs made from requests.",
            self.jobs_created.load(Relaxed),
        );
        put(
            "cubeswarm_jobs_dispatched_total",
            "counter",
            "Jobs sent to workers (re-sends included).",
            self.jobs_dispatched.load(Relaxed),
        );
        put(
            "cubeswarm_jobs_done_total",
            "counter",
            "Jobs whose result was accepted.",
            self.jobs_done.load(Relaxed),
        );
        put(
            "cubeswarm_jobs_requeued_total",
            "counter",
            "Jobs put back in the queue (worker gone or lease expired).",
            self.jobs_requeued.load(Relaxed),
        );
        put(
            "cubeswarm_lease_expiries_total",
            "counter",
            "Jobs whose lease ended with their worker silent.",
            self.lease_expiries.load(Relaxed),
        );
        put(
            "cubeswarm_results_ignored_total",
            "counter",
            "Results ignored (late, repeated, cancelled or superseded).",
            self.ignored_results.load(Relaxed),
        );
        put(
            "cubeswarm_positions_total",
            "counter",
            "Records released to clients (one per input line).",
            self.positions.load(Relaxed),
        );
        put(
            "cubeswarm_nodes_total",
            "counter",
            "Search nodes in accepted results.",
            self.nodes.load(Relaxed),
        );
        put(
            "cubeswarm_workers_connected",
            "gauge",
            "Workers with an open stream.",
            self.workers.load(Relaxed),
        );
        put(
            "cubeswarm_workers_refused_total",
            "counter",
            "Workers refused (token, version, table checksum).",
            self.workers_refused.load(Relaxed),
        );
        put(
            "cubeswarm_clients_refused_total",
            "counter",
            "Client requests refused (token, bad request).",
            self.clients_refused.load(Relaxed),
        );
        put(
            "cubeswarm_ready",
            "gauge",
            "1 when the coordinator serves.",
            self.ready.load(Relaxed),
        );
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let _ = writeln!(
            s,
            "# HELP cubeswarm_positions_per_second Positions per second since start.\n# TYPE cubeswarm_positions_per_second gauge\ncubeswarm_positions_per_second {:.3}",
            self.positions.load(Relaxed) as f64 / secs
        );
        let _ = writeln!(
            s,
            "# HELP cubeswarm_nodes_per_second Search nodes per second since start.\n# TYPE cubeswarm_nodes_per_second gauge\ncubeswarm_nodes_per_second {:.3}",
            self.nodes.load(Relaxed) as f64 / secs
        );
        s
    }
}
