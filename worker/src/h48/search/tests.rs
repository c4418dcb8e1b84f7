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

/// A main table that knows nothing (every entry 0, so the corner bound alone prunes),
/// claiming `bytes` of memory: the size decides how the prefetches are grouped.
struct Blind {
    bytes: u64,
}

impl Lookup for Blind {
    fn prefetch(&self, _idx: u64) {}
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn first(&self, _idx: u64) -> Option<u8> {
        Some(0)
    }
}

/// Grouping two lane steps' prefetches (tables from 2 GiB) changes when lines are asked
/// for, nothing else: every task gets what it gets with one step's, and what a lone
/// search gives.
#[test]
fn merged_prefetch_bursts_change_nothing_but_timing() {
    assert_eq!(merge_steps(1 << 30, 3), 1);
    assert_eq!(merge_steps(MERGE_FROM, 3), MERGE_MAX);
    assert_eq!(merge_steps(MERGE_FROM, 2), 1, "a merge needs three lanes");
    let cocsep = super::super::cocsep::Cocsep::compute(&super::super::cocsep::sym_coord());
    let mut p = Pruner {
        coords: super::super::coords::Coords::new(),
        cocsep,
        table: Blind { bytes: 1 << 20 },
        eo_bits: 0,
    };
    let cube = Cube::from_moves(&tables::parse_moves("R U2 F' L D' B").unwrap());
    let prefixes = tables::canonical::sequences(2);
    let stop = StopToken::new();
    let run = |p: &Pruner<Blind>| {
        let mut out: Vec<Option<Found>> = (0..prefixes.len()).map(|_| None).collect();
        let mut next = prefixes.iter().enumerate();
        search_lanes(
            p,
            &cube,
            6,
            3,
            &stop,
            &mut || next.next().map(|(i, q)| (i, &q[..], usize::MAX)),
            &mut |_| true,
            &mut |i, f| out[i] = Some(f),
        );
        out.into_iter()
            .map(|f| {
                let f = f.expect("every task answered");
                (f.solutions, f.nodes, f.lookups, f.stop == Stop::Exhausted)
            })
            .collect::<Vec<_>>()
    };
    let one = run(&p);
    p.table.bytes = MERGE_FROM;
    let merged = run(&p);
    assert_eq!(one, merged);
    let found: usize = merged.iter().map(|t| t.0.len()).sum();
    assert!(found > 0, "the scramble's own solution is found");
    for (i, q) in prefixes.iter().enumerate() {
        let lone = search(&p, &cube, q, 6, usize::MAX, &stop);
        assert_eq!(merged[i].0, lone.solutions, "task {i}");
        assert_eq!(merged[i].1, lone.nodes, "task {i}");
        for s in &lone.solutions {
            assert!(cube.apply_moves(s).is_solved());
        }
    }
}

/// Tasks taken ahead of their start ([`AHEAD`]) include tasks with no moves left (their
/// prefix is the whole depth: no root is made ahead for them) and sources shorter and
/// longer than the look-ahead: every task is answered once, as a lone search answers it.
#[test]
fn tasks_taken_ahead_are_each_answered_as_alone() {
    let cocsep = super::super::cocsep::Cocsep::compute(&super::super::cocsep::sym_coord());
    let p = Pruner {
        coords: super::super::coords::Coords::new(),
        cocsep,
        table: Blind { bytes: 1 << 20 },
        eo_bits: 0,
    };
    let cube = Cube::from_moves(&tables::parse_moves("R U2").unwrap());
    let stop = StopToken::new();
    for (depth, len, count) in [(2u8, 2usize, usize::MAX), (3, 2, 2), (3, 1, AHEAD + 1)] {
        let prefixes: Vec<_> = tables::canonical::sequences(len)
            .into_iter()
            .take(count)
            .collect();
        let mut out: Vec<Option<Found>> = (0..prefixes.len()).map(|_| None).collect();
        let mut next = prefixes.iter().enumerate();
        search_lanes(
            &p,
            &cube,
            depth,
            3,
            &stop,
            &mut || next.next().map(|(i, q)| (i, &q[..], usize::MAX)),
            &mut |_| true,
            &mut |i, f| assert!(out[i].replace(f).is_none(), "task {i} twice"),
        );
        let mut found = 0;
        for (i, q) in prefixes.iter().enumerate() {
            let got = out[i].take().expect("every task answered");
            let lone = search(&p, &cube, q, depth, usize::MAX, &stop);
            assert_eq!(got.solutions, lone.solutions, "depth {depth}, task {i}");
            assert_eq!(got.nodes, lone.nodes, "depth {depth}, task {i}");
            found += got.solutions.len();
        }
        if depth == 2 {
            // The one 2-move solution: U2 R'.
            assert_eq!(found, 1);
        }
    }
}
