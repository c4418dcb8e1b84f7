//! `cubeswarm bench`: measured speed of the core operations and of both solvers.

use anyhow::Context as _;
use clap::Subcommand;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use tables::coord::basic::*;
use tables::coord::{Composite, Coord, SymComposite, SymCoord};
use tables::{Cube, Move, SplitMix64, NSYM, NSYM_UD};

/// Which benchmark.
#[derive(Subcommand)]
pub enum BenchWhich {
    /// Moves/s, compositions/s, coordinate computations/s and table-build times.
    Core {
        /// Also time the build of the 140,908,410-entry phase-1 table (about a minute).
        #[arg(long)]
        big: bool,
    },
    /// The H48 optimal solver through the coordinator, one position after another, each
    /// split over every thread: uniformly random states, or the positions of a file.
    Optimal {
        /// Table to use (e.g. h48h0k4, h48h3k2).
        #[arg(long, default_value = "h48h0k4")]
        table: String,
        /// Executor threads.
        #[arg(long, default_value_t = default_threads())]
        threads: usize,
        /// Number of random positions (or of the file's first positions).
        #[arg(long, default_value_t = 5)]
        count: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Solve the positions of FILE instead (lines `moves | ...`; `#` comments).
        #[arg(long)]
        positions: Option<std::path::PathBuf>,
        /// Print the positions as facelet strings, one per line, and solve nothing (to
        /// give another solver the same states).
        #[arg(long)]
        list: bool,
        /// Search every move prefix of a symmetric position, as if it had no symmetry
        /// (to measure the reduction; the solutions are the same).
        #[arg(long)]
        no_symmetry: bool,
    },
    /// The coordinator at scale, simulated: a batch of two-phase lines through the real
    /// driver to simulated workers that answer at once; dispatch throughput and memory.
    Coordinator {
        /// Simulated workers.
        #[arg(long, default_value_t = 1000)]
        workers: usize,
        /// Input lines.
        #[arg(long, default_value_t = 10_000_000)]
        lines: u64,
        /// Two-phase positions per job.
        #[arg(long, default_value_t = 128)]
        batch_size: usize,
        /// Jobs each simulated worker runs at once.
        #[arg(long, default_value_t = 1)]
        threads_per_worker: usize,
    },
    /// One recorded optimal search (`solve --trace FILE`) replayed through the real
    /// scheduler in simulated time on W workers of T threads: wall time, speedup and
    /// efficiency against one thread, nodes, idle time by cause.
    Split(crate::split_cmd::SplitArgs),
    /// A hollow worker: the real worker session serving a coordinator, its search a
    /// recorded trace's at a node rate per thread, its link delayed in the process
    /// (`bench/hollow.sh` runs a cluster of them).
    HollowWorker(crate::hollow_cmd::HollowArgs),
    /// A recorded trace given the node counts of its heavy 5-move prefixes' 6- and
    /// 7-move descendants, each heavy prefix searched anew as its 7-move pieces (the
    /// trace's other counts left as they were), for `bench split` to cost finer units.
    RefineTrace(crate::refine_cmd::RefineArgs),
    /// The machine's state, not the solvers': a fixed compute-only workload (a dependent
    /// chain of cube compositions, no memory traffic), on one thread and then on every
    /// thread at once. Side-by-side scripts print it before and after, so a slow hour
    /// shows as a slow probe rather than as a slow solver.
    Probe {
        /// Threads of the second measurement (each runs the same chain).
        #[arg(long, default_value_t = default_threads())]
        threads: usize,
    },
    /// The two-phase solver on uniformly random states.
    Twophase {
        /// Maximum solution length.
        #[arg(long, default_value_t = 20)]
        max_length: u8,
        /// Number of random positions.
        #[arg(long, default_value_t = 1000)]
        count: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Threads (positions solved side by side).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Anytime search: SECS of wall time per position, reporting the shortest found
        /// (as `solve --method twophase --anytime --time-limit SECS`).
        #[arg(long, value_name = "SECS")]
        anytime: Option<f64>,
    },
}

/// Number of available cores.
pub fn default_threads() -> usize {
    frontend::settings::cores()
}

/// `--threads` within the bound every command applies ([`frontend::settings::threads`]).
fn bounded(threads: usize) -> anyhow::Result<usize> {
    Ok(frontend::settings::threads(
        Some(threads),
        &frontend::Dialect::CLI,
    )?)
}

/// Runs a benchmark.
pub fn run(dir: &Path, which: BenchWhich) -> anyhow::Result<()> {
    match which {
        BenchWhich::Core { big } => {
            core(big);
            Ok(())
        }
        BenchWhich::Optimal {
            table,
            threads,
            count,
            seed,
            positions,
            list,
            no_symmetry,
        } => optimal(
            dir,
            &table,
            bounded(threads)?,
            (count, seed, positions.as_deref()),
            list,
            !no_symmetry,
        ),
        BenchWhich::Coordinator {
            workers,
            lines,
            batch_size,
            threads_per_worker,
        } => {
            let report = benchtools::simbench::run_bench(benchtools::simbench::BenchConfig {
                workers,
                lines,
                batch_size,
                threads_per_worker,
                ..Default::default()
            })?;
            println!("{report}");
            Ok(())
        }
        BenchWhich::Split(args) => crate::split_cmd::run(args),
        // Run by `main` (it needs the connection flags).
        BenchWhich::HollowWorker(_) => anyhow::bail!("bench hollow-worker is run by main"),
        BenchWhich::RefineTrace(args) => crate::refine_cmd::run(dir, args),
        BenchWhich::Probe { threads } => {
            probe(bounded(threads)?);
            Ok(())
        }
        BenchWhich::Twophase {
            max_length,
            count,
            seed,
            threads,
            anytime,
        } => {
            let anytime = anytime
                .map(|secs| {
                    std::time::Duration::try_from_secs_f64(secs)
                        .ok()
                        .filter(|d| !d.is_zero())
                        .context("--anytime must be a positive number of seconds")
                })
                .transpose()?;
            let t0 = Instant::now();
            let tables =
                worker::TwoPhaseSolver::open_or_build(dir, &crate::progress::Bars::new(true))
                    .with_context(|| format!("two-phase tables in {}", dir.display()))?;
            eprintln!("tables ready in {:.2} s", t0.elapsed().as_secs_f64());
            let opts = worker::twophase::bench::BenchOptions {
                max_length,
                count,
                seed,
                threads: bounded(threads)?,
                anytime,
            };
            let report = worker::twophase::bench::run(&tables, &opts);
            println!("{report}");
            Ok(())
        }
    }
}

/// `bench optimal`: each position a single-position request through the coordinator on
/// one in-process executor of `threads` threads (the path `cubeswarm solve` takes). The
/// positions: the first `count` of `file`, or `count` random ones from `seed`.
fn optimal(
    dir: &Path,
    table: &str,
    threads: usize,
    (count, seed, file): (usize, u64, Option<&Path>),
    list: bool,
    symmetry: bool,
) -> anyhow::Result<()> {
    let positions = bench_positions(count, seed, file)?;
    if list {
        for (_, p) in &positions {
            println!("{}", tables::facelet::to_facelets(p.cube()));
        }
        return Ok(());
    }
    let table = frontend::table::local(
        dir,
        proto::Method::Optimal,
        Some(table),
        &frontend::Dialect::CLI,
        &crate::progress::Bars::new(true),
    )?;
    let tables = frontend::Embedded::open_copied(dir, &table, &crate::progress::Bars::new(true))?;
    let bench = OptimalBench {
        pool: tables.executors(1, threads)?,
        settings: proto::Settings::default(),
        table,
        symmetry,
    };
    println!(
        "H48 optimal through the coordinator: table {}, {threads} threads",
        bench.table
    );
    let (mut total_s, mut total_nodes) = (0.0f64, 0u64);
    for (i, (text, p)) in positions.iter().enumerate() {
        let (secs, nodes) = bench.solve(i, text, p)?;
        total_s += secs;
        total_nodes += nodes;
    }
    let n = positions.len().max(1) as f64;
    println!(
        "mean {:.3} s per position, {:.0} nodes per position, {:.1} M nodes/s ({:.1} per thread)",
        total_s / n,
        total_nodes as f64 / n,
        total_nodes as f64 / total_s.max(1e-9) / 1e6,
        total_nodes as f64 / total_s.max(1e-9) / 1e6 / threads.max(1) as f64
    );
    println!(
        "throughput {:.4} positions per second per thread ({} positions in {:.1} s on {threads} threads)",
        n / total_s.max(1e-9) / threads.max(1) as f64,
        positions.len(),
        total_s
    );
    Ok(())
}

/// The positions of `bench optimal`, each with its text: the first `count` of `file`
/// (lines `moves | ...`; `#` comments), or `count` random ones from `seed`.
fn bench_positions(
    count: usize,
    seed: u64,
    file: Option<&Path>,
) -> anyhow::Result<Vec<(String, tables::Position)>> {
    let mut positions: Vec<(String, tables::Position)> = Vec::new();
    match file {
        Some(f) => {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            for line in text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            {
                let moves = line.split('|').next().unwrap_or("").trim();
                let p = tables::Position::parse(moves).with_context(|| format!("{moves:?}"))?;
                positions.push((moves.to_string(), p));
            }
            positions.truncate(count);
        }
        None => {
            let mut rng = SplitMix64::new(seed);
            for _ in 0..count {
                let c = Cube::random(&mut rng);
                let p = tables::Position::new(c)?;
                positions.push((tables::facelet::to_facelets(&c), p));
            }
        }
    }
    Ok(positions)
}

/// What `bench optimal` solves each position with.
struct OptimalBench {
    /// One in-process executor.
    pool: coordinator::Executors,
    settings: proto::Settings,
    table: String,
    /// Whether a symmetric position's prefixes are searched once per class.
    symmetry: bool,
}

impl OptimalBench {
    /// Solves position `i` (0-based; `text` as given) through the coordinator, checks
    /// that its first solution solves it optimally, and prints its line; its seconds and
    /// nodes.
    fn solve(&self, i: usize, text: &str, p: &tables::Position) -> anyhow::Result<(f64, u64)> {
        let t = Instant::now();
        let mut got = None;
        let line = coordinator::input::InputLine {
            line: i as u64 + 1,
            input: text.to_string(),
            parsed: Ok(*p),
        };
        coordinator::run(
            coordinator::Config {
                symmetry: self.symmetry,
                ..coordinator::Config::default()
            },
            &self.pool,
            self.settings.clone(),
            self.table.clone(),
            coordinator::Source::<std::io::Empty>::One(line),
            &mut |r| {
                got = Some(r);
                Ok(())
            },
        )?;
        let secs = t.elapsed().as_secs_f64();
        let rec = got.context("no record")?;
        let s = rec
            .outcome
            .map_err(|e| anyhow::anyhow!("position {}: {e}", i + 1))?;
        let sol = s.solutions.first().context("no solution")?;
        anyhow::ensure!(
            p.is_solved_by(sol) && s.optimal,
            "position {}: bad answer",
            i + 1
        );
        println!(
            "#{:<3} {:>2} moves  {:>14} nodes  {:>9.3} s  {:>6.1} M nodes/s",
            i + 1,
            sol.len(),
            s.nodes,
            secs,
            s.nodes as f64 / secs / 1e6
        );
        Ok((secs, s.nodes))
    }
}

/// Compositions per second of one dependent chain of `n` moves from a fixed start.
fn probe_chain(n: usize) -> f64 {
    let mut rng = SplitMix64::new(7);
    let moves: Vec<Move> = (0..4096)
        .map(|_| Move::ALL[rng.below(18) as usize])
        .collect();
    let t = Instant::now();
    let mut c = Cube::random(&mut rng);
    for i in 0..n {
        c = c.apply_move(moves[i & 4095]);
    }
    black_box(c);
    n as f64 / t.elapsed().as_secs_f64()
}

fn probe(threads: usize) {
    const N: usize = 60_000_000;
    // Three rounds each: the best says what the core can do, the spread how steady it is.
    let one: Vec<f64> = (0..3).map(|_| probe_chain(N)).collect();
    let all: Vec<f64> = (0..3)
        .map(|_| {
            let rates: Vec<f64> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..threads).map(|_| s.spawn(|| probe_chain(N))).collect();
                hs.into_iter().map(|h| h.join().unwrap_or(0.0)).collect()
            });
            rates.iter().sum::<f64>() / threads as f64
        })
        .collect();
    let fmt = |v: &[f64]| {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        format!(
            "{:.1} M/s (range {:.1}–{:.1})",
            hi / 1e6,
            lo / 1e6,
            hi / 1e6
        )
    };
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    println!(
        "probe: 1 thread {}; {threads} threads {} per thread; load {load}",
        fmt(&one),
        fmt(&all)
    );
}

fn rate(label: &str, n: u64, secs: f64) {
    println!(
        "{label:<44} {:>12.1} M/s  ({n} in {secs:.3} s)",
        n as f64 / secs / 1e6
    );
}

fn time<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

/// `bench core`: the speed of the cube operations, the coordinates, the symmetry
/// coordinates and the table builds (the 140,908,410-entry phase-1 table when `big`).
fn core(big: bool) {
    let mut rng = SplitMix64::new(1);
    let cubes: Vec<Cube> = (0..1024).map(|_| Cube::random(&mut rng)).collect();
    let moves: Vec<Move> = (0..4096)
        .map(|_| Move::ALL[rng.below(18) as usize])
        .collect();
    core_cube_ops(&cubes, &moves);
    core_coords(&cubes);
    let sc = core_sym_coords(&cubes);
    core_table_builds(&sc, big);
}

/// Operations counted by each timed loop of `bench core` after the first.
const CORE_N: u64 = 10_000_000;

/// `bench core`'s cube operations: moves (SIMD and scalar, each a dependent chain, as in
/// a search), inverses and conjugations by a symmetry.
fn core_cube_ops(cubes: &[Cube], moves: &[Move]) {
    // Moves: a dependent chain, as in a search (each move applied to the previous result).
    let n = 50_000_000u64;
    let (c, s) = time(|| {
        let mut c = cubes[0];
        for i in 0..n as usize {
            c = c.apply_move(moves[i & 4095]);
        }
        c
    });
    black_box(c);
    rate("apply_move (SIMD compose, dependent chain)", n, s);
    let n2 = CORE_N;
    let (c, s) = time(|| {
        let mut c = cubes[0];
        for i in 0..n2 as usize {
            c = c.compose_scalar(&tables::moves::MOVE_CUBES[moves[i & 4095].index()]);
        }
        c
    });
    black_box(c);
    rate("apply_move (scalar compose, dependent chain)", n2, s);
    let (c, s) = time(|| {
        let mut acc = 0u64;
        for i in 0..n2 as usize {
            acc += cubes[i & 1023].inverse().corner(0) as u64;
        }
        acc
    });
    black_box(c);
    rate("inverse", n2, s);
    let syms = tables::symmetries();
    let (c, s) = time(|| {
        let mut acc = 0u64;
        for i in 0..n2 as usize {
            acc += syms.conjugate(&cubes[i & 1023], i % NSYM).edge(0) as u64;
        }
        acc
    });
    black_box(c);
    rate("conjugate by a symmetry (scalar)", n2, s);
}

/// `bench core`'s raw coordinates, each computed of the cubes in turn.
fn core_coords(cubes: &[Cube]) {
    let n2 = CORE_N;
    let coords: Vec<Box<dyn Coord>> = vec![
        Box::new(Twist),
        Box::new(Flip),
        Box::new(UdSlice),
        Box::new(UdSliceSorted),
        Box::new(CornerPerm),
        Box::new(CornerSep),
        Box::new(EdgeSep),
    ];
    for coord in &coords {
        let (c, s) = time(|| {
            let mut acc = 0u64;
            for i in 0..n2 as usize {
                acc += coord.index(&cubes[i & 1023]) as u64;
            }
            acc
        });
        black_box(c);
        rate(&format!("index: {}", coord.name()), n2, s);
    }
}

/// `bench core`'s symmetry coordinates: the builds of FlipUDSlice/16, cocsep/48 and
/// the sym-composite UDSliceSorted×twist, and the latter computed of the cubes (it is
/// returned, for the table build).
fn core_sym_coords(cubes: &[Cube]) -> SymComposite<UdSliceSorted, Twist> {
    let n2 = CORE_N;
    let (fus, s) = time(|| SymCoord::new(&Composite::new(Flip, UdSlice), NSYM_UD));
    println!(
        "{:<44} {:>12.3} s  ({} classes)",
        "build sym coordinate FlipUDSlice/16",
        s,
        fus.classes()
    );
    let (cocsep, s) = time(|| SymCoord::new(&Composite::new(Twist, CornerSep), NSYM));
    println!(
        "{:<44} {:>12.3} s  ({} classes)",
        "build sym coordinate cocsep/48",
        s,
        cocsep.classes()
    );
    let (sc, s) = time(|| SymComposite::new(UdSliceSorted, Twist, NSYM_UD));
    println!(
        "{:<44} {:>12.3} s",
        "build sym-composite UDSliceSorted×twist", s
    );
    let (c, s) = time(|| {
        let mut acc = 0u64;
        for i in 0..n2 as usize {
            acc += sc.index(&cubes[i & 1023]);
        }
        acc
    });
    black_box(c);
    rate("index: sym-composite UDSliceSorted×twist", n2, s);
    sc
}

/// `bench core`'s table builds (BFS): UDSliceSorted×twist over `sc`, and with `big` the
/// phase-1 table FlipUDSlice×twist.
fn core_table_builds(sc: &SymComposite<UdSliceSorted, Twist>, big: bool) {
    let opts = tables::bfs::BfsOptions::default();
    let (g, s) = time(|| tables::bfs::generate(sc, &opts));
    println!(
        "{:<44} {:>12.3} s  ({} entries, {} threads)",
        "table build: UDSliceSorted×twist (BFS)",
        s,
        sc.size(),
        rayon::current_num_threads()
    );
    black_box(g.distribution);
    if big {
        let (p1, s0) = time(|| SymComposite::new(Composite::new(Flip, UdSlice), Twist, NSYM_UD));
        let (g, s) = time(|| tables::bfs::generate(&p1, &opts));
        println!(
            "{:<44} {:>12.3} s  (+{s0:.2} s coordinate tables; {} entries)",
            "table build: FlipUDSlice×twist (BFS)",
            s,
            p1.size()
        );
        black_box(g.distribution);
    }
}
