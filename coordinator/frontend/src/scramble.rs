//! The scrambler of random-state scrambles ([`worker::Scrambler`]) over the two-phase
//! tables of a directory: checked once, built when missing (announced on stderr), and
//! kept per process.

use crate::{Dialect, Error};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use tables::progress::Progress;
use worker::Scrambler;

/// The scrambler over the two-phase tables in `dir`, opened once per process.
pub fn scrambler(dir: &Path, d: &Dialect, progress: &dyn Progress) -> Result<Scrambler, Error> {
    static OPENED: OnceLock<Mutex<HashMap<PathBuf, Scrambler>>> = OnceLock::new();
    let mut opened = OPENED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(s) = opened.get(dir) {
        return Ok(s.clone());
    }
    let table = proto::catalog::TWOPHASE;
    let entry =
        worker::catalog::entry(table).map_err(|e| Error::table(format!("table {table}"), e))?;
    if entry.present(dir) {
        worker::catalog::verify_once(dir, entry, progress)
            .map_err(|e| Error::table(format!("checking table {table}"), e))?;
    } else {
        d.say(&format!(
            "building the two-phase tables in {} ({}, once)…",
            dir.display(),
            crate::table::size_of(table)
        ));
    }
    let solver = worker::TwoPhaseSolver::open_or_build(dir, progress)
        .map_err(|e| Error::table(format!("two-phase tables in {}", dir.display()), e))?;
    let s = Scrambler::new(solver).map_err(|e| Error::Settings(format!("internal error: {e}")))?;
    opened.insert(dir.to_path_buf(), s.clone());
    Ok(s)
}

/// A seed that differs from run to run and call to call (when none is given): the
/// standard library's per-process random hash keys over the time and the process id.
pub fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish()
}
