use super::*;
use tables::canonical::can_follow;

#[test]
fn canonical_rules() {
    let m = |s: &str| tables::parse_moves(s).unwrap();
    assert!(is_canonical(&m("U D R L F B")));
    assert!(!is_canonical(&m("D U")));
    assert!(!is_canonical(&m("U U2")));
    assert!(is_canonical(&m("U R U")));
    // 18 first moves, then 15 or 12 after each.
    let two = Move::ALL
        .iter()
        .flat_map(|&a| Move::ALL.iter().map(move |&b| [a, b]))
        .filter(|s| is_canonical(s))
        .count();
    assert_eq!(two, 243);
}

#[test]
fn precede_is_the_canonical_rule_read_backwards() {
    for a in Move::ALL {
        for b in Move::ALL {
            let before = PRECEDE[b.face_index()] & (1 << a.index()) != 0;
            assert_eq!(before, can_follow(a, b), "{a} {b}");
        }
        assert_ne!(PRECEDE[START] & (1 << a.index()), 0);
    }
}
