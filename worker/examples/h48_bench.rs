//! Benchmarks the H48 solver on random positions or on a position file, one position
//! after another on one thread.
//!
//! `cargo run --release -p cubeswarm-worker --features examples --example h48_bench -- <dir> <table> <count|file> [seed]`
//!
//! With a file (lines `moves | ...`, `#` comments), solves each line's position; with a
//! number, that many random positions from the seed.

use std::path::Path;
use tables::Position;
use worker::h48::{bench, H48Solver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: h48_bench <dir> <table> <count|file> [seed]");
        std::process::exit(2);
    }
    let solver = H48Solver::open(Path::new(&args[1]), &args[2])?;
    let report = if let Ok(count) = args[3].parse::<usize>() {
        let seed = args.get(4).map_or(Ok(1), |s| s.parse())?;
        bench::run(
            &solver,
            &bench::BenchOptions {
                table: args[2].clone(),
                count,
                seed,
            },
        )?
    } else {
        let text = std::fs::read_to_string(&args[3])?;
        let mut positions = Vec::new();
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let moves = line.split('|').next().unwrap_or("");
            positions.push(Position::parse(moves)?);
        }
        if let Some(n) = args.get(4).and_then(|s| s.parse::<usize>().ok()) {
            positions.truncate(n);
        }
        bench::run_positions(&solver, &positions)?
    };
    println!("{report}");
    Ok(())
}
