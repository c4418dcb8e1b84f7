//! The H48 coordinates, computed fast for the search's inner loop.
//!
//! A position's H48 index is `((class · 34650 + esep) << N) | eo_N` (seed 001):
//!
//! - **cocsep** (corner orientation + corner separation, 153090 raw values): its raw
//!   value is `twist + 2187 · csep`, exactly the raw value of
//!   `Composite::new(Twist, CornerSep)` in `tables`; the cocsep table maps it to the
//!   symmetry class, the transformation to the class representative (`ttrep`) and a
//!   corner-only distance ([`super::cocsep`]). Here the raw value is computed without
//!   loops: two byte-mask extractions give the seven orientation digits as two 7-bit
//!   masks (digits 1 and digits 2; the twist is the sum of two 128-entry table values,
//!   being linear in the digits) and one shuffle gives the 8-bit tetrad
//!   mask (a 256-entry table turns it into the separation index).
//! - **esep** (34650 values, the `tables` coordinate `EdgeSep`) and the **edge
//!   orientation** bits of the position *transformed by `ttrep`*: the transformation of
//!   the edges is three byte shuffles and two logic operations with per-symmetry
//!   constants ([`EdgeSym`]), then two mask extractions, one `pext` and two small table
//!   lookups give esep; the orientation bits of the edges at positions `12 - N .. 12` are the top `N`
//!   bits of one more mask.
//!
//! Everything here is checked against the scalar coordinates and symmetries of `tables`
//! (tests below), so table generation (which uses `tables`) and the search agree.

use tables::coord::basic::{CornerSep, EdgeSep, Twist};
use tables::coord::Coord;
use tables::symmetry::{symmetries, NSYM};
use tables::Cube;

/// Number of raw cocsep values: 3^7 twists × 70 corner separations.
pub const COCSEP_RAW: usize = 2187 * 70;
/// Number of edge-separation values (E-slice positions × M-slice positions).
pub const ESEP: u32 = 34650;

/// The edge-orientation part of an h48hNk2 index: of the orientation bits of positions
/// 0..12 (as [`Coords::edges`] returns them), those of positions `12 - N .. 12`
/// ([`super::gen_k2::EDGE_LAYOUT`]), as an N-bit number.
#[inline(always)]
pub fn eo_part(eo: u32, n: u32) -> u64 {
    ((eo >> (12 - n)) & ((1 << n) - 1)) as u64
}

/// How one symmetry `S` acts on the edges of a cube under conjugation `S · c · S⁻¹`:
/// `out[i] = piece_map[x[i].piece] ^ (x[i] & orientation) ^ pos_eo[i]` where
/// `x[i] = c.edges[pos[i]]`. Lanes 12..16 are the identity, so 16-lane shuffles are safe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct EdgeSym {
    /// Source position of each output position (shuffle control).
    pos: [u8; 16],
    /// Image of each edge piece: new piece | orientation change << 4.
    piece_map: [u8; 16],
    /// Orientation change of each output position (<< 4).
    pos_eo: [u8; 16],
}

impl EdgeSym {
    #[allow(clippy::needless_range_loop)] // parallel arrays indexed by position
    /// Derives the recipe of symmetry `s` by probing `tables`' scalar conjugation, so the
    /// two cannot disagree on conventions (checked on random cubes in the tests).
    fn probe(s: usize) -> EdgeSym {
        let syms = symmetries();
        let solved_cp = Cube::SOLVED.cp();
        let conj = |ep: [u8; 12]| {
            syms.conjugate(
                &Cube::from_parts_unchecked(solved_cp, [0; 8], ep, [0; 12]),
                s,
            )
        };
        let mut pos = [0u8; 16];
        let mut piece_map = [0u8; 16];
        let mut pos_eo = [0u8; 16];
        for i in 12..16 {
            pos[i] = i as u8;
            piece_map[i] = i as u8;
        }
        // All positions holding piece 0: out[i] = s_ep[0] | (s_eo[0] ^ t_eo[i]). Fix
        // s_eo[0] = 0 (a global flip of both halves describes the same map).
        let zero = conj([0; 12]);
        for i in 0..12 {
            pos_eo[i] = zero.edge_ori(i) << 4;
        }
        for k in 0..12u8 {
            let all_k = conj([k; 12]);
            piece_map[k as usize] = all_k.edge(0) | ((all_k.edge_ori(0) ^ zero.edge_ori(0)) << 4);
        }
        // Piece 1 at position j only: the output position that differs reads from j.
        for j in 0..12 {
            let mut ep = [0u8; 12];
            ep[j] = 1;
            let c = conj(ep);
            for i in 0..12 {
                if c.edge(i) != zero.edge(i) {
                    pos[i] = j as u8;
                }
            }
        }
        EdgeSym {
            pos,
            piece_map,
            pos_eo,
        }
    }

    /// The conjugated edge lanes, scalar reference.
    fn apply_scalar(&self, e: &[u8; 16]) -> [u8; 16] {
        std::array::from_fn(|i| {
            let x = e[self.pos[i] as usize];
            self.piece_map[(x & 0x0f) as usize] ^ (x & 0x10) ^ self.pos_eo[i]
        })
    }
}

/// All the small tables of the fast coordinates (about 12 kB, built in microseconds).
pub struct Coords {
    /// The twist is linear in the orientation digits: the twist of the low bits (digits
    /// equal to 1) of corners 0..7 plus that of the high bits (digits equal to 2). Two
    /// 256-byte tables instead of one of 32 kB keep the first-level cache for the rest.
    twist_lo: [u16; 128],
    twist_hi: [u16; 128],
    /// Tetrad-1 position mask (8 bits) → `2187 · csep`.
    csep_of_mask: [u32; 256],
    /// E-slice position mask (12 bits) → `70 · ` E-combination index of `EdgeSep`.
    erow: Vec<u16>,
    /// M-slice mask among the 8 non-E positions → M part of `EdgeSep`.
    mrow: [u8; 256],
    /// The 48 symmetries' edge recipes.
    syms: [EdgeSym; NSYM],
}

/// Tetrad-1 corners (UFL, UBR, DFR, DBL) marked 0x80, for a shuffle + movemask.
const TETRAD_LUT: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut p = 0;
    while p < 8 {
        if tables::coord::basic::TETRAD[p] == 1 {
            t[p] = 0x80;
        }
        p += 1;
    }
    t
};

/// E-slice edge pieces marked 0x80, M-slice ones 0x40.
const SLICE_LUT: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut p = 0;
    while p < 12 {
        t[p] = match tables::coord::basic::EDGE_SLICE[p] {
            2 => 0x80,
            1 => 0x40,
            _ => 0,
        };
        p += 1;
    }
    t
};

impl Default for Coords {
    fn default() -> Self {
        Coords::new()
    }
}

impl Coords {
    /// Builds the tables.
    pub fn new() -> Coords {
        let solved = Cube::SOLVED;
        let twist_of = |lo: usize, hi: usize| {
            let mut co = [0u8; 8];
            for (i, o) in co.iter_mut().enumerate().take(7) {
                *o = ((lo >> i) & 1) as u8 + 2 * ((hi >> i) & 1) as u8;
            }
            co[7] = (21 - co.iter().sum::<u8>()) % 3;
            Twist.index(&Cube::from_parts_unchecked(
                solved.cp(),
                co,
                solved.ep(),
                [0; 12],
            )) as u16
        };
        let twist_lo = std::array::from_fn(|b| twist_of(b, 0));
        let twist_hi = std::array::from_fn(|b| twist_of(0, b));
        let mut csep_of_mask = [0u32; 256];
        for x in 0..70 {
            let c = CornerSep.to_cube(x);
            let mask = (0..8).fold(0usize, |m, i| {
                m | ((TETRAD_LUT[c.corner(i) as usize] >> 7) as usize) << i
            });
            csep_of_mask[mask] = 2187 * x;
        }
        let mut erow = vec![0u16; 1 << 12];
        let mut mrow = [0u8; 256];
        for x in 0..ESEP {
            let c = EdgeSep.to_cube(x);
            let (mut em, mut mm, mut k) = (0usize, 0usize, 0);
            for j in 0..12 {
                match tables::coord::basic::EDGE_SLICE[c.edge(j) as usize] {
                    2 => em |= 1 << j,
                    s => {
                        mm |= ((s == 1) as usize) << k;
                        k += 1;
                    }
                }
            }
            erow[em] = (x / 70 * 70) as u16;
            mrow[mm] = (x % 70) as u8;
        }
        Coords {
            twist_lo,
            twist_hi,
            csep_of_mask,
            erow,
            mrow,
            syms: std::array::from_fn(EdgeSym::probe),
        }
    }

    /// The raw cocsep value `twist + 2187 · csep` (0..153090).
    #[inline(always)]
    pub fn cocsep_raw(&self, c: &Cube) -> usize {
        let (bits, mask) = simd::corner_masks(c);
        (self.twist_lo[bits as usize & 0x7f] + self.twist_hi[(bits >> 7) as usize & 0x7f]) as usize
            + self.csep_of_mask[mask as usize] as usize
    }

    /// `(esep, eo)` of `S_t · c · S_t⁻¹`: the edge separation (0..34650) and the edge
    /// orientations of positions 0..11 as bits 0..11.
    #[inline(always)]
    pub fn edges(&self, c: &Cube, t: usize) -> (u32, u32) {
        let (emask, mmask, eo) = simd::edge_masks(c, &self.syms[t]);
        let rest = pext(mmask, !emask & 0xfff);
        (
            self.erow[emask as usize] as u32 + self.mrow[rest as usize & 0xff] as u32,
            eo,
        )
    }

    /// The same as [`Coords::edges`] computed without SIMD (the reference for tests).
    pub fn edges_scalar(&self, c: &Cube, t: usize) -> (u32, u32) {
        let e = c.as_bytes();
        let mut lanes = [0u8; 16];
        lanes.copy_from_slice(&e[..16]);
        let x = self.syms[t].apply_scalar(&lanes);
        let (mut em, mut mm, mut eo) = (0u32, 0u32, 0u32);
        for (i, &b) in x.iter().enumerate().take(12) {
            em |= ((SLICE_LUT[(b & 15) as usize] >> 7) as u32) << i;
            mm |= (((SLICE_LUT[(b & 15) as usize] >> 6) & 1) as u32) << i;
            eo |= ((b >> 4) as u32 & 1) << i;
        }
        let rest = pext(mm, !em & 0xfff);
        (
            self.erow[em as usize] as u32 + self.mrow[rest as usize & 0xff] as u32,
            eo,
        )
    }
}

/// Parallel bit extract: the bits of `x` selected by `mask`, packed to the bottom.
#[inline(always)]
fn pext(x: u32, mask: u32) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    {
        // SAFETY: BMI2 is enabled at compile time (cfg above); `_pext_u32` has no memory
        // effects.
        unsafe { std::arch::x86_64::_pext_u32(x, mask) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "bmi2")))]
    {
        let (mut out, mut k, mut m) = (0u32, 0, mask);
        while m != 0 {
            let b = m.trailing_zeros();
            out |= ((x >> b) & 1) << k;
            k += 1;
            m &= m - 1;
        }
        out
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "ssse3"))]
mod simd {
    use super::{EdgeSym, SLICE_LUT, TETRAD_LUT};
    use std::arch::x86_64::*;
    use tables::Cube;

    /// The two lanes of a cube: (edges, corners).
    #[inline(always)]
    pub fn load(c: &Cube) -> (__m128i, __m128i) {
        // SAFETY: `Cube` is `repr(C, align(16))` with exactly two `[u8; 16]` fields, edges
        // then corners (its documented layout, also what `as_bytes` returns; checked by
        // `layout_matches_as_bytes` below), so both aligned 16-byte loads are in bounds.
        unsafe {
            let p = c as *const Cube as *const __m128i;
            (_mm_load_si128(p), _mm_load_si128(p.add(1)))
        }
    }

    /// (orientation bits of corners 0..7 as low | high << 7, tetrad-1 position mask).
    #[inline(always)]
    pub fn corner_masks(c: &Cube) -> (u32, u32) {
        let (_, cl) = load(c);
        // SAFETY: SSE2/SSSE3 are enabled at compile time (cfg on this module); register
        // operations only.
        unsafe {
            let lo = _mm_movemask_epi8(_mm_slli_epi16(cl, 3)) as u32 & 0x7f;
            let hi = _mm_movemask_epi8(_mm_slli_epi16(cl, 2)) as u32 & 0x7f;
            let lut = _mm_load_si128(TETRAD_LUT_ALIGNED.0.as_ptr() as *const __m128i);
            let t = _mm_shuffle_epi8(lut, _mm_and_si128(cl, _mm_set1_epi8(0x0f)));
            (lo | hi << 7, _mm_movemask_epi8(t) as u32 & 0xff)
        }
    }

    #[repr(C, align(16))]
    struct Aligned([u8; 16]);
    static TETRAD_LUT_ALIGNED: Aligned = Aligned(TETRAD_LUT);
    static SLICE_LUT_ALIGNED: Aligned = Aligned(SLICE_LUT);

    /// (E-slice mask, M-slice mask, orientation bits) of the edges of `S · c · S⁻¹`.
    #[inline(always)]
    pub fn edge_masks(c: &Cube, s: &EdgeSym) -> (u32, u32, u32) {
        let (el, _) = load(c);
        // SAFETY: SSSE3 is enabled at compile time (cfg on this module); `EdgeSym` and
        // `Aligned` are `repr(C, align(16))` with 16-byte arrays, so the loads are aligned
        // and in bounds.
        unsafe {
            let pos = _mm_load_si128(s.pos.as_ptr() as *const __m128i);
            let pmap = _mm_load_si128(s.piece_map.as_ptr() as *const __m128i);
            let peo = _mm_load_si128(s.pos_eo.as_ptr() as *const __m128i);
            let x = _mm_shuffle_epi8(el, pos);
            let piece = _mm_and_si128(x, _mm_set1_epi8(0x0f));
            let y = _mm_xor_si128(
                _mm_xor_si128(_mm_shuffle_epi8(pmap, piece), peo),
                _mm_and_si128(x, _mm_set1_epi8(0x10)),
            );
            let lut = _mm_load_si128(SLICE_LUT_ALIGNED.0.as_ptr() as *const __m128i);
            let sl = _mm_shuffle_epi8(lut, _mm_and_si128(y, _mm_set1_epi8(0x0f)));
            let em = _mm_movemask_epi8(sl) as u32 & 0xfff;
            let mm = _mm_movemask_epi8(_mm_slli_epi16(sl, 1)) as u32 & 0xfff;
            let eo = _mm_movemask_epi8(_mm_slli_epi16(y, 3)) as u32 & 0xfff;
            (em, mm, eo)
        }
    }

    #[cfg(test)]
    #[test]
    fn layout_matches_as_bytes() {
        let c = Cube::from_moves(&tables::parse_moves("R U F' L2 D B'").unwrap());
        let (e, k) = load(&c);
        let mut out = [0u8; 32];
        // SAFETY: unaligned stores into a local 32-byte array, in bounds.
        unsafe {
            _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, e);
            _mm_storeu_si128(out.as_mut_ptr().add(16) as *mut __m128i, k);
        }
        assert_eq!(out, c.as_bytes());
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "ssse3")))]
mod simd {
    use super::{EdgeSym, SLICE_LUT, TETRAD_LUT};
    use tables::Cube;

    pub fn corner_masks(c: &Cube) -> (u32, u32) {
        let (mut lo, mut hi, mut t) = (0u32, 0u32, 0u32);
        for i in 0..7 {
            let o = c.corner_ori(i) as u32;
            lo |= (o & 1) << i;
            hi |= (o >> 1) << i;
        }
        for i in 0..8 {
            t |= ((TETRAD_LUT[c.corner(i) as usize] >> 7) as u32) << i;
        }
        (lo | hi << 7, t)
    }

    pub fn edge_masks(c: &Cube, s: &EdgeSym) -> (u32, u32, u32) {
        let b = c.as_bytes();
        let mut lanes = [0u8; 16];
        lanes.copy_from_slice(&b[..16]);
        let x = s.apply_scalar(&lanes);
        let (mut em, mut mm, mut eo) = (0u32, 0u32, 0u32);
        for (i, &v) in x.iter().enumerate().take(12) {
            em |= ((SLICE_LUT[(v & 15) as usize] >> 7) as u32) << i;
            mm |= (((SLICE_LUT[(v & 15) as usize] >> 6) & 1) as u32) << i;
            eo |= ((v >> 4) as u32 & 1) << i;
        }
        (em, mm, eo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables::coord::Composite;
    use tables::SplitMix64;

    #[test]
    fn fast_coordinates_match_tables() {
        let co = Coords::new();
        let syms = symmetries();
        let cocsep = Composite::new(Twist, CornerSep);
        let mut rng = SplitMix64::new(7);
        for k in 0..2000 {
            let c = Cube::random(&mut rng);
            assert_eq!(co.cocsep_raw(&c), cocsep.index(&c) as usize, "cube {k}");
            let t = k % NSYM;
            let conj = syms.conjugate(&c, t);
            let (esep, eo) = co.edges(&c, t);
            assert_eq!(esep, EdgeSep.index(&conj));
            let want_eo = (0..12).fold(0, |m, i| m | (conj.edge_ori(i) as u32) << i);
            assert_eq!(eo, want_eo);
            assert_eq!(co.edges_scalar(&c, t), (esep, eo));
        }
        assert_eq!(co.cocsep_raw(&Cube::SOLVED), 0);
        assert_eq!(co.edges(&Cube::SOLVED, 0), (0, 0));
    }
}
