//! Prometheus metrics: the core publishes its counters here, an HTTP endpoint renders
//! them in the text exposition format.

use coordinator::driver::stats::{Histogram, BUCKETS};
use coordinator::driver::{Driver, ExecutorView};
use coordinator::scheduler::Scheduler;
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
    /// Results refused because a solution failed its check.
    rejected_results: AtomicU64,
    /// Workers given no more work because an answer of theirs was refused.
    workers_distrusted: AtomicU64,
    /// Leased jobs a worker's heartbeats did not list for a lease.
    jobs_lost: AtomicU64,
    /// Claims run again on another worker, and what came of them.
    claims_checked: AtomicU64,
    claims_agreed: AtomicU64,
    claims_disputed: AtomicU64,
    check_nodes: AtomicU64,
    /// Workers caught lying by a check, and positions searched again without them.
    liars: AtomicU64,
    positions_restarted: AtomicU64,
    /// Jobs taken back from a worker that held them far too long.
    jobs_overdue: AtomicU64,
    /// Running jobs asked to hand back their unstarted pieces.
    splits_asked: AtomicU64,
    /// Jobs that handed back pieces.
    splits: AtomicU64,
    /// Units and pieces handed back.
    pieces_handed_back: AtomicU64,
    /// Hand-backs ignored (late, or for a job not asked).
    ignored_handbacks: AtomicU64,
    /// Nodes of accepted jobs of a depth started early.
    early_nodes: AtomicU64,
    /// Queued jobs of a depth started early cut again on whole counts.
    jobs_recut: AtomicU64,
    positions: AtomicU64,
    nodes: AtomicU64,
    workers: AtomicU64,
    workers_refused: AtomicU64,
    /// Of those, refused because a table they hold differs from the coordinator's.
    workers_refused_table: AtomicU64,
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
            rejected_results: AtomicU64::new(0),
            claims_checked: AtomicU64::new(0),
            claims_agreed: AtomicU64::new(0),
            claims_disputed: AtomicU64::new(0),
            check_nodes: AtomicU64::new(0),
            liars: AtomicU64::new(0),
            positions_restarted: AtomicU64::new(0),
            jobs_overdue: AtomicU64::new(0),
            workers_distrusted: AtomicU64::new(0),
            jobs_lost: AtomicU64::new(0),
            splits_asked: AtomicU64::new(0),
            splits: AtomicU64::new(0),
            pieces_handed_back: AtomicU64::new(0),
            ignored_handbacks: AtomicU64::new(0),
            early_nodes: AtomicU64::new(0),
            jobs_recut: AtomicU64::new(0),
            positions: AtomicU64::new(0),
            nodes: AtomicU64::new(0),
            workers: AtomicU64::new(0),
            workers_refused: AtomicU64::new(0),
            workers_refused_table: AtomicU64::new(0),
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
        self.rejected_results.store(c.rejected_results, Relaxed);
        self.workers_distrusted
            .store(c.distrusted_executors, Relaxed);
        self.jobs_lost.store(c.lost_jobs, Relaxed);
        self.claims_checked.store(c.checks, Relaxed);
        self.claims_agreed.store(c.checks_agreed, Relaxed);
        self.claims_disputed.store(c.check_disputes, Relaxed);
        self.check_nodes.store(c.check_nodes, Relaxed);
        self.liars.store(c.liars, Relaxed);
        self.positions_restarted
            .store(c.restarted_positions, Relaxed);
        self.splits_asked.store(c.splits_asked, Relaxed);
        self.splits.store(c.splits, Relaxed);
        self.pieces_handed_back.store(c.pieces_handed_back, Relaxed);
        self.ignored_handbacks.store(c.ignored_handbacks, Relaxed);
        self.early_nodes.store(c.early_nodes, Relaxed);
        self.jobs_recut.store(c.recut_jobs, Relaxed);
        self.positions.store(c.records, Relaxed);
        self.nodes.store(c.nodes, Relaxed);
        self.workers.store(workers as u64, Relaxed);
    }

    /// A worker was refused (token, version or table mismatch).
    pub fn worker_refused(&self) {
        self.workers_refused.fetch_add(1, Relaxed);
    }

    /// A worker was refused because a table it holds differs from the coordinator's
    /// (counted in [`Metrics::worker_refused`] too).
    pub fn worker_refused_for_table(&self) {
        self.workers_refused_table.fetch_add(1, Relaxed);
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
        self.put_jobs(&mut s);
        self.put_results(&mut s);
        self.put_peers(&mut s);
        self.put_averages(&mut s);
        s
    }

    /// The jobs: queued, running, and how many were created, dispatched, done and
    /// requeued, and whose lease ran out.
    fn put_jobs(&self, s: &mut String) {
        put(
            s,
            "cubeswarm_jobs_queued",
            "gauge",
            "Jobs waiting for a worker.",
            self.jobs_queued.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_jobs_running",
            "gauge",
            "Jobs dispatched and not answered.",
            self.jobs_running.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_jobs_created_total",
            "counter",
            "Jobs made from requests.",
            self.jobs_created.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_jobs_dispatched_total",
            "counter",
            "Jobs sent to workers (re-sends included).",
            self.jobs_dispatched.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_jobs_done_total",
            "counter",
            "Jobs whose result was accepted.",
            self.jobs_done.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_jobs_requeued_total",
            "counter",
            "Jobs put back in the queue (worker gone or lease expired).",
            self.jobs_requeued.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_lease_expiries_total",
            "counter",
            "Jobs whose lease ended with their worker silent.",
            self.lease_expiries.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_splits_asked_total",
            "counter",
            "Running jobs asked to hand back the pieces they have not started.",
            self.splits_asked.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_splits_total",
            "counter",
            "Jobs that handed back pieces (each piece went into a new job).",
            self.splits.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_pieces_handed_back_total",
            "counter",
            "Units and pieces handed back by running jobs.",
            self.pieces_handed_back.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_handbacks_ignored_total",
            "counter",
            "Hand-backs ignored (their job had ended, was cancelled or superseded, or was not asked); not results.",
            self.ignored_handbacks.load(Relaxed),
        );
    }

    /// The results: ignored, refused (and the workers distrusted for it), and lost; and
    /// what the accepted ones brought (positions released, nodes searched).
    fn put_results(&self, s: &mut String) {
        put(
            s,
            "cubeswarm_results_ignored_total",
            "counter",
            "Results ignored (late, repeated, cancelled, superseded, or from a worker the job is not leased to).",
            self.ignored_results.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_results_rejected_total",
            "counter",
            "Results refused because a solution failed its check (it does not solve its position, or its length or prefix is not its job's).",
            self.rejected_results.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_workers_distrusted_total",
            "counter",
            "Workers given no more work because an answer of theirs was refused or a claim of theirs was caught false.",
            self.workers_distrusted.load(Relaxed),
        );
        let checks: [(&str, &str, &AtomicU64); 7] = [
            ("cubeswarm_claims_checked_total", "Claims (a subtree holds no solution, or exactly these) run again on another worker.", &self.claims_checked),
            ("cubeswarm_claims_agreed_total", "Checks whose second run agreed with the claim.", &self.claims_agreed),
            ("cubeswarm_claims_disputed_total", "Checks whose second run disagreed with the claim (a third run decided).", &self.claims_disputed),
            ("cubeswarm_check_nodes_total", "Search nodes of the checks' runs.", &self.check_nodes),
            ("cubeswarm_workers_caught_lying_total", "Workers whose claim disagreed with two runs that agreed (also in workers_distrusted).", &self.liars),
            ("cubeswarm_positions_restarted_total", "Open positions searched again because a worker that claimed something about them lied.", &self.positions_restarted),
            ("cubeswarm_jobs_overdue_total", "Jobs taken back from a worker that held them far past what they should take (20 times the prediction, at least a minute and four leases, doubled each attempt).", &self.jobs_overdue),
        ];
        for (name, help, v) in checks {
            put(s, name, "counter", help, v.load(Relaxed));
        }
        put(
            s,
            "cubeswarm_jobs_lost_total",
            "counter",
            "Leased jobs a worker's heartbeats did not list for a lease (its jobs were requeued and it must join again).",
            self.jobs_lost.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_positions_total",
            "counter",
            "Records released to clients (one per input line).",
            self.positions.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_nodes_total",
            "counter",
            "Search nodes in accepted results.",
            self.nodes.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_nodes_started_early_total",
            "counter",
            "Of those, nodes of jobs sent while a shallower depth of their position was still being proved empty (a depth started early on idle threads).",
            self.early_nodes.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_jobs_recut_total",
            "counter",
            "Queued jobs of a depth started early cut again once a depth before it was proved empty (ranked on its whole counts).",
            self.jobs_recut.load(Relaxed),
        );
    }

    /// The workers and clients: connected, refused; and whether the coordinator serves.
    fn put_peers(&self, s: &mut String) {
        put(
            s,
            "cubeswarm_workers_connected",
            "gauge",
            "Workers with an open stream.",
            self.workers.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_workers_refused_total",
            "counter",
            "Workers refused (token, version, table checksum).",
            self.workers_refused.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_workers_refused_table_total",
            "counter",
            "Workers refused because a table they hold differs from the coordinator's (checksum).",
            self.workers_refused_table.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_clients_refused_total",
            "counter",
            "Client requests refused (token, bad request).",
            self.clients_refused.load(Relaxed),
        );
        put(
            s,
            "cubeswarm_ready",
            "gauge",
            "1 when the coordinator serves.",
            self.ready.load(Relaxed),
        );
    }

    /// The process-lifetime averages: positions and nodes per second since the start.
    fn put_averages(&self, s: &mut String) {
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
    }
}

/// One metric family of one unlabelled value in the text format.
fn put(s: &mut String, name: &str, kind: &str, help: &str, v: u64) {
    let _ = writeln!(s, "# HELP {name} {help}");
    let _ = writeln!(s, "# TYPE {name} {kind}");
    let _ = writeln!(s, "{name} {v}");
}

/// Workers given their own label values at most (the first by executor id; the rest
/// are in the totals only), so a large cluster cannot blow up the series count.
pub const MAX_LABELLED_WORKERS: usize = 64;

/// A label value, escaped as the text format wants.
fn label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// One histogram in the text format.
fn put_histogram(s: &mut String, name: &str, help: &str, h: &Histogram) {
    let _ = writeln!(s, "# HELP {name} {help}");
    let _ = writeln!(s, "# TYPE {name} histogram");
    let mut acc = 0;
    for (i, b) in BUCKETS.iter().enumerate() {
        acc += h.counts[i];
        let _ = writeln!(s, "{name}_bucket{{le=\"{b}\"}} {acc}");
    }
    let _ = writeln!(s, "{name}_bucket{{le=\"+Inf\"}} {}", h.count);
    let _ = writeln!(s, "{name}_sum {:.6}", h.sum_us as f64 / 1e6);
    let _ = writeln!(s, "{name}_count {}", h.count);
}

/// The figures read off the driver (on its thread): job run time and queue wait
/// histograms, open requests, worker slots and draining workers, and per-worker rates
/// and counts for at most [`MAX_LABELLED_WORKERS`] workers.
pub fn render_driver(d: &Driver<'_>) -> String {
    let mut s = String::with_capacity(4096);
    let stats = d.stats();
    put_histogram(
        &mut s,
        "cubeswarm_job_run_seconds",
        "Wall time of answered jobs on their worker.",
        &stats.run_time,
    );
    put_histogram(
        &mut s,
        "cubeswarm_queue_wait_seconds",
        "From a line's arrival at the coordinator to the dispatch of its first job.",
        &stats.queue_wait,
    );
    let execs = d.executors();
    let slots: usize = execs.iter().map(|x| x.slots).sum();
    let draining = execs.iter().filter(|x| x.slots == 0).count();
    let _ = writeln!(
        s,
        "# HELP cubeswarm_requests_open Client requests open.\n# TYPE cubeswarm_requests_open gauge\ncubeswarm_requests_open {}",
        d.request_count()
    );
    let _ = writeln!(
        s,
        "# HELP cubeswarm_worker_slots Jobs the connected workers may hold at once.\n# TYPE cubeswarm_worker_slots gauge\ncubeswarm_worker_slots {slots}"
    );
    let _ = writeln!(
        s,
        "# HELP cubeswarm_workers_draining Connected workers that take no new jobs.\n# TYPE cubeswarm_workers_draining gauge\ncubeswarm_workers_draining {draining}"
    );
    let now = d.now();
    let labelled = &execs[..execs.len().min(MAX_LABELLED_WORKERS)];
    let mut family = |name: &str, kind: &str, help: &str, v: &dyn Fn(&ExecutorView) -> String| {
        let _ = writeln!(s, "# HELP {name} {help}");
        let _ = writeln!(s, "# TYPE {name} {kind}");
        for x in labelled {
            let _ = writeln!(s, "{name}{{worker=\"{}\"}} {}", label(&x.name), v(x));
        }
    };
    family(
        "cubeswarm_worker_positions_per_second",
        "gauge",
        "Positions per second of a worker over about the last minute (64 workers at most).",
        &|x| format!("{:.3}", stats.exec_rate(x.id, now)),
    );
    family(
        "cubeswarm_worker_jobs_done_total",
        "counter",
        "Jobs a worker answered since it joined (64 workers at most).",
        &|x| stats.exec(x.id).map_or(0, |e| e.jobs_done).to_string(),
    );
    family(
        "cubeswarm_worker_jobs_running",
        "gauge",
        "Jobs a worker runs (64 workers at most).",
        &|x| x.running.to_string(),
    );
    s
}
