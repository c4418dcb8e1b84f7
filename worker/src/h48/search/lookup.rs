//! What the search reads: the [`Lookup`] of a pruning table (4-bit, 2-bit, 2-bit with
//! a [`Fallback`]: eoesep, or h48h0k4 in a directory without eoesep) and the [`Pruner`]
//! that turns a position into its estimate.

use super::super::cocsep::Cocsep;
use super::super::coords::{Coords, ESEP};
use super::super::eoesep::Eoesep;
use tables::packed::{Packed2, Packed4};
use tables::Cube;

/// A pruning table as the search reads it.
pub trait Lookup: Sync + Send {
    /// Starts loading the entry's cache line.
    fn prefetch(&self, idx: u64);
    /// The main table's size in bytes (how prefetches are grouped depends on it).
    fn bytes(&self) -> u64;
    /// The lower bound stored at `idx`, or `None` when the entry only says "at most
    /// [`Lookup::at_most`]" (2-bit tables) and a fallback may say more.
    fn first(&self, idx: u64) -> Option<u8>;
    /// When [`Lookup::first`] says `None`, the entry's value is at most this.
    #[inline(always)]
    fn at_most(&self) -> u8 {
        u8::MAX
    }
    /// Starts loading the fallback entry of the position `pr` describes.
    #[inline(always)]
    fn prefetch_fallback(&self, _pr: &Probe) {}
    /// The fallback's lower bound for the position `pr` describes, when
    /// [`Lookup::first`] said `None` (0 for tables without a fallback).
    #[inline(always)]
    fn fallback(&self, _pr: &Probe) -> u8 {
        0
    }
    /// The table's lower bound for the position `pr` describes: its entry, or the
    /// fallback's.
    #[inline(always)]
    fn value(&self, pr: &Probe) -> u8 {
        match self.first(pr.idx) {
            Some(v) => v,
            None => self.fallback(pr),
        }
    }
}

impl Lookup for Packed4 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        Packed4::prefetch(self, idx)
    }
    fn bytes(&self) -> u64 {
        self.as_bytes().len() as u64
    }
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        Some(self.get(idx))
    }
}

impl Lookup for Packed2 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        Packed2::prefetch(self, idx)
    }
    fn bytes(&self) -> u64 {
        self.as_bytes().len() as u64
    }
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        match self.get(idx) {
            0 => None,
            s => Some(self.base() + s),
        }
    }
    #[inline(always)]
    fn at_most(&self) -> u8 {
        self.base()
    }
}

/// A second table read where a 2-bit main table only says "at most the base".
pub trait Fallback: Sync + Send {
    /// Starts loading the entry of the position `pr` describes.
    fn prefetch(&self, pr: &Probe);
    /// Its lower bound for the position `pr` describes.
    fn get(&self, pr: &Probe) -> u8;
}

/// h48h0k4 as a fallback: the h0 entry `idx >> N` covers the hN entry, so it is a lower
/// bound too (corners and edge separation; blind to edge orientation).
pub struct H0 {
    /// h48h0k4.
    pub table: Packed4,
    /// N, the shift from an hN index to its h0 index.
    pub shift: u32,
}

impl Fallback for H0 {
    #[inline(always)]
    fn prefetch(&self, pr: &Probe) {
        self.table.prefetch(pr.idx >> self.shift)
    }
    #[inline(always)]
    fn get(&self, pr: &Probe) -> u8 {
        self.table.get(pr.idx >> self.shift)
    }
}

impl Fallback for Eoesep {
    #[inline(always)]
    fn prefetch(&self, pr: &Probe) {
        Eoesep::prefetch(self, pr.esep.into(), pr.eo.into())
    }
    #[inline(always)]
    fn get(&self, pr: &Probe) -> u8 {
        Eoesep::get(self, pr.esep.into(), pr.eo.into())
    }
}

/// A 2-bit h48hNk2 table whose "at most the base" entries fall back on another bound.
pub struct K2With<F> {
    /// The main table.
    pub k2: Packed2,
    /// The fallback.
    pub fallback: F,
}

impl<F: Fallback> Lookup for K2With<F> {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        self.k2.prefetch(idx)
    }
    fn bytes(&self) -> u64 {
        self.k2.as_bytes().len() as u64
    }
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        self.k2.first(idx)
    }
    #[inline(always)]
    fn at_most(&self) -> u8 {
        self.k2.base()
    }
    #[inline(always)]
    fn prefetch_fallback(&self, pr: &Probe) {
        self.fallback.prefetch(pr)
    }
    #[inline(always)]
    fn fallback(&self, pr: &Probe) -> u8 {
        self.fallback.get(pr)
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

/// Where the main-table entry of a position is, its corner bound, and what a fallback
/// reads (the edges of the position transformed to its corner-class representative).
#[derive(Clone, Copy, Default)]
pub struct Probe {
    /// Corner distance (a lower bound on its own).
    pub cd: u8,
    /// Edge separation (< 34650).
    pub esep: u16,
    /// Edge-orientation bits, bit `i` for position `i`.
    pub eo: u16,
    /// Main-table index.
    pub idx: u64,
}

impl<L: Lookup> Pruner<L> {
    /// The corner bound and the main-table index of `c`.
    #[inline(always)]
    pub(super) fn corner_word(&self, c: &Cube) -> u32 {
        self.cocsep.get(self.coords.cocsep_raw(c))
    }

    /// The [`Probe`] of `c`, whose corner word is `w`.
    #[inline(always)]
    pub(super) fn probe(&self, c: &Cube, w: u32) -> Probe {
        let class = (w & 0xfff) as u64;
        let t = (w >> 12 & 63) as usize;
        let (esep, eo) = self.coords.edges(c, t);
        Probe {
            cd: (w >> 18) as u8,
            esep: esep as u16,
            eo: eo as u16,
            idx: ((class * ESEP as u64 + esep as u64) << self.eo_bits)
                | super::super::coords::eo_part(eo, self.eo_bits),
        }
    }

    /// The full estimate of one position (no early exit).
    pub fn estimate(&self, c: &Cube) -> u8 {
        let pr = self.probe(c, self.corner_word(c));
        pr.cd.max(self.table.value(&pr))
    }

    /// The table index of `c` (for tests and tools).
    pub fn table_index(&self, c: &Cube) -> u64 {
        self.probe(c, self.corner_word(c)).idx
    }
}
