//! Benchmark of the two-phase solver on uniformly random positions.
//!
//! Each position's cost is measured as the CPU time of the thread that solved it
//! (`CLOCK_THREAD_CPUTIME_ID`), which, unlike wall time, does not count time the thread
//! spent descheduled while other work shared the machine. Each position is solved on one
//! thread; positions are spread over a rayon pool of `threads` threads, side by side; the
//! positions per second figure is wall-clock.

use super::TwoPhaseSolver;
use crate::StopToken;
use ::tables::{Cube, Position, SplitMix64};
use proto::{Method, Settings};
use rayon::prelude::*;
use std::fmt;
use std::time::{Duration, Instant};

/// Options of [`run`].
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Longest solution accepted.
    pub max_length: u8,
    /// Number of random positions.
    pub count: usize,
    /// Seed of the position generator.
    pub seed: u64,
    /// Threads solving positions in parallel (0 = rayon's default).
    pub threads: usize,
    /// An anytime search of this wall time per position (shortest found by then), instead
    /// of the first solution within `max_length`.
    pub anytime: Option<Duration>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            max_length: 20,
            count: 1000,
            seed: 1,
            threads: 1,
            anytime: None,
        }
    }
}

/// Results of [`run`].
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// The options used.
    pub options: BenchOptions,
    /// Threads actually used.
    pub threads: usize,
    /// Positions solved within `max_length`.
    pub solved: usize,
    /// Positions that failed (error or no solution), with the first error message.
    pub failed: usize,
    /// The first failure's message, if any.
    pub first_error: Option<String>,
    /// CPU time per position: mean.
    pub cpu_mean: Duration,
    /// CPU time per position: median.
    pub cpu_p50: Duration,
    /// CPU time per position: 99th percentile.
    pub cpu_p99: Duration,
    /// CPU time per position: maximum.
    pub cpu_max: Duration,
    /// Wall time for all positions.
    pub wall: Duration,
    /// Positions per second of wall time.
    pub positions_per_sec: f64,
    /// Mean solution length.
    pub mean_length: f64,
    /// Solutions proved optimal (by the short search, or an anytime search that ran out
    /// of shorter levels).
    pub optimal: usize,
    /// How many solutions had each length 0..=30.
    pub lengths: Vec<usize>,
    /// Mean probes per position.
    pub mean_probes: f64,
    /// Mean nodes per position.
    pub mean_nodes: f64,
    /// Time it took to open the tables.
    pub load_time: Duration,
    /// Bytes of tables in use.
    pub table_bytes: usize,
}

/// CPU time consumed by the calling thread so far.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is supported on
    // every Linux and the BSDs. On failure `ts` stays zero and we report zero.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Per-position measurements.
struct One {
    cpu: Duration,
    length: Option<usize>,
    error: Option<String>,
    probes: u64,
    nodes: u64,
    optimal: bool,
}

/// Solves `opts.count` random positions (from `opts.seed`) and reports the costs.
pub fn run(solver: &TwoPhaseSolver, opts: &BenchOptions) -> BenchReport {
    let mut rng = SplitMix64::new(opts.seed);
    // Random cubes are legal by construction: none is dropped.
    let cubes: Vec<Position> = (0..opts.count)
        .filter_map(|_| Position::new(Cube::random(&mut rng)).ok())
        .collect();
    let settings = Settings {
        method: Method::TwoPhase,
        max_length: opts.max_length,
        anytime: opts.anytime.is_some(),
        time_limit_ms: opts.anytime.map(|d| d.as_millis().max(1) as u64),
        ..Settings::default()
    }
    .validate();
    let one = |c: &Position| {
        // The deadline is wall time from the position's start, as the executor sets it.
        let stop = StopToken::new().with_deadline(opts.anytime.map(|d| Instant::now() + d));
        let start = thread_cpu_time();
        let r = match &settings {
            Ok(s) => solver.solve(c, s, &stop),
            Err(e) => Err(crate::Error::Settings(*e)),
        };
        let cpu = thread_cpu_time().saturating_sub(start);
        match r {
            Ok(r) if r.solutions.is_empty() => One {
                cpu,
                length: None,
                error: Some(format!(
                    "no solution within {} moves ({:?})",
                    opts.max_length, r.stop
                )),
                probes: r.lookups,
                nodes: r.nodes,
                optimal: false,
            },
            Ok(r) => One {
                cpu,
                length: r.solutions.first().map(Vec::len),
                error: None,
                probes: r.lookups,
                nodes: r.nodes,
                optimal: r.optimal,
            },
            Err(e) => One {
                cpu,
                length: None,
                error: Some(e.to_string()),
                probes: 0,
                nodes: 0,
                optimal: false,
            },
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build();
    let wall_start = Instant::now();
    let (results, threads): (Vec<One>, usize) = match pool {
        Ok(pool) => (
            pool.install(|| cubes.par_iter().with_max_len(1).map(one).collect()),
            pool.current_num_threads(),
        ),
        // No pool could be made: measure on this thread alone.
        Err(_) => (cubes.iter().map(one).collect(), 1),
    };
    let wall = wall_start.elapsed();
    summarize(solver.tables(), opts, threads, results, wall)
}

fn summarize(
    tables: &super::TwoPhaseTables,
    opts: &BenchOptions,
    threads: usize,
    results: Vec<One>,
    wall: Duration,
) -> BenchReport {
    let n = results.len().max(1);
    let mut cpu: Vec<Duration> = results.iter().map(|r| r.cpu).collect();
    cpu.sort();
    let pct = |p: f64| {
        cpu.get(((cpu.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or_default()
    };
    let mut lengths = vec![0usize; 31];
    let mut total_len = 0;
    let mut solved = 0;
    for r in &results {
        if let Some(l) = r.length {
            solved += 1;
            total_len += l;
            if let Some(slot) = lengths.get_mut(l) {
                *slot += 1;
            }
        }
    }
    let total_cpu: Duration = cpu.iter().sum();
    BenchReport {
        options: opts.clone(),
        threads,
        solved,
        failed: results.len() - solved,
        first_error: results.iter().find_map(|r| r.error.clone()),
        cpu_mean: total_cpu / n as u32,
        cpu_p50: pct(0.50),
        cpu_p99: pct(0.99),
        cpu_max: cpu.last().copied().unwrap_or_default(),
        wall,
        positions_per_sec: results.len() as f64 / wall.as_secs_f64().max(1e-9),
        mean_length: total_len as f64 / solved.max(1) as f64,
        optimal: results.iter().filter(|r| r.optimal).count(),
        lengths,
        mean_probes: results.iter().map(|r| r.probes as f64).sum::<f64>() / n as f64,
        mean_nodes: results.iter().map(|r| r.nodes as f64).sum::<f64>() / n as f64,
        load_time: tables.load_time(),
        table_bytes: tables.memory_bytes(),
    }
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        writeln!(
            f,
            "two-phase bench: {} random positions (seed {}), max length {}, {} thread(s){}",
            self.options.count,
            self.options.seed,
            self.options.max_length,
            self.threads,
            self.options
                .anytime
                .map(|d| format!(", anytime {:.1} ms per position", ms(d)))
                .unwrap_or_default()
        )?;
        writeln!(
            f,
            "  solved {} / failed {}{}",
            self.solved,
            self.failed,
            self.first_error
                .as_ref()
                .map(|e| format!(" (first error: {e})"))
                .unwrap_or_default()
        )?;
        writeln!(
            f,
            "  CPU per position: mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            ms(self.cpu_mean),
            ms(self.cpu_p50),
            ms(self.cpu_p99),
            ms(self.cpu_max)
        )?;
        writeln!(
            f,
            "  wall {:.3} s, {:.0} positions/s",
            self.wall.as_secs_f64(),
            self.positions_per_sec
        )?;
        write!(f, "  mean length {:.3}; lengths:", self.mean_length)?;
        for (l, &k) in self.lengths.iter().enumerate() {
            if k > 0 {
                write!(f, " {l}:{k}")?;
            }
        }
        writeln!(f)?;
        writeln!(f, "  proved optimal {} of {}", self.optimal, self.solved)?;
        writeln!(
            f,
            "  mean probes {:.1}, mean nodes {:.0}",
            self.mean_probes, self.mean_nodes
        )?;
        write!(
            f,
            "  tables: {:.1} MB, opened in {:.3} s",
            self.table_bytes as f64 / 1e6,
            self.load_time.as_secs_f64()
        )
    }
}
