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
/// one to three moves.
#[test]
fn regenerated_solutions_equal_the_unreduced_search() {
    let brute = Brute::new();
    let mut reduced_somewhere = false;
    for scramble in SYMMETRIC {
        let c = cube(scramble);
        let orbits = PrefixOrbits::of(&c);
        for d in 1..=7 {
            let all = brute.solutions(&c, d);
            for len in 1..=3.min(d) {
                let kept = orbits.prefixes(len);
                let found: Vec<Vec<Move>> = (all.iter())
                    .filter(|s| kept.iter().any(|p| s.starts_with(p)))
                    .cloned()
                    .collect();
                reduced_somewhere |= found.len() < all.len();
                let again: BTreeSet<Vec<Move>> =
                    orbits.regenerate(&found, len).into_iter().collect();
                assert_eq!(again, all, "{scramble:?} at {d} moves, prefixes of {len}");
            }
        }
    }
    assert!(reduced_somewhere);
}

#[test]
fn a_position_without_symmetry_keeps_every_prefix() {
    let mut rng = SplitMix64::new(7);
    for _ in 0..20 {
        let c = Cube::random(&mut rng);
        let orbits = PrefixOrbits::of(&c);
        assert!(orbits.is_trivial());
        assert_eq!(orbits.prefixes(3), sequences(3));
        let found = vec![parse_moves("R U F").unwrap(), parse_moves("D L").unwrap()];
        let mut sorted = found.clone();
        sorted.sort();
        assert_eq!(orbits.regenerate(&found, 3), sorted);
    }
    let forced = PrefixOrbits::none(&cube(SUPERFLIP));
    assert_eq!(forced.prefixes(2), sequences(2));
}

/// The superflip's 48 symmetries leave about one four-move prefix in 48 (an orbit has at
/// most 48 members; prefixes that some symmetry fixes make a few more).
#[test]
fn the_superflip_keeps_about_one_prefix_in_48() {
    let orbits = PrefixOrbits::of(&cube(SUPERFLIP));
    assert_eq!(orbits.group().len(), 48);
    let all = sequences(4).len();
    let kept = orbits.prefixes(4);
    assert!(kept.len() * 48 >= all, "{}", kept.len());
    assert!(kept.len() * 40 <= all, "{}", kept.len());
    assert!(kept.iter().all(|p| crate::canonical::is_canonical(p)));
    let mut sorted = kept.clone();
    sorted.sort();
    assert_eq!(sorted, kept, "in the order of canonical::sequences");
}

/// A kept prefix's image under the group is never kept too (one per orbit at the root).
#[test]
fn first_moves_are_one_per_orbit_of_the_group() {
    let s = symmetries();
    for scramble in SYMMETRIC {
        let orbits = PrefixOrbits::of(&cube(scramble));
        let kept: Vec<Move> = orbits.prefixes(1).into_iter().map(|p| p[0]).collect();
        let mut covered = BTreeSet::new();
        for &m in &kept {
            for t in orbits.group().iter() {
                let image = s.conj_move[t][m.index()];
                assert!(image == m || !kept.contains(&image), "{scramble:?}: {m} {image}");
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

