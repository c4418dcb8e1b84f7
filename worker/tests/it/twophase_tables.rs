//! Two-phase tables: built once per run into `<workspace>/target/test-tables` (shared by
//! every test binary; files are written to a temporary name and renamed), then checked
//! against the golden per-depth distributions.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tables::tablefile::{table_path, TableFile};
use worker::twophase::tables::{P1_CUMULATIVE, P2_CUMULATIVE};
use worker::twophase::TwoPhaseTables;
use worker::Error;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-tables")
}

fn tables() -> &'static TwoPhaseTables {
    static T: OnceLock<TwoPhaseTables> = OnceLock::new();
    T.get_or_init(|| {
        TwoPhaseTables::open_or_build(&dir(), &tables::progress::Silent).expect("two-phase tables")
    })
}

fn cumulative(name: &str) -> Vec<u64> {
    let file = TableFile::open(table_path(&dir(), name), name).expect("table file");
    let mut sum = 0;
    file.header()
        .distribution
        .iter()
        .map(|&n| {
            sum += n;
            sum
        })
        .collect()
}

#[test]
fn phase1_distribution_is_golden() {
    tables();
    let c = cumulative("twophase-p1");
    assert_eq!(&c[..13], &P1_CUMULATIVE);
    assert_eq!(
        &c[..13],
        &[
            1, 2, 7, 51, 538, 6379, 74743, 851311, 8802059, 60900935, 137137169, 140908281,
            140908410
        ]
    );
    assert_eq!(*c.last().unwrap(), 64430 * 2187);
}

#[test]
fn phase2_distribution_is_golden() {
    tables();
    let c = cumulative("twophase-p2");
    assert_eq!(&c[..11], &P2_CUMULATIVE);
    assert_eq!(
        &c[..11],
        &[1, 4, 14, 66, 351, 1669, 7340, 33842, 149309, 620155, 2473211]
    );
    assert_eq!(*c.last().unwrap(), 2768 * 40320);
}

#[test]
fn table_files_verify() {
    tables();
    TwoPhaseTables::verify(&dir()).expect("checksums and distributions");
    assert_eq!(
        TwoPhaseTables::table_names(),
        &["twophase-fsym", "twophase-p1", "twophase-p2"]
    );
}

#[test]
fn tables_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync>(_: &T) {}
    shareable(tables());
    assert!(tables().memory_bytes() > 120_000_000);
}

#[test]
fn unknown_table_name_is_an_error() {
    let err = TwoPhaseTables::build(&dir(), "twophase-p3", &tables::progress::Silent).unwrap_err();
    assert!(matches!(err, Error::UnknownTable(_)), "{err}");
}

#[test]
fn missing_tables_are_an_error_naming_the_file() {
    let empty = dir().join("definitely-empty-dir");
    let err = TwoPhaseTables::open(&empty).unwrap_err();
    assert!(matches!(err, Error::Table(_)), "{err}");
    assert!(err.to_string().contains("twophase-fsym"), "{err}");
}

#[test]
fn a_wrong_table_under_a_right_name_is_refused() {
    // A p2 file copied to p1's file name has the wrong name inside and is refused.
    let scratch = std::env::temp_dir().join(format!("twophase-wrong-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    tables();
    std::fs::copy(
        table_path(&dir(), "twophase-fsym"),
        table_path(&scratch, "twophase-fsym"),
    )
    .unwrap();
    std::fs::copy(
        table_path(&dir(), "twophase-p2"),
        table_path(&scratch, "twophase-p1"),
    )
    .unwrap();
    let err = TwoPhaseTables::open(&scratch).unwrap_err();
    assert!(err.to_string().contains("twophase-p1"), "{err}");
    std::fs::remove_dir_all(&scratch).unwrap();
}
