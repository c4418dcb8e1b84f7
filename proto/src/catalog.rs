//! The table catalog: every solver table a job can name, the files each needs, their
//! sizes, and the method each serves. Plain data, read by every side: the worker (what it
//! can build, open and announce), the coordinator (which names a request may give), the
//! client (which table to ask for) and the `tables` command.
//!
//! | name | method | files | also read when present |
//! | --- | --- | --- | --- |
//! | `twophase` | two-phase | `twophase-fsym`, `twophase-p1`, `twophase-p2` | `twophase-p1m` (faster phase 1; built by name only) |
//! | `h48h0k4` | optimal | `h48h0k4`, `cocsep` | |
//! | `h48hNk2`, N = 0..=11 | optimal | `h48hNk2`, `cocsep` | `eoesep` (fallback; in a directory without it, `h48h0k4` for N >= 1) |
//!
//! Every other list of tables (the `tables` command, the unknown-table message, the largest
//! H48 table present) is made from this one. Building and opening the tables is the
//! worker's (`worker::catalog`); the sizes here are checked against the worker's
//! coordinates by its tests.

use crate::Method;
use std::path::Path;
use tables::tablefile::{table_path, HEADER_LEN};

/// The name of the two-phase solver's tables.
pub const TWOPHASE: &str = "twophase";

/// The H48 table built when a directory holds none (the smallest that needs no fallback;
/// built in seconds).
pub const DEFAULT_H48: &str = "h48h0k4";

/// The corner table every H48 table needs.
pub const COCSEP: &str = "cocsep";

/// The fallback table of the 2-bit H48 tables: the edges' orientation and separation,
/// reduced by the 8 symmetries that keep every axis (`worker::h48::eoesep`). In a
/// directory without it the solver reads h48h0k4 in its place, when present.
pub const EOESEP: &str = "eoesep";

/// Classes of the edge separation under the 8 symmetries that keep every axis.
const EOESEP_CLASSES: u64 = 4464;

/// Entries of the H48 h0 coordinate: 3393 cocsep classes times 34650 edge separations.
const H0_ENTRIES: u64 = 3393 * 34650;

/// An H48 table's parameters, read from its name `h48h{eo_bits}k{bits}`: the one grammar
/// of H48 names (the worker's engine, its builder and every list of tables go through
/// it). `h48h0k4` is the 4-bit table; `h48hNk2`, N = 0..=[`H48::MAX_EO_BITS`], the 2-bit
/// ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct H48 {
    /// Edge-orientation bits appended to the h0 coordinate.
    pub eo_bits: u8,
    /// Bits per entry: 4 (only with 0 edge-orientation bits) or 2.
    pub bits: u8,
}

impl H48 {
    /// The most edge-orientation bits a table has.
    pub const MAX_EO_BITS: u8 = 11;

    /// The table `name` denotes, if it is an H48 table's name (`h48h3k2`; not `h48h03k2`).
    pub fn parse(name: &str) -> Option<H48> {
        let (n, k) = name.strip_prefix("h48h")?.split_once('k')?;
        // Digits only: `u8::from_str` also takes a sign (`h48h+1k2`).
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let eo_bits: u8 = n.parse().ok()?;
        if n.len() > 2 || (n.len() == 2 && n.starts_with('0')) || eo_bits > Self::MAX_EO_BITS {
            return None;
        }
        match (k, eo_bits) {
            ("4", 0) => Some(H48 { eo_bits, bits: 4 }),
            ("2", _) => Some(H48 { eo_bits, bits: 2 }),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> String {
        format!("h48h{}k{}", self.eo_bits, self.bits)
    }

    /// Entries of its file: the h0 coordinate with `eo_bits` bits appended.
    pub const fn entries(self) -> u64 {
        H0_ENTRIES << self.eo_bits
    }
}

/// One table file (`<name>.tbl` in a tables directory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct File {
    /// The file's name, without `.tbl`.
    pub name: &'static str,
    /// Number of entries of its body.
    pub entries: u64,
    /// Bits per entry.
    pub bits: u64,
    /// Approximate peak memory needed to build it (and the files it is derived from).
    pub build_memory: u64,
}

impl File {
    /// Size of the file (header and body), which is also its size in memory once opened.
    pub const fn bytes(&self) -> u64 {
        HEADER_LEN as u64 + (self.entries * self.bits).div_ceil(8)
    }
}

/// Memory of building `h48h{eo_bits}k2` beside the table itself: the breadth-first levels
/// (at most about 1.4 GB, for base 10) and eoesep.
pub const H48_K2_BUILD_EXTRA: u64 = 1_500_000_000;

/// Peak memory of building `h48h{eo_bits}k2` (N >= 1): the table, which is written to its
/// file from the working copy, plus [`H48_K2_BUILD_EXTRA`]. (h48h0k2 is converted from
/// h0k4.)
pub const fn h48_k2_build_memory(eo_bits: u32) -> u64 {
    if eo_bits == 0 {
        H0_ENTRIES / 2 + (64 << 20)
    } else {
        (H0_ENTRIES << eo_bits) / 4 + H48_K2_BUILD_EXTRA
    }
}

/// The file `h48h{eo_bits}k2`: 2 bits per entry, `eo_bits` edge-orientation bits appended
/// to the h0 coordinate.
const fn h48_k2(name: &'static str, eo_bits: u32) -> File {
    let entries = H48 {
        eo_bits: eo_bits as u8,
        bits: 2,
    }
    .entries();
    let build_memory = h48_k2_build_memory(eo_bits);
    File {
        name,
        entries,
        bits: 2,
        build_memory,
    }
}

/// The two-phase files' sizes, and the memory to build them: the phase-1 generator's table
/// and its frontier, and the other files.
const TWOPHASE_FILES: [File; 3] = {
    let fsym = File {
        name: "twophase-fsym",
        // Raw FlipUDSlice (2048 · 495) to its class and symmetry, 32 bits each.
        entries: 2048 * 495,
        bits: 32,
        build_memory: 0,
    };
    let p1 = File {
        name: "twophase-p1",
        // FlipUDSlice classes (64430) times twist (2187), 4 bits each.
        entries: 64430 * 2187,
        bits: 4,
        build_memory: 0,
    };
    let p2 = File {
        name: "twophase-p2",
        // Corner-permutation classes (2768) times the 8! U/D-edge permutations.
        entries: 2768 * 40320,
        bits: 4,
        build_memory: 0,
    };
    let memory = 2 * (fsym.bytes() + p1.bytes() + p2.bytes()) + (64 << 20);
    [
        File {
            build_memory: memory,
            ..fsym
        },
        File {
            build_memory: memory,
            ..p1
        },
        File {
            build_memory: memory,
            ..p2
        },
    ]
};

/// Every table file, each once, in the order to build them: cocsep, the H48 main tables
/// (smallest first), the two-phase files.
static FILES: [File; 19] = [
    File {
        name: COCSEP,
        // Twist (2187) times corner separation (70), 32 bits each.
        entries: 2187 * 70,
        bits: 32,
        build_memory: 64 << 20,
    },
    File {
        name: "h48h0k4",
        entries: H48 {
            eo_bits: 0,
            bits: 4,
        }
        .entries(),
        bits: 4,
        build_memory: H0_ENTRIES / 2 + (64 << 20),
    },
    File {
        name: EOESEP,
        // Edge-separation classes times the 2048 edge orientations, 4 bits each.
        entries: EOESEP_CLASSES * 2048,
        bits: 4,
        build_memory: 64 << 20,
    },
    h48_k2("h48h0k2", 0),
    h48_k2("h48h1k2", 1),
    h48_k2("h48h2k2", 2),
    h48_k2("h48h3k2", 3),
    h48_k2("h48h4k2", 4),
    h48_k2("h48h5k2", 5),
    h48_k2("h48h6k2", 6),
    h48_k2("h48h7k2", 7),
    h48_k2("h48h8k2", 8),
    h48_k2("h48h9k2", 9),
    h48_k2("h48h10k2", 10),
    h48_k2("h48h11k2", 11),
    TWOPHASE_FILES[0],
    TWOPHASE_FILES[1],
    TWOPHASE_FILES[2],
    File {
        name: TWOPHASE_P1M,
        // One 32-bit entry per twophase-p1 entry: how each move changes the distance.
        entries: 64430 * 2187,
        bits: 32,
        // The two-phase tables opened (in huge pages) and the writer's batch.
        build_memory: TWOPHASE_FILES[0].bytes()
            + TWOPHASE_FILES[1].bytes()
            + TWOPHASE_FILES[2].bytes()
            + (128 << 20),
    },
];

/// The two-phase solver's optional file: its phase-1 move table (563.6 MB), which makes
/// the search faster. Built only by name (`tables build twophase-p1m`), never as part of
/// building `twophase`.
pub const TWOPHASE_P1M: &str = "twophase-p1m";

/// One solver table of the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name a job gives in its `table` field.
    pub name: &'static str,
    /// The method it serves.
    pub method: Method,
    /// The table files it cannot work without (in a tables directory, as `<file>.tbl`).
    pub files: &'static [&'static str],
    /// Files read when present, which make the search faster: eoesep, the fallback of the
    /// 2-bit H48 tables, which building the table always builds (and `solve` builds when
    /// missing), and twophase-p1m, the two-phase move table, built only by name.
    pub optional: &'static [&'static str],
}

/// An H48 entry: its main file and cocsep, with the fallback for the 2-bit tables
/// (h48h0k4 has no "at most the base" entries to fall back from).
macro_rules! h48 {
    ($name:literal) => {
        h48!($name, &[EOESEP])
    };
    ($name:literal, $optional:expr) => {
        Entry {
            name: $name,
            method: Method::Optimal,
            files: &[$name, COCSEP],
            optional: $optional,
        }
    };
}

/// Every solver table: `twophase`, then the H48 tables smallest first.
static ENTRIES: [Entry; 14] = [
    Entry {
        name: TWOPHASE,
        method: Method::TwoPhase,
        files: &["twophase-fsym", "twophase-p1", "twophase-p2"],
        optional: &[TWOPHASE_P1M],
    },
    h48!("h48h0k4", &[]),
    h48!("h48h0k2"),
    h48!("h48h1k2"),
    h48!("h48h2k2"),
    h48!("h48h3k2"),
    h48!("h48h4k2"),
    h48!("h48h5k2"),
    h48!("h48h6k2"),
    h48!("h48h7k2"),
    h48!("h48h8k2"),
    h48!("h48h9k2"),
    h48!("h48h10k2"),
    h48!("h48h11k2"),
];

impl Entry {
    /// The table's required files, as catalog files.
    pub fn file_info(&self) -> impl Iterator<Item = &'static File> {
        self.files.iter().filter_map(|f| file(f))
    }

    /// Entries of the table's main file (its first), the measure of "largest".
    pub fn entries(&self) -> u64 {
        self.file_info().next().map_or(0, |f| f.entries)
    }

    /// Approximate bytes of the required files: on disk, and in memory once opened.
    pub fn bytes(&self) -> u64 {
        self.file_info().map(File::bytes).sum()
    }

    /// Approximate peak memory needed to build the table.
    pub fn build_memory(&self) -> u64 {
        self.file_info().map(|f| f.build_memory).max().unwrap_or(0)
    }

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
}

/// Every solver table: `twophase`, then the H48 tables smallest first.
pub fn all() -> &'static [Entry] {
    &ENTRIES
}

/// The names of [`all`], in its order.
pub fn names() -> Vec<&'static str> {
    ENTRIES.iter().map(|e| e.name).collect()
}

/// The catalog entry of `name`, `None` if no job can name it.
pub fn find(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// Every table file, each once, in the order to build them (the list of `tables list`).
pub fn files() -> Vec<&'static str> {
    FILES.iter().map(|f| f.name).collect()
}

/// The catalog file `name`, `None` for a name not in [`files`].
pub fn file(name: &str) -> Option<&'static File> {
    FILES.iter().find(|f| f.name == name)
}

/// Approximate size of a table file (header and body), `None` for a name not in
/// [`files`].
pub fn file_bytes(name: &str) -> Option<u64> {
    file(name).map(File::bytes)
}

/// The H48 table with the most entries among those `usable` accepts (of two as large, the
/// earlier in the catalog: h48h0k4 rather than h48h0k2, its entries are exact): the one
/// rule for "the largest table", on a disk or in a cluster's workers.
pub fn largest_h48_where(mut usable: impl FnMut(&Entry) -> bool) -> Option<&'static str> {
    let mut best: Option<&'static Entry> = None;
    for e in ENTRIES.iter().filter(|e| e.method == Method::Optimal) {
        if usable(e) && best.is_none_or(|b| e.entries() > b.entries()) {
            best = Some(e);
        }
    }
    best.map(|e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_h48_grammar_names_exactly_the_catalog_s_h48_tables() {
        let mut named = vec![H48::parse("h48h0k4").unwrap()];
        named.extend((0..=H48::MAX_EO_BITS).map(|n| H48::parse(&format!("h48h{n}k2")).unwrap()));
        for h in &named {
            let e = find(&h.name()).unwrap();
            assert_eq!(e.method, Method::Optimal);
            let f = file(&h.name()).unwrap();
            assert_eq!(
                (f.entries, f.bits),
                (h.entries(), u64::from(h.bits)),
                "{}",
                h.name()
            );
            assert_eq!(H48::parse(&h.name()), Some(*h));
        }
        let h48_entries = all().iter().filter(|e| e.method == Method::Optimal).count();
        assert_eq!(
            h48_entries,
            named.len(),
            "every H48 entry parses, and only those"
        );
        for bad in [
            "h48h1k4", "h48h12k2", "h48h01k2", "h48h", "h48h3k", "x", "h48h3k2x", "cocsep",
            "h48h-1k2", "h48h+1k2",
        ] {
            assert_eq!(H48::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_entry_is_found_by_its_name_and_names_real_files() {
        assert_eq!(all().len(), 14);
        assert_eq!(names()[0], TWOPHASE);
        for e in all() {
            assert_eq!(find(e.name), Some(e));
            for f in e.files.iter().chain(e.optional) {
                assert!(files().contains(f), "{f}");
                assert!(file_bytes(f).is_some_and(|b| b > HEADER_LEN as u64), "{f}");
            }
            assert_eq!(e.file_info().count(), e.files.len(), "{}", e.name);
            assert!(e.bytes() > 0 && e.build_memory() > 0);
        }
        let mut sorted = files();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), files().len(), "each file once");
        assert_eq!(find("cocsep"), None, "a file, not a solver table");
        assert_eq!(find("twophase-p1"), None);
        assert_eq!(find("h48h12k2"), None);
        let h3 = find("h48h3k2").unwrap();
        assert_eq!(h3.files, ["h48h3k2", "cocsep"]);
        assert_eq!(h3.optional, ["eoesep"]);
        assert_eq!(find("h48h0k2").unwrap().optional, ["eoesep"]);
        assert!(find("h48h0k4").unwrap().optional.is_empty());
        let tp = find("twophase").unwrap();
        assert_eq!(tp.method, Method::TwoPhase);
        assert_eq!(tp.files, ["twophase-fsym", "twophase-p1", "twophase-p2"]);
        // 4 MB + 70 MB + 56 MB, as the files are.
        assert_eq!(file_bytes("twophase-p2"), Some(4096 + 2768 * 40320 / 2));
        assert!(
            (129_000_000..132_000_000).contains(&tp.bytes()),
            "{}",
            tp.bytes()
        );
        assert_eq!(
            file_bytes("h48h3k2"),
            Some(4096 + 117_567_450 * 8 / 4),
            "3 edge-orientation bits, 2 bits each"
        );
        assert_eq!(
            find("h48h3k2").map(Entry::bytes),
            Some(4096 + 117_567_450 * 2 + 4096 + 2187 * 70 * 4)
        );
    }

    #[test]
    fn the_largest_h48_table_prefers_more_entries_then_the_exact_one() {
        assert_eq!(largest_h48_where(|_| false), None);
        assert_eq!(largest_h48_where(|_| true), Some("h48h11k2"));
        assert_eq!(
            largest_h48_where(|e| e.name == "h48h0k2" || e.name == "h48h0k4"),
            Some("h48h0k4"),
            "as large: the earlier, whose entries are exact"
        );
        assert_eq!(
            largest_h48_where(|e| ["h48h0k4", "h48h2k2", "h48h1k2"].contains(&e.name)),
            Some("h48h2k2")
        );
        assert_eq!(largest_h48_where(|e| e.name == TWOPHASE), None);
        let dir = std::env::temp_dir().join("cubeswarm-catalog-none");
        assert_eq!(largest_h48_where(|e| e.present(&dir)), None);
        assert_eq!(
            find("h48h0k4").unwrap().missing(&dir),
            ["h48h0k4", "cocsep"]
        );
    }
}
