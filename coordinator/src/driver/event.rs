//! What the driver consumes: one event type for every adapter (the embedded default, the
//! gRPC server, the simulation).

use super::{Driver, RequestSink};
use crate::executor::{Executor, ExecutorEvent, ExecutorId};
use crate::input::InputLine;
use proto::Settings;

/// A request's key, chosen by the adapter that opens it (a client connection, the one
/// request of an embedded run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientKey(pub u64);

/// One input line of a request, with its resume hint.
#[derive(Debug)]
pub struct Line {
    /// The line.
    pub line: InputLine,
    /// Lengths up to this one are already proved to have no solution (a client that lost
    /// its coordinator mid-search says so when it sends the line again).
    pub proved_empty: Option<u8>,
}

impl From<InputLine> for Line {
    fn from(line: InputLine) -> Line {
        Line {
            line,
            proved_empty: None,
        }
    }
}

/// A request being opened.
pub struct Open<'s> {
    /// What is asked of every line.
    pub settings: Settings,
    /// The table its jobs need.
    pub table: String,
    /// Where its records, progress and end go.
    pub sink: Box<dyn RequestSink + 's>,
    /// How long (µs) it may wait while no executor that can run its jobs is connected
    /// before it is refused (`None`: refused at once; see [`super::DriverConfig`] for the
    /// grace a freshly started coordinator gives its workers to join).
    pub wait_for_executors_us: Option<u64>,
}

/// [`Open`] from another thread (what [`Event::Open`] carries).
pub struct OpenRequest {
    /// What is asked of every line.
    pub settings: Settings,
    /// The table its jobs need.
    pub table: String,
    /// Where its records, progress and end go.
    pub sink: Box<dyn RequestSink + Send>,
    /// As [`Open::wait_for_executors_us`].
    pub wait_for_executors_us: Option<u64>,
}

impl From<OpenRequest> for Open<'_> {
    fn from(o: OpenRequest) -> Self {
        Open {
            settings: o.settings,
            table: o.table,
            sink: o.sink,
            wait_for_executors_us: o.wait_for_executors_us,
        }
    }
}

/// A query answered on the driver's thread with read access to its state (the cluster's
/// status, say).
pub type Query = Box<dyn FnOnce(&Driver<'_>) + Send>;

/// Everything that happens to the driver.
pub enum Event {
    /// An executor reported (a result, a heartbeat, its capacity, or that it is gone).
    Executor(ExecutorEvent),
    /// An executor joined.
    Joined(ExecutorId, Box<dyn Executor + Send>),
    /// A client opened a request.
    Open(ClientKey, Box<OpenRequest>),
    /// Lines of a request, in input order.
    Lines(ClientKey, Vec<Line>),
    /// A request's input ended.
    End(ClientKey),
    /// A request's input could not be read: the request fails.
    InputFailed(ClientKey, std::io::Error),
    /// A request's client is gone: its jobs are dropped.
    ClientGone(ClientKey),
    /// A question about the driver's state.
    Query(Query),
    /// Shut down: executors are told to drain, requests end with "shutting down" (what
    /// they run is cancelled).
    Shutdown,
}

impl From<ExecutorEvent> for Event {
    fn from(e: ExecutorEvent) -> Self {
        Event::Executor(e)
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Executor(e) => f.debug_tuple("Executor").field(e).finish(),
            Event::Joined(id, _) => f.debug_tuple("Joined").field(id).finish(),
            Event::Open(k, o) => f
                .debug_struct("Open")
                .field("key", k)
                .field("table", &o.table)
                .finish(),
            Event::Lines(k, l) => f.debug_tuple("Lines").field(k).field(&l.len()).finish(),
            Event::End(k) => f.debug_tuple("End").field(k).finish(),
            Event::InputFailed(k, e) => f.debug_tuple("InputFailed").field(k).field(e).finish(),
            Event::ClientGone(k) => f.debug_tuple("ClientGone").field(k).finish(),
            Event::Query(_) => f.write_str("Query"),
            Event::Shutdown => f.write_str("Shutdown"),
        }
    }
}
