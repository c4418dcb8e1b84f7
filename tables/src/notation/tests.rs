//! The readers' cases: every spelling, every error, and hand-checked algorithms.

use super::*;
use crate::Cube;
use proptest::prelude::*;

fn alg(s: &str) -> Vec<Move> {
    parse_alg(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn cube(s: &str) -> Cube {
    Cube::from_moves(&alg(s))
}

fn moves(s: &str) -> Vec<Move> {
    parse_moves(s).unwrap()
}

#[test]
fn parses_all_spellings() {
    let m = parse_moves("U U2 U' U2' U’ R3 F1  \t B").unwrap();
    assert_eq!(format_moves(&m), "U U2 U' U2 U' R' F B");
}

/// Every spelling of a face move means the same to both readers.
#[test]
fn both_readers_agree_on_every_face_move_spelling() {
    for face in "URFDLB".chars() {
        for suffix in [
            "", "1", "2", "2'", "2’", "'2", "’2", "'", "’", "3", "3'", "3’",
        ] {
            let text = format!("{face}{suffix}");
            assert_eq!(parse_moves(&text), parse_alg(&text), "{text}");
        }
    }
    assert_eq!(format_moves(&moves("U3 U3' U1")), "U' U U");
}

#[test]
fn round_trips_every_move() {
    for m in Move::ALL {
        assert_eq!(parse_moves(&m.to_string()).unwrap(), vec![m]);
        assert_eq!(parse_alg(&m.to_string()).unwrap(), vec![m]);
    }
}

#[test]
fn empty_is_empty() {
    for s in ["", "   ", "\n", "// nothing"] {
        assert!(parse_alg(s).unwrap().is_empty(), "{s:?}");
    }
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
    // Move lists (solutions) are face moves only.
    for s in ["r", "M2", "x", "[R, U]"] {
        let e = parse_moves(s).unwrap_err();
        assert!(e.reason.contains("face moves"), "{s}: {e}");
    }
}

/// Each form next to the face moves it expands to, named as the cube is held at the end.
#[test]
fn every_form_expands_to_its_face_moves() {
    let cases = [
        // Amounts, taken mod 4; a prime before the number is the old spelling of one after.
        (
            "R R2 R' R2' R3 R4 R5' R0 R'2 R’ R9",
            "R R2 R' R2 R' R' R2 R' R",
        ),
        // Slices: R L' and a rotation, turning as L, D, F do.
        ("M", "R L'"),
        ("M'", "R' L"),
        ("M2", "R2 L2"),
        ("E", "U D'"),
        ("E2'", "U2 D2"),
        ("S", "B F'"),
        ("S'", "B' F"),
        // Wide moves: the opposite face and a rotation, in both spellings.
        ("Rw r Rw' r2", "L L L' L2"),
        ("Lw l", "R R"),
        ("Uw u", "D D"),
        ("Dw d", "U U"),
        ("Fw f", "B B"),
        ("Bw b", "F F"),
        // Rotations alone turn nothing. A turn is named by the side its layer is on when
        // the whole sequence ends: after x2 the top layer ends on top, so `x2 U` is `U`.
        ("x y2 z'", ""),
        ("x2 U", "U"),
        ("x U", "U"),
        ("F x", "U"),
        ("U x U", "B U"),
        ("x U x'", "F"),
        ("y R y'", "B"),
        ("z U z'", "L"),
        ("x R", "R"),
        ("r", "L"),
        ("r U R'", "L U R'"),
        ("M U", "R L' U"),
        ("M' U", "R' L U"),
        ("E R", "U D' R"),
        ("S U", "B F' U"),
        // Groups, inverses, commutators, conjugates, nested.
        ("[R, U]", "R U R' U'"),
        ("[R,U]", "R U R' U'"),
        ("[R: U]", "R U R'"),
        ("(R U)'", "U' R'"),
        ("(R U)2'", "U' R' U' R'"),
        ("(R U)'2", "U' R' U' R'"),
        ("(R U R' U')3", "R U R' U' R U R' U' R U R' U'"),
        ("(R U)0 F", "F"),
        ("((R U)2 F)'", "F' U' R' U' R'"),
        ("[R, [U: L]]", "R U L U' R' U L' U'"),
        ("[[R: U], F2]", "R U R' F2 R U' R' F2"),
        ("([R, U])2", "R U R' U' R U R' U'"),
        ("()3 [ , R] [R: ]", "R R' R R'"),
        // A rotation inside an inverse is undone where it stands: (x U)' is U' x', and the
        // U layer ends in front.
        ("(x U)'", "F'"),
        ("y (R U)' y'", "U' B'"),
        ("[x: U]", "F"),
        ("r U R' x (R U)'", "L B R' U' R'"),
        // Comments, newlines and pauses.
        ("R // a comment ( [\nU\n\n. F", "R U F"),
        ("R//c\r\nU", "R U"),
    ];
    for (text, want) in cases {
        assert_eq!(format_moves(&alg(text)), want, "{text}");
    }
}

/// Amounts are taken mod 4 exactly, however long the number: past 2^64 as well.
#[test]
fn huge_amounts_are_taken_mod_4() {
    let zeros = "0".repeat(200);
    let cases = [
        // 2^64 + 1 = 1, 2^64 + 3 = 3 (mod 4); a saturated count would read 2^64 - 1 = 3.
        ("R18446744073709551617 U", "R U"),
        ("R18446744073709551619 U", "R' U"),
        ("R18446744073709551619'", "R"),
        ("R18446744073709551618'", "R2"),
        ("R’18446744073709551617", "R'"),
        // 10^20 = 0 (mod 4): no turn at all.
        ("R100000000000000000000 U", "U"),
        ("R99999999999999999999999 U", "R' U"),
        (&format!("x1{zeros} U"), "U"),
        (&format!("M1{zeros} U"), "U"),
        (&format!("r1{zeros}2' U"), "L2 U"),
        // Nothing repeated any number of times is nothing.
        ("()99999999999999999999999 F", "F"),
        ("(R4 .)99999999999999999999999", ""),
        ("(x4)18446744073709551617' U", "U"),
    ];
    for (text, want) in cases {
        assert_eq!(format_moves(&alg(text)), want, "{text}");
    }
    // A body that is not empty, repeated that often, is past the bound on added turns.
    let e = parse_alg(&format!("(R U)1{zeros}1'")).unwrap_err();
    assert!(e.reason.contains("more than 1000000"), "{e}");
}

/// A move glued to a closing bracket is refused as a move glued to a move is; brackets
/// and separators may touch anything.
#[test]
fn a_move_glued_to_a_closing_bracket_is_refused() {
    for (text, token, index, offset) in [
        ("(R U)3x", "x", 5, 6),
        ("(R U)F", "F", 5, 5),
        ("[R, U]F", "F", 6, 6),
        ("(R U)'R", "R", 5, 6),
        ("R ((U)2F)", "F", 6, 7),
        ("[R: (U)D]", "D", 7, 7),
    ] {
        let e = parse_alg(text).unwrap_err();
        assert_eq!(
            (e.token.as_str(), e.index, e.offset),
            (token, index, offset),
            "{text}"
        );
        assert!(e.reason.contains("separated by spaces"), "{text}: {e}");
    }
    for (text, want) in [
        ("[R,U]", "R U R' U'"),
        ("(R U)(F D)", "R U F D"),
        ("[R: U]", "R U R'"),
        ("(R)[U,F](D)", "R U F U' F' D"),
        ("[(R),(U)]", "R U R' U'"),
        ("((R)2)", "R R"),
        ("(R U)3 F", "R U R U R U F"),
        ("(R)//c\nF", "R F"),
    ] {
        assert_eq!(format_moves(&alg(text)), want, "{text}");
    }
}

/// Each error names the token that is wrong and says why.
#[test]
fn errors_name_the_token_and_the_reason() {
    // (input, token, 1-based token number, character offset, part of the reason)
    let cases = [
        ("R [U, ", "[", 2, 2, "never closed"),
        ("R (U F", "(", 2, 2, "never closed"),
        ("[R: U", "[", 1, 0, "never closed"),
        ("R U)", ")", 3, 3, "closes no ("),
        ("R ] U", "]", 2, 2, "closes no ["),
        ("[R U]", "]", 4, 4, "needs a comma or colon"),
        ("[R, U, F]", ",", 5, 5, "one comma or colon"),
        ("[R: U: F]", ":", 5, 5, "one comma or colon"),
        ("(R, U)", ",", 3, 2, "not ( )"),
        ("R, U", ",", 2, 1, "inside [ ]"),
        ("R: U", ":", 2, 1, "inside [ ]"),
        ("[R, U)", ")", 5, 5, "closes a [, not a ("),
        ("[R U)", ")", 4, 4, "closes a [, not a ("),
        ("(R U]", "]", 4, 4, "closes a (, not a ["),
        ("[R, U]2", "]2", 5, 5, "takes no amount"),
        ("[R, U]'", "]'", 5, 5, "takes no amount"),
        ("(R U)2'2", ")2'2", 4, 4, "an amount is"),
        ("2R", "2R", 1, 0, "layer numbers"),
        ("R 3Rw", "3Rw", 2, 2, "layer numbers"),
        ("2-3Rw", "2-3Rw", 1, 0, "layer numbers"),
        ("X", "X", 1, 0, "lower-case"),
        ("R m", "m", 2, 2, "upper-case"),
        ("R U Q2", "Q2", 3, 4, "unknown move"),
        ("RU", "RU", 1, 0, "separated by spaces"),
        ("rw", "rw", 1, 0, "unknown move"),
        ("R2U", "R2U", 1, 0, "separated by spaces"),
        ("R2+", "R2+", 1, 0, "an amount is"),
        ("R ''", "''", 2, 2, "right after its move"),
        ("R U 2", "2", 3, 4, "right after its move"),
        ("é R", "é", 1, 0, "unknown character"),
        ("R ..", "..", 2, 2, "unknown character"),
        (
            "  (R)99999999999999999999999",
            ")99999999999999999999999",
            3,
            4,
            "more than 1000000",
        ),
        ("((R U)1000)1000", ")1000", 6, 10, "more than 1000000"),
        (
            "[[[[[[[(R)10000, U], U], U], U], U], U], U]",
            "]",
            31,
            42,
            "more than 1000000",
        ),
    ];
    for (text, token, index, offset, reason) in cases {
        let Err(e) = parse_alg(text) else {
            panic!("{text}: read as moves")
        };
        assert_eq!(
            (e.token.as_str(), e.index, e.offset),
            (token, index, offset),
            "{text}: {e}"
        );
        assert!(e.reason.contains(reason), "{text}: {e}");
        assert!(e.to_string().contains(&format!("token {index}")), "{e}");
    }
}

#[test]
fn nesting_is_bounded_and_never_overflows_the_stack() {
    let nested = |n: usize| format!("{}R{}", "(".repeat(n), ")".repeat(n));
    assert_eq!(alg(&nested(parser::MAX_DEPTH)), moves("R"));
    let e = parse_alg(&nested(parser::MAX_DEPTH + 1)).unwrap_err();
    assert_eq!(e.index, parser::MAX_DEPTH + 1);
    assert!(e.reason.contains("64 deep"), "{e}");
    for s in [
        "(".repeat(100_000),
        "[".repeat(100_000),
        "[R:".repeat(50_000),
    ] {
        assert!(parse_alg(&s).is_err());
    }
    // The limit is on the turns brackets add, not on the length of the text.
    let long = "R U ".repeat(parser::MAX_ADDED);
    assert_eq!(alg(&long).len(), 2 * parser::MAX_ADDED);
    assert_eq!(alg(&format!("({long})")).len(), 2 * parser::MAX_ADDED);
    for added in [
        format!("({long})2"),
        format!("[{long}: R]"),
        format!("[R, {long}]"),
    ] {
        let Err(e) = parse_alg(&added) else {
            panic!("{}...: read as moves", &added[..12])
        };
        assert!(e.reason.contains("more than 1000000"), "{e}");
    }
}

// ---- Hand-checked algorithms -------------------------------------------------------

/// Only U-layer pieces moved (the first two layers solved, pieces and orientations).
fn only_u_layer(c: &Cube) -> bool {
    (4..8).all(|i| c.corner(i) == i as u8 && c.corner_ori(i) == 0)
        && (4..12).all(|i| c.edge(i) == i as u8 && c.edge_ori(i) == 0)
}

/// A PLL: only U-layer pieces moved, every orientation solved, not solved.
fn is_pll(c: &Cube) -> bool {
    only_u_layer(c) && c.co() == [0; 8] && c.eo() == [0; 12] && !c.is_solved()
}

/// Pieces (corners, edges) out of place.
fn moved(c: &Cube) -> (usize, usize) {
    (
        (0..8).filter(|&i| c.corner(i) != i as u8).count(),
        (0..12).filter(|&i| c.edge(i) != i as u8).count(),
    )
}

const PLLS: [(&str, &str, (usize, usize)); 6] = [
    ("H", "M2 U M2 U2 M2 U M2", (0, 4)),
    ("Ua", "M2 U M U2 M' U M2", (0, 3)),
    ("Z", "M' U M2 U M2 U M' U2 M2 U'", (0, 4)),
    ("T", "R U R' U' R' F R2 U' R' U' R U R' F'", (2, 2)),
    ("Jb", "R U R' F' R U R' U' R' F R2 U' R' U'", (2, 2)),
    ("Aa", "x R' U R' D2 R U' R' D2 R2 x'", (3, 0)),
];

const OLLS: [(&str, &str); 4] = [
    ("Sune", "R U R' U R U2 R'"),
    ("33", "R U R' U' R' F R F'"),
    ("wide", "r U R' U' r' F R F'"),
    ("45", "F (R U R' U') F'"),
];

#[test]
fn plls_move_only_u_layer_pieces_in_place() {
    for (name, text, want) in PLLS {
        let c = cube(text);
        assert!(is_pll(&c), "{name}: {text}");
        assert_eq!(moved(&c), want, "{name}");
    }
    // H swaps opposite edges, Z two pairs of neighbours.
    let u_edges = |text| cube(text).ep()[..4].to_vec();
    assert_eq!(u_edges(PLLS[0].1), [2, 3, 0, 1]);
    assert_eq!(u_edges(PLLS[2].1), [3, 2, 1, 0]);
}

#[test]
fn olls_keep_the_first_two_layers_and_turn_u_pieces() {
    for (name, text) in OLLS {
        let c = cube(text);
        assert!(only_u_layer(&c), "{name}: {text}");
        assert!(
            c.co() != [0; 8] || c.eo() != [0; 12],
            "{name} orients something"
        );
    }
    // Sune twists three corners and flips no edge.
    let sune = cube("R U R' U R U2 R'");
    assert_eq!((0..4).filter(|&i| sune.corner_ori(i) != 0).count(), 3);
    assert_eq!(sune.eo(), [0; 12]);
}

#[test]
fn every_algorithm_then_its_inverse_is_solved() {
    let all = PLLS
        .iter()
        .map(|p| p.1)
        .chain(OLLS.iter().map(|o| o.1))
        .chain([
            "(R U R' U')3",
            "[R, [U: L]]",
            "x2 Rw U' y S2 Fw' E b' M' z d",
        ]);
    for text in all {
        assert!(cube(&format!("{text} ({text})'")).is_solved(), "{text}");
        assert!(cube(&format!("({text})' {text}")).is_solved(), "{text}");
        assert!(!cube(text).is_solved(), "{text}");
    }
    // The sexy move has order 6.
    assert!(cube("(R U R' U')6").is_solved());
    assert!(!cube("(R U R' U')3").is_solved());
}

#[test]
fn slice_plls_equal_face_move_plls() {
    // H perm with face moves only; the sticker model agrees (see `stickers`).
    assert_eq!(
        cube("M2 U M2 U2 M2 U M2"),
        cube("R2 U2 R U2 R2 U2 R2 U2 R U2 R2")
    );
    // The same with wide moves, and with rotations around it.
    assert_eq!(
        cube("M2 U M2 U2 M2 U M2"),
        cube("(r2 R2) U (r2 R2) U2 (r2 R2) U (r2 R2)")
    );
    assert_eq!(cube("y2 M2 U M2 U2 M2 U M2 y2"), cube("M2 U M2 U2 M2 U M2"));
    // Aa perm written with a rotation equals it written with faces relabelled.
    assert_eq!(
        cube("x R' U R' D2 R U' R' D2 R2 x'"),
        cube("R' F R' B2 R F' R' B2 R2")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]
    /// Strings over the notation's alphabet never panic; every success is a legal cube.
    #[test]
    fn near_miss_algorithms_never_panic(s in "[URFDLBurfdlbwMESxyzXm0239'’ ()\\[\\],:./\n-]{0,80}") {
        if let Ok(m) = parse_alg(&s) {
            prop_assert!(Cube::from_moves(&m).check().is_ok());
        }
    }

    #[test]
    fn arbitrary_text_never_panics(s in any::<String>()) {
        let _ = parse_alg(&s);
    }

    /// A face-move list reads the same through both readers.
    #[test]
    fn face_moves_read_the_same_both_ways(
        ms in proptest::collection::vec(0..Move::COUNT, 0..30)
    ) {
        let text = format_moves(&ms.iter().map(|&i| Move::ALL[i]).collect::<Vec<_>>());
        prop_assert_eq!(parse_alg(&text), parse_moves(&text));
    }
}
