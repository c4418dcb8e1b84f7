//! The H48 tables: names, sizes, building and opening.
//!
//! - `cocsep`: the corner table ([`super::cocsep`]).
//! - `h48h0k4`: 4-bit distances of the h0 coordinate (3393 · 34650 entries), built with
//!   the generic BFS generator of `tables` over the sym-composite coordinate
//!   (cocsep class, edge separation).
//! - `h48hNk2`, N = 0..=11: 2-bit tables (Rokicki's base scheme) of the coordinate with
//!   the orientation of the edges at positions `12 - N .. 12` (of the position transformed to its
//!   class representative) appended: `((class · 34650 + esep) << N) | eo`. Each entry is
//!   the least distance, to the H48 target with all edges oriented, among the positions
//!   it stands for ([`super::gen_k2`]). h0k2 is h0k4 with a base.

use super::cocsep::{self, Cocsep};
use super::coords::ESEP;
use super::gen_k2;
use crate::Error;
use std::path::Path;
use tables::bfs::{self, BfsOptions, Direction};
use tables::coord::basic::{CornerSep, EdgeSep, Twist};
use tables::coord::{Composite, SymComposite};
use tables::packed::{Packed2, Packed4};
use tables::progress::Progress;
use tables::tablefile::{self, TableFile, TableMeta};

/// Which table a name denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// The corner table.
    Cocsep,
    /// `h48h{eo_bits}k{bits}`.
    H48 {
        /// Edge-orientation bits N (0..=11).
        eo_bits: u8,
        /// Bits per entry: 4 (only N = 0) or 2.
        bits: u8,
    },
}

impl TableKind {
    /// Parses `cocsep`, or an H48 table's name by the catalog's grammar
    /// ([`proto::catalog::H48::parse`]).
    pub fn parse(name: &str) -> Option<TableKind> {
        if name == cocsep::NAME {
            return Some(TableKind::Cocsep);
        }
        let h = proto::catalog::H48::parse(name)?;
        Some(TableKind::H48 {
            eo_bits: h.eo_bits,
            bits: h.bits,
        })
    }

    /// Number of entries, from this crate's coordinates (the catalog's sizes are checked
    /// against them by the tests).
    pub fn entries(self) -> u64 {
        match self {
            TableKind::Cocsep => super::coords::COCSEP_RAW as u64,
            TableKind::H48 { eo_bits, .. } => (cocsep::CLASSES as u64 * ESEP as u64) << eo_bits,
        }
    }

    /// Bits per entry.
    pub fn bits(self) -> u8 {
        match self {
            TableKind::Cocsep => 32,
            TableKind::H48 { bits, .. } => bits,
        }
    }
}

/// Available memory (MemAvailable of /proc/meminfo), if known.
pub fn available_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Refuses (at once, before anything is allocated) a build needing `needed` bytes on a
/// machine with `available`: the error gives both in GB and the largest table that fits.
pub fn check_build_memory(name: &str, needed: u64, available: u64) -> Result<(), Error> {
    if needed > available {
        return Err(Error::NotEnoughMemory {
            name: name.into(),
            needed,
            available,
        });
    }
    Ok(())
}

/// The sym-composite h0 coordinate as `tables` defines it (class · 34650 + esep).
pub fn h0_space() -> SymComposite<Composite<Twist, CornerSep>, EdgeSep> {
    SymComposite::new(Composite::new(Twist, CornerSep), EdgeSep, 48)
}

/// Builds table `name` in `dir`, and the tables it depends on if missing: cocsep for all,
/// eoesep (the fallback) for the k2 tables, h0k4 for h0k2 (its source).
pub fn build_table(dir: &Path, name: &str, progress: &dyn Progress) -> Result<(), Error> {
    build_table_with_base(dir, name, None, progress)
}

/// [`build_table`] with another base than [`gen_k2::BASES`] for an h48hNk2 table, N >= 1
/// (`None`: the default). The base is in the file's header and the search reads it from
/// there, so such a file serves like any other; a checkpoint of another base is not
/// resumed. For measuring which base a table should have.
pub fn build_table_with_base(
    dir: &Path,
    name: &str,
    base: Option<u8>,
    progress: &dyn Progress,
) -> Result<(), Error> {
    let kind = TableKind::parse(name).ok_or_else(|| Error::UnknownTable(name.into()))?;
    if let Some(b) = base {
        let ok = matches!(
            kind,
            TableKind::H48 {
                eo_bits: 1..,
                bits: 2
            }
        ) && (1..=12).contains(&b);
        if !ok {
            return Err(Error::BadBase {
                name: name.into(),
                base: b,
            });
        }
    }
    if let (Some(file), Some(avail)) = (proto::catalog::file(name), available_memory()) {
        check_build_memory(name, file.build_memory, avail)?;
    }
    std::fs::create_dir_all(dir).map_err(|error| Error::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    let exists = |n: &str| tablefile::table_path(dir, n).exists();
    match kind {
        TableKind::Cocsep => build_cocsep(dir),
        TableKind::H48 {
            eo_bits: 0,
            bits: 4,
        } => {
            if !exists(cocsep::NAME) {
                build_cocsep(dir)?;
            }
            build_h0k4(dir, progress)
        }
        TableKind::H48 { eo_bits, bits: _ } => {
            if !exists(cocsep::NAME) {
                build_cocsep(dir)?;
            }
            // eoesep is every k2 table's fallback (a few seconds).
            if !exists(super::eoesep::NAME) {
                super::eoesep::Eoesep::build(dir, progress)?;
            }
            if eo_bits == 0 {
                // h0k4 is the source of h0k2.
                if !exists("h48h0k4") {
                    build_h0k4(dir, progress)?;
                }
                let h0 = open_k4(dir, "h48h0k4")?;
                write_k2(dir, name, &h0.to_packed2(gen_k2::BASES[0]))
            } else {
                let cocsep = Cocsep::open(dir)?;
                gen_k2::generate(
                    dir,
                    name,
                    eo_bits,
                    base.unwrap_or(gen_k2::BASES[eo_bits as usize]),
                    &cocsep,
                    progress,
                )
            }
        }
    }
}

fn build_cocsep(dir: &Path) -> Result<(), Error> {
    Cocsep::compute(&cocsep::sym_coord()).write(dir)
}

/// Generates h48h0k4 with the generic generator (forward, then backward levels).
fn build_h0k4(dir: &Path, progress: &dyn Progress) -> Result<(), Error> {
    let space = h0_space();
    let g = bfs::generate_with(
        &space,
        &BfsOptions {
            name: "h48h0k4".into(),
            max_depth: bfs::MAX_DEPTH,
            direction: Direction::Auto,
        },
        progress,
    );
    let meta = TableMeta::for_packed4("h48h0k4", &g.table);
    tablefile::write_table(
        &tablefile::table_path(dir, "h48h0k4"),
        &meta,
        g.table.as_bytes(),
    )?;
    Ok(())
}

fn write_k2(dir: &Path, name: &str, t: &Packed2) -> Result<(), Error> {
    let meta = TableMeta::for_packed2(name, t);
    tablefile::write_table(&tablefile::table_path(dir, name), &meta, t.as_bytes())?;
    Ok(())
}

fn check_path(dir: &Path, name: &str) -> Result<std::path::PathBuf, Error> {
    let path = tablefile::table_path(dir, name);
    if !path.exists() {
        return Err(Error::TableNotFound {
            name: name.into(),
            dir: dir.to_path_buf(),
        });
    }
    Ok(path)
}

fn check_entries(name: &str, kind: TableKind, found: u64) -> Result<(), Error> {
    if found != kind.entries() {
        return Err(Error::BadTable {
            name: name.into(),
            reason: format!("{found} entries, expected {}", kind.entries()),
        });
    }
    Ok(())
}

/// Opens a 4-bit H48 table (mapped, header checked).
pub fn open_k4(dir: &Path, name: &str) -> Result<Packed4, Error> {
    let kind = TableKind::parse(name).ok_or_else(|| Error::UnknownTable(name.into()))?;
    let t = TableFile::open_verified(check_path(dir, name)?, name)?.into_packed4()?;
    check_entries(name, kind, t.len())?;
    Ok(t)
}

/// Opens a 2-bit H48 table (mapped, header checked).
pub fn open_k2(dir: &Path, name: &str) -> Result<Packed2, Error> {
    let kind = TableKind::parse(name).ok_or_else(|| Error::UnknownTable(name.into()))?;
    let file = TableFile::open_verified(check_path(dir, name)?, name)?;
    let layout = file.header().meta.params[0];
    if matches!(kind, TableKind::H48 { eo_bits: 1.., .. }) && layout != gen_k2::EDGE_LAYOUT {
        return Err(Error::BadTable {
            name: name.into(),
            reason: format!(
                "edge-orientation layout {layout}, expected {} (written by an older \
                 cubeswarm): rebuild it with `cubeswarm tables build {name}`",
                gen_k2::EDGE_LAYOUT
            ),
        });
    }
    let t = file.into_packed2()?;
    check_entries(name, kind, t.len())?;
    if t.base() == 0 || t.base() > 12 {
        return Err(Error::BadTable {
            name: name.into(),
            reason: format!("base {} out of range", t.base()),
        });
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_that_cannot_fit_is_refused_with_both_figures_and_what_fits() {
        let need = proto::catalog::file("h48h9k2").unwrap().build_memory;
        let err = check_build_memory("h48h9k2", need, 12_000_000_000).unwrap_err();
        assert_eq!(
            err.to_string(),
            "building h48h9k2 needs about 16.5 GB of memory, only 12.0 GB available; the \
             largest H48 table that fits is h48h8k2 (9.0 GB to build)"
        );
        let err = check_build_memory("h48h1k2", need, 1_000).unwrap_err();
        assert!(err.to_string().ends_with("no H48 table fits"), "{err}");
        assert!(check_build_memory("h48h9k2", need, need).is_ok());
        // Every k2 table builds in its size plus 1.5 GB (h9: 16.6 GB, under 24 GB).
        for n in 1..=11u8 {
            let f = proto::catalog::file(&format!("h48h{n}k2")).unwrap();
            assert!(f.build_memory <= f.bytes() + 1_500_000_000, "h{n}");
        }
    }

    #[test]
    fn names_parse() {
        // Every H48 file of the catalog.
        for n in proto::catalog::files()
            .into_iter()
            .filter(|f| !f.starts_with("twophase") && *f != super::super::eoesep::NAME)
        {
            assert!(TableKind::parse(n).is_some(), "{n}");
        }
        for bad in [
            "h48h1k4", "h48h12k2", "h48h01k2", "h48h", "h48h3k", "x", "h48h3k2x",
        ] {
            assert_eq!(TableKind::parse(bad), None, "{bad}");
        }
        assert_eq!(
            TableKind::parse("h48h0k4").map(|k| k.entries()),
            Some(117_567_450)
        );
    }
}
