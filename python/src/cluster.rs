//! A cluster through the front-end library's client (what `cubeswarm solve --coordinator`
//! runs): `ClusterRun` streams the records of a request as they arrive, in input order,
//! with no file in between (the output file, when asked for, is the run's journal); and
//! the cluster's status.

use crate::errors::{err, front, Kind};
use crate::solve::record_dict;
use crate::wait;
use frontend::cluster::{self, ClientError, Observer, Options, Output, Positions, Stream, Summary};
use frontend::Dialect;
use proto::transport::ClientConfig;
use proto::{Record, Settings};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator};
use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// The connection settings of a `Cluster`.
fn config(url: &str, token: Option<String>, tls_ca: Option<PathBuf>) -> ClientConfig {
    let mut c = ClientConfig::new(url);
    c.token = token;
    c.tls_ca = tls_ca;
    c
}

/// What the run's thread tells the iterator.
enum Msg {
    Records(Vec<Record>),
    End(Result<Summary, ClientError>),
}

/// The run's observer: every record written goes to the iterator.
struct Forward(Sender<Msg>);

impl Observer for Forward {
    fn records(&mut self, records: &[Record]) {
        let _ = self.0.send(Msg::Records(records.to_vec()));
    }
}

/// The items of a Python iterable as the lines of a reader (read on the client's input
/// thread, which takes the GIL for each item). A line break inside an item is a space.
struct PyReader {
    iter: Py<PyIterator>,
    buf: Vec<u8>,
    at: usize,
    /// The exception the iterable raised, if any: the input ends there and the caller
    /// raises it after the records before it.
    failed: Arc<Mutex<Option<PyErr>>>,
}

impl Read for PyReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let got = self.fill_buf()?;
            let n = got.len().min(out.len());
            out[..n].copy_from_slice(&got[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PyReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.buf.len() {
            let item = Python::attach(|py| -> Option<PyResult<String>> {
                let mut it = self.iter.bind(py).clone();
                Some(it.next()?.and_then(|i| match i.extract::<String>() {
                    Ok(s) => Ok(s),
                    Err(_) => i.str().map(|s| s.to_string()),
                }))
            });
            self.buf.clear();
            self.at = 0;
            match item {
                None => {}
                Some(Ok(text)) => {
                    self.buf.extend(text.replace(['\r', '\n'], " ").bytes());
                    self.buf.push(b'\n');
                }
                Some(Err(e)) => {
                    *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
            }
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}

/// The records of one request on a cluster, in input order, as they arrive: one
/// `position`, the lines of the file `input`, or the items of the iterable `positions`.
/// `output`: the JSONL journal (continued when `resume`: only the lines not in it are
/// solved, and only their records are yielded).
#[pyclass(module = "cubeswarm._native")]
pub struct ClusterRun {
    rx: Mutex<Receiver<Msg>>,
    ready: Mutex<VecDeque<Record>>,
    done: AtomicBool,
    settings: Settings,
    failed: Arc<Mutex<Option<PyErr>>>,
    summary: Mutex<Option<Summary>>,
}

#[pymethods]
impl ClusterRun {
    #[new]
    #[pyo3(signature = (url, token, tls_ca, options, position, positions, input, output, resume, connect_timeout, wait_for_workers))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        url: &str,
        token: Option<String>,
        tls_ca: Option<PathBuf>,
        options: &Bound<'_, PyDict>,
        position: Option<String>,
        positions: Option<&Bound<'_, PyAny>>,
        input: Option<PathBuf>,
        output: Option<PathBuf>,
        resume: bool,
        connect_timeout: Option<f64>,
        wait_for_workers: Option<f64>,
    ) -> PyResult<ClusterRun> {
        let request = crate::request::request(options)?;
        let settings = request.settings(&Dialect::PYTHON).map_err(front)?;
        request.for_cluster(&Dialect::PYTHON).map_err(front)?;
        let failed = Arc::new(Mutex::new(None));
        let work = match (position, positions, input) {
            (Some(p), None, None) => {
                frontend::settings::position(&p).map_err(front)?;
                Positions::One(p)
            }
            (None, Some(items), None) => Positions::Stream(Stream::new(Box::new(PyReader {
                iter: items.try_iter()?.unbind(),
                buf: Vec::new(),
                at: 0,
                failed: Arc::clone(&failed),
            }))),
            (None, None, Some(path)) => Positions::File(path),
            _ => {
                return Err(err(
                    Kind::Settings,
                    "give one of position, positions or input",
                ))
            }
        };
        let connect_timeout = match connect_timeout {
            None => Some(cluster::DEFAULT_CONNECT_TIMEOUT),
            Some(s) => {
                let d = frontend::settings::seconds("connect_timeout", s).map_err(front)?;
                Some(d).filter(|d| !d.is_zero())
            }
        };
        let opts = Options {
            client: config(url, token, tls_ca),
            table: frontend::table::on_cluster(
                settings.method,
                request.table.as_deref(),
                &Dialect::PYTHON,
            )
            .map_err(front)?,
            settings: settings.clone(),
            work,
            output: output.map_or(Output::Nowhere, Output::File),
            format: frontend::output::Format::Jsonl,
            resume,
            connect_timeout,
            wait_for_workers: match wait_for_workers {
                None => None,
                Some(s) => Some(frontend::settings::seconds("wait_for_workers", s).map_err(front)?)
                    .filter(|d| !d.is_zero()),
            },
        };
        let (tx, rx) = mpsc::channel();
        // The client library has no stop: an abandoned run's thread ends on its own (the
        // coordinator drops the request when its stream closes with the process).
        std::thread::spawn(move || {
            let r = cluster::run(&opts, &mut Forward(tx.clone()));
            let _ = tx.send(Msg::End(r));
        });
        Ok(ClusterRun {
            rx: Mutex::new(rx),
            ready: Mutex::new(VecDeque::new()),
            done: AtomicBool::new(false),
            settings,
            failed,
            summary: Mutex::new(None),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        loop {
            if let Some(r) = self
                .ready
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front()
            {
                return record_dict(py, &r, &self.settings).map(Some);
            }
            if self.done.load(Ordering::Acquire) {
                return Ok(None);
            }
            let msg = wait::next(py, &self.rx, &self.done, &mut || {})?;
            match msg {
                Some(Msg::Records(v)) => self
                    .ready
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(v),
                Some(Msg::End(r)) => {
                    self.done.store(true, Ordering::Release);
                    if let Some(e) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
                        return Err(e);
                    }
                    let summary = r.map_err(|e| front(frontend::Error::Cluster(e)))?;
                    *self.summary.lock().unwrap_or_else(|p| p.into_inner()) = Some(summary);
                }
                None => self.done.store(true, Ordering::Release),
            }
        }
    }

    /// The run's summary once it ended (`records`, `errors`, `resumed`,
    /// `reconnections`, `seconds`), else None.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let s = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        let Some(s) = s.as_ref() else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item("records", s.records)?;
        d.set_item("errors", s.errors)?;
        d.set_item("resumed", s.resumed)?;
        d.set_item("reconnections", s.reconnections)?;
        d.set_item("seconds", s.seconds)?;
        Ok(Some(d))
    }
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
    let s = py
        .detach(|| cluster::status::query(&cfg))
        .map_err(|e| front(frontend::Error::Cluster(e)))?;
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
