//! Experiment: what the search costs without main-table memory traffic.
//!
//! `cargo run --release -p cubeswarm-worker --features examples --example h48_fake -- <dir with h48h3k2> <entries> <moves> <depth>`
//!
//! Searches one depth (4-move tasks, two lanes, one thread) with a stand-in for h48h3k2:
//! `<entries>` (a power of two) values sampled from the real h48h3k2 and h48h0k4, read
//! at a hash of the real index, nothing prefetched. With 4096 entries the table sits in
//! the first-level cache, so the node rate is the search's compute rate; with 2^24 or more
//! it is the rate with unprefetched memory reads. The pruning is random but about as
//! strong as the real table's, so the tree has a similar shape (node counts differ).
use std::path::Path;
use tables::{parse_moves, Cube};
use worker::h48::search::{search_lanes, Lookup, Probe, Pruner};
use worker::StopToken;

struct Fake {
    k2: Vec<u8>,
    h0: Vec<u8>,
    base: u8,
    mask: u64,
}
impl Lookup for Fake {
    fn prefetch(&self, idx: u64) {
        std::hint::black_box(idx);
    }
    fn bytes(&self) -> u64 {
        self.k2.len() as u64
    }
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        let h = (idx.wrapping_mul(0x9e3779b97f4a7c15) >> 40) & self.mask;
        match self.k2[h as usize] {
            0 => None,
            s => Some(self.base + s),
        }
    }
    #[inline(always)]
    fn at_most(&self) -> u8 {
        self.base
    }
    #[inline(always)]
    fn fallback(&self, pr: &Probe) -> u8 {
        let h = (pr.idx.wrapping_mul(0x9e3779b97f4a7c15) >> 40) & self.mask;
        self.h0[h as usize]
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(&args[1]);
    let size: u64 = args[2].parse()?;
    let real = worker::h48::tables::open_k2(dir, "h48h3k2")?;
    let h0 = worker::h48::tables::open_k4(dir, "h48h0k4")?;
    let n = real.len();
    let fake = Fake {
        k2: (0..size)
            .map(|i| real.get(i.wrapping_mul(2654435761) % n))
            .collect(),
        h0: (0..size)
            .map(|i| h0.get((i.wrapping_mul(2654435761) % n) >> 3))
            .collect(),
        base: real.base(),
        mask: size - 1,
    };
    let coords = worker::h48::coords::Coords::new();
    let cocsep = worker::h48::cocsep::Cocsep::open(dir)?;
    let p = Pruner {
        coords,
        cocsep,
        table: fake,
        eo_bits: 3,
    };
    let cube = Cube::from_moves(&parse_moves(&args[3])?);
    let depth: u8 = args[4].parse()?;
    let stop = StopToken::new();
    let prefixes = tables::canonical::sequences(4);
    let mut it = prefixes.iter().enumerate();
    let (mut nodes, mut lookups) = (0u64, 0u64);
    let t = std::time::Instant::now();
    search_lanes(
        &p,
        &cube,
        depth,
        2,
        &stop,
        &mut || it.next().map(|(i, p)| (i, &p[..], usize::MAX)),
        &mut |_| true,
        &mut |_, o| {
            nodes += o.nodes;
            lookups += o.lookups;
        },
    );
    let e = t.elapsed().as_secs_f64();
    println!(
        "{nodes} nodes, {lookups} lookups, {e:.2} s, {:.1} M nodes/s",
        nodes as f64 / e / 1e6
    );
    Ok(())
}
