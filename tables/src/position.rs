//! A checked position: the only way a cube reaches a search.
//!
//! [`Position`] can only be made from a cube that passed [`Cube::check`] (or by parsing
//! text, which checks), so the engines take it without checking again, and a cube decoded
//! from the wire cannot reach a search unchecked.
//!
//! # Text
//! The text of one position is at most [`MAX_TEXT_BYTES`] long. One token of exactly 54
//! characters is read as a facelet string, and as a scramble if it is not one; any other
//! text is a scramble. A token that is neither (`UUUUUUUUURRR`) is refused with both
//! reasons.

use crate::facelet::{from_facelets, FaceletError};
use crate::{parse_alg, Cube, CubieError, NotationError};

/// The longest text [`Position::parse`] reads, in bytes: 1 MiB, about 250,000 moves
/// written out (`R2' `, four bytes each). Longer text is refused before it is read.
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// Characters in a facelet string.
const FACELET_CHARS: usize = crate::facelet::NFACELETS;

/// A legal, solvable cube.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position(Cube);

/// Why text is not a position. Each variant's message is complete on its own (no
/// `source` chain that would repeat it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text is longer than [`MAX_TEXT_BYTES`].
    #[error("the position's text is {bytes} bytes; at most {MAX_TEXT_BYTES} (1 MiB) are read")]
    TooLong {
        /// The text's length in bytes.
        bytes: usize,
    },
    /// A token of a scramble is not a move.
    #[error("{0}")]
    Notation(NotationError),
    /// One token of face letters that is neither a facelet string (it does not have 54
    /// characters) nor a scramble.
    #[error(
        "neither a facelet string ({chars} characters, 54 needed) nor a scramble: {}",
        notation.reason
    )]
    Neither {
        /// The token's length in characters.
        chars: usize,
        /// Why it is not a scramble (the message says its reason; the token is the
        /// whole text).
        notation: NotationError,
    },
    /// A facelet string is malformed or describes an impossible cube.
    #[error("bad facelet string: {0}")]
    Facelets(FaceletError),
    /// The cube is not solvable.
    #[error("unsolvable position: {0}")]
    Unsolvable(CubieError),
}

impl Position {
    /// The solved cube.
    pub const SOLVED: Position = Position(Cube::SOLVED);

    /// Checks `cube` ([`Cube::check`]) and wraps it.
    pub fn new(cube: Cube) -> Result<Position, CubieError> {
        cube.check()?;
        Ok(Position(cube))
    }

    /// Parses a scramble in cubing.js notation ("R U R' U'", "M2 U M2 U2 M2 U M2",
    /// "[r, U]", see [`parse_alg`]) or a 54-character facelet string (URFDLB order), as
    /// the module documentation says. Text longer than [`MAX_TEXT_BYTES`] is refused
    /// before anything is read.
    pub fn parse(text: &str) -> Result<Position, ParseError> {
        if text.len() > MAX_TEXT_BYTES {
            return Err(ParseError::TooLong { bytes: text.len() });
        }
        // A `//` comment runs to the end of the line, after a scramble (the notation's own
        // rule) or after facelets alike.
        let body = text.find("//").map_or(text, |i| &text[..i]);
        let token = body.trim();
        let one_token = !token.contains(char::is_whitespace);
        let chars = if one_token { token.chars().count() } else { 0 };
        let cube = if one_token && chars == FACELET_CHARS {
            match from_facelets(token) {
                Ok(cube) => cube,
                Err(e) => match parse_alg(text) {
                    Ok(moves) => Cube::from_moves(&moves),
                    Err(_) => return Err(ParseError::Facelets(e)),
                },
            }
        } else {
            match parse_alg(text) {
                Ok(moves) => Cube::from_moves(&moves),
                Err(notation) if one_token && chars > 4 && token.chars().all(is_face_letter) => {
                    return Err(ParseError::Neither { chars, notation })
                }
                Err(e) => return Err(ParseError::Notation(e)),
            }
        };
        Position::new(cube).map_err(ParseError::Unsolvable)
    }

    /// The cube.
    #[inline(always)]
    pub fn cube(&self) -> &Cube {
        &self.0
    }

    /// Whether `moves` solve this position.
    pub fn is_solved_by(&self, moves: &[crate::Move]) -> bool {
        self.0.apply_moves(moves).is_solved()
    }

    /// The position seen from `target`: its solutions are exactly the move sequences that
    /// take `self` to `target` (solving to a pattern). `target⁻¹ · self`, solvable as
    /// both are.
    pub fn relative_to(&self, target: &Position) -> Position {
        Position(target.0.inverse().compose(&self.0))
    }
}

/// Is `c` one of the letters a facelet string is usually written in?
fn is_face_letter(c: char) -> bool {
    "URFDLB".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn scrambles_and_facelets_both_parse() {
        let a = Position::parse("R U R' U'").unwrap();
        let f = crate::facelet::to_facelets(a.cube());
        assert_eq!(Position::parse(&f).unwrap(), a);
        assert!(Position::parse("").unwrap().cube().is_solved());
        // Scrambles in cubing.js notation, with and without spaces around brackets.
        let h = Position::parse("R2 U2 R U2 R2 U2 R2 U2 R U2 R2").unwrap();
        assert_eq!(Position::parse("M2 U M2 U2 M2 U M2").unwrap(), h);
        assert_eq!(Position::parse("[R,U]").unwrap(), a);
        assert_eq!(Position::parse("(R U R' U')").unwrap(), a);
        assert!(Position::parse("x y").unwrap().cube().is_solved());
        // Rotations are read as the cube is held at the end: after x2 the top is turned.
        let x2_u = Position::parse("x2 U").unwrap();
        assert_eq!(x2_u, Position::parse("U").unwrap());
        assert!(x2_u.is_solved_by(&crate::parse_moves("U'").unwrap()));
    }

    #[test]
    fn a_comment_follows_facelets_as_it_follows_a_scramble() {
        let a = Position::parse("R U R' U'").unwrap();
        let f = crate::facelet::to_facelets(a.cube());
        assert_eq!(Position::parse(&format!("{f} // sexy move")).unwrap(), a);
        assert_eq!(Position::parse(&format!("{f}// sexy move")).unwrap(), a);
        assert_eq!(Position::parse("R U R' U' // sexy move").unwrap(), a);
        // The comment hides nothing before it: bad facelets are still refused.
        let bad = format!("{}X // comment", &f[..53]);
        assert!(Position::parse(&bad).is_err());
    }

    #[test]
    fn errors_are_specific_and_said_once() {
        assert!(matches!(
            Position::parse("R U Q"),
            Err(ParseError::Notation(_))
        ));
        assert!(matches!(
            Position::parse("UUUUUUUUURRR"),
            Err(ParseError::Neither { chars: 12, .. })
        ));
        let solved = crate::facelet::to_facelets(&Cube::SOLVED);
        let mut f: Vec<char> = solved.chars().collect();
        // UF and UR edges swapped wholesale: a single swap, a parity fault.
        for (a, b) in [(7usize, 5usize), (19, 10)] {
            f.swap(a, b);
        }
        let s: String = f.into_iter().collect();
        let e = Position::parse(&s).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("parity"), "{msg}");
        assert_eq!(
            msg.matches("different parity").count(),
            1,
            "said once: {msg}"
        );
        assert!(std::error::Error::source(&e).is_none());
    }

    /// The bound on the text is checked before anything is read: text past it is refused
    /// whatever it holds, text up to it is read.
    #[test]
    fn text_longer_than_the_bound_is_refused_first() {
        let moves = "R U ".repeat(MAX_TEXT_BYTES / 4);
        assert_eq!(moves.len(), MAX_TEXT_BYTES);
        assert!(Position::parse(&moves).is_ok());
        for long in [format!("{moves} "), "(".repeat(MAX_TEXT_BYTES + 7)] {
            let e = Position::parse(&long).unwrap_err();
            assert_eq!(e, ParseError::TooLong { bytes: long.len() });
            assert!(e.to_string().contains("at most 1048576 (1 MiB)"), "{e}");
        }
    }

    /// One token is a facelet string only when it has 54 characters; any other is a
    /// scramble, and one of face letters only that is neither says both.
    #[test]
    fn one_token_is_facelets_only_at_54_characters() {
        let p = |s: &str| Position::parse(s);
        let moves = |s: &str| Position::parse(s).unwrap();
        // Short single moves, once read as broken facelet strings.
        assert_eq!(moves("R1001"), moves("R"));
        assert_eq!(moves("R1000"), Position::SOLVED);
        assert_eq!(moves("Rw13'"), moves("Rw'"));
        assert_eq!(moves(" R//comment "), moves("R"));
        assert_eq!(moves("R18446744073709551617"), moves("R"));
        assert!(matches!(p("R.U.F"), Err(ParseError::Notation(_))));
        assert!(matches!(p("(R U)3x"), Err(ParseError::Notation(_))));
        // 54 characters: facelets, else moves, else the facelet string's fault.
        let solved = crate::facelet::to_facelets(&Cube::SOLVED);
        assert_eq!(moves(&format!(" {solved}\n")), Position::SOLVED);
        let comment = format!("R//{}", "x".repeat(51));
        assert_eq!(comment.chars().count(), 54);
        assert_eq!(moves(&comment), moves("R"));
        let e = p(&format!("R{}", &solved[1..])).unwrap_err();
        assert!(matches!(e, ParseError::Facelets(_)), "{e}");
        assert!(e.to_string().starts_with("bad facelet string: "), "{e}");
        // Face letters only, not 54 of them: neither, and why not as a scramble.
        for (text, chars) in [("UUUUUUUUURRR", 12), (&solved[1..], 53), ("UUUUU", 5)] {
            let e = p(text).unwrap_err();
            let ParseError::Neither { chars: n, notation } = &e else {
                panic!("{text}: {e:?}")
            };
            assert_eq!((*n, notation.index), (chars, 1), "{text}");
            let msg = e.to_string();
            let head = format!(
                "neither a facelet string ({chars} characters, 54 needed) nor a scramble: "
            );
            assert_eq!(msg, format!("{head}{}", notation.reason));
        }
        // Anything else that fails is a plain notation error.
        for text in ["UUUU", "RU", "UUUUUUUUU RRR", "UUUUUX"] {
            assert!(matches!(p(text), Err(ParseError::Notation(_))), "{text}");
        }
    }

    /// A sequence that solves the relative position takes the position to the target,
    /// and one that does not, does not.
    #[test]
    fn relative_positions_are_solved_into_the_target() {
        let p = Position::parse("R U F' D2").unwrap();
        let t = Position::parse("L2 B").unwrap();
        let r = p.relative_to(&t);
        // p · (D2 F U' R' L2 B) = t, so that sequence solves r.
        let m = crate::parse_moves("D2 F U' R' L2 B").unwrap();
        assert!(r.is_solved_by(&m));
        assert_eq!(p.cube().apply_moves(&m), *t.cube());
        assert!(!r.is_solved_by(&crate::parse_moves("D2 F U' R'").unwrap()));
        assert!(p.relative_to(&p).cube().is_solved());
        assert_eq!(p.relative_to(&Position::SOLVED), p);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// Arbitrary bytes never panic: every failure is a typed error, every success a
        /// legal cube.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Ok(p) = Position::parse(&text) {
                prop_assert!(p.cube().check().is_ok());
            }
        }

        /// Strings over the facelet alphabet and move letters (the inputs that get
        /// furthest into the parsers) never panic either.
        #[test]
        fn near_miss_strings_never_panic(s in "[URFDLBXMrxw2' ()\\[\\],:]{0,60}") {
            if let Ok(p) = Position::parse(&s) {
                prop_assert!(p.cube().check().is_ok());
            }
        }

        /// 54-character strings of the six centre letters: every one parses or fails
        /// with a typed facelet/unsolvable error.
        #[test]
        fn facelet_shaped_strings_never_panic(s in "[URFDLB]{54}") {
            match Position::parse(&s) {
                Ok(p) => prop_assert!(p.cube().check().is_ok()),
                Err(ParseError::Facelets(_)) | Err(ParseError::Unsolvable(_)) => {}
                Err(e) => prop_assert!(false, "unexpected {e:?}"),
            }
        }
    }
}
