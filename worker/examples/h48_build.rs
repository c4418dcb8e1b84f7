//! Builds a table of the catalog (and what it depends on).
//!
//! `cargo run --release -p cubeswarm-worker --features examples --example h48_build -- <dir> <table>`
//! e.g. `... -- /tmp/h48 h48h3k2`. Prints the time and the peak memory (VmHWM).

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(name)) = (args.get(1), args.get(2)) else {
        eprintln!(
            "usage: h48_build <dir> <table>   (tables: {})",
            proto::catalog::names().join(" ")
        );
        std::process::exit(2);
    };
    let t = Instant::now();
    let cpu0 = worker::h48::bench::process_cpu_time();
    worker::catalog::build(std::path::Path::new(dir), name, &tables::progress::Silent)?;
    let cpu = worker::h48::bench::process_cpu_time()
        .zip(cpu0)
        .map(|(b, a)| b - a);
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(str::to_string)
        })
        .unwrap_or_default();
    println!(
        "built {name} in {:.1} s (cpu {:.1} s); {hwm}",
        t.elapsed().as_secs_f64(),
        cpu.map_or(0.0, |c| c.as_secs_f64())
    );
    Ok(())
}
