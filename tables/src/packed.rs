//! Packed pruning-table storage: 4-bit and 2-bit entries behind one-line accessors.
//!
//! # Layout
//! - [`TableBytes`]: the bytes of a table body, either an owned 64-byte-aligned buffer
//!   (tables being generated or converted) or a read-only memory map of a table file.
//! - [`Packed4`]: two entries per byte, values 0..=15. Entry `i` is in byte `i / 2`, in the
//!   low nibble when `i` is even and the high nibble when it is odd.
//! - [`Packed2`]: four entries per byte, values 0..=3 relative to a base `b` (Rokicki's
//!   nxopt scheme): a stored 1, 2 or 3 means a distance of exactly `b+1`, exactly `b+2`, or
//!   at least `b+3`; a stored 0 means "at most `b`" and the search must take its bound from
//!   elsewhere. Entry `i` is in byte `i / 4`, bits `2 * (i % 4)` and up.
//! - [`AtomicPacked4`]: the 4-bit working table a generator fills from many threads, which
//!   becomes a [`Packed4`] without copying.
//!
//! Padding bits after the last entry of the last byte are always zero in tables built
//! here, so two tables with the same entries have the same bytes (and file checksum).

mod atomic;
mod bytes;
mod histogram;

pub use self::atomic::AtomicPacked4;
pub use self::bytes::TableBytes;
pub(crate) use self::histogram::{add_arrays, histogram, histogram_seq, BUCKETS};

use self::bytes::AlignedBuf;
use rayon::prelude::*;

/// The marker of an entry a generator has not reached yet (and of "15 or more" after it).
pub const UNSET: u8 = 15;

/// Alignment of owned table buffers: one cache line.
const ALIGN: usize = 64;

/// Bytes handed to one rayon task by the parallel loops here.
const PAR_BYTES: usize = 1 << 16;

/// Hints the CPU to load the cache line holding `data[i]` into every cache level, so a
/// later read of it does not wait for memory. A hint only: no effect off x86_64, and `i`
/// may be out of bounds (nothing is read, nothing faults). The one prefetch every table
/// lookup and generator uses.
#[inline(always)]
pub fn prefetch<T>(data: &[T], i: usize) {
    // `wrapping_add` keeps the address computation itself defined even out of bounds.
    let p = data.as_ptr().wrapping_add(i);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has (it is in the target's
    // baseline features). A prefetch never dereferences its pointer in the language sense:
    // it reads no value into the program, cannot fault on an invalid or unmapped address
    // (the CPU drops the hint), and has no effect the program can observe but timing. So
    // any address, in bounds or not, is sound.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Entry `i` of a 4-bit table packed two to a byte, low nibble first (the [`Packed4`]
/// layout): `(bytes[i / 2] >> 4 * (i % 2)) & 15`.
///
/// # Panics
/// If `i / 2` is out of bounds.
#[inline(always)]
pub fn nibble(bytes: &[u8], i: u64) -> u8 {
    (bytes[(i >> 1) as usize] >> ((i & 1) << 2)) & 0xf
}

/// Bytes needed for `entries` entries of `bits` bits, or `None` if that overflows.
pub fn body_len(entries: u64, bits: u8) -> Option<u64> {
    Some(entries.checked_mul(u64::from(bits))?.div_ceil(8))
}

/// Converts a byte count to `usize`, panicking with a clear message if it cannot be
/// addressed (only for sizes chosen by code, never by input).
fn addressable(len: u64) -> usize {
    usize::try_from(len).expect("table does not fit the address space")
}

/// A table of 4-bit entries (values 0..=15).
#[derive(Debug)]
pub struct Packed4 {
    /// `ceil(entries / 2)` bytes.
    bytes: TableBytes,
    /// Number of entries.
    entries: u64,
}

impl Packed4 {
    /// The table's bytes copied into huge pages ([`TableBytes::huge_copy`]).
    pub fn huge_copy_bytes(&self) -> crate::huge::HugeArray<u8> {
        self.bytes.huge_copy()
    }

    /// The same table in huge pages: a map of its file the page cache backs with them, or
    /// a private copy ([`TableBytes::to_huge_pages`]).
    pub fn to_huge_pages(&self) -> Packed4 {
        Packed4 {
            bytes: self.bytes.to_huge_pages(),
            entries: self.entries,
        }
    }

    /// Whether the entries are read from a private huge-page copy.
    pub fn is_huge_copy(&self) -> bool {
        self.bytes.is_huge_copy()
    }

    /// Whether the entries are read from a map of the file in the page cache's huge pages.
    pub fn is_page_cache_huge(&self) -> bool {
        self.bytes.is_page_cache_huge()
    }

    /// Wraps bytes holding `entries` entries; `None` if the length is not `ceil(entries/2)`.
    pub(crate) fn from_bytes(bytes: TableBytes, entries: u64) -> Option<Packed4> {
        (body_len(entries, 4)? == bytes.len() as u64).then_some(Packed4 { bytes, entries })
    }

    /// The value of entry `index` (0..=15).
    ///
    /// # Panics
    /// If `index >= len()` (a caller bug: indices come from coordinates).
    #[inline(always)]
    pub fn get(&self, index: u64) -> u8 {
        nibble(self.bytes.as_slice(), index)
    }

    /// Starts loading the cache line of entry `index` (a hint; no-op off x86_64).
    #[inline(always)]
    pub fn prefetch(&self, index: u64) {
        self.bytes.prefetch_byte((index >> 1) as usize)
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.entries
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The packed bytes (the table file body).
    #[inline(always)]
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// Whether the table is memory-mapped from a file.
    pub fn is_mapped(&self) -> bool {
        self.bytes.is_mapped()
    }

    /// How many entries hold each value 0..=15 (multi-threaded).
    pub fn distribution(&self) -> [u64; 16] {
        let h = histogram(self.as_bytes(), self.entries, 4, 0, 4);
        std::array::from_fn(|v| h[v])
    }

    /// The 2-bit table with base `base`: each value `v` becomes `min(max(v - base, 0), 3)`
    /// (multi-threaded).
    pub fn to_packed2(&self, base: u8) -> Packed2 {
        let src = self.as_bytes();
        let out_len = addressable(self.entries.div_ceil(4));
        // lut[b] = the two 2-bit values of the two nibbles of byte b, in 4 bits.
        let lut: [u8; 256] = std::array::from_fn(|b| {
            let crumb = |v: usize| (v as u8).saturating_sub(base).min(3);
            crumb(b & 0xf) | crumb(b >> 4) << 2
        });
        let mut buf = AlignedBuf::zeroed(out_len);
        buf.as_mut_slice()[..out_len]
            .par_chunks_mut(PAR_BYTES)
            .enumerate()
            .for_each(|(c, out)| {
                let first = c * PAR_BYTES * 2;
                for (j, o) in out.iter_mut().enumerate() {
                    let lo = src.get(first + 2 * j).copied().unwrap_or(0);
                    let hi = src.get(first + 2 * j + 1).copied().unwrap_or(0);
                    *o = lut[lo as usize] | lut[hi as usize] << 4;
                }
            });
        // Our padding nibbles are zero and encode to zero, but a mapped source's need not
        // be: clear the padding so the result is canonical.
        let used = (self.entries % 4) as u32;
        if used != 0 {
            buf.as_mut_slice()[out_len - 1] &= (1u8 << (2 * used)) - 1;
        }
        Packed2 {
            bytes: TableBytes::owned(buf, out_len),
            entries: self.entries,
            base,
        }
    }
}

/// A table of 2-bit entries relative to a base value (see the [module docs](self)).
#[derive(Debug)]
pub struct Packed2 {
    /// `ceil(entries / 4)` bytes.
    bytes: TableBytes,
    /// Number of entries.
    entries: u64,
    /// Stored 1..=3 mean `base + 1 ..= base + 3`; stored 0 means "at most `base`".
    base: u8,
}

impl Packed2 {
    /// The same table in huge pages: a map of its file the page cache backs with them, or
    /// a private copy ([`TableBytes::to_huge_pages`]).
    pub fn to_huge_pages(&self) -> Packed2 {
        Packed2 {
            bytes: self.bytes.to_huge_pages(),
            entries: self.entries,
            base: self.base,
        }
    }

    /// Whether the entries are read from a private huge-page copy.
    pub fn is_huge_copy(&self) -> bool {
        self.bytes.is_huge_copy()
    }

    /// Whether the entries are read from a map of the file in the page cache's huge pages.
    pub fn is_page_cache_huge(&self) -> bool {
        self.bytes.is_page_cache_huge()
    }

    /// Wraps bytes holding `entries` entries; `None` if the length is not `ceil(entries/4)`.
    pub(crate) fn from_bytes(bytes: TableBytes, entries: u64, base: u8) -> Option<Packed2> {
        (body_len(entries, 2)? == bytes.len() as u64).then_some(Packed2 {
            bytes,
            entries,
            base,
        })
    }

    /// The stored value of entry `index` (0..=3); see [`Packed2::base`] for its meaning.
    ///
    /// # Panics
    /// If `index >= len()` (a caller bug: indices come from coordinates).
    #[inline(always)]
    pub fn get(&self, index: u64) -> u8 {
        (self.bytes.as_slice()[(index >> 2) as usize] >> ((index & 3) << 1)) & 3
    }

    /// Starts loading the cache line of entry `index` (a hint; no-op off x86_64).
    #[inline(always)]
    pub fn prefetch(&self, index: u64) {
        self.bytes.prefetch_byte((index >> 2) as usize)
    }

    /// The base value: a stored `s > 0` is the lower bound `base + s`; a stored 0 says only
    /// that the distance is at most `base`.
    pub fn base(&self) -> u8 {
        self.base
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.entries
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The packed bytes (the table file body).
    #[inline(always)]
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// Whether the table is memory-mapped from a file.
    pub fn is_mapped(&self) -> bool {
        self.bytes.is_mapped()
    }

    /// How many entries hold each stored value 0..=3 (multi-threaded).
    pub fn distribution(&self) -> [u64; 4] {
        let h = histogram(self.as_bytes(), self.entries, 2, 0, 2);
        [h[0], h[1], h[2], h[3]]
    }
}

#[cfg(test)]
mod tests;
