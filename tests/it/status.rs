//! The operator's view end to end: `cubeswarm status` (table and JSON), the live page and
//! its `/api/status` on the metrics address, the token on them, and the metric names the
//! dashboards and alert rules in deploy/ use, against a real coordinator with real workers.

use crate::common;

use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A GET with optional bearer token: (status code, headers, body).
fn get(addr: &str, path: &str, token: Option<&str>) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, head.to_string(), body.to_string())
}

fn status_json(addr: &str, token: Option<&str>) -> Value {
    let (code, _, body) = get(addr, "/api/status", token);
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// `cubeswarm status` with `args`: (exit status, stdout, stderr).
fn status_cmd(url: &str, args: &[&str]) -> (std::process::ExitStatus, String, String) {
    let mut all = vec!["status", "--coordinator", url];
    all.extend_from_slice(args);
    client(&all)
}

const SCRAMBLES: [&str; 6] = [
    "R U",
    "F2 D' L",
    "U R2 F B'",
    "L D2 B",
    "R' F U2",
    "D B2 L'",
];

#[test]
fn status_shows_the_workers_and_the_running_request_of_a_real_cluster() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("status");
    let (mut c, url) = coordinator(&dir, &["--metrics-listen", "127.0.0.1:0"]);
    let m = metrics_addr(&mut c);
    let _w1 = worker(
        &dir,
        "w1",
        &url,
        &["--table", "twophase", "--worker-id", "alpha"],
        &tables,
    );
    let _w2 = worker(
        &dir,
        "w2",
        &url,
        &["--table", "twophase", "--worker-id", "beta"],
        &tables,
    );
    // A request whose input stays open: it is running while we look.
    let out = dir.join("out.txt");
    let mut solve = Command::new(bin())
        .args(["solve", "--coordinator", &url, "--method", "twophase"])
        .args(["--quiet", "--input", "-", "--output", out.to_str().unwrap()])
        .env_remove("CUBESWARM_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = solve.stdin.take().unwrap();
    for s in SCRAMBLES {
        writeln!(stdin, "{s}").unwrap();
    }
    stdin.flush().unwrap();
    wait_for_records(&out, SCRAMBLES.len());
    eventually(Duration::from_secs(10), "records counted", || {
        status_json(&m, None)["requests"][0]["records"] == SCRAMBLES.len()
    });

    // The table.
    let (st, text, err) = status_cmd(&url, &[]);
    assert!(st.success(), "{err}");
    for want in [
        "alpha",
        "beta",
        "twophase",
        "6/6+",
        "serving",
        "workers 2",
        "127.0.0.1:",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    assert!(!text.contains("no requests open"), "{text}");

    // --watch: the table again and again, in place, until stopped.
    let mut watch = Command::new(bin())
        .args(["status", "--coordinator", &url, "--watch", "0.2"])
        .env_remove("CUBESWARM_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    let mut pipe = watch.stdout.take().unwrap();
    let mut buf = [0u8; 4096];
    while seen.matches("alpha").count() < 3 {
        let n = std::io::Read::read(&mut pipe, &mut buf).unwrap();
        assert!(n > 0, "--watch ended by itself:\n{seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    watch.kill().unwrap();
    let _ = watch.wait();
    assert!(seen.contains("6/6+"), "{seen}");
    assert!(seen.contains("\x1b[H\x1b[2J"), "redrawn in place: {seen:?}");

    // JSON, from the command and from the page's endpoint: the same figures.
    let (st, text, err) = status_cmd(&url, &["--format", "json"]);
    assert!(st.success(), "{err}");
    let j: Value = serde_json::from_str(&text).unwrap();
    let page = status_json(&m, None);
    for s in [&j, &page] {
        let mut ids: Vec<&str> = s["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["worker_id"].as_str().unwrap())
            .collect();
        ids.sort();
        assert_eq!(ids, ["alpha", "beta"], "{s:#}");
        assert!(
            s["workers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| w["tables"][0] == "twophase" && w["draining"] == false),
            "{s:#}"
        );
        // Started with --threads 1: one thread each (not the jobs each may hold).
        assert!(
            s["workers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| w["threads"] == 1),
            "{s:#}"
        );
        let joins: Vec<&str> = s["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "worker_joined")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(joins.len(), 2, "{s:#}");
        assert!(joins.iter().all(|t| t.ends_with("(1 thread)")), "{joins:?}");
        // Each worker's address as the coordinator sees it: loopback, its own port.
        assert!(
            s["workers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| w["host"].as_str().unwrap().starts_with("127.0.0.1:")),
            "{s:#}"
        );
        let jobs: u64 = s["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["jobs_done"].as_u64().unwrap())
            .sum();
        assert!(jobs >= 1, "{s:#}");
        let r = &s["requests"][0];
        assert_eq!(r["method"], "twophase");
        assert_eq!(r["lines"], SCRAMBLES.len());
        assert_eq!(r["records"], SCRAMBLES.len());
        assert_eq!(r["input_done"], false);
        assert_eq!(s["positions"], SCRAMBLES.len());
        let kinds: Vec<&str> = s["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds.iter().filter(|k| **k == "worker_joined").count(),
            2,
            "{kinds:?}"
        );
        assert!(kinds.contains(&"request_opened"), "{kinds:?}");
    }

    // The histograms and per-worker figures in /metrics.
    let metrics = http_get(&m, "/metrics");
    let value = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in:\n{metrics}"))
    };
    assert!(value("cubeswarm_job_run_seconds_count") >= 1.0);
    assert_eq!(
        value("cubeswarm_queue_wait_seconds_count"),
        SCRAMBLES.len() as f64
    );
    assert_eq!(value("cubeswarm_requests_open"), 1.0);
    let slots: u64 = page["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["slots"].as_u64().unwrap())
        .sum();
    assert!(slots >= 2);
    assert_eq!(value("cubeswarm_worker_slots"), slots as f64);
    assert!(metrics.contains("cubeswarm_worker_jobs_done_total{worker=\"alpha\"}"));
    assert!(metrics.contains("cubeswarm_worker_positions_per_second{worker=\"beta\"}"));

    // The input ends: the request is done, and says so.
    drop(stdin);
    let st = solve.wait().unwrap();
    assert!(st.success());
    eventually(Duration::from_secs(10), "the request ends", || {
        status_json(&m, None)["requests"]
            .as_array()
            .unwrap()
            .is_empty()
    });
    let s = status_json(&m, None);
    assert!(
        s["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "request_done"
                && e["text"].as_str().unwrap().contains("6 records")),
        "{s:#}"
    );
    let (_, text, _) = status_cmd(&url, &[]);
    assert!(text.contains("no requests open"), "{text}");
}

/// `status --watch` outlives its coordinator: while it is away each poll says it is
/// unreachable, with the error, and the figures come back from a new coordinator on the
/// same address.
#[test]
fn status_watch_goes_on_while_the_coordinator_restarts() {
    let _g = serial();
    let dir = scratch("watch-restart");
    let (c, url) = coordinator(&dir, &[]);
    let port = url.rsplit(':').next().unwrap().to_string();
    let out = dir.join("watch.jsonl");
    let mut watch = Command::new(bin())
        .args(["status", "--coordinator", &url, "--format", "json"])
        .args(["--watch", "0.2"])
        .env_remove("CUBESWARM_TOKEN")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut count = |what: &str| {
        if let Some(st) = watch.try_wait().unwrap() {
            panic!(
                "--watch exited ({st}):\n{}",
                std::fs::read_to_string(&out).unwrap()
            );
        }
        let text = std::fs::read_to_string(&out).unwrap();
        text.lines().filter(|l| l.contains(what)).count()
    };
    let limit = Duration::from_secs(60);
    eventually(limit, "a status line", || count("\"uptime_ms\"") >= 1);
    drop(c);
    eventually(limit, "unreachable lines", || count("\"unreachable\"") >= 2);
    let text = std::fs::read_to_string(&out).unwrap();
    let errors: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| Some(v["unreachable"].as_str()?.to_string()))
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains(&format!("127.0.0.1:{port}"))),
        "the error names the address: {errors:?}"
    );
    let before = count("\"uptime_ms\"");
    let mut c2 = Proc::start(
        "coordinator2",
        &dir,
        &["coordinator", "--listen", &format!("127.0.0.1:{port}")],
        &[("CUBESWARM_TABLES", &tables_dir())],
    );
    c2.wait_for("grpc listening on ", limit);
    eventually(limit, "status lines again", || {
        count("\"uptime_ms\"") > before
    });
    watch.kill().unwrap();
    let _ = watch.wait();
}

#[test]
fn the_page_is_served_and_its_data_wants_the_token_while_probes_stay_open() {
    let _g = serial();
    let dir = scratch("status-token");
    let good = dir.join("good");
    let bad = dir.join("bad");
    std::fs::write(&good, "page-token\n").unwrap();
    std::fs::write(&bad, "other-token\n").unwrap();
    let (mut c, url) = coordinator(
        &dir,
        &[
            "--metrics-listen",
            "127.0.0.1:0",
            "--token-file",
            good.to_str().unwrap(),
        ],
    );
    let m = metrics_addr(&mut c);
    // The page holds no data: it loads, and asks for the token itself.
    let (code, head, body) = get(&m, "/", None);
    assert_eq!(code, 200);
    assert!(
        head.to_lowercase().contains("content-type: text/html"),
        "{head}"
    );
    assert!(
        head.to_lowercase()
            .contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(
        body.contains("api/status") && body.contains("Token"),
        "{body}"
    );
    // No external resources: nothing but its own origin.
    for external in ["src=\"http", "href=\"http", "https://", "url(http"] {
        assert!(!body.contains(external), "{external} in the page");
    }
    // The data wants the token.
    assert_eq!(get(&m, "/api/status", None).0, 401);
    assert_eq!(get(&m, "/api/status", Some("other-token")).0, 401);
    assert_eq!(
        status_json(&m, Some("page-token"))["workers"],
        Value::Array(vec![])
    );
    // Probes and Prometheus need none.
    assert_eq!(get(&m, "/healthz", None).0, 200);
    assert_eq!(get(&m, "/metrics", None).0, 200);
    // The command: refused without the token, served with it.
    let (st, _, err) = status_cmd(&url, &[]);
    assert!(!st.success());
    assert!(err.to_lowercase().contains("token"), "{err}");
    let (st, _, err) = status_cmd(&url, &["--token-file", bad.to_str().unwrap()]);
    assert!(!st.success(), "{err}");
    let (st, text, err) = status_cmd(&url, &["--token-file", good.to_str().unwrap()]);
    assert!(st.success(), "{err}");
    assert!(text.contains("no workers connected"), "{text}");
}

/// Every `cubeswarm_*` name in `text`.
fn metric_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(p) = text[i..].find("cubeswarm_") {
        let start = i + p;
        let before_ok =
            start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        if before_ok {
            names.push(text[start..end].to_string());
        }
        i = end;
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn every_metric_the_dashboard_and_the_alert_rules_use_is_exported() {
    let _g = serial();
    let dir = scratch("status-metrics");
    let (mut c, _url) = coordinator(&dir, &["--metrics-listen", "127.0.0.1:0"]);
    let m = metrics_addr(&mut c);
    // Every family, with a histogram's series (a family may have no sample yet: the
    // per-worker ones without workers).
    let mut exported: Vec<String> = Vec::new();
    for l in http_get(&m, "/metrics").lines() {
        let Some(t) = l.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut it = t.split_whitespace();
        let (Some(name), Some(kind)) = (it.next(), it.next()) else {
            continue;
        };
        exported.push(name.to_string());
        if kind == "histogram" {
            for suffix in ["_bucket", "_sum", "_count"] {
                exported.push(format!("{name}{suffix}"));
            }
        }
    }
    let files = [
        "deploy/components/monitoring/grafana-dashboard.json",
        "deploy/components/monitoring/prometheus-rules.yaml",
        "deploy/components/monitoring/prometheusrule.yaml",
    ];
    let mut used = 0;
    for f in files {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for name in metric_names(&text) {
            // Recording rules' own names are not scraped.
            if name.starts_with("cubeswarm_alert") || name == "cubeswarm_" {
                continue;
            }
            used += 1;
            assert!(
                exported.contains(&name),
                "{f} uses {name}, which the coordinator's /metrics does not export"
            );
        }
    }
    assert!(used >= 10, "only {used} metric names found in the files");
}
