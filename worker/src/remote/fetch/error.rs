//! Why a fetch failed, as a typed error.

use super::*;

/// Why a fetch failed. Nothing was put in place; the bytes received are kept for a resume
/// when the transfer was only interrupted ([`FetchError::Rpc`], [`FetchError::Truncated`],
/// [`FetchError::Io`]), and removed otherwise.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The RPC failed or the coordinator refused (for example: it does not hold the file).
    #[error("fetching {file} from the coordinator: {status}")]
    Rpc {
        /// The file asked for.
        file: String,
        /// What gRPC said.
        status: tonic::Status,
    },
    /// A file name that cannot be a table file's.
    #[error("{file:?} is not a table file name")]
    BadName {
        /// The name given.
        file: String,
    },
    /// A name that is not a catalog table.
    #[error("unknown table {name:?} (known: {known})", known = catalog::names().join(", "))]
    UnknownTable {
        /// The name given.
        name: String,
    },
    /// The stream did not begin with `Start`.
    #[error("fetching {file}: the stream did not begin with Start")]
    NoStart {
        /// The file asked for.
        file: String,
    },
    /// A second `Start`.
    #[error("fetching {file}: a second Start in the stream")]
    SecondStart {
        /// The file asked for.
        file: String,
    },
    /// The coordinator announced another file than the one asked for.
    #[error("asked for {asked}, the coordinator announced {announced:?}")]
    WrongFile {
        /// The file asked for.
        asked: String,
        /// The file announced.
        announced: String,
    },
    /// The announced length cannot be this file's.
    #[error(
        "fetching {file}: the coordinator announced {announced} bytes, the file is {expected}"
    )]
    WrongSize {
        /// The file.
        file: String,
        /// Bytes announced.
        announced: u64,
        /// Bytes this build's catalog says the file has (or the least any table has).
        expected: u64,
    },
    /// A chunk does not start where the previous one ended.
    #[error("fetching {file}: a chunk at offset {offset}, expected {expected}")]
    Gap {
        /// The file.
        file: String,
        /// The next byte expected.
        expected: u64,
        /// The chunk's offset.
        offset: u64,
    },
    /// More bytes than announced.
    #[error("fetching {file}: more than the {announced} bytes announced")]
    Oversize {
        /// The file.
        file: String,
        /// Bytes announced.
        announced: u64,
    },
    /// The stream ended early.
    #[error("fetching {file}: the stream ended after {received} of {announced} bytes")]
    Truncated {
        /// The file.
        file: String,
        /// Bytes announced.
        announced: u64,
        /// Bytes received.
        received: u64,
    },
    /// The file's header records another checksum than the one announced.
    #[error("fetching {file}: the header's checksum {header:016x} is not the announced {announced:016x}")]
    ChecksumNotAnnounced {
        /// The file.
        file: String,
        /// Checksum announced in `Start`.
        announced: u64,
        /// Checksum in the received header.
        header: u64,
    },
    /// The received file is not a sound table file (the message says why: a damaged
    /// body, a bad header, a wrong name...).
    #[error("fetched file is not sound: {0}")]
    Table(TableFileError),
    /// Another fetch of the same file into the same directory is under way.
    #[error("another fetch of {file} into {} is under way (it holds the lock on {})", dir.display(), partial.display())]
    Busy {
        /// The file.
        file: String,
        /// The tables directory.
        dir: PathBuf,
        /// The partial file locked.
        partial: PathBuf,
    },
    /// Writing the file failed.
    #[error("writing {}: {error}", path.display())]
    Io {
        /// The file written.
        path: PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },
}
