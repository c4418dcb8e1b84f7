//! A position's own symmetry: which of the 48 symmetries fix it (`S·c·S⁻¹ = c`), and which
//! map it to its inverse (`S·c·S⁻¹ = c⁻¹`). A search may then visit one move prefix per
//! orbit of the fixing group (a prefix's image by a fixing symmetry leads to the image
//! of its solutions), and an inverting symmetry ties the position's solutions to those of
//! its inverse (a solution's inverse, conjugated).
//!
//! Computed once per position: 48 conjugations and one inverse.

use super::{Symmetries, NSYM};
use crate::Cube;

/// A set of the 48 symmetries, by number: bit `s` is symmetry `s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SymSet(pub u64);

impl SymSet {
    /// Every symmetry.
    pub const ALL: SymSet = SymSet((1 << NSYM) - 1);

    /// How many symmetries it holds.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether it holds none.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether it holds symmetry `s`.
    pub fn contains(self, s: usize) -> bool {
        s < NSYM && self.0 >> s & 1 == 1
    }

    /// Its symmetries, in increasing number.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..NSYM).filter(move |&s| self.contains(s))
    }

    fn insert(&mut self, s: usize) {
        self.0 |= 1 << s;
    }
}

/// What of the 48 symmetries one position has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelfSymmetry {
    /// The subgroup that fixes it: `S·c·S⁻¹ = c` (always holds the identity, 0).
    pub fixing: SymSet,
    /// Those that map it to its inverse: `S·c·S⁻¹ = c⁻¹` (empty, or a coset of `fixing`).
    pub inverting: SymSet,
}

impl Symmetries {
    /// The symmetry of position `c`.
    pub fn of_cube(&self, c: &Cube) -> SelfSymmetry {
        let inverse = c.inverse();
        let mut fixing = SymSet::default();
        let mut inverting = SymSet::default();
        for s in 0..NSYM {
            let image = self.conjugate(c, s);
            if image == *c {
                fixing.insert(s);
            }
            if image == inverse {
                inverting.insert(s);
            }
        }
        SelfSymmetry { fixing, inverting }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_moves, symmetries, Position, SplitMix64};

    fn of(scramble: &str) -> SelfSymmetry {
        let p = Position::parse(scramble).unwrap();
        symmetries().of_cube(p.cube())
    }

    const SUPERFLIP: &str = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";

    /// `fixing` is a subgroup, and `inverting` empty or one coset of it.
    fn assert_structure(x: SelfSymmetry) {
        let s = symmetries();
        assert!(x.fixing.contains(0));
        for a in x.fixing.iter() {
            assert!(x.fixing.contains(s.inv[a] as usize));
            for b in x.fixing.iter() {
                assert!(x.fixing.contains(s.mult[a][b] as usize));
            }
        }
        if let Some(t) = x.inverting.iter().next() {
            let coset: u64 = x
                .fixing
                .iter()
                .map(|f| 1u64 << s.mult[t][f])
                .fold(0, |a, b| a | b);
            assert_eq!(SymSet(coset), x.inverting);
        }
    }

    #[test]
    fn known_positions_have_their_known_symmetry() {
        // (scramble, |fixing|, |inverting|), worked out by hand: a quarter turn of U is
        // kept by the 4 rotations about UD and inverted by the 4 mirrors in vertical
        // planes; U2 is kept by those 8; U2 D2 by the 16 that keep the UD axis.
        for (scramble, fixing, inverting) in [
            ("", 48, 48),
            (SUPERFLIP, 48, 48),
            ("U", 4, 4),
            ("U2", 8, 8),
            ("U2 D2", 16, 16),
        ] {
            let x = of(scramble);
            assert_eq!(
                (x.fixing.len(), x.inverting.len()),
                (fixing, inverting),
                "{scramble:?}"
            );
            assert_structure(x);
        }
    }

    /// U2 F2 is kept only by the left-right mirror (which keeps both half turns), besides
    /// the identity.
    #[test]
    fn a_two_fold_position() {
        let x = of("U2 F2");
        assert_eq!(x.fixing.len(), 2, "{x:?}");
        assert_structure(x);
        // The one besides the identity is a mirror.
        let s = x.fixing.iter().find(|&s| s != 0).unwrap();
        assert!(symmetries().syms[s].is_mirror());
    }

    #[test]
    fn random_positions_have_none_but_the_identity() {
        let mut rng = SplitMix64::new(37);
        for _ in 0..200 {
            let c = Cube::random(&mut rng);
            let x = symmetries().of_cube(&c);
            assert_eq!(x.fixing, SymSet(1));
            assert!(x.inverting.is_empty());
        }
    }

    /// A fixing symmetry maps each solution to a solution (the moves conjugated), and an
    /// inverting one maps a solution's inverse to a solution.
    #[test]
    fn symmetries_carry_solutions_to_solutions() {
        let s = symmetries();
        for scramble in ["U", "U2 F2", SUPERFLIP, "R2 L2 U2 D2"] {
            let p = Position::parse(scramble).unwrap();
            let moves = parse_moves(scramble).unwrap();
            let solution = crate::notation::invert_moves(&moves);
            let x = s.of_cube(p.cube());
            assert_structure(x);
            for t in x.fixing.iter() {
                let image: Vec<_> = solution.iter().map(|m| s.conj_move[t][m.index()]).collect();
                assert!(p.is_solved_by(&image), "{scramble:?} by {t}");
            }
            for t in x.inverting.iter() {
                // The inverse of a solution solves c⁻¹; conjugated by t, it solves c.
                let image: Vec<_> = moves.iter().map(|m| s.conj_move[t][m.index()]).collect();
                assert!(p.is_solved_by(&image), "{scramble:?} inverted by {t}");
            }
        }
    }
}
