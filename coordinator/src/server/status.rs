//! The cluster's status (the `Clients.Status` RPC), read off the driver.

use crate::driver::Driver;
use proto::wire as w;

/// The status of the cluster `d` drives.
pub(super) fn cluster_status(d: &Driver<'_>) -> w::ClusterStatus {
    let sched = d.scheduler();
    let c = sched.counters();
    let (running, queued) = sched.job_counts();
    let workers = d
        .executors()
        .into_iter()
        .map(|x| w::WorkerStatus {
            executor: x.id.0,
            worker_id: x.name,
            threads: x.threads,
            slots: x.threads,
            running: x.running as u32,
            tables: x.tables,
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
    }
}
