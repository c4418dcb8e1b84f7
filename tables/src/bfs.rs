//! One generic, multi-threaded breadth-first pruning-table generator.
//!
//! A table owner describes its coordinate space with [`PruneSpace`] (size, solved
//! indices, neighbours under the 18 moves) and calls [`generate`], which fills a 4-bit
//! table level by level and returns it with its per-depth distribution.
//!
//! # How a level is computed
//! Entries start [`UNSET`]; the solved indices get 0. Level `d + 1` is found from level
//! `d` in one of two ways, chosen per level:
//!
//! - **Forward**: scan the table for entries at depth `d` and set every unset neighbour to
//!   `d + 1` (an atomic compare-and-swap, so exactly one thread wins each entry).
//! - **Backward**: scan the table for unset entries and set each one to `d + 1` if any
//!   of its neighbours is at depth `d`, stopping at the first such neighbour. Each thread
//!   only writes entries of its own chunk, so this needs no read-modify-write atomics;
//!   neighbours are read atomically, and an entry set during this pass holds `d + 1`,
//!   never mistaken for `d`.
//!
//! [`Direction::Auto`] goes backward when fewer entries are unset than there are entries
//! at depth `d`. A forward pass expands every frontier entry completely, while a backward
//! pass visits each unset entry's neighbours at most once and usually stops early, so
//! under that rule the backward pass never expands more entries than the forward pass
//! would, and on the last levels of a table (a large frontier, a few stragglers left) it
//! expands far fewer.
//!
//! Both passes scan the table 16 entries (one `u64` word) at a time and skip words with
//! no entry of interest, and split the index range into chunks for rayon (the current
//! pool: run inside `ThreadPool::install` to choose the thread count).

use crate::packed::{AtomicPacked4, Packed2, Packed4, UNSET};
use crate::progress::{Progress, Silent};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A coordinate space the pruning generator can walk.
pub trait PruneSpace: Sync {
    /// Number of entries.
    fn size(&self) -> u64;

    /// Indices of the solved state (depth 0); more than one when symmetric images of the
    /// solved state exist.
    fn solved(&self) -> Vec<u64>;

    /// Calls `f` for every neighbour of `x` under the 18 moves. For symmetry-reduced
    /// (sym-composite) spaces this must also include every self-symmetric image of each
    /// neighbour (the implementation handles that; the generator just trusts it). The
    /// neighbour relation is symmetric. Every neighbour is `< size()`.
    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, f: F);

    /// Whether some neighbour `y` of `x` satisfies `pred(y)`. The default visits all
    /// neighbours (skipping `pred` once one matched); override it to stop at the first
    /// match, which speeds up backward levels.
    fn any_neighbour<P: FnMut(u64) -> bool>(&self, x: u64, mut pred: P) -> bool {
        let mut found = false;
        self.for_each_neighbour(x, |y| {
            if !found && pred(y) {
                found = true;
            }
        });
        found
    }
}

/// The deepest level a 4-bit table can hold exactly (15 is the "unset / 15 or more"
/// marker).
pub const MAX_DEPTH: u8 = UNSET - 1;

/// How each level is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Forward while the frontier is smaller than the unset remainder, backward after
    /// (see the [module docs](self)).
    #[default]
    Auto,
    /// Always forward (for tests and measurements).
    ForwardOnly,
    /// Always backward, from level 1 on (for tests and measurements; slow on big tables).
    BackwardOnly,
}

/// Options of [`generate`].
#[derive(Clone, Debug)]
pub struct BfsOptions {
    /// Label of the progress bars.
    pub name: String,
    /// Last level computed exactly (at most [`MAX_DEPTH`]; larger values are treated as
    /// [`MAX_DEPTH`]). Entries farther away are stored as `max_depth + 1`, a valid lower
    /// bound.
    pub max_depth: u8,
    /// Forward, backward or automatic choice per level.
    pub direction: Direction,
}

impl Default for BfsOptions {
    fn default() -> Self {
        BfsOptions {
            name: "table".into(),
            max_depth: MAX_DEPTH,
            direction: Direction::Auto,
        }
    }
}

/// A generated table and what is known about it.
#[derive(Debug)]
pub struct Generated {
    /// The table: depth of every entry, capped as described on the other fields.
    pub table: Packed4,
    /// Number of entries holding each value 0..=15.
    pub distribution: [u64; 16],
    /// Deepest level with at least one entry found exactly.
    pub depth: u8,
    /// Entries not reached by level `max_depth`, stored as `max_depth + 1` (they are at
    /// least that far, or unreachable).
    pub capped: u64,
    /// Entries never reached although the search ran out of new entries first (so they
    /// are unreachable from the solved indices), stored as 15.
    pub unreachable: u64,
    /// The first level computed backward, if any.
    pub backward_from: Option<u8>,
}

impl Generated {
    /// The 2-bit version of the table with base `base` (see [`Packed2`]).
    pub fn to_packed2(&self, base: u8) -> Packed2 {
        self.table.to_packed2(base)
    }
}

/// Table words handed to one rayon task (16 entries per word).
const CHUNK_WORDS: usize = 2048;
const NIBBLE_LOW_BITS: u64 = 0x1111_1111_1111_1111;

/// Bit `4k` is set iff nibble `k` of `v` is zero.
#[inline(always)]
fn zero_nibbles(v: u64) -> u64 {
    !(v | v >> 1 | v >> 2 | v >> 3) & NIBBLE_LOW_BITS
}

/// Calls `f(first_entry, words)` on every chunk in parallel, ticking `progress`, and sums.
fn for_chunks<F>(work: &AtomicPacked4, progress: &dyn Progress, f: F) -> u64
where
    F: Fn(u64, &[AtomicU64]) -> u64 + Sync + Send,
{
    let size = work.len();
    work.words()
        .par_chunks(CHUNK_WORDS)
        .enumerate()
        .map(|(c, words)| {
            let first = (c * CHUNK_WORDS) as u64 * 16;
            let n = f(first, words);
            progress.inc((words.len() as u64 * 16).min(size - first));
            n
        })
        .sum()
}

/// Forward pass: sets the unset neighbours of depth-`d` entries to `d + 1`; returns how many.
fn forward<S: PruneSpace>(space: &S, work: &AtomicPacked4, d: u8, progress: &dyn Progress) -> u64 {
    let size = work.len();
    let pattern = u64::from(d) * NIBBLE_LOW_BITS;
    let next = d + 1;
    for_chunks(work, progress, |first, words| {
        let mut found = 0u64;
        for (j, word) in words.iter().enumerate() {
            // Entries at depth d cannot change during this pass (only UNSET ones do), so
            // one load per word is enough.
            let mut hits = zero_nibbles(word.load(Relaxed) ^ pattern);
            let base = first + j as u64 * 16;
            while hits != 0 {
                let x = base + u64::from(hits.trailing_zeros() / 4);
                if x >= size {
                    break;
                }
                space.for_each_neighbour(x, |y| {
                    debug_assert!(y < size, "neighbour {y} of {x} out of range");
                    if y < size && work.set_if_unset(y, next) {
                        found += 1;
                    }
                });
                hits &= hits - 1;
            }
        }
        found
    })
}

/// Backward pass: sets every unset entry with a neighbour at depth `d` to `d + 1`; returns
/// how many.
fn backward<S: PruneSpace>(space: &S, work: &AtomicPacked4, d: u8, progress: &dyn Progress) -> u64 {
    let size = work.len();
    let next = u64::from(d + 1);
    for_chunks(work, progress, |first, words| {
        let mut found = 0u64;
        for (j, word) in words.iter().enumerate() {
            let old = word.load(Relaxed);
            let mut unset = zero_nibbles(!old);
            let base = first + j as u64 * 16;
            let mut new = old;
            while unset != 0 {
                let bit = unset.trailing_zeros();
                let x = base + u64::from(bit / 4);
                if x >= size {
                    break;
                }
                if space.any_neighbour(x, |y| work.get(y) == d) {
                    new = (new & !(0xf << bit)) | (next << bit);
                    found += 1;
                }
                unset &= unset - 1;
            }
            if new != old {
                // This chunk is the only writer of its words during a backward pass (other
                // threads only read them), so a plain atomic store loses nothing.
                word.store(new, Relaxed);
            }
        }
        found
    })
}

/// Sets every unset entry to `cap`; returns how many there were.
fn fill_unset(work: &AtomicPacked4, cap: u8) -> u64 {
    let size = work.len();
    for_chunks(work, &Silent, |first, words| {
        let mut n = 0u64;
        for (j, word) in words.iter().enumerate() {
            let base = first + j as u64 * 16;
            let valid = size.saturating_sub(base).min(16);
            let valid_mask = if valid == 16 {
                u64::MAX
            } else {
                (1u64 << (4 * valid)) - 1
            };
            let old = word.load(Relaxed);
            let unset = zero_nibbles(!old) & valid_mask;
            if unset != 0 {
                word.store((old & !(unset * 0xf)) | (unset * u64::from(cap)), Relaxed);
                n += u64::from(unset.count_ones());
            }
        }
        n
    })
}

/// Fills the pruning table of `space`: the distance of every entry from the solved set,
/// level by level (see the [module docs](self)).
///
/// # Panics
/// If a solved index is `>= space.size()` (a bug in the space).
pub fn generate<S: PruneSpace>(space: &S, opts: &BfsOptions) -> Generated {
    generate_with(space, opts, &Silent)
}

/// [`generate`], reporting each level to `progress` (one step per level, labelled with
/// [`BfsOptions::name`], `space.size()` units long).
///
/// # Panics
/// If a solved index is `>= space.size()` (a bug in the space).
pub fn generate_with<S: PruneSpace>(
    space: &S,
    opts: &BfsOptions,
    progress: &dyn Progress,
) -> Generated {
    let size = space.size();
    let max_depth = opts.max_depth.min(MAX_DEPTH);
    let work = AtomicPacked4::new(size);
    let mut dist = [0u64; 16];
    for s in space.solved() {
        assert!(s < size, "solved index {s} out of range 0..{size}");
        if work.set_if_unset(s, 0) {
            dist[0] += 1;
        }
    }
    let mut unset = size - dist[0];
    let mut backward_from = None;
    let mut d = 0u8;
    while d < max_depth && unset > 0 && dist[d as usize] > 0 {
        let back = match opts.direction {
            Direction::Auto => unset < dist[d as usize],
            Direction::ForwardOnly => false,
            Direction::BackwardOnly => true,
        };
        let how = if back { "backward" } else { "forward" };
        progress.start(&format!("{} depth {} ({how})", opts.name, d + 1), size);
        let found = if back {
            backward_from.get_or_insert(d + 1);
            backward(space, &work, d, progress)
        } else {
            forward(space, &work, d, progress)
        };
        progress.finish(&format!(
            "{} depth {}: {found} entries ({how})",
            opts.name,
            d + 1
        ));
        d += 1;
        dist[d as usize] = found;
        unset -= found;
    }
    let depth = (0..=d).rev().find(|&k| dist[k as usize] > 0).unwrap_or(0);
    let (mut capped, mut unreachable) = (0, 0);
    if unset > 0 {
        if dist[d as usize] == 0 {
            // The search ran dry: what is left cannot be reached. It stays UNSET (15).
            unreachable = unset;
        } else {
            // Stopped at max_depth: everything left is at least one level farther.
            let cap = d + 1;
            capped = if cap == UNSET {
                unset
            } else {
                fill_unset(&work, cap)
            };
            debug_assert_eq!(capped, unset);
        }
        dist[(d + 1).min(UNSET) as usize] += capped;
        dist[UNSET as usize] += unreachable;
    }
    Generated {
        table: work.into_packed(),
        distribution: dist,
        depth,
        capped,
        unreachable,
        backward_from,
    }
}

#[cfg(test)]
mod tests;
