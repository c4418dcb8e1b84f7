//! `cubeswarm.scramble`: random-state scrambles, the CLI's `cubeswarm scramble` (the same
//! seed gives the same scrambles), over a two-phase solver opened once per directory.

use crate::errors::{chain, err, Kind};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use worker::Scrambler;

/// Scrambles made between two checks for Ctrl-C (a fraction of a second on two cores).
const CHUNK: u64 = 1024;

/// The scrambler over the two-phase tables of `dir`, opened once per process (the tables
/// are built first when missing, with a message on stderr); a TableError when they
/// cannot be.
fn scrambler(dir: &Path) -> Result<Scrambler, String> {
    static OPEN: OnceLock<Mutex<HashMap<PathBuf, Scrambler>>> = OnceLock::new();
    let mut open = OPEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(s) = open.get(dir) {
        return Ok(s.clone());
    }
    if !worker::twophase::TwoPhaseTables::missing(dir).is_empty() {
        eprintln!(
            "cubeswarm: building the two-phase tables in {} (about 130 MB, once)…",
            dir.display()
        );
    }
    let solver = worker::TwoPhaseSolver::open_or_build(dir, &tables::progress::Silent)
        .map_err(|e| chain(&e))?;
    let s = Scrambler::new(solver).map_err(|e| chain(&e))?;
    open.insert(dir.to_path_buf(), s.clone());
    Ok(s)
}

/// `n` scrambles of `seed` (a random seed when None), in index order, made on every core
/// with the GIL released; Ctrl-C stops between chunks.
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
        .detach(|| scrambler(&dir))
        .map_err(|e| err(Kind::Table, e))?;
    let seed = seed.unwrap_or_else(random_seed);
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

/// A seed that differs from call to call: the standard library's random hash keys over
/// the time.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.finish()
}
