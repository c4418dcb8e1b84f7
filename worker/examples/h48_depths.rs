//! Per-depth node counts of the search primitive (an experiment tool).
//!
//! `cargo run --release -p cubeswarm-worker --example h48_depths -- <dir> <table> <max depth> <moves> [huge|mapped] [lanes]`
use std::path::Path;
use std::sync::atomic::AtomicBool;
use tables::{parse_moves, Cube};
use worker::h48::H48Solver;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let memory = match args.get(5).map(String::as_str) {
        Some("mapped") => worker::TableMemory::Mapped,
        _ => worker::TableMemory::HugePages,
    };
    let solver = H48Solver::open_with(Path::new(&args[1]), &args[2], memory)?;
    let max: u8 = args[3].parse()?;
    let cube = Cube::from_moves(&parse_moves(&args[4])?);
    let cancel = AtomicBool::new(false);
    // Optional: interleave this many lanes over the 4-move prefixes on one thread.
    let lanes: Option<usize> = args.get(6).map(|s| s.parse()).transpose()?;
    let prefixes = worker::h48::solve::canonical_prefixes(4);
    for d in solver.lower_bound(&cube)..=max {
        let t = std::time::Instant::now();
        let out = match lanes {
            None => solver.search(&cube, &[], d, usize::MAX, &cancel),
            Some(k) => {
                let mut it = prefixes.iter().enumerate();
                let mut total = worker::h48::SearchOutcome::default();
                solver.search_lanes(
                    &cube,
                    d,
                    k,
                    &cancel,
                    &mut || it.next().map(|(i, p)| (i, &p[..], usize::MAX)),
                    &mut |_, o| {
                        total.nodes += o.nodes;
                        total.lookups += o.lookups;
                        total.solutions.extend(o.solutions);
                    },
                );
                total
            }
        };
        println!(
            "depth {d}: {} nodes, {} lookups, {} solutions, {:.2} s",
            out.nodes,
            out.lookups,
            out.solutions.len(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
