//! A checked position: the only way a cube reaches a search.
//!
//! [`Position`] can only be made from a cube that passed [`Cube::check`] (or by parsing
//! text, which checks), so the engines take it without checking again, and a cube decoded
//! from the wire cannot reach a search unchecked.

use crate::facelet::{from_facelets, FaceletError};
use crate::{parse_alg, Cube, CubieError, NotationError};

/// A legal, solvable cube.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position(Cube);

/// Why text is not a position. Each variant's message is complete on its own (no
/// `source` chain that would repeat it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A token of a scramble is not a move.
    #[error("{0}")]
    Notation(NotationError),
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
    /// "[r, U]", see [`parse_alg`]) or a 54-character facelet string (URFDLB order).
    pub fn parse(text: &str) -> Result<Position, ParseError> {
        let cube = if looks_like_facelets(text) {
            from_facelets(text.trim()).map_err(ParseError::Facelets)?
        } else {
            Cube::from_moves(&parse_alg(text).map_err(ParseError::Notation)?)
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

/// Is this text meant as a facelet string? One token, longer than any usual move token,
/// with no bracket (`[R,U]` is a scramble).
pub fn looks_like_facelets(s: &str) -> bool {
    let t = s.trim();
    !t.chars().any(|c| c.is_whitespace() || "()[]".contains(c)) && t.chars().count() > 4
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
    }

    #[test]
    fn errors_are_specific_and_said_once() {
        assert!(matches!(
            Position::parse("R U Q"),
            Err(ParseError::Notation(_))
        ));
        assert!(matches!(
            Position::parse("UUUUUUUUURRR"),
            Err(ParseError::Facelets(_))
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
