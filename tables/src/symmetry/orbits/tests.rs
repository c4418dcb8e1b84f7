use super::*;
use crate::canonical::sequences;
use crate::{parse_moves, Position, SplitMix64};
use std::collections::BTreeSet;

const SUPERFLIP: &str = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";

/// Every canonical sequence of `d <= 7` moves that solves `c`, by meeting in the middle:
/// a canonical `A` of `d - b` moves, then the `B` of `b <= 4` moves with `c·A·B` solved.
struct Brute {
    by_cube: HashMap<Cube, Vec<Vec<Move>>>,
}

impl Brute {
    fn new() -> Brute {
        let mut by_cube: HashMap<Cube, Vec<Vec<Move>>> = HashMap::new();
        for b in 0..=4 {
            for s in sequences(b) {
                by_cube.entry(Cube::from_moves(&s)).or_default().push(s);
            }
        }
        Brute { by_cube }
    }

    fn solutions(&self, c: &Cube, d: usize) -> BTreeSet<Vec<Move>> {
        let b = d.min(4);
        let mut out = BTreeSet::new();
        for a in sequences(d - b) {
            let need = c.apply_moves(&a).inverse();
            for tail in self.by_cube.get(&need).into_iter().flatten() {
                if tail.len() != b {
                    continue;
                }
                let ok = match (a.last(), tail.first()) {
                    (Some(&x), Some(&y)) => can_follow(x, y),
                    _ => true,
                };
                if ok {
                    let mut s = a.clone();
                    s.extend_from_slice(tail);
                    out.insert(s);
                }
            }
        }
        out
    }
}

fn cube(scramble: &str) -> Cube {
    *Position::parse(scramble).unwrap().cube()
}

/// Positions a few moves deep with symmetry groups of every size the tests want (2, 2, 4,
/// 4, 8, 8, 8, 16, 16, 48, 6), some with many solutions of 5 to 7 moves.
const SYMMETRIC: [&str; 11] = [
    "U2 F2",
    "U2 R2 L2 D2 R",
    "U",
    "U2 L2 F2 B2 R2",
    "U2",
    "U D'",
    "U2 R2 L2 D2",
    "U2 D2",
    "R2 L2 U2 D2",
    "R2 L2 U2 D2 F2 B2",
    "U D' R L' F B' U D'",
];

#[test]
fn the_test_positions_cover_groups_of_2_to_48() {
    let sizes: BTreeSet<usize> = SYMMETRIC
        .iter()
        .map(|s| PrefixOrbits::of(&cube(s)).group().len())
        .collect();
    for want in [2, 4, 8, 16, 48] {
        assert!(sizes.contains(&want), "no position with {want}: {sizes:?}");
    }
}

/// The kept prefixes' solutions, regenerated, are every solution, at the optimal length
/// and beyond it (where canonical order could break at a prefix's end), for prefixes of
/// one to three moves, whichever prefix of each class is kept (costs drawn at random).
#[test]
fn regenerated_solutions_equal_the_unreduced_search() {
    let brute = Brute::new();
    let mut rng = SplitMix64::new(37);
    let mut reduced_somewhere = false;
    for scramble in SYMMETRIC {
        let c = cube(scramble);
        let orbits = PrefixOrbits::of(&c);
        for len in 1..=3 {
            let prefixes = sequences(len);
            let classes = orbits.classes(len);
            assert_eq!(classes.len(), prefixes.len());
            for round in 0..4 {
                let costs: Vec<u64> = (0..prefixes.len()).map(|_| rng.below(4)).collect();
                let keep = classes.keep(|i| if round == 0 { 0 } else { costs[i as usize] });
                assert_eq!(keep.prefixes.len(), classes.classes());
                for d in len..=7 {
                    let all = brute.solutions(&c, d);
                    let found: Vec<Vec<Move>> = (all.iter())
                        .filter(|s| keep.holds(&prefixes, len, s))
                        .cloned()
                        .collect();
                    reduced_somewhere |= found.len() < all.len();
                    let again: BTreeSet<Vec<Move>> =
                        orbits.regenerate(&found, len).into_iter().collect();
                    assert_eq!(again, all, "{scramble:?} at {d} moves, prefixes of {len}");
                }
            }
        }
    }
    assert!(reduced_somewhere);
}

/// Keeping a class's cheapest prefix is what `keep` does.
#[test]
fn keep_takes_the_cheapest_of_each_class() {
    let orbits = PrefixOrbits::of(&cube("U2 D2"));
    let classes = orbits.classes(2);
    let by_index = classes.keep(|_| 0);
    let by_cost = classes.keep(|i| 1_000 - u64::from(i));
    assert_ne!(by_index.prefixes, by_cost.prefixes);
    assert!(by_index.prefixes.len() < 243 / 4, "{by_index:?}");
    let prefixes = sequences(2);
    for k in [&by_index, &by_cost] {
        let seen: BTreeSet<usize> = (k.prefixes.iter()).map(|&i| classes.class_of(i)).collect();
        assert_eq!(seen.len(), classes.classes(), "one per class");
        assert!(k.pairs.iter().all(|&(i, m)| {
            let last = prefixes[i as usize][1];
            m.axis() == last.axis() && m.face_index() == last.face_index() + 3
        }));
    }
    // The most expensive of each class by index is the cheapest by cost.
    for &i in &by_cost.prefixes {
        let c = classes.class_of(i);
        assert!((0..243u32).all(|j| classes.class_of(j) != c || j <= i));
    }
}

#[test]
fn a_position_without_symmetry_keeps_every_prefix() {
    let mut rng = SplitMix64::new(7);
    for _ in 0..20 {
        let c = Cube::random(&mut rng);
        let orbits = PrefixOrbits::of(&c);
        assert!(orbits.is_trivial());
        let classes = orbits.classes(3);
        assert_eq!(classes.classes(), sequences(3).len());
        let k = classes.keep(|_| 0);
        assert_eq!(k.prefixes, (0..3240).collect::<Vec<u32>>());
        assert!(k.pairs.is_empty());
        let found = vec![parse_moves("R U F").unwrap(), parse_moves("D L").unwrap()];
        let mut sorted = found.clone();
        sorted.sort();
        assert_eq!(orbits.regenerate(&found, 3), sorted);
    }
    let forced = PrefixOrbits::none(&cube(SUPERFLIP));
    assert_eq!(forced.classes(2).classes(), sequences(2).len());
}

/// The superflip's 48 symmetries leave about one four-move prefix in 48 (a class has at
/// most 48 members; prefixes that some symmetry fixes make a few more).
#[test]
fn the_superflip_keeps_about_one_prefix_in_48() {
    let orbits = PrefixOrbits::of(&cube(SUPERFLIP));
    assert_eq!(orbits.group().len(), 48);
    let all = sequences(4).len();
    let kept = orbits.classes(4).keep(|_| 0).prefixes;
    assert!(kept.len() * 48 >= all, "{}", kept.len());
    assert!(kept.len() * 40 <= all, "{}", kept.len());
}

/// Under the group alone, first moves fall into their orbits: one kept per orbit.
#[test]
fn first_moves_are_one_per_orbit_of_the_group() {
    let s = symmetries();
    for scramble in SYMMETRIC {
        let orbits = PrefixOrbits::of(&cube(scramble));
        let kept: Vec<Move> = (orbits.classes(1).keep(|_| 0).prefixes.into_iter())
            .map(|i| Move::ALL[i as usize])
            .collect();
        let mut covered = BTreeSet::new();
        for &m in &kept {
            for t in orbits.group().iter() {
                let image = s.conj_move[t][m.index()];
                assert!(
                    image == m || !kept.contains(&image),
                    "{scramble:?}: {m} {image}"
                );
                covered.insert(image);
            }
        }
        assert_eq!(covered.len(), 18, "{scramble:?}");
    }
}

#[test]
fn canonical_order_swaps_opposite_faces_and_refuses_repeats() {
    let m = |s: &str| parse_moves(s).unwrap();
    assert_eq!(canonical_order(m("D U R L'")), Some(m("U D R L'")));
    assert_eq!(canonical_order(m("R L2 B F")), Some(m("R L2 F B")));
    assert_eq!(canonical_order(m("U D U")), None);
    assert_eq!(canonical_order(m("U U2")), None);
}
