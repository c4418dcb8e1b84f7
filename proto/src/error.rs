//! The cluster's errors and their one mapping to gRPC statuses.

use crate::convert::DecodeError;
use crate::settings::SettingsError;

/// The wire protocol revision: a worker or client of another revision is refused.
///
/// 2: typed errors on the wire (settings, bad lines, table and internal failures) and a
/// per-position error in batch results. 3: a solution count beyond the limit
/// (`SettingsError.too_many_solutions`) and a line longer than a position's text may be
/// (`BAD_LINE_KIND_TOO_LONG`). 4: a subtree job's pieces, and a running job's unstarted
/// pieces handed back on request (`SplitJob`, `Handback`, `Hello.splits`). 5: pieces up
/// to 3 moves beyond a prefix (`SubtreeWork.pieces`; 2 before). 6: running pieces split
/// where they run (`SubtreeWork.split`, `Handback.split`).
pub const PROTOCOL: u32 = 6;

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
    /// The peer broke the protocol.
    #[error("protocol violation: {0}")]
    Violation(#[from] Violation),
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
    /// A client's settings cannot be honoured.
    #[error("{0}")]
    Settings(#[from] SettingsError),
    /// A client names a table the coordinator does not know.
    #[error("unknown table {name:?} (known: {})", known.join(", "))]
    UnknownTable {
        /// The name asked.
        name: String,
        /// The tables known.
        known: Vec<String>,
    },
    /// A worker asks for a table file the coordinator does not serve.
    #[error("table file {file:?} is not served here (serving: {})", serving.join(", "))]
    FileNotServed {
        /// The file asked.
        file: String,
        /// The files served.
        serving: Vec<String>,
    },
    /// A fetch asks to resume past the end of the file served.
    #[error("table file {file:?} is {bytes} bytes long: cannot resume at byte {offset}")]
    FetchOffset {
        /// The file asked.
        file: String,
        /// The offset asked.
        offset: u64,
        /// The file's length.
        bytes: u64,
    },
    /// A table file the coordinator serves cannot be read.
    #[error("internal error: reading {path}: {reason}")]
    FileUnreadable {
        /// The file's path.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// The coordinator's checksum registry was poisoned by a panic.
    #[error("internal error: checksum registry poisoned")]
    RegistryPoisoned,
    /// No connected worker holds the table a request needs (and it may wait no longer).
    #[error("no connected worker holds table {table}; start a worker that holds it, or let the request wait for one (solve --wait-for-workers SECS)")]
    NoWorkerForTable {
        /// The table.
        table: String,
    },
    /// The coordinator is shutting down.
    #[error("the coordinator is shutting down")]
    ShuttingDown,
    /// A message from the peer is larger than [`MAX_MESSAGE_BYTES`].
    #[error("a message is larger than the limit of {MAX_MESSAGE_BYTES} bytes ({detail})")]
    MessageTooLarge {
        /// What the decoder said (the message's size).
        detail: String,
    },
    /// A message from the peer cannot be read as one of the protocol.
    #[error("a message cannot be read: {detail}")]
    Unreadable {
        /// What the decoder said.
        detail: String,
    },
}

/// How a peer broke the protocol ([`Error::Violation`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// A worker's first message is not Hello.
    #[error("the first message must be Hello")]
    NoHello,
    /// A worker sent Hello again (or an empty message).
    #[error("only the first message may be Hello")]
    HelloTwice,
    /// A worker's Hello says it has no threads.
    #[error("hello says 0 threads")]
    ZeroThreads,
    /// A client's first message is not Open.
    #[error("the first message must be Open")]
    NoOpen,
    /// A client sent something other than Lines or End after Open.
    #[error("after Open only Lines and End may come")]
    Unexpected,
    /// A client's line ids do not increase.
    #[error("line ids must increase: {id} after {after}")]
    LineIdsNotIncreasing {
        /// The id received.
        id: u64,
        /// The id before it.
        after: u64,
    },
    /// A client's `proved_empty` does not fit a length.
    #[error("line {line}: proved_empty is out of range")]
    ProvedEmptyOutOfRange {
        /// The line's id.
        line: u64,
    },
}

impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        let msg = e.to_string();
        match e {
            Error::Decode(_)
            | Error::Unreadable { .. }
            | Error::Violation(_)
            | Error::Settings(_)
            | Error::UnknownTable { .. } => tonic::Status::invalid_argument(msg),
            Error::Unauthenticated => tonic::Status::unauthenticated(msg),
            Error::Version { .. }
            | Error::TableMismatch { .. }
            | Error::NoWorkerForTable { .. } => tonic::Status::failed_precondition(msg),
            Error::FileNotServed { .. } => tonic::Status::not_found(msg),
            Error::FetchOffset { .. } => tonic::Status::out_of_range(msg),
            Error::ShuttingDown => tonic::Status::unavailable(msg),
            Error::MessageTooLarge { .. } => tonic::Status::resource_exhausted(msg),
            Error::FileUnreadable { .. } | Error::RegistryPoisoned => tonic::Status::internal(msg),
        }
    }
}
