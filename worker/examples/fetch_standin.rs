//! Benchmark aid: a stand-in for a table file too long to build here, to measure a fetch
//! of its size (`bench/fetch-throughput.sh`).
//!
//! `cargo run --release -p cubeswarm-worker --features examples --example fetch_standin -- <dir> <file>`
//!
//! Writes `<dir>/<file>.tbl`: a sound table file (header, checksum, distribution) of the
//! exact length the catalog gives `<file>`, with 2-bit entries, whose body is
//! pseudo-random bytes, **not the table**. A coordinator serves it and a fetch checks it
//! like the real one (the same bytes on the wire, the same checks), but no solver may
//! ever read it: keep it out of every real tables directory and delete it after use.
use std::path::Path;
use tables::tablefile::{table_path, write_table_with, TableMeta, BODY_CHUNK, HEADER_LEN};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, file] = args.as_slice() else {
        return Err("usage: fetch_standin <dir> <file>".into());
    };
    let bytes = proto::catalog::file_bytes(file)
        .ok_or_else(|| format!("{file:?} is not a catalog file"))?;
    let body = bytes - HEADER_LEN as u64;
    let path = table_path(Path::new(dir), file);
    // Four 2-bit entries per byte: the body is exactly `body` bytes.
    let meta = TableMeta::new(file.as_str(), body * 4, 2);
    let header = write_table_with(&path, &meta, &|i, chunk| {
        let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for word in chunk.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            word.copy_from_slice(&x.to_le_bytes()[..word.len()]);
        }
        debug_assert!(chunk.len() <= BODY_CHUNK);
    })?;
    println!(
        "{}: {} bytes, checksum {:016x} (a stand-in, not the table)",
        path.display(),
        header.body_len + HEADER_LEN as u64,
        header.checksum
    );
    Ok(())
}
