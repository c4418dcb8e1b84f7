//! Errors that cross the wire: a [`JobError`] (a job the worker could not run) and the
//! [`SettingsError`] it may hold.

use super::fields::{method_from, method_wire, u8_from};
use super::DecodeError;
use crate::job::{Internal, JobError, SettingsError};
use crate::wire as w;

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
