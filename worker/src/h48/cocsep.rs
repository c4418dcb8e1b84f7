//! The cocsep table: for each raw corner value (orientation + separation, 153090 of
//! them) one 32-bit word with its symmetry class, the transformation to the class
//! representative and the corner-only distance (seed 001, "Coordinate computation").
//!
//! Word layout: bits 0..12 class (3393 < 4096), bits 12..18 ttrep (0..48), bits 18..22
//! the distance of the corners from the H48 corner target (the cocsep part alone), a
//! lower bound for the whole position.

use super::coords::COCSEP_RAW;
use crate::Error;
use std::path::Path;
use tables::coord::basic::{CornerSep, Twist};
use tables::coord::{Composite, SymCoord};
use tables::tablefile::{self, TableFile, TableMeta};
use tables::Move;

/// Name of the cocsep table file.
pub const NAME: &str = "cocsep";
/// Number of symmetry classes of the cocsep coordinate under the 48 symmetries.
pub const CLASSES: u32 = 3393;
/// Bit position of the corner distance in a cocsep word.
pub const DEPTH_SHIFT: u32 = 18;

/// The cocsep words, indexed by raw value (`twist + 2187 · csep`).
pub struct Cocsep {
    /// One word per raw value (layout in the module docs).
    data: Vec<u32>,
}

/// The symmetric coordinate the cocsep table is made from (the same construction the
/// pruning-table generators use, so classes and transformations agree).
pub fn sym_coord() -> SymCoord {
    SymCoord::new(&Composite::new(Twist, CornerSep), 48)
}

impl Cocsep {
    /// Computes the words from the symmetric coordinate (about a second).
    pub fn compute(sym: &SymCoord) -> Cocsep {
        let classes = sym.classes() as usize;
        let mut depth = vec![u8::MAX; classes];
        let start = sym.class_of(0) as usize;
        depth[start] = 0;
        let mut frontier = vec![start];
        let mut d = 0u8;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &c in &frontier {
                for m in Move::ALL {
                    let (n, _) = sym.apply_move(c as u32, m);
                    if depth[n as usize] == u8::MAX {
                        depth[n as usize] = d + 1;
                        next.push(n as usize);
                    }
                }
            }
            frontier = next;
            d += 1;
        }
        let data = (0..COCSEP_RAW as u32)
            .map(|raw| {
                let class = sym.class_of(raw);
                let t = sym.ttrep(raw) as u32;
                class | t << 12 | (depth[class as usize].min(15) as u32) << DEPTH_SHIFT
            })
            .collect();
        Cocsep { data }
    }

    /// Writes the table file `<dir>/cocsep.tbl`.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let meta = TableMeta {
            depth_shift: DEPTH_SHIFT as u8,
            depth_width: 4,
            ..TableMeta::new(NAME, self.data.len() as u64, 32)
        };
        let body: Vec<u8> = self.data.iter().flat_map(|w| w.to_le_bytes()).collect();
        tablefile::write_table(&tablefile::table_path(dir, NAME), &meta, &body)?;
        Ok(())
    }

    /// Opens `<dir>/cocsep.tbl` and checks that every word is in range.
    pub fn open(dir: &Path) -> Result<Cocsep, Error> {
        let path = tablefile::table_path(dir, NAME);
        if !path.exists() {
            return Err(Error::TableNotFound {
                name: NAME.into(),
                dir: dir.to_path_buf(),
            });
        }
        let file = TableFile::open_verified(&path, NAME)?;
        let bad = |reason: String| Error::BadTable {
            name: NAME.into(),
            reason,
        };
        let h = file.header();
        if h.meta.bits != 32 || h.meta.entries != COCSEP_RAW as u64 {
            return Err(bad(format!(
                "expected {COCSEP_RAW} 32-bit entries, found {} of {} bits",
                h.meta.entries, h.meta.bits
            )));
        }
        let data: Vec<u32> = file
            .body()
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if let Some(w) = data
            .iter()
            .find(|&&w| (w & 0xfff) >= CLASSES || (w >> 12 & 63) >= 48 || w >> 22 != 0)
        {
            return Err(bad(format!("entry {w:#x} out of range")));
        }
        Ok(Cocsep { data })
    }

    /// The word of a raw value (`raw < 153090`).
    #[inline(always)]
    pub fn get(&self, raw: usize) -> u32 {
        self.data[raw]
    }

    /// The highest corner distance in the table.
    pub fn max_depth(&self) -> u8 {
        self.data
            .iter()
            .map(|w| (w >> DEPTH_SHIFT) as u8)
            .max()
            .unwrap_or(0)
    }

    /// The words (for comparing two tables).
    pub fn words(&self) -> &[u32] {
        &self.data
    }
}
