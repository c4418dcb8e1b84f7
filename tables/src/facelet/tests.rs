use super::geometry::{mul, Mat3, Vec3, ROT_X, ROT_Y};
use super::*;
use crate::moves::Move;
use crate::notation::parse_moves;
use crate::symmetry::{symmetries, NSYM};
use proptest::prelude::*;

const SOLVED: &str = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";

// Sticker geometry: sticker `i` sits at `2p + n`, where `n` is its face's outward normal
// and `p` the centre of its cubie (coordinates in -1..=1); these 54 points are distinct,
// and a rotation matrix permutes them.

/// z: the whole cube turned as F turns (U goes to R).
const ROT_Z: Mat3 = [[0, 1, 0], [-1, 0, 0], [0, 0, 1]];

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

/// The facelet string of the same cube after the whole cube is turned by `m`.
fn rotate(s: &str, m: &Mat3) -> String {
    permute(s, &sticker_permutation(m, |_| true))
}

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
    let once = rotate(SOLVED, &ROT_X);
    assert_eq!(&once[0..9], "FFFFFFFFF");
    assert_eq!(&rotate(SOLVED, &ROT_Y)[36..45], "FFFFFFFFF");
    assert_eq!(&rotate(SOLVED, &ROT_Z)[9..18], "UUUUUUUUU");
    let s = to_facelets(&cube("R U F' D2 L B'"));
    for r in [ROT_X, ROT_Y, ROT_Z] {
        let mut t = s.clone();
        for _ in 0..4 {
            t = rotate(&t, &r);
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
    let y = from_facelets(&rotate(&to_facelets(&c), &ROT_Y)).unwrap();
    assert_eq!(y, syms.conjugate(&c, 2));
    assert_eq!(y.check(), Ok(()));
    // Rotating the string back gives the position back.
    let back = rotate(&to_facelets(&y), &ROT_Y);
    let back = (0..2).fold(back, |t, _| rotate(&t, &ROT_Y));
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
