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
    /// The H48 optimal solver on uniformly random states.
    Optimal {
        /// Table to use (e.g. h48h0k4, h48h3k2).
        #[arg(long, default_value = "h48h0k4")]
        table: String,
        /// Threads per position.
        #[arg(long, default_value_t = default_threads())]
        threads: usize,
        /// Number of random positions.
        #[arg(long, default_value_t = 5)]
        count: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
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
    },
}

/// Number of available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
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
        } => {
            let solver = crate::solve_cmd::open_optimal(dir, Some(&table))?;
            let opts = worker::h48::bench::BenchOptions {
                table,
                threads,
                count,
                seed,
            };
            let report = worker::h48::bench::run(&solver, &opts)?;
            println!("{report}");
            Ok(())
        }
        BenchWhich::Twophase {
            max_length,
            count,
            seed,
            threads,
        } => {
            let t0 = Instant::now();
            let tables = worker::twophase::TwoPhaseTables::open_or_build(dir, true)
                .with_context(|| format!("two-phase tables in {}", dir.display()))?;
            eprintln!("tables ready in {:.2} s", t0.elapsed().as_secs_f64());
            let opts = worker::twophase::bench::BenchOptions {
                max_length,
                count,
                seed,
                threads,
            };
            let report = worker::twophase::bench::run(&tables, &opts);
            println!("{report}");
            Ok(())
        }
    }
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

fn core(big: bool) {
    let mut rng = SplitMix64::new(1);
    let cubes: Vec<Cube> = (0..1024).map(|_| Cube::random(&mut rng)).collect();
    let moves: Vec<Move> = (0..4096)
        .map(|_| Move::ALL[rng.below(18) as usize])
        .collect();

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
    let n2 = 10_000_000u64;
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
    let opts = tables::bfs::BfsOptions {
        progress: false,
        ..Default::default()
    };
    let (g, s) = time(|| tables::bfs::generate(&sc, &opts));
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
