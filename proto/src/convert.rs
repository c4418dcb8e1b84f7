//! Domain ⇄ wire: the one place where `cubeswarm.v1` messages become domain values and
//! back.
//!
//! Encoding (`From<&Domain> for wire`) cannot fail. Decoding (`TryFrom<wire> for Domain`)
//! checks everything a peer could get wrong or forge — missing fields, unknown enum
//! values, lengths beyond a byte, impossible cubes, move bytes out of range — and returns a
//! [`DecodeError`] naming the field, never panics.

use crate::job::{
    BatchItem, Internal, Job, JobError, JobId, JobOutput, JobResult, Method, PositionAnswer,
    PositionError, PositionResult, Settings, SettingsError, Stop, SubtreeResult, SubtreeWork, Work,
};
use crate::pieces::Handback;
use crate::record::{BadLine, BadLineKind, Record, RecordError, Solved};
use crate::wire as w;
use tables::{Cube, CubieError, Move, Position};

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

// ---- small pieces ------------------------------------------------------------------------

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

fn sequences_from(field: &'static str, v: &[Vec<u8>]) -> Result<Vec<Vec<Move>>, DecodeError> {
    v.iter().map(|b| moves_from(field, b)).collect()
}

fn u8_from(field: &'static str, v: u32) -> Result<u8, DecodeError> {
    u8::try_from(v).map_err(|_| DecodeError::OutOfRange {
        field,
        value: v.into(),
        max: u8::MAX.into(),
    })
}

fn pieces_from(v: u32) -> Result<u8, DecodeError> {
    match u8::try_from(v) {
        Ok(p) if p <= crate::pieces::MAX_PIECE_LEVELS => Ok(p),
        _ => Err(DecodeError::OutOfRange {
            field: "job.subtrees.pieces",
            value: v.into(),
            max: crate::pieces::MAX_PIECE_LEVELS.into(),
        }),
    }
}

impl From<&Handback> for w::Handback {
    fn from(h: &Handback) -> Self {
        w::Handback {
            job: h.job.0,
            attempt: h.attempt,
            kept: h.kept,
        }
    }
}

impl From<w::Handback> for Handback {
    fn from(h: w::Handback) -> Self {
        Handback {
            job: JobId(h.job),
            attempt: h.attempt,
            kept: h.kept,
        }
    }
}

fn method_wire(m: Method) -> w::Method {
    match m {
        Method::Optimal => w::Method::Optimal,
        Method::TwoPhase => w::Method::Twophase,
    }
}

fn method_from(field: &'static str, v: i32) -> Result<Method, DecodeError> {
    match w::Method::try_from(v) {
        Ok(w::Method::Optimal) => Ok(Method::Optimal),
        Ok(w::Method::Twophase) => Ok(Method::TwoPhase),
        _ => Err(DecodeError::UnknownEnum { field, value: v }),
    }
}

fn stop_wire(s: Stop) -> w::Stop {
    match s {
        Stop::Completed => w::Stop::Completed,
        Stop::Exhausted => w::Stop::Exhausted,
        Stop::Cancelled => w::Stop::Cancelled,
        Stop::TimeLimit => w::Stop::TimeLimit,
        Stop::ProbeLimit => w::Stop::ProbeLimit,
    }
}

fn stop_from(field: &'static str, v: i32) -> Result<Stop, DecodeError> {
    match w::Stop::try_from(v) {
        Ok(w::Stop::Completed) => Ok(Stop::Completed),
        Ok(w::Stop::Exhausted) => Ok(Stop::Exhausted),
        Ok(w::Stop::Cancelled) => Ok(Stop::Cancelled),
        Ok(w::Stop::TimeLimit) => Ok(Stop::TimeLimit),
        Ok(w::Stop::ProbeLimit) => Ok(Stop::ProbeLimit),
        _ => Err(DecodeError::UnknownEnum { field, value: v }),
    }
}

// ---- settings and jobs -------------------------------------------------------------------

impl From<&Settings> for w::Settings {
    fn from(s: &Settings) -> Self {
        w::Settings {
            method: method_wire(s.method).into(),
            min_length: s.min_length.into(),
            max_length: s.max_length.into(),
            max_solutions: s.max_solutions,
            time_limit_ms: s.time_limit_ms,
            probe_limit: s.probe_limit,
            anytime: s.anytime,
        }
    }
}

impl TryFrom<w::Settings> for Settings {
    type Error = DecodeError;
    fn try_from(s: w::Settings) -> Result<Self, DecodeError> {
        Ok(Settings {
            method: method_from("settings.method", s.method)?,
            min_length: u8_from("settings.min_length", s.min_length)?,
            max_length: u8_from("settings.max_length", s.max_length)?,
            max_solutions: s.max_solutions,
            time_limit_ms: s.time_limit_ms,
            probe_limit: s.probe_limit,
            anytime: s.anytime,
        })
    }
}

impl From<&Job> for w::Job {
    fn from(j: &Job) -> Self {
        let work = match &j.work {
            Work::Batch { settings, items } => w::job::Work::Batch(w::BatchWork {
                settings: Some(settings.into()),
                items: items
                    .iter()
                    .map(|i| w::BatchItem {
                        line: i.line,
                        position: position_bytes(&i.position),
                    })
                    .collect(),
            }),
            Work::Subtrees(s) => w::job::Work::Subtrees(w::SubtreeWork {
                position: position_bytes(&s.position),
                depth: s.depth.into(),
                prefixes: s.prefixes.iter().map(|p| moves_bytes(p)).collect(),
                max_solutions: s.max_solutions,
                time_limit_ms: s.time_limit_ms,
                pieces: s.pieces.into(),
            }),
        };
        w::Job {
            id: j.id.0,
            attempt: j.attempt,
            table: j.table.clone(),
            work: Some(work),
        }
    }
}

impl TryFrom<w::Job> for Job {
    type Error = DecodeError;
    fn try_from(j: w::Job) -> Result<Self, DecodeError> {
        let work = match j.work.ok_or(DecodeError::Missing("job.work"))? {
            w::job::Work::Batch(b) => Work::Batch {
                settings: b
                    .settings
                    .ok_or(DecodeError::Missing("job.batch.settings"))?
                    .try_into()?,
                items: b
                    .items
                    .into_iter()
                    .map(|i| {
                        Ok(BatchItem {
                            line: i.line,
                            position: position_from("job.batch.items.position", &i.position)?,
                        })
                    })
                    .collect::<Result<_, DecodeError>>()?,
            },
            w::job::Work::Subtrees(s) => Work::Subtrees(SubtreeWork {
                position: position_from("job.subtrees.position", &s.position)?,
                depth: u8_from("job.subtrees.depth", s.depth)?,
                prefixes: sequences_from("job.subtrees.prefixes", &s.prefixes)?,
                max_solutions: s.max_solutions,
                time_limit_ms: s.time_limit_ms,
                pieces: pieces_from(s.pieces)?,
            }),
        };
        Ok(Job {
            id: JobId(j.id),
            attempt: j.attempt,
            table: j.table,
            work,
        })
    }
}

// ---- results -----------------------------------------------------------------------------

impl From<&PositionResult> for w::PositionResult {
    fn from(r: &PositionResult) -> Self {
        w::PositionResult {
            line: r.line,
            solutions: r.solutions.iter().map(|s| moves_bytes(s)).collect(),
            optimal: r.optimal,
            lower_bound: r.lower_bound.into(),
            depth_exhausted: r.depth_exhausted.map(u32::from),
            nodes: r.nodes,
            lookups: r.lookups,
            micros: r.micros,
            stop: stop_wire(r.stop).into(),
            error: None,
        }
    }
}

fn answer_wire(a: &PositionAnswer) -> w::PositionResult {
    match a {
        Ok(r) => r.into(),
        Err(e) => w::PositionResult {
            line: e.line,
            error: Some((&e.error).into()),
            ..Default::default()
        },
    }
}

fn answer_from(r: w::PositionResult) -> Result<PositionAnswer, DecodeError> {
    if let Some(e) = r.error {
        return Ok(Err(PositionError {
            line: r.line,
            error: e.try_into()?,
        }));
    }
    Ok(Ok(PositionResult {
        line: r.line,
        solutions: sequences_from("result.solutions", &r.solutions)?,
        optimal: r.optimal,
        lower_bound: u8_from("result.lower_bound", r.lower_bound)?,
        depth_exhausted: r
            .depth_exhausted
            .map(|d| u8_from("result.depth_exhausted", d))
            .transpose()?,
        nodes: r.nodes,
        lookups: r.lookups,
        micros: r.micros,
        stop: stop_from("result.stop", r.stop)?,
    }))
}

impl From<&SubtreeResult> for w::SubtreeResult {
    fn from(r: &SubtreeResult) -> Self {
        w::SubtreeResult {
            prefix: r.prefix,
            solutions: r.solutions.iter().map(|s| moves_bytes(s)).collect(),
            nodes: r.nodes,
            lookups: r.lookups,
            stop: stop_wire(r.stop).into(),
        }
    }
}

impl TryFrom<w::SubtreeResult> for SubtreeResult {
    type Error = DecodeError;
    fn try_from(r: w::SubtreeResult) -> Result<Self, DecodeError> {
        Ok(SubtreeResult {
            prefix: r.prefix,
            solutions: sequences_from("subtree.solutions", &r.solutions)?,
            nodes: r.nodes,
            lookups: r.lookups,
            stop: stop_from("subtree.stop", r.stop)?,
        })
    }
}

impl From<&SettingsError> for w::SettingsError {
    fn from(e: &SettingsError) -> Self {
        use w::settings_error::Kind;
        let kind = match *e {
            SettingsError::MaxLength { value } => Kind::MaxLength(value.into()),
            SettingsError::MinAboveMax { min, max } => Kind::MinAboveMax(w::MinAboveMax {
                min: min.into(),
                max: max.into(),
            }),
            SettingsError::NoSolutions => Kind::NoSolutions(true),
            SettingsError::TooManySolutions { value } => Kind::TooManySolutions(value),
            SettingsError::EverySolutionTwoPhase => Kind::EverySolutionTwoPhase(true),
            SettingsError::AnytimeOptimal => Kind::AnytimeOptimal(true),
            SettingsError::AnytimeWithoutTimeLimit => Kind::AnytimeWithoutTimeLimit(true),
        };
        w::SettingsError { kind: Some(kind) }
    }
}

impl TryFrom<w::SettingsError> for SettingsError {
    type Error = DecodeError;
    fn try_from(e: w::SettingsError) -> Result<Self, DecodeError> {
        use w::settings_error::Kind;
        Ok(
            match e.kind.ok_or(DecodeError::Missing("settings_error.kind"))? {
                Kind::MaxLength(v) => SettingsError::MaxLength {
                    value: u8_from("settings_error.max_length", v)?,
                },
                Kind::MinAboveMax(m) => SettingsError::MinAboveMax {
                    min: u8_from("settings_error.min", m.min)?,
                    max: u8_from("settings_error.max", m.max)?,
                },
                Kind::NoSolutions(_) => SettingsError::NoSolutions,
                Kind::TooManySolutions(value) => SettingsError::TooManySolutions { value },
                Kind::EverySolutionTwoPhase(_) => SettingsError::EverySolutionTwoPhase,
                Kind::AnytimeOptimal(_) => SettingsError::AnytimeOptimal,
                Kind::AnytimeWithoutTimeLimit(_) => SettingsError::AnytimeWithoutTimeLimit,
            },
        )
    }
}

fn table_failure(path: &str, reason: &str) -> w::TableFailure {
    w::TableFailure {
        path: path.to_string(),
        reason: reason.to_string(),
    }
}

impl From<&JobError> for w::JobError {
    fn from(e: &JobError) -> Self {
        use w::job_error::Kind;
        let kind = match e {
            JobError::MissingTable { name } => Kind::MissingTable(name.clone()),
            JobError::WrongTable { name, method } => Kind::WrongTable(w::WrongTable {
                name: name.clone(),
                method: method_wire(*method).into(),
            }),
            JobError::InvalidSettings(s) => Kind::InvalidSettings(s.into()),
            JobError::Verification { moves } => Kind::Verification(moves.clone()),
            JobError::TableUnreadable { path, reason } => {
                Kind::TableUnreadable(table_failure(path, reason))
            }
            JobError::TableDamaged { path, reason } => {
                Kind::TableDamaged(table_failure(path, reason))
            }
            JobError::Internal(Internal::Panic { message }) => Kind::Panic(message.clone()),
            JobError::Internal(Internal::Threads { reason }) => Kind::Threads(reason.clone()),
            JobError::Undecodable { reason } => Kind::Undecodable(reason.clone()),
        };
        w::JobError { kind: Some(kind) }
    }
}

impl TryFrom<w::JobError> for JobError {
    type Error = DecodeError;
    fn try_from(e: w::JobError) -> Result<Self, DecodeError> {
        use w::job_error::Kind;
        Ok(
            match e.kind.ok_or(DecodeError::Missing("job_error.kind"))? {
                Kind::MissingTable(name) => JobError::MissingTable { name },
                Kind::WrongTable(t) => JobError::WrongTable {
                    name: t.name,
                    method: method_from("job_error.wrong_table.method", t.method)?,
                },
                Kind::InvalidSettings(s) => JobError::InvalidSettings(s.try_into()?),
                Kind::Verification(moves) => JobError::Verification { moves },
                Kind::TableUnreadable(t) => JobError::TableUnreadable {
                    path: t.path,
                    reason: t.reason,
                },
                Kind::TableDamaged(t) => JobError::TableDamaged {
                    path: t.path,
                    reason: t.reason,
                },
                Kind::Panic(message) => JobError::Internal(Internal::Panic { message }),
                Kind::Threads(reason) => JobError::Internal(Internal::Threads { reason }),
                Kind::Undecodable(reason) => JobError::Undecodable { reason },
            },
        )
    }
}

impl From<&JobResult> for w::JobResult {
    fn from(r: &JobResult) -> Self {
        use w::job_result::Output;
        let output = match &r.output {
            Ok(JobOutput::Batch(v)) => Output::Batch(w::BatchOutput {
                results: v.iter().map(answer_wire).collect(),
            }),
            Ok(JobOutput::Subtrees(v)) => Output::Subtrees(w::SubtreesOutput {
                results: v.iter().map(Into::into).collect(),
            }),
            Err(e) => Output::Error(e.into()),
        };
        w::JobResult {
            id: r.id.0,
            attempt: r.attempt,
            micros: r.micros,
            output: Some(output),
        }
    }
}

impl TryFrom<w::JobResult> for JobResult {
    type Error = DecodeError;
    fn try_from(r: w::JobResult) -> Result<Self, DecodeError> {
        use w::job_result::Output;
        let output = match r.output.ok_or(DecodeError::Missing("job_result.output"))? {
            Output::Batch(b) => Ok(JobOutput::Batch(
                b.results
                    .into_iter()
                    .map(answer_from)
                    .collect::<Result<_, _>>()?,
            )),
            Output::Subtrees(s) => Ok(JobOutput::Subtrees(
                s.results
                    .into_iter()
                    .map(TryInto::try_into)
                    .collect::<Result<_, _>>()?,
            )),
            Output::Error(e) => Err(e.try_into()?),
        };
        Ok(JobResult {
            id: JobId(r.id),
            attempt: r.attempt,
            micros: r.micros,
            output,
        })
    }
}

// ---- records -----------------------------------------------------------------------------

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

#[cfg(test)]
mod tests;
