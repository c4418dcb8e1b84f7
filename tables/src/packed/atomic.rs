//! [`AtomicPacked4`]: the 4-bit working table a generator fills from many threads.

use super::bytes::AlignedBuf;
use super::{add_arrays, addressable, Packed4, TableBytes, PAR_BYTES};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A 4-bit table that many threads can fill at once, for generators.
///
/// Every entry starts as [`UNSET`](super::UNSET) (15). Entries live in native-endian
/// `u64` words of 16 entries each, updated with compare-and-swap;
/// [`AtomicPacked4::into_packed`] turns the words into the byte layout of [`Packed4`] in
/// place.
pub struct AtomicPacked4 {
    /// `words * 8` bytes rounded up to 64, viewed only as atomics while `self` exists.
    buf: AlignedBuf,
    /// Number of entries.
    entries: u64,
    /// Number of `u64` words holding the entries: `ceil(entries / 16)`.
    words: usize,
}

impl AtomicPacked4 {
    /// A table of `entries` entries, all [`UNSET`](super::UNSET) (the fill is
    /// multi-threaded).
    ///
    /// # Panics
    /// If the table cannot be addressed on this platform (a coordinate-definition bug).
    pub fn new(entries: u64) -> AtomicPacked4 {
        let words = addressable(entries.div_ceil(16));
        let mut buf = AlignedBuf::zeroed(words.checked_mul(8).expect("table too large"));
        buf.as_mut_slice()
            .par_chunks_mut(PAR_BYTES)
            .for_each(|c| c.fill(0xff));
        AtomicPacked4 {
            buf,
            entries,
            words,
        }
    }

    /// The entries as atomic words (entry `i` is nibble `i % 16` of word `i / 16`).
    #[inline(always)]
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: the buffer is 64-byte aligned (>= align_of::<AtomicU64>()) and holds at
        // least `words * 8` initialised bytes; `AtomicU64` has the size and bit validity of
        // `u64`. While `self` exists these bytes are only accessed through this atomic
        // view (the one byte view, in `into_packed`, consumes `self`), so there are no
        // mixed atomic/non-atomic accesses.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast::<AtomicU64>(), self.words) }
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.entries
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The current value of entry `index` (a relaxed atomic load).
    ///
    /// # Panics
    /// If `index >= len()`.
    #[inline(always)]
    pub fn get(&self, index: u64) -> u8 {
        debug_assert!(index < self.entries);
        let w = self.words()[(index >> 4) as usize].load(Relaxed);
        ((w >> ((index & 15) << 2)) & 0xf) as u8
    }

    /// Sets entry `index` to `value` (taken mod 16) if it is still
    /// [`UNSET`](super::UNSET); returns whether this call set it. Safe to call from many
    /// threads: exactly one caller wins each entry.
    ///
    /// # Panics
    /// If `index >= len()`.
    #[inline(always)]
    pub fn set_if_unset(&self, index: u64, value: u8) -> bool {
        debug_assert!(index < self.entries);
        let word = &self.words()[(index >> 4) as usize];
        let shift = (index & 15) << 2;
        let mask = 0xfu64 << shift;
        let new_bits = u64::from(value & 0xf) << shift;
        let mut cur = word.load(Relaxed);
        loop {
            if cur & mask != mask {
                return false;
            }
            match word.compare_exchange_weak(cur, (cur & !mask) | new_bits, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(actual) => cur = actual,
            }
        }
    }

    /// How many entries hold each value 0..=15 (multi-threaded).
    pub fn distribution(&self) -> [u64; 16] {
        let entries = self.entries;
        self.words()
            .par_chunks(PAR_BYTES / 8)
            .enumerate()
            .map(|(c, chunk)| {
                let mut h = [0u64; 16];
                let first = (c * PAR_BYTES / 8) as u64 * 16;
                for (j, w) in chunk.iter().enumerate() {
                    let w = w.load(Relaxed);
                    let base = first + j as u64 * 16;
                    let n = entries.saturating_sub(base).min(16);
                    for k in 0..n {
                        h[((w >> (4 * k)) & 0xf) as usize] += 1;
                    }
                }
                h
            })
            .reduce(|| [0; 16], add_arrays)
    }

    /// The finished, read-only table (no copy: the words are rewritten as bytes in place,
    /// and the padding after the last entry is zeroed).
    pub fn into_packed(mut self) -> Packed4 {
        let len = addressable(self.entries.div_ceil(2));
        let entries = self.entries;
        let bytes = self.buf.as_mut_slice();
        if cfg!(target_endian = "big") {
            for w in bytes.chunks_exact_mut(8) {
                w.reverse();
            }
        }
        if entries % 2 == 1 {
            bytes[len - 1] &= 0x0f;
        }
        Packed4 {
            bytes: TableBytes::owned(self.buf, len),
            entries,
        }
    }
}

impl std::fmt::Debug for AtomicPacked4 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicPacked4")
            .field("entries", &self.entries)
            .finish()
    }
}
