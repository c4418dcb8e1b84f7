//! The cluster's status (the `Clients.Status` RPC, `cubeswarm status`, the live page),
//! read off the driver.

use coordinator::driver::stats::SAMPLE_EVERY_US;
use coordinator::driver::Driver;
use proto::wire as w;

/// Milliseconds from `then` to `now` (µs, driver clock).
fn ms_since(now: u64, then: u64) -> u64 {
    now.saturating_sub(then) / 1000
}

/// The status of the cluster `d` drives.
pub(super) fn cluster_status(d: &Driver<'_>) -> w::ClusterStatus {
    let sched = d.scheduler();
    let c = sched.counters();
    let (running, queued) = sched.job_counts();
    let now = d.now();
    let stats = d.stats();
    let workers = d
        .executors()
        .into_iter()
        .map(|x| {
            let s = stats.exec(x.id);
            w::WorkerStatus {
                executor: x.id.0,
                worker_id: x.name,
                host: x.host,
                threads: x.threads,
                slots: u32::try_from(x.slots).unwrap_or(u32::MAX),
                running: x.running as u32,
                tables: x.tables,
                draining: x.slots == 0,
                jobs_done: s.map_or(0, |s| s.jobs_done),
                positions_done: s.map_or(0, |s| s.positions_done),
                positions_per_second: stats.exec_rate(x.id, now),
                last_heard_ms: s.map_or(0, |s| ms_since(now, s.last_heard_us)),
                connected_ms: s.map_or(0, |s| ms_since(now, s.joined_us)),
            }
        })
        .collect();
    let open_requests = d
        .requests()
        .into_iter()
        .map(|r| {
            let left = r.lines.saturating_sub(r.records);
            let eta = (r.input_done && r.rate > 0.0).then(|| left as f64 / r.rate);
            w::RequestStatus {
                client: r.key.0,
                method: if r.table == proto::catalog::TWOPHASE {
                    "twophase"
                } else {
                    "optimal"
                }
                .to_string(),
                table: r.table,
                lines: r.lines,
                records: r.records,
                input_done: r.input_done,
                deepening_line: r.deepening.map(|x| x.line),
                deepening_depth: r.deepening.map(|x| u32::from(x.depth)),
                positions_per_second: r.rate,
                eta_seconds: eta,
                age_ms: ms_since(now, r.opened_us),
            }
        })
        .collect();
    let events = stats
        .events()
        .map(|e| w::StatusEvent {
            seq: e.seq,
            ago_ms: ms_since(now, e.at_us),
            kind: e.kind.to_string(),
            text: e.text.clone(),
        })
        .collect();
    w::ClusterStatus {
        version: proto::VERSION.to_string(),
        workers,
        requests: d.request_count() as u64,
        jobs_queued: queued as u64,
        jobs_running: running as u64,
        jobs_done: c.jobs_done,
        requeued: c.requeued,
        lease_expiries: c.lease_expiries,
        positions: c.records,
        nodes: c.nodes,
        open_requests,
        events,
        uptime_ms: now / 1000,
        positions_per_second: stats.rate(now, c.records),
        throughput: stats.throughput().collect(),
        throughput_step_ms: SAMPLE_EVERY_US / 1000,
    }
}
