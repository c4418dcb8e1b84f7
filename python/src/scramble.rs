//! `cubeswarm.scramble`: random-state scrambles, the CLI's `cubeswarm scramble` (the same
//! seed gives the same scrambles), over a two-phase solver opened once per directory.

use crate::errors::{err, front, Kind};
use crate::progress::Stderr;
use frontend::{chain, Dialect};
use pyo3::prelude::*;
use std::path::PathBuf;

/// Scrambles made between two checks for Ctrl-C (a fraction of a second on two cores).
const CHUNK: u64 = 1024;

#[pyfunction]
#[pyo3(signature = (n, seed=None, tables_dir=None))]
pub fn scramble(
    py: Python<'_>,
    n: u64,
    seed: Option<u64>,
    tables_dir: Option<PathBuf>,
) -> PyResult<Vec<String>> {
    let dir = tables_dir.unwrap_or_else(tables::tablefile::default_tables_dir);
    let scrambler = py
        .detach(|| frontend::scramble::scrambler(&dir, &Dialect::PYTHON, &Stderr))
        .map_err(front)?;
    let seed = seed.unwrap_or_else(frontend::scramble::random_seed);
    let mut out = Vec::new();
    let mut done = 0u64;
    while done < n {
        let end = done.saturating_add(CHUNK).min(n);
        let batch = py
            .detach(|| scrambler.scrambles(seed, done..end))
            .map_err(|e| err(Kind::Other, chain(&e)))?;
        out.extend(batch.iter().map(|s| s.text()));
        done = end;
        py.check_signals()?;
    }
    Ok(out)
}
