use super::basic::*;
use super::*;
use crate::notation::parse_moves;
use crate::random::SplitMix64;
use crate::symmetry::NSYM_UD;
use proptest::prelude::*;

fn after(s: &str) -> Cube {
    Cube::from_moves(&parse_moves(s).unwrap())
}

fn all_basic() -> Vec<Box<dyn Coord>> {
    vec![
        Box::new(Twist),
        Box::new(Flip),
        Box::new(UdSlice),
        Box::new(UdSliceSorted),
        Box::new(CornerPerm),
        Box::new(CornerSep),
        Box::new(EdgeSep),
    ]
}

/// Coordinates only defined on the phase-2 subgroup <U, D, R2, L2, F2, B2>.
fn phase2_only() -> Vec<Box<dyn Coord>> {
    vec![Box::new(Edge8Perm), Box::new(Slice4Perm)]
}

const PHASE2_MOVES: [usize; 10] = [0, 1, 2, 9, 10, 11, 4, 7, 13, 16];

fn random_phase2(rng: &mut SplitMix64) -> Cube {
    let mut c = Cube::SOLVED;
    for _ in 0..40 {
        c = c.apply_move(Move::ALL[PHASE2_MOVES[rng.below(10) as usize]]);
    }
    c
}

#[test]
fn golden_values_after_r() {
    let c = after("R");
    assert_eq!(Twist.index(&c), 1494);
    assert_eq!(CornerPerm.index(&c), 21021);
}

#[test]
fn solved_is_zero_everywhere() {
    for coord in all_basic() {
        assert_eq!(coord.index(&Cube::SOLVED), 0, "{}", coord.name());
    }
}

#[test]
fn index_of_to_cube_is_identity_over_whole_range() {
    for coord in all_basic().into_iter().chain(phase2_only()) {
        let mut seen = vec![false; coord.size() as usize];
        for x in 0..coord.size() {
            assert_eq!(coord.index(&coord.to_cube(x)), x, "{} at {x}", coord.name());
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
    let fus = Composite::new(Flip, UdSlice);
    for x in (0..fus.size()).step_by(97) {
        assert_eq!(fus.index(&fus.to_cube(x)), x);
    }
}

#[test]
fn move_tables_agree_with_cube_moves() {
    let mut rng = SplitMix64::new(7);
    for coord in all_basic() {
        let mt = MoveTable::new(coord.as_ref());
        for _ in 0..200 {
            let c = Cube::random(&mut rng);
            for m in Move::ALL {
                assert_eq!(
                    mt.get(coord.index(&c), m),
                    coord.index(&c.apply_move(m)),
                    "{} move {m}",
                    coord.name()
                );
            }
        }
    }
}

#[test]
fn phase2_move_and_transform_tables_agree() {
    let syms = symmetries();
    let mut rng = SplitMix64::new(9);
    for coord in phase2_only() {
        let mt = MoveTable::new(coord.as_ref());
        let tt = TransformTable::new(coord.as_ref(), NSYM_UD);
        for _ in 0..200 {
            let c = random_phase2(&mut rng);
            for &m in &PHASE2_MOVES {
                let m = Move::ALL[m];
                assert_eq!(
                    mt.get(coord.index(&c), m),
                    coord.index(&c.apply_move(m)),
                    "{} move {m}",
                    coord.name()
                );
            }
            for s in 0..NSYM_UD {
                assert_eq!(
                    tt.get(s, coord.index(&c)),
                    coord.index(&syms.conjugate(&c, s)),
                    "{} sym {s}",
                    coord.name()
                );
            }
        }
    }
}

/// Coordinates and the symmetries that preserve their cosets. (Flip alone is preserved by
/// none but the identity and a few; FlipUDSlice is.)
fn transformable() -> Vec<(Box<dyn Coord>, usize)> {
    vec![
        (Box::new(Twist), NSYM_UD),
        (Box::new(Composite::new(Flip, UdSlice)), NSYM_UD),
        (Box::new(UdSlice), NSYM_UD),
        (Box::new(UdSliceSorted), NSYM_UD),
        (Box::new(CornerPerm), NSYM),
        (Box::new(CornerSep), NSYM),
        (Box::new(Composite::new(Twist, CornerSep)), NSYM),
        (Box::new(EdgeSep), NSYM),
    ]
}

#[test]
fn transform_tables_agree_with_conjugation() {
    let syms = symmetries();
    let mut rng = SplitMix64::new(11);
    for (coord, nsym) in transformable() {
        let tt = TransformTable::new(coord.as_ref(), nsym);
        for _ in 0..100 {
            let c = Cube::random(&mut rng);
            for s in 0..nsym {
                assert_eq!(
                    tt.get(s, coord.index(&c)),
                    coord.index(&syms.conjugate(&c, s)),
                    "{} sym {s}",
                    coord.name()
                );
            }
        }
    }
}

/// The H11 edge part (separation + orientation) is too large for a full transformation table
/// in a test; check instead that the conjugate's coordinate depends only on the coordinate.
#[test]
fn h11_edge_coordinate_is_compatible_with_all_48_symmetries() {
    let syms = symmetries();
    let coord = Composite::new(EdgeSep, Flip);
    let mut rng = SplitMix64::new(13);
    for _ in 0..300 {
        let c = Cube::random(&mut rng);
        let twin = coord.to_cube(coord.index(&c));
        for s in 0..NSYM {
            assert_eq!(
                coord.index(&syms.conjugate(&c, s)),
                coord.index(&syms.conjugate(&twin, s)),
                "sym {s}"
            );
        }
    }
}

#[test]
fn golden_class_counts() {
    assert_eq!(
        SymCoord::new(&Composite::new(Flip, UdSlice), NSYM_UD).classes(),
        64430
    );
    assert_eq!(SymCoord::new(&CornerPerm, NSYM_UD).classes(), 2768);
    assert_eq!(SymCoord::new(&UdSliceSorted, NSYM_UD).classes(), 788);
    let cocsep = SymCoord::new(&Composite::new(Twist, CornerSep), NSYM);
    assert_eq!(cocsep.classes(), 3393);
    // h0 = cocsep classes × E-slice positions × M-slice positions among the rest.
    assert_eq!(cocsep.classes() as u64 * 495 * 70, 117_567_450);
}

#[test]
fn symmetric_classes_are_closed_under_their_symmetries() {
    let syms = symmetries();
    let mut rng = SplitMix64::new(3);
    for (coord, nsym) in [
        (
            Box::new(Composite::new(Flip, UdSlice)) as Box<dyn Coord>,
            NSYM_UD,
        ),
        (Box::new(CornerPerm), NSYM_UD),
        (Box::new(UdSliceSorted), NSYM_UD),
        (Box::new(Composite::new(Twist, CornerSep)), NSYM),
    ] {
        let sc = SymCoord::new(coord.as_ref(), nsym);
        for _ in 0..100 {
            let c = Cube::random(&mut rng);
            let raw = coord.index(&c);
            let class = sc.class_of(raw);
            // The transformation to the representative does reach it.
            let t = sc.ttrep(raw);
            assert_eq!(coord.index(&syms.conjugate(&c, t)), sc.rep(class));
            for s in 0..nsym {
                assert_eq!(sc.class_of(coord.index(&syms.conjugate(&c, s))), class);
            }
            // Self-symmetries of the representative really fix it.
            let rep_cube = coord.to_cube(sc.rep(class));
            for s in 0..nsym {
                let fixed = coord.index(&syms.conjugate(&rep_cube, s)) == sc.rep(class);
                assert_eq!(fixed, sc.selfsym(class) & (1 << s) != 0);
            }
            for m in Move::ALL {
                let (nc, t) = sc.apply_move(class, m);
                let moved = coord.index(&rep_cube.apply_move(m));
                assert_eq!(nc, sc.class_of(moved));
                assert_eq!(t, sc.ttrep(moved));
            }
        }
    }
}

#[test]
fn sym_composite_moves_and_equivalences() {
    let syms = symmetries();
    let sc = SymComposite::new(Composite::new(Flip, UdSlice), Twist, NSYM_UD);
    assert_eq!(sc.size(), 140_908_410);
    let mut rng = SplitMix64::new(5);
    for _ in 0..300 {
        let c = Cube::random(&mut rng);
        let x = sc.index(&c);
        let mut eq = Vec::new();
        sc.for_each_equivalent(x, |y| eq.push(y));
        // Symmetric positions get an equivalent value.
        for s in 0..NSYM_UD {
            assert!(eq.contains(&sc.index(&syms.conjugate(&c, s))));
        }
        // to_cube is a section; moving by table equals moving the cube.
        let y = sc.to_cube(x);
        assert_eq!(sc.index(&y), x);
        for m in Move::ALL {
            assert_eq!(sc.apply_move(x, m), sc.index(&y.apply_move(m)));
        }
    }
}

fn arb_cube() -> impl Strategy<Value = Cube> {
    prop::collection::vec(0usize..18, 0..40)
        .prop_map(|v| Cube::from_moves(&v.into_iter().map(|i| Move::ALL[i]).collect::<Vec<_>>()))
}

proptest! {
    #[test]
    fn move_then_inverse_is_identity(c in arb_cube(), m in 0usize..18) {
        let m = Move::ALL[m];
        prop_assert_eq!(c.apply_move(m).apply_move(m.inverse()), c);
    }

    #[test]
    fn inverse_composes_to_solved(c in arb_cube()) {
        prop_assert!(c.compose(&c.inverse()).is_solved());
        prop_assert!(c.inverse().compose(&c).is_solved());
        prop_assert!(c.check().is_ok());
    }

    #[test]
    fn simd_and_scalar_composition_agree(a in arb_cube(), b in arb_cube()) {
        prop_assert_eq!(a.compose(&b), a.compose_scalar(&b));
    }

    #[test]
    fn composition_is_associative(a in arb_cube(), b in arb_cube(), c in arb_cube()) {
        prop_assert_eq!(a.compose(&b).compose(&c), a.compose(&b.compose(&c)));
    }

    #[test]
    fn four_quarter_turns_are_identity(c in arb_cube(), f in 0usize..6) {
        let m = Move::ALL[f * 3];
        prop_assert_eq!(c.apply_move(m).apply_move(m).apply_move(m).apply_move(m), c);
    }
}

#[test]
fn random_states_are_legal_and_varied() {
    let mut rng = SplitMix64::new(1);
    let mut parities = [0; 2];
    for _ in 0..1000 {
        let c = Cube::random(&mut rng);
        assert!(c.check().is_ok());
        parities[c.corner_parity() as usize] += 1;
    }
    assert!(parities[0] > 400 && parities[1] > 400);
}

#[test]
fn udslicesorted_twist_style_distribution_is_consistent() {
    // A small sym-composite table built end to end (UDSliceSorted classes × twist,
    // 788 · 2187 = 1,723,356 entries): every entry's depth is within one of each
    // neighbour's, the solved entry is 0, and every entry is reached.
    use crate::bfs::{generate, BfsOptions, PruneSpace};
    let sc = SymComposite::new(UdSliceSorted, Twist, NSYM_UD);
    let g = generate(&sc, &BfsOptions::default());
    assert_eq!(g.unreachable, 0);
    assert_eq!(g.distribution.iter().sum::<u64>(), sc.size());
    assert_eq!(g.table.get(sc.index(&Cube::SOLVED)), 0);
    let mut rng = SplitMix64::new(17);
    for _ in 0..2000 {
        let x = rng.below(sc.size());
        let d = g.table.get(x) as i32;
        sc.for_each_neighbour(x, |y| assert!((g.table.get(y) as i32 - d).abs() <= 1));
    }
    // The table is a true distance for real cubes: a cube 3 moves from solved is at most 3.
    for _ in 0..200 {
        let moves: Vec<Move> = (0..3).map(|_| Move::ALL[rng.below(18) as usize]).collect();
        assert!(g.table.get(sc.index(&Cube::from_moves(&moves))) <= 3);
    }
}
