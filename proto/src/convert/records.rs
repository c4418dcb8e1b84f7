//! Records: the final answer for one input line ([`Record`]), solved or why not (a
//! [`BadLine`], a line not UTF-8, or its job's error).

use super::fields::{moves_bytes, sequences_from, stop_from, stop_wire, u8_from};
use super::DecodeError;
use crate::record::{BadLine, BadLineKind, Record, RecordError, Solved};
use crate::wire as w;

impl From<&Record> for w::Record {
    fn from(r: &Record) -> Self {
        use w::record::Outcome;
        use w::record_error::Kind;
        let outcome = match &r.outcome {
            Ok(s) => Outcome::Solved(w::Solved {
                solutions: s.solutions.iter().map(|m| moves_bytes(m)).collect(),
                optimal: s.optimal,
                depth_exhausted: s.depth_exhausted.map(u32::from),
                nodes: s.nodes,
                lookups: s.lookups,
                micros: s.micros,
                stop: stop_wire(s.stop).into(),
            }),
            Err(e) => Outcome::Error(w::RecordError {
                kind: Some(match e {
                    RecordError::Parse(b) => Kind::BadLine(w::BadLine {
                        kind: bad_line_kind_wire(b.kind).into(),
                        message: b.message.clone(),
                    }),
                    RecordError::NotUtf8 => Kind::NotUtf8(true),
                    RecordError::Job(j) => Kind::Job(j.into()),
                }),
            }),
        };
        w::Record {
            id: r.line,
            input: r.input.clone(),
            outcome: Some(outcome),
        }
    }
}

fn bad_line_kind_wire(k: BadLineKind) -> w::BadLineKind {
    match k {
        BadLineKind::Notation => w::BadLineKind::Notation,
        BadLineKind::Facelets => w::BadLineKind::Facelets,
        BadLineKind::Unsolvable => w::BadLineKind::Unsolvable,
        BadLineKind::TooLong => w::BadLineKind::TooLong,
    }
}

fn bad_line_kind_from(field: &'static str, v: i32) -> Result<BadLineKind, DecodeError> {
    match w::BadLineKind::try_from(v) {
        Ok(w::BadLineKind::Notation) => Ok(BadLineKind::Notation),
        Ok(w::BadLineKind::Facelets) => Ok(BadLineKind::Facelets),
        Ok(w::BadLineKind::Unsolvable) => Ok(BadLineKind::Unsolvable),
        Ok(w::BadLineKind::TooLong) => Ok(BadLineKind::TooLong),
        _ => Err(DecodeError::UnknownEnum { field, value: v }),
    }
}

impl TryFrom<w::Record> for Record {
    type Error = DecodeError;
    fn try_from(r: w::Record) -> Result<Self, DecodeError> {
        use w::record::Outcome;
        use w::record_error::Kind;
        let outcome = match r.outcome.ok_or(DecodeError::Missing("record.outcome"))? {
            Outcome::Solved(s) => Ok(Solved {
                solutions: sequences_from("record.solutions", &s.solutions)?,
                optimal: s.optimal,
                depth_exhausted: s
                    .depth_exhausted
                    .map(|d| u8_from("record.depth_exhausted", d))
                    .transpose()?,
                nodes: s.nodes,
                lookups: s.lookups,
                micros: s.micros,
                stop: stop_from("record.stop", s.stop)?,
            }),
            Outcome::Error(e) => Err(
                match e.kind.ok_or(DecodeError::Missing("record.error.kind"))? {
                    Kind::BadLine(b) => RecordError::Parse(BadLine {
                        kind: bad_line_kind_from("record.error.bad_line.kind", b.kind)?,
                        message: b.message,
                    }),
                    Kind::NotUtf8(_) => RecordError::NotUtf8,
                    Kind::Job(j) => RecordError::Job(j.try_into()?),
                },
            ),
        };
        Ok(Record {
            line: r.id,
            input: r.input,
            outcome,
        })
    }
}
