//! What the search reads: the [`Lookup`] of a pruning table (4-bit, 2-bit, 2-bit with
//! its h0k4 fallback) and the [`Pruner`] that turns a position into its estimate.

use super::super::cocsep::Cocsep;
use super::super::coords::{Coords, ESEP};
use tables::packed::{Packed2, Packed4};
use tables::Cube;

/// A pruning table as the search reads it.
pub trait Lookup: Sync + Send {
    /// Starts loading the entry's cache line.
    fn prefetch(&self, idx: u64);
    /// The lower bound stored at `idx`, or `fallback` when the entry only says "at most
    /// the base" (2-bit tables).
    fn value(&self, idx: u64, fallback: u8) -> u8;
    /// The lower bound stored at `idx`, or `None` when a fallback table has to be read
    /// ([`Lookup::fallback`]; only tables with one).
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        Some(self.value(idx, 0))
    }
    /// When [`Lookup::first`] says `None`, the entry's value is at most this.
    #[inline(always)]
    fn at_most(&self) -> u8 {
        u8::MAX
    }
    /// Starts loading the fallback entry for `idx`.
    #[inline(always)]
    fn prefetch_fallback(&self, _idx: u64) {}
    /// The fallback's lower bound for `idx`, when [`Lookup::first`] said `None`.
    #[inline(always)]
    fn fallback(&self, _idx: u64) -> u8 {
        0
    }
}

impl Lookup for Packed4 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        Packed4::prefetch(self, idx)
    }
    #[inline(always)]
    fn value(&self, idx: u64, _fallback: u8) -> u8 {
        self.get(idx)
    }
}

impl Lookup for Packed2 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        Packed2::prefetch(self, idx)
    }
    #[inline(always)]
    fn value(&self, idx: u64, fallback: u8) -> u8 {
        match self.get(idx) {
            0 => fallback,
            s => self.base() + s,
        }
    }
}

/// A 2-bit h48hNk2 table whose "at most the base" entries fall back on h48h0k4 (the h0
/// entry `idx >> N` covers the hN entry, so it is a lower bound too, and usually within
/// one or two of the base, where the corner bound is often three or four below).
pub struct K2WithH0 {
    /// The main table.
    pub k2: Packed2,
    /// h48h0k4.
    pub h0: Packed4,
    /// N, the shift from an hN index to its h0 index.
    pub shift: u32,
}

impl Lookup for K2WithH0 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        self.k2.prefetch(idx)
    }
    #[inline(always)]
    fn value(&self, idx: u64, fallback: u8) -> u8 {
        match self.k2.get(idx) {
            0 => fallback.max(self.h0.get(idx >> self.shift)),
            s => self.k2.base() + s,
        }
    }
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        match self.k2.get(idx) {
            0 => None,
            s => Some(self.k2.base() + s),
        }
    }
    #[inline(always)]
    fn at_most(&self) -> u8 {
        self.k2.base()
    }
    #[inline(always)]
    fn prefetch_fallback(&self, idx: u64) {
        self.h0.prefetch(idx >> self.shift)
    }
    #[inline(always)]
    fn fallback(&self, idx: u64) -> u8 {
        self.h0.get(idx >> self.shift)
    }
}

/// Everything the search reads: fast coordinates, cocsep and the main table.
pub struct Pruner<L> {
    /// Coordinate helper tables.
    pub coords: Coords,
    /// The corner table.
    pub cocsep: Cocsep,
    /// The main table.
    pub table: L,
    /// Edge-orientation bits N of the table.
    pub eo_bits: u32,
}

/// Where the main-table entry of a position is, and its corner bound.
#[derive(Clone, Copy, Default)]
pub(super) struct Probe {
    /// Corner distance (a lower bound on its own).
    pub(super) cd: u8,
    /// Main-table index.
    pub(super) idx: u64,
}

impl<L: Lookup> Pruner<L> {
    /// The corner bound and the main-table index of `c`.
    #[inline(always)]
    pub(super) fn corner_word(&self, c: &Cube) -> u32 {
        self.cocsep.get(self.coords.cocsep_raw(c))
    }

    #[inline(always)]
    pub(super) fn index(&self, c: &Cube, w: u32) -> u64 {
        let class = (w & 0xfff) as u64;
        let t = (w >> 12 & 63) as usize;
        let (esep, eo) = self.coords.edges(c, t);
        ((class * ESEP as u64 + esep as u64) << self.eo_bits)
            | super::super::coords::eo_part(eo, self.eo_bits)
    }

    /// The full estimate of one position (no early exit).
    pub fn estimate(&self, c: &Cube) -> u8 {
        let w = self.corner_word(c);
        let cd = (w >> 18) as u8;
        cd.max(self.table.value(self.index(c, w), cd))
    }

    /// The table index of `c` (for tests and tools).
    pub fn table_index(&self, c: &Cube) -> u64 {
        self.index(c, self.corner_word(c))
    }
}
