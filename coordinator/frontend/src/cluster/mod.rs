//! The client of a cluster: what `cubeswarm solve --coordinator URL` does, as a library,
//! so that any front end drives a cluster with the same guarantees.
//!
//! # Layout
//! - [`options`]: [`Options`] (what to solve, where, how long to try) and the
//!   [`Summary`] of a run.
//! - [`run`]: the whole run for [`Options`]: the table to ask for, the output (the
//!   [`Journal`], resumed or new), the input reader, the session, the summary.
//! - [`session`]: one request over as many `Clients.Solve` streams as it takes:
//!   reconnection with backoff, pending lines sent again, the proved-empty depth carried.
//! - [`journal`]: the output file as the client's journal; `resume` reads it back and
//!   checks it against the input (`check`).
//! - [`output`]: the output formats (text, JSONL, CSV), shared with the embedded default.
//! - [`observer`]: what a front end is told (records, progress, [`Notice`]s); the library
//!   draws nothing.
//! - [`outgoing`]: what goes on the wire for an input line (a line too long to send goes
//!   as its position, or has its record made by the client).
//! - `written`: a written record read back (its id and input), for the journal and
//!   `check`.
//! - `reader`, `resume`, `table`, `outage`: the input thread, opening the output, the
//!   table asked for, the bound on the time without a working connection.
//! - [`error`]: why a run failed, [`ClientError`].
//!
//! The client keeps no state but the output file, so a coordinator restart loses and
//! duplicates nothing: what has a record is in the journal, the rest is sent again.
//! Everything runs on one current-thread tokio runtime; the input is read on its own
//! thread into a bounded channel.

mod check;
pub mod error;
pub mod journal;
pub mod observer;
pub mod options;
mod outage;
pub mod outgoing;

mod reader;
mod resume;
pub mod session;
pub mod status;
mod table;
mod written;

pub use crate::output::Format;
pub use error::ClientError;
pub use journal::{Done, Journal, JournalError, Resumed};
pub use observer::{Notice, Observer, Silent};
pub use options::{
    Options, Output, Positions, Stream, Summary, TableChoice, DEFAULT_CONNECT_TIMEOUT,
};

use crate::output;
use outage::Outage;
use proto::wire as w;
use reader::{spawn_reader, READ_AHEAD};
use session::{Session, Sink};
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

/// Runs `opts` on its cluster: writes what a local `solve` writes, and tells `observer`
/// how it goes. One position without a solution is not an error: see
/// [`Summary::failure`].
pub fn run(opts: &Options, observer: &mut dyn Observer) -> Result<Summary, ClientError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClientError::Runtime)?
        .block_on(run_async(opts, observer))
}

/// [`run`] on the caller's runtime.
pub async fn run_async(
    opts: &Options,
    observer: &mut dyn Observer,
) -> Result<Summary, ClientError> {
    // Settings that can never work fail now, before any connection.
    opts.client.endpoint()?;
    opts.client.auth()?;
    let start = Instant::now();
    let mut outage = Outage::new(opts.connect_timeout.filter(|d| !d.is_zero()));
    let table = table::choose_table(&opts.client, &opts.table, &mut outage, observer).await?;
    let open = w::Open {
        settings: Some((&opts.settings).into()),
        table,
        wait_for_workers_ms: opts
            .wait_for_workers
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .filter(|&ms| ms > 0),
    };
    match &opts.work {
        Positions::One(text) => {
            // Opened before solving, as locally: a bad path fails at once.
            let mut out: Box<dyn Write> = match &opts.output {
                Output::File(p) => Box::new(std::fs::File::create(p).map_err(|source| {
                    ClientError::Journal(JournalError::Io {
                        path: p.clone(),
                        source,
                    })
                })?),
                Output::Stdout => Box::new(std::io::stdout()),
                Output::Nowhere => Box::new(std::io::sink()),
            };
            let skipped = Arc::new(AtomicU64::new(0));
            let mut s = Session::new(
                &opts.client,
                open,
                &opts.settings,
                Sink::One(None),
                observer,
                outage,
                skipped,
            );
            s.queue(outgoing::outgoing_text(text.clone()))?;
            s.run().await?;
            let Sink::One(Some(rec)) = s.sink else {
                return Err(ClientError::NoRecord);
            };
            let failure = output::write_single(&mut out, opts.format, &rec, &opts.settings)
                .map_err(ClientError::Write)?;
            s.observer.records(std::slice::from_ref(&rec));
            Ok(Summary {
                records: s.records,
                errors: u64::from(failure.is_some()),
                resumed: 0,
                reconnections: s.reconnections,
                seconds: start.elapsed().as_secs_f64(),
                failure,
            })
        }
        Positions::File(_) | Positions::Stream(_) => {
            let (journal, done, resumed) = resume::open_journal(opts, observer)?;
            let reader = input_reader(&opts.work)?;
            let skipped = Arc::new(AtomicU64::new(0));
            let (tx, rx) = mpsc::channel(READ_AHEAD);
            spawn_reader(reader, done, tx, Arc::clone(&skipped)).map_err(ClientError::Reader)?;
            let mut s = Session::new(
                &opts.client,
                open,
                &opts.settings,
                Sink::Journal(journal),
                observer,
                outage,
                skipped,
            );
            s.input = Some(rx);
            if let Positions::File(path) = &opts.work {
                s.input_path = path.clone();
            }
            s.run().await?;
            Ok(Summary {
                records: s.records,
                errors: s.errors,
                resumed,
                reconnections: s.reconnections,
                seconds: start.elapsed().as_secs_f64(),
                failure: None,
            })
        }
    }
}

/// The reader of a scramble set's lines.
fn input_reader(work: &Positions) -> Result<Box<dyn BufRead + Send>, ClientError> {
    match work {
        Positions::File(path) if path.as_os_str() == "-" => {
            Ok(Box::new(BufReader::new(std::io::stdin())))
        }
        Positions::File(path) => {
            let f = std::fs::File::open(path).map_err(|source| ClientError::Input {
                path: path.clone(),
                source,
            })?;
            Ok(Box::new(BufReader::with_capacity(1 << 16, f)))
        }
        Positions::Stream(stream) => stream.take().ok_or(ClientError::StreamTaken),
        Positions::One(_) => Err(ClientError::StreamTaken),
    }
}

#[cfg(test)]
mod tests;
