//! Two-phase solving: known positions, optimal short scrambles, unsolvable positions,
//! budgets, and a property test on random states. Tables come from
//! `<workspace>/target/test-tables` (built there once if missing).

/// Every test lives in `twophase` so that `cargo test -p cubeswarm-worker twophase` runs them.
mod twophase {
    use proptest::prelude::*;
    use std::path::Path;
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, OnceLock};
    use std::time::Duration;
    use tables::{parse_moves, Cube, CubieError, Move, SplitMix64};
    use worker::twophase::bench::{self, BenchOptions};
    use worker::twophase::{solve, TwoPhaseError, TwoPhaseOptions, TwoPhaseTables};

    fn tables() -> &'static TwoPhaseTables {
        static T: OnceLock<TwoPhaseTables> = OnceLock::new();
        T.get_or_init(|| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-tables");
            TwoPhaseTables::open_or_build(&dir, false).expect("two-phase tables")
        })
    }

    fn opts(max_length: u8) -> TwoPhaseOptions {
        TwoPhaseOptions {
            max_length,
            ..TwoPhaseOptions::default()
        }
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
        let r = solve(tables(), &Cube::SOLVED, &opts(20)).unwrap();
        assert_eq!(r.solutions.len(), 1);
        assert!(r.solutions[0].moves.is_empty());
        assert!(r.solutions[0].optimal);
    }

    #[test]
    fn superflip_within_20() {
        let scramble = parse_moves("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2").unwrap();
        let cube = Cube::from_moves(&scramble);
        let r = solve(tables(), &cube, &opts(20)).unwrap();
        let s = &r.solutions[0];
        assert!(s.moves.len() <= 20, "{} moves", s.moves.len());
        assert!(solves(&cube, &s.moves));
    }

    #[test]
    fn short_scrambles_get_optimal_solutions() {
        let mut rng = SplitMix64::new(7);
        for len in 1..=6 {
            for _ in 0..6 {
                let scramble = random_scramble(&mut rng, len);
                let cube = Cube::from_moves(&scramble);
                let r = solve(tables(), &cube, &opts(20)).unwrap();
                let s = &r.solutions[0];
                assert!(solves(&cube, &s.moves));
                assert!(s.optimal, "{scramble:?}");
                // Brute force proves lengths up to 5; a 6-move scramble not solvable in 5 is
                // exactly 6.
                let optimal = brute_force_length(&cube, 5).unwrap_or(6);
                assert_eq!(
                    s.moves.len(),
                    optimal,
                    "scramble {scramble:?}: {:?}",
                    s.moves
                );
            }
        }
    }

    #[test]
    fn several_distinct_solutions() {
        let cube = Cube::from_moves(&parse_moves("R U F' D2 L B' U2 R' F L2 D").unwrap());
        let o = TwoPhaseOptions {
            max_solutions: 5,
            ..opts(20)
        };
        let r = solve(tables(), &cube, &o).unwrap();
        assert_eq!(r.solutions.len(), 5);
        for (i, s) in r.solutions.iter().enumerate() {
            assert!(s.moves.len() <= 20);
            assert!(solves(&cube, &s.moves));
            for t in &r.solutions[..i] {
                assert_ne!(t.moves, s.moves);
            }
        }
    }

    #[test]
    fn unsolvable_positions_are_refused_with_the_fault() {
        let id8: [u8; 8] = std::array::from_fn(|i| i as u8);
        let id12: [u8; 12] = std::array::from_fn(|i| i as u8);
        let twisted = Cube::from_parts_unchecked(id8, [1, 0, 0, 0, 0, 0, 0, 0], id12, [0; 12]);
        let mut eo = [0u8; 12];
        eo[3] = 1;
        let flipped = Cube::from_parts_unchecked(id8, [0; 8], id12, eo);
        let mut ep = id12;
        ep.swap(0, 1);
        let parity = Cube::from_parts_unchecked(id8, [0; 8], ep, [0; 12]);
        let cases = [
            (twisted, CubieError::TwistedCorner(1)),
            (flipped, CubieError::FlippedEdge),
            (parity, CubieError::Parity),
        ];
        for (cube, fault) in cases {
            match solve(tables(), &cube, &opts(20)) {
                Err(TwoPhaseError::Unsolvable(e)) => assert_eq!(e, fault),
                other => panic!("expected {fault:?}, got {other:?}"),
            }
        }
    }

    #[test]
    fn too_short_a_bound_is_no_solution_within() {
        // Six moves are needed; searching up to 4 exhausts the space.
        let cube = Cube::from_moves(&parse_moves("R U F D L B").unwrap());
        let err = solve(tables(), &cube, &opts(4)).unwrap_err();
        assert!(
            matches!(err, TwoPhaseError::NoSolutionWithin { max_length: 4 }),
            "{err}"
        );
        assert_eq!(err.to_string(), "no solution within 4 moves");
        // A random position has no solution within 12 moves: with a probe budget the search
        // gives up with a clear error.
        let cube = Cube::random(&mut SplitMix64::new(3));
        let o = TwoPhaseOptions {
            probe_limit: Some(1000),
            ..opts(12)
        };
        let err = solve(tables(), &cube, &o).unwrap_err();
        assert!(matches!(err, TwoPhaseError::ProbeLimit { .. }), "{err}");
    }

    #[test]
    fn time_limit_and_cancel_stop_the_search() {
        let cube = Cube::random(&mut SplitMix64::new(4));
        let o = TwoPhaseOptions {
            time_limit: Some(Duration::from_millis(30)),
            ..opts(14)
        };
        let err = solve(tables(), &cube, &o).unwrap_err();
        assert!(matches!(err, TwoPhaseError::TimedOut { .. }), "{err}");
        assert!(
            err.to_string().contains("no solution within 14 moves"),
            "{err}"
        );
        let o = TwoPhaseOptions {
            cancel: Some(Arc::new(AtomicBool::new(true))),
            ..opts(14)
        };
        let err = solve(tables(), &cube, &o).unwrap_err();
        assert!(matches!(err, TwoPhaseError::Cancelled { .. }), "{err}");
    }

    #[test]
    fn invalid_options_are_errors() {
        let cube = Cube::from_moves(&parse_moves("R U").unwrap());
        let o = TwoPhaseOptions {
            max_solutions: 0,
            ..opts(20)
        };
        assert!(matches!(
            solve(tables(), &cube, &o),
            Err(TwoPhaseError::InvalidOption(_))
        ));
        assert!(matches!(
            solve(tables(), &cube, &opts(31)),
            Err(TwoPhaseError::InvalidOption(_))
        ));
    }

    #[test]
    fn bench_reports_every_position_solved() {
        let report = bench::run(
            tables(),
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
            let r = solve(tables(), &cube, &opts(max_length)).unwrap();
            prop_assert_eq!(r.solutions.len(), 1);
            let s = &r.solutions[0];
            prop_assert!(s.moves.len() <= max_length as usize);
            prop_assert!(solves(&cube, &s.moves));
        }

        #[test]
        fn scrambles_are_solved_and_short_ones_optimally(seed in any::<u64>(), len in 0usize..=12) {
            let mut rng = SplitMix64::new(seed);
            let scramble = random_scramble(&mut rng, len);
            let cube = Cube::from_moves(&scramble);
            let r = solve(tables(), &cube, &opts(20)).unwrap();
            let s = &r.solutions[0];
            prop_assert!(solves(&cube, &s.moves));
            prop_assert!(s.moves.len() <= 20);
            if len <= 7 {
                prop_assert!(s.optimal);
                prop_assert!(s.moves.len() <= len);
            }
        }
    }
}
