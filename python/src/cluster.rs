//! A cluster through the client library of `cubeswarm solve --coordinator`: the run
//! writes its JSONL journal (the Python side reads the records from it as they come),
//! and the cluster's status.

use crate::errors::{chain, err, Kind};
use crate::settings::{self, Args};
use crate::wait;
use frontend::cluster::{self, ClientError, Format, Options, Silent, TableChoice, Work};
use proto::transport::ClientConfig;
use proto::{wire as w, Method};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// The connection settings of a `Cluster`.
fn config(url: &str, token: Option<String>, tls_ca: Option<PathBuf>) -> ClientConfig {
    let mut c = ClientConfig::new(url);
    c.token = token;
    c.tls_ca = tls_ca;
    c
}

/// The table the request names, as the CLI chooses it.
fn choose_table(method: Method, table: Option<&str>) -> PyResult<TableChoice> {
    if method == Method::TwoPhase {
        return Ok(TableChoice::Named(proto::catalog::TWOPHASE.to_string()));
    }
    if let Some(t) = table {
        return match proto::catalog::find(t) {
            Some(e) if e.method == Method::Optimal => Ok(TableChoice::Named(t.to_string())),
            _ => Err(err(
                Kind::Settings,
                format!("unknown H48 table {t:?}; cubeswarm.tables.list() shows the known ones"),
            )),
        };
    }
    let mut order: Vec<String> = Vec::new();
    while let Some(t) = proto::catalog::largest_h48_where(|e| !order.iter().any(|n| n == e.name)) {
        order.push(t.to_string());
    }
    Ok(TableChoice::FirstHeld(order))
}

fn client_error(e: ClientError) -> PyErr {
    err(Kind::Cluster, chain(&e))
}

/// Runs one request on the cluster: `position` (one), or the lines of `input`; the
/// records go to `output` as JSONL (continued when `resume`). Returns the summary
/// (`records`, `errors`, `resumed`, `reconnections`, `seconds`, `failure`).
#[pyfunction]
#[pyo3(signature = (url, token, tls_ca, method, max_length, min_length, solutions, time_limit, table, position, input, output, resume, connect_timeout))]
#[allow(clippy::too_many_arguments)]
pub fn cluster_run<'py>(
    py: Python<'py>,
    url: &str,
    token: Option<String>,
    tls_ca: Option<PathBuf>,
    method: String,
    max_length: u32,
    min_length: u32,
    solutions: Option<u32>,
    time_limit: Option<f64>,
    table: Option<String>,
    position: Option<String>,
    input: Option<PathBuf>,
    output: PathBuf,
    resume: bool,
    connect_timeout: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let settings = settings::settings(&Args {
        method,
        max_length,
        min_length,
        solutions,
        time_limit,
    })?;
    if let Some(p) = &position {
        crate::cube::parse(p)?;
    }
    let connect_timeout = match connect_timeout {
        None => Some(client::DEFAULT_CONNECT_TIMEOUT),
        Some(s) => match Duration::try_from_secs_f64(s) {
            Ok(d) if d.is_zero() => None,
            Ok(d) => Some(d),
            Err(_) => {
                return Err(err(
                    Kind::Settings,
                    "connect_timeout must be a number of seconds, 0 or more",
                ))
            }
        },
    };
    let opts = Options {
        client: config(url, token, tls_ca),
        table: choose_table(settings.method, table.as_deref())?,
        settings,
        work: match (position, input) {
            (Some(p), _) => Work::One(p),
            (None, Some(i)) => Work::File(i),
            (None, None) => return Err(err(Kind::Settings, "nothing to solve")),
        },
        output: Some(output),
        format: Format::Jsonl,
        resume,
        connect_timeout,
        wait_for_workers: None,
    };
    let (tx, rx) = mpsc::channel();
    let rx = std::sync::Mutex::new(rx);
    // The client library has no stop: an interrupted run's thread ends on its own (the
    // coordinator drops the request when its stream closes with the process).
    std::thread::spawn(move || {
        let _ = tx.send(client::run(&opts, &mut Silent));
    });
    let summary = wait::recv(py, &rx, &mut || {})?
        .ok_or_else(|| err(Kind::Other, "the cluster run ended without a summary"))?
        .map_err(client_error)?;
    let d = PyDict::new(py);
    d.set_item("records", summary.records)?;
    d.set_item("errors", summary.errors)?;
    d.set_item("resumed", summary.resumed)?;
    d.set_item("reconnections", summary.reconnections)?;
    d.set_item("seconds", summary.seconds)?;
    d.set_item("failure", summary.failure)?;
    Ok(d)
}

/// The coordinator's status: its version, counters and workers.
#[pyfunction]
#[pyo3(signature = (url, token, tls_ca))]
pub fn cluster_status<'py>(
    py: Python<'py>,
    url: &str,
    token: Option<String>,
    tls_ca: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config(url, token, tls_ca);
    let status = py.detach(|| -> Result<w::ClusterStatus, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            let channel = cfg.connect().await.map_err(|e| chain(&e))?;
            let auth = cfg.auth().map_err(|e| chain(&e))?;
            proto::transport::clients_client(channel, auth)
                .status(w::StatusRequest {})
                .await
                .map(tonic::Response::into_inner)
                .map_err(|s| format!("{}: {}", cfg.url, s.message()))
        })
    });
    let s = status.map_err(|e| err(Kind::Cluster, e))?;
    let d = PyDict::new(py);
    d.set_item("version", &s.version)?;
    d.set_item("requests", s.requests)?;
    d.set_item("jobs_queued", s.jobs_queued)?;
    d.set_item("jobs_running", s.jobs_running)?;
    d.set_item("jobs_done", s.jobs_done)?;
    d.set_item("requeued", s.requeued)?;
    d.set_item("lease_expiries", s.lease_expiries)?;
    d.set_item("positions", s.positions)?;
    d.set_item("nodes", s.nodes)?;
    let workers = pyo3::types::PyList::empty(py);
    for x in &s.workers {
        let wd = PyDict::new(py);
        wd.set_item("executor", x.executor)?;
        wd.set_item("worker_id", &x.worker_id)?;
        wd.set_item("threads", x.threads)?;
        wd.set_item("slots", x.slots)?;
        wd.set_item("running", x.running)?;
        wd.set_item("tables", x.tables.clone())?;
        workers.append(wd)?;
    }
    d.set_item("workers", workers)?;
    Ok(d)
}
