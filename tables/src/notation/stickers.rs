//! An independent sticker-level model of every turn, and [`parse_alg`] tested against it.
//!
//! Each turn is defined here by geometry alone: the stickers of the layers it turns (by
//! their cubie's distance along an axis) rotated a quarter turn about that axis. Nothing
//! here knows the identities that `frame.rs` rewrites turns by, and groups, inverses,
//! commutators and conjugates are expanded here on permutations, not by the parser. After
//! a sequence the model cube is read as it is held: each sticker named by the side whose
//! centre now shows its colour (as a facelet string of a rotated cube is read, see
//! `crate::facelet`), and compared with the cube of the face moves [`parse_alg`] returned.

use super::parse_alg;
use crate::facelet::{from_facelets, to_facelets, NFACELETS};
use crate::moves::{Face, Move};
use crate::Cube;
use proptest::prelude::*;

/// An integer vector: x towards R, y towards U, z towards F.
type V = [i32; 3];

fn dot(a: V, b: V) -> i32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V, b: V) -> V {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// For each face (U R F D L B): its outward normal, and as seen from outside the
/// directions of increasing column and increasing row (U has B at the top, D has F at the
/// top, the side faces have U at the top).
const FACES: [(V, V, V); 6] = [
    ([0, 1, 0], [1, 0, 0], [0, 0, 1]),
    ([1, 0, 0], [0, 0, -1], [0, -1, 0]),
    ([0, 0, 1], [1, 0, 0], [0, -1, 0]),
    ([0, -1, 0], [1, 0, 0], [0, 0, -1]),
    ([-1, 0, 0], [0, 0, 1], [0, -1, 0]),
    ([0, 0, -1], [-1, 0, 0], [0, -1, 0]),
];

/// Sticker place `i` as (the centre of its cubie, the way it faces).
fn place(i: usize) -> (V, V) {
    let (n, right, down) = FACES[i / 9];
    let (row, col) = ((i % 9 / 3) as i32 - 1, (i % 3) as i32 - 1);
    (
        std::array::from_fn(|k| n[k] + right[k] * col + down[k] * row),
        n,
    )
}

/// `v` turned a quarter turn clockwise as seen from the tip of the unit axis `n`.
fn quarter(n: V, v: V) -> V {
    let c = cross(n, v);
    std::array::from_fn(|k| n[k] * dot(n, v) - c[k])
}

/// Where each sticker goes: `self.0[i]` is the place the sticker at place `i` moves to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Perm([u8; NFACELETS]);

impl Perm {
    const ID: Perm = {
        let mut p = [0u8; NFACELETS];
        let mut i = 0;
        while i < NFACELETS {
            p[i] = i as u8;
            i += 1;
        }
        Perm(p)
    };

    /// A quarter turn clockwise about `axis` of the layers at distances `layers` along it.
    fn turn(axis: V, layers: &[i32]) -> Perm {
        let places: Vec<(V, V)> = (0..NFACELETS).map(place).collect();
        Perm(std::array::from_fn(|i| {
            let (p, n) = places[i];
            if !layers.contains(&dot(p, axis)) {
                return i as u8;
            }
            let to = (quarter(axis, p), quarter(axis, n));
            places.iter().position(|&q| q == to).expect("a place") as u8
        }))
    }

    /// `self`, then `other`.
    fn then(&self, other: &Perm) -> Perm {
        Perm(std::array::from_fn(|i| other.0[self.0[i] as usize]))
    }

    fn inverse(&self) -> Perm {
        let mut p = [0u8; NFACELETS];
        for (i, &to) in self.0.iter().enumerate() {
            p[to as usize] = i as u8;
        }
        Perm(p)
    }

    /// `self` repeated `n` times (`n` may be negative).
    fn pow(&self, n: i64) -> Perm {
        let step = if n < 0 { self.inverse() } else { *self };
        (0..n.unsigned_abs()).fold(Perm::ID, |acc, _| acc.then(&step))
    }

    /// The colour (face index) shown at each place after `self` from the solved cube.
    fn colours(&self) -> [u8; NFACELETS] {
        let mut out = [0u8; NFACELETS];
        for (i, &to) in self.0.iter().enumerate() {
            out[to as usize] = (i / 9) as u8;
        }
        out
    }

    /// The facelet string of the cube after `self` as it is held: each sticker named by
    /// the side whose centre shows its colour now.
    fn held(&self) -> String {
        let colours = self.colours();
        let mut side_showing = [0u8; 6];
        for side in 0..6 {
            side_showing[colours[side * 9 + 4] as usize] = side as u8;
        }
        colours
            .iter()
            .map(|&c| b"URFDLB"[side_showing[c as usize] as usize] as char)
            .collect()
    }

    /// The facelet string with each sticker written as its colour (the letter of the face
    /// it started on), centres wherever they went: what a photograph of the cube shows.
    fn photo(&self) -> String {
        self.colours()
            .iter()
            .map(|&f| b"URFDLB"[f as usize] as char)
            .collect()
    }
}

/// The outward normal of the face with this letter.
fn axis(face: char) -> V {
    FACES["URFDLB".find(face).expect("a face letter")].0
}

/// Every move family as written, with its geometry: the axis it turns about (clockwise
/// seen from that side) and which layers along it turn.
const FAMILIES: [(&str, char, &[i32]); 27] = [
    ("U", 'U', &[1]),
    ("R", 'R', &[1]),
    ("F", 'F', &[1]),
    ("D", 'D', &[1]),
    ("L", 'L', &[1]),
    ("B", 'B', &[1]),
    ("Uw", 'U', &[0, 1]),
    ("Rw", 'R', &[0, 1]),
    ("Fw", 'F', &[0, 1]),
    ("Dw", 'D', &[0, 1]),
    ("Lw", 'L', &[0, 1]),
    ("Bw", 'B', &[0, 1]),
    ("u", 'U', &[0, 1]),
    ("r", 'R', &[0, 1]),
    ("f", 'F', &[0, 1]),
    ("d", 'D', &[0, 1]),
    ("l", 'L', &[0, 1]),
    ("b", 'B', &[0, 1]),
    ("M", 'L', &[0]),
    ("E", 'D', &[0]),
    ("S", 'F', &[0]),
    ("x", 'R', &[-1, 0, 1]),
    ("y", 'U', &[-1, 0, 1]),
    ("z", 'F', &[-1, 0, 1]),
    // Repeats of the families with most to get wrong, to weight the random choice.
    ("M", 'L', &[0]),
    ("S", 'F', &[0]),
    ("z", 'F', &[-1, 0, 1]),
];

/// Move amounts as written, with their value (mod 4 for the long ones).
const MOVE_AMOUNTS: [(&str, i64); 14] = [
    ("", 1),
    ("2", 2),
    ("'", -1),
    ("2'", -2),
    ("3", 3),
    ("3'", -3),
    ("4", 4),
    ("5'", -5),
    ("'2", -2),
    ("’", -1),
    // 2^64 + 1, 10^20, 2^64 + 3 inverted, 10^23 - 1: past any machine integer.
    ("18446744073709551617", 1),
    ("100000000000000000000", 0),
    ("18446744073709551619'", -3),
    ("99999999999999999999999", 3),
];

/// Group amounts as written, with their value.
const GROUP_AMOUNTS: [(&str, i64); 8] = [
    ("", 1),
    ("2", 2),
    ("'", -1),
    ("2'", -2),
    ("3", 3),
    ("0", 0),
    ("3'", -3),
    ("'2", -2),
];

/// Each family's quarter turn, made once.
fn family_perm(k: usize) -> Perm {
    static PERMS: std::sync::OnceLock<Vec<Perm>> = std::sync::OnceLock::new();
    PERMS.get_or_init(|| {
        FAMILIES
            .iter()
            .map(|&(_, face, layers)| Perm::turn(axis(face), layers))
            .collect()
    })[k]
}

/// An algorithm as a tree, written out and evaluated by the model separately.
#[derive(Debug, Clone)]
enum Alg {
    Move(usize, usize),
    Seq(Vec<Alg>),
    Group(Vec<Alg>, usize),
    Commutator(Box<Alg>, Box<Alg>),
    Conjugate(Box<Alg>, Box<Alg>),
}

impl Alg {
    fn text(&self) -> String {
        let seq = |v: &[Alg]| v.iter().map(Alg::text).collect::<Vec<_>>().join(" ");
        match self {
            Alg::Move(f, a) => format!("{}{}", FAMILIES[*f].0, MOVE_AMOUNTS[*a].0),
            Alg::Seq(v) => seq(v),
            Alg::Group(v, a) => format!("({}){}", seq(v), GROUP_AMOUNTS[*a].0),
            Alg::Commutator(a, b) => format!("[{}, {}]", a.text(), b.text()),
            Alg::Conjugate(a, b) => format!("[{}: {}]", a.text(), b.text()),
        }
    }

    fn perm(&self) -> Perm {
        let seq = |v: &[Alg]| v.iter().fold(Perm::ID, |acc, a| acc.then(&a.perm()));
        match self {
            Alg::Move(f, a) => family_perm(*f).pow(MOVE_AMOUNTS[*a].1),
            Alg::Seq(v) => seq(v),
            Alg::Group(v, a) => seq(v).pow(GROUP_AMOUNTS[*a].1),
            Alg::Commutator(a, b) => {
                let (a, b) = (a.perm(), b.perm());
                a.then(&b).then(&a.inverse()).then(&b.inverse())
            }
            Alg::Conjugate(a, b) => {
                let (a, b) = (a.perm(), b.perm());
                a.then(&b).then(&a.inverse())
            }
        }
    }
}

fn alg() -> impl Strategy<Value = Alg> {
    let leaf = (0..FAMILIES.len(), 0..MOVE_AMOUNTS.len()).prop_map(|(f, a)| Alg::Move(f, a));
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Alg::Seq),
            (
                proptest::collection::vec(inner.clone(), 0..4),
                0..GROUP_AMOUNTS.len()
            )
                .prop_map(|(v, a)| Alg::Group(v, a)),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Alg::Commutator(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| Alg::Conjugate(Box::new(a), Box::new(b))),
        ]
    })
}

fn parsed(text: &str) -> Cube {
    let moves = parse_alg(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    Cube::from_moves(&moves)
}

/// The cube [`parse_alg`] reads from `text` is the model's cube after `perm` as it is
/// held, named by its centres, and also the cube its photograph reads as.
fn check(text: &str, perm: &Perm) -> Result<(), TestCaseError> {
    let cube = parsed(text);
    prop_assert_eq!(to_facelets(&cube), perm.held(), "{}", text);
    prop_assert_eq!(from_facelets(&perm.photo()), Ok(cube), "{}", text);
    Ok(())
}

/// The model agrees with the cube model on face moves, so it shares its sticker layout.
#[test]
fn model_face_turns_are_the_cube_models_face_moves() {
    for (k, face) in Face::ALL.iter().enumerate() {
        let want = to_facelets(&Cube::from_moves(&[Move::new(*face, 1)]));
        assert_eq!(family_perm(k).held(), want, "{face:?}");
        assert_eq!(family_perm(k).photo(), want, "{face:?}");
        assert_eq!(family_perm(k).pow(4), Perm::ID);
    }
    // A slice, a wide move and a rotation move centres, which face turns never do: the
    // photograph and the cube as held name stickers differently.
    for name in ["M", "Rw", "x"] {
        let k = FAMILIES.iter().position(|f| f.0 == name).unwrap();
        assert_ne!(family_perm(k).photo(), family_perm(k).held(), "{name}");
    }
    // A rotation alone, held as it ends, is the solved cube.
    let x = FAMILIES.iter().position(|f| f.0 == "x").unwrap();
    assert_eq!(family_perm(x).held(), to_facelets(&Cube::SOLVED));
}

/// The turns are read in the frame the cube is held in at the end: after `x2` the layer
/// on top is turned and is the top at the end, so `x2 U` is `U`, not the `D` that the
/// start frame names it.
#[test]
fn a_turn_after_a_rotation_is_named_as_the_cube_ends() {
    let x = family_perm(FAMILIES.iter().position(|f| f.0 == "x").unwrap());
    let u = family_perm(0);
    let model = x.pow(2).then(&u);
    assert_eq!(
        model.held(),
        to_facelets(&Cube::from_moves(&[Move::new(Face::U, 1)]))
    );
    assert_eq!(to_facelets(&parsed("x2 U")), model.held());
}

/// Every family with every amount, alone and between rotations.
#[test]
fn every_family_and_amount_matches_the_model() {
    let whole = |face| Perm::turn(axis(face), &[-1, 0, 1]);
    let around = [
        ("", Perm::ID),
        ("x", whole('R')),
        ("y'", whole('U').inverse()),
        ("z2", whole('F').pow(2)),
    ];
    for (f, (name, ..)) in FAMILIES.iter().enumerate() {
        for (amount, value) in MOVE_AMOUNTS {
            for (pre, pre_perm) in &around {
                for (post, post_perm) in &around {
                    let text = format!("{pre} {name}{amount} {post}");
                    let want = pre_perm.then(&family_perm(f).pow(value)).then(post_perm);
                    check(&text, &want).unwrap();
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Flat sequences of every kind of turn.
    #[test]
    fn random_turn_sequences_match_the_model(
        turns in proptest::collection::vec((0..FAMILIES.len(), 0..MOVE_AMOUNTS.len()), 0..40)
    ) {
        let alg = Alg::Seq(turns.into_iter().map(|(f, a)| Alg::Move(f, a)).collect());
        check(&alg.text(), &alg.perm())?;
    }

    /// Groups, inverses, commutators and conjugates, nested, with every kind of turn
    /// (rotations included) anywhere in them.
    #[test]
    fn random_nested_algorithms_match_the_model(alg in alg()) {
        check(&alg.text(), &alg.perm())?;
    }
}
