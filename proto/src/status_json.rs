//! The cluster's status (`Clients.Status`) as JSON: the same fields as the wire message,
//! rates rounded; what `cubeswarm status --format json` prints and the coordinator's live
//! page polls.

use crate::wire as w;
use serde_json::{json, Value};

/// Rounds to three decimals (rates in JSON).
fn r3(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

/// The status as JSON: the same fields as the wire message, rates rounded.
pub fn to_json(s: &w::ClusterStatus) -> Value {
    let workers: Vec<Value> = s
        .workers
        .iter()
        .map(|x| {
            json!({
                "executor": x.executor,
                "worker_id": x.worker_id,
                "host": x.host,
                "threads": x.threads,
                "slots": x.slots,
                "running": x.running,
                "tables": x.tables,
                "draining": x.draining,
                "jobs_done": x.jobs_done,
                "positions_done": x.positions_done,
                "positions_per_second": r3(x.positions_per_second),
                "last_heard_ms": x.last_heard_ms,
                "connected_ms": x.connected_ms,
            })
        })
        .collect();
    let requests: Vec<Value> = s
        .open_requests
        .iter()
        .map(|r| {
            json!({
                "client": r.client,
                "table": r.table,
                "method": r.method,
                "lines": r.lines,
                "records": r.records,
                "input_done": r.input_done,
                "deepening_line": r.deepening_line,
                "deepening_depth": r.deepening_depth,
                "positions_per_second": r3(r.positions_per_second),
                "eta_seconds": r.eta_seconds.map(r3),
                "age_ms": r.age_ms,
            })
        })
        .collect();
    let events: Vec<Value> = s
        .events
        .iter()
        .map(|e| json!({"seq": e.seq, "ago_ms": e.ago_ms, "kind": e.kind, "text": e.text}))
        .collect();
    json!({
        "version": s.version,
        "uptime_ms": s.uptime_ms,
        "workers": workers,
        "requests": requests,
        "jobs_queued": s.jobs_queued,
        "jobs_running": s.jobs_running,
        "jobs_done": s.jobs_done,
        "requeued": s.requeued,
        "lease_expiries": s.lease_expiries,
        "positions": s.positions,
        "nodes": s.nodes,
        "positions_per_second": r3(s.positions_per_second),
        "throughput": s.throughput.iter().map(|&v| r3(v)).collect::<Vec<f64>>(),
        "throughput_step_ms": s.throughput_step_ms,
        "events": events,
    })
}
