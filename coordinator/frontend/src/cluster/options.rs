//! What a client run is asked to do ([`Options`]) and what it did ([`Summary`]).

use crate::output::Format;
use proto::transport::ClientConfig;
use proto::Settings;
use std::path::PathBuf;
use std::time::Duration;

/// How long a client tries to reach a coordinator, by default, before it gives up: the
/// time without a working connection, counted again after each loss.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(120);

/// What to solve.
#[derive(Clone, Debug)]
pub enum Work {
    /// One position from the command line (line id 1).
    One(String),
    /// A file of positions, one per line ('-': standard input).
    File(PathBuf),
}

impl Default for Work {
    fn default() -> Self {
        Work::File(PathBuf::from("-"))
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
    pub work: Work,
    /// The output file (the journal); `None`: standard output.
    pub output: Option<PathBuf>,
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
            work: Work::default(),
            output: None,
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
