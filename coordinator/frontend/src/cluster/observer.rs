//! What a front end is told while a run goes on: the library draws nothing itself.

use proto::wire as w;
use std::path::PathBuf;
use std::time::Duration;

/// Something worth telling the user while a run goes on.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// `resume` read the output file: `kept` records kept; `dropped`, the last one (cut
    /// off whole, `torn` if a write was cut short inside it), is solved again.
    Resumed {
        /// The output file.
        path: PathBuf,
        /// Records kept.
        kept: u64,
        /// The id of the record cut off.
        dropped: Option<u64>,
        /// The file ended in a partial line.
        torn: bool,
    },
    /// The coordinator could not be reached or was lost; the client tries again after
    /// `wait`, sending again the `pending` lines without a record.
    Reconnecting {
        /// The coordinator's URL.
        url: String,
        /// What failed.
        why: String,
        /// The delay before the next attempt.
        wait: Duration,
        /// Lines sent that have no record yet.
        pending: usize,
    },
    /// The coordinator could not be asked which tables its workers hold (before the
    /// request); the client asks again after `wait`.
    AskingAgain {
        /// The coordinator's URL.
        url: String,
        /// What failed.
        why: String,
        /// The delay before the next attempt.
        wait: Duration,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::Resumed {
                path,
                kept,
                dropped: Some(id),
                torn,
            } => write!(
                f,
                "resuming {}: {kept} records kept; the last one (line {id}{}) is solved again",
                path.display(),
                if *torn { ", cut short" } else { "" },
            ),
            Notice::Resumed { path, .. } => {
                write!(f, "resuming {}: no records yet", path.display())
            }
            Notice::Reconnecting {
                url,
                why,
                wait,
                pending,
            } => write!(
                f,
                "lost the coordinator at {url} ({why}); reconnecting in {wait:.1?}, then \
                 sending again the {pending} lines without a record"
            ),
            Notice::AskingAgain { url, why, wait } => write!(
                f,
                "cannot ask the coordinator at {url} for its workers' tables ({why}); \
                 retrying in {wait:.1?}"
            ),
        }
    }
}

/// Where a run reports what it does (a progress bar, a Python callback, nothing). Every
/// method has a default that ignores it.
pub trait Observer {
    /// A record was written: `records` by this run so far, `bytes` of input done so far
    /// (each line's text and newline, the lines skipped by a resume included).
    fn record(&mut self, records: u64, bytes: u64) {
        let _ = (records, bytes);
    }

    /// Records were written, in input order (each record once; a resume's kept records
    /// are not told again).
    fn records(&mut self, records: &[proto::Record]) {
        let _ = records;
    }

    /// The coordinator's progress report; for one optimal position, `proved_empty` is the
    /// deepest length proved to have no solution so far.
    fn progress(&mut self, progress: &w::Progress, proved_empty: Option<u32>) {
        let _ = (progress, proved_empty);
    }

    /// Something worth telling the user.
    fn notice(&mut self, notice: &Notice) {
        let _ = notice;
    }
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {}
