//! The 48 symmetries of the cube (24 rotations, each with or without a left-right mirror)
//! acting on positions by conjugation.
//!
//! Numbering (Kociemba's): symmetry `16a + 8b + 2c + d` is `URF3^a · F2^b · U4^c · LR2^d`
//! with `a < 3, b < 2, c < 4, d < 2`, where URF3 is the 120° rotation about the URF–DBL
//! diagonal, F2 the half turn about the F axis, U4 the quarter turn about the U axis and LR2
//! the left-right mirror. Symmetries 0..16 are the ones that keep the UD axis; odd ones are
//! mirrors.
//!
//! `conjugate(c, s) = S · c · S⁻¹` (compose left to right as [`Cube::compose`]). It is an
//! automorphism: it maps solved to solved, moves to moves, and products to products.
//!
//! # Layout
//! - this file: the symmetries, their products and inverses, their action on moves and
//!   cubes;
//! - `of_cube`: a position's own symmetry ([`SelfSymmetry`]);
//! - `orbits`: the move prefixes a search of a symmetric position keeps, and its solutions
//!   made whole again ([`PrefixOrbits`], [`PrefixClasses`]).

use crate::cube::Cube;
use crate::moves::Move;

/// Number of symmetries.
pub const NSYM: usize = 48;

mod of_cube;
mod orbits;
pub use of_cube::{SelfSymmetry, SymSet};
pub use orbits::{canonical_order, Kept, PrefixClasses, PrefixOrbits};
/// Number of symmetries that keep the UD axis (the first 16).
pub const NSYM_UD: usize = 16;

/// A cube in the generalised cubie representation, where corner orientation 3..6 marks a
/// mirrored corner. Only used to derive the symmetries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct GCube {
    cp: [u8; 8],
    co: [u8; 8],
    ep: [u8; 12],
    eo: [u8; 12],
}

impl GCube {
    const ID: GCube = GCube {
        cp: [0, 1, 2, 3, 4, 5, 6, 7],
        co: [0; 8],
        ep: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        eo: [0; 12],
    };

    fn mul(&self, b: &GCube) -> GCube {
        let mut r = GCube::ID;
        for i in 0..8 {
            let j = b.cp[i] as usize;
            r.cp[i] = self.cp[j];
            let (oa, ob) = (self.co[j], b.co[i]);
            r.co[i] = match (oa < 3, ob < 3) {
                (true, true) => (oa + ob) % 3,
                (true, false) => {
                    let o = oa + ob;
                    if o >= 6 {
                        o - 3
                    } else {
                        o
                    }
                }
                (false, true) => {
                    let o = oa as i8 - ob as i8;
                    if o < 3 {
                        (o + 3) as u8
                    } else {
                        o as u8
                    }
                }
                (false, false) => {
                    let o = oa as i8 - ob as i8;
                    if o < 0 {
                        (o + 3) as u8
                    } else {
                        o as u8
                    }
                }
            };
        }
        for i in 0..12 {
            let j = b.ep[i] as usize;
            r.ep[i] = self.ep[j];
            r.eo[i] = (self.eo[j] + b.eo[i]) % 2;
        }
        r
    }

    fn is_mirror(&self) -> bool {
        self.co[0] >= 3
    }
}

// Kociemba's basic symmetry cubes.
const S_URF3: GCube = GCube {
    cp: [0, 4, 5, 1, 3, 7, 6, 2],
    co: [1, 2, 1, 2, 2, 1, 2, 1],
    ep: [1, 8, 5, 9, 3, 11, 7, 10, 0, 4, 6, 2],
    eo: [1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1],
};
const S_F2: GCube = GCube {
    cp: [5, 4, 7, 6, 1, 0, 3, 2],
    co: [0; 8],
    ep: [6, 5, 4, 7, 2, 1, 0, 3, 9, 8, 11, 10],
    eo: [0; 12],
};
const S_U4: GCube = GCube {
    cp: [3, 0, 1, 2, 7, 4, 5, 6],
    co: [0; 8],
    ep: [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10],
    eo: [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
};
const S_LR2: GCube = GCube {
    cp: [1, 0, 3, 2, 5, 4, 7, 6],
    co: [3; 8],
    ep: [2, 1, 0, 3, 6, 5, 4, 7, 9, 8, 11, 10],
    eo: [0; 12],
};

/// One symmetry, stored as the recipe for conjugating a cube by it quickly.
#[derive(Clone, Copy, Debug)]
pub struct Symmetry {
    /// Corner permutation of S.
    s_cp: [u8; 8],
    /// Corner orientation of S (mod 3, mirror flag removed).
    s_co: [u8; 8],
    /// Corner permutation of S⁻¹.
    t_cp: [u8; 8],
    /// Corner orientation of S⁻¹ (mod 3, negated for mirrors).
    t_co: [u8; 8],
    /// Edge permutation and orientation of S.
    s_ep: [u8; 12],
    s_eo: [u8; 12],
    /// Edge permutation and orientation of S⁻¹.
    t_ep: [u8; 12],
    t_eo: [u8; 12],
    /// Mirror symmetries reverse corner twists.
    mirror: bool,
}

/// All symmetry data: the 48 recipes, multiplication and inverse tables, and the action on
/// moves. Cheap to build (microseconds); build once and pass around, or use [`symmetries`].
pub struct Symmetries {
    /// The 48 symmetries.
    pub syms: [Symmetry; NSYM],
    /// `mult[a][b]` = index of S_a · S_b.
    pub mult: [[u8; NSYM]; NSYM],
    /// `inv[a]` = index of S_a⁻¹.
    pub inv: [u8; NSYM],
    /// `conj_move[s][m]` = the move S_s · m · S_s⁻¹.
    pub conj_move: [[Move; 18]; NSYM],
}

fn gcube_of(s: usize) -> GCube {
    let (a, b, c, d) = (s / 16, (s / 8) % 2, (s / 2) % 4, s % 2);
    let mut g = GCube::ID;
    for _ in 0..a {
        g = g.mul(&S_URF3);
    }
    for _ in 0..b {
        g = g.mul(&S_F2);
    }
    for _ in 0..c {
        g = g.mul(&S_U4);
    }
    for _ in 0..d {
        g = g.mul(&S_LR2);
    }
    g
}

fn gcube_of_cube(c: &Cube) -> GCube {
    GCube {
        cp: c.cp(),
        co: c.co(),
        ep: c.ep(),
        eo: c.eo(),
    }
}

impl Symmetries {
    /// Computes all tables.
    pub fn new() -> Symmetries {
        let g: Vec<GCube> = (0..NSYM).map(gcube_of).collect();
        let mut mult = [[0u8; NSYM]; NSYM];
        let mut inv = [0u8; NSYM];
        for a in 0..NSYM {
            for b in 0..NSYM {
                let p = g[a].mul(&g[b]);
                let k = g
                    .iter()
                    .position(|x| *x == p)
                    .expect("symmetries form a group");
                mult[a][b] = k as u8;
                if k == 0 {
                    inv[a] = b as u8;
                }
            }
        }
        let mut syms = [Symmetry {
            s_cp: [0; 8],
            s_co: [0; 8],
            t_cp: [0; 8],
            t_co: [0; 8],
            s_ep: [0; 12],
            s_eo: [0; 12],
            t_ep: [0; 12],
            t_eo: [0; 12],
            mirror: false,
        }; NSYM];
        for s in 0..NSYM {
            let sg = &g[s];
            let tg = &g[inv[s] as usize];
            let mirror = sg.is_mirror();
            syms[s] = Symmetry {
                s_cp: sg.cp,
                s_co: sg.co.map(|o| o % 3),
                t_cp: tg.cp,
                t_co: tg.co.map(|o| if mirror { (3 - o % 3) % 3 } else { o % 3 }),
                s_ep: sg.ep,
                s_eo: sg.eo,
                t_ep: tg.ep,
                t_eo: tg.eo,
                mirror,
            };
        }
        let mut conj_move = [[Move::ALL[0]; 18]; NSYM];
        for s in 0..NSYM {
            for m in Move::ALL {
                // Reference path through the generalised product, independent of the fast
                // recipe (tests compare the two).
                let p = g[s]
                    .mul(&gcube_of_cube(&Cube::from_moves(&[m])))
                    .mul(&g[inv[s] as usize]);
                let k = Move::ALL
                    .iter()
                    .position(|&x| gcube_of_cube(&Cube::from_moves(&[x])) == p)
                    .expect("a conjugated move is a move");
                conj_move[s][m.index()] = Move::ALL[k];
            }
        }
        Symmetries {
            syms,
            mult,
            inv,
            conj_move,
        }
    }

    /// `S_s · c · S_s⁻¹`.
    #[inline]
    pub fn conjugate(&self, c: &Cube, s: usize) -> Cube {
        self.syms[s].conjugate(c)
    }
}

impl Default for Symmetries {
    fn default() -> Self {
        Symmetries::new()
    }
}

impl Symmetry {
    /// `S · c · S⁻¹`.
    #[inline]
    pub fn conjugate(&self, c: &Cube) -> Cube {
        let mut cp = [0u8; 8];
        let mut co = [0u8; 8];
        for i in 0..8 {
            let j = self.t_cp[i] as usize;
            let k = c.corner(j) as usize;
            cp[i] = self.s_cp[k];
            let y = c.corner_ori(j);
            co[i] = if self.mirror {
                (self.s_co[k] + 3 - y + self.t_co[i]) % 3
            } else {
                (self.s_co[k] + y + self.t_co[i]) % 3
            };
        }
        let mut ep = [0u8; 12];
        let mut eo = [0u8; 12];
        for i in 0..12 {
            let j = self.t_ep[i] as usize;
            let k = c.edge(j) as usize;
            ep[i] = self.s_ep[k];
            eo[i] = self.s_eo[k] ^ c.edge_ori(j) ^ self.t_eo[i];
        }
        Cube::from_parts_unchecked(cp, co, ep, eo)
    }

    /// Is this symmetry a mirror?
    pub fn is_mirror(&self) -> bool {
        self.mirror
    }
}

/// A process-wide copy of the symmetry tables, built on first use. These are pure
/// constants (no state), so sharing them is safe.
pub fn symmetries() -> &'static Symmetries {
    static S: std::sync::OnceLock<Symmetries> = std::sync::OnceLock::new();
    S.get_or_init(Symmetries::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_laws() {
        let s = symmetries();
        for a in 0..NSYM {
            assert_eq!(s.mult[a][0] as usize, a);
            assert_eq!(s.mult[a][s.inv[a] as usize], 0);
            assert_eq!(s.mult[s.inv[a] as usize][a], 0);
            for b in 0..NSYM {
                for c in 0..NSYM {
                    let ab_c = s.mult[s.mult[a][b] as usize][c];
                    let a_bc = s.mult[a][s.mult[b][c] as usize];
                    assert_eq!(ab_c, a_bc);
                }
            }
        }
        // All 48 distinct; the first 16 form the UD subgroup.
        for a in 0..NSYM_UD {
            for b in 0..NSYM_UD {
                assert!((s.mult[a][b] as usize) < NSYM_UD);
            }
        }
    }

    #[test]
    fn conjugating_a_move_is_a_move() {
        let s = symmetries();
        for k in 0..NSYM {
            for m in Move::ALL {
                let conj = s.conjugate(&Cube::from_moves(&[m]), k);
                assert_eq!(
                    conj,
                    Cube::from_moves(&[s.conj_move[k][m.index()]]),
                    "sym {k} move {m}"
                );
            }
            // The map on moves is a bijection that respects inverses and axes.
            let mut seen = [false; 18];
            for m in Move::ALL {
                let c = s.conj_move[k][m.index()];
                seen[c.index()] = true;
                assert_eq!(s.conj_move[k][m.inverse().index()], c.inverse());
            }
            assert!(seen.iter().all(|&x| x));
        }
        // UD-preserving symmetries send U/D moves to U/D moves.
        for k in 0..NSYM_UD {
            assert_eq!(s.conj_move[k][0].axis(), 0);
        }
    }

    #[test]
    fn conjugation_is_a_homomorphism() {
        let s = symmetries();
        let a = Cube::from_moves(&crate::notation::parse_moves("R U F' D2 L B'").unwrap());
        let b = Cube::from_moves(&crate::notation::parse_moves("F2 D R' U L2").unwrap());
        for k in 0..NSYM {
            let lhs = s.conjugate(&a.compose(&b), k);
            let rhs = s.conjugate(&a, k).compose(&s.conjugate(&b, k));
            assert_eq!(lhs, rhs, "sym {k}");
            assert!(lhs.check().is_ok());
            let back = s.conjugate(&s.conjugate(&a, k), s.inv[k] as usize);
            assert_eq!(back, a);
        }
    }
}
