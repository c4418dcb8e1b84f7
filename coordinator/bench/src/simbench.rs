//! The coordinator at scale, simulated: `cubeswarm bench coordinator`.
//!
//! A batch of two-phase positions goes through the real driver ([`run()`](coordinator::run()))
//! to many simulated executors that answer every job at once (one plausible result per
//! position, posted into the event stream from `submit`), so what is measured is the
//! coordinator's loop: taking lines in, cutting them into jobs, dispatching, taking
//! results back and releasing records in order. The simulated executors build their
//! answers, and the sink drops the records, on the driver's thread, so both count
//! against it. The report gives the throughput, the driver thread's CPU time (the rate
//! with a core to itself), and the resident set at a few points of the run, to show that
//! memory does not grow with the input.

use coordinator::driver::Event;
use coordinator::executor::{Executor, ExecutorEvent, ExecutorId};
use coordinator::input::InputLine;
use coordinator::run::{run, Executors, RunError, Source};
use coordinator::scheduler::{Config, Counters};
use proto::{
    Job, JobId, JobOutput, JobResult, Method, PositionResult, Settings, Stop, SubtreeResult, Work,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use tables::{Cube, Move, Position, SplitMix64};

/// The table name the simulated executors claim to hold.
const TABLE: &str = "twophase";

/// How many distinct positions the generated input cycles through.
const DISTINCT: usize = 64;

/// Lines per batch of the generated input.
pub const INPUT_BATCH: usize = 256;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Simulated executors.
    pub workers: usize,
    /// Input lines (each a two-phase position).
    pub lines: u64,
    /// Two-phase positions per job.
    pub batch_size: usize,
    /// Capacity (jobs at once) of each simulated executor.
    pub threads_per_worker: usize,
    /// Fractions of the input after whose records the resident set is measured.
    pub checkpoints: Vec<f64>,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            workers: 1000,
            lines: 10_000_000,
            batch_size: 128,
            threads_per_worker: 1,
            checkpoints: vec![0.1, 0.5, 1.0],
        }
    }
}

/// The resident set at one point of the run.
#[derive(Clone, Copy, Debug)]
pub struct RssPoint {
    /// Records released when it was measured.
    pub records: u64,
    /// Resident set size in KiB (`None` where `/proc/self/status` is not readable).
    pub rss_kib: Option<u64>,
}

/// What the simulation measured.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// The configuration it ran.
    pub config: BenchConfig,
    /// Records released (one per input line).
    pub positions: u64,
    /// Records that were errors (none expected).
    pub errors: u64,
    /// Wall time of the run, in seconds.
    pub seconds: f64,
    /// The scheduler's counters at the end.
    pub counters: Counters,
    /// Resident set before the run began, KiB.
    pub rss_before_kib: Option<u64>,
    /// Resident set at each checkpoint.
    pub rss: Vec<RssPoint>,
    /// Peak resident set of the process (VmHWM), KiB.
    pub peak_rss_kib: Option<u64>,
    /// Time the driver thread (the scheduler's) spent on a CPU, and runnable but
    /// waiting for one, in seconds (`/proc/thread-self/schedstat`): throughput per
    /// second of CPU is what the coordinator does with a core to itself.
    pub driver_cpu: Option<(f64, f64)>,
}

impl BenchReport {
    /// Positions scheduled (and released) per second.
    pub fn positions_per_s(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }

    /// Positions per second of the driver thread's CPU time.
    pub fn positions_per_cpu_s(&self) -> Option<f64> {
        let (cpu, _) = self.driver_cpu?;
        Some(self.positions as f64 / cpu.max(1e-9))
    }

    /// Jobs completed per second.
    pub fn jobs_per_s(&self) -> f64 {
        self.counters.jobs_done as f64 / self.seconds.max(1e-9)
    }
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(
        || "n/a".to_string(),
        |k| format!("{:.1} MiB", k as f64 / 1024.0),
    )
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.config;
        writeln!(
            f,
            "coordinator, simulated: {} two-phase lines, {} workers x {} slots, batch size {}",
            c.lines, c.workers, c.threads_per_worker, c.batch_size
        )?;
        writeln!(
            f,
            "  positions      {:>12}  ({} errors) in {:.3} s",
            self.positions, self.errors, self.seconds
        )?;
        writeln!(
            f,
            "  throughput     {:>12.0} positions/s scheduled",
            self.positions_per_s()
        )?;
        writeln!(
            f,
            "  jobs           {:>12}  ({:.0} jobs/s, {:.1} positions per job; {} dispatched)",
            self.counters.jobs_done,
            self.jobs_per_s(),
            self.positions as f64 / self.counters.jobs_done.max(1) as f64,
            self.counters.dispatched
        )?;
        if let (Some((cpu, wait)), Some(rate)) = (self.driver_cpu, self.positions_per_cpu_s()) {
            writeln!(
                f,
                "  driver thread  {cpu:>10.3} s on a CPU ({rate:.0} positions per CPU-second), \
                 {wait:.3} s waiting for one"
            )?;
        }
        writeln!(f, "  RSS before     {:>12}", mib(self.rss_before_kib))?;
        for p in &self.rss {
            writeln!(
                f,
                "  RSS at {:>5.1}%  {:>12}  (after {} records)",
                p.records as f64 * 100.0 / c.lines.max(1) as f64,
                mib(p.rss_kib),
                p.records
            )?;
        }
        write!(
            f,
            "  peak RSS       {:>12}  (VmHWM)",
            mib(self.peak_rss_kib)
        )
    }
}

/// A simulated executor: answers every job at once, from `submit`.
struct SimWorker {
    id: ExecutorId,
    capacity: usize,
    tx: Sender<Event>,
    /// Each position's solution (the inverse of its scramble), checked by the
    /// scheduler as a real worker's would be.
    solutions: Arc<HashMap<Position, Vec<Move>>>,
}

impl Executor for SimWorker {
    fn capacity(&self) -> usize {
        self.capacity
    }

    fn tables(&self) -> Vec<String> {
        vec![TABLE.to_string()]
    }
    fn trusted(&self) -> bool {
        // Measures the scheduler's own cost per job, as before checks of claims.
        true
    }

    fn submit(&self, job: Job) {
        let output = match &job.work {
            Work::Batch { items, .. } => JobOutput::Batch(
                items
                    .iter()
                    .map(|it| {
                        Ok(PositionResult {
                            line: it.line,
                            solutions: self
                                .solutions
                                .get(&it.position)
                                .cloned()
                                .into_iter()
                                .collect(),
                            optimal: false,
                            lower_bound: 0,
                            depth_exhausted: None,
                            nodes: 1_000,
                            lookups: 10,
                            micros: 100,
                            stop: Stop::Completed,
                        })
                    })
                    .collect(),
            ),
            Work::Subtrees(w) => JobOutput::Subtrees(
                (0..w.prefixes.len() as u32)
                    .map(|prefix| SubtreeResult {
                        prefix,
                        solutions: Vec::new(),
                        nodes: 1,
                        lookups: 1,
                        stop: Stop::Exhausted,
                    })
                    .collect(),
            ),
        };
        let result = JobResult {
            id: job.id,
            attempt: job.attempt,
            micros: 100,
            output: Ok(output),
        };
        let _ = self
            .tx
            .send(Event::Executor(ExecutorEvent::Result(self.id, result)));
    }

    fn cancel(&self, _job: JobId) {}
}

/// The input: `n` lines cycling through a few fixed positions (parsed once), in
/// batches of [`INPUT_BATCH`] as a network stream would bring them.
fn lines(n: u64) -> impl Iterator<Item = Vec<InputLine>> + Send {
    let fixed = fixed_positions();
    let batch = INPUT_BATCH as u64;
    (0..n.div_ceil(batch)).map(move |b| {
        (b * batch..((b + 1) * batch).min(n))
            .filter_map(|i| {
                let (text, p, _) = fixed.get(i as usize % fixed.len().max(1))?;
                Some(InputLine {
                    line: i + 1,
                    input: text.clone(),
                    parsed: Ok(*p),
                })
            })
            .collect()
    })
}

/// The few positions the input cycles through: scramble, position, and a solution (the
/// scramble's inverse).
fn fixed_positions() -> Vec<(String, Position, Vec<Move>)> {
    let mut rng = SplitMix64::new(1);
    (0..DISTINCT)
        .filter_map(|_| {
            let moves: Vec<Move> = (0..20).map(|_| Move::ALL[rng.below(18) as usize]).collect();
            let p = Position::new(Cube::from_moves(&moves)).ok()?;
            Some((
                tables::format_moves(&moves),
                p,
                tables::notation::invert_moves(&moves),
            ))
        })
        .collect()
}

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
pub fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// This thread's time on a CPU and waiting for one, in seconds.
fn thread_schedstat() -> Option<(f64, f64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut it = s.split_whitespace().map(|t| t.parse::<u64>().ok());
    let (run, wait) = (it.next()??, it.next()??);
    Some((run as f64 / 1e9, wait as f64 / 1e9))
}

/// Runs the simulation.
pub fn run_bench(cfg: BenchConfig) -> Result<BenchReport, RunError> {
    let (tx, events) = mpsc::channel::<Event>();
    let solutions: Arc<HashMap<Position, Vec<Move>>> = Arc::new(
        fixed_positions()
            .into_iter()
            .map(|(_, p, s)| (p, s))
            .collect(),
    );
    let mut executors: BTreeMap<ExecutorId, Box<dyn Executor + Send>> = BTreeMap::new();
    for k in 0..cfg.workers.max(1) {
        let id = ExecutorId(k as u64 + 1);
        executors.insert(
            id,
            Box::new(SimWorker {
                id,
                capacity: cfg.threads_per_worker.max(1),
                tx: tx.clone(),
                solutions: Arc::clone(&solutions),
            }),
        );
    }
    let pool = Executors {
        executors,
        tx,
        events,
    };
    let settings = Settings {
        method: Method::TwoPhase,
        ..Settings::default()
    };
    let sched_cfg = Config {
        batch_size: cfg.batch_size.max(1),
        ..Config::default()
    };
    let mut marks: Vec<u64> = cfg
        .checkpoints
        .iter()
        .map(|f| ((cfg.lines as f64 * f.clamp(0.0, 1.0)).ceil() as u64).max(1))
        .collect();
    marks.sort_unstable();
    marks.dedup();
    let mut marks = marks.into_iter().peekable();
    let mut rss = Vec::new();
    let mut released = 0u64;
    let rss_before_kib = proc_status_kib("VmRSS");
    let sched_before = thread_schedstat();
    let stats = run(
        sched_cfg,
        &pool,
        settings,
        TABLE.to_string(),
        Source::<std::io::Empty>::Parsed(Box::new(lines(cfg.lines))),
        &mut |_record| {
            released += 1;
            if marks.peek() == Some(&released) {
                marks.next();
                rss.push(RssPoint {
                    records: released,
                    rss_kib: proc_status_kib("VmRSS"),
                });
            }
            Ok(())
        },
    )?;
    let driver_cpu = match (sched_before, thread_schedstat()) {
        (Some((r0, w0)), Some((r1, w1))) => Some((r1 - r0, w1 - w0)),
        _ => None,
    };
    Ok(BenchReport {
        config: cfg,
        positions: stats.records,
        errors: stats.errors,
        seconds: stats.seconds,
        counters: stats.counters,
        rss_before_kib,
        rss,
        peak_rss_kib: proc_status_kib("VmHWM"),
        driver_cpu,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_simulated_batch_gets_every_record() {
        let report = run_bench(BenchConfig {
            workers: 7,
            lines: 5_000,
            batch_size: 16,
            threads_per_worker: 2,
            checkpoints: vec![0.5, 1.0],
        })
        .unwrap();
        assert_eq!(report.positions, 5_000);
        assert_eq!(report.errors, 0);
        assert_eq!(report.counters.records, 5_000);
        assert_eq!(report.rss.len(), 2);
        assert_eq!(report.rss[1].records, 5_000);
        assert!(report.counters.jobs_done >= 5_000 / 16);
    }
}
