//! One recorded optimal search ([`Trace`]) replayed through the real [`Scheduler`] in
//! simulated time: `cubeswarm bench split`.
//!
//! `workers` simulated executors of `threads` slots each join the scheduler; each
//! dispatched subtree job runs on one slot for its prefixes' recorded node counts divided
//! by a per-thread node rate, stopping at a prefix that holds a solution once the job has
//! as many as it asks for; every message (dispatch, result, cancellation, heartbeat)
//! takes `latency`. A cancelled job stops when the cancellation reaches it. The replay
//! ends when the position's record is released; what still runs is cancelled, and its
//! nodes up to then are counted as wasted. Depths the trace does not hold (started early
//! past the optimal one) cost 13 times the deepest recorded depth's counts, and so do the
//! subtrees of an optimal depth the recording did not search (a trace recorded without
//! `--all` stops at its first solution).

use crate::trace::{Trace, TraceError, GRAIN};
use coordinator::executor::ExecutorId;
use coordinator::scheduler::{Action, Config, Scheduler};
use proto::{
    Job, JobId, JobOutput, JobResult, Method, PositionResult, Settings, Stop, SubtreeResult, Work,
};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use tables::{Move, Position};

/// What to replay.
#[derive(Clone, Debug)]
pub struct SplitOptions {
    /// Simulated executors.
    pub workers: usize,
    /// Threads of each.
    pub threads: usize,
    /// Jobs each executor holds beyond its threads, queued to start at once when a
    /// thread frees (its capacity to the scheduler is `threads + queue_ahead`).
    pub queue_ahead: usize,
    /// One-way message latency, µs.
    pub latency_us: u64,
    /// Heartbeat period, µs (`None`: no heartbeats and no leases, as in one process).
    pub heartbeat_us: Option<u64>,
    /// Nodes per second of one thread (`None`: the trace's).
    pub node_rate: Option<f64>,
    /// Solutions asked for (`None`: all optimal ones).
    pub max_solutions: Option<u32>,
    /// The scheduler's configuration (its `split_depth` is the trace's).
    pub config: Config,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            workers: 1,
            threads: 1,
            queue_ahead: 0,
            latency_us: 1000,
            heartbeat_us: None,
            node_rate: None,
            max_solutions: Some(1),
            config: Config::default(),
        }
    }
}

/// One job run on a simulated slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimJob {
    /// The job.
    pub id: u64,
    /// Its depth (0: the shallow job).
    pub depth: u8,
    /// The executor.
    pub exec: u64,
    /// Started and stopped on its slot, µs.
    pub start_us: u64,
    /// When it stopped.
    pub end_us: u64,
    /// Nodes it searched.
    pub nodes: u64,
    /// Whether a cancellation stopped it.
    pub cancelled: bool,
}

/// Idle slot time by cause, in slot-µs, over the replay's wall time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Idle {
    /// Before the shallow job's result: the other slots wait for the lower bound.
    pub start: f64,
    /// Waiting for a depth that is not the last to end (nothing else to run).
    pub depth: f64,
    /// The last depth's last jobs: nothing left to hand out.
    pub tail: f64,
    /// A slot the scheduler counts as busy while its job or result is on the wire.
    pub dispatch: f64,
}

/// What a replay gave.
#[derive(Clone, Debug)]
pub struct SplitReport {
    /// Threads in all.
    pub threads: usize,
    /// Time to the record, µs.
    pub wall_us: u64,
    /// The same trace on one thread, no latency, the default configuration, µs.
    pub one_thread_us: u64,
    /// Nodes searched in all (cancelled work included).
    pub nodes: u64,
    /// Nodes searched by the one-thread run.
    pub one_thread_nodes: u64,
    /// Nodes of jobs at depths past the optimal one (started early).
    pub early_nodes: u64,
    /// Nodes of jobs stopped by a cancellation.
    pub cancelled_nodes: u64,
    /// Nodes at the optimal depth searched after the first solution was found.
    pub after_solution_nodes: u64,
    /// Idle slot time by cause.
    pub idle: Idle,
    /// Jobs run (each attempt).
    pub jobs: Vec<SimJob>,
    /// The solutions of the record.
    pub solutions: Vec<Vec<Move>>,
}

impl SplitReport {
    /// One-thread time over this time.
    pub fn speedup(&self) -> f64 {
        self.one_thread_us as f64 / self.wall_us.max(1) as f64
    }

    /// Speedup per thread.
    pub fn efficiency(&self) -> f64 {
        self.speedup() / self.threads.max(1) as f64
    }
}

/// Why a replay cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// The trace does not fit the replay.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The position cannot be parsed.
    #[error("the trace's position {0:?} is not a position")]
    Position(String),
    /// The scheduler released no record (a bug, or a trace without a solution).
    #[error("the replay ended without the position's record")]
    NoRecord,
    /// The record is an error.
    #[error("the replay's record is an error: {0}")]
    Record(String),
}

const TABLE: &str = "trace";

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A job reaches its executor.
    Arrive(u64, u64),
    /// A job's run ends on its slot (executor, job).
    Finish(u64, u64),
    /// A result reaches the coordinator (index into the pending results).
    Result(usize),
    /// A cancellation reaches its executor.
    Cancel(u64, u64),
    /// A heartbeat of an executor reaches the coordinator.
    Heartbeat(u64),
}

struct Running {
    start: u64,
    depth: u8,
    output: Vec<SubtreeResult>,
    shallow: Option<PositionResult>,
    nodes: u64,
    attempt: u32,
}

#[derive(Default)]
struct Exec {
    running: HashMap<u64, Running>,
    waiting: VecDeque<Job>,
}

/// Node counts per prefix, by depth, for the prefixes of one length.
struct Level {
    prefixes: Vec<Vec<Move>>,
    index: HashMap<Vec<Move>, usize>,
    by_depth: HashMap<u8, Vec<u64>>,
}

impl Level {
    fn new(len: usize) -> Level {
        let prefixes = tables::canonical::sequences(len);
        let index = prefixes
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i))
            .collect();
        Level {
            prefixes,
            index,
            by_depth: HashMap::new(),
        }
    }
}

/// Node counts of the scheduler's prefixes and of their one-move children (split
/// prefixes), by depth.
struct Costs<'t> {
    trace: &'t Trace,
    levels: HashMap<usize, Level>,
}

impl Costs<'_> {
    fn of(&mut self, depth: u8, prefix: &[Move]) -> Result<u64, TraceError> {
        if prefix.len() > GRAIN + 1 {
            // Finer than the trace: an equal share of the finest recorded ancestor.
            let mut c = self.of(depth, &prefix[..GRAIN + 1])?;
            for k in GRAIN + 1..prefix.len() {
                let n = tables::canonical::allowed_after(Some(prefix[k - 1])).count_ones();
                c /= u64::from(n.max(1));
            }
            return Ok(c);
        }
        let trace = self.trace;
        let level = self
            .levels
            .entry(prefix.len())
            .or_insert_with(|| Level::new(prefix.len()));
        if !level.by_depth.contains_key(&depth) {
            let costs = match trace.depths.get(&depth) {
                Some(cells) if cells.complete => trace.costs(depth, &level.prefixes)?,
                // Cut short after the solution: the subtrees not searched (0 nodes; a
                // searched one counts its root) cost 13 times their previous depth's.
                Some(_) => {
                    let mut c = trace.costs(depth, &level.prefixes)?;
                    if let Some((&d, _)) = trace.depths.range(..depth).next_back() {
                        let f = 13u64.saturating_pow(u32::from(depth - d));
                        let before = trace.costs(d, &level.prefixes)?;
                        for (x, b) in c.iter_mut().zip(before) {
                            if *x == 0 {
                                *x = b.saturating_mul(f);
                            }
                        }
                    }
                    c
                }
                None => match trace.depths.range(..depth).next_back() {
                    Some((&d, _)) => {
                        let base = trace.costs(d, &level.prefixes)?;
                        let f = 13u64.saturating_pow(u32::from(depth - d));
                        base.into_iter().map(|c| c.saturating_mul(f)).collect()
                    }
                    None => vec![0; level.prefixes.len()],
                },
            };
            level.by_depth.insert(depth, costs);
        }
        let i = level.index.get(prefix).copied();
        Ok(i.and_then(|i| level.by_depth.get(&depth)?.get(i).copied())
            .unwrap_or(0))
    }
}

/// Replays `trace` as `opts` say, and the one-thread run it is compared with.
pub fn replay(trace: &Trace, opts: &SplitOptions) -> Result<SplitReport, SplitError> {
    let one = SplitOptions {
        workers: 1,
        threads: 1,
        queue_ahead: 0,
        latency_us: 0,
        heartbeat_us: None,
        config: Config::default(),
        ..opts.clone()
    };
    let base = simulate(trace, &one)?;
    let mut r = simulate(trace, opts)?;
    r.one_thread_us = base.wall_us;
    r.one_thread_nodes = base.nodes;
    Ok(r)
}

/// Replays `trace` as `opts` say (the one-thread fields are this run's own).
pub fn simulate(trace: &Trace, opts: &SplitOptions) -> Result<SplitReport, SplitError> {
    let h = &trace.header;
    let position =
        Position::parse(&h.position).map_err(|_| SplitError::Position(h.position.clone()))?;
    let rate = opts.node_rate.unwrap_or(h.node_rate).max(1.0);
    let dur = |nodes: u64| ((nodes as f64) * 1e6 / rate).ceil() as u64;
    let optimal = h.optimal.unwrap_or(u8::MAX);
    let solutions = trace.solutions();
    let mut cfg = opts.config.clone();
    cfg.split_depth = h.split_depth;
    if let Some(hb) = opts.heartbeat_us {
        cfg.lease_us.get_or_insert(hb.saturating_mul(3));
    }
    let mut costs = Costs {
        trace,
        levels: HashMap::new(),
    };
    let mut sched = Scheduler::new(cfg.clone());
    let nexec = opts.workers.max(1);
    let slots = opts.threads.max(1);
    let mut execs: BTreeMap<u64, Exec> = BTreeMap::new();
    for k in 1..=nexec as u64 {
        sched.add_executor(
            ExecutorId(k),
            slots + opts.queue_ahead,
            vec![TABLE.to_string()],
        );
        execs.insert(k, Exec::default());
    }
    let settings = Settings {
        method: Method::Optimal,
        max_solutions: opts.max_solutions,
        ..Settings::default()
    };
    let req = sched.open_request(settings, TABLE.to_string());
    sched.push_line(req, 1, h.position.clone(), Ok(position));
    sched.end_input(req);

    let lat = opts.latency_us;
    let mut events: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |events: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>, t: u64, ev: Ev| {
        seq += 1;
        events.push(Reverse((t, seq, ev)));
    };
    let mut jobs_in_flight: HashMap<(u64, u64), Job> = HashMap::new();
    let mut results: Vec<Option<(u64, JobResult)>> = Vec::new();
    let mut log: Vec<SimJob> = Vec::new();
    let mut idle = Idle::default();
    let mut record = None;
    let mut wall = 0u64;
    let mut first_solution: Option<u64> = None;
    if let Some(hb) = opts.heartbeat_us {
        for &k in execs.keys() {
            push(&mut events, hb + lat, Ev::Heartbeat(k));
        }
    }
    let mut now = 0u64;
    let mut actions = sched.take_actions();
    loop {
        for a in actions.drain(..) {
            match a {
                Action::Dispatch { to, job } => {
                    let id = job.id.0;
                    jobs_in_flight.insert((to.0, id), job);
                    push(&mut events, now + lat, Ev::Arrive(to.0, id));
                }
                Action::Cancel { on, job } => push(&mut events, now + lat, Ev::Cancel(on.0, job.0)),
            }
        }
        if record.is_none() {
            if let Some(rec) = sched.next_record(req) {
                wall = now;
                record = Some(rec);
            }
        }
        let Some(Reverse((t, _, ev))) = events.pop() else {
            break;
        };
        if record.is_none() {
            // Idle slot time over [now, t), by cause.
            let span = t.saturating_sub(now) as f64;
            if span > 0.0 {
                let running: usize = execs.values().map(|e| e.running.len()).sum();
                let waiting: usize = execs.values().map(|e| e.waiting.len()).sum();
                let (sched_running, _) = sched.job_counts();
                let total = (nexec * slots) as f64;
                let wire = (sched_running.saturating_sub(running + waiting) as f64)
                    .min(total - running as f64);
                let free = (total - running as f64 - wire).max(0.0);
                idle.dispatch += wire * span;
                match sched.progress(req).deepening {
                    None => idle.start += free * span,
                    Some(d) if d.depth >= optimal => idle.tail += free * span,
                    Some(_) => idle.depth += free * span,
                }
            }
        }
        now = t;
        sched.tick(now);
        match ev {
            Ev::Arrive(e, id) => {
                let Some(job) = jobs_in_flight.remove(&(e, id)) else {
                    continue;
                };
                let Some(x) = execs.get_mut(&e) else { continue };
                x.waiting.push_back(job);
            }
            Ev::Finish(e, id) => {
                let Some(x) = execs.get_mut(&e) else { continue };
                let Some(r) = x.running.remove(&id) else {
                    continue;
                };
                if r.depth == optimal
                    && first_solution.is_none()
                    && r.output.iter().any(|s| !s.solutions.is_empty())
                {
                    first_solution = Some(now);
                }
                log.push(SimJob {
                    id,
                    depth: r.depth,
                    exec: e,
                    start_us: r.start,
                    end_us: now,
                    nodes: r.nodes,
                    cancelled: false,
                });
                let output = match r.shallow {
                    Some(p) => JobOutput::Batch(vec![Ok(p)]),
                    None => JobOutput::Subtrees(r.output),
                };
                results.push(Some((
                    e,
                    JobResult {
                        id: JobId(id),
                        attempt: r.attempt,
                        micros: now - r.start,
                        output: Ok(output),
                    },
                )));
                push(&mut events, now + lat, Ev::Result(results.len() - 1));
            }
            Ev::Result(i) => {
                if let Some((e, r)) = results.get_mut(i).and_then(Option::take) {
                    sched.on_result(ExecutorId(e), r);
                }
            }
            Ev::Cancel(e, id) => {
                let Some(x) = execs.get_mut(&e) else { continue };
                x.waiting.retain(|j| j.id.0 != id);
                if let Some(r) = x.running.remove(&id) {
                    let ran = now - r.start;
                    let nodes = ((ran as f64) * rate / 1e6) as u64;
                    log.push(SimJob {
                        id,
                        depth: r.depth,
                        exec: e,
                        start_us: r.start,
                        end_us: now,
                        nodes: nodes.min(r.nodes),
                        cancelled: true,
                    });
                }
            }
            Ev::Heartbeat(e) => {
                sched.heartbeat(ExecutorId(e));
                if record.is_none() {
                    if let Some(hb) = opts.heartbeat_us {
                        push(&mut events, now + hb, Ev::Heartbeat(e));
                    }
                }
            }
        }
        // Free slots take waiting jobs.
        for (&e, x) in execs.iter_mut() {
            while x.running.len() < slots {
                let Some(job) = x.waiting.pop_front() else {
                    break;
                };
                let run = start_job(&job, &mut costs, h, &solutions, optimal, now)?;
                push(&mut events, now + dur(run.nodes), Ev::Finish(e, job.id.0));
                x.running.insert(job.id.0, run);
            }
        }
        actions = sched.take_actions();
    }
    let record = record.ok_or(SplitError::NoRecord)?;
    let solved = record
        .outcome
        .map_err(|e| SplitError::Record(e.to_string()))?;
    let mut report = SplitReport {
        threads: nexec * slots,
        wall_us: wall,
        one_thread_us: wall,
        nodes: 0,
        one_thread_nodes: 0,
        early_nodes: 0,
        cancelled_nodes: 0,
        after_solution_nodes: 0,
        idle,
        jobs: Vec::new(),
        solutions: solved.solutions,
    };
    log.sort_by_key(|j| (j.start_us, j.id));
    for j in &log {
        report.nodes += j.nodes;
        if j.depth > optimal && j.depth != 0 {
            report.early_nodes += j.nodes;
        }
        if j.cancelled {
            report.cancelled_nodes += j.nodes;
        }
        if let Some(ts) = first_solution {
            if j.depth == optimal && j.end_us > ts {
                let from = j.start_us.max(ts);
                let share = (j.end_us - from) as f64 / (j.end_us - j.start_us).max(1) as f64;
                report.after_solution_nodes += (j.nodes as f64 * share) as u64;
            }
        }
    }
    report.one_thread_nodes = report.nodes;
    report.jobs = log;
    Ok(report)
}

/// What a job does on its slot: its nodes and its output.
fn start_job(
    job: &Job,
    costs: &mut Costs<'_>,
    h: &crate::trace::Header,
    solutions: &[Vec<Move>],
    optimal: u8,
    now: u64,
) -> Result<Running, SplitError> {
    let mut run = Running {
        start: now,
        depth: 0,
        output: Vec::new(),
        shallow: None,
        nodes: 0,
        attempt: job.attempt,
    };
    match &job.work {
        Work::Batch { items, .. } => {
            run.nodes = h.shallow_nodes;
            run.shallow = Some(PositionResult {
                line: items.first().map_or(1, |i| i.line),
                solutions: Vec::new(),
                optimal: false,
                lower_bound: h.lower_bound,
                depth_exhausted: Some(h.split_depth.saturating_sub(1)),
                nodes: h.shallow_nodes,
                lookups: 0,
                micros: 0,
                stop: Stop::Exhausted,
            });
        }
        Work::Subtrees(w) => {
            run.depth = w.depth;
            let want = w.max_solutions.map_or(usize::MAX, |n| n as usize);
            let mut found = 0usize;
            for (i, p) in w.prefixes.iter().enumerate() {
                if found >= want {
                    break;
                }
                let nodes = costs.of(w.depth, p)?;
                let mut sols: Vec<Vec<Move>> = match w.depth == optimal {
                    true => solutions
                        .iter()
                        .filter(|s| s.starts_with(p))
                        .cloned()
                        .collect(),
                    false => Vec::new(),
                };
                let room = want - found;
                let stop = if sols.len() > room {
                    sols.truncate(room);
                    Stop::Completed
                } else {
                    Stop::Exhausted
                };
                found += sols.len();
                run.nodes += nodes;
                run.output.push(SubtreeResult {
                    prefix: i as u32,
                    solutions: sols,
                    nodes,
                    lookups: 0,
                    stop,
                });
            }
        }
    }
    Ok(run)
}

impl std::fmt::Display for SplitReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |us: u64| us as f64 / 1e6;
        let slot_s = self.threads as f64 * s(self.wall_us);
        let pct = |x: f64| 100.0 * x / 1e6 / slot_s.max(1e-12);
        writeln!(
            f,
            "wall {:.3} s simulated; one thread {:.3} s; speedup {:.2}",
            s(self.wall_us),
            s(self.one_thread_us),
            self.speedup()
        )?;
        writeln!(
            f,
            "nodes {:.4e} = {:.3} x one thread ({:.4e}); early-started depths {:.3e}, \
             cancelled {:.3e}, after the solution {:.3e}",
            self.nodes as f64,
            self.nodes as f64 / self.one_thread_nodes.max(1) as f64,
            self.one_thread_nodes as f64,
            self.early_nodes as f64,
            self.cancelled_nodes as f64,
            self.after_solution_nodes as f64
        )?;
        writeln!(
            f,
            "idle: start {:.1}%, waiting for a depth {:.1}%, tail {:.1}%, dispatch {:.1}% \
             of {:.1} slot-seconds; {} jobs run",
            pct(self.idle.start),
            pct(self.idle.depth),
            pct(self.idle.tail),
            pct(self.idle.dispatch),
            slot_s,
            self.jobs.len()
        )?;
        write!(
            f,
            "efficiency {:.3} at {} threads",
            self.efficiency(),
            self.threads
        )
    }
}
