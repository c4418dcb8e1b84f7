//! The optional phase-1 move table (`twophase-p1m`): built beside a copy of the test
//! tables (`<workspace>/target/test-tables-p1m`, the two-phase files linked from
//! `target/test-tables`, the move table built there once), searched against the same
//! tables without it, and refused when its digits do not belong to the phase-1 table.

use proto::{Method, Settings};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tables::tablefile::{table_path, write_table_with, TableFile};
use tables::{Cube, Position, SplitMix64};
use worker::twophase::tables::{TwoPhaseTables, P1M_NAME};
use worker::{Error, StopToken, TwoPhaseSolver};

fn target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
}

/// The test tables without the move table (built if missing).
fn plain() -> &'static TwoPhaseSolver {
    static T: OnceLock<TwoPhaseSolver> = OnceLock::new();
    T.get_or_init(|| {
        TwoPhaseSolver::open_or_build(&target().join("test-tables"), &tables::progress::Silent)
            .expect("two-phase tables")
    })
}

/// `target/NAME`, with the three two-phase files of the test tables linked into it.
fn linked(name: &str) -> PathBuf {
    let dir = target().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for file in TwoPhaseTables::table_names() {
        let link = table_path(&dir, file);
        if !link.exists() {
            // A dangling link from an earlier run goes first.
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(table_path(&target().join("test-tables"), file), &link)
                .unwrap();
        }
    }
    dir
}

/// A directory with the test tables' two-phase files linked and the move table built.
fn p1m_dir() -> &'static Path {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        plain();
        let dir = linked("test-tables-p1m");
        if !table_path(&dir, P1M_NAME).exists() {
            worker::catalog::build_file(&dir, P1M_NAME, &tables::progress::Silent).unwrap();
        }
        dir
    })
}

fn with_p1m() -> &'static TwoPhaseSolver {
    static T: OnceLock<TwoPhaseSolver> = OnceLock::new();
    T.get_or_init(|| TwoPhaseSolver::open(p1m_dir()).expect("two-phase tables with p1m"))
}

fn settings(max_length: u8) -> Settings {
    Settings {
        method: Method::TwoPhase,
        max_length,
        ..Settings::default()
    }
}

#[test]
fn the_move_table_is_opened_when_present() {
    let plain = TwoPhaseTables::open(&target().join("test-tables").canonicalize().unwrap())
        .map(|t| t.memory_bytes());
    let with = TwoPhaseTables::open(p1m_dir()).map(|t| t.memory_bytes());
    let (plain, with) = (plain.unwrap(), with.unwrap());
    // 64430 · 2187 entries of four bytes more.
    assert_eq!(with - plain, 64430 * 2187 * 4);
}

/// The same search with and without the move table: the same solutions, nodes and
/// probes, every solution checked, on random positions within 20 and 19 moves.
#[test]
fn the_search_with_the_move_table_visits_the_same_tree() {
    let mut rng = SplitMix64::new(21);
    for (count, max_length) in [(40, 20), (3, 19)] {
        let s = settings(max_length).validate().unwrap();
        for _ in 0..count {
            let cube = Cube::random(&mut rng);
            let position = Position::new(cube).unwrap();
            let a = plain().solve(&position, &s, &StopToken::new()).unwrap();
            let b = with_p1m().solve(&position, &s, &StopToken::new()).unwrap();
            assert_eq!(a.solutions, b.solutions, "{cube:?} within {max_length}");
            assert_eq!(a.nodes, b.nodes, "{cube:?} within {max_length}");
            assert!(!b.solutions.is_empty());
            for sol in &b.solutions {
                assert!(cube.apply_moves(sol).is_solved());
                assert!(sol.len() <= max_length as usize);
            }
        }
    }
}

/// A move table whose distances mod 3 match but whose digits were zeroed (every
/// child one move closer) is refused at open, named, and the tables without it still
/// open.
#[test]
fn a_move_table_that_disagrees_with_the_phase_1_table_is_refused() {
    let good = TableFile::open(table_path(p1m_dir(), P1M_NAME), P1M_NAME).unwrap();
    let dir = linked("test-tables-p1m-bad");
    let body = good.body();
    let chunk_len = tables::tablefile::BODY_CHUNK;
    write_table_with(
        &table_path(&dir, P1M_NAME),
        &good.header().meta,
        &|i, out| {
            out.copy_from_slice(&body[i * chunk_len..i * chunk_len + out.len()]);
            for w in out.chunks_exact_mut(4) {
                w[0] = 0;
                w[1] = 0;
                w[2] = 0;
                w[3] &= 0xc0;
            }
        },
    )
    .unwrap();
    let err = TwoPhaseTables::open(&dir).unwrap_err();
    match &err {
        Error::BadTable { name, reason } => {
            assert_eq!(name, P1M_NAME);
            assert!(reason.contains("twophase-p1"), "{reason}");
        }
        other => panic!("expected a bad-table error, got {other:?}"),
    }
    std::fs::remove_file(table_path(&dir, P1M_NAME)).unwrap();
    assert!(TwoPhaseTables::open(&dir).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
