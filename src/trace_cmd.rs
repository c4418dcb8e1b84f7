//! `cubeswarm solve --trace FILE`: one optimal position solved through the coordinator
//! (the embedded default) while every job and every subtree's node count is recorded
//! into a trace ([`benchtools::trace`]) for `cubeswarm bench split` to replay.
//!
//! The run cuts depths into 5-move prefixes (instead of 4) so that the trace holds the
//! children of heavy 4-move subtrees; each executor is wrapped to note what it is sent,
//! and the event stream is relayed to note what comes back. Nothing in the engine or the
//! scheduler changes for it.

use anyhow::Context as _;
use benchtools::trace::{moves_text, DepthCells, Header, JobTrace, Trace, VERSION};
use coordinator::{Event, Executor, ExecutorEvent, Executors, Source};
use proto::{
    Job, JobId, JobOutput, JobResult, PositionAnswer, Record, Settings, Stop, SubtreeResult, Work,
};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
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
    /// Jobs submitted whose result has not come back yet: each submission sends exactly
    /// one result, a cancelled one too.
    outstanding: usize,
}

/// An executor that notes every job it is sent.
struct RecordingExecutor {
    inner: Box<dyn Executor + Send>,
    log: Arc<Mutex<Log>>,
    start: Instant,
}

impl Executor for RecordingExecutor {
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }
    fn trusted(&self) -> bool {
        self.inner.trusted()
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
            log.outstanding += 1;
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

/// How long the jobs still out when the run ends (cancelled by it; each stops at its next
/// look at its stop flag) get to send their last results; any still out then is recorded
/// as lost.
const LAST_WORDS_LIMIT: Duration = Duration::from_secs(60);

/// Relays `events` to `to`, noting each result in `log`, until the run is over (an
/// [`Event::Shutdown`], which only [`solve_traced`] sends on this stream) and every job
/// submitted has sent its result, or [`LAST_WORDS_LIMIT`] after that; or until every
/// sender of `events` is gone.
fn relay(
    events: &mpsc::Receiver<Event>,
    to: &mpsc::Sender<Event>,
    log: &Mutex<Log>,
    start: Instant,
) {
    let outstanding = || log.lock().map_or(0, |l| l.outstanding);
    let mut over: Option<Instant> = None;
    loop {
        let ev = match over {
            None => match events.recv() {
                Ok(ev) => ev,
                Err(mpsc::RecvError) => return,
            },
            Some(at) => {
                if outstanding() == 0 {
                    return;
                }
                let left = LAST_WORDS_LIMIT.saturating_sub(at.elapsed());
                match events.recv_timeout(left) {
                    Ok(ev) => ev,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        tracing::warn!(
                            jobs = outstanding(),
                            "jobs sent no result within {LAST_WORDS_LIMIT:?} of the run's end; \
                             the trace records them as lost"
                        );
                        return;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
        };
        if matches!(ev, Event::Shutdown) {
            over = Some(Instant::now());
            continue;
        }
        if let Event::Executor(ExecutorEvent::Result(_, r)) = &ev {
            if let Ok(mut log) = log.lock() {
                log.outstanding = log.outstanding.saturating_sub(1);
                log.back.insert(
                    r.id.0,
                    Back {
                        end_us: start.elapsed().as_micros() as u64,
                        result: r.clone(),
                    },
                );
            }
        }
        let _ = to.send(ev);
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
    /// The scheduler's configuration (its prefix length is the trace's).
    pub cfg: coordinator::Config,
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
    let wrapped = executors
        .into_iter()
        .map(|(id, inner)| {
            let e: Box<dyn Executor + Send> = Box::new(RecordingExecutor {
                inner,
                log: Arc::clone(&log),
                start,
            });
            (id, e)
        })
        .collect();
    let (tx, relayed) = mpsc::channel::<Event>();
    let relay = {
        let tx = tx.clone();
        let log = Arc::clone(&log);
        std::thread::spawn(move || relay(&events, &tx, &log, start))
    };
    let pool = Executors {
        executors: wrapped,
        tx,
        events: relayed,
    };
    // Every depth from the split depth on is recorded split: the replay needs each
    // prefix's nodes at each depth.
    let cfg = coordinator::Config {
        prefix_len: RECORD_PREFIX_LEN,
        whole_nodes: 0,
        ..run.cfg.clone()
    };
    let mut got = None;
    let ran = coordinator::run(
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
    );
    // The run is over: the relay goes on until the jobs still out (the run cancelled
    // them) have reported.
    let _ = own_tx.send(Event::Shutdown);
    drop(own_tx);
    let _ = relay.join();
    let stats = ran?;
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
        "trace: {} jobs, {} split depths, {:.3e} nodes ({:.3e} of a depth started early), {:.1} M nodes/s per thread, {:.1} s -> {}",
        trace.jobs.len(),
        trace.depths.len(),
        trace.header.nodes as f64,
        stats.counters.early_nodes as f64,
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
    let mut tally = Tally::default();
    for (&id, sent) in &log.sent {
        let back = log.back.get(&id);
        let (nodes, outcome) = match back.map(|b| &b.result.output) {
            None => (0, "lost"),
            Some(Err(_)) => (0, "failed"),
            Some(Ok(JobOutput::Batch(rs))) => {
                let (nodes, outcome) = batch_job(&mut header, rs);
                header.shallow_micros += back.map_or(0, |b| b.result.micros);
                (nodes, outcome)
            }
            Some(Ok(JobOutput::Subtrees(rs))) => {
                tally.subtrees(sent, rs, back.map_or(0, |b| b.result.micros))
            }
        };
        header.nodes += nodes;
        tally.jobs.push(JobTrace {
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
    header.node_rate = tally.node_rate();
    let Tally { cells, jobs, .. } = tally;
    let depths = depth_cells(run, header.optimal, cells);
    Ok(Trace {
        header,
        depths,
        jobs,
    })
}

/// A shallow job's nodes and outcome; its positions' nodes and lower bound go to the
/// `header`.
fn batch_job(header: &mut Header, rs: &[PositionAnswer]) -> (u64, &'static str) {
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
    (nodes, outcome)
}

/// Per depth: each 5-move prefix's nodes, and whether it was searched to its end.
type Cells = BTreeMap<u8, HashMap<Vec<Move>, (u64, bool)>>;

/// The recorded jobs, and the subtree jobs' cells and totals.
#[derive(Default)]
struct Tally {
    cells: Cells,
    jobs: Vec<JobTrace>,
    /// Nodes of the subtree jobs.
    sub_nodes: u64,
    /// Their run time, µs.
    sub_micros: u64,
}

impl Tally {
    /// A subtree job's nodes and outcome (`sent` as it was sent, `rs` its results,
    /// `micros` its run time); its prefixes' nodes go to the cells of its depth, its nodes
    /// and run time to the totals.
    fn subtrees(&mut self, sent: &Sent, rs: &[SubtreeResult], micros: u64) -> (u64, &'static str) {
        let depth = self.cells.entry(sent.depth).or_default();
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
        self.sub_nodes += nodes;
        self.sub_micros += micros;
        (nodes, outcome)
    }

    /// Nodes per second of one thread: the rate of the deepest depth's jobs (small
    /// depths' jobs are mostly the per-prefix set-up of 5-move prefixes, not search),
    /// else of every subtree job.
    fn node_rate(&self) -> f64 {
        let (mut sub_nodes, mut sub_micros) = (self.sub_nodes, self.sub_micros);
        let jobs = &self.jobs;
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
        sub_nodes as f64 / (sub_micros.max(1) as f64 / 1e6)
    }
}

/// The depths the trace keeps, from each depth's `cells`: the complete ones, and the
/// `optimal` depth even cut short.
fn depth_cells(run: &TraceRun<'_>, optimal: Option<u8>, cells: Cells) -> BTreeMap<u8, DepthCells> {
    let all5 = tables::canonical::sequences(RECORD_PREFIX_LEN).len();
    // A position with symmetries searches one prefix per class: a depth of it is whole
    // when every subtree it searched was (the others are left at 0).
    let reduced =
        run.cfg.symmetry && !tables::symmetry::PrefixOrbits::of(run.position.cube()).is_trivial();
    let mut depths = BTreeMap::new();
    for (d, m) in cells {
        let all_whole = m.values().all(|&(_, whole)| whole);
        let complete =
            all_whole && (m.len() == all5 || (reduced && optimal.is_none_or(|o| d <= o)));
        // A depth cut short (started early, or past the solution) is kept only when it
        // is the optimal depth: the others are not needed to replay the search.
        if !complete && optimal != Some(d) {
            continue;
        }
        let mut seqs: Vec<(Vec<Move>, u64)> = m.into_iter().map(|(k, (n, _))| (k, n)).collect();
        seqs.sort();
        depths.insert(d, DepthCells::from_fine(d, complete, &seqs));
    }
    depths
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordinator::ExecutorId;

    fn result(id: u64) -> Event {
        Event::Executor(ExecutorEvent::Result(
            ExecutorId(1),
            JobResult {
                id: JobId(id),
                attempt: 0,
                micros: 1,
                output: Ok(JobOutput::Subtrees(Vec::new())),
            },
        ))
    }

    #[test]
    fn the_relay_ends_once_the_run_is_over_and_every_job_reported() {
        let log = Mutex::new(Log {
            outstanding: 2,
            ..Log::default()
        });
        let (tx, events) = mpsc::channel();
        let (to, relayed) = mpsc::channel();
        // One job reports during the run, the other only after its end; `tx` stays
        // open, so the relay can end only by counting.
        for ev in [result(1), Event::Shutdown, result(2), result(3)] {
            tx.send(ev).unwrap();
        }
        relay(&events, &to, &log, Instant::now());
        let log = log.into_inner().unwrap();
        assert_eq!(log.outstanding, 0);
        let mut back: Vec<u64> = log.back.keys().copied().collect();
        back.sort();
        assert_eq!(back, [1, 2]);
        // Both results went on to the driver; the end of the run did not; the event
        // after the last result is left unread.
        assert_eq!(relayed.try_iter().count(), 2);
        assert!(matches!(events.try_recv(), Ok(Event::Executor(_))));
    }

    #[test]
    fn a_run_with_nothing_out_at_its_end_ends_the_relay_at_once() {
        let log = Mutex::new(Log::default());
        let (tx, events) = mpsc::channel();
        let (to, _relayed) = mpsc::channel();
        tx.send(Event::Shutdown).unwrap();
        relay(&events, &to, &log, Instant::now());
        assert!(log.into_inner().unwrap().back.is_empty());
    }
}
