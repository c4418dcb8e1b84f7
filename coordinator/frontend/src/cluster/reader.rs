//! The input, read on its own thread (a file or standard input blocks) into a bounded
//! channel, as the local reader reads it.

use super::journal::Done;
use super::outgoing::{outgoing, Outgoing};
use coordinator::input::read_lines;
use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Lines read ahead of what is sent (the reader thread's channel).
pub(super) const READ_AHEAD: usize = 4096;

/// What the input reader sends.
#[derive(Debug)]
pub(super) enum Read {
    /// A position line not already in the journal, as it goes to the coordinator.
    Line(Outgoing),
    /// The input ended.
    End,
    /// The input could not be read.
    Failed(std::io::Error),
}

/// Reads `input` on its own thread: blanks and comments skipped exactly as locally,
/// lines already done skipped (their bytes counted in `skipped`), the rest sent to `tx`.
pub(super) fn spawn_reader(
    input: Box<dyn BufRead + Send>,
    mut done: Done,
    tx: mpsc::Sender<Read>,
    skipped: Arc<AtomicU64>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("input".into())
        .spawn(move || {
            let r = read_lines(input, |l| {
                if done.contains_next(l.line) {
                    skipped.fetch_add(l.input.len() as u64 + 1, Ordering::Relaxed);
                    return true;
                }
                tx.blocking_send(Read::Line(outgoing(l))).is_ok()
            });
            let _ = tx.blocking_send(match r {
                Ok(()) => Read::End,
                Err(e) => Read::Failed(e),
            });
        })?;
    Ok(())
}
