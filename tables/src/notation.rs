//! Move-sequence notation: parsing `U U2 U' U2' U’ ...` and formatting back.
//!
//! Tokens are separated by whitespace. A token is a face letter (`U R F D L B`) followed by
//! nothing (quarter turn clockwise), `2` (half turn), `'` or `’` (anticlockwise), or `2'`
//! (a half turn written with a prime, which is the same move). `1` and `3` are accepted as
//! in some datasets (`U1 = U`, `U3 = U'`). Anything else is refused with its text and its
//! place in the input.

use crate::moves::{Face, Move};

/// A token that is not a move.
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
        None if "urfdlbxyzMES".contains(first) => return Err(
            "wide moves, slice moves and rotations are not supported; use face moves U R F D L B",
        ),
        None => return Err("a move starts with one of the face letters U R F D L B"),
    };
    let rest: String = chars.collect();
    let power = match rest.as_str() {
        "" | "1" => 1,
        "2" | "2'" | "2’" | "'2" | "’2" => 2,
        "'" | "’" | "3" | "3'" | "3’" => 3,
        _ => return Err("the suffix after the face letter must be nothing, 2, or ' (prime)"),
    };
    Ok(Move::new(face, power))
}

/// Parses a whitespace-separated move sequence. The empty string is the empty sequence.
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
mod tests {
    use super::*;

    #[test]
    fn parses_all_spellings() {
        let m = parse_moves("U U2 U' U2' U’ R3 F1  \t B").unwrap();
        assert_eq!(format_moves(&m), "U U2 U' U2 U' R' F B");
    }

    #[test]
    fn round_trips_every_move() {
        for m in Move::ALL {
            assert_eq!(parse_moves(&m.to_string()).unwrap(), vec![m]);
        }
    }

    #[test]
    fn empty_is_empty() {
        assert!(parse_moves("").unwrap().is_empty());
        assert!(parse_moves("   ").unwrap().is_empty());
    }

    #[test]
    fn bad_token_reports_text_and_position() {
        let e = parse_moves("R U X2 F").unwrap_err();
        assert_eq!(e.token, "X2");
        assert_eq!(e.index, 3);
        assert_eq!(e.offset, 4);
        let e = parse_moves("R U4").unwrap_err();
        assert_eq!(e.token, "U4");
        assert_eq!(e.index, 2);
        let e = parse_moves("r").unwrap_err();
        assert!(e.reason.contains("wide"));
    }
}
