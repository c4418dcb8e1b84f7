//! The replay's future: messages on the wire and jobs ending, in virtual time.

use coordinator::executor::{ExecutorId, LiveJob};
use proto::{Job, JobResult};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Something that happens at a time.
pub(super) enum Ev {
    /// A job reaches its executor.
    Arrive(ExecutorId, Job),
    /// A thread (lane) of a job (id) runs out of its pieces, as a version of the job's
    /// future foresaw (stale when the job changed since).
    Free(ExecutorId, u64, u64, u64),
    /// A helper thread of an executor is due to leave its job for a waiting one.
    Leave(ExecutorId),
    /// A result reaches the coordinator.
    Result(ExecutorId, JobResult),
    /// A cancellation reaches its executor.
    Cancel(ExecutorId, u64),
    /// A request to split a job (id, attempt) reaches its executor.
    Split(ExecutorId, u64, u32),
    /// A split's answer reaches the coordinator.
    Handback(ExecutorId, proto::Handback),
    /// An executor sends its heartbeat.
    Beat(ExecutorId),
    /// A heartbeat (the jobs its executor held when it sent it) reaches the coordinator.
    Heard(ExecutorId, Vec<LiveJob>),
}

/// An event at its time; events of the same time come in the order they were made.
struct Due {
    at: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The events to come, earliest first.
#[derive(Default)]
pub(super) struct Events {
    heap: BinaryHeap<Reverse<Due>>,
    /// Events made so far (the order of events of the same time).
    made: u64,
}

impl Events {
    /// `ev` happens at `at`.
    pub fn push(&mut self, at: u64, ev: Ev) {
        self.made += 1;
        self.heap.push(Reverse(Due {
            at,
            seq: self.made,
            ev,
        }));
    }

    /// When the next event happens.
    pub fn next_at(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(d)| d.at)
    }

    /// The next event, and its time.
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        self.heap.pop().map(|Reverse(d)| (d.at, d.ev))
    }
}
