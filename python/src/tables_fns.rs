//! `cubeswarm.tables`: list, build, verify, in the CLI's directory.

use crate::errors::{err, Kind};
use crate::progress::Stderr;
use frontend::chain;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use tables::tablefile::{table_path, TableFile};

/// The tables directory: `dir` when given, else the CLI's default (`$CUBESWARM_TABLES`,
/// else `$XDG_DATA_HOME/cubeswarm/tables`, ...).
pub fn dir(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(tables::tablefile::default_tables_dir)
}

/// A table fault as a `TableError`.
fn table_error(e: worker::Error) -> PyErr {
    err(Kind::Table, chain(&e))
}

/// The tables directory the other functions use.
#[pyfunction]
#[pyo3(signature = (tables_dir=None))]
pub fn tables_dir(tables_dir: Option<PathBuf>) -> PathBuf {
    dir(tables_dir)
}

/// Every table file cubeswarm knows: name, status ("present", "missing", "bad"), path,
/// size in bytes (the file's, or the expected size when missing), and the problem.
#[pyfunction]
#[pyo3(signature = (tables_dir=None))]
pub fn tables_list(
    py: Python<'_>,
    tables_dir: Option<PathBuf>,
) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let dir = dir(tables_dir);
    let mut out = Vec::new();
    for name in proto::catalog::files() {
        let path = table_path(&dir, name);
        let d = PyDict::new(py);
        d.set_item("name", name)?;
        d.set_item("path", &path)?;
        let (status, size, problem) = match TableFile::open(&path, name) {
            Ok(_) => (
                "present",
                std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
                None,
            ),
            Err(_) if !path.exists() => (
                "missing",
                proto::catalog::file_bytes(name).unwrap_or(0),
                None,
            ),
            Err(e) => ("bad", 0, Some(e.to_string())),
        };
        d.set_item("status", status)?;
        d.set_item("bytes", size)?;
        d.set_item("problem", problem)?;
        out.push(d);
    }
    Ok(out)
}

fn known(name: &str) -> PyResult<()> {
    if proto::catalog::files().contains(&name) || proto::catalog::find(name).is_some() {
        Ok(())
    } else {
        Err(err(
            Kind::Settings,
            format!("unknown table {name:?}; cubeswarm.tables.list() shows the known ones"),
        ))
    }
}

/// Builds a table (a solver table's files, or one file), with progress lines on stderr.
#[pyfunction]
#[pyo3(signature = (name, tables_dir=None))]
pub fn tables_build(py: Python<'_>, name: &str, tables_dir: Option<PathBuf>) -> PyResult<PathBuf> {
    known(name)?;
    let dir = dir(tables_dir);
    py.detach(|| match proto::catalog::find(name) {
        Some(e) => worker::catalog::build_entry(&dir, e, &Stderr),
        None => worker::catalog::build_file(&dir, name, &Stderr),
    })
    .map_err(table_error)?;
    Ok(table_path(&dir, name))
}

/// Verifies a table file's checksum and distribution (each file of a solver table);
/// raises TableError naming the file that fails.
#[pyfunction]
#[pyo3(signature = (name, tables_dir=None))]
pub fn tables_verify(py: Python<'_>, name: &str, tables_dir: Option<PathBuf>) -> PyResult<()> {
    known(name)?;
    let dir = dir(tables_dir);
    let files: Vec<&str> = match proto::catalog::find(name) {
        Some(e) => e.files.to_vec(),
        None => vec![name],
    };
    py.detach(|| {
        for f in files {
            let path = table_path(&dir, f);
            TableFile::open(&path, f)
                .and_then(|t| t.verify())
                .map_err(|e| err(Kind::Table, format!("{f}: {}", chain(&e))))?;
        }
        Ok(())
    })
}
