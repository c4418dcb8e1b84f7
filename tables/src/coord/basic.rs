//! The basic coordinates both solvers need (seed 000's "basic" kind).
//!
//! Kociemba's (two-phase): [`Twist`], [`Flip`], [`UdSlice`], [`CornerPerm`], [`Edge8Perm`],
//! [`Slice4Perm`], [`UdSliceSorted`]. H48's: [`CornerSep`], [`EdgeSep`] (and [`Flip`] for
//! the edge orientation part). Every one maps the solved cube to 0.

use super::{Coord, Parts};
use crate::cube::Cube;

/// Binomial coefficient C(n, k) for small arguments.
pub const fn binom(n: u32, k: u32) -> u32 {
    if k > n {
        return 0;
    }
    let mut r = 1u64;
    let mut i = 0;
    while i < k {
        r = r * (n - i) as u64 / (i + 1) as u64;
        i += 1;
    }
    r as u32
}

/// Lehmer-style code used by Kociemba: for i from n-1 down to 1, count the entries left of
/// i that are larger, accumulate `x = (x + s) * i`.
#[inline]
pub fn perm_index(p: &[u8]) -> u32 {
    let mut x = 0u32;
    for i in (1..p.len()).rev() {
        let mut s = 0;
        for j in 0..i {
            if p[j] > p[i] {
                s += 1;
            }
        }
        x = (x + s) * i as u32;
    }
    x
}

/// Inverse of [`perm_index`] for a permutation of `0..n`.
pub fn perm_from_index(mut x: u32, n: usize) -> Vec<u8> {
    // Digits: x = sum d_i * i! with 0 <= d_i <= i.
    let mut digits = vec![0u32; n];
    for (i, d) in digits.iter_mut().enumerate().skip(1) {
        *d = x % (i as u32 + 1);
        x /= i as u32 + 1;
    }
    let mut avail: Vec<u8> = (0..n as u8).collect();
    let mut p = vec![0u8; n];
    for i in (0..n).rev() {
        // digits[i] entries to the left of i are larger than p[i]: p[i] is the
        // (len - 1 - d)-th smallest of the remaining ones.
        let k = avail.len() - 1 - digits[i] as usize;
        p[i] = avail.remove(k);
    }
    p
}

/// Corner orientation, 3^7 = 2187 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct Twist;
impl Coord for Twist {
    fn name(&self) -> &'static str {
        "twist"
    }
    fn size(&self) -> u32 {
        2187
    }
    fn parts(&self) -> Parts {
        Parts::CO
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        (0..7).fold(0, |s, i| 3 * s + c.corner_ori(i) as u32)
    }
    fn to_cube(&self, mut x: u32) -> Cube {
        let mut co = [0u8; 8];
        let mut sum = 0;
        for i in (0..7).rev() {
            co[i] = (x % 3) as u8;
            sum += co[i];
            x /= 3;
        }
        co[7] = (3 - sum % 3) % 3;
        Cube::from_parts_unchecked(Cube::SOLVED.cp(), co, Cube::SOLVED.ep(), [0; 12])
    }
}

/// Edge orientation (UD-axis convention), 2^11 = 2048 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flip;
impl Coord for Flip {
    fn name(&self) -> &'static str {
        "flip"
    }
    fn size(&self) -> u32 {
        2048
    }
    fn parts(&self) -> Parts {
        Parts::EO
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        (0..11).fold(0, |s, i| 2 * s + c.edge_ori(i) as u32)
    }
    fn to_cube(&self, mut x: u32) -> Cube {
        let mut eo = [0u8; 12];
        let mut sum = 0;
        for i in (0..11).rev() {
            eo[i] = (x % 2) as u8;
            sum += eo[i];
            x /= 2;
        }
        eo[11] = sum % 2;
        Cube::from_parts_unchecked(Cube::SOLVED.cp(), [0; 8], Cube::SOLVED.ep(), eo)
    }
}

/// Positions of the four E-slice edges (FR FL BL BR), C(12,4) = 495 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct UdSlice;

#[inline]
fn slice_comb(c: &Cube) -> u32 {
    let mut a = 0;
    let mut x = 0;
    for j in (0..12).rev() {
        if c.edge(j) >= 8 {
            a += binom(11 - j as u32, x + 1);
            x += 1;
        }
    }
    a
}

fn slice_positions(mut a: u32) -> [bool; 12] {
    let mut is_slice = [false; 12];
    let mut x = 4u32;
    for (j, slot) in is_slice.iter_mut().enumerate() {
        if x == 0 {
            break;
        }
        // Undo the encoding from position 0 upwards: position j is a slice edge iff the
        // remaining value is at least C(11 - j, x).
        let v = binom(11 - j as u32, x);
        if a >= v {
            a -= v;
            *slot = true;
            x -= 1;
        }
    }
    is_slice
}

impl Coord for UdSlice {
    fn name(&self) -> &'static str {
        "udslice"
    }
    fn size(&self) -> u32 {
        495
    }
    fn parts(&self) -> Parts {
        Parts::EP
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        slice_comb(c)
    }
    fn to_cube(&self, x: u32) -> Cube {
        slice_cube(x, &[0, 1, 2, 3])
    }
}

/// A cube with the E-slice edges at the positions of UD-slice value `comb`, in the given
/// order (`order[k]` = which slice edge, 0..4, is the k-th met), the other edges in order.
fn slice_cube(comb: u32, order: &[u8]) -> Cube {
    let is_slice = slice_positions(comb);
    let mut ep = [0u8; 12];
    let (mut s, mut o) = (0usize, 0u8);
    for j in 0..12 {
        if is_slice[j] {
            ep[j] = 8 + order[s];
            s += 1;
        } else {
            ep[j] = o;
            o += 1;
        }
    }
    Cube::from_parts_unchecked(Cube::SOLVED.cp(), [0; 8], ep, [0; 12])
}

/// Positions and order of the four E-slice edges: 495 · 24 = 11880 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct UdSliceSorted;
impl Coord for UdSliceSorted {
    fn name(&self) -> &'static str {
        "udslicesorted"
    }
    fn size(&self) -> u32 {
        11880
    }
    fn parts(&self) -> Parts {
        Parts::EP
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        let mut order = [0u8; 4];
        let mut k = 0;
        for j in 0..12 {
            let e = c.edge(j);
            if e >= 8 {
                order[k] = e - 8;
                k += 1;
            }
        }
        slice_comb(c) * 24 + perm_index(&order)
    }
    fn to_cube(&self, x: u32) -> Cube {
        slice_cube(x / 24, &perm_from_index(x % 24, 4))
    }
}

/// Corner permutation, 8! = 40320 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct CornerPerm;
impl Coord for CornerPerm {
    fn name(&self) -> &'static str {
        "cornerperm"
    }
    fn size(&self) -> u32 {
        40320
    }
    fn parts(&self) -> Parts {
        Parts::CP
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        perm_index(&c.cp())
    }
    fn to_cube(&self, x: u32) -> Cube {
        let p = perm_from_index(x, 8);
        let mut cp = [0u8; 8];
        cp.copy_from_slice(&p);
        Cube::from_parts_unchecked(cp, [0; 8], Cube::SOLVED.ep(), [0; 12])
    }
}

/// Permutation of the eight U/D-layer edges, for positions in phase 2 (slice edges in the
/// slice): 8! = 40320 values. Only meaningful when edges 0..8 are in positions 0..8.
#[derive(Clone, Copy, Debug, Default)]
pub struct Edge8Perm;
impl Coord for Edge8Perm {
    fn name(&self) -> &'static str {
        "edge8perm"
    }
    fn size(&self) -> u32 {
        40320
    }
    fn parts(&self) -> Parts {
        Parts::EP
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        let mut p = [0u8; 8];
        for (i, v) in p.iter_mut().enumerate() {
            *v = c.edge(i);
        }
        perm_index(&p)
    }
    fn to_cube(&self, x: u32) -> Cube {
        let p = perm_from_index(x, 8);
        let mut ep = Cube::SOLVED.ep();
        ep[..8].copy_from_slice(&p);
        Cube::from_parts_unchecked(Cube::SOLVED.cp(), [0; 8], ep, [0; 12])
    }
}

/// Permutation of the four E-slice edges within the slice (phase 2): 4! = 24 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slice4Perm;
impl Coord for Slice4Perm {
    fn name(&self) -> &'static str {
        "slice4perm"
    }
    fn size(&self) -> u32 {
        24
    }
    fn parts(&self) -> Parts {
        Parts::EP
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        let p = [c.edge(8) & 3, c.edge(9) & 3, c.edge(10) & 3, c.edge(11) & 3];
        perm_index(&p)
    }
    fn to_cube(&self, x: u32) -> Cube {
        let p = perm_from_index(x, 4);
        let mut ep = Cube::SOLVED.ep();
        for i in 0..4 {
            ep[8 + i] = 8 + p[i];
        }
        Cube::from_parts_unchecked(Cube::SOLVED.cp(), [0; 8], ep, [0; 12])
    }
}

/// The corner tetrad of each corner piece: {URF, ULB, DLF, DRB} = 0, {UFL, UBR, DFR, DBL} = 1.
pub const TETRAD: [u8; 8] = [0, 1, 0, 1, 1, 0, 1, 0];

/// Corner separation: which positions hold tetrad-0 corners, C(8,4) = 70 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct CornerSep;
impl Coord for CornerSep {
    fn name(&self) -> &'static str {
        "cornersep"
    }
    fn size(&self) -> u32 {
        70
    }
    fn parts(&self) -> Parts {
        Parts::CP
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        // Positions holding tetrad-1 pieces, as a combination; solved = positions 1,3,4,6.
        let mask = (0..8).fold(0u32, |m, i| {
            m | ((TETRAD[c.corner(i) as usize] as u32) << i)
        });
        swap_zero(comb_rank(mask, 8, 4), SOLVED_CSEP)
    }
    fn to_cube(&self, x: u32) -> Cube {
        let mask = comb_unrank(swap_zero(x, SOLVED_CSEP), 8, 4);
        let (mut a, mut b) = (0usize, 0usize);
        let t0 = [0u8, 2, 5, 7];
        let t1 = [1u8, 3, 4, 6];
        let mut cp = [0u8; 8];
        for (i, v) in cp.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *v = t1[b];
                b += 1;
            } else {
                *v = t0[a];
                a += 1;
            }
        }
        Cube::from_parts_unchecked(cp, [0; 8], Cube::SOLVED.ep(), [0; 12])
    }
}

/// Rank of a k-subset (bitmask over n positions) in colexicographic order, 0..C(n,k).
#[inline]
pub fn comb_rank(mask: u32, n: u32, k: u32) -> u32 {
    let mut r = 0;
    let mut seen = 0;
    for i in 0..n {
        if mask & (1 << i) != 0 {
            seen += 1;
            r += binom(i, seen);
        }
    }
    debug_assert_eq!(seen, k);
    r
}

/// Inverse of [`comb_rank`].
pub fn comb_unrank(mut r: u32, n: u32, k: u32) -> u32 {
    let mut mask = 0;
    let mut left = k;
    for i in (0..n).rev() {
        if left == 0 {
            break;
        }
        let v = binom(i, left);
        if r >= v {
            r -= v;
            mask |= 1 << i;
            left -= 1;
        }
    }
    mask
}

/// Rank of the solved corner separation (tetrad-1 positions 1,3,4,6), swapped with 0 so
/// that solved = 0.
const SOLVED_CSEP: u32 = {
    // colex rank of {1,3,4,6}: C(1,1) + C(3,2) + C(4,3) + C(6,4) = 1 + 3 + 4 + 15 = 23
    23
};

/// The slice each edge belongs to: M = {UF, UB, DF, DB} = 1, S = {UR, UL, DR, DL} = 0,
/// E = {FR, FL, BL, BR} = 2.
pub const EDGE_SLICE: [u8; 12] = [0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2];

/// Edge separation for H48: which positions hold E-slice edges (C(12,4) = 495) and, among
/// the other eight, which hold M-slice edges (C(8,4) = 70): 34650 values.
#[derive(Clone, Copy, Debug, Default)]
pub struct EdgeSep;
impl Coord for EdgeSep {
    fn name(&self) -> &'static str {
        "edgesep"
    }
    fn size(&self) -> u32 {
        34650
    }
    fn parts(&self) -> Parts {
        Parts::EP
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        let e = slice_comb(c);
        let mut mask = 0u32;
        let mut k = 0;
        for j in 0..12 {
            let s = EDGE_SLICE[c.edge(j) as usize];
            if s != 2 {
                mask |= ((s == 1) as u32) << k;
                k += 1;
            }
        }
        e * 70 + swap_zero(comb_rank(mask, 8, 4), SOLVED_MSEP)
    }
    fn to_cube(&self, x: u32) -> Cube {
        let is_slice = slice_positions(x / 70);
        let mask = comb_unrank(swap_zero(x % 70, SOLVED_MSEP), 8, 4);
        let (mut e, mut m, mut s, mut k) = (8u8, 1u8, 0u8, 0);
        let mut ep = [0u8; 12];
        for j in 0..12 {
            if is_slice[j] {
                ep[j] = e;
                e += 1;
            } else {
                if mask & (1 << k) != 0 {
                    ep[j] = m;
                    m += 2;
                } else {
                    ep[j] = s;
                    s += 2;
                }
                k += 1;
            }
        }
        Cube::from_parts_unchecked(Cube::SOLVED.cp(), [0; 8], ep, [0; 12])
    }
}

/// Solved M-slice mask among the 8 non-E positions (1, 3, 5, 7): colex rank
/// C(1,1) + C(3,2) + C(5,3) + C(7,4) = 1 + 3 + 10 + 35 = 49.
const SOLVED_MSEP: u32 = 49;

/// Exchanges the values 0 and `s`, leaves others: a bijection that makes solved = 0.
#[inline(always)]
const fn swap_zero(r: u32, s: u32) -> u32 {
    if r == s {
        0
    } else if r == 0 {
        s
    } else {
        r
    }
}
