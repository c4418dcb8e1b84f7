//! Positions without a search: facelets, applying moves, random states.

use crate::errors::{err, Kind};
use crate::text;
use pyo3::prelude::*;
use tables::facelet::to_facelets;
use tables::{Cube, Position};

/// The argument `name` (`position`, `to`) as a position, or a PositionError naming it.
pub fn parse(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Position> {
    let text = text::arg(v, name)?;
    Position::parse(&text).map_err(|e| err(Kind::Position, format!("{name} {text:?}: {e}")))
}

fn moves(v: &Bound<'_, PyAny>) -> PyResult<Vec<tables::Move>> {
    let text = text::arg(v, "moves")?;
    tables::parse_moves(&text).map_err(|e| err(Kind::Position, format!("moves {text:?}: {e}")))
}

/// The 54-character facelet string (URFDLB) of a scramble or facelet string.
#[pyfunction]
pub fn facelets(position: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(to_facelets(parse(position, "position")?.cube()))
}

/// The facelet string of `position` after `moves`.
#[pyfunction]
pub fn apply(position: &Bound<'_, PyAny>, moves_text: &Bound<'_, PyAny>) -> PyResult<String> {
    let p = parse(position, "position")?;
    Ok(to_facelets(&p.cube().apply_moves(&moves(moves_text)?)))
}

/// Whether `moves` take `position` to the solved cube.
#[pyfunction]
pub fn is_solved_by(position: &Bound<'_, PyAny>, moves_text: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(parse(position, "position")?.is_solved_by(&moves(moves_text)?))
}

/// A uniformly random position's facelet string; the same `seed` gives the same one.
#[pyfunction]
#[pyo3(signature = (seed=None))]
pub fn random_state(seed: Option<u64>) -> String {
    let seed = seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        t ^ (std::process::id() as u64).rotate_left(32)
    });
    let mut rng = tables::random::SplitMix64::new(seed);
    to_facelets(&Cube::random(&mut rng))
}
