//! The two-phase tables' 4-bit view over a mapped table or its huge-page copy
//! ([`tables::huge::HugeArray`]).

use tables::huge::HugeArray;
use tables::packed::{nibble, prefetch};

/// A 4-bit table (entry `i` in byte `i / 2`, low nibble first), read either from its
/// memory map or from a private huge-page copy.
pub(crate) struct Nibbles {
    /// The mapped table file body.
    mapped: tables::packed::Packed4,
    /// A huge-page copy, when loaded that way. Held as the bare array: read through a
    /// `Packed4` instead, `bench twophase --count 3000 --seed 7` took 0.357–0.379 ms per
    /// position against 0.313–0.327 ms.
    copy: Option<HugeArray<u8>>,
}

impl Nibbles {
    /// Wraps a mapped table, copying it into huge pages when `copy` is set.
    pub(crate) fn new(mapped: tables::packed::Packed4, copy: bool) -> Nibbles {
        let copy = copy.then(|| mapped.huge_copy_bytes());
        Nibbles { mapped, copy }
    }

    /// The packed bytes.
    #[inline(always)]
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.copy {
            Some(c) => c,
            None => self.mapped.as_bytes(),
        }
    }

    /// Entry `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: u64) -> u8 {
        nibble(self.bytes(), i)
    }

    /// Starts loading the cache line of entry `i` (a hint).
    #[inline(always)]
    pub(crate) fn prefetch(&self, i: u64) {
        prefetch(self.bytes(), (i >> 1) as usize)
    }

    /// Whether the entries are read from a private huge-page copy.
    pub(crate) fn is_copy(&self) -> bool {
        self.copy.is_some()
    }
}

impl std::fmt::Debug for Nibbles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nibbles")
            .field("entries", &self.mapped.len())
            .field("copy", &self.copy.is_some())
            .finish()
    }
}
