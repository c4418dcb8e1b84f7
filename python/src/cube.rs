//! Positions without a search: facelets, applying moves, random states, a position
//! relative to a target pattern.

use crate::errors::{err, Kind};
use pyo3::prelude::*;
use tables::facelet::to_facelets;
use tables::{Cube, Position};

/// `text` as a position, or a PositionError naming it.
pub fn parse(text: &str) -> PyResult<Position> {
    Position::parse(text).map_err(|e| err(Kind::Position, format!("position {text:?}: {e}")))
}

fn moves(text: &str) -> PyResult<Vec<tables::Move>> {
    tables::parse_moves(text).map_err(|e| err(Kind::Position, format!("moves {text:?}: {e}")))
}

/// The 54-character facelet string (URFDLB) of a scramble or facelet string.
#[pyfunction]
pub fn facelets(position: &str) -> PyResult<String> {
    Ok(to_facelets(parse(position)?.cube()))
}

/// The facelet string of `position` after `moves`.
#[pyfunction]
pub fn apply(position: &str, moves_text: &str) -> PyResult<String> {
    let p = parse(position)?;
    Ok(to_facelets(&p.cube().apply_moves(&moves(moves_text)?)))
}

/// Whether `moves` take `position` to the solved cube.
#[pyfunction]
pub fn is_solved_by(position: &str, moves_text: &str) -> PyResult<bool> {
    Ok(parse(position)?.is_solved_by(&moves(moves_text)?))
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

/// The facelet string of the position whose solutions take `position` to `target`
/// ([`Position::relative_to`]).
#[pyfunction]
pub fn relative(position: &str, target: &str) -> PyResult<String> {
    let p = parse(position)?;
    let t = Position::parse(target)
        .map_err(|e| err(Kind::Position, format!("target {target:?}: {e}")))?;
    Ok(to_facelets(p.relative_to(&t).cube()))
}
