//! The one error type of the engines.
//!
//! Only what stops an engine from working at all is an error: table files, settings, and
//! (a bug) a solution that fails verification. How a search ended (time, probe budget,
//! cancellation, nothing within the length asked) is a [`proto::Stop`] in its result.
//!
//! Each variant's message is complete on its own: no variant marks a field as its
//! `source`, so a chain printer (anyhow) never says the same thing twice.

use std::path::PathBuf;
use tables::tablefile::TableFileError;

/// Why an engine could not open, build or run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A table file could not be written, opened or checked (the message names the path).
    #[error("{0}")]
    Table(TableFileError),
    /// A table file the engine needs is not in the directory.
    #[error("table {name} not found in {} (build it with `cubeswarm tables build {name}`)", dir.display())]
    TableNotFound {
        /// Table name.
        name: String,
        /// Directory searched.
        dir: PathBuf,
    },
    /// The name is not a table the engines know.
    #[error("unknown table {0:?} (known: {known})", known = proto::catalog::names().join(", "))]
    UnknownTable(String),
    /// Building the table needs more memory than the machine has.
    #[error(
        "building {name} needs about {:.1} GB of memory, only {:.1} GB available; {}",
        gb(*needed),
        gb(*available),
        largest_buildable(*available)
    )]
    NotEnoughMemory {
        /// Table name.
        name: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available (MemAvailable).
        available: u64,
    },
    /// A base was asked for a table that has none, or out of its range.
    #[error("a base can only be chosen for h48h1k2 to h48h11k2, from 1 to 12 (asked: {base} for {name})")]
    BadBase {
        /// Table name.
        name: String,
        /// The base asked for.
        base: u8,
    },
    /// A table file holds something other than what its name promises.
    #[error("table {name} is inconsistent: {reason}")]
    BadTable {
        /// Table name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// Settings that cannot be honoured (a benchmark's; jobs validate theirs at the
    /// boundary, see [`proto::Settings::validate`]).
    #[error("invalid settings: {0}")]
    Settings(#[from] proto::SettingsError),
    /// A solution failed verification: a bug, reported instead of returned.
    #[error("internal error: solution {moves} does not solve the position")]
    Verification {
        /// The faulty solution, in standard notation.
        moves: String,
    },
    /// An I/O error outside table files (creating the directory, for example).
    #[error("I/O error on {}: {error}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error (printed in the message, so not a `source`).
        error: std::io::Error,
    },
    /// The executor's threads could not be started.
    #[error("cannot start the executor's threads: {0}")]
    Threads(rayon::ThreadPoolBuildError),
}

impl From<TableFileError> for Error {
    fn from(e: TableFileError) -> Self {
        Error::Table(e)
    }
}

fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

/// Which H48 table fits in `available` bytes to build, in words.
fn largest_buildable(available: u64) -> String {
    let fits = proto::catalog::files()
        .into_iter()
        .filter(|f| proto::catalog::H48::parse(f).is_some())
        .filter_map(proto::catalog::file)
        .filter(|f| f.build_memory <= available)
        .max_by_key(|f| f.entries);
    match fits {
        Some(f) => format!(
            "the largest H48 table that fits is {} ({:.1} GB to build)",
            f.name,
            gb(f.build_memory)
        ),
        None => "no H48 table fits".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn messages_are_said_once() {
        let io = Error::Io {
            path: "/x".into(),
            error: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(io.to_string(), "I/O error on /x: gone");
        assert!(io.source().is_none());
        let t = Error::from(TableFileError::Io {
            path: "/t".into(),
            error: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        });
        assert_eq!(t.to_string().matches("gone").count(), 1);
        assert!(t.source().is_none());
        let u = Error::UnknownTable("nope".into());
        assert!(u.to_string().contains("h48h0k4, h48h0k2"), "{u}");
        assert!(u.to_string().contains("twophase"), "{u}");
    }
}
