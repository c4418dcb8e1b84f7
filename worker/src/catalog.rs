//! Building and opening the tables of the catalog ([`proto::catalog`], the data: names,
//! files, sizes, methods) as ready engines.

use crate::h48;
use crate::twophase::tables::{P1M_NAME, P1_NAME, P2_NAME};
use crate::twophase::TwoPhaseTables;
use crate::{Engine, Error, H48Solver, TableMemory, TwoPhaseSolver};
use proto::catalog::{self, Entry};
use proto::Method;
use std::path::Path;
use tables::progress::Progress;
use tables::tablefile::{table_path, TableFile};

/// The catalog entry of `name`, or [`Error::UnknownTable`].
pub fn entry(name: &str) -> Result<&'static Entry, Error> {
    catalog::find(name).ok_or_else(|| Error::UnknownTable(name.into()))
}

/// Builds the table of `entry` into `dir` (replacing its files atomically), and the files
/// it is derived from when they are missing (cocsep and h48h0k4 for the H48 tables),
/// reporting each step to `progress`.
pub fn build_entry(dir: &Path, entry: &Entry, progress: &dyn Progress) -> Result<(), Error> {
    match entry.method {
        Method::Optimal => h48::build_table(dir, entry.name, progress),
        Method::TwoPhase => {
            // Building twophase-p1 also writes twophase-fsym (they share a numbering).
            TwoPhaseTables::build(dir, P1_NAME, progress)?;
            TwoPhaseTables::build(dir, P2_NAME, progress)
        }
    }
}

/// Opens the files of `entry` in `dir` (checking their headers) as a ready solver.
pub fn open_entry(dir: &Path, entry: &Entry, memory: TableMemory) -> Result<Engine, Error> {
    Ok(match entry.method {
        Method::Optimal => H48Solver::open_with(dir, entry.name, memory)?.into(),
        Method::TwoPhase => TwoPhaseSolver::open_with(dir, memory)?.into(),
    })
}

/// Builds one table file (a name of [`catalog::files`]), or every file of a solver table
/// (a name of [`catalog::names`]), into `dir`.
pub fn build_file(dir: &Path, file: &str, progress: &dyn Progress) -> Result<(), Error> {
    if file == h48::eoesep::NAME {
        h48::eoesep::Eoesep::build(dir, progress)
    } else if file == catalog::COCSEP || h48::TableKind::parse(file).is_some() {
        h48::build_table(dir, file, progress)
    } else if TwoPhaseTables::table_names().contains(&file) || file == P1M_NAME {
        TwoPhaseTables::build(dir, file, progress)
    } else {
        build(dir, file, progress)
    }
}

/// Checks the bodies of the files of `entry` in `dir` (the optional one too, where
/// present) once per file: each is read whole, with a step of `progress` per file, unless
/// it was verified before and has not changed since
/// ([`tables::tablefile::TableFile::verify_once`]). Opening an engine does the same
/// silently; a front end calls this first to show the one-time read.
pub fn verify_once(dir: &Path, entry: &Entry, progress: &dyn Progress) -> Result<(), Error> {
    let optional = entry
        .optional
        .iter()
        .filter(|f| table_path(dir, f).exists());
    for &file in entry.files.iter().chain(optional) {
        let t = TableFile::open(table_path(dir, file), file)?;
        if !t.verified_before() {
            progress.start(&format!("checking {file} (once)"), t.header().body_len);
            t.verify_once(progress)?;
            progress.finish(&format!("{file} checked"));
        }
    }
    Ok(())
}

/// The fallback file of `entry` (eoesep) when the table is present in `dir` and its
/// fallback is not: a front end builds it there (a few seconds, [`build_file`]) rather
/// than search with the weaker h48h0k4 fallback.
pub fn missing_fallback(dir: &Path, entry: &Entry) -> Option<&'static str> {
    let fallback = h48::eoesep::NAME;
    (entry.optional.contains(&fallback)
        && entry.present(dir)
        && !table_path(dir, fallback).exists())
    .then_some(fallback)
}

/// Builds the table `name` into `dir` ([`build_entry`]).
pub fn build(dir: &Path, name: &str, progress: &dyn Progress) -> Result<(), Error> {
    build_entry(dir, entry(name)?, progress)
}

/// Opens the table `name` from `dir` ([`open_entry`]).
pub fn open(dir: &Path, name: &str, memory: TableMemory) -> Result<Engine, Error> {
    open_entry(dir, entry(name)?, memory)
}

/// The H48 table with the most entries whose files are all in `dir`
/// ([`catalog::largest_h48_where`]).
pub fn largest_h48_available(dir: &Path) -> Option<&'static str> {
    catalog::largest_h48_where(|e| e.present(dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h48::cocsep;
    use crate::twophase::tables::{
        FSYM_NAME, N_CP_CLASSES, N_FLIPSLICE, N_FS_CLASSES, N_PERM8, N_TWIST,
    };
    use tables::progress::Silent;
    use tables::tablefile::HEADER_LEN;

    #[test]
    fn the_catalog_sizes_are_the_engines_sizes() {
        let body = |entries: usize, bits: u64| (entries as u64 * bits).div_ceil(8);
        let header = HEADER_LEN as u64;
        assert_eq!(
            catalog::file_bytes(FSYM_NAME),
            Some(header + body(N_FLIPSLICE, 32))
        );
        assert_eq!(
            catalog::file_bytes(P1_NAME),
            Some(header + body(N_FS_CLASSES * N_TWIST, 4))
        );
        assert_eq!(
            catalog::file_bytes(P2_NAME),
            Some(header + body(N_CP_CLASSES * N_PERM8, 4))
        );
        assert_eq!(
            TwoPhaseTables::table_names(),
            catalog::find(catalog::TWOPHASE).unwrap().files
        );
        assert_eq!(catalog::COCSEP, cocsep::NAME);
        assert_eq!(catalog::TWOPHASE_P1M, P1M_NAME);
        assert_eq!(
            catalog::find(catalog::TWOPHASE).unwrap().optional,
            [P1M_NAME]
        );
        for name in catalog::files() {
            let file = catalog::file(name).unwrap();
            if let Some(kind) = h48::TableKind::parse(name) {
                assert_eq!(file.entries, kind.entries(), "{name}");
                assert_eq!(file.bits, kind.bits() as u64, "{name}");
            } else if name == h48::eoesep::NAME {
                assert_eq!(file.entries, h48::eoesep::ENTRIES);
                assert_eq!(file.bits, 4);
            } else if name == P1M_NAME {
                assert_eq!(file.entries, N_FS_CLASSES as u64 * N_TWIST as u64);
                assert_eq!(file.bits, 32);
            } else {
                assert!(TwoPhaseTables::table_names().contains(&name), "{name}");
            }
        }
        for bits in 1..=11u8 {
            let name = format!("h48h{bits}k2");
            assert_eq!(
                catalog::file(&name).map(|f| f.build_memory),
                Some(h48::gen_k2::build_memory(bits)),
                "{name}"
            );
        }
    }

    #[test]
    fn a_present_two_bit_table_without_eoesep_asks_for_it() {
        let dir = std::env::temp_dir().join(format!("cubeswarm-fallback-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let h3 = catalog::find("h48h3k2").unwrap();
        let h0k4 = catalog::find("h48h0k4").unwrap();
        // Nothing present: nothing to build beside it.
        assert_eq!(missing_fallback(&dir, h3), None);
        // The table's files present (their contents are not read here), eoesep missing.
        for f in h3.files.iter().chain(h0k4.files) {
            std::fs::write(table_path(&dir, f), b"").unwrap();
        }
        assert_eq!(missing_fallback(&dir, h3), Some(h48::eoesep::NAME));
        // The 4-bit h0 table has no fallback.
        assert_eq!(missing_fallback(&dir, h0k4), None);
        std::fs::write(table_path(&dir, h48::eoesep::NAME), b"").unwrap();
        assert_eq!(missing_fallback(&dir, h3), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unknown_names_are_errors() {
        let dir = std::env::temp_dir().join("cubeswarm-catalog-none");
        assert!(matches!(
            build(&dir, "h48h99k2", &Silent),
            Err(Error::UnknownTable(_))
        ));
        assert!(matches!(
            open(&dir, "nope", TableMemory::Mapped),
            Err(Error::UnknownTable(_))
        ));
        assert_eq!(largest_h48_available(&dir), None);
    }
}
