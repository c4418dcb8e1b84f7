//! `cubeswarm solve --trace FILE`: one optimal position solved through the coordinator
//! (the embedded default) while every job and every subtree's node count is recorded
//! into a trace ([`coordinator::trace`]) for `cubeswarm bench split` to replay.
//!
//! The run cuts depths into 5-move prefixes (instead of 4) so that the trace holds the
//! children of heavy 4-move subtrees; each executor is wrapped to note what it is sent,
//! and the event stream is relayed to note what comes back. Nothing in the engine or the
//! scheduler changes for it.

use anyhow::Context as _;
use coordinator::trace::{moves_text, DepthCells, Header, JobTrace, Trace, VERSION};
use coordinator::{Event, Executor, ExecutorEvent, Executors, Source};
use proto::{Job, JobId, JobOutput, JobResult, Record, Settings, Stop, Work};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tables::Move;

/// Prefix length of the recording run's subtree jobs.
const RECORD_PREFIX_LEN: usize = 5;

/// A job as it was sent.
struct Sent {
    depth: u8,
    prefixes: Vec<Vec<Move>>,
    start_us: u64,
}

/// A job's result as it came back.
struct Back {
    end_us: u64,
    result: JobResult,
}

#[derive(Default)]
struct Log {
    sent: BTreeMap<u64, Sent>,
    back: HashMap<u64, Back>,
}

/// An executor that notes every job it is sent.
struct Noting {
    inner: Box<dyn Executor + Send>,
    log: Arc<Mutex<Log>>,
    start: Instant,
}

impl Executor for Noting {
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }
    fn tables(&self) -> Vec<String> {
        self.inner.tables()
    }
    fn submit(&self, job: Job) {
        let (depth, prefixes) = match &job.work {
            Work::Subtrees(w) => (w.depth, w.prefixes.clone()),
            Work::Batch { .. } => (0, Vec::new()),
        };
        if let Ok(mut log) = self.log.lock() {
            log.sent.insert(
                job.id.0,
                Sent {
                    depth,
                    prefixes,
                    start_us: self.start.elapsed().as_micros() as u64,
                },
            );
        }
        self.inner.submit(job)
    }
    fn cancel(&self, job: JobId) {
        self.inner.cancel(job)
    }
}

/// What `solve --trace` needs besides the pool.
pub struct TraceRun<'a> {
    /// Where the trace goes.
    pub path: &'a Path,
    /// The position as given.
    pub input: String,
    /// The position.
    pub position: tables::Position,
    /// The request's settings.
    pub settings: Settings,
    /// The table.
    pub table: String,
    /// Executor threads.
    pub threads: usize,
}

/// Solves one position on `pool` through the coordinator, recording the trace; returns
/// the position's record.
pub fn solve_traced(pool: Executors, run: TraceRun<'_>) -> anyhow::Result<Record> {
    let start = Instant::now();
    let log = Arc::new(Mutex::new(Log::default()));
    let Executors {
        executors,
        tx: own_tx,
        events,
    } = pool;
    drop(own_tx);
    let wrapped = executors
        .into_iter()
        .map(|(id, inner)| {
            let e: Box<dyn Executor + Send> = Box::new(Noting {
                inner,
                log: Arc::clone(&log),
                start,
            });
            (id, e)
        })
        .collect();
    let (tx, relayed) = mpsc::channel::<Event>();
    let done = Arc::new(AtomicBool::new(false));
    let relay = {
        let tx = tx.clone();
        let log = Arc::clone(&log);
        let done = Arc::clone(&done);
        std::thread::spawn(move || loop {
            match events.recv_timeout(Duration::from_millis(100)) {
                Ok(ev) => {
                    if let Event::Executor(ExecutorEvent::Result(_, r)) = &ev {
                        if let Ok(mut log) = log.lock() {
                            log.back.insert(
                                r.id.0,
                                Back {
                                    end_us: start.elapsed().as_micros() as u64,
                                    result: r.clone(),
                                },
                            );
                        }
                    }
                    let _ = tx.send(ev);
                }
                Err(mpsc::RecvTimeoutError::Timeout) if done.load(Ordering::Relaxed) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        })
    };
    let pool = Executors {
        executors: wrapped,
        tx,
        events: relayed,
    };
    let cfg = coordinator::Config {
        prefix_len: RECORD_PREFIX_LEN,
        ..coordinator::Config::default()
    };
    let mut got = None;
    let stats = coordinator::run(
        cfg.clone(),
        &pool,
        run.settings.clone(),
        run.table.clone(),
        Source::<std::io::Empty>::One(coordinator::input::InputLine {
            line: 1,
            input: run.input.clone(),
            parsed: Ok(run.position),
        }),
        &mut |r| {
            got = Some(r);
            Ok(())
        },
    )?;
    // Let the cancelled jobs' last words come in.
    std::thread::sleep(Duration::from_millis(300));
    done.store(true, Ordering::Relaxed);
    let _ = relay.join();
    drop(pool);
    let rec = got.context("no record for the position")?;
    let log = std::mem::take(
        &mut *log
            .lock()
            .map_err(|_| anyhow::anyhow!("trace log poisoned"))?,
    );
    let trace = build(&run, &cfg, &rec, stats.seconds, log)?;
    trace
        .save(run.path)
        .with_context(|| format!("writing the trace {}", run.path.display()))?;
    eprintln!(
        "trace: {} jobs, {} split depths, {:.3e} nodes, {:.1} M nodes/s per thread, {:.1} s -> {}",
        trace.jobs.len(),
        trace.depths.len(),
        trace.header.nodes as f64,
        trace.header.node_rate / 1e6,
        trace.header.wall_s,
        run.path.display()
    );
    Ok(rec)
}

/// The trace of a finished run.
fn build(
    run: &TraceRun<'_>,
    cfg: &coordinator::Config,
    rec: &Record,
    wall_s: f64,
    log: Log,
) -> anyhow::Result<Trace> {
    let solved = rec
        .outcome
        .as_ref()
        .map_err(|e| anyhow::anyhow!("the position has no record to trace: {e}"))?;
    let mut header = Header {
        version: VERSION,
        position: run.input.clone(),
        table: run.table.clone(),
        threads: run.threads,
        split_depth: cfg.split_depth,
        lower_bound: 0,
        shallow_nodes: 0,
        shallow_micros: 0,
        optimal: solved.solutions.first().map(|s| s.len() as u8),
        solutions: solved.solutions.iter().map(|s| moves_text(s)).collect(),
        all_solutions: run.settings.max_solutions.is_none(),
        nodes: 0,
        wall_s,
        node_rate: 0.0,
    };
    // Per depth: each 5-move prefix's nodes, and whether it was searched to its end.
    let mut cells: BTreeMap<u8, HashMap<Vec<Move>, (u64, bool)>> = BTreeMap::new();
    let mut jobs = Vec::new();
    let (mut sub_nodes, mut sub_micros) = (0u64, 0u64);
    for (&id, sent) in &log.sent {
        let back = log.back.get(&id);
        let (nodes, outcome) = match back.map(|b| &b.result.output) {
            None => (0, "lost"),
            Some(Err(_)) => (0, "failed"),
            Some(Ok(JobOutput::Batch(rs))) => {
                let mut nodes = 0;
                let mut outcome = "exhausted";
                for r in rs.iter().flatten() {
                    nodes += r.nodes;
                    header.lower_bound = r.lower_bound;
                    header.shallow_nodes += r.nodes;
                    if !r.solutions.is_empty() {
                        outcome = "solved";
                    }
                    if r.stop == Stop::Cancelled {
                        outcome = "cancelled";
                    }
                }
                header.shallow_micros += back.map_or(0, |b| b.result.micros);
                (nodes, outcome)
            }
            Some(Ok(JobOutput::Subtrees(rs))) => {
                let depth = cells.entry(sent.depth).or_default();
                let mut nodes = 0;
                let mut outcome = "exhausted";
                for r in rs {
                    nodes += r.nodes;
                    let whole = r.stop != Stop::Cancelled;
                    if let Some(p) = sent.prefixes.get(r.prefix as usize) {
                        // A heavy prefix searched as its children counts as one cell.
                        let key = p[..p.len().min(RECORD_PREFIX_LEN)].to_vec();
                        let cell = depth.entry(key).or_insert((0, true));
                        cell.0 += r.nodes;
                        cell.1 &= whole;
                    }
                    if !r.solutions.is_empty() && outcome == "exhausted" {
                        outcome = "solved";
                    }
                    if !whole {
                        outcome = "cancelled";
                    }
                }
                sub_nodes += nodes;
                sub_micros += back.map_or(0, |b| b.result.micros);
                (nodes, outcome)
            }
        };
        header.nodes += nodes;
        jobs.push(JobTrace {
            id,
            depth: sent.depth,
            prefixes: sent.prefixes.len(),
            prefix_len: sent.prefixes.first().map_or(0, Vec::len),
            start_us: sent.start_us,
            end_us: back.map(|b| b.end_us),
            micros: back.map_or(0, |b| b.result.micros),
            nodes,
            outcome: outcome.to_string(),
        });
    }
    // The rate of the deepest depth's jobs: small depths' jobs are mostly the per-prefix
    // set-up of 5-move prefixes, not search.
    if let Some(deepest) = jobs
        .iter()
        .filter(|j| j.depth > 0 && j.outcome != "cancelled")
        .map(|j| j.depth)
        .max()
    {
        let (n, us) = jobs
            .iter()
            .filter(|j| j.depth == deepest && j.outcome != "cancelled")
            .fold((0u64, 0u64), |(n, us), j| (n + j.nodes, us + j.micros));
        if n > 0 && us > 0 {
            (sub_nodes, sub_micros) = (n, us);
        }
    }
    header.node_rate = sub_nodes as f64 / (sub_micros.max(1) as f64 / 1e6);
    let all5 = tables::canonical::sequences(RECORD_PREFIX_LEN).len();
    let mut depths = BTreeMap::new();
    for (d, m) in cells {
        let complete = m.len() == all5 && m.values().all(|&(_, whole)| whole);
        // A depth cut short (started early, or past the solution) is kept only when it
        // is the optimal depth: the others are not needed to replay the search.
        if !complete && header.optimal != Some(d) {
            continue;
        }
        let mut seqs: Vec<(Vec<Move>, u64)> = m.into_iter().map(|(k, (n, _))| (k, n)).collect();
        seqs.sort();
        depths.insert(d, DepthCells::from_fine(d, complete, &seqs));
    }
    Ok(Trace {
        header,
        depths,
        jobs,
    })
}
