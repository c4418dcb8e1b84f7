//! H48 search: optimality against brute force and known distances, the search
//! primitive's contract, settings and stop reasons. Every solution returned is checked to
//! solve its position.
//!
//! Run: `cargo test -p cubeswarm-worker h48` (uses the cached h48h0k4 test table).

use crate::h48_common;

use proto::PositionResult as Outcome;
use proto::{Job, JobId, JobOutput, JobResult, Settings, Stop, SubtreeWork, Work};
use std::collections::BTreeSet;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tables::canonical::is_canonical;
use tables::{parse_moves, Cube, CubieError, Move, Position, SplitMix64};
use worker::{Engine, Engines, Error, H48Solver, JobRunner, StopToken};

fn cube(s: &str) -> Cube {
    Cube::from_moves(&parse_moves(s).unwrap())
}

fn pos(c: &Cube) -> Position {
    Position::new(*c).unwrap()
}

fn assert_solves(c: &Cube, sols: &[Vec<Move>]) {
    for s in sols {
        assert!(c.apply_moves(s).is_solved(), "{s:?} does not solve");
        assert!(is_canonical(s), "{s:?} is not canonical");
    }
}

/// `c` solved as `settings` ask (validated first, as every caller does), on this thread,
/// never stopped.
fn solve(solver: &H48Solver, c: &Cube, settings: &Settings) -> Result<Outcome, Error> {
    let settings = settings.clone().validate()?;
    solver.solve(&pos(c), &settings, &StopToken::new())
}

/// The first optimal solution of `c`, on this thread.
fn solve_first(solver: &H48Solver, c: &Cube) -> Outcome {
    solve(solver, c, &Settings::default()).unwrap()
}

/// The first optimal solution of `c` and the longest length proved to have none, found
/// as the coordinator spreads a deep position: from the lower bound up, each depth is cut
/// into the 43,254 canonical 4-move prefixes, sent as two subtree jobs to a two-thread
/// executor (each job interleaves two subtrees on its thread); when one job finds a
/// solution the other is cancelled, and a depth whose subtrees were all searched whole
/// is proved empty.
fn solve_by_subtrees(solver: &H48Solver, c: &Cube) -> (Vec<Move>, Option<u8>) {
    let mut engines = Engines::default();
    engines.insert(Engine::Optimal(solver.clone()));
    let (tx, rx) = mpsc::channel::<JobResult>();
    let tx = Mutex::new(tx);
    let sink = Arc::new(move |r: JobResult| {
        if let Ok(tx) = tx.lock() {
            let _ = tx.send(r);
        }
    });
    let ex = JobRunner::new(2, Arc::new(engines), sink).unwrap();
    let position = pos(c);
    let lb = solver.lower_bound(c);
    let all = tables::canonical::sequences(4);
    let halves = [all[..all.len() / 2].to_vec(), all[all.len() / 2..].to_vec()];
    let mut proved = lb.checked_sub(1);
    for depth in lb..=20 {
        if depth < 4 {
            // Too short for 4-move prefixes: the whole tree is one subtree.
            let out = solver.search(c, &[], depth, 1, &StopToken::new());
            assert!(out.stop != Stop::Cancelled && out.stop != Stop::TimeLimit);
            if let Some(s) = out.solutions.into_iter().next() {
                return (s, proved);
            }
            proved = Some(depth);
            continue;
        }
        let ids = [JobId(2 * u64::from(depth)), JobId(2 * u64::from(depth) + 1)];
        for (id, prefixes) in ids.iter().zip(&halves) {
            ex.submit(Job {
                id: *id,
                attempt: 1,
                table: solver.table_name().into(),
                work: Work::Subtrees(SubtreeWork {
                    position,
                    depth,
                    prefixes: prefixes.clone(),
                    max_solutions: Some(1),
                    time_limit_ms: None,
                    pieces: 0,
                    split: false,
                }),
            });
        }
        let mut first = None;
        let mut searched = 0;
        for _ in 0..2 {
            let r = rx.recv().expect("a subtree result");
            let Ok(JobOutput::Subtrees(results)) = r.output else {
                panic!("subtree job failed: {:?}", r.output);
            };
            for sr in results {
                searched += usize::from(sr.stop == Stop::Exhausted);
                if first.is_none() {
                    first = sr.solutions.into_iter().next();
                }
            }
            if first.is_some() {
                ids.iter().for_each(|&id| {
                    ex.cancel(id);
                });
            }
        }
        if let Some(s) = first {
            return (s, proved);
        }
        assert_eq!(searched, all.len(), "depth {depth} searched whole");
        proved = Some(depth);
    }
    panic!("no solution within 20 moves");
}

/// Every canonical sequence of exactly `d` moves solving `c`, by plain enumeration.
fn brute_force(c: &Cube, d: usize) -> BTreeSet<Vec<Move>> {
    fn go(c: &Cube, left: usize, path: &mut Vec<Move>, out: &mut BTreeSet<Vec<Move>>) {
        if left == 0 {
            if c.is_solved() {
                out.insert(path.clone());
            }
            return;
        }
        for m in Move::ALL {
            if path.last().is_some_and(|&l| !is_canonical(&[l, m])) {
                continue;
            }
            path.push(m);
            go(&c.apply_move(m), left - 1, path, out);
            path.pop();
        }
    }
    let mut out = BTreeSet::new();
    go(c, d, &mut Vec::new(), &mut out);
    out
}

/// `count` random scrambles of 1 to 6 moves from `seed`: the solver's optimal length and
/// its set of all optimal solutions (no duplicates) agree with brute force.
fn check_short_scrambles(solver: &H48Solver, seed: u64, count: usize) {
    let mut rng = SplitMix64::new(seed);
    for k in 0..count {
        let len = 1 + k % 6;
        let moves: Vec<Move> = (0..len)
            .map(|_| Move::ALL[rng.below(18) as usize])
            .collect();
        let c = Cube::from_moves(&moves);
        let optimal = (0..=len).find(|&d| !brute_force(&c, d).is_empty()).unwrap();
        let all = brute_force(&c, optimal);
        let settings = Settings {
            max_solutions: None,
            ..Default::default()
        };
        let r = solve(solver, &c, &settings).unwrap();
        assert!(r.optimal);
        assert_eq!(r.stop, Stop::Completed);
        assert_solves(&c, &r.solutions);
        let got: BTreeSet<Vec<Move>> = r.solutions.iter().cloned().collect();
        assert_eq!(got.len(), r.solutions.len(), "duplicates for {moves:?}");
        assert_eq!(got, all, "scramble {moves:?}");
        assert!(solver.lower_bound(&c) as usize <= optimal);
    }
}

/// What the search's shared estimates rest on: a move made before a position (`U · x`,
/// the back side of the search, and the front side's inverse) changes its H48 coordinate
/// only by its coset of H, which contains the half turns: `U2 · x` keeps the table entry
/// of `x`, and `U' · x = U2 · U · x` reads the entry of `U · x`, with or without
/// orientation bits.
#[test]
fn h48_a_face_s_quarter_turns_before_a_position_share_its_table_entry() {
    let mut rng = SplitMix64::new(21);
    for solver in [h48_common::h0k4(), h48_common::h2k2_base3()] {
        for _ in 0..200 {
            let moves: Vec<Move> = (0..20).map(|_| Move::ALL[rng.below(18) as usize]).collect();
            let x = Cube::from_moves(&moves);
            let before = |m: usize| Cube::from_moves(&[Move::ALL[m]]).compose(&x);
            for face in 0..6 {
                let (q, h, q3) = (3 * face, 3 * face + 1, 3 * face + 2);
                assert_eq!(solver.table_index(&before(h)), solver.table_index(&x));
                assert_eq!(
                    solver.table_index(&before(q)),
                    solver.table_index(&before(q3)),
                    "{moves:?}, face {face}"
                );
            }
        }
    }
}

/// Short random scrambles through h48h0k4.
#[test]
fn h48_short_scrambles_match_brute_force() {
    check_short_scrambles(h48_common::h0k4(), 3, 24);
}

/// The same through a 2-bit table (h48h2k2 with base 3, entries "at most 3" falling back
/// on h48h0k4), and a 10-move position whose length agrees with the 4-bit solver's.
#[test]
fn h48_k2_table_finds_every_optimal_solution() {
    let solver = h48_common::h2k2_base3();
    check_short_scrambles(solver, 5, 18);
    let c = cube("R U2 F' L D2 B R' U F2 D");
    let a = solve_first(solver, &c);
    let b = solve_first(h48_common::h0k4(), &c);
    assert_solves(&c, &a.solutions);
    assert!(a.optimal && b.optimal);
    assert_eq!(a.solutions[0].len(), b.solutions[0].len());
}

/// The same 2-bit table with eoesep as its fallback: every optimal solution still, the
/// same solution sets as with h48h0k4's fallback, and a bound that sees flipped edges.
#[test]
fn h48_eoesep_fallback_finds_every_optimal_solution_and_sees_flips() {
    let with_eo = h48_common::h2k2_base3_eoesep();
    let with_h0 = h48_common::h2k2_base3();
    check_short_scrambles(with_eo, 6, 18);
    let all = Settings {
        max_solutions: None,
        ..Default::default()
    };
    for s in [
        "R U2 F' L D2 B R' U F2 D",
        "F B U2 D2 F' B' R L'",
        "U R2 F B R B2",
    ] {
        let c = cube(s);
        let a = solve(with_eo, &c, &all).unwrap();
        let b = solve(with_h0, &c, &all).unwrap();
        assert!(a.optimal && b.optimal, "{s}");
        assert_solves(&c, &a.solutions);
        let a: BTreeSet<_> = a.solutions.into_iter().collect();
        let b: BTreeSet<_> = b.solutions.into_iter().collect();
        assert_eq!(a, b, "{s}");
    }
    // Two edges flipped in place (positions 0 and 1), everything else solved: the
    // h48h2k2 coordinate reads only the orientation of positions 10 and 11, so its entry
    // is the solved one's, "at most 3". h48h0k4 and the corners see nothing either (0);
    // eoesep bounds the flips by their own distance, and proving that no 9-move solution
    // exists takes fewer nodes with it.
    let mut eo = [0u8; 12];
    eo[0] = 1;
    eo[1] = 1;
    let solved = Cube::SOLVED;
    let two_flip = Cube::from_parts_unchecked(solved.cp(), solved.co(), solved.ep(), eo);
    assert!(two_flip.check().is_ok());
    assert_eq!(with_h0.lower_bound(&two_flip), 0);
    let bound = with_eo.lower_bound(&two_flip);
    assert!(bound >= 5, "eoesep bound {bound}");
    let stop = StopToken::new();
    let eo = with_eo.search(&two_flip, &[], 9, 1, &stop);
    let h0 = with_h0.search(&two_flip, &[], 9, 1, &stop);
    assert!(eo.exhausted() && h0.exhausted());
    assert!(eo.solutions.is_empty() && h0.solutions.is_empty());
    assert!(
        eo.nodes < h0.nodes,
        "eoesep {} nodes, h48h0k4 {}",
        eo.nodes,
        h0.nodes
    );
}

/// Positions of known optimal length 15 and 16 (`tests/data/known_optimal.txt`, taken from
/// the shared data set).
#[test]
fn h48_known_distance_positions_are_solved_optimally() {
    let solver = h48_common::h0k4();
    let text = include_str!("../data/known_optimal.txt");
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (len, scramble) = line.split_once('|').expect("length | scramble");
        let len: usize = len.trim().parse().unwrap();
        let c = cube(scramble.trim());
        let (s, proved) = solve_by_subtrees(solver, &c);
        assert_eq!(s.len(), len, "{line}");
        assert_eq!(proved, Some(len as u8 - 1));
        assert_solves(&c, &[s]);
        if checked == 0 {
            // The one-thread solve says the same.
            let r = solve_first(solver, &c);
            assert_eq!(r.solutions.len(), 1);
            assert_eq!(r.solutions[0].len(), len, "{line}");
            assert!(r.optimal);
            assert_eq!(r.depth_exhausted, Some(len as u8 - 1));
            assert_solves(&c, &r.solutions);
        }
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// Positions built to have a known distance: a 10-move and a 12-move sequence that
/// brute force cannot shorten cheaply are checked against their own length as an upper
/// bound, and the search's length against a depth-limited search that finds nothing
/// shorter.
#[test]
fn h48_built_positions_of_length_10_to_12() {
    let solver = h48_common::h0k4();
    for s in [
        "R U2 F' L D2 B R' U F2 D",
        "F R' U2 L B' D R2 F' U L' B2 D'",
    ] {
        let c = cube(s);
        let r = solve_first(solver, &c);
        let n = r.solutions[0].len();
        assert!(n <= parse_moves(s).unwrap().len());
        assert_solves(&c, &r.solutions);
        // Nothing shorter, checked by the primitive.
        let none = StopToken::new();
        for d in 0..n as u8 {
            let out = solver.search(&c, &[], d, 1, &none);
            assert!(
                out.solutions.is_empty() && out.exhausted(),
                "{s}: depth {d}"
            );
        }
    }
}

/// Superflip is 20 moves. Very long on 2 cores: with the h48h0k4 test table it did not
/// finish within 25 minutes, and with h48h6k2 30 minutes proved only that no solution of
/// 16 moves or fewer exists (2026-11-22; each further depth takes about 13 times longer,
/// so the proof needs days there, or the largest tables). `CUBESWARM_H48_DIR` and
/// `CUBESWARM_H48_TABLE` make it use a larger table, built with
/// `cubeswarm --tables-dir DIR tables build NAME`:
/// `cargo test --release -p cubeswarm-worker --test it h48_superflip -- --ignored`
/// `CUBESWARM_H48_DIR=DIR CUBESWARM_H48_TABLE=h48h6k2 cargo test --release -p cubeswarm-worker --test it h48_superflip -- --ignored`
#[test]
#[ignore]
fn h48_superflip_is_twenty() {
    let big;
    let solver = match (
        std::env::var_os("CUBESWARM_H48_DIR"),
        std::env::var("CUBESWARM_H48_TABLE"),
    ) {
        (Some(dir), Ok(table)) => {
            big = H48Solver::open(std::path::Path::new(&dir), &table).expect("opening the table");
            &big
        }
        _ => h48_common::h0k4(),
    };
    let c = cube("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2");
    let (s, proved) = solve_by_subtrees(solver, &c);
    assert_eq!(s.len(), 20);
    assert_eq!(proved, Some(19));
    assert_solves(&c, &[s]);
}

#[test]
fn h48_prefixed_search_returns_only_matching_solutions_and_the_union_is_complete() {
    let solver = h48_common::h0k4();
    let c = cube("R U R' U' F2 D L' B");
    let none = StopToken::new();
    let d = solve_first(solver, &c).solutions[0].len() as u8;
    let whole = solver.search(&c, &[], d, usize::MAX, &none);
    assert!(whole.exhausted());
    assert!(!whole.solutions.is_empty());
    let mut union = BTreeSet::new();
    for m in Move::ALL {
        let out = solver.search(&c, &[m], d, usize::MAX, &none);
        assert!(out.exhausted());
        for s in &out.solutions {
            assert_eq!(s[0], m);
            assert_eq!(s.len(), d as usize);
            assert!(union.insert(s.clone()), "duplicate {s:?}");
        }
        assert_solves(&c, &out.solutions);
    }
    let whole: BTreeSet<_> = whole.solutions.into_iter().collect();
    assert_eq!(union, whole);
    // Two-move prefixes too, including a non-canonical one (no solutions).
    let p = [
        whole.iter().next().unwrap()[0],
        whole.iter().next().unwrap()[1],
    ];
    let out = solver.search(&c, &p, d, usize::MAX, &none);
    assert!(out.solutions.iter().all(|s| s[..2] == p) && !out.solutions.is_empty());
    let bad = [Move::ALL[0], Move::ALL[1]];
    assert!(solver
        .search(&c, &bad, d, usize::MAX, &none)
        .solutions
        .is_empty());
    // A depth below the optimum finds nothing.
    assert!(solver
        .search(&c, &[], d - 1, usize::MAX, &none)
        .solutions
        .is_empty());
}

/// Interleaving tasks on one thread changes nothing but the order results arrive in:
/// every task's solutions, node and lookup counts equal those of a lone `search` call.
#[test]
fn h48_interleaved_lanes_give_each_task_what_a_lone_search_gives() {
    let solver = h48_common::h0k4();
    let c = cube("R U R' U' F2 D L' B D2 R' F U'");
    let none = StopToken::new();
    let d = solve_first(solver, &c).solutions[0].len() as u8;
    let prefixes = tables::canonical::sequences(2);
    for lanes in [1, 3] {
        let mut next = prefixes.iter().enumerate();
        let mut seen = vec![false; prefixes.len()];
        let mut sols = 0;
        solver.search_lanes(
            &c,
            d,
            lanes,
            &none,
            &mut || next.next().map(|(i, p)| (i, &p[..], usize::MAX)),
            &mut |_| true,
            &mut |i, out| {
                assert!(!std::mem::replace(&mut seen[i], true), "task {i} twice");
                let lone = solver.search(&c, &prefixes[i], d, usize::MAX, &none);
                assert_eq!(out, lone, "task {i} ({:?}), {lanes} lanes", prefixes[i]);
                assert_solves(&c, &out.solutions);
                sols += out.solutions.len();
            },
        );
        assert!(seen.iter().all(|&s| s), "{lanes} lanes skipped a task");
        // Refused from task 100 on (handed back): exactly the first 100 run, though
        // more were taken ahead.
        let mut next = prefixes.iter().enumerate();
        let mut ran = vec![false; prefixes.len()];
        let mut asked = Vec::new();
        solver.search_lanes(
            &c,
            d,
            lanes,
            &none,
            &mut || next.next().map(|(i, p)| (i, &p[..], usize::MAX)),
            &mut |k| {
                asked.push(k);
                k < 100
            },
            &mut |i, _| ran[i] = true,
        );
        assert_eq!(asked, (0..=100).collect::<Vec<_>>(), "{lanes} lanes");
        assert!(ran.iter().enumerate().all(|(i, &r)| r == (i < 100)));
        let whole = solver.search(&c, &[], d, usize::MAX, &none);
        assert!(sols > 0);
        assert_eq!(sols, whole.solutions.len());
    }
}

/// A piece split where it runs (`search_lanes_gated`) loses no solution and finds none
/// twice: ungated or gated, the search finds the same; and wherever its gate is frozen,
/// what it kept and the parts handed back ([`proto::pieces::split_parts`]), searched on
/// their own, find every solution exactly once. The freeze comes when a second task
/// interleaved on the thread ends, so each size of that task freezes at another place.
#[test]
fn h48_a_piece_split_where_it_runs_loses_and_repeats_no_solution() {
    let solver = h48_common::h0k4();
    let c = cube("R U R' U' F2 D L' B D2 R' F U'");
    let none = StopToken::new();
    let first = solve_first(solver, &c).solutions[0].clone();
    let d = first.len() as u8;
    let piece = first[..1].to_vec();
    let whole: BTreeSet<Vec<Move>> = (solver.search(&c, &piece, d, usize::MAX, &none).solutions)
        .into_iter()
        .collect();
    assert!(!whole.is_empty());
    let mut split_in_part = 0;
    let stoppers: Vec<Vec<Move>> = ["U", "F", "U R", "F U", "U R F", "D2 L", "B"]
        .iter()
        .map(|s| parse_moves(s).unwrap())
        .chain([Vec::new()])
        .collect();
    for stopper in &stoppers {
        let gate = worker::h48::search::Gate::new(true);
        let mut tasks = vec![
            (0, &piece[..], usize::MAX, Some(&gate)),
            (1, &stopper[..], usize::MAX, None),
        ]
        .into_iter();
        let mut kept = Vec::new();
        let mut frozen = None;
        solver.search_lanes_gated(
            &c,
            d,
            2,
            &none,
            &mut || tasks.next(),
            &mut |_| true,
            &mut |i, out| match i {
                0 => {
                    kept = out.solutions;
                    gate.end();
                }
                _ => frozen = Some(gate.freeze()),
            },
        );
        let mut found = kept.clone();
        match frozen.flatten() {
            // It ended before the freeze: all of it was searched here.
            None => assert_eq!(kept.iter().cloned().collect::<BTreeSet<_>>(), whole),
            Some(path) => {
                let mut parts = Vec::new();
                proto::pieces::split_parts(&piece, &path, &mut |p, k| parts.push((p.to_vec(), k)))
                    .expect("a frozen gate's path fits its piece");
                for s in &kept {
                    assert!(
                        parts.iter().any(|(p, k)| *k && s.starts_with(p)),
                        "{s:?} kept outside {path:?}"
                    );
                }
                for (p, _) in parts.iter().filter(|(_, k)| !k) {
                    found.extend(solver.search(&c, p, d, usize::MAX, &none).solutions);
                }
                let (k, b) = (parts.iter().filter(|(_, k)| *k).count(), parts.len());
                split_in_part += usize::from(k > 0 && k < b);
            }
        }
        assert_solves(&c, &found);
        let set: BTreeSet<Vec<Move>> = found.iter().cloned().collect();
        assert_eq!(
            set.len(),
            found.len(),
            "a solution found twice (stopper {stopper:?})"
        );
        assert_eq!(set, whole, "stopper {stopper:?}");
    }
    assert!(split_in_part > 0, "no stopper froze the piece part way");
}

#[test]
fn h48_cancel_flag_stops_the_search() {
    let solver = h48_common::h0k4();
    let c = cube("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2");
    let set = StopToken::new();
    set.cancel();
    let out = solver.search(&c, &[], 19, 1, &set);
    assert_eq!(out.stop, Stop::Cancelled);
    assert!(out.solutions.is_empty());
    let token = StopToken::new();
    let t2 = token.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        t2.cancel();
    });
    let out = solver.search(&c, &[], 19, 1, &token);
    t.join().unwrap();
    assert_eq!(out.stop, Stop::Cancelled);
    assert!(out.nodes > 0);
}

#[test]
fn h48_time_limit_stops_cleanly_and_says_how_far_it_got() {
    let solver = h48_common::h0k4();
    let c = cube("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2");
    let stop = StopToken::new().with_deadline(Some(Instant::now() + Duration::from_millis(300)));
    let r = solver
        .solve(&pos(&c), &Settings::default().validate().unwrap(), &stop)
        .unwrap();
    assert_eq!(r.stop, Stop::TimeLimit);
    assert!(!r.optimal && r.solutions.is_empty());
    assert_eq!(r.lower_bound, solver.lower_bound(&c));
    let d = r.depth_exhausted.expect("some depth was exhausted");
    assert!((solver.lower_bound(&c)..19).contains(&d), "{d}");
    // User cancellation as well.
    let cancel = StopToken::new();
    cancel.cancel();
    let r = solver
        .solve(&pos(&c), &Settings::default().validate().unwrap(), &cancel)
        .unwrap();
    assert!(r.solutions.is_empty() && !r.optimal);
    assert_eq!(r.stop, Stop::Cancelled);
}

#[test]
fn h48_settings_control_count_and_lengths() {
    let solver = h48_common::h0k4();
    let c = cube("R U R' U'");
    let r = solve(
        solver,
        &c,
        &Settings {
            max_solutions: Some(3),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.solutions.len(), 1, "only one 4-move solution exists");
    assert_eq!(r.stop, Stop::Completed);
    let all = solve(
        solver,
        &c,
        &Settings {
            max_solutions: None,
            min_length: 6,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!all.optimal);
    let n = all.solutions[0].len();
    assert!(n >= 6 && all.solutions.iter().all(|s| s.len() == n) && all.solutions.len() > 1);
    assert_solves(&c, &all.solutions);
    let two = solve(
        solver,
        &c,
        &Settings {
            max_solutions: Some(2),
            min_length: 6,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(two.solutions.len(), 2);
    assert_eq!(two.stop, Stop::Completed);
    let short = solve(
        solver,
        &c,
        &Settings {
            max_length: 3,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(short.solutions.is_empty());
    assert_eq!(short.stop, Stop::Exhausted);
    assert_eq!(short.depth_exhausted, Some(3));
    let solved = solve_first(solver, &Cube::SOLVED);
    assert_eq!(solved.solutions, vec![Vec::<Move>::new()]);
    assert!(solved.optimal);
    for bad in [
        Settings {
            min_length: 5,
            max_length: 4,
            ..Default::default()
        },
        Settings {
            max_solutions: Some(0),
            ..Default::default()
        },
        Settings {
            max_length: 31,
            ..Default::default()
        },
    ] {
        assert!(matches!(solve(solver, &c, &bad), Err(Error::Settings(_))));
    }
}

/// Unsolvable cubes never reach the solver: a [`Position`] cannot be made of one, and the
/// refusal names the fault.
#[test]
fn h48_unsolvable_positions_are_refused_with_the_specific_error() {
    let cp = [0, 1, 2, 3, 4, 5, 6, 7];
    let ep = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    let twisted = Cube::from_parts_unchecked(cp, [1, 0, 0, 0, 0, 0, 0, 0], ep, [0; 12]);
    let flipped = Cube::from_parts_unchecked(cp, [0; 8], ep, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let swapped =
        Cube::from_parts_unchecked(cp, [0; 8], [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [0; 12]);
    let dup =
        Cube::from_parts_unchecked(cp, [0; 8], [0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [0; 12]);
    assert!(matches!(
        Position::new(twisted),
        Err(CubieError::TwistedCorner(1))
    ));
    assert!(matches!(
        Position::new(flipped),
        Err(CubieError::FlippedEdge)
    ));
    assert!(matches!(Position::new(swapped), Err(CubieError::Parity)));
    assert!(matches!(
        Position::new(dup),
        Err(CubieError::Duplicate { .. })
    ));
}

#[test]
fn h48_many_positions_side_by_side_share_one_solver() {
    let solver = h48_common::h0k4();
    let mut rng = SplitMix64::new(5);
    let cubes: Vec<Cube> = (0..8)
        .map(|_| {
            let moves: Vec<Move> = (0..9).map(|_| Move::ALL[rng.below(18) as usize]).collect();
            Cube::from_moves(&moves)
        })
        .collect();
    std::thread::scope(|s| {
        for c in &cubes {
            let solver = solver.clone();
            s.spawn(move || {
                let r = solve_first(&solver, c);
                assert!(r.optimal && r.solutions[0].len() <= 9);
                assert_solves(c, &r.solutions);
            });
        }
    });
}

#[test]
fn h48_missing_and_unknown_tables_are_errors() {
    let dir = std::env::temp_dir().join("cubeswarm-h48-no-tables");
    assert!(matches!(
        H48Solver::open(&dir, "h48h0k4"),
        Err(Error::TableNotFound { .. })
    ));
    assert!(matches!(
        H48Solver::open(&dir, "h48h99k2"),
        Err(Error::UnknownTable(_))
    ));
    assert!(matches!(
        worker::h48::build_table(&dir, "nope", &tables::progress::Silent),
        Err(Error::UnknownTable(_))
    ));
    assert_eq!(worker::catalog::largest_h48_available(&dir), None);
    assert!(worker::catalog::largest_h48_available(&h48_common::ensure("h48h0k4")).is_some());
}
