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

use rayon::prelude::*;
use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The marker of an entry a generator has not reached yet (and of "15 or more" after it).
pub const UNSET: u8 = 15;

/// Alignment of owned table buffers: one cache line.
const ALIGN: usize = 64;

/// Bytes handed to one rayon task by the parallel loops here.
const PAR_BYTES: usize = 1 << 16;

/// One cache line; only used to obtain a well-aligned dangling pointer for empty buffers.
#[repr(C, align(64))]
struct Line([u8; ALIGN]);

/// An owned, zero-initialised, 64-byte-aligned heap buffer whose capacity is a multiple of
/// 64 bytes (so it can also be viewed as whole `u64` words).
struct AlignedBuf {
    /// Start of the allocation (dangling but aligned when `cap == 0`).
    ptr: NonNull<u8>,
    /// Allocated bytes, a multiple of [`ALIGN`].
    cap: usize,
}

// SAFETY: `AlignedBuf` uniquely owns its allocation, like a `Box<[u8]>`; sending it to or
// sharing `&AlignedBuf` with another thread is as safe as for a box of bytes.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; shared references only allow reads (or atomic accesses arranged by
// the owner, see `AtomicPacked4::words`).
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of at least `len` bytes.
    ///
    /// # Panics
    /// If `len` rounded up to 64 does not fit the address space; aborts (like `Vec`) if the
    /// allocator fails. Sizes come from coordinate definitions, never from input.
    fn zeroed(len: usize) -> AlignedBuf {
        let cap = len
            .checked_next_multiple_of(ALIGN)
            .expect("table buffer size overflows the address space");
        if cap == 0 {
            return AlignedBuf {
                ptr: NonNull::<Line>::dangling().cast(),
                cap: 0,
            };
        }
        let layout = Layout::from_size_align(cap, ALIGN)
            .expect("table buffer size overflows the address space");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, cap }
    }

    /// The whole buffer, mutably.
    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` is valid for `cap` initialised (zeroed) bytes that we own, and
        // `&mut self` guarantees no other reference into them exists.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.cap) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.cap != 0 {
            // SAFETY: allocated in `zeroed` with exactly this size and alignment (which was
            // valid then, so `from_size_align_unchecked` is fine).
            unsafe {
                alloc::dealloc(
                    self.ptr.as_ptr(),
                    Layout::from_size_align_unchecked(self.cap, ALIGN),
                )
            };
        }
    }
}

/// What keeps the bytes of a [`TableBytes`] alive.
enum Backing {
    /// Our own allocation (held for its `Drop`).
    Owned(#[allow(dead_code)] AlignedBuf),
    /// A read-only map of a whole table file, the body a sub-range of it (held for its
    /// `Drop`).
    Mapped(#[allow(dead_code)] memmap2::Mmap),
    /// A private copy in (transparent) huge pages (held for its `Drop`).
    Huge(#[allow(dead_code)] crate::huge::HugeArray<u8>),
}

/// The read-only bytes of a table body: an owned aligned buffer or a memory-mapped file.
///
/// Access is a plain slice ([`TableBytes::as_slice`]) with no branch on the backing, so
/// lookups cost the same either way.
pub struct TableBytes {
    /// First body byte (64-byte aligned: buffers are allocated so, file bodies start at
    /// a page-aligned offset of a page-aligned map).
    ptr: NonNull<u8>,
    /// Body length in bytes.
    len: usize,
    /// Owner of the memory `ptr` points into; never mutated while `self` exists.
    _backing: Backing,
}

// SAFETY: the bytes are immutable for the lifetime of `TableBytes` and owned by `_backing`
// (a heap buffer or an `Mmap`, both `Send + Sync`); the raw pointer only caches their
// address.
unsafe impl Send for TableBytes {}
// SAFETY: as above: shared access is read-only.
unsafe impl Sync for TableBytes {}

impl TableBytes {
    /// Takes the first `len` bytes of an owned buffer (`len <= buf.cap`).
    fn owned(buf: AlignedBuf, len: usize) -> TableBytes {
        assert!(len <= buf.cap, "table length exceeds its buffer");
        TableBytes {
            ptr: buf.ptr,
            len,
            _backing: Backing::Owned(buf),
        }
    }

    /// The bytes `offset .. offset + len` of a map. Returns `None` if out of range.
    pub(crate) fn mapped(map: memmap2::Mmap, offset: usize, len: usize) -> Option<TableBytes> {
        let end = offset.checked_add(len)?;
        let body = map.get(offset..end)?;
        let ptr = NonNull::new(body.as_ptr().cast_mut())?;
        Some(TableBytes {
            ptr,
            len,
            _backing: Backing::Mapped(map),
        })
    }

    /// A private copy of the bytes in transparent huge pages where the system has them
    /// ([`crate::huge`]): random lookups then rarely miss the TLB. Costs the table's size
    /// in memory per process, where a map is shared through the page cache.
    pub fn to_huge_pages(&self) -> TableBytes {
        let copy = crate::huge::HugeArray::from_slice(self.as_slice());
        let ptr = NonNull::new(copy.as_ptr().cast_mut()).unwrap_or(NonNull::dangling());
        TableBytes {
            ptr,
            len: self.len,
            _backing: Backing::Huge(copy),
        }
    }

    /// Whether the bytes are a private huge-page copy ([`TableBytes::to_huge_pages`]).
    pub fn is_huge_copy(&self) -> bool {
        matches!(self._backing, Backing::Huge(_))
    }

    /// The bytes.
    #[inline(always)]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr .. ptr + len` lies inside the allocation or map owned by `_backing`
        // (checked at construction), which lives as long as `self`, is initialised, and is
        // never written while `self` exists (maps are read-only; owned buffers are only
        // written before they are wrapped).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the bytes come from a memory-mapped file (rather than the heap).
    pub fn is_mapped(&self) -> bool {
        matches!(self._backing, Backing::Mapped(_))
    }

    /// Hints the CPU to fetch the cache line holding byte `byte` (see [`prefetch`]).
    #[inline(always)]
    fn prefetch_byte(&self, byte: usize) {
        prefetch(self.as_slice(), byte)
    }
}

impl std::fmt::Debug for TableBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBytes")
            .field("len", &self.len)
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

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
    /// The same table in a private huge-page copy ([`TableBytes::to_huge_pages`]).
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
    /// The same table in a private huge-page copy ([`TableBytes::to_huge_pages`]).
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

/// A 4-bit table that many threads can fill at once, for generators.
///
/// Every entry starts as [`UNSET`] (15). Entries live in native-endian `u64` words of 16
/// entries each, updated with compare-and-swap; [`AtomicPacked4::into_packed`] turns the
/// words into the byte layout of [`Packed4`] in place.
pub struct AtomicPacked4 {
    /// `words * 8` bytes rounded up to 64, viewed only as atomics while `self` exists.
    buf: AlignedBuf,
    /// Number of entries.
    entries: u64,
    /// Number of `u64` words holding the entries: `ceil(entries / 16)`.
    words: usize,
}

impl AtomicPacked4 {
    /// A table of `entries` entries, all [`UNSET`] (the fill is multi-threaded).
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
        unsafe { std::slice::from_raw_parts(self.buf.ptr.as_ptr().cast::<AtomicU64>(), self.words) }
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

    /// Sets entry `index` to `value` (taken mod 16) if it is still [`UNSET`]; returns whether
    /// this call set it. Safe to call from many threads: exactly one caller wins each entry.
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

/// Element-wise sum, for rayon reductions of histograms.
pub(crate) fn add_arrays<const N: usize>(mut a: [u64; N], b: [u64; N]) -> [u64; N] {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
    a
}

/// Number of histogram buckets: values of 31 or more share the last one.
pub(crate) const BUCKETS: usize = 32;

/// For each byte, how many of its four 2-bit fields hold 0, 1, 2, 3, as four 16-bit lanes.
const CRUMB_COUNTS: [u64; 256] = {
    let mut lut = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 4 {
            lut[b] += 1 << (16 * ((b >> (2 * k)) & 3));
            k += 1;
        }
        b += 1;
    }
    lut
};

/// Histogram of `(entry >> shift) & (2^width - 1)`, clamped to 31, over the first `entries`
/// entries of `bits` bits each stored in `bytes` (sequential). `bits` is 2, 4, 8 or 32;
/// for 2 and 4 bits the whole entry is counted (`shift` and `width` are ignored). Bytes
/// beyond the entries' extent are ignored; a short slice just counts fewer entries.
pub(crate) fn histogram_seq(
    bytes: &[u8],
    entries: u64,
    bits: u8,
    shift: u8,
    width: u8,
) -> [u64; BUCKETS] {
    let mut h = [0u64; BUCKETS];
    match bits {
        2 | 4 => count_small(bytes, entries, bits, &mut h),
        _ => {
            let mask = if width >= 32 {
                u32::MAX
            } else {
                (1u32 << width) - 1
            };
            let mut count =
                |e: u32| h[(((e >> shift.min(31)) & mask) as usize).min(BUCKETS - 1)] += 1;
            let n = usize::try_from(entries).unwrap_or(usize::MAX);
            if bits == 8 {
                bytes.iter().take(n).for_each(|&b| count(u32::from(b)));
            } else {
                bytes
                    .chunks_exact(4)
                    .take(n)
                    .for_each(|c| count(u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            }
        }
    }
    h
}

/// [`histogram_seq`] for 2- and 4-bit entries.
fn count_small(bytes: &[u8], entries: u64, bits: u8, h: &mut [u64; BUCKETS]) {
    let per_byte = u64::from(8 / bits);
    let full = usize::try_from(entries / per_byte)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let (whole, rest) = bytes.split_at(full);
    if bits == 2 {
        // 16-bit lanes: flush before any lane can reach 2^16 (4 per byte).
        for block in whole.chunks(8192) {
            let acc: u64 = block.iter().map(|&b| CRUMB_COUNTS[b as usize]).sum();
            for (v, slot) in h.iter_mut().take(4).enumerate() {
                *slot += (acc >> (16 * v)) & 0xffff;
            }
        }
    } else {
        // Count byte values (four interleaved histograms, so runs of one value do not
        // serialise on one counter), then split each byte value into its two nibbles.
        let mut lanes = [[0u64; 256]; 4];
        let mut quads = whole.chunks_exact(4);
        for q in &mut quads {
            for (lane, &b) in lanes.iter_mut().zip(q) {
                lane[b as usize] += 1;
            }
        }
        for &b in quads.remainder() {
            lanes[0][b as usize] += 1;
        }
        for b in 0..256 {
            let n = lanes[0][b] + lanes[1][b] + lanes[2][b] + lanes[3][b];
            h[b & 0xf] += n;
            h[b >> 4] += n;
        }
    }
    // The entries of a last, partly used byte.
    let left = (entries - full as u64 * per_byte).min(per_byte);
    if let Some(&b) = rest.first() {
        let mask = (1u8 << bits) - 1;
        for k in 0..left as u32 {
            h[((b >> (k * u32::from(bits))) & mask) as usize] += 1;
        }
    }
}

/// Multi-threaded [`histogram_seq`] over a whole body.
pub(crate) fn histogram(
    bytes: &[u8],
    entries: u64,
    bits: u8,
    shift: u8,
    width: u8,
) -> [u64; BUCKETS] {
    // Chunks of whole bytes that also hold whole entries for every width.
    let per_chunk = (PAR_BYTES as u64 * 8) / u64::from(bits.max(1));
    bytes
        .par_chunks(PAR_BYTES)
        .enumerate()
        .map(|(c, chunk)| {
            let n = entries.saturating_sub(c as u64 * per_chunk).min(per_chunk);
            histogram_seq(chunk, n, bits, shift, width)
        })
        .reduce(|| [0; BUCKETS], add_arrays)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A 4-bit table holding `values` (each < 15, or 15 to leave unset).
    fn packed4(values: &[u8]) -> Packed4 {
        let t = AtomicPacked4::new(values.len() as u64);
        for (i, &v) in values.iter().enumerate() {
            if v != UNSET {
                assert!(t.set_if_unset(i as u64, v));
            }
        }
        t.into_packed()
    }

    #[test]
    fn new_table_is_unset_and_set_if_unset_wins_once() {
        let t = AtomicPacked4::new(37);
        assert!((0..37).all(|i| t.get(i) == UNSET));
        assert!(t.set_if_unset(5, 3));
        assert!(!t.set_if_unset(5, 4), "second set must lose");
        assert_eq!(t.get(5), 3);
        assert_eq!(t.get(4), UNSET);
        assert_eq!(t.get(6), UNSET);
        assert!(t.set_if_unset(36, 0));
        assert_eq!(t.get(36), 0);
    }

    #[test]
    fn concurrent_set_if_unset_has_one_winner_per_entry() {
        let n = 100_000u64;
        let t = AtomicPacked4::new(n);
        // Eight contenders per entry, all racing over neighbouring nibbles of shared words.
        let wins: u64 = (0..8u8)
            .into_par_iter()
            .map(|v| (0..n).filter(|&i| t.set_if_unset(i, v)).count() as u64)
            .sum();
        assert_eq!(wins, n);
        let d = t.distribution();
        assert_eq!(d.iter().sum::<u64>(), n);
        assert_eq!(d[UNSET as usize], 0);
    }

    #[test]
    fn byte_layout_is_low_nibble_first_and_padding_is_zero() {
        let t = packed4(&[1, 2, 3, 4, 5]);
        assert_eq!(t.as_bytes(), &[0x21, 0x43, 0x05]);
        assert_eq!(
            (0..5).map(|i| t.get(i)).collect::<Vec<_>>(),
            vec![1, 2, 3, 4, 5]
        );
        let two = t.to_packed2(2);
        // 1,2 -> 0; 3 -> 1; 4 -> 2; 5 -> 3.
        assert_eq!(two.as_bytes(), &[0b10_01_00_00, 0b11]);
        assert_eq!(two.base(), 2);
    }

    #[test]
    fn empty_tables_work() {
        let t = AtomicPacked4::new(0).into_packed();
        assert!(t.is_empty());
        assert_eq!(t.as_bytes().len(), 0);
        assert_eq!(t.distribution(), [0; 16]);
        let two = t.to_packed2(0);
        assert!(two.is_empty());
        assert_eq!(two.distribution(), [0; 4]);
    }

    #[test]
    fn buffers_are_cache_line_aligned() {
        for n in [1u64, 17, 1000, 123_457] {
            let t = AtomicPacked4::new(n).into_packed();
            assert_eq!(t.as_bytes().as_ptr() as usize % 64, 0);
            assert_eq!(t.to_packed2(1).as_bytes().as_ptr() as usize % 64, 0);
        }
    }

    #[test]
    fn prefetch_is_harmless_anywhere() {
        let t = packed4(&[1, 2, 3]);
        for i in [0, 2, 3, 1 << 40, u64::MAX] {
            t.prefetch(i);
            t.to_packed2(0).prefetch(i);
        }
    }

    #[test]
    #[should_panic]
    fn out_of_range_get_panics_rather_than_reading_past_the_end() {
        packed4(&[1, 2]).get(2);
    }

    #[test]
    fn histogram_of_32_bit_entries_uses_the_depth_field() {
        let entries: [u32; 4] = [0x0000_0300, 0x0000_0500, 0xffff_0300, 0x0000_ff00];
        let bytes: Vec<u8> = entries.iter().flat_map(|e| e.to_le_bytes()).collect();
        let h = histogram(&bytes, 4, 32, 8, 8);
        assert_eq!(h[3], 2);
        assert_eq!(h[5], 1);
        assert_eq!(h[31], 1, "values above 31 share the last bucket");
        let h8 = histogram(&[0, 7, 7, 200], 4, 8, 0, 8);
        assert_eq!((h8[0], h8[7], h8[31]), (1, 2, 1));
    }

    proptest! {
        #[test]
        fn packed4_roundtrip_and_distribution(values in proptest::collection::vec(0u8..16, 0..3000)) {
            let t = packed4(&values);
            prop_assert_eq!(t.len(), values.len() as u64);
            for (i, &v) in values.iter().enumerate() {
                prop_assert_eq!(t.get(i as u64), v);
            }
            let mut expect = [0u64; 16];
            values.iter().for_each(|&v| expect[v as usize] += 1);
            prop_assert_eq!(t.distribution(), expect);
        }

        #[test]
        fn packed2_follows_the_nxopt_rule(
            values in proptest::collection::vec(0u8..16, 0..3000),
            base in 0u8..14,
        ) {
            let two = packed4(&values).to_packed2(base);
            prop_assert_eq!(two.len(), values.len() as u64);
            prop_assert_eq!(two.as_bytes().len(), values.len().div_ceil(4));
            let mut expect = [0u64; 4];
            for (i, &v) in values.iter().enumerate() {
                let s = two.get(i as u64);
                prop_assert_eq!(s, v.saturating_sub(base).min(3));
                // The decoded bound never exceeds the true value.
                if s > 0 {
                    prop_assert!(base + s <= v);
                }
                expect[s as usize] += 1;
            }
            prop_assert_eq!(two.distribution(), expect);
            // Padding bits are zero.
            if values.len() % 4 != 0 {
                let last = *two.as_bytes().last().unwrap();
                prop_assert_eq!(last >> (2 * (values.len() % 4)), 0);
            }
        }

        #[test]
        fn sequential_and_parallel_histograms_agree(
            bytes in proptest::collection::vec(any::<u8>(), 0..400),
            bits in prop_oneof![Just(2u8), Just(4), Just(8), Just(32)],
            drop in 0u64..5,
        ) {
            let entries = (bytes.len() as u64 * 8 / u64::from(bits)).saturating_sub(drop);
            let h = histogram(&bytes, entries, bits, 0, bits.min(8));
            prop_assert_eq!(h, histogram_seq(&bytes, entries, bits, 0, bits.min(8)));
            prop_assert_eq!(h.iter().sum::<u64>(), entries);
            // Naive reference.
            let mut naive = [0u64; BUCKETS];
            for i in 0..entries as usize {
                let v = match bits {
                    2 => (bytes[i / 4] >> (2 * (i % 4))) & 3,
                    4 => (bytes[i / 2] >> (4 * (i % 2))) & 15,
                    8 => bytes[i],
                    _ => bytes[4 * i],
                };
                naive[(v as usize).min(BUCKETS - 1)] += 1;
            }
            prop_assert_eq!(h, naive);
        }
    }
}
