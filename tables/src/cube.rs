//! The cubie-level cube: where each corner and edge is and how it is turned.
//!
//! Representation (chosen for the search's inner loop): two 16-byte arrays, one byte per
//! position. Low nibble = which piece sits there, bits 4–5 = its orientation (corners 0..2,
//! edges 0..1). Unused lanes (corners 8..16, edges 12..16) hold their own index so that a
//! byte shuffle over all 16 lanes is harmless. With SSSE3 a composition is one `pshufb`
//! per array plus two or three arithmetic instructions; without it, a short scalar loop.
//!
//! Conventions follow Kociemba's "is replaced by" representation: `c.corner(i)` is the
//! piece at position `i`, and `a.compose(&b)` is "apply `a`, then `b`".

/// Corner names in position order (Kociemba's order).
pub const CORNER_NAMES: [&str; 8] = ["URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB"];
/// Edge names in position order (Kociemba's order; the four E-slice edges last).
pub const EDGE_NAMES: [&str; 12] = [
    "UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR",
];

const PIECE: u8 = 0x0f;
const CO_MASK: u8 = 0x30;
const EO_MASK: u8 = 0x10;

/// A cube position at cubie level. `Copy`, 32 bytes, 16-byte aligned.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C, align(16))]
pub struct Cube {
    /// Edge positions 0..12: piece | orientation << 4. Lanes 12..16 hold 12..16.
    pub(crate) e: [u8; 16],
    /// Corner positions 0..8: piece | orientation << 4. Lanes 8..16 hold 8..16.
    pub(crate) c: [u8; 16],
}

impl Default for Cube {
    fn default() -> Self {
        Cube::SOLVED
    }
}

const fn identity_lanes() -> [u8; 16] {
    let mut a = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        a[i] = i as u8;
        i += 1;
    }
    a
}

/// Why a cubie description is not a legal cube.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CubieError {
    /// A piece index or orientation out of range.
    #[error("{kind} at position {position} has an impossible value {value}")]
    OutOfRange {
        /// "corner", "edge", "corner orientation" or "edge orientation".
        kind: &'static str,
        /// The position holding it.
        position: usize,
        /// The value found.
        value: u8,
    },
    /// The same piece appears at two positions.
    #[error("{kind} {piece} appears more than once")]
    Duplicate {
        /// "corner" or "edge".
        kind: &'static str,
        /// The piece's name.
        piece: &'static str,
    },
    /// Corner orientations do not sum to 0 mod 3.
    #[error("a corner is twisted (corner orientations sum to {0} mod 3, not 0)")]
    TwistedCorner(u8),
    /// Edge orientations do not sum to 0 mod 2.
    #[error("an edge is flipped (edge orientations sum to 1 mod 2, not 0)")]
    FlippedEdge,
    /// Corner and edge permutation parities differ.
    #[error(
        "parity fault: corner and edge permutations have different parity (two pieces swapped)"
    )]
    Parity,
}

impl Cube {
    /// The solved cube.
    pub const SOLVED: Cube = Cube {
        e: identity_lanes(),
        c: identity_lanes(),
    };

    /// Builds a cube from permutation and orientation arrays without checking legality.
    /// Values must be in range (pieces < 8/12, orientations < 3/2); `from_parts` checks
    /// legality too.
    pub fn from_parts_unchecked(cp: [u8; 8], co: [u8; 8], ep: [u8; 12], eo: [u8; 12]) -> Cube {
        let mut cube = Cube::SOLVED;
        for i in 0..8 {
            cube.c[i] = (cp[i] & PIECE) | ((co[i] % 3) << 4);
        }
        for i in 0..12 {
            cube.e[i] = (ep[i] & PIECE) | ((eo[i] & 1) << 4);
        }
        cube
    }

    /// Builds a cube from permutation and orientation arrays, refusing anything that is not
    /// a reachable position, with the specific fault.
    pub fn from_parts(
        cp: [u8; 8],
        co: [u8; 8],
        ep: [u8; 12],
        eo: [u8; 12],
    ) -> Result<Cube, CubieError> {
        for (i, &p) in cp.iter().enumerate() {
            if p >= 8 {
                return Err(CubieError::OutOfRange {
                    kind: "corner",
                    position: i,
                    value: p,
                });
            }
            if co[i] >= 3 {
                return Err(CubieError::OutOfRange {
                    kind: "corner orientation",
                    position: i,
                    value: co[i],
                });
            }
        }
        for (i, &p) in ep.iter().enumerate() {
            if p >= 12 {
                return Err(CubieError::OutOfRange {
                    kind: "edge",
                    position: i,
                    value: p,
                });
            }
            if eo[i] >= 2 {
                return Err(CubieError::OutOfRange {
                    kind: "edge orientation",
                    position: i,
                    value: eo[i],
                });
            }
        }
        let cube = Cube::from_parts_unchecked(cp, co, ep, eo);
        cube.check()?;
        Ok(cube)
    }

    /// Checks that this is a reachable position: every piece once, orientation sums, parity.
    pub fn check(&self) -> Result<(), CubieError> {
        let mut seen = 0u16;
        for i in 0..8 {
            let p = self.c[i] & PIECE;
            if p >= 8 || (self.c[i] >> 4) >= 3 {
                return Err(CubieError::OutOfRange {
                    kind: "corner",
                    position: i,
                    value: self.c[i],
                });
            }
            if seen & (1 << p) != 0 {
                return Err(CubieError::Duplicate {
                    kind: "corner",
                    piece: CORNER_NAMES[p as usize],
                });
            }
            seen |= 1 << p;
        }
        seen = 0;
        for i in 0..12 {
            let p = self.e[i] & PIECE;
            if p >= 12 || (self.e[i] >> 4) >= 2 {
                return Err(CubieError::OutOfRange {
                    kind: "edge",
                    position: i,
                    value: self.e[i],
                });
            }
            if seen & (1 << p) != 0 {
                return Err(CubieError::Duplicate {
                    kind: "edge",
                    piece: EDGE_NAMES[p as usize],
                });
            }
            seen |= 1 << p;
        }
        let twist = (0..8).map(|i| self.corner_ori(i) as u32).sum::<u32>() % 3;
        if twist != 0 {
            return Err(CubieError::TwistedCorner(twist as u8));
        }
        let flip = (0..12).map(|i| self.edge_ori(i) as u32).sum::<u32>() % 2;
        if flip != 0 {
            return Err(CubieError::FlippedEdge);
        }
        if self.corner_parity() != self.edge_parity() {
            return Err(CubieError::Parity);
        }
        Ok(())
    }

    /// The corner piece at position `i` (0..8).
    #[inline(always)]
    pub fn corner(&self, i: usize) -> u8 {
        self.c[i] & PIECE
    }
    /// The orientation (0..3) of the corner at position `i`.
    #[inline(always)]
    pub fn corner_ori(&self, i: usize) -> u8 {
        self.c[i] >> 4
    }
    /// The edge piece at position `i` (0..12).
    #[inline(always)]
    pub fn edge(&self, i: usize) -> u8 {
        self.e[i] & PIECE
    }
    /// The orientation (0..2) of the edge at position `i`.
    #[inline(always)]
    pub fn edge_ori(&self, i: usize) -> u8 {
        self.e[i] >> 4
    }
    /// Corner permutation as an array.
    pub fn cp(&self) -> [u8; 8] {
        std::array::from_fn(|i| self.corner(i))
    }
    /// Corner orientations as an array.
    pub fn co(&self) -> [u8; 8] {
        std::array::from_fn(|i| self.corner_ori(i))
    }
    /// Edge permutation as an array.
    pub fn ep(&self) -> [u8; 12] {
        std::array::from_fn(|i| self.edge(i))
    }
    /// Edge orientations as an array.
    pub fn eo(&self) -> [u8; 12] {
        std::array::from_fn(|i| self.edge_ori(i))
    }

    /// Parity of the corner permutation (true = odd).
    pub fn corner_parity(&self) -> bool {
        perm_parity(&self.cp())
    }
    /// Parity of the edge permutation (true = odd).
    pub fn edge_parity(&self) -> bool {
        perm_parity(&self.ep())
    }

    /// Is this the solved cube?
    #[inline(always)]
    pub fn is_solved(&self) -> bool {
        *self == Cube::SOLVED
    }

    /// `self` followed by `other` (both as permutations of the solved cube).
    #[inline(always)]
    pub fn compose(&self, other: &Cube) -> Cube {
        #[cfg(all(target_arch = "x86_64", target_feature = "ssse3"))]
        {
            simd::compose(self, other)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "ssse3")))]
        {
            self.compose_scalar(other)
        }
    }

    /// Portable composition; the reference the SIMD path is tested against.
    #[inline]
    pub fn compose_scalar(&self, other: &Cube) -> Cube {
        let mut r = Cube::SOLVED;
        for i in 0..12 {
            let b = other.e[i];
            let a = self.e[(b & PIECE) as usize];
            r.e[i] = a ^ (b & EO_MASK);
        }
        for i in 0..8 {
            let b = other.c[i];
            let a = self.c[(b & PIECE) as usize];
            let s = a + (b & CO_MASK);
            r.c[i] = if s >= CO_MASK { s - CO_MASK } else { s };
        }
        r
    }

    /// The inverse position: `c.compose(&c.inverse())` is solved.
    pub fn inverse(&self) -> Cube {
        let mut r = Cube::SOLVED;
        for i in 0..12 {
            let p = (self.e[i] & PIECE) as usize;
            r.e[p] = i as u8 | (self.e[i] & EO_MASK);
        }
        for i in 0..8 {
            let p = (self.c[i] & PIECE) as usize;
            let o = self.c[i] >> 4;
            r.c[p] = i as u8 | (((3 - o) % 3) << 4);
        }
        r
    }

    /// The raw 32 bytes (edges then corners), for hashing and SIMD-minded callers.
    pub fn as_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        out[..16].copy_from_slice(&self.e);
        out[16..].copy_from_slice(&self.c);
        out
    }
}

impl std::fmt::Debug for Cube {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Cube {{ cp: {:?}, co: {:?}, ep: {:?}, eo: {:?} }}",
            self.cp(),
            self.co(),
            self.ep(),
            self.eo()
        )
    }
}

/// Parity of a permutation given as an array (true = odd).
pub fn perm_parity(p: &[u8]) -> bool {
    let mut odd = false;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            if p[i] > p[j] {
                odd = !odd;
            }
        }
    }
    odd
}

#[cfg(all(target_arch = "x86_64", target_feature = "ssse3"))]
mod simd {
    use super::Cube;
    use std::arch::x86_64::*;

    /// The whole cube in one 256-bit register (edges in the low lane, corners in the
    /// high one): one shuffle composes both, and an edge's orientation (0 or 0x10, adding
    /// modulo 0x20) wraps the way a corner's does (modulo 0x30), with a per-lane constant.
    #[cfg(target_feature = "avx2")]
    #[inline(always)]
    pub fn compose(a: &Cube, b: &Cube) -> Cube {
        // SAFETY: `Cube` is repr(C) with two [u8; 16] fields, 32 bytes in all, so the
        // unaligned 256-bit loads and store are in bounds; AVX2 is guaranteed by the cfg.
        unsafe {
            let a = _mm256_loadu_si256(a as *const Cube as *const __m256i);
            let b = _mm256_loadu_si256(b as *const Cube as *const __m256i);
            let s = _mm256_add_epi8(
                _mm256_shuffle_epi8(a, _mm256_and_si256(b, _mm256_set1_epi8(0x0f))),
                _mm256_and_si256(b, ORI),
            );
            // For s below the wrap the subtraction goes round to a large unsigned value, so
            // the minimum picks s.
            let v = _mm256_min_epu8(s, _mm256_sub_epi8(s, WRAP));
            let mut r = Cube::SOLVED;
            _mm256_storeu_si256(&mut r as *mut Cube as *mut __m256i, v);
            r
        }
    }

    /// Orientation bits: 0x10 per edge lane, 0x30 per corner lane.
    #[cfg(target_feature = "avx2")]
    // SAFETY: `__m256i` is 32 bytes of plain data; every bit pattern is a valid value.
    const ORI: __m256i = unsafe { std::mem::transmute::<[u8; 32], __m256i>(lanes(0x10, 0x30)) };
    /// Where the orientation wraps: 0x20 for edges (two values), 0x30 for corners (three).
    #[cfg(target_feature = "avx2")]
    // SAFETY: as for `ORI`.
    const WRAP: __m256i = unsafe { std::mem::transmute::<[u8; 32], __m256i>(lanes(0x20, 0x30)) };

    #[cfg(target_feature = "avx2")]
    const fn lanes(e: u8, c: u8) -> [u8; 32] {
        let mut x = [e; 32];
        let mut i = 16;
        while i < 32 {
            x[i] = c;
            i += 1;
        }
        x
    }

    #[cfg(not(target_feature = "avx2"))]
    #[inline(always)]
    pub fn compose(a: &Cube, b: &Cube) -> Cube {
        // SAFETY: `Cube` is repr(C, align(16)) with two [u8; 16] fields, so both loads and
        // stores are aligned and in bounds; SSSE3 is guaranteed by the cfg on this module.
        unsafe {
            let ae = _mm_load_si128(a.e.as_ptr() as *const __m128i);
            let ac = _mm_load_si128(a.c.as_ptr() as *const __m128i);
            let be = _mm_load_si128(b.e.as_ptr() as *const __m128i);
            let bc = _mm_load_si128(b.c.as_ptr() as *const __m128i);
            let piece = _mm_set1_epi8(0x0f);
            let e = _mm_xor_si128(
                _mm_shuffle_epi8(ae, _mm_and_si128(be, piece)),
                _mm_and_si128(be, _mm_set1_epi8(0x10)),
            );
            let s = _mm_add_epi8(
                _mm_shuffle_epi8(ac, _mm_and_si128(bc, piece)),
                _mm_and_si128(bc, _mm_set1_epi8(0x30)),
            );
            // Orientation sum is 0..4 (times 16); 3 and 4 must wrap to 0 and 1. For s < 0x30
            // the subtraction wraps to a large unsigned value, so the minimum picks s.
            let c = _mm_min_epu8(s, _mm_sub_epi8(s, _mm_set1_epi8(0x30)));
            let mut r = Cube::SOLVED;
            _mm_store_si128(r.e.as_mut_ptr() as *mut __m128i, e);
            _mm_store_si128(r.c.as_mut_ptr() as *mut __m128i, c);
            r
        }
    }
}
