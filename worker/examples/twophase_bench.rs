//! Two-phase benchmark: builds or opens the tables, then solves random positions.
//!
//! ```text
//! cargo run --release -p cubeswarm-worker --features examples --example twophase_bench -- \
//!     [--dir DIR] [--count N] [--max-length L] [--threads T] [--seed S] [--memory huge|mapped]
//! ```
//! The default table directory is `target/test-tables` (shared with the tests).

use std::path::PathBuf;
use std::time::Instant;
use worker::twophase::bench::{self, BenchOptions};
use worker::twophase::{TableMemory, TwoPhaseSolver, TwoPhaseTables};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-tables");
    let mut opts = BenchOptions::default();
    let mut memory = TableMemory::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--dir" => dir = PathBuf::from(value),
            "--count" => opts.count = value.parse()?,
            "--max-length" => opts.max_length = value.parse()?,
            "--threads" => opts.threads = value.parse()?,
            "--seed" => opts.seed = value.parse()?,
            "--memory" => {
                memory = match value.as_str() {
                    "huge" => TableMemory::HugePages,
                    "mapped" => TableMemory::Mapped,
                    other => return Err(format!("--memory huge|mapped, not {other}").into()),
                }
            }
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    for name in TwoPhaseTables::missing(&dir) {
        let start = Instant::now();
        TwoPhaseTables::build(&dir, name, &tables::progress::Silent)?;
        println!("built {name} in {:.2} s", start.elapsed().as_secs_f64());
    }
    let solver = TwoPhaseSolver::open_with(&dir, memory)?;
    solver.tables().prefault();
    // Warm-up: a few positions with another seed, not measured.
    bench::run(
        &solver,
        &BenchOptions {
            count: 20,
            seed: opts.seed ^ 0x5eed,
            ..opts.clone()
        },
    );
    println!("{}", bench::run(&solver, &opts));
    Ok(())
}
