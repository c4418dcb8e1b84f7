//! `cubeswarm._native`: the Rust side of the `cubeswarm` Python package.
//!
//! The Python package (`python/cubeswarm`) wraps these functions in its typed API; this
//! module only converts between Python objects and the library crates.
//!
//! # Layout
//! - `errors`: the package's exception classes (defined in `cubeswarm/errors.py`) raised
//!   from Rust with the CLI's messages.
//! - `progress`: table work reported on stderr.
//! - `request`: the keyword arguments of a solve, one dict, into the library's one
//!   `Request`.
//! - `wait`: work on a thread while the GIL is released, signals checked meanwhile.
//! - `solve`: `solve` and `SolveMany` through the front-end library's embedded run (the
//!   CLI's path: settings, table choice, the tables opened once per process, the driver).
//! - `text`: a position's text from a Python value (an argument, or an item of an
//!   iterable of positions).
//! - `connection`: `Connection`, how to reach a cluster's coordinator, checked once.
//! - `cluster`: `ClusterRun`, a cluster request's records streamed as they arrive, and
//!   the cluster's status, through the front-end library's client.
//! - `cube`: facelets, apply, random states.
//! - `tables_fns`: list, build, verify.
//! - `scramble`: random-state scrambles by seed (the CLI's `scramble`).

mod cluster;
mod connection;
mod cube;
mod errors;
mod progress;
mod request;
mod scramble;
mod solve;
mod tables_fns;
mod text;
mod wait;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cube::facelets, m)?)?;
    m.add_function(wrap_pyfunction!(cube::apply, m)?)?;
    m.add_function(wrap_pyfunction!(cube::random_state, m)?)?;
    m.add_function(wrap_pyfunction!(cube::is_solved_by, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_class::<solve::SolveMany>()?;
    m.add_class::<connection::Connection>()?;
    m.add_class::<cluster::ClusterRun>()?;
    m.add_function(wrap_pyfunction!(cluster::cluster_status, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_dir, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_list, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_build, m)?)?;
    m.add_function(wrap_pyfunction!(tables_fns::tables_verify, m)?)?;
    m.add_function(wrap_pyfunction!(scramble::scramble, m)?)?;
    Ok(())
}
