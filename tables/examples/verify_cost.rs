//! What checking a table before it answers costs, by size: writes a table file of
//! `BYTES` (2-bit entries, any pattern: the check reads every byte whatever they hold),
//! then times opening it with `verify_once` three ways: the first time with its pages in
//! the page cache, the first time from disk (where `/proc/sys/vm/drop_caches` can be
//! written), and remembered (a stamp matches).
//!
//! ```text
//! cargo run --release -p cubeswarm-tables --example verify_cost -- DIR BYTES
//! ```
//!
//! BYTES may end in k, M or G (powers of 1000); DIR must have room for the file, which is
//! removed at the end. Stamps go to a cache directory of its own under DIR.

use std::path::Path;
use std::time::Instant;
use tables::progress::Silent;
use tables::tablefile::{table_path, write_table_with, Checked, TableFile, TableMeta};

fn parse_bytes(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    Some((num.parse::<f64>().ok()? * mult) as u64)
}

/// Drops the page cache (root only); whether it could.
fn drop_caches() -> bool {
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}

fn timed(path: &Path) -> (f64, Checked) {
    let start = Instant::now();
    let f = TableFile::open(path, "synthetic").expect("open");
    let how = f.verify_once(&Silent).expect("verify");
    (start.elapsed().as_secs_f64(), how)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(bytes)) = (args.first(), args.get(1).and_then(|b| parse_bytes(b))) else {
        eprintln!("usage: verify_cost DIR BYTES (e.g. /tmp 7.52G)");
        std::process::exit(2);
    };
    let dir = Path::new(dir);
    // The example's own stamps, so that the first check really reads.
    let cache = dir.join("verify-cost-cache");
    let _ = std::fs::remove_dir_all(&cache);
    std::env::set_var("XDG_CACHE_HOME", &cache);
    let path = table_path(dir, "synthetic");
    let meta = TableMeta::new("synthetic", bytes * 4, 2);
    let start = Instant::now();
    write_table_with(&path, &meta, &|i, chunk| {
        for (k, b) in chunk.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(31) ^ (k as u8);
        }
    })
    .expect("write");
    println!(
        "wrote {:.2} GB in {:.1} s",
        bytes as f64 / 1e9,
        start.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&cache);
    let (t, how) = timed(&path);
    println!(
        "first check, pages cached: {t:.3} s ({how:?}, {:.2} GB/s)",
        bytes as f64 / 1e9 / t
    );
    let _ = std::fs::remove_dir_all(&cache);
    if drop_caches() {
        let (t, how) = timed(&path);
        println!(
            "first check, from disk:    {t:.3} s ({how:?}, {:.2} GB/s)",
            bytes as f64 / 1e9 / t
        );
    } else {
        println!("first check, from disk:    not measured (cannot drop the page cache)");
    }
    let (t, how) = timed(&path);
    println!("remembered:                {:.6} s ({how:?})", t);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&cache);
}
