//! `bench optimal`: solve random positions optimally, one after another on one thread,
//! and report time and node rates.

use super::H48Solver;
use crate::{Error, StopToken};
use proto::Settings;
use std::fmt;
use std::time::{Duration, Instant};
use tables::{Cube, Position, SplitMix64};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Table name (informational; the solver passed to [`run`] decides).
    pub table: String,
    /// Number of random positions.
    pub count: usize,
    /// Seed of the random positions (same seed, same positions).
    pub seed: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            table: "h48h0k4".into(),
            count: 10,
            seed: 1,
        }
    }
}

/// One solved position.
#[derive(Clone, Debug)]
pub struct BenchEntry {
    /// Optimal length.
    pub length: usize,
    /// Positions generated.
    pub nodes: u64,
    /// Main-table lookups.
    pub lookups: u64,
    /// Wall time.
    pub time: Duration,
}

/// The measurements.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// Table used.
    pub table: String,
    /// Per position.
    pub entries: Vec<BenchEntry>,
    /// Total wall time.
    pub wall: Duration,
    /// Process CPU time over the run (all threads), if the OS reports it.
    pub cpu: Option<Duration>,
}

impl BenchReport {
    /// Mean wall time per position.
    pub fn mean_time(&self) -> Duration {
        self.wall / self.entries.len().max(1) as u32
    }
    /// Total nodes.
    pub fn nodes(&self) -> u64 {
        self.entries.iter().map(|e| e.nodes).sum()
    }
    /// Nodes per second of wall time.
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes() as f64 / self.wall.as_secs_f64().max(1e-9)
    }
    /// Main-table lookups per node.
    pub fn lookups_per_node(&self) -> f64 {
        self.entries.iter().map(|e| e.lookups).sum::<u64>() as f64 / self.nodes().max(1) as f64
    }
}

/// CPU time of this process so far (user + system), from /proc/self/stat.
pub fn process_cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Solves `opts.count` random positions one after another.
pub fn run(solver: &H48Solver, opts: &BenchOptions) -> Result<BenchReport, Error> {
    let mut rng = SplitMix64::new(opts.seed);
    // Random cubes are legal by construction: none is dropped.
    let positions: Vec<Position> = (0..opts.count)
        .filter_map(|_| Position::new(Cube::random(&mut rng)).ok())
        .collect();
    run_positions(solver, &positions)
}

/// Solves the given positions one after another on this thread (for fixed benchmark
/// sets).
pub fn run_positions(solver: &H48Solver, positions: &[Position]) -> Result<BenchReport, Error> {
    let settings = Settings::default().validate()?;
    let stop = StopToken::new();
    let cpu0 = process_cpu_time();
    let t0 = Instant::now();
    let mut entries = Vec::new();
    for p in positions {
        let t = Instant::now();
        let r = solver.solve(p, &settings, &stop)?;
        entries.push(BenchEntry {
            length: r.solutions.first().map_or(0, |s| s.len()),
            nodes: r.nodes,
            lookups: r.lookups,
            time: t.elapsed(),
        });
    }
    let wall = t0.elapsed();
    let cpu = match (cpu0, process_cpu_time()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    Ok(BenchReport {
        table: solver.table_name().to_string(),
        entries,
        wall,
        cpu,
    })
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "table {}, one thread, {} positions",
            self.table,
            self.entries.len()
        )?;
        for (i, e) in self.entries.iter().enumerate() {
            writeln!(
                f,
                "  #{i:<3} {:>2} moves  {:>8.3} s  {:>14} nodes  {:>6.2} Mnodes/s",
                e.length,
                e.time.as_secs_f64(),
                e.nodes,
                e.nodes as f64 / e.time.as_secs_f64().max(1e-9) / 1e6
            )?;
        }
        write!(
            f,
            "mean {:.3} s/position, {:.2} Mnodes/s, {:.3} lookups/node",
            self.mean_time().as_secs_f64(),
            self.nodes_per_second() / 1e6,
            self.lookups_per_node()
        )?;
        if let Some(cpu) = self.cpu {
            write!(
                f,
                ", cpu {:.1} s for {:.1} s wall",
                cpu.as_secs_f64(),
                self.wall.as_secs_f64()
            )?;
        }
        Ok(())
    }
}
