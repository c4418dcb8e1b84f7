//! Domain ⇄ wire: the one place where `cubeswarm.v1` messages become domain values and
//! back.
//!
//! Encoding (`From<&Domain> for wire`) cannot fail. Decoding (`TryFrom<wire> for Domain`)
//! checks everything a peer could get wrong or forge — missing fields, unknown enum
//! values, lengths beyond a byte, impossible cubes, move bytes out of range — and returns a
//! [`DecodeError`] naming the field, never panics.
//!
//! # Layout
//! - this file: [`DecodeError`] and the longest sequence accepted;
//! - `fields`: positions, move sequences, numbers that fit a byte, the method and the stop
//!   reason;
//! - `jobs`: a job, its work and settings, and a hand-back;
//! - `results`: a job's result, its answers per position and results per subtree;
//! - `errors`: a job's error and the settings error it may hold;
//! - `records`: the final answer for one input line;
//! - `tests`: round trips of every domain value, and decoding of arbitrary bytes.

mod errors;
mod fields;
mod jobs;
mod records;
mod results;

pub use self::fields::{moves_bytes, moves_from, position_bytes, position_from};

use tables::CubieError;

/// Why a wire message is not a domain value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A required field or `oneof` is absent.
    #[error("{0} is missing")]
    Missing(&'static str),
    /// An enum field holds a value this build does not know (or the unspecified zero).
    #[error("{field} has an unknown value {value}")]
    UnknownEnum {
        /// The field.
        field: &'static str,
        /// The value received.
        value: i32,
    },
    /// A number does not fit the domain's range.
    #[error("{field} is {value}, at most {max} is allowed")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The value received.
        value: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// A position is not 40 bytes.
    #[error("{field}: a position is 40 bytes, got {len}")]
    PositionLength {
        /// The field.
        field: &'static str,
        /// The length received.
        len: usize,
    },
    /// A position's bytes are not a reachable cube.
    #[error("{field}: {error}")]
    Position {
        /// The field.
        field: &'static str,
        /// Why the cube is impossible.
        error: CubieError,
    },
    /// A move byte is not one of the 18 moves.
    #[error("{field}: move byte {value} is not a move (0..=17)")]
    Move {
        /// The field.
        field: &'static str,
        /// The byte received.
        value: u8,
    },
}

/// The longest move sequence accepted from the wire (solutions and prefixes).
pub const MAX_SEQUENCE: usize = 64;

// The names the tests read through `use super::*`.
#[cfg(test)]
use self::results::{answer_from, answer_wire};
#[cfg(test)]
use crate::job::{
    BatchItem, Internal, Job, JobError, JobId, JobOutput, JobResult, Method, PositionError,
    PositionResult, Settings, SettingsError, Stop, SubtreeResult, SubtreeWork, Work,
};
#[cfg(test)]
use crate::record::{BadLine, BadLineKind, Record, RecordError, Solved};
#[cfg(test)]
use crate::wire as w;
#[cfg(test)]
use tables::{Cube, Move, Position};

#[cfg(test)]
mod tests;
