//! Move-sequence notation: reading scrambles and move lists, and writing moves back.
//!
//! Two readers, for two kinds of text:
//! - [`parse_alg`] reads a scramble as cubing.js writes 3x3x3 algorithms: face moves, wide
//!   moves, slices, rotations, groups with repetition and inverse, commutators,
//!   conjugates and `//` comments. It returns the face moves of the cube the sequence
//!   makes, as the cube is held at the end: what a cuber holding it must turn. So `x2 U`
//!   reads as `U` (solved by `U'`), and a rotation alone is the empty sequence.
//! - [`parse_moves`] reads a plain list of face moves, the form solutions are written in.
//!
//! Both report a bad token with its text, its 1-based token number, its 0-based character
//! offset and the reason ([`NotationError`]).
//!
//! # Layout
//! - this file: the error, the face-move reader and writer;
//! - `lexer`: the scramble text cut into tokens (moves, brackets, separators);
//! - `parser`: the tokens read into turns, groups and brackets expanded;
//! - `frame`: turns of slices, wide moves and rotations rewritten as face moves, by
//!   following where each centre is, then named as the cube is held at the end;
//! - `tests`: both readers' cases and the hand-checked algorithms; `stickers`: a
//!   sticker-level model of every turn, against which the rewriting is tested.
//!
//! # Face-move lists
//! For [`parse_moves`], tokens are separated by whitespace. A token is a face letter
//! (`U R F D L B`) followed by nothing (quarter turn clockwise), `2` (half turn), `'` or
//! `’` (anticlockwise), or `2'` (a half turn written with a prime, which is the same move).
//! `1` and `3` are accepted as in some datasets (`U1 = U`, `U3 = U'`), and `3'` is three
//! anticlockwise quarter turns (`U3' = U`), as [`parse_alg`] reads it.

mod frame;
mod lexer;
mod parser;

use crate::moves::{Face, Move};

/// A token that is not a move, or brackets that do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad move {token:?} at token {index} (character {offset}): {reason}")]
pub struct NotationError {
    /// The offending token as written.
    pub token: String,
    /// 1-based token number.
    pub index: usize,
    /// 0-based character offset of the token in the input.
    pub offset: usize,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Reads a scramble in cubing.js notation (3x3x3 moves only) as face moves.
///
/// Accepted, separated by whitespace (newlines included):
/// - face moves `U R F D L B`, wide moves `Uw Rw Fw Dw Lw Bw` or `u r f d l b`, slices
///   `M E S` (turning as `L D F` do) and rotations `x y z` (as `R U F` do), each with an
///   amount: nothing, a number, `'` (anticlockwise) or a number then `'` (`R2'`); an
///   amount is taken mod 4, however long its number (`R5' = R'`,
///   `R18446744073709551617 = R`);
/// - `(A)n` and `(A)n'`: `A` repeated `n` times, or its inverse repeated;
/// - `[A, B]` = `A B A' B'` and `[A: B]` = `A B A'`, nested as deep as needed (up to 64
///   brackets); as in cubing.js a bracket takes no amount: `([A, B])2`;
/// - `//` to the end of the line is a comment, `.` (a pause) does nothing.
///
/// A move glued to another (`R2U`) or to a closing bracket (`(R U)3x`) is refused: moves are
/// separated by whitespace. Layer-numbered moves of bigger cubes (`2R`, `3Rw`) are
/// refused, as are brackets that add more than 1 000 000 turns in all (`(R)99999999`);
/// turns written out count nothing towards that. The text itself is not bounded here: a
/// position's text is, by [`crate::MAX_TEXT_BYTES`] (1 MiB) in [`crate::Position::parse`].
///
/// The result is the cube the sequence makes, as it is held at the end: a slice, wide
/// move or rotation moves the centres, and each face move returned names the side its
/// layer is on when the whole sequence has been done. So `x2 U` is `U` (solved by `U'`),
/// `U x U` is `B U`, `x` alone is the empty sequence, `x U x'` is `F`, `r` is `L` (the
/// L layer turned, the cube held as it ends) and `M2 U M2 U2 M2 U M2` is an H
/// permutation of the U layer.
pub fn parse_alg(s: &str) -> Result<Vec<Move>, NotationError> {
    let turns = parser::parse(lexer::tokenize(s))?;
    Ok(frame::face_moves(&turns))
}

fn face_of(c: char) -> Option<Face> {
    Some(match c {
        'U' => Face::U,
        'R' => Face::R,
        'F' => Face::F,
        'D' => Face::D,
        'L' => Face::L,
        'B' => Face::B,
        _ => return None,
    })
}

fn parse_token(tok: &str) -> Result<Move, &'static str> {
    let mut chars = tok.chars();
    let first = chars.next().ok_or("empty token")?;
    let face = match face_of(first) {
        Some(f) => f,
        None if "urfdlbxyzMES([".contains(first) => return Err(
            "a move list here holds face moves U R F D L B only; wide moves, slices, rotations and brackets are read in scrambles",
        ),
        None => return Err("a move starts with one of the face letters U R F D L B"),
    };
    let rest: String = chars.collect();
    let power = match rest.as_str() {
        "" | "1" | "3'" | "3’" => 1,
        "2" | "2'" | "2’" | "'2" | "’2" => 2,
        "'" | "’" | "3" => 3,
        _ => return Err("the suffix after the face letter must be nothing, 2, or ' (prime)"),
    };
    Ok(Move::new(face, power))
}

/// Parses a whitespace-separated list of face moves (see the module documentation). The
/// empty string is the empty sequence.
pub fn parse_moves(s: &str) -> Result<Vec<Move>, NotationError> {
    let mut out = Vec::new();
    let mut index = 0;
    let mut start: Option<(usize, usize)> = None; // (byte start, char start)
    let bytes_end = s.len();
    let push = |b0: usize, b1: usize, c0: usize, out: &mut Vec<Move>, index: &mut usize| {
        *index += 1;
        let tok = &s[b0..b1];
        match parse_token(tok) {
            Ok(m) => {
                out.push(m);
                Ok(())
            }
            Err(reason) => Err(NotationError {
                token: tok.to_string(),
                index: *index,
                offset: c0,
                reason,
            }),
        }
    };
    for (char_pos, (b, ch)) in s.char_indices().enumerate() {
        if ch.is_whitespace() {
            if let Some((b0, c0)) = start.take() {
                push(b0, b, c0, &mut out, &mut index)?;
            }
        } else if start.is_none() {
            start = Some((b, char_pos));
        }
    }
    if let Some((b0, c0)) = start {
        push(b0, bytes_end, c0, &mut out, &mut index)?;
    }
    Ok(out)
}

/// Formats moves in canonical form (`U`, `U2`, `U'`), separated by single spaces.
pub fn format_moves(moves: &[Move]) -> String {
    let mut s = String::with_capacity(moves.len() * 3);
    for (i, m) in moves.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&m.to_string());
    }
    s
}

/// The inverse of a sequence: reversed, each move inverted.
pub fn invert_moves(moves: &[Move]) -> Vec<Move> {
    moves.iter().rev().map(|m| m.inverse()).collect()
}

#[cfg(test)]
mod stickers;
#[cfg(test)]
mod tests;
