use super::*;
use crate::{Cube, Move};
use proptest::prelude::*;
use std::collections::VecDeque;

/// The corner-orientation (twist) coordinate: orientations of corners 0..7 in base 3,
/// corner 0 most significant; the eighth follows from the others.
struct Twist;

impl Twist {
    fn cube(x: u64) -> Cube {
        let mut co = [0u8; 8];
        let mut rest = x;
        for i in (0..7).rev() {
            co[i] = (rest % 3) as u8;
            rest /= 3;
        }
        co[7] = (3 - co[..7].iter().sum::<u8>() % 3) % 3;
        Cube::from_parts_unchecked(
            [0, 1, 2, 3, 4, 5, 6, 7],
            co,
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            [0; 12],
        )
    }

    fn index(c: &Cube) -> u64 {
        (0..7).fold(0, |a, i| a * 3 + u64::from(c.corner_ori(i)))
    }
}

impl PruneSpace for Twist {
    fn size(&self) -> u64 {
        2187
    }
    fn solved(&self) -> Vec<u64> {
        vec![0]
    }
    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, mut f: F) {
        let c = Twist::cube(x);
        for m in Move::ALL {
            f(Twist::index(&c.apply_move(m)));
        }
    }
}

/// `digits` base-3 digits, a move changes one digit by ±1 (mod 3): the distance from
/// 0 is the number of non-zero digits, so level `j` holds `C(digits, j) * 2^j`
/// entries. Extra indices after `3^digits` are isolated (unreachable). Stops early in
/// `any_neighbour`.
struct Ternary {
    digits: u32,
    isolated: u64,
    solved: Vec<u64>,
}

impl Ternary {
    fn new(digits: u32) -> Ternary {
        Ternary {
            digits,
            isolated: 0,
            solved: vec![0],
        }
    }
    fn reachable(&self) -> u64 {
        3u64.pow(self.digits)
    }
}

impl PruneSpace for Ternary {
    fn size(&self) -> u64 {
        self.reachable() + self.isolated
    }
    fn solved(&self) -> Vec<u64> {
        self.solved.clone()
    }
    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, mut f: F) {
        self.any_neighbour(x, |y| {
            f(y);
            false
        });
    }
    fn any_neighbour<P: FnMut(u64) -> bool>(&self, x: u64, mut pred: P) -> bool {
        if x >= self.reachable() {
            return false;
        }
        let mut p = 1;
        for _ in 0..self.digits {
            let digit = x / p % 3;
            let up = x - digit * p + (digit + 1) % 3 * p;
            let down = x - digit * p + (digit + 2) % 3 * p;
            if pred(up) || pred(down) {
                return true;
            }
            p *= 3;
        }
        false
    }
}

/// An arbitrary undirected graph.
#[derive(Debug)]
struct Graph {
    adj: Vec<Vec<u64>>,
    solved: Vec<u64>,
}

impl PruneSpace for Graph {
    fn size(&self) -> u64 {
        self.adj.len() as u64
    }
    fn solved(&self) -> Vec<u64> {
        self.solved.clone()
    }
    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, f: F) {
        self.adj[x as usize].iter().copied().for_each(f);
    }
}

/// Plain sequential BFS: exact distances, `None` for unreachable.
fn reference<S: PruneSpace>(space: &S) -> Vec<Option<u32>> {
    let mut depth = vec![None; space.size() as usize];
    let mut queue = VecDeque::new();
    for s in space.solved() {
        if depth[s as usize].is_none() {
            depth[s as usize] = Some(0);
            queue.push_back(s);
        }
    }
    while let Some(x) = queue.pop_front() {
        let dx = depth[x as usize].unwrap();
        space.for_each_neighbour(x, |y| {
            if depth[y as usize].is_none() {
                depth[y as usize] = Some(dx + 1);
                queue.push_back(y);
            }
        });
    }
    depth
}

/// What `generate` must store for each entry given exact distances and `max_depth`.
fn expected_values(exact: &[Option<u32>], max_depth: u8) -> Vec<u8> {
    let deepest = exact.iter().flatten().max().copied().unwrap_or(0);
    let leftover = if deepest >= u32::from(max_depth) {
        max_depth + 1
    } else {
        UNSET
    };
    exact
        .iter()
        .map(|d| match d {
            Some(d) if *d <= u32::from(max_depth) => *d as u8,
            _ => leftover,
        })
        .collect()
}

fn run<S: PruneSpace>(space: &S, direction: Direction, max_depth: u8) -> Generated {
    let opts = BfsOptions {
        name: "test".into(),
        max_depth,
        direction,
    };
    let g = generate(space, &opts);
    assert_eq!(
        g.table.distribution(),
        g.distribution,
        "reported distribution matches the table"
    );
    g
}

fn values(t: &Packed4) -> Vec<u8> {
    (0..t.len()).map(|i| t.get(i)).collect()
}

#[test]
fn twist_test_space_matches_kociemba() {
    // Seed 004's worked value: twist 1494 after R.
    let r = Move::ALL[3];
    assert_eq!(Twist::index(&Cube::SOLVED.apply_move(r)), 1494);
    for x in [0, 1, 1494, 2186] {
        assert_eq!(Twist::index(&Twist::cube(x)), x);
    }
}

#[test]
fn twist_distribution_is_golden_for_every_strategy() {
    let golden = [1, 4, 34, 186, 816, 1018, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let fwd = run(&Twist, Direction::ForwardOnly, MAX_DEPTH);
    assert_eq!(fwd.distribution, golden);
    assert_eq!(
        (fwd.depth, fwd.capped, fwd.unreachable, fwd.backward_from),
        (6, 0, 0, None)
    );
    let auto = run(&Twist, Direction::Auto, MAX_DEPTH);
    // Level 6 is the first where the 128 unset entries are fewer than the 1018 at depth 5.
    assert_eq!(auto.backward_from, Some(6));
    let back = run(&Twist, Direction::BackwardOnly, MAX_DEPTH);
    assert_eq!(back.backward_from, Some(1));
    assert_eq!(auto.table.as_bytes(), fwd.table.as_bytes());
    assert_eq!(back.table.as_bytes(), fwd.table.as_bytes());
    let exact = reference(&Twist);
    assert_eq!(values(&fwd.table), expected_values(&exact, MAX_DEPTH));
}

#[test]
fn twist_table_is_consistent_with_moves() {
    let t = run(&Twist, Direction::Auto, MAX_DEPTH).table;
    for x in 0..2187 {
        let d = t.get(x);
        let mut best = u8::MAX;
        Twist.for_each_neighbour(x, |y| {
            let e = t.get(y);
            assert!(
                e.abs_diff(d) <= 1,
                "neighbours {x} and {y} differ by more than one move"
            );
            best = best.min(e);
        });
        if x != 0 {
            assert_eq!(best + 1, d, "entry {x} has no neighbour one move closer");
        }
    }
}

#[test]
fn large_space_spanning_many_chunks_is_golden() {
    // 3^12 = 531441 entries: 17 chunks, and a last word only partly used.
    let space = Ternary::new(12);
    let binom = |n: u64, k: u64| (0..k).fold(1u64, |a, i| a * (n - i) / (i + 1));
    let golden: Vec<u64> = (0..=12).map(|j| binom(12, j) << j).collect();
    let mut tables = Vec::new();
    for strategy in [
        Direction::ForwardOnly,
        Direction::Auto,
        Direction::BackwardOnly,
    ] {
        let g = run(&space, strategy, MAX_DEPTH);
        assert_eq!(&g.distribution[..13], &golden[..], "{strategy:?}");
        assert_eq!(g.depth, 12);
        tables.push(g.table);
    }
    assert_eq!(tables[0].as_bytes(), tables[1].as_bytes());
    assert_eq!(tables[0].as_bytes(), tables[2].as_bytes());
    assert_eq!(
        values(&tables[0]),
        expected_values(&reference(&space), MAX_DEPTH)
    );
}

#[test]
fn max_depth_caps_the_far_entries() {
    let space = Ternary::new(9);
    for strategy in [
        Direction::ForwardOnly,
        Direction::Auto,
        Direction::BackwardOnly,
    ] {
        let g = run(&space, strategy, 4);
        assert_eq!(
            &g.distribution[..5],
            &[1, 18, 144, 672, 2016],
            "{strategy:?}"
        );
        // Depths 5..=9 all become "at least 5".
        assert_eq!(g.distribution[5], 4032 + 5376 + 4608 + 2304 + 512);
        assert_eq!(g.capped, g.distribution[5]);
        assert_eq!((g.depth, g.unreachable), (4, 0));
        assert_eq!(values(&g.table), expected_values(&reference(&space), 4));
    }
}

#[test]
fn unreachable_entries_stay_at_15() {
    let space = Ternary {
        digits: 5,
        isolated: 7,
        solved: vec![0],
    };
    for strategy in [
        Direction::ForwardOnly,
        Direction::Auto,
        Direction::BackwardOnly,
    ] {
        let g = run(&space, strategy, MAX_DEPTH);
        assert_eq!(
            (g.unreachable, g.capped, g.distribution[15]),
            (7, 0, 7),
            "{strategy:?}"
        );
        assert!((243..250).all(|i| g.table.get(i) == UNSET));
    }
}

#[test]
fn several_solved_indices_are_all_depth_zero() {
    // 0 and 122 (= 11112 in base 3) and a duplicate: distance is to the nearer one.
    let space = Ternary {
        digits: 5,
        isolated: 0,
        solved: vec![0, 122, 122],
    };
    let g = run(&space, Direction::Auto, MAX_DEPTH);
    assert_eq!(g.distribution[0], 2);
    assert_eq!(
        values(&g.table),
        expected_values(&reference(&space), MAX_DEPTH)
    );
}

#[test]
fn two_bit_version_follows_the_base() {
    let g = run(&Twist, Direction::Auto, MAX_DEPTH);
    let two = g.to_packed2(3);
    assert_eq!(two.base(), 3);
    // Depths 0..=3 -> 0, 4 -> 1, 5 -> 2, 6 -> 3.
    assert_eq!(two.distribution(), [1 + 4 + 34 + 186, 816, 1018, 128]);
}

#[test]
fn more_threads_than_work_and_one_thread_agree() {
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let many = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    let space = Ternary::new(10);
    let a = single.install(|| run(&space, Direction::Auto, MAX_DEPTH));
    let b = many.install(|| run(&space, Direction::Auto, MAX_DEPTH));
    assert_eq!(a.table.as_bytes(), b.table.as_bytes());
}

fn arbitrary_graph() -> impl proptest::strategy::Strategy<Value = Graph> {
    (1usize..300).prop_flat_map(|n| {
        (
            proptest::collection::vec((0..n as u64, 0..n as u64), 0..n * 2),
            proptest::collection::vec(0..n as u64, 1..4),
        )
            .prop_map(move |(edges, solved)| {
                let mut adj = vec![Vec::new(); n];
                for (a, b) in edges {
                    adj[a as usize].push(b);
                    adj[b as usize].push(a);
                }
                Graph { adj, solved }
            })
    })
}

proptest! {
    #[test]
    fn every_strategy_matches_plain_bfs_on_any_graph(graph in arbitrary_graph(), max_depth in 0u8..=16) {
        let exact = reference(&graph);
        let expect = expected_values(&exact, max_depth.min(MAX_DEPTH));
        for strategy in [Direction::ForwardOnly, Direction::Auto, Direction::BackwardOnly] {
            let g = run(&graph, strategy, max_depth);
            prop_assert_eq!(values(&g.table), expect.clone(), "{:?}", strategy);
            prop_assert_eq!(g.distribution.iter().sum::<u64>(), graph.size());
        }
    }
}
