//! What every front end does, once: the command line (`src/`) and the Python package
//! (`python/src/`) both call this library, and differ only in how they take arguments
//! and show results.
//!
//! # Layout
//! - [`request`]: what a user asks ([`Request`]): one type every front end fills, checked
//!   into [`proto::Settings`] and the scheduler's configuration, or refused for a cluster.
//! - [`settings`]: the bounds of threads, positions, names and seconds, every
//!   fault said in the front end's words ([`Dialect`], in [`dialect`]).
//! - [`table`]: the table a solve uses, here or on a cluster, by the catalog's one rule.
//! - [`embedded`]: a table opened in this process ([`Embedded`]: mapped, copied in the
//!   background, kept per process) and the in-process executors over it, for a run
//!   through the coordinator's one driver (`coordinator::run`).
//! - [`cluster`]: the client of a cluster (journal, reconnection, resume, the status
//!   query), as a library.
//! - [`output`]: records and their writers (text, JSONL, CSV), for both paths.
//! - [`outfile`]: an output file opened the one way: never the input, one writer at a
//!   time (locked).
//! - [`scramble`]: the scrambler of random-state scrambles, kept per process.
//! - [`error`]: why a call failed ([`Error`]), and the one way an error chain is said.
//!
//! A solve goes: [`Request::settings`], then [`table::local`] and [`Embedded`] with
//! `coordinator::run`, or [`table::on_cluster`] and [`cluster::run`]; records come back
//! in input order to the caller's sink or observer, and [`output`] writes them.
#![warn(missing_docs)]

pub mod cluster;
pub mod dialect;
pub mod embedded;
pub mod error;
pub mod outfile;
pub mod output;
pub mod request;
pub mod scramble;
pub mod settings;
pub mod table;

pub use dialect::Dialect;
pub use embedded::Embedded;
pub use error::{chain, Error};
pub use request::Request;
