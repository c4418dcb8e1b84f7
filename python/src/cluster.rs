//! A cluster through the front-end library's client (what `cubeswarm solve --coordinator`
//! runs): `ClusterRun` streams the records of a request as they arrive, in input order,
//! with no file in between (the output file, when asked for, is the run's journal); and
//! the cluster's status. Both take the cluster's [`Connection`] as one object.

use crate::connection::Connection;
use crate::errors::front;
use crate::solve::record_dict;
use crate::text::{self, Item};
use crate::wait;
use frontend::cluster::{self, ClientError, Observer, Options, Output, Positions, Stream, Summary};
use frontend::Dialect;
use proto::{Record, Settings};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// The lines of a stream whose items held no text, with why: each goes to the cluster as
/// a line that is not UTF-8 (so that it is a line, and an error record, of its own) and
/// its record is given the reason on its way to Python, the record a local run makes of
/// it (the journal keeps the cluster's).
type BadItems = Arc<Mutex<HashMap<u64, String>>>;

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
/// thread, which takes the GIL for each item), one line per item: a line break inside an
/// item is a space, and an item that holds no text ([`text::item`]) is in `bad`.
struct PyReader {
    iter: Py<PyIterator>,
    buf: Vec<u8>,
    at: usize,
    /// The items read so far (the line number of the last one).
    line: u64,
    /// The lines whose items held no text.
    bad: BadItems,
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
            let item = Python::attach(|py| -> Option<PyResult<Item>> {
                let mut it = self.iter.bind(py).clone();
                Some(it.next()?.map(|i| text::item(&i)))
            });
            self.buf.clear();
            self.at = 0;
            let bytes = match item {
                None => None,
                Some(Ok(Item::Text(t))) => Some(t.into_bytes()),
                Some(Ok(Item::Bytes(b))) => Some(b),
                Some(Ok(Item::Bad(why))) => {
                    let mut bad = self.bad.lock().unwrap_or_else(|p| p.into_inner());
                    bad.insert(self.line + 1, why);
                    Some(vec![0xff])
                }
                Some(Err(e)) => {
                    *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    None
                }
            };
            if let Some(b) = bytes {
                self.line += 1;
                self.buf.extend(
                    b.into_iter()
                        .map(|c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
                );
                self.buf.push(b'\n');
            }
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}

/// The records of one request on a cluster, in input order, as they arrive: made by
/// [`ClusterRun::one`] (one position), [`ClusterRun::file`] (the lines of a file, with its
/// journal resumed or not) or [`ClusterRun::stream`] (the items of an iterable).
#[pyclass(module = "cubeswarm._native")]
pub struct ClusterRun {
    rx: Mutex<Receiver<Msg>>,
    ready: Mutex<VecDeque<Record>>,
    done: AtomicBool,
    settings: Settings,
    bad: BadItems,
    failed: Arc<Mutex<Option<PyErr>>>,
    summary: Mutex<Option<Summary>>,
}

/// What one run asks besides its connection and options.
struct Work {
    positions: Positions,
    /// The JSONL journal, if any.
    output: Option<PathBuf>,
    /// Continue `output` (the lines it holds are not solved again).
    resume: bool,
    bad: BadItems,
    failed: Arc<Mutex<Option<PyErr>>>,
}

impl Work {
    fn new(positions: Positions, output: Option<PathBuf>, resume: bool) -> Work {
        Work {
            positions,
            output,
            resume,
            bad: BadItems::default(),
            failed: Arc::new(Mutex::new(None)),
        }
    }
}

/// Checks `options` (a dict of keyword arguments, [`crate::request`]) and starts `work` on
/// the cluster `c`, on a thread of its own.
fn start(c: &Connection, options: &Bound<'_, PyDict>, work: Work) -> PyResult<ClusterRun> {
    let request = crate::request::request(options)?;
    let settings = request.settings(&Dialect::PYTHON).map_err(front)?;
    request.for_cluster(&Dialect::PYTHON).map_err(front)?;
    let opts = Options {
        client: c.client.clone(),
        table: frontend::table::on_cluster(
            settings.method,
            request.table.as_deref(),
            &Dialect::PYTHON,
        )
        .map_err(front)?,
        settings: settings.clone(),
        work: work.positions,
        output: work.output.map_or(Output::Nowhere, Output::File),
        format: frontend::output::Format::Jsonl,
        resume: work.resume,
        connect_timeout: c.connect_timeout,
        wait_for_workers: c.wait_for_workers,
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
        bad: work.bad,
        failed: work.failed,
        summary: Mutex::new(None),
    })
}

#[pymethods]
impl ClusterRun {
    /// The record of one position.
    #[staticmethod]
    fn one(
        connection: &Connection,
        options: &Bound<'_, PyDict>,
        position: &Bound<'_, PyAny>,
    ) -> PyResult<ClusterRun> {
        let p = text::arg(position, "position")?;
        frontend::settings::position(&p).map_err(front)?;
        start(
            connection,
            options,
            Work::new(Positions::One(p), None, false),
        )
    }

    /// The records of the lines of the file `input`, journaled to `output` (continued
    /// when `resume`: only the lines not in it are solved, and only their records are
    /// yielded).
    #[staticmethod]
    #[pyo3(signature = (connection, options, input, output, resume))]
    fn file(
        connection: &Connection,
        options: &Bound<'_, PyDict>,
        input: PathBuf,
        output: Option<PathBuf>,
        resume: bool,
    ) -> PyResult<ClusterRun> {
        start(
            connection,
            options,
            Work::new(Positions::File(input), output, resume),
        )
    }

    /// The records of the items of the iterable `positions`, journaled to `output`.
    #[staticmethod]
    #[pyo3(signature = (connection, options, positions, output))]
    fn stream(
        connection: &Connection,
        options: &Bound<'_, PyDict>,
        positions: &Bound<'_, PyAny>,
        output: Option<PathBuf>,
    ) -> PyResult<ClusterRun> {
        let bad = BadItems::default();
        let failed = Arc::new(Mutex::new(None));
        let reader = PyReader {
            iter: positions.try_iter()?.unbind(),
            buf: Vec::new(),
            at: 0,
            line: 0,
            bad: Arc::clone(&bad),
            failed: Arc::clone(&failed),
        };
        let work = Work {
            positions: Positions::Stream(Stream::new(Box::new(reader))),
            output,
            resume: false,
            bad,
            failed,
        };
        start(connection, options, work)
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
                let r = match self
                    .bad
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&r.line)
                {
                    Some(why) if r.outcome.is_err() => Record {
                        outcome: Err(text::no_text(why)),
                        ..r
                    },
                    _ => r,
                };
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
pub fn cluster_status<'py>(
    py: Python<'py>,
    connection: &Connection,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = &connection.client;
    let s = py
        .detach(|| cluster::status::query(cfg))
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
