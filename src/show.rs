//! Drawing a cube as the usual unfolded net:
//!
//! ```text
//!       U U U
//!       U U U
//!       U U U
//! L L L F F F R R R B B B
//! L L L F F F R R R B B B
//! L L L F F F R R R B B B
//!       D D D
//!       D D D
//!       D D D
//! ```
//!
//! Each face is drawn as seen from outside, in the orientation of Kociemba's facelet
//! strings (U with B at the top, D with F at the top, side faces with U at the top), so
//! the net folds up into the cube.

use tables::facelet::{to_face_indices, FACE_LETTERS};
use tables::{Cube, Face};

/// 24-bit sticker colours in face order U R F D L B: white, red, green, yellow, orange, blue.
const RGB: [(u8, u8, u8); 6] = [
    (255, 255, 255),
    (200, 16, 46),
    (0, 155, 72),
    (255, 213, 0),
    (255, 100, 0),
    (0, 70, 173),
];

const U: usize = Face::U as usize;
const R: usize = Face::R as usize;
const F: usize = Face::F as usize;
const D: usize = Face::D as usize;
const L: usize = Face::L as usize;
const B: usize = Face::B as usize;

/// The cube as an unfolded net, one line per sticker row (nine lines, each ending in a
/// newline). With `color`, each sticker is a block with a 24-bit ANSI background colour
/// (white U, red R, green F, yellow D, orange L, blue B); without, it is the letter of the
/// face whose colour it has.
pub fn render_net(cube: &Cube, color: bool) -> String {
    let faces = to_face_indices(cube);
    let cell = |face: usize, row: usize, col: usize| -> String {
        let colour = faces[face * 9 + row * 3 + col] as usize;
        if color {
            let (r, g, b) = RGB[colour];
            format!("\x1b[48;2;{r};{g};{b}m  \x1b[0m ")
        } else {
            format!("{} ", FACE_LETTERS[colour])
        }
    };
    let blank = if color { "   " } else { "  " };
    let mut out = String::new();
    let mut line = |cells: &[(usize, usize, usize)], indent: bool| {
        let mut s = String::new();
        if indent {
            s.push_str(&blank.repeat(3));
        }
        for &(f, r, c) in cells {
            s.push_str(&cell(f, r, c));
        }
        out.push_str(s.trim_end_matches(' '));
        out.push('\n');
    };
    for row in 0..3 {
        let cells: Vec<_> = (0..3).map(|c| (U, row, c)).collect();
        line(&cells, true);
    }
    for row in 0..3 {
        let cells: Vec<_> = [L, F, R, B]
            .iter()
            .flat_map(|&f| (0..3).map(move |c| (f, row, c)))
            .collect();
        line(&cells, false);
    }
    for row in 0..3 {
        let cells: Vec<_> = (0..3).map(|c| (D, row, c)).collect();
        line(&cells, true);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables::parse_moves;

    #[test]
    fn solved_plain_net() {
        let net = render_net(&Cube::SOLVED, false);
        let expected = "      U U U\n      U U U\n      U U U\n\
                        L L L F F F R R R B B B\n\
                        L L L F F F R R R B B B\n\
                        L L L F F F R R R B B B\n\
                        \x20     D D D\n      D D D\n      D D D\n";
        assert_eq!(net, expected);
        for letter in FACE_LETTERS {
            assert_eq!(net.chars().filter(|&c| c == letter).count(), 9, "{letter}");
        }
    }

    #[test]
    fn scrambled_plain_net_folds_correctly() {
        // After R: U's right column shows F, F's right column D, D's right column B (B is
        // upside down in the net, so its left column shows U), R itself still all R.
        let cube = Cube::from_moves(&parse_moves("R").unwrap());
        let net = render_net(&cube, false);
        let lines: Vec<&str> = net.lines().collect();
        assert_eq!(lines[0], "      U U F");
        assert_eq!(lines[3], "L L L F F D R R R U B B");
        assert_eq!(lines[8], "      D D B");
    }

    #[test]
    fn color_net_has_54_coloured_stickers() {
        let cube = Cube::from_moves(&parse_moves("R U F'").unwrap());
        let net = render_net(&cube, true);
        assert_eq!(net.matches("\x1b[48;2;").count(), 54);
        assert_eq!(net.matches("\x1b[0m").count(), 54);
        assert_eq!(net.lines().count(), 9);
        // Each colour is used nine times.
        for (r, g, b) in RGB {
            assert_eq!(net.matches(&format!("\x1b[48;2;{r};{g};{b}m")).count(), 9);
        }
        assert!(!net.contains('U'));
    }
}
