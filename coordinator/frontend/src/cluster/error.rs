//! Why a client run failed.

use super::journal::JournalError;
use proto::transport::TransportError;
use std::path::PathBuf;
use std::time::Duration;

/// Why a client run ended without every line's record.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The client's runtime could not start.
    #[error("starting the client's runtime: {0}")]
    Runtime(std::io::Error),
    /// The connection settings cannot work (URL, token, TLS, a refused certificate).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The coordinator refused the request (a wrong token, bad settings, no worker holds
    /// the table, ...): trying again cannot help.
    #[error("coordinator refused the request: {message}")]
    Refused {
        /// The status code.
        code: tonic::Code,
        /// The coordinator's message.
        message: String,
    },
    /// No working connection to the coordinator for as long as the client was told to
    /// try.
    #[error(
        "gave up on the coordinator at {url} after trying for {:.1} s without a working \
         connection (--connect-timeout {:.0} s); last error: {last}",
        tried.as_secs_f64(),
        bound.as_secs_f64()
    )]
    GaveUp {
        /// The coordinator's URL.
        url: String,
        /// How long the client tried.
        tried: Duration,
        /// The bound it was given.
        bound: Duration,
        /// The last failure.
        last: String,
    },
    /// The coordinator sent a record for another line than the oldest without one.
    #[error(
        "protocol violation: the coordinator sent a record for line {got}, but the oldest \
         line without one is {}",
        match .oldest { Some(f) => f.to_string(), None => "none (every line sent has its record)".into() }
    )]
    OutOfOrder {
        /// The record's line id.
        got: u64,
        /// The oldest line sent without a record.
        oldest: Option<u64>,
    },
    /// The coordinator sent a record that does not decode.
    #[error("the coordinator sent a bad record: {0}")]
    BadRecord(proto::DecodeError),
    /// The input stream was read by an earlier run (a stream is read once).
    #[error("the input stream was already read by an earlier run")]
    StreamTaken,
    /// The coordinator ended the request without a record for the one position.
    #[error("the coordinator ended without a record for the position")]
    NoRecord,
    /// No connected worker holds any of the tables that would do.
    #[error(
        "no worker connected to {url} holds an H48 table; start a worker with one, or name \
         the table with --table"
    )]
    NoTable {
        /// The coordinator's URL.
        url: String,
    },
    /// `resume` without an output file.
    #[error("--resume needs --output (the file to continue)")]
    ResumeWithoutOutput,
    /// The input file could not be opened or read.
    #[error("input file {path}: {source}", path = .path.display())]
    Input {
        /// The input file ('-': standard input).
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The output file could not be created, resumed or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Writing the output failed.
    #[error("writing the output: {0}")]
    Write(std::io::Error),
    /// The input reader thread could not start.
    #[error("starting the input reader: {0}")]
    Reader(std::io::Error),
}
