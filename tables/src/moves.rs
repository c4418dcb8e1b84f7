//! The 18 face moves of the half-turn metric and their cubie definitions.
//!
//! A move is a byte `face * 3 + power` with faces in the order U R F D L B and powers
//! quarter turn clockwise, half turn, quarter turn anticlockwise: `U U2 U' R R2 R' ...`.

use crate::cube::Cube;

/// The six faces, in Kociemba's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Face {
    /// Up.
    U = 0,
    /// Right.
    R = 1,
    /// Front.
    F = 2,
    /// Down.
    D = 3,
    /// Left.
    L = 4,
    /// Back.
    B = 5,
}

impl Face {
    /// All faces in order.
    pub const ALL: [Face; 6] = [Face::U, Face::R, Face::F, Face::D, Face::L, Face::B];
    /// The face's letter.
    pub fn letter(self) -> char {
        b"URFDLB"[self as usize] as char
    }
    /// The axis (0 = UD, 1 = RL, 2 = FB).
    pub fn axis(self) -> u8 {
        self as u8 % 3
    }
    /// The opposite face.
    pub fn opposite(self) -> Face {
        Face::ALL[(self as usize + 3) % 6]
    }
}

/// One of the 18 face moves. Invariant: the inner value is < 18.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(u8);

impl Move {
    /// Number of moves.
    pub const COUNT: usize = 18;
    /// All 18 moves in index order.
    pub const ALL: [Move; 18] = {
        let mut a = [Move(0); 18];
        let mut i = 0;
        while i < 18 {
            a[i] = Move(i as u8);
            i += 1;
        }
        a
    };
    /// The six half turns, which do not change the H48 coordinate.
    pub const HALF_TURNS: [Move; 6] = [Move(1), Move(4), Move(7), Move(10), Move(13), Move(16)];

    /// The move with index `i` (0..18), if in range.
    pub const fn from_index(i: usize) -> Option<Move> {
        if i < 18 {
            Some(Move(i as u8))
        } else {
            None
        }
    }
    /// The move on `face` turned `power` quarter turns clockwise (1, 2 or 3).
    pub const fn new(face: Face, power: u8) -> Move {
        Move(face as u8 * 3 + (power + 3) % 4 % 3)
    }
    /// Index 0..18.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// The face turned.
    #[inline(always)]
    pub const fn face(self) -> Face {
        match self.0 / 3 {
            0 => Face::U,
            1 => Face::R,
            2 => Face::F,
            3 => Face::D,
            4 => Face::L,
            _ => Face::B,
        }
    }
    /// Face index 0..6.
    #[inline(always)]
    pub const fn face_index(self) -> usize {
        (self.0 / 3) as usize
    }
    /// Clockwise quarter turns: 1, 2 or 3.
    #[inline(always)]
    pub const fn power(self) -> u8 {
        self.0 % 3 + 1
    }
    /// The axis 0 (UD), 1 (RL), 2 (FB).
    #[inline(always)]
    pub const fn axis(self) -> u8 {
        self.0 / 3 % 3
    }
    /// Is this a half turn?
    #[inline(always)]
    pub const fn is_half(self) -> bool {
        self.0 % 3 == 1
    }
    /// The move undoing this one.
    #[inline(always)]
    pub const fn inverse(self) -> Move {
        Move(self.0 - self.0 % 3 + 2 - self.0 % 3)
    }
}

impl std::fmt::Debug for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::fmt::Display for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let suffix = ["", "2", "'"][(self.0 % 3) as usize];
        write!(f, "{}{}", self.face().letter(), suffix)
    }
}

// Piece indices, for readability of the move definitions below.
const URF: u8 = 0;
const UFL: u8 = 1;
const ULB: u8 = 2;
const UBR: u8 = 3;
const DFR: u8 = 4;
const DLF: u8 = 5;
const DBL: u8 = 6;
const DRB: u8 = 7;
const UR: u8 = 0;
const UF: u8 = 1;
const UL: u8 = 2;
const UB: u8 = 3;
const DR: u8 = 4;
const DF: u8 = 5;
const DL: u8 = 6;
const DB: u8 = 7;
const FR: u8 = 8;
const FL: u8 = 9;
const BL: u8 = 10;
const BR: u8 = 11;

struct Def {
    cp: [u8; 8],
    co: [u8; 8],
    ep: [u8; 12],
    eo: [u8; 12],
}

/// The six clockwise quarter turns as cubie permutations (Kociemba's definitions).
const BASIC: [Def; 6] = [
    Def {
        cp: [UBR, URF, UFL, ULB, DFR, DLF, DBL, DRB],
        co: [0; 8],
        ep: [UB, UR, UF, UL, DR, DF, DL, DB, FR, FL, BL, BR],
        eo: [0; 12],
    },
    Def {
        cp: [DFR, UFL, ULB, URF, DRB, DLF, DBL, UBR],
        co: [2, 0, 0, 1, 1, 0, 0, 2],
        ep: [FR, UF, UL, UB, BR, DF, DL, DB, DR, FL, BL, UR],
        eo: [0; 12],
    },
    Def {
        cp: [UFL, DLF, ULB, UBR, URF, DFR, DBL, DRB],
        co: [1, 2, 0, 0, 2, 1, 0, 0],
        ep: [UR, FL, UL, UB, DR, FR, DL, DB, UF, DF, BL, BR],
        eo: [0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0],
    },
    Def {
        cp: [URF, UFL, ULB, UBR, DLF, DBL, DRB, DFR],
        co: [0; 8],
        ep: [UR, UF, UL, UB, DF, DL, DB, DR, FR, FL, BL, BR],
        eo: [0; 12],
    },
    Def {
        cp: [URF, ULB, DBL, UBR, DFR, UFL, DLF, DRB],
        co: [0, 1, 2, 0, 0, 2, 1, 0],
        ep: [UR, UF, BL, UB, DR, DF, FL, DB, FR, UL, DL, BR],
        eo: [0; 12],
    },
    Def {
        cp: [URF, UFL, UBR, DRB, DFR, DLF, ULB, DBL],
        co: [0, 0, 1, 2, 0, 0, 2, 1],
        ep: [UR, UF, UL, BR, DR, DF, DL, BL, FR, FL, UB, DB],
        eo: [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1],
    },
];

const fn basic_cube(d: &Def) -> Cube {
    let mut cube = Cube::SOLVED;
    let mut i = 0;
    while i < 8 {
        cube.c[i] = d.cp[i] | (d.co[i] << 4);
        i += 1;
    }
    let mut i = 0;
    while i < 12 {
        cube.e[i] = d.ep[i] | (d.eo[i] << 4);
        i += 1;
    }
    cube
}

const fn compose_const(a: &Cube, b: &Cube) -> Cube {
    let mut r = Cube::SOLVED;
    let mut i = 0;
    while i < 12 {
        let x = b.e[i];
        r.e[i] = a.e[(x & 15) as usize] ^ (x & 0x10);
        i += 1;
    }
    let mut i = 0;
    while i < 8 {
        let x = b.c[i];
        let s = a.c[(x & 15) as usize] + (x & 0x30);
        r.c[i] = if s >= 0x30 { s - 0x30 } else { s };
        i += 1;
    }
    r
}

/// The 18 moves as cubes, indexed by `Move::index()`.
pub static MOVE_CUBES: [Cube; 18] = {
    let mut out = [Cube::SOLVED; 18];
    let mut f = 0;
    while f < 6 {
        let q = basic_cube(&BASIC[f]);
        let h = compose_const(&q, &q);
        let a = compose_const(&h, &q);
        out[f * 3] = q;
        out[f * 3 + 1] = h;
        out[f * 3 + 2] = a;
        f += 1;
    }
    out
};

/// Do two moves on the same axis commute with each other? (Always true for same axis.)
#[inline(always)]
pub const fn same_axis(a: Move, b: Move) -> bool {
    a.axis() == b.axis()
}

/// Moves applied to a cube: here beside the move cubes, so that the cube module does not
/// depend on this one.
impl Cube {
    /// Applies one face move.
    #[inline(always)]
    pub fn apply_move(&self, m: Move) -> Cube {
        self.compose(&MOVE_CUBES[m.index()])
    }

    /// Applies a sequence of moves in order.
    pub fn apply_moves(&self, moves: &[Move]) -> Cube {
        moves.iter().fold(*self, |c, &m| c.apply_move(m))
    }

    /// The cube reached from solved by `moves`.
    pub fn from_moves(moves: &[Move]) -> Cube {
        Cube::SOLVED.apply_moves(moves)
    }
}
