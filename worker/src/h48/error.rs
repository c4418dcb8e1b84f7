//! Errors of the H48 solver.

use std::path::PathBuf;
use tables::tablefile::TableFileError;
use tables::CubieError;

/// Why an H48 operation failed.
#[derive(Debug, thiserror::Error)]
pub enum H48Error {
    /// A table file could not be written, opened or checked.
    #[error(transparent)]
    Table(#[from] TableFileError),
    /// The position cannot be reached from the solved cube.
    #[error("unsolvable position: {0}")]
    Unsolvable(#[from] CubieError),
    /// The table file does not exist in the directory.
    #[error("table {name} not found in {dir} (build it with `cubeswarm tables build {name}`)")]
    TableNotFound {
        /// Table name.
        name: String,
        /// Directory searched.
        dir: PathBuf,
    },
    /// The name is not one of [`super::table_names`].
    #[error("unknown H48 table {0:?} (known: cocsep, h48h0k4, h48h0k2 ... h48h11k2)")]
    UnknownTable(String),
    /// Building the table needs more memory than the machine has.
    #[error("building {name} needs about {needed} bytes of memory, only {available} available")]
    NotEnoughMemory {
        /// Table name.
        name: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available (MemAvailable).
        available: u64,
    },
    /// A table file holds something other than what its name promises.
    #[error("table {name} is inconsistent: {reason}")]
    BadTable {
        /// Table name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// Options that cannot be honoured (for example `min_length > max_length`).
    #[error("invalid options: {0}")]
    InvalidOptions(&'static str),
    /// A solution failed verification: a bug, reported instead of returned.
    #[error("internal error: solution {solution} does not solve the position")]
    Internal {
        /// The offending solution, in standard notation.
        solution: String,
    },
    /// An I/O error outside table files (creating the directory, reading memory info).
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
