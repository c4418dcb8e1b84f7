//! Coordinates: numbering positions (or cosets of positions) as integers 0..n, the four kinds
//! of seed 000.
//!
//! - **basic** ([`Coord`] implementors in [`basic`]): `index`, `to_cube`, `size`.
//! - **composite** ([`Composite`]): `a + size_a · b` over two coordinates that describe
//!   disjoint parts of the cube ([`Parts`]).
//! - **symmetric** ([`SymCoord`]): a basic coordinate reduced by a set of symmetries (the
//!   first 16 or all 48), with the class, representative, transformation-to-representative
//!   and self-symmetry tables, and a move table on classes with offsets.
//! - **symmetric-composite** ([`SymComposite`]): `class · size_b + t(b)`, where `t` is the
//!   transformation that brings the symmetric part to its representative.
//!
//! Move tables ([`MoveTable`]) and transformation tables ([`TransformTable`]) are built from
//! `to_cube`/`index` and the cubie-level moves and symmetries, so they agree with them by
//! construction; the tests check it anyway.

pub mod basic;

use crate::cube::Cube;
use crate::moves::Move;
use crate::symmetry::{symmetries, NSYM};
use rayon::prelude::*;

/// Which fields of the cube a coordinate reads (and `to_cube` sets). Composite coordinates
/// need disjoint parts so that `to_cube` can merge the two halves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts(u8);

impl Parts {
    /// Corner permutation.
    pub const CP: Parts = Parts(1);
    /// Corner orientation.
    pub const CO: Parts = Parts(2);
    /// Edge permutation.
    pub const EP: Parts = Parts(4);
    /// Edge orientation.
    pub const EO: Parts = Parts(8);

    /// Union.
    pub const fn union(self, o: Parts) -> Parts {
        Parts(self.0 | o.0)
    }
    /// Do the two share a field?
    pub const fn overlaps(self, o: Parts) -> bool {
        self.0 & o.0 != 0
    }
    /// A cube with `b`'s fields where `self` says, `a`'s elsewhere.
    pub fn merge(self, a: &Cube, b: &Cube) -> Cube {
        let pick = |p: Parts, x: [u8; 8], y: [u8; 8]| if self.0 & p.0 != 0 { y } else { x };
        let pick12 = |p: Parts, x: [u8; 12], y: [u8; 12]| if self.0 & p.0 != 0 { y } else { x };
        Cube::from_parts_unchecked(
            pick(Parts::CP, a.cp(), b.cp()),
            pick(Parts::CO, a.co(), b.co()),
            pick12(Parts::EP, a.ep(), b.ep()),
            pick12(Parts::EO, a.eo(), b.eo()),
        )
    }
}

/// A coordinate: a function from positions to `0..size()` with a section `to_cube`.
///
/// Laws (tested for every coordinate): `index(to_cube(x)) == x` for all `x < size()`, and
/// `index` depends only on the coset, so moving `to_cube(x)` gives a well-defined result.
pub trait Coord: Sync + Send {
    /// A short name, used in table names and messages.
    fn name(&self) -> &'static str;
    /// Number of values.
    fn size(&self) -> u32;
    /// Which parts of the cube it reads.
    fn parts(&self) -> Parts;
    /// The coordinate of a cube.
    fn index(&self, c: &Cube) -> u32;
    /// A cube (not necessarily legal) whose coordinate is `x`; fields outside `parts()` are
    /// solved.
    fn to_cube(&self, x: u32) -> Cube;
}

/// Two coordinates on disjoint parts: `a + size_a · b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Composite<A, B> {
    /// Low part.
    pub a: A,
    /// High part.
    pub b: B,
}

impl<A: Coord, B: Coord> Composite<A, B> {
    /// Combines two coordinates; panics if they read the same part (a programming error,
    /// never input-dependent).
    pub fn new(a: A, b: B) -> Self {
        assert!(
            !a.parts().overlaps(b.parts()),
            "composite of overlapping coordinates {} and {}",
            a.name(),
            b.name()
        );
        Composite { a, b }
    }
}

impl<A: Coord, B: Coord> Coord for Composite<A, B> {
    fn name(&self) -> &'static str {
        "composite"
    }
    fn size(&self) -> u32 {
        self.a.size() * self.b.size()
    }
    fn parts(&self) -> Parts {
        self.a.parts().union(self.b.parts())
    }
    #[inline]
    fn index(&self, c: &Cube) -> u32 {
        self.a.index(c) + self.a.size() * self.b.index(c)
    }
    fn to_cube(&self, x: u32) -> Cube {
        let ca = self.a.to_cube(x % self.a.size());
        let cb = self.b.to_cube(x / self.a.size());
        self.b.parts().merge(&ca, &cb)
    }
}

/// `table[x · 18 + m] = index(to_cube(x) · m)`.
#[derive(Clone)]
pub struct MoveTable {
    size: u32,
    data: Vec<u32>,
}

impl MoveTable {
    /// Builds the table (multi-threaded).
    pub fn new<C: Coord + ?Sized>(coord: &C) -> MoveTable {
        let size = coord.size();
        let mut data = vec![0u32; size as usize * 18];
        data.par_chunks_mut(18).enumerate().for_each(|(x, row)| {
            let c = coord.to_cube(x as u32);
            for m in Move::ALL {
                row[m.index()] = coord.index(&c.apply_move(m));
            }
        });
        MoveTable { size, data }
    }
    /// Number of coordinate values.
    pub fn size(&self) -> u32 {
        self.size
    }
    /// The coordinate after move `m`.
    #[inline(always)]
    pub fn get(&self, x: u32, m: Move) -> u32 {
        self.data[x as usize * 18 + m.index()]
    }
    /// The raw rows, `x · 18 + m`.
    pub fn as_slice(&self) -> &[u32] {
        &self.data
    }
}

/// `table[s · size + x] = index(S_s · to_cube(x) · S_s⁻¹)` for the first `nsym` symmetries.
/// Only meaningful for coordinates whose cosets those symmetries preserve.
#[derive(Clone)]
pub struct TransformTable {
    size: u32,
    nsym: usize,
    data: Vec<u32>,
}

impl TransformTable {
    /// Builds the table for symmetries `0..nsym` (16 or 48).
    pub fn new<C: Coord + ?Sized>(coord: &C, nsym: usize) -> TransformTable {
        let size = coord.size();
        let syms = symmetries();
        let mut data = vec![0u32; size as usize * nsym];
        data.par_chunks_mut(size as usize)
            .enumerate()
            .for_each(|(s, row)| {
                for (x, v) in row.iter_mut().enumerate() {
                    *v = coord.index(&syms.conjugate(&coord.to_cube(x as u32), s));
                }
            });
        TransformTable { size, nsym, data }
    }
    /// Number of symmetries covered.
    pub fn nsym(&self) -> usize {
        self.nsym
    }
    /// The coordinate of the conjugated cube.
    #[inline(always)]
    pub fn get(&self, s: usize, x: u32) -> u32 {
        self.data[s * self.size as usize + x as usize]
    }
}

/// A basic coordinate reduced by the symmetries `0..nsym`.
pub struct SymCoord {
    /// Raw values.
    raw_size: u32,
    /// Symmetries used (16 or 48).
    nsym: usize,
    /// raw → class.
    class_of: Vec<u32>,
    /// raw → the symmetry `s` with `conj(raw, s)` = representative.
    ttrep: Vec<u8>,
    /// class → raw value of its representative (the smallest raw value in the class).
    reps: Vec<u32>,
    /// class → bit `s` set when `conj(rep, s)` has the representative's raw value.
    selfsym: Vec<u64>,
    /// `move_class[class · 18 + m]` = class of `rep · m`.
    move_class: Vec<u32>,
    /// `move_sym[class · 18 + m]` = ttrep of `rep · m`.
    move_sym: Vec<u8>,
}

impl SymCoord {
    /// Reduces `raw` by the symmetries `0..nsym`, using its move table.
    pub fn new<C: Coord + ?Sized>(raw: &C, nsym: usize) -> SymCoord {
        assert!(nsym == 16 || nsym == NSYM);
        let trans = TransformTable::new(raw, nsym);
        let raw_size = raw.size();
        let inv = &symmetries().inv;
        let mut class_of = vec![u32::MAX; raw_size as usize];
        let mut ttrep = vec![0u8; raw_size as usize];
        let mut reps = Vec::new();
        let mut selfsym = Vec::new();
        for x in 0..raw_size {
            if class_of[x as usize] != u32::MAX {
                continue;
            }
            let class = reps.len() as u32;
            reps.push(x);
            let mut mask = 0u64;
            for (s, &inv_s) in inv.iter().enumerate().take(nsym) {
                let y = trans.get(s, x);
                if y == x {
                    mask |= 1 << s;
                }
                if class_of[y as usize] == u32::MAX {
                    class_of[y as usize] = class;
                    // conj(y, inv s) = x
                    ttrep[y as usize] = inv_s;
                }
            }
            selfsym.push(mask);
        }
        let moves = MoveTable::new(raw);
        let mut move_class = vec![0u32; reps.len() * 18];
        let mut move_sym = vec![0u8; reps.len() * 18];
        for (k, &r) in reps.iter().enumerate() {
            for m in Move::ALL {
                let y = moves.get(r, m) as usize;
                move_class[k * 18 + m.index()] = class_of[y];
                move_sym[k * 18 + m.index()] = ttrep[y];
            }
        }
        SymCoord {
            raw_size,
            nsym,
            class_of,
            ttrep,
            reps,
            selfsym,
            move_class,
            move_sym,
        }
    }

    /// Number of classes.
    pub fn classes(&self) -> u32 {
        self.reps.len() as u32
    }
    /// Number of raw values.
    pub fn raw_size(&self) -> u32 {
        self.raw_size
    }
    /// Symmetries used.
    pub fn nsym(&self) -> usize {
        self.nsym
    }
    /// Class of a raw value.
    #[inline(always)]
    pub fn class_of(&self, raw: u32) -> u32 {
        self.class_of[raw as usize]
    }
    /// Symmetry bringing a raw value to its class representative.
    #[inline(always)]
    pub fn ttrep(&self, raw: u32) -> usize {
        self.ttrep[raw as usize] as usize
    }
    /// Raw value of a class's representative.
    #[inline(always)]
    pub fn rep(&self, class: u32) -> u32 {
        self.reps[class as usize]
    }
    /// Self-symmetries of a class's representative, as a bit mask over `0..nsym`.
    #[inline(always)]
    pub fn selfsym(&self, class: u32) -> u64 {
        self.selfsym[class as usize]
    }
    /// `(class, ttrep)` of `rep(class) · m`.
    #[inline(always)]
    pub fn apply_move(&self, class: u32, m: Move) -> (u32, usize) {
        let k = class as usize * 18 + m.index();
        (self.move_class[k], self.move_sym[k] as usize)
    }
}

/// A symmetric coordinate combined with a coordinate that the same symmetries act on:
/// value = `class · size_b + b(S · c · S⁻¹)` where `S` brings the symmetric part to its
/// representative.
pub struct SymComposite<A, B> {
    /// The raw coordinate reduced by symmetry.
    pub a: A,
    /// The other coordinate.
    pub b: B,
    /// The reduction of `a`.
    pub sym: SymCoord,
    /// Moves of `b`.
    pub b_moves: MoveTable,
    /// Transformations of `b`.
    pub b_trans: TransformTable,
}

impl<A: Coord, B: Coord> SymComposite<A, B> {
    /// Builds every table it needs.
    pub fn new(a: A, b: B, nsym: usize) -> Self {
        assert!(!a.parts().overlaps(b.parts()));
        let sym = SymCoord::new(&a, nsym);
        let b_moves = MoveTable::new(&b);
        let b_trans = TransformTable::new(&b, nsym);
        SymComposite {
            a,
            b,
            sym,
            b_moves,
            b_trans,
        }
    }

    /// Number of values: classes · size_b.
    pub fn size(&self) -> u64 {
        self.sym.classes() as u64 * self.b.size() as u64
    }

    /// The coordinate of a cube.
    #[inline]
    pub fn index(&self, c: &Cube) -> u64 {
        let ra = self.a.index(c);
        let class = self.sym.class_of(ra);
        let t = self.sym.ttrep(ra);
        let rb = self.b_trans.get(t, self.b.index(c));
        class as u64 * self.b.size() as u64 + rb as u64
    }

    /// A cube with the given coordinate (symmetric part at its representative).
    pub fn to_cube(&self, x: u64) -> Cube {
        let nb = self.b.size() as u64;
        let ca = self.a.to_cube(self.sym.rep((x / nb) as u32));
        let cb = self.b.to_cube((x % nb) as u32);
        self.b.parts().merge(&ca, &cb)
    }

    /// The coordinate after move `m`, by table lookups only.
    #[inline(always)]
    pub fn apply_move(&self, x: u64, m: Move) -> u64 {
        let nb = self.b.size() as u64;
        let (class, b) = ((x / nb) as u32, (x % nb) as u32);
        let (nc, s) = self.sym.apply_move(class, m);
        let nbv = self.b_trans.get(s, self.b_moves.get(b, m));
        nc as u64 * nb + nbv as u64
    }

    /// Calls `f` with every value equivalent to `x` under the self-symmetries of its class
    /// (including `x` itself). Values equivalent this way describe positions of equal
    /// distance, so pruning tables must give them the same depth.
    #[inline]
    pub fn for_each_equivalent<F: FnMut(u64)>(&self, x: u64, mut f: F) {
        let nb = self.b.size() as u64;
        let (class, b) = (x / nb, (x % nb) as u32);
        f(x);
        let mut mask = self.sym.selfsym(class as u32) & !1;
        while mask != 0 {
            let s = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let y = class * nb + self.b_trans.get(s, b) as u64;
            if y != x {
                f(y);
            }
        }
    }
}

impl<A: Coord, B: Coord> crate::bfs::PruneSpace for SymComposite<A, B> {
    fn size(&self) -> u64 {
        SymComposite::size(self)
    }
    fn solved(&self) -> Vec<u64> {
        let mut v = Vec::new();
        self.for_each_equivalent(self.index(&Cube::SOLVED), |y| v.push(y));
        v
    }
    #[inline]
    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, mut f: F) {
        for m in Move::ALL {
            self.for_each_equivalent(self.apply_move(x, m), &mut f);
        }
    }
    #[inline]
    fn any_neighbour<P: FnMut(u64) -> bool>(&self, x: u64, mut pred: P) -> bool {
        // Backward search asks "is some neighbour at depth d?". Every self-symmetric image
        // of a neighbour has the same depth as the neighbour, so the plain neighbours are
        // enough here.
        Move::ALL.iter().any(|&m| pred(self.apply_move(x, m)))
    }
}

/// A plain (not symmetry-reduced) coordinate walked with its move table, as a pruning space.
pub struct RawSpace {
    moves: MoveTable,
}

impl RawSpace {
    /// Builds the move table of `coord`.
    pub fn new<C: Coord + ?Sized>(coord: &C) -> RawSpace {
        RawSpace {
            moves: MoveTable::new(coord),
        }
    }
}

impl crate::bfs::PruneSpace for RawSpace {
    fn size(&self) -> u64 {
        self.moves.size() as u64
    }
    fn solved(&self) -> Vec<u64> {
        vec![0]
    }
    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, mut f: F) {
        for m in Move::ALL {
            f(self.moves.get(x as u32, m) as u64);
        }
    }
}

#[cfg(test)]
mod tests;
