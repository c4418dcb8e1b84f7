//! Reading one position from a line of text: a move sequence (the scramble that produces
//! it) or a 54-character facelet string.

use tables::facelet::{from_facelets, FaceletError};
use tables::{Cube, CubieError, NotationError};

/// Why a line is not a position.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A token of a scramble is not a move.
    #[error("{0}")]
    Notation(#[from] NotationError),
    /// A facelet string is malformed or describes an impossible cube.
    #[error("bad facelet string: {0}")]
    Facelets(#[from] FaceletError),
    /// The cube is not solvable (only possible for facelet input).
    #[error("unsolvable position: {0}")]
    Unsolvable(#[from] CubieError),
}

/// Is this line meant as a facelet string? One token, longer than any move token.
pub fn looks_like_facelets(s: &str) -> bool {
    let t = s.trim();
    !t.chars().any(char::is_whitespace) && t.chars().count() > 4
}

/// Parses a scramble or a facelet string into a checked, solvable cube.
pub fn parse_position(s: &str) -> Result<Cube, InputError> {
    let cube = if looks_like_facelets(s) {
        from_facelets(s.trim())?
    } else {
        Cube::from_moves(&tables::parse_moves(s)?)
    };
    cube.check()?;
    Ok(cube)
}

/// A line of an input file, with what to do with it.
pub enum Line<'a> {
    /// Blank or a `#` comment: skipped, no output.
    Skip,
    /// A position to solve (the trimmed text).
    Position(&'a str),
}

/// Classifies an input line.
pub fn classify(line: &str) -> Line<'_> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        Line::Skip
    } else {
        Line::Position(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrambles_and_facelets_both_parse() {
        let a = parse_position("R U R' U'").unwrap();
        let f = tables::facelet::to_facelets(&a);
        assert_eq!(parse_position(&f).unwrap(), a);
        assert!(parse_position("").unwrap().is_solved());
    }

    #[test]
    fn errors_are_specific() {
        assert!(matches!(
            parse_position("R U Q"),
            Err(InputError::Notation(_))
        ));
        assert!(matches!(
            parse_position("UUUUUUUUURRR"),
            Err(InputError::Facelets(_))
        ));
        // Two corners' stickers swapped in place → a twisted or impossible cube.
        let mut f: Vec<char> = tables::facelet::to_facelets(&Cube::SOLVED)
            .chars()
            .collect();
        f.swap(8, 9); // U9 <-> R1 of the URF corner: twists it
        let s: String = f.into_iter().collect();
        assert!(parse_position(&s).is_err());
    }

    #[test]
    fn comments_and_blanks_are_skipped() {
        assert!(matches!(classify("   "), Line::Skip));
        assert!(matches!(classify("# R U"), Line::Skip));
        assert!(matches!(classify(" R U "), Line::Position("R U")));
    }
}
