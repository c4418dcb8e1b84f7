//! Per-depth node counts of the search primitive (an experiment tool).
//!
//! `cargo run --release -p cubeswarm-worker --features examples --example h48_depths -- <dir> <table> <max depth> <moves> [huge|mapped] [lanes]`
use std::path::Path;
use tables::{parse_moves, Cube};
use worker::h48::H48Solver;
use worker::StopToken;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let memory = match args.get(5).map(String::as_str) {
        Some("mapped") => worker::TableMemory::Mapped,
        _ => worker::TableMemory::HugePages,
    };
    let solver = H48Solver::open_with(Path::new(&args[1]), &args[2], memory)?;
    let max: u8 = args[3].parse()?;
    let cube = Cube::from_moves(&parse_moves(&args[4])?);
    let stop = StopToken::new();
    // Optional: interleave this many lanes over the 4-move prefixes on one thread.
    let lanes: Option<usize> = args.get(6).map(|s| s.parse()).transpose()?;
    let prefixes = tables::canonical::sequences(4);
    for d in solver.lower_bound(&cube)..=max {
        let t = std::time::Instant::now();
        let out = match lanes {
            None => {
                let o = solver.search(&cube, &[], d, usize::MAX, &stop);
                (o.nodes, o.lookups, o.solutions.len())
            }
            Some(k) => {
                let mut it = prefixes.iter().enumerate();
                let mut total = (0, 0, 0);
                solver.search_lanes(
                    &cube,
                    d,
                    k,
                    &stop,
                    &mut || it.next().map(|(i, p)| (i, &p[..], usize::MAX)),
                    &mut |_| true,
                    &mut |_, o| {
                        total.0 += o.nodes;
                        total.1 += o.lookups;
                        total.2 += o.solutions.len();
                    },
                );
                total
            }
        };
        println!(
            "depth {d}: {} nodes, {} lookups, {} solutions, {:.2} s",
            out.0,
            out.1,
            out.2,
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
