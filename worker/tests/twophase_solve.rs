//! Two-phase solving: known positions, optimal short scrambles, stop reasons, settings,
//! and a property test on random states. Tables come from
//! `<workspace>/target/test-tables` (built there once if missing).

/// Every test lives in `twophase` so that `cargo test -p cubeswarm-worker twophase` runs them.
mod twophase {
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
            TwoPhaseSolver::open_or_build(&dir, &tables::progress::Silent)
                .expect("two-phase tables")
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
            },
        );
        assert_eq!(report.solved, 50, "{report}");
        assert!(report.mean_length <= 21.0);
        assert!(report.to_string().contains("CPU per position"));
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
}
