//! Kociemba's 54-character facelet strings: writing a [`Cube`] out and reading one back.
//!
//! # Layout
//! Faces come in the order U R F D L B, nine stickers each, row by row as seen from outside
//! the cube: U with B at the top, D with F at the top, the four side faces with U at the
//! top. Sticker `U1` is index 0, `U9` index 8, `R1` index 9, and so on to `B9` at index 53.
//!
//! # Colours
//! [`to_facelets`] writes the letters `URFDLB`. [`from_facelets`] accepts any six distinct
//! symbols (Unicode characters, counted as characters, not bytes; whitespace between
//! stickers is ignored): the symbol on the centre of a face *is* that face's colour. The
//! string therefore always describes the cube as it is held, whatever the colour scheme, and
//! a string written from a whole-cube rotation of a cube reads as that cube seen from the
//! new side: the same pieces, the position conjugated by the rotation.
//!
//! When the symbols are exactly the face letters `U R F D L B`, the letters name faces, so
//! the centres must show them in an arrangement a real cube can have: any of the 24
//! whole-cube rotations of the standard one (found with the rotations x and y), never a
//! mirror image and never two opposite faces side by side.

use crate::cube::{perm_parity, Cube, CORNER_NAMES, EDGE_NAMES};

/// The face letters in facelet order; [`to_facelets`] writes these.
pub const FACE_LETTERS: [char; 6] = ['U', 'R', 'F', 'D', 'L', 'B'];

/// Number of stickers.
pub const NFACELETS: usize = 54;

const U: usize = 0;
const R: usize = 1;
const F: usize = 2;
const D: usize = 3;
const L: usize = 4;
const B: usize = 5;

/// Index of sticker `n` (1..=9) of `face`.
const fn fl(face: usize, n: usize) -> u8 {
    (face * 9 + n - 1) as u8
}

/// The stickers of each corner position, in the orientation-0 order (the U/D sticker
/// first, then clockwise), Kociemba's corner order URF UFL ULB UBR DFR DLF DBL DRB. The
/// solved cube's colours of corner `j` are the faces of `CORNER_FACELETS[j]`.
pub const CORNER_FACELETS: [[u8; 3]; 8] = [
    [fl(U, 9), fl(R, 1), fl(F, 3)],
    [fl(U, 7), fl(F, 1), fl(L, 3)],
    [fl(U, 1), fl(L, 1), fl(B, 3)],
    [fl(U, 3), fl(B, 1), fl(R, 3)],
    [fl(D, 3), fl(F, 9), fl(R, 7)],
    [fl(D, 1), fl(L, 9), fl(F, 7)],
    [fl(D, 7), fl(B, 9), fl(L, 7)],
    [fl(D, 9), fl(R, 9), fl(B, 7)],
];

/// The stickers of each edge position, in the orientation-0 order, Kociemba's edge order
/// UR UF UL UB DR DF DL DB FR FL BL BR.
pub const EDGE_FACELETS: [[u8; 2]; 12] = [
    [fl(U, 6), fl(R, 2)],
    [fl(U, 8), fl(F, 2)],
    [fl(U, 4), fl(L, 2)],
    [fl(U, 2), fl(B, 2)],
    [fl(D, 6), fl(R, 8)],
    [fl(D, 2), fl(F, 8)],
    [fl(D, 4), fl(L, 8)],
    [fl(D, 8), fl(B, 8)],
    [fl(F, 6), fl(R, 4)],
    [fl(F, 4), fl(L, 6)],
    [fl(B, 6), fl(L, 4)],
    [fl(B, 4), fl(R, 6)],
];

/// Why a facelet string is not a cube. One variant per fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaceletError {
    /// Not 54 stickers (whitespace is not counted).
    #[error("a facelet string has 54 stickers, found {found}")]
    WrongLength {
        /// Number of non-whitespace characters found.
        found: usize,
    },
    /// Two centres show the same symbol.
    #[error("the {first} and {second} centres both show {symbol:?}; the six centres must differ")]
    DuplicateCentre {
        /// The repeated symbol.
        symbol: char,
        /// The first face whose centre shows it.
        first: char,
        /// The second face whose centre shows it.
        second: char,
    },
    /// A sticker whose symbol is on no centre (a seventh colour).
    #[error("sticker {facelet} (character {offset}) is {symbol:?}, which is not the colour of any centre")]
    UnknownSymbol {
        /// The symbol.
        symbol: char,
        /// The sticker's name, such as `R7`.
        facelet: String,
        /// 0-based character offset in the input.
        offset: usize,
    },
    /// A colour on a number of stickers other than nine.
    #[error("{count} stickers show {symbol:?} (the colour of the {face} centre); each colour must appear 9 times")]
    WrongCount {
        /// The symbol.
        symbol: char,
        /// The face whose centre shows it.
        face: char,
        /// How many stickers show it.
        count: usize,
    },
    /// Face-letter centres that put two opposite faces side by side.
    #[error("the centres read {centres}: {first} and {second} are opposite faces but their centres are side by side")]
    CentresNotOpposite {
        /// The six centre letters in face order U R F D L B.
        centres: String,
        /// A letter whose opposite is not opposite it.
        first: char,
        /// Its opposite face letter.
        second: char,
    },
    /// Face-letter centres in the mirror image of a real cube's arrangement.
    #[error("the centres read {centres}, the mirror image of a real cube's centres")]
    MirroredCentres {
        /// The six centre letters in face order U R F D L B.
        centres: String,
    },
    /// Three corner stickers that no corner piece carries.
    #[error(
        "the corner at {position} (stickers {facelets}) shows {colours}, which no corner piece has"
    )]
    InvalidCorner {
        /// The corner position, such as `URF`.
        position: &'static str,
        /// Its sticker names, such as `U9 R1 F3`.
        facelets: String,
        /// The symbols found there, in the same order.
        colours: String,
    },
    /// Two edge stickers that no edge piece carries.
    #[error(
        "the edge at {position} (stickers {facelets}) shows {colours}, which no edge piece has"
    )]
    InvalidEdge {
        /// The edge position, such as `UR`.
        position: &'static str,
        /// Its sticker names, such as `U6 R2`.
        facelets: String,
        /// The symbols found there, in the same order.
        colours: String,
    },
    /// A piece found at two positions (so another piece is missing).
    #[error("the {piece} piece appears more than once")]
    DuplicatePiece {
        /// The piece's name (three letters for a corner, two for an edge).
        piece: &'static str,
    },
    /// Corner twists that do not add up to a whole turn.
    #[error("a corner is twisted: corner orientations sum to {twist} mod 3, not 0")]
    TwistedCorner {
        /// The sum of corner orientations mod 3 (1 or 2).
        twist: u8,
    },
    /// One edge flipped.
    #[error("an edge is flipped: edge orientations sum to 1 mod 2, not 0")]
    FlippedEdge,
    /// Corner and edge permutations of different parity (two pieces swapped).
    #[error(
        "parity fault: corner and edge permutations have different parity (two pieces are swapped)"
    )]
    Parity,
}

/// The name of sticker `i`, such as `R7`.
fn facelet_name(i: usize) -> String {
    format!("{}{}", FACE_LETTERS[i / 9], i % 9 + 1)
}

fn facelet_names(idx: &[u8]) -> String {
    idx.iter()
        .map(|&i| facelet_name(i as usize))
        .collect::<Vec<_>>()
        .join(" ")
}

fn symbols(idx: &[u8], chars: &[char; NFACELETS]) -> String {
    idx.iter()
        .map(|&i| chars[i as usize].to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cube as 54 face indices (0..6, face order U R F D L B).
pub fn to_face_indices(c: &Cube) -> [u8; NFACELETS] {
    let mut out: [u8; NFACELETS] = std::array::from_fn(|i| (i / 9) as u8);
    for (i, stickers) in CORNER_FACELETS.iter().enumerate() {
        let piece = &CORNER_FACELETS[c.corner(i) as usize];
        let ori = c.corner_ori(i) as usize;
        for n in 0..3 {
            out[stickers[(n + ori) % 3] as usize] = piece[n] / 9;
        }
    }
    for (i, stickers) in EDGE_FACELETS.iter().enumerate() {
        let piece = &EDGE_FACELETS[c.edge(i) as usize];
        let ori = c.edge_ori(i) as usize;
        for n in 0..2 {
            out[stickers[(n + ori) % 2] as usize] = piece[n] / 9;
        }
    }
    out
}

/// The cube's facelet string in the letters `URFDLB`.
pub fn to_facelets(c: &Cube) -> String {
    to_face_indices(c)
        .iter()
        .map(|&f| FACE_LETTERS[f as usize])
        .collect()
}

/// Reads a facelet string (see the module documentation for the layout and the colours).
pub fn from_facelets(s: &str) -> Result<Cube, FaceletError> {
    let mut chars = ['\0'; NFACELETS];
    let mut offsets = [0usize; NFACELETS];
    let mut found = 0usize;
    for (offset, ch) in s.chars().enumerate().filter(|(_, ch)| !ch.is_whitespace()) {
        if found < NFACELETS {
            chars[found] = ch;
            offsets[found] = offset;
        }
        found += 1;
    }
    if found != NFACELETS {
        return Err(FaceletError::WrongLength { found });
    }

    let centres: [char; 6] = std::array::from_fn(|f| chars[f * 9 + 4]);
    for a in 0..6 {
        for b in a + 1..6 {
            if centres[a] == centres[b] {
                return Err(FaceletError::DuplicateCentre {
                    symbol: centres[a],
                    first: FACE_LETTERS[a],
                    second: FACE_LETTERS[b],
                });
            }
        }
    }

    let mut faces = [0u8; NFACELETS];
    let mut counts = [0usize; 6];
    for i in 0..NFACELETS {
        match centres.iter().position(|&c| c == chars[i]) {
            Some(f) => {
                faces[i] = f as u8;
                counts[f] += 1;
            }
            None => {
                return Err(FaceletError::UnknownSymbol {
                    symbol: chars[i],
                    facelet: facelet_name(i),
                    offset: offsets[i],
                })
            }
        }
    }
    for f in 0..6 {
        if counts[f] != 9 {
            return Err(FaceletError::WrongCount {
                symbol: centres[f],
                face: FACE_LETTERS[f],
                count: counts[f],
            });
        }
    }

    check_letter_centres(&centres)?;
    from_faces(&faces, &chars)
}

/// If the centres are the six face letters, checks that their arrangement is a whole-cube
/// rotation of the standard one.
fn check_letter_centres(centres: &[char; 6]) -> Result<(), FaceletError> {
    let mut letter_of = [0usize; 6];
    for f in 0..6 {
        match FACE_LETTERS.iter().position(|&l| l == centres[f]) {
            Some(k) => letter_of[f] = k,
            // Some other alphabet: its symbols mean nothing beyond the centres.
            None => return Ok(()),
        }
    }
    let text: String = centres.iter().collect();
    // The letter on position f's centre started on face letter_of[f]; a rotation must
    // carry that face's normal to position f's normal.
    for m in rotations() {
        if (0..6).all(|f| apply(&m, NORMAL[letter_of[f]]) == NORMAL[f]) {
            return Ok(());
        }
    }
    for f in 0..6 {
        let opposite = (f + 3) % 6;
        if letter_of[opposite] != (letter_of[f] + 3) % 6 {
            return Err(FaceletError::CentresNotOpposite {
                centres: text,
                first: FACE_LETTERS[letter_of[f]],
                second: FACE_LETTERS[(letter_of[f] + 3) % 6],
            });
        }
    }
    Err(FaceletError::MirroredCentres { centres: text })
}

/// Decodes pieces from face indices whose centres are home; `chars` only for messages.
fn from_faces(faces: &[u8; NFACELETS], chars: &[char; NFACELETS]) -> Result<Cube, FaceletError> {
    let mut cp = [0u8; 8];
    let mut co = [0u8; 8];
    let mut seen = [false; 8];
    for (i, stickers) in CORNER_FACELETS.iter().enumerate() {
        let got = stickers.map(|k| faces[k as usize]);
        let found = (0..8).find_map(|j| {
            let want = CORNER_FACELETS[j].map(|k| k / 9);
            (0..3)
                .find(|&o| (0..3).all(|n| got[(n + o) % 3] == want[n]))
                .map(|o| (j, o))
        });
        let Some((j, o)) = found else {
            return Err(FaceletError::InvalidCorner {
                position: CORNER_NAMES[i],
                facelets: facelet_names(stickers),
                colours: symbols(stickers, chars),
            });
        };
        if seen[j] {
            return Err(FaceletError::DuplicatePiece {
                piece: CORNER_NAMES[j],
            });
        }
        seen[j] = true;
        cp[i] = j as u8;
        co[i] = o as u8;
    }

    let mut ep = [0u8; 12];
    let mut eo = [0u8; 12];
    let mut seen = [false; 12];
    for (i, stickers) in EDGE_FACELETS.iter().enumerate() {
        let got = stickers.map(|k| faces[k as usize]);
        let found = (0..12).find_map(|j| {
            let want = EDGE_FACELETS[j].map(|k| k / 9);
            (0..2)
                .find(|&o| (0..2).all(|n| got[(n + o) % 2] == want[n]))
                .map(|o| (j, o))
        });
        let Some((j, o)) = found else {
            return Err(FaceletError::InvalidEdge {
                position: EDGE_NAMES[i],
                facelets: facelet_names(stickers),
                colours: symbols(stickers, chars),
            });
        };
        if seen[j] {
            return Err(FaceletError::DuplicatePiece {
                piece: EDGE_NAMES[j],
            });
        }
        seen[j] = true;
        ep[i] = j as u8;
        eo[i] = o as u8;
    }

    let twist = co.iter().map(|&o| o as u32).sum::<u32>() % 3;
    if twist != 0 {
        return Err(FaceletError::TwistedCorner { twist: twist as u8 });
    }
    if eo.iter().map(|&o| o as u32).sum::<u32>() % 2 != 0 {
        return Err(FaceletError::FlippedEdge);
    }
    if perm_parity(&cp) != perm_parity(&ep) {
        return Err(FaceletError::Parity);
    }
    // Every condition `Cube::check` tests has been tested above, each with its own error.
    Ok(Cube::from_parts_unchecked(cp, co, ep, eo))
}

// ---------------------------------------------------------------------------------------
// Whole-cube rotations, as integer matrices acting on sticker coordinates.
//
// Axes: x towards R, y towards U, z towards F. Sticker `i` sits at `2p + n`, where `n` is
// its face's outward normal and `p` the centre of its cubie (coordinates in -1..=1); these
// 54 points are distinct, and a rotation matrix permutes them.

type Vec3 = [i8; 3];
type Mat3 = [[i8; 3]; 3];

const NORMAL: [Vec3; 6] = [
    [0, 1, 0],
    [1, 0, 0],
    [0, 0, 1],
    [0, -1, 0],
    [-1, 0, 0],
    [0, 0, -1],
];
/// The direction of increasing column on each face, as seen from outside.
const RIGHT: [Vec3; 6] = [
    [1, 0, 0],
    [0, 0, -1],
    [1, 0, 0],
    [1, 0, 0],
    [0, 0, 1],
    [-1, 0, 0],
];
/// The direction of increasing row on each face, as seen from outside.
const DOWN: [Vec3; 6] = [
    [0, 0, 1],
    [0, -1, 0],
    [0, -1, 0],
    [0, 0, -1],
    [0, -1, 0],
    [0, -1, 0],
];

const IDENTITY: Mat3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
/// x: the whole cube turned as R turns (F goes to U).
const ROT_X: Mat3 = [[1, 0, 0], [0, 0, 1], [0, -1, 0]];
/// y: the whole cube turned as U turns (F goes to L).
const ROT_Y: Mat3 = [[0, 0, -1], [0, 1, 0], [1, 0, 0]];
/// z: the whole cube turned as F turns (U goes to R).
const ROT_Z: Mat3 = [[0, 1, 0], [-1, 0, 0], [0, 0, 1]];

fn apply(m: &Mat3, v: Vec3) -> Vec3 {
    std::array::from_fn(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
}

fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    std::array::from_fn(|r| std::array::from_fn(|c| (0..3).map(|k| a[r][k] * b[k][c]).sum()))
}

/// The cubie centre (coordinates in -1..=1) of sticker `i`.
fn cubie_of(i: usize) -> Vec3 {
    let (f, row, col) = (i / 9, (i % 9 / 3) as i8, (i % 3) as i8);
    std::array::from_fn(|k| NORMAL[f][k] + RIGHT[f][k] * (col - 1) + DOWN[f][k] * (row - 1))
}

/// The point identifying sticker `i`.
fn sticker_point(i: usize) -> Vec3 {
    let p = cubie_of(i);
    std::array::from_fn(|k| 2 * p[k] + NORMAL[i / 9][k])
}

/// The 24 rotations, generated from x and y.
fn rotations() -> Vec<Mat3> {
    let mut all = vec![IDENTITY];
    let mut k = 0;
    while k < all.len() {
        for g in [ROT_X, ROT_Y] {
            let m = mul(&g, &all[k]);
            if !all.contains(&m) {
                all.push(m);
            }
        }
        k += 1;
    }
    all
}

/// `src[perm[j]]` is the sticker that moves to place `j` when the stickers selected by
/// `moves` are carried by `m` (stickers not selected stay put).
fn sticker_permutation(m: &Mat3, moves: impl Fn(usize) -> bool) -> [u8; NFACELETS] {
    let points: [Vec3; NFACELETS] = std::array::from_fn(sticker_point);
    let mut perm: [u8; NFACELETS] = std::array::from_fn(|i| i as u8);
    for i in (0..NFACELETS).filter(|&i| moves(i)) {
        let to = apply(m, points[i]);
        if let Some(j) = points.iter().position(|&p| p == to) {
            perm[j] = i as u8;
        }
    }
    perm
}

/// A whole-cube rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rotation {
    /// x: turned as R turns (F goes to U).
    X,
    /// y: turned as U turns (F goes to L).
    Y,
    /// z: turned as F turns (U goes to R).
    Z,
}

impl Rotation {
    fn matrix(self) -> Mat3 {
        match self {
            Rotation::X => ROT_X,
            Rotation::Y => ROT_Y,
            Rotation::Z => ROT_Z,
        }
    }
}

/// The facelet string of the same cube after the whole cube is turned by `r`. Any symbols
/// are carried along; only the length is checked (whitespace is dropped).
pub fn rotate_facelets(s: &str, r: Rotation) -> Result<String, FaceletError> {
    let chars: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    if chars.len() != NFACELETS {
        return Err(FaceletError::WrongLength { found: chars.len() });
    }
    let perm = sticker_permutation(&r.matrix(), |_| true);
    Ok(perm.iter().map(|&i| chars[i as usize]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moves::Move;
    use crate::notation::parse_moves;
    use crate::symmetry::{symmetries, NSYM};
    use proptest::prelude::*;

    const SOLVED: &str = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";

    fn cube(moves: &str) -> Cube {
        Cube::from_moves(&parse_moves(moves).unwrap())
    }

    fn permute(s: &str, perm: &[u8; NFACELETS]) -> String {
        let chars: Vec<char> = s.chars().collect();
        perm.iter().map(|&i| chars[i as usize]).collect()
    }

    fn replace_at(s: &str, edits: &[(usize, char)]) -> String {
        let mut chars: Vec<char> = s.chars().collect();
        for &(i, c) in edits {
            chars[i] = c;
        }
        chars.into_iter().collect()
    }

    fn swap(s: &str, a: usize, b: usize) -> String {
        let mut chars: Vec<char> = s.chars().collect();
        chars.swap(a, b);
        chars.into_iter().collect()
    }

    fn idx(face: usize, n: usize) -> usize {
        fl(face, n) as usize
    }

    /// A face move defined purely geometrically: the layer of stickers whose cubie lies on
    /// the face, turned clockwise as seen from that face.
    fn geometric_move(face: usize) -> [u8; NFACELETS] {
        let turn = match face {
            U => ROT_Y,
            R => ROT_X,
            F => ROT_Z,
            D => mul(&ROT_Y, &mul(&ROT_Y, &ROT_Y)),
            L => mul(&ROT_X, &mul(&ROT_X, &ROT_X)),
            _ => mul(&ROT_Z, &mul(&ROT_Z, &ROT_Z)),
        };
        let n = NORMAL[face];
        sticker_permutation(&turn, |i| {
            let p = cubie_of(i);
            p[0] * n[0] + p[1] * n[1] + p[2] * n[2] == 1
        })
    }

    fn rotation_perms() -> Vec<[u8; NFACELETS]> {
        rotations()
            .iter()
            .map(|m| sticker_permutation(m, |_| true))
            .collect()
    }

    #[test]
    fn facelet_tables_agree_with_geometry() {
        for (j, st) in CORNER_FACELETS.iter().enumerate() {
            let p = cubie_of(st[0] as usize);
            assert!(st.iter().all(|&i| cubie_of(i as usize) == p), "corner {j}");
            assert!(p.iter().all(|&x| x != 0), "corner {j} is a corner");
            // U/D sticker first, then clockwise: the normals form a right-handed frame...
            let n: Vec<Vec3> = st.iter().map(|&i| NORMAL[i as usize / 9]).collect();
            let det = n[0][0] * (n[1][1] * n[2][2] - n[1][2] * n[2][1])
                - n[0][1] * (n[1][0] * n[2][2] - n[1][2] * n[2][0])
                + n[0][2] * (n[1][0] * n[2][1] - n[1][1] * n[2][0]);
            // ...when read clockwise from outside, which is a left-handed triple of normals.
            assert_eq!(det, -1, "corner {j}");
            assert!(matches!(st[0] as usize / 9, U | D));
        }
        for (j, st) in EDGE_FACELETS.iter().enumerate() {
            let p = cubie_of(st[0] as usize);
            assert_eq!(cubie_of(st[1] as usize), p, "edge {j}");
            assert_eq!(
                p.iter().filter(|&&x| x == 0).count(),
                1,
                "edge {j} is an edge"
            );
        }
        let points: std::collections::HashSet<Vec3> = (0..NFACELETS).map(sticker_point).collect();
        assert_eq!(points.len(), NFACELETS);
    }

    #[test]
    fn solved_and_r() {
        assert_eq!(to_facelets(&Cube::SOLVED), SOLVED);
        assert_eq!(from_facelets(SOLVED), Ok(Cube::SOLVED));
        assert_eq!(
            to_facelets(&cube("R")),
            "UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"
        );
        assert_eq!(
            from_facelets("UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"),
            Ok(cube("R"))
        );
    }

    #[test]
    fn moves_match_geometric_sticker_moves() {
        let scrambles = ["", "R U F' D2 L B'", "B2 L' D F2 U' R2 F L D' B"];
        for sc in scrambles {
            let c = cube(sc);
            for face in 0..6 {
                let m = Move::new(crate::moves::Face::ALL[face], 1);
                let expected = permute(&to_facelets(&c), &geometric_move(face));
                assert_eq!(to_facelets(&c.apply_move(m)), expected, "{sc} then {m}");
            }
        }
    }

    #[test]
    fn other_alphabets() {
        let c = cube("R U2 F' L D B2 R' U");
        let s = to_facelets(&c);
        let map = |alphabet: &str| -> String {
            let a: Vec<char> = alphabet.chars().collect();
            s.chars()
                .map(|ch| a[FACE_LETTERS.iter().position(|&l| l == ch).unwrap()])
                .collect()
        };
        for alphabet in ["wrgyob", "012345", "⬜🟥🟩🟨🟧🟦", "RBWOGY"] {
            let t = map(alphabet);
            assert_eq!(from_facelets(&t), Ok(c), "alphabet {alphabet}");
        }
        // Whitespace between stickers is ignored.
        let spaced: String = s
            .chars()
            .enumerate()
            .flat_map(|(i, ch)| {
                let sep = if i % 9 == 8 { '\n' } else { ' ' };
                [ch, sep]
            })
            .collect();
        assert_eq!(from_facelets(&spaced), Ok(c));
    }

    #[test]
    fn x_and_y_generate_24_rotations() {
        let perms = rotation_perms();
        assert_eq!(perms.len(), 24);
        let distinct: std::collections::HashSet<_> = perms.iter().collect();
        assert_eq!(distinct.len(), 24);
        // Four quarter turns are the identity; x sends F to U, y sends F to L, z sends U to R.
        let once = rotate_facelets(SOLVED, Rotation::X).unwrap();
        assert_eq!(&once[0..9], "FFFFFFFFF");
        assert_eq!(
            &rotate_facelets(SOLVED, Rotation::Y).unwrap()[36..45],
            "FFFFFFFFF"
        );
        assert_eq!(
            &rotate_facelets(SOLVED, Rotation::Z).unwrap()[9..18],
            "UUUUUUUUU"
        );
        let s = to_facelets(&cube("R U F' D2 L B'"));
        for r in [Rotation::X, Rotation::Y, Rotation::Z] {
            let mut t = s.clone();
            for _ in 0..4 {
                t = rotate_facelets(&t, r).unwrap();
            }
            assert_eq!(t, s);
        }
    }

    #[test]
    fn rotated_solved_cube_is_solved() {
        for p in rotation_perms() {
            assert_eq!(from_facelets(&permute(SOLVED, &p)), Ok(Cube::SOLVED));
        }
    }

    #[test]
    fn rotated_cube_is_the_conjugate() {
        // Each of the 24 rotations reads as conjugation by one rotation symmetry, the same
        // for every position, and different rotations give different symmetries.
        let syms = symmetries();
        let cubes: Vec<Cube> = [
            "R U F' D2 L B'",
            "F2 D R' U L2 B",
            "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2",
        ]
        .iter()
        .map(|s| cube(s))
        .collect();
        let mut used = std::collections::HashSet::new();
        for p in rotation_perms() {
            let read: Vec<Cube> = cubes
                .iter()
                .map(|c| from_facelets(&permute(&to_facelets(c), &p)).unwrap())
                .collect();
            let k = (0..NSYM)
                .find(|&k| {
                    cubes
                        .iter()
                        .zip(&read)
                        .all(|(c, r)| syms.conjugate(c, k) == *r)
                })
                .expect("a rotated cube reads as a conjugate");
            assert!(!syms.syms[k].is_mirror());
            assert!(used.insert(k));
        }
        assert_eq!(used.len(), 24);
        // y in particular is conjugation by U4 (Kociemba's symmetry 2): S·c·S⁻¹.
        let c = cubes[2];
        let y = from_facelets(&rotate_facelets(&to_facelets(&c), Rotation::Y).unwrap()).unwrap();
        assert_eq!(y, syms.conjugate(&c, 2));
        assert_eq!(y.check(), Ok(()));
        // Rotating the string back gives the position back.
        let back = rotate_facelets(&to_facelets(&y), Rotation::Y).unwrap();
        let back = (0..2).fold(back, |t, _| rotate_facelets(&t, Rotation::Y).unwrap());
        assert_eq!(from_facelets(&back), Ok(c));
    }

    #[test]
    fn rotated_letter_strings_are_accepted() {
        // Centres not in URFDLB order, letters keep their meaning as colours.
        let s = to_facelets(&cube("L2 D' B R U' F2"));
        for p in rotation_perms() {
            let t = permute(&s, &p);
            assert!(from_facelets(&t).is_ok(), "{t}");
        }
    }

    #[test]
    fn wrong_length() {
        assert_eq!(
            from_facelets(&SOLVED[1..]),
            Err(FaceletError::WrongLength { found: 53 })
        );
        assert_eq!(
            from_facelets(""),
            Err(FaceletError::WrongLength { found: 0 })
        );
        let long = format!("{SOLVED}U");
        assert_eq!(
            from_facelets(&long),
            Err(FaceletError::WrongLength { found: 55 })
        );
        // 54 four-byte characters are 54 stickers, but 53 of them are not.
        let emoji: String = SOLVED.chars().skip(1).map(|_| '🟥').collect();
        assert_eq!(
            from_facelets(&emoji),
            Err(FaceletError::WrongLength { found: 53 })
        );
    }

    #[test]
    fn seventh_symbol() {
        let s = replace_at(SOLVED, &[(idx(R, 7), 'X')]);
        assert_eq!(
            from_facelets(&s),
            Err(FaceletError::UnknownSymbol {
                symbol: 'X',
                facelet: "R7".into(),
                offset: 15
            })
        );
        let e = from_facelets(&format!("  {s}")).unwrap_err();
        assert_eq!(
            e,
            FaceletError::UnknownSymbol {
                symbol: 'X',
                facelet: "R7".into(),
                offset: 17
            }
        );
        assert!(e.to_string().contains("R7"));
    }

    #[test]
    fn not_nine_of_a_colour() {
        let s = replace_at(SOLVED, &[(idx(U, 1), 'R')]);
        let e = from_facelets(&s).unwrap_err();
        assert_eq!(
            e,
            FaceletError::WrongCount {
                symbol: 'U',
                face: 'U',
                count: 8
            }
        );
        assert!(e.to_string().contains("8 stickers"));
    }

    #[test]
    fn duplicate_centres() {
        let s = replace_at(SOLVED, &[(idx(F, 5), 'U')]);
        assert_eq!(
            from_facelets(&s),
            Err(FaceletError::DuplicateCentre {
                symbol: 'U',
                first: 'U',
                second: 'F'
            })
        );
    }

    #[test]
    fn impossible_centres() {
        // U and R centres exchanged: U (letter) now sits beside its opposite D.
        let s = replace_at(SOLVED, &[(idx(U, 5), 'R'), (idx(R, 5), 'U')]);
        assert!(matches!(
            from_facelets(&s),
            Err(FaceletError::CentresNotOpposite { ref centres, .. }) if centres == "RUFDLB"
        ));
        // R and L exchanged: the mirror image.
        let s = replace_at(SOLVED, &[(idx(R, 5), 'L'), (idx(L, 5), 'R')]);
        assert_eq!(
            from_facelets(&s),
            Err(FaceletError::MirroredCentres {
                centres: "ULFDRB".into()
            })
        );
        // A whole mirrored cube in face letters is refused at the centres...
        let mirror: Mat3 = [[-1, 0, 0], [0, 1, 0], [0, 0, 1]];
        let m = sticker_permutation(&mirror, |_| true);
        let scrambled = to_facelets(&cube("R U F' D2 L B'"));
        assert!(matches!(
            from_facelets(&permute(&scrambled, &m)),
            Err(FaceletError::MirroredCentres { .. })
        ));
        // ...but in another alphabet the symbols mean only what the centres say, and the
        // mirror image of a position is the position conjugated by the left-right mirror
        // (Kociemba's symmetry 1), a legal cube.
        let digits: String = permute(&scrambled, &m)
            .chars()
            .map(|ch| char::from(b'0' + FACE_LETTERS.iter().position(|&l| l == ch).unwrap() as u8))
            .collect();
        let mirrored = symmetries().conjugate(&cube("R U F' D2 L B'"), 1);
        assert_eq!(from_facelets(&digits), Ok(mirrored));
    }

    #[test]
    fn invalid_corner() {
        // U9 and R1 exchanged: the URF corner reads U F R, the wrong way round.
        let s = swap(SOLVED, idx(U, 9), idx(R, 1));
        assert_eq!(
            from_facelets(&s),
            Err(FaceletError::InvalidCorner {
                position: "URF",
                facelets: "U9 R1 F3".into(),
                colours: "R U F".into(),
            })
        );
        // A corner without a U or D sticker.
        let s = swap(SOLVED, idx(U, 9), idx(L, 1));
        assert!(matches!(
            from_facelets(&s),
            Err(FaceletError::InvalidCorner {
                position: "URF",
                ..
            })
        ));
    }

    #[test]
    fn invalid_edge() {
        let s = swap(SOLVED, idx(R, 2), idx(U, 4));
        assert_eq!(
            from_facelets(&s),
            Err(FaceletError::InvalidEdge {
                position: "UR",
                facelets: "U6 R2".into(),
                colours: "U U".into(),
            })
        );
    }

    #[test]
    fn duplicate_piece() {
        // URF twice (no UFL) and UL twice (no UR): colour counts still balance.
        let mut ep: [u8; 12] = std::array::from_fn(|i| i as u8);
        ep[0] = 2;
        let bad = Cube::from_parts_unchecked([0, 0, 2, 3, 4, 5, 6, 7], [0; 8], ep, [0; 12]);
        assert_eq!(
            from_facelets(&to_facelets(&bad)),
            Err(FaceletError::DuplicatePiece { piece: "URF" })
        );
        // Edges only: replacing DF by UF alone would unbalance the counts, so DB goes to UB.
        let mut ep: [u8; 12] = std::array::from_fn(|i| i as u8);
        ep[5] = 1; // UF at DF: one more U, one less D
        ep[3] = 7; // DB at UB: one more D, one less U
        let bad = Cube::from_parts_unchecked([0, 1, 2, 3, 4, 5, 6, 7], [0; 8], ep, [0; 12]);
        assert_eq!(
            from_facelets(&to_facelets(&bad)),
            Err(FaceletError::DuplicatePiece { piece: "UF" })
        );
    }

    #[test]
    fn twisted_corner() {
        let mut co = [0u8; 8];
        co[3] = 2;
        let c = cube("R U F'");
        let bad = Cube::from_parts_unchecked(
            c.cp(),
            std::array::from_fn(|i| (c.co()[i] + co[i]) % 3),
            c.ep(),
            c.eo(),
        );
        let e = from_facelets(&to_facelets(&bad)).unwrap_err();
        assert_eq!(e, FaceletError::TwistedCorner { twist: 2 });
    }

    #[test]
    fn flipped_edge() {
        let c = cube("R U F'");
        let mut eo = c.eo();
        eo[7] ^= 1;
        let bad = Cube::from_parts_unchecked(c.cp(), c.co(), c.ep(), eo);
        assert_eq!(
            from_facelets(&to_facelets(&bad)),
            Err(FaceletError::FlippedEdge)
        );
        // The plainest case: UF flipped on a solved cube.
        assert_eq!(
            from_facelets(&swap(SOLVED, idx(U, 8), idx(F, 2))),
            Err(FaceletError::FlippedEdge)
        );
    }

    #[test]
    fn parity() {
        let c = cube("R U F'");
        let mut ep = c.ep();
        ep.swap(4, 9);
        let bad = Cube::from_parts_unchecked(c.cp(), c.co(), ep, c.eo());
        assert_eq!(from_facelets(&to_facelets(&bad)), Err(FaceletError::Parity));
    }

    #[test]
    fn messages_name_the_fault() {
        let e = FaceletError::WrongLength { found: 53 };
        assert!(e.to_string().contains("53"));
        let e = from_facelets(&swap(SOLVED, idx(U, 9), idx(R, 1))).unwrap_err();
        assert!(e.to_string().contains("URF") && e.to_string().contains("U9 R1 F3"));
        let e = FaceletError::DuplicatePiece { piece: "UF" };
        assert!(e.to_string().contains("UF"));
    }

    proptest! {
        #[test]
        fn round_trip(seq in proptest::collection::vec(0usize..18, 0..60)) {
            let moves: Vec<Move> = seq.iter().filter_map(|&i| Move::from_index(i)).collect();
            let c = Cube::from_moves(&moves);
            let s = to_facelets(&c);
            let back = from_facelets(&s);
            prop_assert_eq!(back, Ok(c));
            prop_assert_eq!(to_facelets(&from_facelets(&s).unwrap()), s);
        }

        #[test]
        fn never_panics(s in "[URFDLBX ]{0,60}") {
            let _ = from_facelets(&s);
        }

        #[test]
        fn shuffled_solved_never_panics(swaps in proptest::collection::vec((0usize..54, 0usize..54), 1..6)) {
            let mut t = SOLVED.to_string();
            for (a, b) in swaps {
                t = swap(&t, a, b);
            }
            if let Ok(c) = from_facelets(&t) {
                prop_assert_eq!(c.check(), Ok(()));
                prop_assert_eq!(to_facelets(&c), t);
            }
        }
    }
}
