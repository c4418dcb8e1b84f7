//! The fields every message shares: positions (40 bytes), move sequences (one byte a
//! move), numbers that must fit a byte, and the [`Method`] and [`Stop`] enums.

use super::{DecodeError, MAX_SEQUENCE};
use crate::job::{Method, Stop};
use crate::wire as w;
use tables::{Cube, Move, Position};

/// A position's 40 wire bytes.
pub fn position_bytes(p: &Position) -> Vec<u8> {
    let c = p.cube();
    let mut b = Vec::with_capacity(40);
    b.extend_from_slice(&c.cp());
    b.extend_from_slice(&c.co());
    b.extend_from_slice(&c.ep());
    b.extend_from_slice(&c.eo());
    b
}

/// A position from its 40 wire bytes, checked.
pub fn position_from(field: &'static str, b: &[u8]) -> Result<Position, DecodeError> {
    if b.len() != 40 {
        return Err(DecodeError::PositionLength {
            field,
            len: b.len(),
        });
    }
    let mut cp = [0u8; 8];
    let mut co = [0u8; 8];
    let mut ep = [0u8; 12];
    let mut eo = [0u8; 12];
    cp.copy_from_slice(&b[0..8]);
    co.copy_from_slice(&b[8..16]);
    ep.copy_from_slice(&b[16..28]);
    eo.copy_from_slice(&b[28..40]);
    let cube =
        Cube::from_parts(cp, co, ep, eo).map_err(|error| DecodeError::Position { field, error })?;
    Position::new(cube).map_err(|error| DecodeError::Position { field, error })
}

/// A move sequence's wire bytes.
pub fn moves_bytes(m: &[Move]) -> Vec<u8> {
    m.iter().map(|m| m.index() as u8).collect()
}

/// A move sequence from its wire bytes.
pub fn moves_from(field: &'static str, b: &[u8]) -> Result<Vec<Move>, DecodeError> {
    if b.len() > MAX_SEQUENCE {
        return Err(DecodeError::OutOfRange {
            field,
            value: b.len() as u64,
            max: MAX_SEQUENCE as u64,
        });
    }
    b.iter()
        .map(|&v| Move::from_index(v as usize).ok_or(DecodeError::Move { field, value: v }))
        .collect()
}

pub(super) fn sequences_from(
    field: &'static str,
    v: &[Vec<u8>],
) -> Result<Vec<Vec<Move>>, DecodeError> {
    v.iter().map(|b| moves_from(field, b)).collect()
}

pub(super) fn u8_from(field: &'static str, v: u32) -> Result<u8, DecodeError> {
    u8::try_from(v).map_err(|_| DecodeError::OutOfRange {
        field,
        value: v.into(),
        max: u8::MAX.into(),
    })
}

pub(super) fn method_wire(m: Method) -> w::Method {
    match m {
        Method::Optimal => w::Method::Optimal,
        Method::TwoPhase => w::Method::Twophase,
    }
}

pub(super) fn method_from(field: &'static str, v: i32) -> Result<Method, DecodeError> {
    match w::Method::try_from(v) {
        Ok(w::Method::Optimal) => Ok(Method::Optimal),
        Ok(w::Method::Twophase) => Ok(Method::TwoPhase),
        _ => Err(DecodeError::UnknownEnum { field, value: v }),
    }
}

pub(super) fn stop_wire(s: Stop) -> w::Stop {
    match s {
        Stop::Completed => w::Stop::Completed,
        Stop::Exhausted => w::Stop::Exhausted,
        Stop::Cancelled => w::Stop::Cancelled,
        Stop::TimeLimit => w::Stop::TimeLimit,
        Stop::ProbeLimit => w::Stop::ProbeLimit,
    }
}

pub(super) fn stop_from(field: &'static str, v: i32) -> Result<Stop, DecodeError> {
    match w::Stop::try_from(v) {
        Ok(w::Stop::Completed) => Ok(Stop::Completed),
        Ok(w::Stop::Exhausted) => Ok(Stop::Exhausted),
        Ok(w::Stop::Cancelled) => Ok(Stop::Cancelled),
        Ok(w::Stop::TimeLimit) => Ok(Stop::TimeLimit),
        Ok(w::Stop::ProbeLimit) => Ok(Stop::ProbeLimit),
        _ => Err(DecodeError::UnknownEnum { field, value: v }),
    }
}
