use super::*;
use ::tables::coord::basic::{CornerPerm, Edge8Perm, Slice4Perm};
use ::tables::parse_moves;

#[test]
fn canonical_masks() {
    // After R: not R again; L may follow R (R before L), but R may not follow L.
    let r = 1;
    let l = 4;
    assert_eq!(AFTER[r] & (7 << (3 * r)), 0);
    assert_ne!(AFTER[r] & (7 << (3 * l)), 0);
    assert_eq!(AFTER[l] & (7 << (3 * r)), 0);
    assert_eq!(AFTER[START].count_ones(), 18);
    // Phase 2 after a quarter turn of R: U, D and every half turn but R2.
    assert_eq!(P2_ALLOWED[r].count_ones(), 9);
    assert_eq!(LAST_PHASE1.count_ones(), 8);
}

/// The phase-1 rule "a node in the phase-2 group with 1..=4 moves left is not entered"
/// is exact: no canonical sequence of 1 to 4 moves ending with a quarter turn of R, L,
/// F or B maps the phase-2 group to itself (it would be an element of the group).
#[test]
fn no_short_excursion_returns_to_the_phase2_group() {
    fn walk(c: Cube, len: usize, last: usize, seq: &mut Vec<usize>) {
        if !seq.is_empty() && LAST_PHASE1 & (1 << seq[seq.len() - 1]) != 0 {
            let in_h = Flip.index(&c) == 0 && Twist.index(&c) == 0 && UdSlice.index(&c) == 0;
            assert!(!in_h, "{seq:?} stays in the phase-2 group");
        }
        if seq.len() == len {
            return;
        }
        let mut mask = AFTER[last];
        while mask != 0 {
            let m = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            seq.push(m);
            walk(c.apply_move(Move::ALL[m]), len, m / 3, seq);
            seq.pop();
        }
    }
    walk(Cube::SOLVED, 4, START, &mut Vec::new());
}

#[test]
fn fast_permutation_indices_agree_with_the_coordinates() {
    let mut rng = ::tables::SplitMix64::new(5);
    for _ in 0..2000 {
        let c = Cube::random(&mut rng);
        let cp = perm_index(std::array::from_fn::<u8, 8, _>(|i| c.corner(i)));
        assert_eq!(u32::from(cp), CornerPerm.index(&c));
        // Phase-2 positions for the edge coordinates.
        let d = Cube::from_moves(
            &(0..20)
                .map(|_| Move::ALL[PHASE2_MOVES[rng.below(10) as usize] as usize])
                .collect::<Vec<_>>(),
        );
        let e8 = perm_index(std::array::from_fn::<u8, 8, _>(|i| d.edge(i)));
        assert_eq!(u32::from(e8), Edge8Perm.index(&d));
        let s4 = perm_index(std::array::from_fn::<u8, 4, _>(|i| d.edge(8 + i) & 3));
        assert_eq!(u32::from(s4), Slice4Perm.index(&d));
    }
}

#[test]
fn merging_moves() {
    let mut m = parse_moves("F R L").unwrap();
    push_merged(&mut m, parse_moves("R").unwrap()[0]);
    assert_eq!(m, parse_moves("F R2 L").unwrap());
    push_merged(&mut m, parse_moves("L'").unwrap()[0]);
    assert_eq!(m, parse_moves("F R2").unwrap());
    push_merged(&mut m, parse_moves("R2").unwrap()[0]);
    assert_eq!(m, parse_moves("F").unwrap());
    push_merged(&mut m, parse_moves("U").unwrap()[0]);
    assert_eq!(m, parse_moves("F U").unwrap());
}
