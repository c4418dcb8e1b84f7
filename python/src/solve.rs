//! `solve` (one position) and `SolveMany` (an iterable of them, results in input order)
//! through the front-end library's embedded run, the path of the CLI's `solve`: the
//! coordinator's driver over the in-process executors, kept per process.

use crate::errors::{err, front, Kind};
use crate::progress::Stderr;
use crate::text::{self, Item};
use crate::wait;
use coordinator::input::InputLine;
use coordinator::{Event, Interrupt, Source};
use frontend::{Dialect, Embedded, Request};
use proto::{Record, RecordError, Settings};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use tables::Position;

/// Records a `SolveMany` may hold unread (its memory bound, with the run's window).
const AHEAD: usize = 256;

/// What the run's thread tells the caller.
enum Msg {
    Record(Record),
    End(Result<frontend::embedded::Tally, frontend::Error>),
}

/// A record as a dict: the front-end library's one record object
/// ([`frontend::output::fields`], the CLI writers' names), made a Python value.
pub fn record_dict<'py>(
    py: Python<'py>,
    rec: &Record,
    settings: &Settings,
) -> PyResult<Bound<'py, PyDict>> {
    let v = to_py(py, &frontend::output::fields(rec, settings))?;
    Ok(v.cast_into::<PyDict>()?)
}

/// A JSON value as the Python value `json.loads` would make of it.
fn to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_bound_py_any(py)?,
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_bound_py_any(py)?,
            (None, Some(i)) => i.into_bound_py_any(py)?,
            _ => n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)?,
        },
        Value::String(s) => s.into_bound_py_any(py)?,
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The table and the opened tables for a call of `settings` (opened with the GIL released, once
/// per process: later calls reuse the tables and their idle executors).
fn prepare(
    py: Python<'_>,
    request: &Request,
    settings: &Settings,
    tables_dir: Option<PathBuf>,
) -> PyResult<(String, Arc<Embedded>)> {
    let table = request.table.clone();
    let dir = crate::tables_fns::dir(tables_dir);
    let method = settings.method;
    let d = &Dialect::PYTHON;
    let (name, tables) = py
        .detach(|| {
            let name = frontend::table::local(&dir, method, table.as_deref(), d, &Stderr)?;
            let tables = Embedded::shared(&dir, &name, d, &Stderr)?;
            Ok::<_, frontend::Error>((name, tables))
        })
        .map_err(front)?;
    Ok((name, tables))
}

/// Solves one position (to the pattern `to`, when given: the CLI's `--to`) as `options`
/// ask (a dict of the keyword arguments, see [`crate::request`]); returns its record as a
/// dict (see [`record_dict`]). Raises PositionError before any table is opened when a text
/// is not a position.
#[pyfunction]
#[pyo3(signature = (position, to, options, tables_dir))]
pub fn solve<'py>(
    py: Python<'py>,
    position: &Bound<'py, PyAny>,
    to: Option<&Bound<'py, PyAny>>,
    options: &Bound<'py, PyDict>,
    tables_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let request = crate::request::request(options)?;
    let settings = request.settings(&Dialect::PYTHON).map_err(front)?;
    let threads = request
        .local_threads(true, &Dialect::PYTHON)
        .map_err(front)?;
    let position = text::arg(position, "position")?;
    let mut parsed = frontend::settings::position(&position).map_err(front)?;
    if let Some(to) = to {
        parsed = parsed.relative_to(&crate::cube::parse(to, "to")?);
    }
    let (name, tables) = prepare(py, &request, &settings, tables_dir)?;
    let cfg = request.config();
    let pool = tables.executors(1, threads).map_err(front)?;
    let line = InputLine {
        line: 1,
        input: position.trim().to_string(),
        parsed: Ok(parsed),
    };
    // The driver runs here, without the GIL, and takes it back now and then to check for
    // signals (Ctrl-C): the search stays on the executor's thread, never this one.
    let mut signal = None;
    let (asked, caught) = (&settings, &mut signal);
    let got = py.detach(move || {
        let mut stop = || match Python::attach(|py| py.check_signals()) {
            Ok(()) => false,
            Err(e) => {
                *caught = Some(e);
                true
            }
        };
        let interrupt = Interrupt {
            every: wait::POLL,
            stop: &mut stop,
        };
        frontend::embedded::one(cfg, &pool, asked, &name, line, Some(interrupt))
    });
    if let Some(e) = signal {
        return Err(e);
    }
    let rec = got.map_err(front)?;
    record_dict(py, &rec, &settings)
}

/// The items of a Python iterable as input lines, one batch of one line per item, read
/// on the run's input thread (which takes the GIL for each item). An item that holds no
/// text ([`text::item`]) is a line that is not a position: its own error record.
struct PyLines {
    iter: Py<PyIterator>,
    line: u64,
    /// The exception the iterable raised, if any: the run ends there and the caller
    /// raises it after the records before it.
    failed: Arc<Mutex<Option<PyErr>>>,
}

impl Iterator for PyLines {
    type Item = Vec<InputLine>;

    fn next(&mut self) -> Option<Vec<InputLine>> {
        let item = Python::attach(|py| -> Option<PyResult<Item>> {
            let mut it = self.iter.bind(py).clone();
            Some(it.next()?.map(|i| text::item(&i)))
        })?;
        let item = match item {
            Ok(i) => i,
            Err(e) => {
                *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                return None;
            }
        };
        self.line += 1;
        let text = match item {
            Item::Text(t) => Ok(t),
            Item::Bytes(b) => String::from_utf8(b).map_err(|_| RecordError::NotUtf8),
            Item::Bad(why) => Err(text::no_text(why)),
        };
        let line = match text {
            Ok(t) => {
                let t = t.trim().to_string();
                let parsed = Position::parse(&t).map_err(RecordError::from);
                InputLine {
                    line: self.line,
                    input: t,
                    parsed,
                }
            }
            Err(e) => InputLine {
                line: self.line,
                input: String::new(),
                parsed: Err(e),
            },
        };
        Some(vec![line])
    }
}

/// An iterator over the records of an iterable of positions, in input order, as they are
/// solved (the work runs on its own threads; at most a few hundred records wait unread).
#[pyclass(module = "cubeswarm._native")]
pub struct SolveMany {
    rx: Mutex<Receiver<Msg>>,
    /// The run ended (or was stopped): nothing more to yield.
    done: AtomicBool,
    stop: Mutex<Sender<Event>>,
    settings: Settings,
    failed: Arc<Mutex<Option<PyErr>>>,
}

#[pymethods]
impl SolveMany {
    #[new]
    #[pyo3(signature = (positions, options, tables_dir))]
    fn new(
        py: Python<'_>,
        positions: &Bound<'_, PyAny>,
        options: &Bound<'_, PyDict>,
        tables_dir: Option<PathBuf>,
    ) -> PyResult<SolveMany> {
        if positions.is_instance_of::<pyo3::types::PyString>() {
            return Err(err(
                Kind::Settings,
                "positions must be an iterable of strings, not one string (use solve())",
            ));
        }
        let iter = positions.try_iter()?.unbind();
        let request = crate::request::request(options)?;
        let threads = request
            .local_threads(false, &Dialect::PYTHON)
            .map_err(front)?;
        let settings = request.settings(&Dialect::PYTHON).map_err(front)?;
        let (name, tables) = prepare(py, &request, &settings, tables_dir)?;
        let cfg = request.config();
        let pool = tables.executors(1, threads).map_err(front)?;
        let stop = pool.tx.clone();
        let (tx, rx) = mpsc::sync_channel::<Msg>(AHEAD);
        let failed = Arc::new(Mutex::new(None));
        let lines = PyLines {
            iter,
            line: 0,
            failed: Arc::clone(&failed),
        };
        let run_settings = settings.clone();
        std::thread::spawn(move || run_many(cfg, pool, run_settings, name, lines, tx));
        Ok(SolveMany {
            rx: Mutex::new(rx),
            done: AtomicBool::new(false),
            stop: Mutex::new(stop),
            settings,
            failed,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.done.load(Ordering::Acquire) {
            return Ok(None);
        }
        let stop = self.stop.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let msg = wait::next(py, &self.rx, &self.done, &mut || {
            let _ = stop.send(Event::Shutdown);
        })?;
        match msg {
            Some(Msg::Record(r)) => record_dict(py, &r, &self.settings).map(Some),
            Some(Msg::End(r)) => {
                self.done.store(true, Ordering::Release);
                if let Some(e) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    return Err(e);
                }
                r.map_err(front)?;
                Ok(None)
            }
            None => {
                self.done.store(true, Ordering::Release);
                Ok(None)
            }
        }
    }

    /// Stops the work (what dropping the iterator does too).
    fn close(&self) {
        let _ = self
            .stop
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(Event::Shutdown);
        self.done.store(true, Ordering::Release);
    }
}

impl Drop for SolveMany {
    fn drop(&mut self) {
        if let Ok(s) = self.stop.lock() {
            let _ = s.send(Event::Shutdown);
        }
    }
}

/// The run of a `SolveMany`, on its own thread.
fn run_many(
    cfg: coordinator::Config,
    pool: coordinator::Executors,
    settings: Settings,
    table: String,
    lines: PyLines,
    tx: SyncSender<Msg>,
) {
    let records = tx.clone();
    let r = frontend::embedded::many(
        cfg,
        &pool,
        &settings,
        &table,
        Source::<std::io::Empty>::Parsed(Box::new(lines)),
        &mut |rec, _| {
            records
                .send(Msg::Record(rec))
                .map_err(|_| std::io::Error::other("the iterator was dropped"))
        },
        None,
    );
    let _ = tx.send(Msg::End(r));
}
