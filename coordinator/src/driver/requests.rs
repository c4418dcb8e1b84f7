//! The requests as the driver holds them: opened with their sinks (the window of lines
//! in flight sized by the executors' room), their records handed to their sinks in input
//! order, their progress sent, and ended: finished, abandoned by their client, refused
//! when no executor can serve them, or at a shutdown.

use super::event::{ClientKey, Open};
use super::sink::{RequestError, RequestProgress, RequestSink};
use super::Driver;
use crate::scheduler::RequestId;

/// A request as the driver holds it.
pub(super) struct Req<'s> {
    pub(super) id: RequestId,
    pub(super) table: String,
    pub(super) sink: Box<dyn RequestSink + 's>,
    /// Lines received.
    pub(super) lines: u64,
    /// Records released.
    pub(super) records: u64,
    /// How long it may wait for an executor that can run its jobs (µs).
    pub(super) wait_us: u64,
    /// Since when no connected executor can run its jobs.
    pub(super) unable_since: Option<u64>,
    /// Whether some executor could run its jobs at some point.
    pub(super) served: bool,
}

impl<'s> Driver<'s> {
    /// Opens a request under `key` (a key already open is closed first).
    pub fn open(&mut self, key: ClientKey, open: Open<'s>) {
        self.end_request(key, Err(RequestError::ClientGone));
        // Sized by the jobs the executors may hold (their threads and what they queue).
        let threads: usize = self.executors.values().map(|e| e.exec.capacity()).sum();
        let window = crate::input::window(
            &self.cfg.scheduler,
            &open.settings,
            threads.max(self.cfg.min_window_slots),
        );
        let mut sink = open.sink;
        sink.room(window);
        let id = self.sched.open_request(open.settings, open.table.clone());
        self.stats.opened(key, &open.table, self.now);
        self.requests.insert(
            key,
            Req {
                id,
                table: open.table,
                sink,
                lines: 0,
                records: 0,
                wait_us: open.wait_for_executors_us.unwrap_or(0),
                unable_since: None,
                served: false,
            },
        );
    }

    /// When a request that no executor can serve since `unable_since` is refused: after
    /// its own wait, not before the coordinator's startup grace ends, and, once it was
    /// served, not before a lease has passed (its workers may be reconnecting).
    pub(super) fn refusal_time(&self, r: &Req<'_>, unable_since: u64) -> u64 {
        let lease = if r.served {
            self.cfg.scheduler.lease_us.unwrap_or(0)
        } else {
            0
        };
        unable_since
            .saturating_add(r.wait_us.max(lease))
            .max(self.cfg.startup_grace_us)
    }

    /// Hands released records to their sinks and ends the requests that are over (true if
    /// any ended).
    pub(super) fn release(&mut self) -> bool {
        let mut over: Vec<(ClientKey, Result<(), RequestError>)> = Vec::new();
        let mut refusals: Vec<(ClientKey, u64)> = Vec::new();
        'requests: for (&key, r) in self.requests.iter_mut() {
            // One at a time, as the scheduler releases them: nothing held twice.
            let mut n = 0;
            while let Some(rec) = self.sched.next_record(r.id) {
                n += 1;
                if let Err(e) = r.sink.record(rec) {
                    over.push((key, Err(RequestError::Output(e))));
                    continue 'requests;
                }
            }
            if n > 0 {
                r.records += n;
                if let Err(e) = r.sink.flush() {
                    over.push((key, Err(RequestError::Output(e))));
                    continue;
                }
                r.sink.room(n);
            }
            if self.sched.is_done(r.id) {
                over.push((key, Ok(())));
                continue;
            }
            if self.sched.can_run(&r.table) {
                r.unable_since = None;
                r.served = true;
            } else {
                refusals.push((key, *r.unable_since.get_or_insert(self.now)));
            }
        }
        for (key, since) in refusals {
            let due = self
                .requests
                .get(&key)
                .is_some_and(|r| self.now >= self.refusal_time(r, since));
            if due {
                let table = self.requests.get(&key).map(|r| r.table.clone());
                over.push((
                    key,
                    Err(RequestError::NoExecutorForTable {
                        table: table.unwrap_or_default(),
                    }),
                ));
            }
        }
        let ended = !over.is_empty();
        for (key, how) in over {
            self.end_request(key, how);
        }
        ended
    }

    /// Ends the request of `key` (if open): its jobs are dropped, its sink told.
    pub(super) fn end_request(&mut self, key: ClientKey, how: Result<(), RequestError>) {
        let Some(mut r) = self.requests.remove(&key) else {
            return;
        };
        self.sched.close_request(r.id);
        let failure = how.as_ref().err().map(ToString::to_string);
        self.stats.ended(key, r.id, r.records, failure, self.now);
        if let Err(e) = &how {
            tracing::info!(client = key.0, "request ended: {e}");
        }
        r.sink.end(how);
    }

    /// Sends each request its progress (true if a client turned out to be gone).
    pub(super) fn progress(&mut self) -> bool {
        let mut gone = Vec::new();
        for (&key, r) in self.requests.iter_mut() {
            let p = self.sched.progress(r.id);
            // The deepened position's jobs still running, as their executors last said.
            let live_nodes = p.deepening.map_or(0, |d| {
                self.executors
                    .iter()
                    .flat_map(|(&id, x)| x.live.iter().map(move |l| (id, l)))
                    .filter(|&(id, l)| {
                        self.sched.job_of(l.job) == Some((r.id, d.line, l.attempt, Some(id)))
                    })
                    .map(|(_, l)| l.nodes)
                    .sum()
            });
            let rp = RequestProgress {
                records: r.records,
                lines: r.lines,
                deepening: p.deepening,
                live_nodes,
                busy_executors: p.busy_executors,
                executors: self.executors.len(),
            };
            if let Err(e) = r.sink.progress(&rp) {
                gone.push((key, e));
            }
        }
        let ended = !gone.is_empty();
        for (key, e) in gone {
            self.end_request(key, Err(RequestError::Output(e)));
        }
        ended
    }
}
