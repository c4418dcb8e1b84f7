//! `cubeswarm._native`: the Rust side of the `cubeswarm` Python package.
//!
//! The Python package (`python/cubeswarm`) wraps these functions in its typed API; this
//! module only converts between Python objects and the library crates.
//!
//! # Layout
//! - `errors`: the package's exception classes (defined in `cubeswarm/errors.py`) raised
//!   from Rust with the CLI's messages.
//! - `settings`: keyword arguments checked into [`proto::Settings`].
//! - `engines`: the tables directory, the table to use, opened engines kept per process.
//! - `pool`: the in-process executor as a coordinator executor (what the CLI runs).
//! - `wait`: work on a thread while the GIL is released, signals checked meanwhile.
//! - `solve`: `solve` and `SolveMany` over the coordinator's embedded run (a one-position
//!   two-phase `solve` calls the engine directly: a run's set-up would cost more than
//!   the search).
//! - `cluster`: a cluster's client run and status.
//! - `cube`: facelets, apply, random states, positions relative to a target.
//! - `tables_fns`: list, build, verify.
//! - `scramble`: random-state scrambles by seed (the CLI's `scramble`).

mod cluster;
mod cube;
mod engines;
mod errors;
mod pool;
mod scramble;
mod settings;
mod solve;
mod tables_fns;
mod wait;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cube::facelets, m)?)?;
    m.add_function(wrap_pyfunction!(cube::apply, m)?)?;
    m.add_function(wrap_pyfunction!(cube::random_state, m)?)?;
    m.add_function(wrap_pyfunction!(cube::relative, m)?)?;
    m.add_function(wrap_pyfunction!(cube::is_solved_by, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_class::<solve::SolveMany>()?;
    m.add_function(wrap_pyfunction!(cluster::cluster_run, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::cluster_status, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_dir, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_list, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_build, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_verify, m)?)?;
    m.add_function(wrap_pyfunction!(scramble::scramble, m)?)?;
    Ok(())
}
