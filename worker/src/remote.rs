//! The worker process: the engines of this crate serving a coordinator over gRPC.
//!
//! # Layout
//! - [`tableset`]: which tables the worker serves ([`ServedTables`]), each file's body
//!   checksum checked once ([`TableSet::check`]) before anything is said to a coordinator,
//!   and what the worker's Hello tells about them.
//! - [`fetch`]: a table file the worker lacks, fetched from the coordinator as a
//!   checksummed stream into a temporary file, checked, and only then renamed into place
//!   ([`fetch_file`], [`fetch_tables`]).
//! - [`session`]: one process's life with a coordinator: dial, Hello, Welcome, jobs on the
//!   in-process [`JobRunner`](crate::JobRunner), results, heartbeats, reconnection with
//!   backoff ([`proto::backoff`]), draining on shutdown ([`serve`]); and [`run`], the whole process
//!   (fetch, check, open, serve) that `cubeswarm worker` calls.
//! - [`health`]: the probes over HTTP (axum, like the coordinator's metrics): `/healthz`
//!   (the process runs) and `/readyz` (tables checked, not draining).
//! - [`memory_fit`](mod@memory_fit): whether this host's memory holds the tables as
//!   `--memory` asks, or which way it can, decided before the worker reports ready.
//!
//! Liveness never depends on the coordinator: a worker whose coordinator is away keeps
//! retrying and stays live; only a refusal (wrong token, other version, a table whose
//! checksum is not the cluster's) ends it with an error.

pub mod fetch;
pub mod health;
pub mod memory_fit;
pub mod session;
pub mod tableset;

pub use fetch::{fetch_file, fetch_tables, partial_bytes, partial_path, FetchError, FetchedFile};
pub use health::{serve_health, Health};
pub use memory_fit::{memory_fit, HostMemory, MemoryFitError, HOST_MEMORY_ENV};
pub use proto::backoff::{Backoff, BackoffPolicy};
pub use session::{
    default_worker_id, prepare, run, serve, Prepared, SessionOptions, WorkerConfig, WorkerError,
};
pub use tableset::{CheckedFile, CheckedTable, ServedTables, TableSet, TableSetError};
