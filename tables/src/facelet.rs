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

mod geometry;

use self::geometry::{apply, rotations, NORMAL};
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

#[cfg(test)]
mod tests;
