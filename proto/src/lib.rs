//! The job model: the plain types the coordinator and the workers exchange.
//!
//! # Layout
//! - [`catalog`]: every solver table a job can name, its files, sizes and method.
//! - [`job`]: a [`Job`] (id, attempt, table, [`Work`]), the [`Settings`] of what is asked,
//!   a [`JobResult`] per job with one result per position or per subtree and a [`Stop`]
//!   reason, typed [`JobError`]s, and [`Cancel`].
//! - [`pieces`]: a subtree job's prefixes as smaller searches, and the [`Handback`] of
//!   those a worker has not started.
//! - [`method`]: the one [`Method`] (its names for the CLI, `FromStr`/`Display`).
//! - [`settings`]: [`Settings`], their limits and their one validation
//!   ([`Settings::validate`] → [`ValidSettings`], what the engines take).
//! - [`record`]: a [`Record`], the final answer for one input line, as a client writes it.
//! - [`wire`]: the generated `cubeswarm.v1` gRPC messages and services
//!   (`cubeswarm/v1/cubeswarm.proto`, compiled with protox: no `protoc`).
//! - [`status_json`]: the cluster's status as JSON (the status command and the live page).
//! - [`convert`]: domain ⇄ wire, every bad message a typed [`DecodeError`].
//! - [`error`]: the cluster's [`Error`], its one mapping to `tonic::Status`, the protocol
//!   revision and the message size limit.
//! - [`backoff`]: exponential backoff with jitter, for every process that dials a
//!   coordinator (workers and clients).
//! - [`transport`]: the bearer token, TLS and size limits every cluster process shares.
//! - [`http`]: the one HTTP server of the probe and metrics listeners, bounded
//!   ([`http::HttpLimits`]: head and idle timeouts, a lifetime, a cap on connections).
//!
//! Settings say *what is asked* (method, lengths, solution count, budgets); how a job runs
//! (threads, pools, memory) is the executor's business and appears nowhere here. Positions
//! are [`tables::Position`]s, checked before they enter a job. Both `worker` and
//! `coordinator` depend on this crate and never on each other.
#![warn(missing_docs)]

pub mod backoff;
pub mod catalog;
pub mod convert;
pub mod error;
pub mod http;
pub mod job;
pub mod method;
pub mod pieces;
pub mod record;
pub mod settings;
pub mod status_json;
pub mod transport;
pub mod wire;

pub use convert::DecodeError;
pub use error::{Error, Violation, MAX_MESSAGE_BYTES, PROTOCOL, VERSION};
pub use job::{
    answer_line, BatchItem, Cancel, Internal, Job, JobError, JobId, JobOutput, JobResult,
    PositionAnswer, PositionError, PositionResult, Stop, SubtreeResult, SubtreeWork, Work,
};
pub use method::{Method, UnknownMethod};
pub use pieces::{Handback, PieceSplit};
pub use record::{BadLine, BadLineKind, Record, RecordError, Solved};
pub use settings::{
    Settings, SettingsError, ValidSettings, DEFAULT_MAX_LENGTH, MAX_LENGTH, MAX_SOLUTIONS,
};
