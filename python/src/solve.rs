//! `solve` (one position) and `SolveMany` (an iterable of them, results in input order)
//! through the front-end library's embedded run, the path of the CLI's `solve`: the
//! coordinator's driver over the in-process executors, kept per process.

use crate::errors::{err, front, Kind};
use crate::progress::Stderr;
use crate::wait;
use coordinator::input::InputLine;
use coordinator::{Event, Interrupt, RunError, RunStats, Source};
use frontend::{Asked, Dialect, Embedded};
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
    End(Result<RunStats, RunError>),
}

/// Threads to use: `threads` (within the front end's bound), else one per core.
fn thread_count(threads: Option<usize>) -> PyResult<usize> {
    frontend::settings::threads(threads, &Dialect::PYTHON).map_err(front)
}

/// A record as a dict: `line`, `input`, `solutions` (each a list of moves), `optimal`,
/// `nodes`, `seconds`, `note`, `error` (the CLI's message, or None).
pub fn record_dict<'py>(
    py: Python<'py>,
    rec: &Record,
    settings: &Settings,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("line", rec.line)?;
    d.set_item("input", &rec.input)?;
    match &rec.outcome {
        Ok(s) => {
            let sols = PyList::empty(py);
            for sol in &s.solutions {
                let moves: Vec<String> = sol.iter().map(|m| m.to_string()).collect();
                sols.append(moves)?;
            }
            d.set_item("solutions", sols)?;
            d.set_item("optimal", s.optimal)?;
            d.set_item("nodes", s.nodes)?;
            d.set_item("seconds", s.micros as f64 / 1e6)?;
            let note = s.note(settings);
            let error = if s.solutions.is_empty() {
                Some(note.clone().unwrap_or_else(|| "no solution found".into()))
            } else {
                None
            };
            d.set_item("note", note)?;
            d.set_item("error_kind", error.as_ref().map(|_| "no_solution"))?;
            d.set_item("error", error)?;
        }
        Err(e) => {
            d.set_item("solutions", PyList::empty(py))?;
            d.set_item("optimal", false)?;
            d.set_item("nodes", 0)?;
            d.set_item("seconds", 0.0)?;
            d.set_item("note", None::<String>)?;
            d.set_item("error", e.to_string())?;
            let kind = match e {
                RecordError::Parse(_) | RecordError::NotUtf8 => "position",
                RecordError::Job(_) => "job",
            };
            d.set_item("error_kind", kind)?;
        }
    }
    Ok(d)
}

/// A run's failure as an exception.
fn run_error(e: RunError) -> PyErr {
    front(frontend::Error::Run(e))
}

/// What `solve` and `solve_many` are asked, as the Python API takes it.
pub struct Args {
    pub method: String,
    pub max_length: u32,
    pub min_length: u32,
    pub solutions: Option<u32>,
    pub time_limit: Option<f64>,
}

impl Args {
    /// The checked settings.
    pub fn settings(&self) -> PyResult<Settings> {
        let d = &Dialect::PYTHON;
        Asked {
            method: frontend::settings::method(&self.method, d).map_err(front)?,
            min_length: self.min_length,
            max_length: Some(self.max_length),
            solutions: self.solutions,
            time_limit: self.time_limit,
            anytime: false,
        }
        .settings(d)
        .map_err(front)
    }
}

/// Settings, table and the opened tables for a call (opened with the GIL released, once
/// per process: later calls reuse the tables and their idle executors).
fn prepare(
    py: Python<'_>,
    args: &Args,
    table: Option<String>,
    tables_dir: Option<PathBuf>,
) -> PyResult<(Settings, String, Arc<Embedded>)> {
    let settings = args.settings()?;
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
    Ok((settings, name, tables))
}

/// Solves one position; returns its record as a dict (see [`record_dict`]). Raises
/// PositionError before any table is opened when the text is not a position.
#[pyfunction]
#[pyo3(signature = (position, method, max_length, min_length, solutions, time_limit, table, threads, tables_dir))]
#[allow(clippy::too_many_arguments)]
pub fn solve<'py>(
    py: Python<'py>,
    position: &str,
    method: String,
    max_length: u32,
    min_length: u32,
    solutions: Option<u32>,
    time_limit: Option<f64>,
    table: Option<String>,
    threads: Option<usize>,
    tables_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let args = Args {
        method,
        max_length,
        min_length,
        solutions,
        time_limit,
    };
    let method = args.settings()?.method;
    let threads = frontend::settings::threads_for_one(thread_count(threads)?, method);
    let parsed = frontend::settings::position(position).map_err(front)?;
    let (settings, name, tables) = prepare(py, &args, table, tables_dir)?;
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
        frontend::embedded::one(&pool, asked, &name, line, Some(interrupt))
    });
    if let Some(e) = signal {
        return Err(e);
    }
    let rec = got.map_err(front)?;
    record_dict(py, &rec, &settings)
}

/// The items of a Python iterable as input lines, one batch of one line per item, read
/// on the run's input thread (which takes the GIL for each item).
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
        let item = Python::attach(|py| -> Option<PyResult<String>> {
            let mut it = self.iter.bind(py).clone();
            let item = match it.next()? {
                Ok(i) => i,
                Err(e) => return Some(Err(e)),
            };
            Some(match item.extract::<String>() {
                Ok(s) => Ok(s),
                Err(_) => match item.extract::<Vec<u8>>() {
                    Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
                    Err(_) => item.str().map(|s| s.to_string()),
                },
            })
        })?;
        let text = match item {
            Ok(t) => t,
            Err(e) => {
                *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                return None;
            }
        };
        self.line += 1;
        let text = text.trim().to_string();
        let parsed = Position::parse(&text).map_err(RecordError::from);
        Some(vec![InputLine {
            line: self.line,
            input: text,
            parsed,
        }])
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
    #[pyo3(signature = (positions, method, max_length, min_length, solutions, time_limit, table, threads, tables_dir))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        positions: &Bound<'_, PyAny>,
        method: String,
        max_length: u32,
        min_length: u32,
        solutions: Option<u32>,
        time_limit: Option<f64>,
        table: Option<String>,
        threads: Option<usize>,
        tables_dir: Option<PathBuf>,
    ) -> PyResult<SolveMany> {
        if positions.is_instance_of::<pyo3::types::PyString>() {
            return Err(err(
                Kind::Settings,
                "positions must be an iterable of strings, not one string (use solve())",
            ));
        }
        let iter = positions.try_iter()?.unbind();
        let args = Args {
            method,
            max_length,
            min_length,
            solutions,
            time_limit,
        };
        let threads = thread_count(threads)?;
        let (settings, name, tables) = prepare(py, &args, table, tables_dir)?;
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
        std::thread::spawn(move || run_many(pool, run_settings, name, lines, tx));
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
        let msg = wait::recv(py, &self.rx, &mut || {
            let _ = stop.send(Event::Shutdown);
        });
        let msg = match msg {
            Ok(m) => m,
            Err(e) => {
                self.done.store(true, Ordering::Release);
                return Err(e);
            }
        };
        match msg {
            Some(Msg::Record(r)) => record_dict(py, &r, &self.settings).map(Some),
            Some(Msg::End(r)) => {
                self.done.store(true, Ordering::Release);
                if let Some(e) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    return Err(e);
                }
                r.map_err(run_error)?;
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
    pool: coordinator::Executors,
    settings: Settings,
    table: String,
    lines: PyLines,
    tx: SyncSender<Msg>,
) {
    let records = tx.clone();
    let r = coordinator::run(
        coordinator::Config::default(),
        &pool,
        settings,
        table,
        Source::<std::io::Empty>::Parsed(Box::new(lines)),
        &mut |rec| {
            records
                .send(Msg::Record(rec))
                .map_err(|_| std::io::Error::other("the iterator was dropped"))
        },
    );
    let _ = tx.send(Msg::End(r));
}
