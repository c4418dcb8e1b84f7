//! The cluster's errors and their one mapping to gRPC statuses.

use crate::convert::DecodeError;

/// The wire protocol revision: a worker or client of another revision is refused.
pub const PROTOCOL: u32 = 1;

/// The cubeswarm version every process reports (a worker of another version is refused).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The largest message either side accepts or sends (a table chunk, a batch of records,
/// a job of 43,254 prefixes is about 260 KB).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// Why the coordinator refuses or ends an RPC.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A message from the peer is not a valid domain value.
    #[error("bad message: {0}")]
    Decode(#[from] DecodeError),
    /// The peer broke the protocol (e.g. no Hello first, a second Open).
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// No or a wrong bearer token.
    #[error("missing or wrong token")]
    Unauthenticated,
    /// The peer runs another cubeswarm version or protocol revision.
    #[error("version mismatch: peer has {peer} (protocol {peer_protocol}), coordinator has {ours} (protocol {PROTOCOL})")]
    Version {
        /// The peer's version.
        peer: String,
        /// The peer's protocol revision.
        peer_protocol: u32,
        /// Ours.
        ours: String,
    },
    /// A worker holds a table file whose checksum is not the coordinator's.
    #[error("table file {file}: checksum {peer:016x} differs from the cluster's {ours:016x}; rebuild or fetch it")]
    TableMismatch {
        /// The file.
        file: String,
        /// The worker's checksum.
        peer: u64,
        /// The reference checksum.
        ours: u64,
    },
    /// The request names something the coordinator does not know.
    #[error("{0}")]
    NotFound(String),
    /// The request cannot be honoured (bad settings, a table no worker may ever hold).
    #[error("{0}")]
    Invalid(String),
    /// No connected worker holds the table a request needs (and it may wait no longer).
    #[error("no connected worker holds table {table}; start a worker that holds it, or let the request wait for one (solve --wait-for-workers SECS)")]
    NoWorkerForTable {
        /// The table.
        table: String,
    },
    /// The coordinator is shutting down.
    #[error("the coordinator is shutting down")]
    ShuttingDown,
    /// Something failed on the coordinator's side.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        let msg = e.to_string();
        match e {
            Error::Decode(_) | Error::Protocol(_) | Error::Invalid(_) => {
                tonic::Status::invalid_argument(msg)
            }
            Error::Unauthenticated => tonic::Status::unauthenticated(msg),
            Error::Version { .. }
            | Error::TableMismatch { .. }
            | Error::NoWorkerForTable { .. } => tonic::Status::failed_precondition(msg),
            Error::NotFound(_) => tonic::Status::not_found(msg),
            Error::ShuttingDown => tonic::Status::unavailable(msg),
            Error::Internal(_) => tonic::Status::internal(msg),
        }
    }
}
