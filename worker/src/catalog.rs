//! The catalog: every solver table a job can name, the files each needs, their sizes, the
//! method each serves, and how to build and open it.
//!
//! | name | method | files | also read when present |
//! | --- | --- | --- | --- |
//! | `twophase` | two-phase | `twophase-fsym`, `twophase-p1`, `twophase-p2` | |
//! | `h48h0k4` | optimal | `h48h0k4`, `cocsep` | |
//! | `h48h0k2` | optimal | `h48h0k2`, `cocsep` | |
//! | `h48hNk2`, N = 1..=11 | optimal | `h48hNk2`, `cocsep` | `h48h0k4` (fallback) |
//!
//! Every other list of tables (the `tables` command, the unknown-table message, the largest
//! H48 table present) is made from this one.

use crate::h48::{self, cocsep};
use crate::twophase::tables::{
    FSYM_NAME, N_CP_CLASSES, N_FLIPSLICE, N_FS_CLASSES, N_PERM8, N_TWIST, P1_NAME, P2_NAME,
};
use crate::twophase::TwoPhaseTables;
use crate::{Engine, Error, H48Solver, TableMemory, TwoPhaseSolver};
use proto::Method;
use std::path::Path;
use tables::tablefile::{table_path, HEADER_LEN};

/// The name of the two-phase solver's tables.
pub const TWOPHASE: &str = "twophase";

/// The H48 main tables, smallest first (h48h0k4 and h48h0k2 hold the same coordinate).
const H48_TABLES: [&str; 13] = [
    "h48h0k4", "h48h0k2", "h48h1k2", "h48h2k2", "h48h3k2", "h48h4k2", "h48h5k2", "h48h6k2",
    "h48h7k2", "h48h8k2", "h48h9k2", "h48h10k2", "h48h11k2",
];

/// The fallback table of the 2-bit H48 tables with edge-orientation bits.
const H48_FALLBACK: &str = "h48h0k4";

/// One solver table of the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name a job gives in its `table` field.
    pub name: &'static str,
    /// The method it serves.
    pub method: Method,
    /// The table files it cannot work without (in `dir`, as `<file>.tbl`).
    pub files: Vec<&'static str>,
    /// A file read when present, which makes the search faster (h48h0k4, the fallback
    /// of h48hNk2 for N >= 1; building the table always builds it).
    pub optional: Option<&'static str>,
    /// Approximate bytes of `files`: on disk, and in memory once opened.
    pub bytes: u64,
    /// Approximate peak memory needed to build the table.
    pub build_memory: u64,
}

impl Entry {
    /// Whether every file the table needs is in `dir`.
    pub fn present(&self, dir: &Path) -> bool {
        self.missing(dir).is_empty()
    }

    /// The files the table needs that are not in `dir`.
    pub fn missing(&self, dir: &Path) -> Vec<&'static str> {
        self.files
            .iter()
            .copied()
            .filter(|f| !table_path(dir, f).exists())
            .collect()
    }

    /// Builds the table into `dir` (replacing its files atomically), and the files it is
    /// derived from when they are missing (cocsep and h48h0k4 for the H48 tables), with
    /// progress bars when `progress` is set and stderr is a terminal.
    pub fn build(&self, dir: &Path, progress: bool) -> Result<(), Error> {
        match self.method {
            Method::Optimal => h48::build_table(dir, self.name, progress),
            Method::TwoPhase => {
                // Building twophase-p1 also writes twophase-fsym (they share a numbering).
                TwoPhaseTables::build(dir, P1_NAME, progress)?;
                TwoPhaseTables::build(dir, P2_NAME, progress)
            }
        }
    }

    /// Opens the table's files in `dir` (checking their headers) as a ready solver.
    pub fn open(&self, dir: &Path, memory: TableMemory) -> Result<Engine, Error> {
        Ok(match self.method {
            Method::Optimal => H48Solver::open_with(dir, self.name, memory)?.into(),
            Method::TwoPhase => TwoPhaseSolver::open_with(dir, memory)?.into(),
        })
    }
}

/// Every solver table: `twophase`, then the H48 tables smallest first.
pub fn all() -> Vec<Entry> {
    let mut v = Vec::with_capacity(1 + H48_TABLES.len());
    v.extend(find(TWOPHASE));
    v.extend(H48_TABLES.iter().filter_map(|n| find(n)));
    v
}

/// The names of [`all`].
pub fn names() -> Vec<&'static str> {
    let mut v = vec![TWOPHASE];
    v.extend(H48_TABLES);
    v
}

/// The catalog entry of `name`, `None` if no job can name it.
pub fn find(name: &str) -> Option<Entry> {
    if name == TWOPHASE {
        let files = TwoPhaseTables::table_names().to_vec();
        let bytes = files.iter().filter_map(|f| file_bytes(f)).sum();
        return Some(Entry {
            name: TWOPHASE,
            method: Method::TwoPhase,
            files,
            optional: None,
            bytes,
            // The phase-1 generator's table and its frontier, and the other files.
            build_memory: 2 * bytes + (64 << 20),
        });
    }
    let &name = H48_TABLES.iter().find(|&&n| n == name)?;
    let info = h48::table_info(name)?;
    let cocsep_bytes = file_bytes(cocsep::NAME).unwrap_or(0);
    Some(Entry {
        name,
        method: Method::Optimal,
        files: vec![name, cocsep::NAME],
        optional: (name != H48_FALLBACK && name != "h48h0k2").then_some(H48_FALLBACK),
        bytes: info.bytes + cocsep_bytes,
        build_memory: info.build_memory,
    })
}

/// Every table file of the catalog, each once, in the order to build them: cocsep, the
/// H48 main tables, the two-phase files.
pub fn files() -> Vec<&'static str> {
    let mut v = vec![cocsep::NAME];
    v.extend(H48_TABLES);
    v.extend(TwoPhaseTables::table_names());
    v
}

/// Approximate size of a table file (header and body), `None` for a name not in
/// [`files`].
pub fn file_bytes(file: &str) -> Option<u64> {
    let header = HEADER_LEN as u64;
    let body = |entries: usize, bits: u64| (entries as u64 * bits).div_ceil(8);
    match file {
        FSYM_NAME => Some(header + body(N_FLIPSLICE, 32)),
        P1_NAME => Some(header + body(N_FS_CLASSES * N_TWIST, 4)),
        P2_NAME => Some(header + body(N_CP_CLASSES * N_PERM8, 4)),
        f if f == cocsep::NAME || H48_TABLES.contains(&f) => h48::table_info(f).map(|i| i.bytes),
        _ => None,
    }
}

/// Builds one table file (a name of [`files`]), or every file of a solver table (a name
/// of [`names`]), into `dir`.
pub fn build_file(dir: &Path, file: &str, progress: bool) -> Result<(), Error> {
    if file == cocsep::NAME || H48_TABLES.contains(&file) {
        h48::build_table(dir, file, progress)
    } else if TwoPhaseTables::table_names().contains(&file) {
        TwoPhaseTables::build(dir, file, progress)
    } else {
        build(dir, file, progress)
    }
}

/// Builds the table `name` into `dir` ([`Entry::build`]).
pub fn build(dir: &Path, name: &str, progress: bool) -> Result<(), Error> {
    find(name)
        .ok_or_else(|| Error::UnknownTable(name.into()))?
        .build(dir, progress)
}

/// Opens the table `name` from `dir` ([`Entry::open`]).
pub fn open(dir: &Path, name: &str, memory: TableMemory) -> Result<Engine, Error> {
    find(name)
        .ok_or_else(|| Error::UnknownTable(name.into()))?
        .open(dir, memory)
}

/// The H48 table with the most entries whose files are all in `dir` (of two as large,
/// h48h0k4 rather than h48h0k2: its entries are exact).
pub fn largest_h48_available(dir: &Path) -> Option<&'static str> {
    largest_h48_where(|e| e.present(dir))
}

/// The H48 table with the most entries among those `usable` accepts (of two as large, the
/// earlier in the catalog): the one rule for "the largest table", on a disk or in a
/// cluster's workers.
pub fn largest_h48_where(mut usable: impl FnMut(&Entry) -> bool) -> Option<&'static str> {
    let mut best: Option<(u64, &'static str)> = None;
    for e in all() {
        if e.method != Method::Optimal || !usable(&e) {
            continue;
        }
        let size = h48::table_info(e.name).map_or(0, |i| i.entries);
        if !matches!(best, Some((s, _)) if size <= s) {
            best = Some((size, e.name));
        }
    }
    best.map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_found_by_its_name_and_names_real_files() {
        let all = all();
        assert_eq!(all.len(), 14);
        assert_eq!(
            all.iter().map(|e| e.name).collect::<Vec<_>>(),
            names(),
            "names() lists all() in order"
        );
        for e in &all {
            assert_eq!(find(e.name).as_ref(), Some(e));
            for f in e.files.iter().chain(&e.optional) {
                assert!(files().contains(f), "{f}");
                assert!(file_bytes(f).is_some_and(|b| b > HEADER_LEN as u64), "{f}");
            }
            assert!(e.bytes > 0 && e.build_memory > 0);
        }
        assert_eq!(find("cocsep"), None, "a file, not a solver table");
        assert_eq!(find("twophase-p1"), None);
        assert_eq!(find("h48h12k2"), None);
        let h3 = find("h48h3k2").unwrap();
        assert_eq!(h3.files, ["h48h3k2", "cocsep"]);
        assert_eq!(h3.optional, Some("h48h0k4"));
        assert_eq!(find("h48h0k2").unwrap().optional, None);
        let tp = find("twophase").unwrap();
        assert_eq!(tp.method, Method::TwoPhase);
        assert_eq!(tp.files, ["twophase-fsym", "twophase-p1", "twophase-p2"]);
        // 4 MB + 70 MB + 56 MB, as the files are.
        assert_eq!(file_bytes("twophase-p2"), Some(4096 + 2768 * 40320 / 2));
        assert!(
            (129_000_000..132_000_000).contains(&tp.bytes),
            "{}",
            tp.bytes
        );
    }

    #[test]
    fn unknown_names_are_errors() {
        let dir = std::env::temp_dir().join("cubeswarm-catalog-none");
        assert!(matches!(
            build(&dir, "h48h99k2", false),
            Err(Error::UnknownTable(_))
        ));
        assert!(matches!(
            open(&dir, "nope", TableMemory::Mapped),
            Err(Error::UnknownTable(_))
        ));
        assert_eq!(largest_h48_available(&dir), None);
    }
}
