//! The core: one thread that owns the [`Scheduler`] and is the only one to touch it.
//!
//! The gRPC handlers never decide anything: they decode what peers send, post it here as
//! a [`CoreMsg`], and forward what comes back on per-connection channels. The loop is the
//! embedded driver's (`crate::run`) with connections in place of in-process executors:
//! tick the clock, carry out the scheduler's actions, release records in input order,
//! wait for the next event or deadline.

use super::metrics::Metrics;
use crate::executor::ExecutorId;
use crate::input::InputLine;
use crate::scheduler::{Action, Config, RequestId, Scheduler};
use proto::wire::{
    self as w, coordinator_message::Msg as ToWorker, solve_response::Msg as ToClient,
};
use proto::JobId;
use proto::{JobResult, Settings};
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tonic::Status;

/// Messages to a worker's stream.
pub type WorkerTx = mpsc::UnboundedSender<Result<w::CoordinatorMessage, Status>>;
/// Messages to a client's stream.
pub type ClientTx = mpsc::UnboundedSender<Result<w::SolveResponse, Status>>;

/// What a worker said about itself when it joined.
#[derive(Clone, Debug)]
pub struct WorkerInfo {
    /// Its own name for itself.
    pub worker_id: String,
    /// Its threads.
    pub threads: u32,
    /// The tables it holds.
    pub tables: Vec<String>,
}

/// Jobs a worker holds beyond its threads: queued in its executor, each starts the moment
/// a thread frees, instead of a network round trip later (a 100,000-position two-phase
/// batch over two single-thread workers went from 0.95 to 0.98 of local speed).
const QUEUED_AHEAD: usize = 1;

/// The jobs the scheduler may lease to a worker that runs `threads` at once (0: draining,
/// none).
fn leased_slots(threads: u32) -> usize {
    match threads as usize {
        0 => 0,
        t => t + QUEUED_AHEAD,
    }
}

/// What a worker sent after joining.
#[derive(Debug)]
pub enum FromWorker {
    /// It is alive, running these jobs (id, attempt, search nodes counted so far).
    Heartbeat(Vec<(JobId, u32, u64)>),
    /// A job ended.
    Result(JobResult),
    /// It takes this many jobs at once from now on.
    Capacity(u32),
}

/// Everything the core acts on.
pub enum CoreMsg {
    /// A worker joined (its Hello was accepted).
    Join {
        /// Its id for this connection.
        id: ExecutorId,
        /// What it said.
        info: WorkerInfo,
        /// Its stream.
        tx: WorkerTx,
    },
    /// A worker spoke.
    Worker {
        /// Which.
        id: ExecutorId,
        /// What.
        event: FromWorker,
    },
    /// A worker's stream ended.
    Left {
        /// Which.
        id: ExecutorId,
    },
    /// A client opened a request.
    Open {
        /// The connection's key.
        key: u64,
        /// What is asked.
        settings: Settings,
        /// The table its jobs need.
        table: String,
        /// The response stream.
        out: ClientTx,
        /// Lines in flight; the core returns a permit per record released.
        window: Arc<Semaphore>,
    },
    /// A line of a request.
    Line {
        /// The connection's key.
        key: u64,
        /// The line.
        line: InputLine,
        /// Lengths up to this one are proved to have no solution.
        proved_empty: Option<u8>,
    },
    /// A request's input ended.
    End {
        /// The connection's key.
        key: u64,
    },
    /// A client went away.
    Close {
        /// The connection's key.
        key: u64,
    },
    /// The cluster's status, please.
    Status {
        /// Where to answer.
        reply: oneshot::Sender<w::ClusterStatus>,
    },
    /// Shut down: workers are told to drain, clients are told to come back later.
    Shutdown,
}

struct WorkerConn {
    tx: WorkerTx,
    info: WorkerInfo,
    slots: u32,
    /// Its running jobs' node counts at its last heartbeat (id, attempt, nodes), for
    /// progress while a hard position's jobs run.
    live: Vec<(JobId, u32, u64)>,
}

struct ClientConn {
    req: RequestId,
    out: ClientTx,
    window: Arc<Semaphore>,
    ended: bool,
    lines: u64,
    records: u64,
}

/// How often a request's progress goes to its client.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// Records per response message at most.
const RECORDS_PER_MESSAGE: usize = 1024;

/// The core's state.
pub struct Core {
    sched: Scheduler,
    workers: HashMap<ExecutorId, WorkerConn>,
    clients: HashMap<u64, ClientConn>,
    metrics: Arc<Metrics>,
    start: Instant,
    next_progress: Instant,
    window_min: u64,
    cfg: Config,
}

impl Core {
    /// A core scheduling with `cfg`, publishing its figures to `metrics`.
    pub fn new(cfg: Config, metrics: Arc<Metrics>) -> Core {
        Core {
            sched: Scheduler::new(cfg.clone()),
            workers: HashMap::new(),
            clients: HashMap::new(),
            metrics,
            start: Instant::now(),
            next_progress: Instant::now() + PROGRESS_EVERY,
            window_min: 8,
            cfg,
        }
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    /// Runs until every sender of `rx` is gone or a shutdown is handled.
    pub fn run(mut self, rx: Receiver<CoreMsg>) {
        loop {
            let now = self.now();
            self.sched.tick(now);
            self.act();
            self.release();
            if Instant::now() >= self.next_progress {
                self.progress();
                self.next_progress = Instant::now() + PROGRESS_EVERY;
            }
            self.metrics.publish(&self.sched, self.workers.len());
            let until_progress = self.next_progress.saturating_duration_since(Instant::now());
            let wait = self.sched.next_deadline().map_or(until_progress, |d| {
                Duration::from_micros(d.saturating_sub(self.now())).min(until_progress)
            });
            let first = match rx.recv_timeout(wait) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            // Take what is already waiting (bounded, so records keep flowing) before
            // acting again.
            let mut next = Some(first);
            let mut taken = 0;
            while let Some(m) = next {
                if !self.handle(m) {
                    self.shutdown();
                    return;
                }
                taken += 1;
                next = if taken < 4096 {
                    rx.try_recv().ok()
                } else {
                    None
                };
            }
        }
    }

    /// Handles one message; false on shutdown.
    fn handle(&mut self, m: CoreMsg) -> bool {
        match m {
            CoreMsg::Join { id, info, tx } => {
                tracing::info!(
                    executor = id.0,
                    worker = %info.worker_id,
                    threads = info.threads,
                    tables = ?info.tables,
                    "worker joined"
                );
                self.sched
                    .add_executor(id, leased_slots(info.threads.max(1)), info.tables.clone());
                self.workers.insert(
                    id,
                    WorkerConn {
                        tx,
                        slots: info.threads,
                        info,
                        live: Vec::new(),
                    },
                );
            }
            CoreMsg::Worker { id, event } => {
                self.sched.heartbeat(id);
                match event {
                    FromWorker::Heartbeat(live) => {
                        if let Some(w) = self.workers.get_mut(&id) {
                            w.live = live;
                        }
                    }
                    FromWorker::Result(r) => {
                        // Its nodes now count in the scheduler's figures, not as live.
                        if let Some(w) = self.workers.get_mut(&id) {
                            w.live.retain(|&(job, _, _)| job != r.id);
                        }
                        self.sched.tick(self.now());
                        self.sched.on_result(id, r);
                    }
                    FromWorker::Capacity(slots) => {
                        if let Some(w) = self.workers.get_mut(&id) {
                            w.slots = slots;
                        }
                        self.sched.set_capacity(id, leased_slots(slots));
                    }
                }
            }
            CoreMsg::Left { id } => {
                if self.workers.remove(&id).is_some() {
                    tracing::info!(
                        executor = id.0,
                        "worker left; its jobs go back to the queue"
                    );
                }
                self.sched.remove_executor(id);
            }
            CoreMsg::Open {
                key,
                settings,
                table,
                out,
                window,
            } => {
                let slots: u64 = self.workers.values().map(|w| u64::from(w.slots)).sum();
                let n =
                    crate::run::window(&self.cfg, &settings, slots.max(self.window_min) as usize);
                window.add_permits(n as usize);
                let req = self.sched.open_request(settings, table);
                self.clients.insert(
                    key,
                    ClientConn {
                        req,
                        out,
                        window,
                        ended: false,
                        lines: 0,
                        records: 0,
                    },
                );
            }
            CoreMsg::Line {
                key,
                line,
                proved_empty,
            } => {
                if let Some(c) = self.clients.get_mut(&key) {
                    c.lines += 1;
                    self.sched.push_line_resumed(
                        c.req,
                        line.line,
                        line.input,
                        line.parsed,
                        proved_empty,
                    );
                }
            }
            CoreMsg::End { key } => {
                if let Some(c) = self.clients.get_mut(&key) {
                    c.ended = true;
                    self.sched.end_input(c.req);
                }
            }
            CoreMsg::Close { key } => {
                if let Some(c) = self.clients.remove(&key) {
                    self.sched.close_request(c.req);
                    c.window.close();
                }
            }
            CoreMsg::Status { reply } => {
                let _ = reply.send(self.status());
            }
            CoreMsg::Shutdown => return false,
        }
        true
    }

    /// Carries out the scheduler's actions and drops workers it has given up on.
    fn act(&mut self) {
        for a in self.sched.take_actions() {
            let (id, msg) = match a {
                Action::Dispatch { to, job } => (to, ToWorker::Job(w::Job::from(&job))),
                Action::Cancel { on, job } => (on, ToWorker::Cancel(w::Cancel { job: job.0 })),
            };
            let sent = self.workers.get(&id).is_some_and(|w| {
                w.tx.send(Ok(w::CoordinatorMessage { msg: Some(msg) }))
                    .is_ok()
            });
            if !sent && self.sched.has_executor(id) {
                // Its stream is gone: the Left message is on its way; act now.
                self.sched.remove_executor(id);
            }
        }
        // A worker silent past its lease is forgotten by the scheduler: end its stream,
        // so that it joins again if it is alive after all.
        let gone: Vec<ExecutorId> = self
            .workers
            .keys()
            .filter(|id| !self.sched.has_executor(**id))
            .copied()
            .collect();
        for id in gone {
            if let Some(w) = self.workers.remove(&id) {
                tracing::warn!(executor = id.0, worker = %w.info.worker_id, "lease expired; the worker's jobs go back to the queue");
                let _ = w.tx.send(Err(Status::unavailable(
                    "lease expired: your jobs were given to others; join again",
                )));
            }
        }
    }

    /// Sends each request's released records and ends the finished ones.
    fn release(&mut self) {
        let mut finished = Vec::new();
        for (&key, c) in self.clients.iter_mut() {
            let records = self.sched.take_records(c.req);
            if !records.is_empty() {
                c.records += records.len() as u64;
                c.window.add_permits(records.len());
                let mut ok = true;
                for chunk in records.chunks(RECORDS_PER_MESSAGE) {
                    let msg = w::SolveResponse {
                        msg: Some(ToClient::Records(w::Records {
                            records: chunk.iter().map(w::Record::from).collect(),
                        })),
                    };
                    ok &= c.out.send(Ok(msg)).is_ok();
                }
                if !ok {
                    finished.push(key);
                    continue;
                }
            }
            if c.ended && self.sched.is_done(c.req) {
                finished.push(key);
            }
        }
        for key in finished {
            if let Some(c) = self.clients.remove(&key) {
                // Dropping `out` ends the response stream with OK.
                self.sched.close_request(c.req);
                c.window.close();
            }
        }
    }

    fn progress(&mut self) {
        let workers = self.workers.len() as u32;
        for c in self.clients.values() {
            let p = self.sched.progress(c.req);
            // Accepted results' nodes, and those of the position's jobs still running
            // (as their workers last reported them).
            let live: u64 = p.deepening.map_or(0, |d| {
                self.workers
                    .iter()
                    .flat_map(|(&wid, w)| w.live.iter().map(move |&l| (wid, l)))
                    .filter(|&(wid, (job, attempt, _))| {
                        self.sched.job_of(job) == Some((c.req, d.line, attempt, Some(wid)))
                    })
                    .map(|(_, (_, _, nodes))| nodes)
                    .sum()
            });
            let msg = w::Progress {
                records: c.records,
                lines: c.lines,
                depth: p.deepening.map_or(0, |d| u32::from(d.depth)),
                proved_empty: p.deepening.and_then(|d| d.depth_exhausted).map(u32::from),
                nodes: p.deepening.map_or(0, |d| d.nodes) + live,
                workers_busy: p.busy_executors as u32,
                workers,
            };
            let _ = c.out.send(Ok(w::SolveResponse {
                msg: Some(ToClient::Progress(msg)),
            }));
        }
    }

    fn status(&self) -> w::ClusterStatus {
        let c = self.sched.counters();
        let (running, queued) = self.sched.job_counts();
        let mut workers: Vec<w::WorkerStatus> = self
            .workers
            .iter()
            .map(|(id, wk)| w::WorkerStatus {
                executor: id.0,
                worker_id: wk.info.worker_id.clone(),
                threads: wk.info.threads,
                slots: wk.slots,
                running: self.sched.running_on(*id).len() as u32,
                tables: wk.info.tables.clone(),
            })
            .collect();
        workers.sort_by_key(|w| w.executor);
        w::ClusterStatus {
            version: proto::VERSION.to_string(),
            workers,
            requests: self.clients.len() as u64,
            jobs_queued: queued as u64,
            jobs_running: running as u64,
            jobs_done: c.jobs_done,
            requeued: c.requeued,
            lease_expiries: c.lease_expiries,
            positions: c.records,
            nodes: c.nodes,
        }
    }

    fn shutdown(&mut self) {
        for w in self.workers.values() {
            let _ = w.tx.send(Ok(w::CoordinatorMessage {
                msg: Some(ToWorker::Drain(w::Drain {})),
            }));
        }
        for c in self.clients.values() {
            let _ = c.out.send(Err(proto::Error::ShuttingDown.into()));
            c.window.close();
        }
        self.workers.clear();
        self.clients.clear();
    }
}
