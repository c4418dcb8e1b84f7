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

use super::checkpoint::Checkpoint;
use super::cocsep::{self, Cocsep};
use super::coords::{Coords, ESEP};
use crate::Error;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};
use tables::canonical::can_follow;
use tables::moves::MOVE_CUBES;
use tables::packed::prefetch;
use tables::progress::Progress;
use tables::symmetry::symmetries;
use tables::tablefile::{self, TableMeta};
use tables::{Cube, Move};

/// Moves walked depth-first after the breadth-first part.
const TAIL: u8 = 3;

/// The base of h48hNk2 (N = 0..=11), the one measured best where both were built: on
/// h48h3k2 base 8 (0.7% of entries "at most 8") searches 15% fewer nodes than base 9 (7.5%
/// "at most 9") and builds in 30 s instead of 13 min (the cost grows about 13-fold per
/// unit of base); on h48h4k2 base 8 searches 6–67% fewer nodes than base 9 and builds in
/// 36 s instead of 6.6 min. On h48h8k2 base 9 searches 1.05–1.35× fewer nodes than base 10
/// (nissy-core's) at 17–19 moves and 3.6–6.7× fewer than base 8, and builds in 16 min
/// instead of 2 h 13 min on 2 cores. On h48h9k2 base 9 searches 5–9× fewer nodes than base
/// 8 at 17–19 moves and builds in 112 s on 16 cores; base 10 (about 13 times that build)
/// is unmeasured, so h9 takes 9, as h8 does. N = 5..=7 use nissy-core's base 9, and h10
/// and h11 its 10, unmeasured: comparing bases there takes two builds of tens of GB each
/// (see docs/performance.md).
pub const BASES: [u8; 12] = [8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 10, 10];

/// Which edges' orientations an h48hNk2 index keeps, recorded as the first header
/// parameter: 1 = the edges at positions `12 - N .. 12` (BR, then BL, FL, FR, DB, ...:
/// the E slice first) of the position transformed to its class representative. Tables
/// written with another layout (0: positions `0 .. N`) are refused.
pub const EDGE_LAYOUT: u64 = 1;

/// Peak memory of building h48hNk2: the table itself (written to its file in 64 MiB
/// pieces, never copied) plus at most 1.5 GB: the breadth-first levels (held as the
/// previous level's cubes and 8-byte origins, generated in parts of [`PART_BYTES`]) and
/// the h0k4 table.
pub fn build_memory(eo_bits: u8) -> u64 {
    proto::catalog::h48_k2_build_memory(eo_bits.into())
}

/// Candidates of the next breadth-first level are generated in parts of about this many
/// bytes (each part: the children whose key hashes to it).
const PART_BYTES: u64 = 256 << 20;

/// The depth-first tails are run in this many batches (at most); a checkpoint can follow
/// any batch.
const BATCHES: u64 = 4096;

/// How a k2 generation runs.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Time between checkpoints (`<name>.tbl.partial`); `None`: none. Stretched to ten
    /// times the last save's duration where that is longer, so that saving (the build
    /// waits for it) takes at most a tenth of the build: minutes for tables of tens of GB.
    pub checkpoint_every: Option<Duration>,
    /// Stop after this many batches of tails, with a checkpoint, as a build killed right
    /// after that checkpoint would (for tests).
    pub stop_after: Option<u64>,
}

impl Default for GenOptions {
    fn default() -> GenOptions {
        GenOptions {
            checkpoint_every: Some(Duration::from_secs(120)),
            stop_after: None,
        }
    }
}

/// How a generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The table file is written.
    Written,
    /// Stopped by [`GenOptions::stop_after`] with `done` of `total` batches.
    Stopped {
        /// Batches done.
        done: u64,
        /// Batches in all.
        total: u64,
    },
}

/// Which of `parts` parts key `k` belongs to.
fn part_of(k: u64, parts: u64) -> u64 {
    (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) % parts
}

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
/// `TAIL - 2`), and writes it to `<dir>/<name>.tbl`, with checkpoints every two minutes
/// ([`generate_with`]). The tables named h48hNk2 use [`BASES`]; other bases serve tests
/// (a small base is cheap).
pub fn generate(
    dir: &std::path::Path,
    name: &str,
    eo_bits: u8,
    base: u8,
    cocsep: &Cocsep,
    progress: &dyn Progress,
) -> Result<(), Error> {
    let opts = GenOptions::default();
    generate_with(dir, name, eo_bits, base, cocsep, progress, &opts).map(|_| ())
}

/// [`generate`] with options. A checkpoint of the same build found in `dir` is resumed
/// (and said so to `progress`); it is removed once the table is written.
pub fn generate_with(
    dir: &std::path::Path,
    name: &str,
    eo_bits: u8,
    base: u8,
    cocsep: &Cocsep,
    progress: &dyn Progress,
    opts: &GenOptions,
) -> Result<Outcome, Error> {
    let started = Instant::now();
    let name = name.to_string();
    let eo_bits = eo_bits.min(11);
    let base = base.max(TAIL - 2);
    let entries = (cocsep::CLASSES as u64 * ESEP as u64) << eo_bits;
    let g = Gen::new(cocsep, eo_bits, base, entries);
    let mut desc = Checkpoint {
        name: name.clone(),
        eo_bits,
        base,
        done: 0,
        total: 0,
        words: g.words.len() as u64,
    };
    let resumed = resume(dir, &desc, &g, progress);
    let depth_bfs = base + 2 - TAIL;
    let (cubes, origins) = breadth_first(&g, &name, depth_bfs, progress);
    match tails(
        dir, &g, &mut desc, resumed, &cubes, &origins, started, progress, opts,
    )? {
        Some(stopped) => return Ok(stopped),
        None => drop((origins, cubes)),
    }
    write(dir, &g, &name, entries, base)?;
    Ok(Outcome::Written)
}

impl<'a> Gen<'a> {
    /// A generator of a table of `entries` entries, every one unmarked (all ones).
    fn new(cocsep: &'a Cocsep, eo_bits: u8, base: u8, entries: u64) -> Gen<'a> {
        let sym = cocsep::sym_coord();
        let syms = symmetries();
        let mut mult = [[0u8; 48]; 48];
        for (a, row) in mult.iter_mut().enumerate() {
            for (b, v) in row.iter_mut().enumerate() {
                *v = syms.mult[a][b];
            }
        }
        let nwords = entries.div_ceil(32) as usize;
        Gen {
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
        }
    }
}

/// The checkpoint of an interrupted build of `desc`, loaded into `g`'s words, if there is
/// one of this build. The marks of a checkpoint are true bounds whatever batch they came
/// from, so they are loaded first and the breadth-first marks land on them (an atomic
/// minimum). A checkpoint of another build, or a damaged one, is removed.
fn resume(
    dir: &std::path::Path,
    desc: &Checkpoint,
    g: &Gen<'_>,
    progress: &dyn Progress,
) -> Option<Checkpoint> {
    let name = &desc.name;
    Checkpoint::probe(dir, name)?;
    match Checkpoint::load(dir, desc, &g.words) {
        Some(c) => {
            progress.note(&format!(
                "{name}: resuming from its checkpoint ({} of {} batches of tails \
                 done); recomputing the breadth-first levels first",
                c.done, c.total
            ));
            Some(c)
        }
        None => {
            progress.note(&format!(
                "{name}: the checkpoint found is not of this build or is damaged; \
                 starting over"
            ));
            g.words.par_iter().for_each(|w| w.store(u64::MAX, Relaxed));
            Checkpoint::remove(dir, name);
            None
        }
    }
}

/// Phase 1: breadth-first over h11 cosets up to symmetry, to `depth_bfs`, marking each
/// level. Only the previous level's cubes and the keys of the two previous levels are kept
/// (a coset's neighbours lie in the levels before, at and after its own); the last level
/// is kept as origins (index of the parent cube << 5 | move), from which the tails start.
/// Returns the last level's parent cubes and its origins (`u64::MAX`: the parent cube
/// itself, when the breadth-first part has no levels).
fn breadth_first(
    g: &Gen<'_>,
    name: &str,
    depth_bfs: u8,
    progress: &dyn Progress,
) -> (Vec<Cube>, Vec<u64>) {
    let mut cubes = vec![Cube::SOLVED];
    let mut keys_prev: Vec<u64> = vec![g.key(&Cube::SOLVED)];
    let mut keys_prev2: Vec<u64> = Vec::new();
    let mut origins: Vec<u64> = vec![u64::MAX];
    g.mark(&Cube::SOLVED, 0);
    for d in 1..=depth_bfs {
        let last = d == depth_bfs;
        let parts = (cubes.len() as u64 * 18 * 16).div_ceil(PART_BYTES).max(1);
        let mut level_keys = Vec::new();
        let mut level = Vec::new();
        for p in 0..parts {
            let cand = next_level_part(g, &cubes, parts, p, &keys_prev, &keys_prev2);
            if !last {
                level_keys.extend(cand.iter().map(|&(k, _)| k));
            }
            level.extend(cand.iter().map(|&(_, o)| o));
        }
        progress.note(&format!(
            "{name}: {} cosets (up to symmetry) at depth {d}",
            level.len()
        ));
        if last {
            origins = level;
        } else {
            let next: Vec<Cube> = level
                .par_iter()
                .map(|&o| cubes[(o >> 5) as usize].compose(&MOVE_CUBES[(o & 31) as usize]))
                .collect();
            drop(level);
            next.par_iter().for_each(|c| g.mark(c, d));
            cubes = next;
            level_keys.par_sort_unstable();
            keys_prev2 = std::mem::replace(&mut keys_prev, level_keys);
        }
    }
    (cubes, origins)
}

/// The new cosets one move from `cubes` whose keys fall in part `p` of `parts`, each with
/// its first origin, sorted by key: those of neither of the two previous levels.
fn next_level_part(
    g: &Gen<'_>,
    cubes: &[Cube],
    parts: u64,
    p: u64,
    keys_prev: &[u64],
    keys_prev2: &[u64],
) -> Vec<(u64, u64)> {
    let mut cand: Vec<(u64, u64)> = cubes
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, c)| {
            Move::ALL.iter().filter_map(move |&m| {
                let k = g.key(&c.compose(&MOVE_CUBES[m.index()]));
                (part_of(k, parts) == p).then_some((k, (i as u64) << 5 | m.index() as u64))
            })
        })
        .collect();
    // Sorting the pairs (not only the keys) keeps the first origin of each key the same
    // from run to run, so a resumed build walks the same batches.
    cand.par_sort_unstable();
    cand.dedup_by_key(|&mut (k, _)| k);
    cand.retain(|(k, _)| {
        keys_prev.binary_search(k).is_err() && keys_prev2.binary_search(k).is_err()
    });
    cand
}

/// Phase 2: depth-first tails from every origin, in batches, with checkpoints between
/// them (from the batch `resumed` had reached). `Some`: the build stopped where
/// `opts.stop_after` asked, its checkpoint saved.
#[allow(clippy::too_many_arguments)]
fn tails(
    dir: &std::path::Path,
    g: &Gen<'_>,
    desc: &mut Checkpoint,
    resumed: Option<Checkpoint>,
    cubes: &[Cube],
    origins: &[u64],
    started: Instant,
    progress: &dyn Progress,
    opts: &GenOptions,
) -> Result<Option<Outcome>, Error> {
    let name = desc.name.clone();
    let depth_bfs = desc.base + 2 - TAIL;
    let start = |o: u64| match o {
        u64::MAX => cubes[0],
        _ => cubes[(o >> 5) as usize].compose(&MOVE_CUBES[(o & 31) as usize]),
    };
    let per = origins.len().div_ceil(BATCHES as usize).max(1);
    let total = origins.len().div_ceil(per) as u64;
    desc.total = total;
    let first = match resumed {
        Some(c) if c.total == total => {
            progress.note(&format!(
                "{name}: resuming at batch {} of {total} ({:.1}% of the tails)",
                c.done,
                100.0 * c.done as f64 / total as f64
            ));
            c.done
        }
        _ => 0,
    };
    progress.start(
        &format!("{name} depth {}..={}", depth_bfs + 1, desc.base + 2),
        origins.len() as u64,
    );
    progress.inc((first as usize * per).min(origins.len()) as u64);
    let mut last_save = started;
    let mut save_every = opts.checkpoint_every;
    let tails_started = Instant::now();
    let mut last_eta = tails_started;
    let piece = piece_len(per, rayon::current_num_threads());
    for b in first..total {
        let lo = b as usize * per;
        let hi = (lo + per).min(origins.len());
        origins[lo..hi].par_chunks(piece).for_each(|chunk| {
            for &o in chunk {
                let c = start(o);
                g.mark(&c, depth_bfs);
                g.walk(&c, depth_bfs, TAIL, None);
            }
            progress.inc(chunk.len() as u64);
        });
        desc.done = b + 1;
        if last_eta.elapsed() >= ETA_EVERY && b + 1 < total {
            last_eta = Instant::now();
            let spent = tails_started.elapsed();
            progress.note(&format!(
                "{name}: tails {} of {total} batches ({:.1}%), {} this run, about {} left",
                b + 1,
                100.0 * (b + 1) as f64 / total as f64,
                clock(spent),
                clock(eta(b + 1 - first, total - first, spent))
            ));
        }
        if save_every.is_some_and(|every| last_save.elapsed() >= every) && b + 1 < total {
            let t = Instant::now();
            desc.save(dir, &g.words)?;
            last_save = Instant::now();
            save_every = save_every.map(|every| every.max(10 * t.elapsed()));
        }
        if opts.stop_after == Some(b + 1) {
            // As a build killed right after a checkpoint.
            desc.save(dir, &g.words)?;
            return Ok(Some(Outcome::Stopped { done: b + 1, total }));
        }
    }
    progress.finish(&format!("{name}: tails done"));
    Ok(None)
}

/// Phase 3: the table file, written straight from `g`'s words (never a second copy of
/// the table); the checkpoint, no longer needed, removed.
fn write(
    dir: &std::path::Path,
    g: &Gen<'_>,
    name: &str,
    entries: u64,
    base: u8,
) -> Result<(), Error> {
    let body_len = entries.div_ceil(4);
    // Entries past the end (possible when N = 0) must read as zero padding.
    let used = (entries % 4) as u32;
    let meta = TableMeta {
        base,
        params: [EDGE_LAYOUT, 0],
        ..TableMeta::new(name.to_string(), entries, 2)
    };
    let fill = |i: usize, chunk: &mut [u8]| {
        let w0 = i * tablefile::BODY_CHUNK / 8;
        for (j, b8) in chunk.chunks_mut(8).enumerate() {
            let w = g.words[w0 + j].load(Relaxed).to_le_bytes();
            b8.copy_from_slice(&w[..b8.len()]);
        }
        let end = (i * tablefile::BODY_CHUNK + chunk.len()) as u64;
        if let (true, true, Some(last)) = (used != 0, end == body_len, chunk.last_mut()) {
            *last &= (1u8 << (2 * used)) - 1;
        }
    };
    tablefile::write_table_with(&tablefile::table_path(dir, name), &meta, &fill)?;
    Checkpoint::remove(dir, name);
    Ok(())
}

/// How many starting cosets of a batch of `per` one task of the tails walks with `threads`
/// threads: about eight tasks per thread, at most 64 cosets each. At base 8 a batch holds
/// about 120 cosets, so tasks of a fixed 64 left all but two of 16 threads idle (h48h4k2
/// built in 53-55 s on 2 to 16 threads, 7.8 s on 16 with this).
fn piece_len(per: usize, threads: usize) -> usize {
    (per / (8 * threads.max(1))).clamp(1, 64)
}

/// How often the tails' progress line (batches done, time spent, ETA) is printed.
const ETA_EVERY: Duration = Duration::from_secs(60);

/// The time left when `done` of `todo` batches took `spent`, at the same pace.
fn eta(done: u64, todo: u64, spent: Duration) -> Duration {
    if done == 0 {
        return Duration::ZERO;
    }
    spent.mul_f64(todo.saturating_sub(done) as f64 / done as f64)
}

/// `1 h 05 min`, `12 min 30 s`, `40 s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod pace_tests {
    use super::{clock, eta, piece_len};
    use std::time::Duration;

    #[test]
    fn every_thread_gets_a_piece_of_a_batch_of_tails() {
        // Batches of base 8 (119 cosets), base 9 (1,520) and base 10 (19,500 or so).
        for per in [1, 7, 119, 1520, 19_500] {
            for threads in [1, 2, 16, 64, 1000] {
                let piece = piece_len(per, threads);
                assert!((1..=64).contains(&piece), "{per} {threads}: {piece}");
                assert!(
                    per.div_ceil(piece) >= per.min(threads),
                    "{per} cosets on {threads} threads in pieces of {piece}"
                );
            }
        }
    }

    #[test]
    fn the_eta_is_the_pace_so_far_times_what_is_left() {
        let min = Duration::from_secs(60);
        assert_eq!(eta(10, 40, 5 * min), 15 * min);
        assert_eq!(eta(0, 40, min), Duration::ZERO);
        assert_eq!(clock(Duration::from_secs(40)), "40 s");
        assert_eq!(clock(Duration::from_secs(750)), "12 min 30 s");
        assert_eq!(clock(Duration::from_secs(3900)), "1 h 05 min");
    }
}
