//! What a client run is asked to do ([`Options`]) and what it did ([`Summary`]).

use crate::output::Format;
use proto::transport::ClientConfig;
use proto::Settings;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a client tries to reach a coordinator, by default, before it gives up: the
/// time without a working connection, counted again after each loss.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(120);

/// What to solve.
#[derive(Clone, Debug)]
pub enum Positions {
    /// One position from the command line (line id 1).
    One(String),
    /// A file of positions, one per line ('-': standard input).
    File(PathBuf),
    /// Lines from a reader the caller made (positions from a program, not a file): read
    /// once, by the first run given it. A stream cannot be resumed.
    Stream(Stream),
}

/// A reader of input lines, taken by the run that reads it.
#[derive(Clone)]
pub struct Stream(Arc<Mutex<Option<Box<dyn BufRead + Send>>>>);

impl Stream {
    /// Lines from `reader`.
    pub fn new(reader: Box<dyn BufRead + Send>) -> Stream {
        Stream(Arc::new(Mutex::new(Some(reader))))
    }

    /// The reader, the first time.
    pub(super) fn take(&self) -> Option<Box<dyn BufRead + Send>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stream")
    }
}

/// Where the records are written (besides the observer, which sees each one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    #[default]
    Stdout,
    /// This file, the run's journal.
    File(PathBuf),
    /// Nowhere: the observer is the only reader.
    Nowhere,
}

impl Default for Positions {
    fn default() -> Self {
        Positions::File(PathBuf::from("-"))
    }
}

/// Which table every job of the request needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TableChoice {
    /// This table (two-phase: "twophase").
    Named(String),
    /// The first of these names (largest first) that a connected worker holds, asked of
    /// the coordinator (`Clients.Status`) before the request; none held is an error.
    FirstHeld(Vec<String>),
    /// No candidate at all (an error if a run is started with it).
    #[default]
    Unset,
}

/// Everything a client run needs. Settings are checked by the caller (as for a local
/// run); the connection settings are checked before any connection.
#[derive(Clone, Debug)]
pub struct Options {
    /// How to reach the coordinator (URL, token, TLS, one attempt's timeout).
    pub client: ClientConfig,
    /// What is asked for each position.
    pub settings: Settings,
    /// The table the request names.
    pub table: TableChoice,
    /// The positions.
    pub work: Positions,
    /// Where records are written.
    pub output: Output,
    /// How records are written.
    pub format: Format,
    /// Continue `output`: skip the ids already in it (see
    /// [`Journal::resume`](super::Journal::resume)).
    pub resume: bool,
    /// How long to go on trying while there is no working connection to the coordinator
    /// (from the first attempt, and again from each loss) before giving up; `None`: for
    /// ever.
    pub connect_timeout: Option<Duration>,
    /// How long the coordinator may keep the request while no connected worker holds its
    /// table (`Open.wait_for_workers_ms`); `None` or zero: refused at once.
    pub wait_for_workers: Option<Duration>,
}

impl Default for Options {
    /// A coordinator on this machine's default port (`127.0.0.1:7070`), the default
    /// settings, standard input to standard output in text, the default connect timeout.
    fn default() -> Self {
        Options {
            client: ClientConfig::new("http://127.0.0.1:7070"),
            settings: Settings::default(),
            table: TableChoice::default(),
            work: Positions::default(),
            output: Output::Stdout,
            format: Format::default(),
            resume: false,
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            wait_for_workers: None,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Records received (and written) by this run.
    pub records: u64,
    /// Of which have no solution (an error, or none within the limits asked): the lines
    /// a caller reports as failed.
    pub errors: u64,
    /// Records already in the output file (`--resume`).
    pub resumed: u64,
    /// Streams that broke and were opened again.
    pub reconnections: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// One position: why it has no solution (the text format writes nothing for it, so
    /// the caller shows this).
    pub failure: Option<String>,
}
