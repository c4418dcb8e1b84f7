//! The cluster's status as an operator reads it: the `Clients.Status` RPC, its JSON form
//! (what `cubeswarm status --format json` prints and the coordinator's live page polls)
//! and a plain-text table.

use super::error::ClientError;
use super::session::Broken;
pub use proto::status_json::to_json;
use proto::transport::{self, ClientConfig, TransportError};
use proto::wire as w;
use std::fmt::Write as _;

/// Asks the coordinator of `cfg` for its status (one attempt).
pub async fn fetch(cfg: &ClientConfig) -> Result<w::ClusterStatus, ClientError> {
    let channel = cfg.connect().await?;
    let auth = cfg.auth()?;
    transport::clients_client(channel, auth)
        .status(w::StatusRequest {})
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| ClientError::Refused {
            code: s.code(),
            message: s.message().to_string(),
        })
}

/// [`fetch`] on a runtime of its own, for a caller that has none.
pub fn query(cfg: &ClientConfig) -> Result<w::ClusterStatus, ClientError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClientError::Runtime)?
        .block_on(fetch(cfg))
}

/// Why a failed [`fetch`] may succeed later (the coordinator is away, restarting or
/// shutting down), as the client says it; `None` for wrong settings or a refusal.
pub fn unreachable(e: &ClientError) -> Option<String> {
    match e {
        ClientError::Transport(t @ TransportError::Connect { .. }) => Some(t.to_string()),
        ClientError::Refused { code, message } => {
            match Broken::status(&tonic::Status::new(*code, message.clone())) {
                Broken::Retry(why) => Some(why),
                Broken::Fatal(_) => None,
            }
        }
        _ => None,
    }
}

/// A duration in seconds, short: "42 s", "3m05s", "2h07m".
pub fn short_duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "-".to_string();
    }
    let s = secs.round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// The status as text: totals, then a table of workers and one of open requests.
pub fn render_table(s: &w::ClusterStatus) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "coordinator {}  up {}  workers {}  requests {}  queued {}  running {}  done {}  \
         positions {}  {:.1} pos/s  requeued {}  lease expiries {}",
        s.version,
        short_duration(s.uptime_ms as f64 / 1000.0),
        s.workers.len(),
        s.open_requests.len(),
        s.jobs_queued,
        s.jobs_running,
        s.jobs_done,
        s.positions,
        s.positions_per_second,
        s.requeued,
        s.lease_expiries,
    );
    let _ = writeln!(o);
    let mut rows = vec![[
        "WORKER".to_string(),
        "HOST".into(),
        "ID".into(),
        "THREADS".into(),
        "RUNNING".into(),
        "JOBS".into(),
        "POS/S".into(),
        "HEARD".into(),
        "STATE".into(),
        "TABLES".into(),
    ]];
    for x in &s.workers {
        rows.push([
            x.worker_id.clone(),
            if x.host.is_empty() {
                "-".into()
            } else {
                x.host.clone()
            },
            x.executor.to_string(),
            x.threads.to_string(),
            x.running.to_string(),
            x.jobs_done.to_string(),
            format!("{:.1}", x.positions_per_second),
            format!("{} ago", short_duration(x.last_heard_ms as f64 / 1000.0)),
            if x.draining { "draining" } else { "serving" }.into(),
            x.tables.join(","),
        ]);
    }
    if s.workers.is_empty() {
        let _ = writeln!(o, "no workers connected");
    } else {
        put_rows(&mut o, &rows);
    }
    let _ = writeln!(o);
    let mut rows = vec![[
        "CLIENT".to_string(),
        "METHOD".into(),
        "TABLE".into(),
        "PROGRESS".into(),
        "POS/S".into(),
        "ETA".into(),
        "AGE".into(),
    ]];
    for r in &s.open_requests {
        let progress = match (r.deepening_line, r.deepening_depth) {
            (Some(line), Some(depth)) if r.lines <= 1 => {
                format!("line {line}: depth {depth}")
            }
            _ if r.input_done => format!("{}/{}", r.records, r.lines),
            _ => format!("{}/{}+", r.records, r.lines),
        };
        rows.push([
            r.client.to_string(),
            r.method.clone(),
            r.table.clone(),
            progress,
            format!("{:.1}", r.positions_per_second),
            r.eta_seconds.map_or("-".into(), short_duration),
            short_duration(r.age_ms as f64 / 1000.0),
        ]);
    }
    if s.open_requests.is_empty() {
        let _ = writeln!(o, "no requests open");
    } else {
        put_rows(&mut o, &rows);
    }
    o
}

/// Left-aligned columns, two spaces apart.
fn put_rows<const N: usize>(o: &mut String, rows: &[[String; N]]) {
    let mut width = [0usize; N];
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    for r in rows {
        let mut line = String::new();
        for (i, (c, w)) in r.iter().zip(width).enumerate() {
            if i + 1 == N {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        let _ = writeln!(o, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> w::ClusterStatus {
        w::ClusterStatus {
            version: "1".into(),
            workers: vec![w::WorkerStatus {
                executor: 3,
                worker_id: "host-12".into(),
                host: "10.0.0.7:51234".into(),
                threads: 4,
                running: 2,
                tables: vec!["twophase".into()],
                positions_per_second: 12.3456,
                ..Default::default()
            }],
            open_requests: vec![w::RequestStatus {
                client: 9,
                method: "twophase".into(),
                table: "twophase".into(),
                lines: 100,
                records: 40,
                input_done: true,
                positions_per_second: 10.0,
                eta_seconds: Some(6.0),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn table_shows_workers_and_requests() {
        let t = render_table(&sample());
        assert!(t.contains("host-12") && t.contains("10.0.0.7:51234"), "{t}");
        assert!(t.contains("40/100"), "{t}");
        assert!(t.contains("6 s"), "{t}");
        let w = render_table(&w::ClusterStatus::default());
        assert!(w.contains("no workers connected") && w.contains("no requests open"));
    }

    #[test]
    fn json_keeps_the_fields() {
        let j = to_json(&sample());
        assert_eq!(j["workers"][0]["worker_id"], "host-12");
        assert_eq!(j["workers"][0]["host"], "10.0.0.7:51234");
        assert_eq!(j["workers"][0]["positions_per_second"], 12.346);
        assert_eq!(j["requests"][0]["eta_seconds"], 6.0);
        assert_eq!(j["requests"][0]["deepening_depth"], serde_json::Value::Null);
    }

    #[test]
    fn an_absent_coordinator_is_unreachable_a_refusal_is_not() {
        use tonic::Code;
        let refused = |code| ClientError::Refused {
            code,
            message: "m".into(),
        };
        assert_eq!(
            unreachable(&refused(Code::Unavailable)).as_deref(),
            Some("m (Unavailable)")
        );
        assert_eq!(unreachable(&refused(Code::Unauthenticated)), None);
        assert_eq!(unreachable(&ClientError::NoRecord), None);
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(short_duration(5.2), "5 s");
        assert_eq!(short_duration(185.0), "3m05s");
        assert_eq!(short_duration(7620.0), "2h07m");
        assert_eq!(short_duration(f64::NAN), "-");
    }
}
