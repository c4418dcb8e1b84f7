//! Where a request's records, progress and end go: the embedded default writes them to
//! the output file, the server sends them to the client's stream, the simulation keeps
//! them.

use proto::Record;

/// Why a request ended before every record was released.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// No connected executor holds the table its jobs need (and it may wait no longer).
    #[error("no connected worker holds table {table}")]
    NoExecutorForTable {
        /// The table.
        table: String,
    },
    /// Its input could not be read.
    #[error("reading the input: {0}")]
    Input(std::io::Error),
    /// Its records could not be delivered (the output failed, or the client is gone).
    #[error("writing the output: {0}")]
    Output(std::io::Error),
    /// Its client went away (or opened the same key again).
    #[error("the client went away")]
    ClientGone,
    /// The coordinator shuts down.
    #[error("the coordinator is shutting down")]
    ShuttingDown,
}

/// How far a request has come, for its client (about once a second when asked for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestProgress {
    /// Records released so far.
    pub records: u64,
    /// Lines received so far.
    pub lines: u64,
    /// The optimal position being deepened (the oldest open one), if any.
    pub deepening: Option<crate::Deepening>,
    /// Search nodes of the deepened position's jobs still running (from heartbeats).
    pub live_nodes: u64,
    /// Executors running at least one job.
    pub busy_executors: usize,
    /// Executors connected.
    pub executors: usize,
}

/// What a request's client sees. Every method runs on the driver's thread: keep them
/// short (send on a channel, write to a buffered file).
pub trait RequestSink {
    /// Room for `n` more lines in flight: called when the request opens (its window) and
    /// as records are released, so that the input is read ahead by a bounded amount.
    fn room(&mut self, _n: u64) {}
    /// The next record released, in input order. An error means the client cannot take
    /// it (gone, or its output failed): the request ends with that error.
    fn record(&mut self, record: Record) -> std::io::Result<()>;
    /// The records released in this step are all out: send what is buffered.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// Progress. An error means the client is gone: the request ends.
    fn progress(&mut self, _p: &RequestProgress) -> std::io::Result<()> {
        Ok(())
    }
    /// The request ended: every record released (`Ok`), or why not. Nothing is called
    /// after this.
    fn end(&mut self, how: Result<(), RequestError>);
}
