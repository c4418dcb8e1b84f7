//! Shared helpers of the H48 integration tests: the cached test tables.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use worker::h48::{build_table, H48Solver};

/// `<workspace>/target/test-tables`: tables built once per checkout and reused by every
/// test run (files are written to a temporary name and renamed, so concurrent test
/// binaries are safe).
pub fn tables_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("test-tables")
}

/// Builds `name` in [`tables_dir`] unless it is there already (once per process).
pub fn ensure(name: &str) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let dir = tables_dir();
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !tables::tablefile::table_path(&dir, name).exists()
        || !tables::tablefile::table_path(&dir, "cocsep").exists()
    {
        build_table(&dir, name, &tables::progress::Silent).expect("building a test table");
    }
    dir
}

/// `to` made the same file as `from`: a hard link where the file system allows one, a
/// copy otherwise (test directories share their large inputs instead of holding copies:
/// a CI run once died of a full disk).
pub fn link_or_copy(from: &std::path::Path, to: &std::path::Path) {
    let _ = std::fs::remove_file(to);
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).expect("copying a test table");
    }
}

/// A solver over the cached h48h0k4 table (built on first use, about 15 s).
pub fn h0k4() -> &'static H48Solver {
    static S: OnceLock<H48Solver> = OnceLock::new();
    S.get_or_init(|| {
        let dir = ensure("h48h0k4");
        H48Solver::open(&dir, "h48h0k4").expect("opening h48h0k4")
    })
}

/// A solver over a 2-bit table: h48h2k2 generated with base 3 (so every value kind of a
/// 2-bit entry shows up in short searches) next to copies of cocsep and h48h0k4, its
/// fallback in a directory without eoesep, in `target/test-tables/k2-base3`. Regenerated
/// once per process (it takes well under a second), so it always matches the current code.
pub fn h2k2_base3() -> &'static H48Solver {
    static S: OnceLock<H48Solver> = OnceLock::new();
    S.get_or_init(|| {
        let src = ensure("h48h0k4");
        let dir = tables_dir().join("k2-base3");
        std::fs::create_dir_all(&dir).expect("creating the k2 test directory");
        for name in ["cocsep", "h48h0k4"] {
            let to = tables::tablefile::table_path(&dir, name);
            if !to.exists() {
                link_or_copy(&tables::tablefile::table_path(&src, name), &to);
            }
        }
        let cs = worker::h48::cocsep::Cocsep::open(&dir).expect("opening cocsep");
        worker::h48::gen_k2::generate(&dir, "h48h2k2", 2, 3, &cs, &tables::progress::Silent)
            .expect("generating h48h2k2 with base 3");
        H48Solver::open(&dir, "h48h2k2").expect("opening h48h2k2")
    })
}

/// The same h48h2k2 (base 3) with eoesep as its fallback, in
/// `target/test-tables/k2-base3-eoesep` (cocsep and the table copied from
/// [`h2k2_base3`]'s directory, eoesep generated there once per process).
pub fn h2k2_base3_eoesep() -> &'static H48Solver {
    static S: OnceLock<H48Solver> = OnceLock::new();
    S.get_or_init(|| {
        h2k2_base3();
        let src = tables_dir().join("k2-base3");
        let dir = tables_dir().join("k2-base3-eoesep");
        std::fs::create_dir_all(&dir).expect("creating the eoesep test directory");
        for name in ["cocsep", "h48h2k2"] {
            link_or_copy(
                &tables::tablefile::table_path(&src, name),
                &tables::tablefile::table_path(&dir, name),
            );
        }
        worker::h48::eoesep::Eoesep::build(&dir, &tables::progress::Silent)
            .expect("generating eoesep");
        H48Solver::open(&dir, "h48h2k2").expect("opening h48h2k2 with eoesep")
    })
}
