//! Two-phase solving: known positions, optimal short scrambles, stop reasons, settings,
//! and a property test on random states. Tables come from
//! `<workspace>/target/test-tables` (built there once if missing).

use proptest::prelude::*;
use proto::PositionResult as Outcome;
use proto::{Method, Settings, Stop};
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tables::{parse_moves, Cube, Move, Position, SplitMix64};
use worker::twophase::bench::{self, BenchOptions};
use worker::{Error, StopToken, TwoPhaseSolver};

fn solver() -> &'static TwoPhaseSolver {
    static T: OnceLock<TwoPhaseSolver> = OnceLock::new();
    T.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-tables");
        TwoPhaseSolver::open_or_build(&dir, &tables::progress::Silent).expect("two-phase tables")
    })
}

fn opts(max_length: u8) -> Settings {
    Settings {
        method: Method::TwoPhase,
        max_length,
        ..Settings::default()
    }
}

/// `cube` solved as `settings` ask (validated first, as every caller does), with
/// `stop`.
fn solve_with(cube: &Cube, settings: &Settings, stop: &StopToken) -> Result<Outcome, Error> {
    let settings = settings.clone().validate()?;
    solver().solve(&Position::new(*cube).unwrap(), &settings, stop)
}

/// `cube` solved as `settings` ask, never stopped.
fn solve(cube: &Cube, settings: &Settings) -> Result<Outcome, Error> {
    solve_with(cube, settings, &StopToken::new())
}

fn solves(cube: &Cube, moves: &[Move]) -> bool {
    cube.apply_moves(moves).is_solved()
}

/// Optimal length by plain iterative deepening over canonical sequences, no tables;
/// `None` if more than `max` moves are needed.
fn brute_force_length(cube: &Cube, max: usize) -> Option<usize> {
    fn dfs(c: &Cube, togo: usize, last: Option<usize>) -> bool {
        if togo == 0 {
            return c.is_solved();
        }
        for m in Move::ALL {
            let f = m.face_index();
            if let Some(l) = last {
                if f == l || (f % 3 == l % 3 && f < l) {
                    continue;
                }
            }
            if dfs(&c.apply_move(m), togo - 1, Some(f)) {
                return true;
            }
        }
        false
    }
    (0..=max).find(|&d| dfs(cube, d, None))
}

fn random_scramble(rng: &mut SplitMix64, len: usize) -> Vec<Move> {
    let mut moves: Vec<Move> = Vec::new();
    while moves.len() < len {
        let m = Move::ALL[rng.below(18) as usize];
        if moves.last().is_some_and(|l| l.axis() == m.axis()) {
            continue;
        }
        moves.push(m);
    }
    moves
}

#[test]
fn solved_cube_gets_the_empty_solution() {
    let r = solve(&Cube::SOLVED, &opts(20)).unwrap();
    assert_eq!(r.solutions.len(), 1);
    assert!(r.solutions[0].is_empty());
    assert!(r.optimal);
    assert_eq!(r.stop, Stop::Completed);
}

#[test]
fn superflip_within_20() {
    let scramble = parse_moves("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2").unwrap();
    let cube = Cube::from_moves(&scramble);
    let r = solve(&cube, &opts(20)).unwrap();
    let s = &r.solutions[0];
    assert!(s.len() <= 20, "{} moves", s.len());
    assert!(solves(&cube, s));
    assert_eq!(r.stop, Stop::Completed);
}

#[test]
fn short_scrambles_get_optimal_solutions() {
    let mut rng = SplitMix64::new(7);
    for len in 1..=6 {
        for _ in 0..6 {
            let scramble = random_scramble(&mut rng, len);
            let cube = Cube::from_moves(&scramble);
            let r = solve(&cube, &opts(20)).unwrap();
            let s = &r.solutions[0];
            assert!(solves(&cube, s));
            assert!(r.optimal, "{scramble:?}");
            assert_eq!(r.lower_bound as usize, s.len());
            // Brute force proves lengths up to 5; a 6-move scramble not solvable in 5 is
            // exactly 6.
            let optimal = brute_force_length(&cube, 5).unwrap_or(6);
            assert_eq!(s.len(), optimal, "scramble {scramble:?}: {s:?}");
        }
    }
}

#[test]
fn several_distinct_solutions() {
    let cube = Cube::from_moves(&parse_moves("R U F' D2 L B' U2 R' F L2 D").unwrap());
    let o = Settings {
        max_solutions: Some(5),
        ..opts(20)
    };
    let r = solve(&cube, &o).unwrap();
    assert_eq!(r.solutions.len(), 5);
    assert_eq!(r.stop, Stop::Completed);
    for (i, s) in r.solutions.iter().enumerate() {
        assert!(s.len() <= 20);
        assert!(solves(&cube, s));
        for t in &r.solutions[..i] {
            assert_ne!(t, s);
        }
    }
    // Shortest first.
    assert!(r.solutions.windows(2).all(|w| w[0].len() <= w[1].len()));
}

#[test]
fn too_short_a_bound_is_exhausted() {
    // Six moves are needed; searching up to 4 exhausts the space.
    let cube = Cube::from_moves(&parse_moves("R U F D L B").unwrap());
    let r = solve(&cube, &opts(4)).unwrap();
    assert!(r.solutions.is_empty());
    assert_eq!(r.stop, Stop::Exhausted);
    assert_eq!(r.depth_exhausted, Some(4));
    // A random position has no solution within 12 moves: with a probe budget the search
    // gives up and says so.
    let cube = Cube::random(&mut SplitMix64::new(3));
    let o = Settings {
        probe_limit: Some(1000),
        ..opts(12)
    };
    let r = solve(&cube, &o).unwrap();
    assert!(r.solutions.is_empty());
    assert_eq!(r.stop, Stop::ProbeLimit);
    assert!(r.lookups > 1000, "probes are counted as lookups");
}

#[test]
fn time_limit_and_cancel_stop_the_search() {
    let cube = Cube::random(&mut SplitMix64::new(4));
    let stop = StopToken::new().with_deadline(Some(Instant::now() + Duration::from_millis(30)));
    let r = solve_with(&cube, &opts(14), &stop).unwrap();
    assert!(r.solutions.is_empty());
    assert_eq!(r.stop, Stop::TimeLimit);
    let cancelled = StopToken::new();
    cancelled.cancel();
    let r = solve_with(&cube, &opts(14), &cancelled).unwrap();
    assert!(r.solutions.is_empty());
    assert_eq!(r.stop, Stop::Cancelled);
}

/// A stop token with the deadline `settings` ask for (the executor makes it so; the
/// engine reads only the token).
fn deadline(settings: &Settings) -> StopToken {
    let ms = settings.time_limit_ms.unwrap_or(u64::MAX / 4);
    StopToken::new().with_deadline(Some(Instant::now() + Duration::from_millis(ms)))
}

/// Anytime settings: at most `max_length` moves, shortened until `time_limit_ms`.
fn anytime(max_length: u8, time_limit_ms: u64) -> Settings {
    Settings {
        anytime: true,
        time_limit_ms: Some(time_limit_ms),
        ..opts(max_length)
    }
}

#[test]
fn anytime_proves_the_shortest_on_short_scrambles() {
    // Nine to ten moves: beyond the short search (7), so the two-phase search itself
    // has to shorten its first answer and then exhaust every shorter level.
    let mut rng = SplitMix64::new(21);
    for len in [9, 9, 10] {
        let moves = random_scramble(&mut rng, len);
        let cube = Cube::from_moves(&moves);
        let plain = solve(&cube, &opts(20)).unwrap();
        // A generous limit: the search ends by proof, not by the clock (asserted).
        let r = solve(&cube, &anytime(20, 600_000)).unwrap();
        assert_eq!(r.stop, Stop::Completed, "ended by proof, not by the limit");
        assert!(r.optimal, "an exhausted anytime search proves its answer");
        let best = r.solutions[0].len();
        assert!(solves(&cube, &r.solutions[0]));
        assert!(best <= len && best <= plain.solutions[0].len());
        assert_eq!(usize::from(r.lower_bound), best);
        // The plain search, bounded one move shorter, finds nothing: it was optimal.
        if best > 0 {
            let shorter = solve(&cube, &opts(best as u8 - 1)).unwrap();
            assert!(
                shorter.solutions.is_empty(),
                "{best} moves was not the shortest"
            );
            assert_eq!(shorter.stop, Stop::Exhausted);
        }
    }
}

#[test]
fn anytime_within_20_always_answers_even_past_its_deadline() {
    let past = StopToken::new().with_deadline(Some(Instant::now()));
    for seed in 0..4 {
        let cube = Cube::random(&mut SplitMix64::new(300 + seed));
        let r = solve_with(&cube, &anytime(20, 1), &past).unwrap();
        assert_eq!(
            r.solutions.len(),
            1,
            "the deadline counts from the first solution"
        );
        assert!(solves(&cube, &r.solutions[0]) && r.solutions[0].len() <= 20);
        assert_eq!(r.stop, Stop::TimeLimit);
        // Below 20 moves no solution is promised: the deadline is firm.
        let r = solve_with(&cube, &anytime(17, 1), &past).unwrap();
        assert!(r.solutions.is_empty());
        assert_eq!(r.stop, Stop::TimeLimit);
    }
    // Cancellation always counts.
    let cancelled = StopToken::new();
    cancelled.cancel();
    let cube = Cube::random(&mut SplitMix64::new(300));
    let r = solve_with(&cube, &anytime(20, 1), &cancelled).unwrap();
    assert!(r.solutions.is_empty());
    assert_eq!(r.stop, Stop::Cancelled);
}

#[test]
fn anytime_reports_the_best_found_at_the_deadline() {
    // Limits far above the first answer's cost (well under a millisecond), so that
    // every search has found one by its deadline, however loaded the machine.
    for seed in 0..4 {
        let cube = Cube::random(&mut SplitMix64::new(100 + seed));
        let plain = solve(&cube, &opts(20)).unwrap();
        let asked = anytime(20, 300);
        let r = solve_with(&cube, &asked, &deadline(&asked)).unwrap();
        assert!(
            !r.solutions.is_empty(),
            "a solution was found: no error, no empty answer"
        );
        assert!(solves(&cube, &r.solutions[0]));
        assert!(r.solutions[0].len() <= plain.solutions[0].len());
        assert!(matches!(r.stop, Stop::TimeLimit | Stop::Completed));
    }
    // Several solutions: the shortest ones found, distinct, at most as many as asked.
    let cube = Cube::random(&mut SplitMix64::new(7));
    let asked = Settings {
        max_solutions: Some(3),
        ..anytime(20, 300)
    };
    let r = solve_with(&cube, &asked, &deadline(&asked)).unwrap();
    assert_eq!(r.solutions.len(), 3);
    assert!(r
        .solutions
        .windows(2)
        .all(|w| w[0].len() <= w[1].len() && w[0] != w[1]));
    assert!(r.solutions.iter().all(|s| solves(&cube, s)));
    // Anytime needs a time limit and the two-phase method.
    let no_limit = Settings {
        time_limit_ms: None,
        ..anytime(20, 1)
    };
    assert!(matches!(solve(&cube, &no_limit), Err(Error::Settings(_))));
}

#[test]
fn invalid_settings_are_errors() {
    let cube = Cube::from_moves(&parse_moves("R U").unwrap());
    for bad in [
        Settings {
            max_solutions: Some(0),
            ..opts(20)
        },
        Settings {
            max_solutions: None,
            ..opts(20)
        },
        opts(31),
    ] {
        assert!(matches!(solve(&cube, &bad), Err(Error::Settings(_))));
    }
}

#[test]
fn bench_reports_every_position_solved() {
    let report = bench::run(
        solver(),
        &BenchOptions {
            max_length: 21,
            count: 50,
            seed: 9,
            threads: 2,
            anytime: None,
        },
    );
    assert_eq!(report.solved, 50, "{report}");
    assert!(report.mean_length <= 21.0);
    assert!(report.to_string().contains("CPU per position"));
    // Anytime: every position solved, never longer on average than the first answers.
    let anytime = bench::run(
        solver(),
        &BenchOptions {
            max_length: 21,
            count: 10,
            seed: 9,
            threads: 2,
            anytime: Some(Duration::from_millis(300)),
        },
    );
    // (The limit is far above the first answer's cost, so every position has one.)
    assert_eq!(anytime.solved, 10, "{anytime}");
    assert!(anytime.mean_length <= 20.0, "{anytime}");
    assert!(anytime
        .to_string()
        .contains("anytime 300.0 ms per position"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_states_are_solved_within_max_length(seed in any::<u64>(), max_length in 20u8..=22) {
        let cube = Cube::random(&mut SplitMix64::new(seed));
        let r = solve(&cube, &opts(max_length)).unwrap();
        prop_assert_eq!(r.solutions.len(), 1);
        prop_assert_eq!(r.stop, Stop::Completed);
        let s = &r.solutions[0];
        prop_assert!(s.len() <= max_length as usize);
        prop_assert!(solves(&cube, s));
    }

    #[test]
    fn scrambles_are_solved_and_short_ones_optimally(seed in any::<u64>(), len in 0usize..=12) {
        let mut rng = SplitMix64::new(seed);
        let scramble = random_scramble(&mut rng, len);
        let cube = Cube::from_moves(&scramble);
        let r = solve(&cube, &opts(20)).unwrap();
        let s = &r.solutions[0];
        prop_assert!(solves(&cube, s));
        prop_assert!(s.len() <= 20);
        if len <= 7 {
            prop_assert!(r.optimal);
            prop_assert!(s.len() <= len);
        }
    }
}
