//! Generation of the 2-bit tables h48hNk2, N = 1..=11.
//!
//! An entry of h48hNk2 stands for all the h11 cosets that share its corner class, edge
//! separation and the orientation of the edges at positions `12 - N .. 12` (of the position
//! transformed to its class representative); its value is the least h11 distance among
//! them (seed 001, "A generic method for intermediate coordinates"), stored relative to
//! a base `b`: 0 = at most `b`, 1 = `b + 1`, 2 = `b + 2`, 3 = at least `b + 3`.
//!
//! So the table is known once every h11 coset at distance `<= b + 2` has been seen:
//!
//! 1. A breadth-first search over h11 cosets up to depth `S = b + 2 - TAIL`, one
//!    representative cube per coset *up to symmetry* (the key is the least h11 index
//!    over the self-symmetries of the corner class), deduplicated level by level.
//! 2. From each coset at depth `S`, a depth-first walk of `TAIL` moves (canonical
//!    sequences) reaches every coset at depth `S + 1 ..= b + 2` along one of its shortest
//!    paths (and others farther away along longer paths, which the minimum discards).
//! 3. Every position met marks the entries of all its self-symmetric images with its
//!    depth, by an atomic minimum on the 2-bit field (initially 3).
//!
//! The walk's moves are applied to actual cubes, so the result is exact (tests compare
//! h48h0k2 made this way with the conversion of h48h0k4). The cost is the number of
//! h11 cosets at depth `<= b + 2`, which grows about 13-fold per unit of base.

use super::cocsep::{self, Cocsep};
use super::coords::{Coords, ESEP};
use crate::Error;
use rayon::prelude::*;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use tables::canonical::can_follow;
use tables::moves::MOVE_CUBES;
use tables::packed::prefetch;
use tables::progress::Progress;
use tables::symmetry::symmetries;
use tables::tablefile::{self, TableMeta};
use tables::{Cube, Move};

/// Moves walked depth-first after the breadth-first part.
const TAIL: u8 = 3;

/// The base of h48hNk2 (N = 0..=11). Measured: on h48h3k2 base 8 (0.7% of entries "at
/// most 8") searches 15% fewer nodes than base 9 (7.5% "at most 9") and builds in 30 s
/// instead of 13 min (the cost grows about 13-fold per unit of base); on h48h4k2 base 8
/// searches 6–67% fewer nodes than base 9 and builds in 36 s instead of 6.6 min. N >= 5
/// keep nissy-core's bases (not measured here).
pub const BASES: [u8; 12] = [8, 8, 8, 8, 8, 9, 9, 9, 10, 10, 10, 10];

/// Which edges' orientations an h48hNk2 index keeps, recorded as the first header
/// parameter: 1 = the edges at positions `12 - N .. 12` (BR, then BL, FL, FR, DB, ...:
/// the E slice first) of the position transformed to its class representative. Tables
/// written with another layout (0: positions `0 .. N`, before this was chosen) are refused.
pub const EDGE_LAYOUT: u64 = 1;

/// Peak memory of building h48hNk2: the table, its byte copy, the h0k4 table and the
/// breadth-first levels.
pub fn build_memory(eo_bits: u8) -> u64 {
    let table = (117_567_450u64 << eo_bits) / 4;
    2 * table + 117_567_450 / 2 + (1 << 30)
}

/// A fast hasher for u64 keys (a multiply-xorshift mix).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        let x = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^ (x >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// The read-only data of one generation.
struct Gen<'a> {
    coords: Coords,
    cocsep: &'a Cocsep,
    /// Self-symmetries of each corner class (bit s: symmetry s fixes the representative).
    selfsym: Vec<u64>,
    /// `mult[a][b]` = S_a · S_b.
    mult: [[u8; 48]; 48],
    eo_bits: u32,
    base: u8,
    /// The 2-bit working table, 32 entries per word, all 3 at the start.
    words: Vec<AtomicU64>,
}

impl Gen<'_> {
    /// The h11 key of a position: its least h11 index over the self-symmetries.
    #[inline]
    fn key(&self, c: &Cube) -> u64 {
        let w = self.cocsep.get(self.coords.cocsep_raw(c));
        let class = (w & 0xfff) as u64;
        let t = (w >> 12 & 63) as usize;
        let mut mask = self.selfsym[class as usize];
        let mut best = u64::MAX;
        while mask != 0 {
            let u = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let (esep, eo) = self.coords.edges(c, self.mult[u][t] as usize);
            best = best.min(((class * ESEP as u64 + esep as u64) << 11) | (eo & 0x7ff) as u64);
        }
        best
    }

    /// Lowers entry `idx` to the stored value `v` (an atomic minimum).
    #[inline(always)]
    fn lower(&self, idx: u64, v: u64) {
        let word = &self.words[(idx >> 5) as usize];
        let shift = (idx & 31) * 2;
        let mut cur = word.load(Relaxed);
        while (cur >> shift) & 3 > v {
            let new = (cur & !(3 << shift)) | v << shift;
            match word.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                Ok(_) => break,
                Err(x) => cur = x,
            }
        }
    }

    /// The stored value for depth `d`.
    #[inline(always)]
    fn stored(&self, d: u8) -> u64 {
        d.saturating_sub(self.base).min(3) as u64
    }

    /// Lowers the entries of every self-symmetric image of `c` to depth `d`.
    #[inline]
    fn mark(&self, c: &Cube, d: u8) {
        let v = self.stored(d);
        let w = self.cocsep.get(self.coords.cocsep_raw(c));
        let class = (w & 0xfff) as u64;
        let t = (w >> 12 & 63) as usize;
        let mut mask = self.selfsym[class as usize];
        while mask != 0 {
            let u = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            self.lower(self.index(c, class, self.mult[u][t] as usize), v);
        }
    }

    #[inline(always)]
    fn index(&self, c: &Cube, class: u64, t: usize) -> u64 {
        let (esep, eo) = self.coords.edges(c, t);
        ((class * ESEP as u64 + esep as u64) << self.eo_bits)
            | super::coords::eo_part(eo, self.eo_bits)
    }

    /// Marks everything within `left` canonical moves of `c` (at depth `d`). At the last
    /// move the children's entries are prefetched before they are lowered.
    fn walk(&self, c: &Cube, d: u8, left: u8, last: Option<Move>) {
        let allowed = |m: Move| match last {
            Some(l) => can_follow(l, m),
            None => true,
        };
        if left > 1 {
            for m in Move::ALL {
                if allowed(m) {
                    let n = c.compose(&MOVE_CUBES[m.index()]);
                    self.mark(&n, d + 1);
                    self.walk(&n, d + 1, left - 1, Some(m));
                }
            }
            return;
        }
        let v = self.stored(d + 1);
        let mut idx = [0u64; 18];
        let mut k = 0;
        for m in Move::ALL {
            if !allowed(m) {
                continue;
            }
            let n = c.compose(&MOVE_CUBES[m.index()]);
            let w = self.cocsep.get(self.coords.cocsep_raw(&n));
            let class = (w & 0xfff) as u64;
            if self.selfsym[class as usize] != 1 {
                self.mark(&n, d + 1);
                continue;
            }
            let i = self.index(&n, class, (w >> 12 & 63) as usize);
            // Its word will be written soon: start loading its cache line now.
            prefetch(&self.words, (i >> 5) as usize);
            idx[k] = i;
            k += 1;
        }
        for &i in &idx[..k] {
            self.lower(i, v);
        }
    }
}

/// Generates the 2-bit table with `eo_bits` = N (0..=11) and base `base` (at least
/// `TAIL - 2`), and writes it to `<dir>/<name>.tbl`. The tables named h48hNk2 use
/// [`BASES`]; other bases serve tests (a small base is cheap).
pub fn generate(
    dir: &std::path::Path,
    name: &str,
    eo_bits: u8,
    base: u8,
    cocsep: &Cocsep,
    progress: &dyn Progress,
) -> Result<(), Error> {
    let name = name.to_string();
    let eo_bits = eo_bits.min(11);
    let base = base.max(TAIL - 2);
    let entries = (cocsep::CLASSES as u64 * ESEP as u64) << eo_bits;
    let sym = cocsep::sym_coord();
    let syms = symmetries();
    let mut mult = [[0u8; 48]; 48];
    for (a, row) in mult.iter_mut().enumerate() {
        for (b, v) in row.iter_mut().enumerate() {
            *v = syms.mult[a][b];
        }
    }
    let nwords = entries.div_ceil(32) as usize;
    let g = Gen {
        coords: Coords::new(),
        cocsep,
        selfsym: (0..sym.classes()).map(|c| sym.selfsym(c)).collect(),
        mult,
        eo_bits: eo_bits.into(),
        base,
        words: (0..nwords)
            .into_par_iter()
            .map(|_| AtomicU64::new(u64::MAX))
            .collect(),
    };
    drop(sym);

    // 1. Breadth-first over h11 cosets up to symmetry.
    let depth_bfs = base + 2 - TAIL;
    let mut seen = KeySet::default();
    seen.insert(g.key(&Cube::SOLVED));
    let mut frontier = vec![Cube::SOLVED];
    g.mark(&Cube::SOLVED, 0);
    for d in 1..=depth_bfs {
        let mut cand: Vec<(u64, Cube)> = frontier
            .par_iter()
            .flat_map_iter(|c| {
                Move::ALL.iter().map(|&m| {
                    let n = c.compose(&MOVE_CUBES[m.index()]);
                    (g.key(&n), n)
                })
            })
            .collect();
        cand.par_sort_unstable_by_key(|&(k, _)| k);
        cand.dedup_by_key(|&mut (k, _)| k);
        cand.retain(|(k, _)| !seen.contains(k));
        seen.extend(cand.iter().map(|&(k, _)| k));
        frontier = cand.into_iter().map(|(_, c)| c).collect();
        frontier.par_iter().for_each(|c| g.mark(c, d));
        progress.note(&format!(
            "{name}: {} cosets (up to symmetry) at depth {d}",
            frontier.len()
        ));
    }
    drop(seen);

    // 2. Depth-first tails.
    progress.start(
        &format!("{name} depth {}..={}", depth_bfs + 1, base + 2),
        frontier.len() as u64,
    );
    frontier.par_chunks(256).for_each(|chunk| {
        for c in chunk {
            g.walk(c, depth_bfs, TAIL, None);
        }
        progress.inc(chunk.len() as u64);
    });
    progress.finish(&format!("{name}: tails done"));
    drop(frontier);

    // 3. Write.
    let body_len = (entries as usize).div_ceil(4);
    let mut body = Vec::with_capacity(body_len);
    for w in &g.words {
        body.extend_from_slice(&w.load(Relaxed).to_le_bytes());
    }
    body.truncate(body_len);
    // Entries past the end (possible when N = 0) must read as zero padding.
    let used = (entries % 4) as u32;
    if let (true, Some(last)) = (used != 0, body.last_mut()) {
        *last &= (1u8 << (2 * used)) - 1;
    }
    let meta = TableMeta {
        base,
        params: [EDGE_LAYOUT, 0],
        ..TableMeta::new(name.clone(), entries, 2)
    };
    tablefile::write_table(&tablefile::table_path(dir, &name), &meta, &body)?;
    Ok(())
}
