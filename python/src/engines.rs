//! Where the tables are (the CLI's rules), which table a solve uses, and the engines
//! opened so far (kept for the life of the process: opening maps or copies the tables).

use crate::errors::{chain, err, Kind};
use proto::Method;
use pyo3::PyResult;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use worker::{Engine, TableMemory};

/// The tables directory: `dir` when given, else the CLI's default
/// (`$CUBESWARM_TABLES`, else `$XDG_DATA_HOME/cubeswarm/tables`, ...).
pub fn dir(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(tables::tablefile::default_tables_dir)
}

/// Reports table building on stderr, one line per step (a notebook shows them).
pub struct Stderr;

impl tables::progress::Progress for Stderr {
    fn start(&self, label: &str, _len: u64) {
        eprintln!("cubeswarm: {label}…");
    }
    fn inc(&self, _units: u64) {}
    fn finish(&self, message: &str) {
        if !message.is_empty() {
            eprintln!("cubeswarm: {message}");
        }
    }
}

/// The table a solve of `method` uses: "twophase", `table`, or the largest H48 table
/// present (h48h0k4, built, when none is). A named table that is missing is built, and so
/// is a present table's missing eoesep fallback.
pub fn choose(dir: &Path, method: Method, table: Option<&str>) -> PyResult<String> {
    if method == Method::TwoPhase {
        return Ok(proto::catalog::TWOPHASE.to_string());
    }
    let name = match table {
        Some(t) => t.to_string(),
        None => match worker::catalog::largest_h48_available(dir) {
            Some(t) => t.to_string(),
            None => {
                eprintln!(
                    "cubeswarm: no H48 table in {}; building h48h0k4 (about 60 MB, once)…",
                    dir.display()
                );
                worker::catalog::build(dir, "h48h0k4", &Stderr).map_err(table_error)?;
                "h48h0k4".to_string()
            }
        },
    };
    let entry = proto::catalog::find(&name)
        .filter(|e| e.method == Method::Optimal)
        .ok_or_else(|| {
            err(
                Kind::Settings,
                format!("unknown H48 table {name:?}; cubeswarm.tables.list() shows the known ones"),
            )
        })?;
    if table.is_some() && !entry.present(dir) {
        eprintln!(
            "cubeswarm: table {name} is not in {}; building it…",
            dir.display()
        );
        worker::catalog::build_entry(dir, entry, &Stderr).map_err(table_error)?;
    }
    if let Some(f) = worker::catalog::missing_fallback(dir, entry) {
        eprintln!(
            "cubeswarm: {f}, the fallback of table {name}, is not in {}; building it…",
            dir.display()
        );
        worker::catalog::build_file(dir, f, &Stderr).map_err(table_error)?;
    }
    Ok(name)
}

/// A table fault as a `TableError`.
pub fn table_error(e: worker::Error) -> pyo3::PyErr {
    err(Kind::Table, chain(&e))
}

type Cache = Mutex<HashMap<(PathBuf, String), Engine>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The engine of `table` in `dir`, opened once per process ("twophase" builds its tables
/// when missing, with a message).
pub fn open(dir: &Path, table: &str) -> Result<Engine, worker::Error> {
    let key = (dir.to_path_buf(), table.to_string());
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = cache.get(&key) {
        return Ok(e.clone());
    }
    let engine = if table == proto::catalog::TWOPHASE {
        if !worker::twophase::TwoPhaseTables::missing(dir).is_empty() {
            eprintln!(
                "cubeswarm: building the two-phase tables in {} (about 130 MB, once)…",
                dir.display()
            );
        }
        Engine::TwoPhase(worker::TwoPhaseSolver::open_or_build(dir, &Stderr)?)
    } else {
        worker::catalog::open(dir, table, TableMemory::default())?
    };
    cache.insert(key, engine.clone());
    Ok(engine)
}
