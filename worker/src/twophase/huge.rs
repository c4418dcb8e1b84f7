//! The two-phase tables' 4-bit view over a mapped table or its huge-page copy
//! ([`tables::huge::HugeArray`]), and a prefetch hint.

use tables::huge::HugeArray;

/// A 4-bit table (entry `i` in byte `i / 2`, low nibble first), read either from its
/// memory map or from a private huge-page copy.
pub(crate) struct Nibbles {
    /// The mapped table file body.
    mapped: tables::packed::Packed4,
    /// A huge-page copy, when loaded that way.
    copy: Option<HugeArray<u8>>,
}

impl Nibbles {
    /// Wraps a mapped table, copying it into huge pages when `copy` is set.
    pub(crate) fn new(mapped: tables::packed::Packed4, copy: bool) -> Nibbles {
        let copy = copy.then(|| HugeArray::from_slice(mapped.as_bytes()));
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
        (self.bytes()[(i >> 1) as usize] >> ((i & 1) << 2)) & 15
    }

    /// Starts loading the cache line of entry `i` (a hint).
    #[inline(always)]
    pub(crate) fn prefetch(&self, i: u64) {
        prefetch(self.bytes(), (i >> 1) as usize);
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

/// Hints the CPU to load `data[i]` (no effect off x86_64; never faults).
#[inline(always)]
pub(crate) fn prefetch<T>(data: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = data.as_ptr().wrapping_add(i) as *const i8;
        // SAFETY: a prefetch is only a hint: it never faults, whatever the address
        // (`wrapping_add` keeps the pointer arithmetic itself defined).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, i);
}
