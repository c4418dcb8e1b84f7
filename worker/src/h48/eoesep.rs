//! The `eoesep` table: the fallback bound of the 2-bit H48 tables that sees edge
//! orientation.
//!
//! Its coordinate is the edge separation (`esep`, which positions hold the E-slice edges
//! and, among the other eight, the M-slice edges: 34650 values) times the orientation of
//! the edges (2048 values): what the h48hNk2 index reads of the edges, with all twelve
//! orientations instead of N of them and nothing of the corners. Corners solved and every
//! edge flipped in place (the superflip) is 10 moves away for it, where h48h0k4, which
//! reads corners and `esep` but no orientation, says 0.
//!
//! **Symmetry.** The eight symmetries that keep each of the three axes (the UD-axis ones
//! without a quarter turn: [`SYMS`]) map E-slice edges to E-slice edges and M-slice edges
//! to M-slice edges, and keep the orientation of every edge: conjugating by one of them
//! permutes `esep` values among themselves and orientation bits among themselves, each on
//! its own. So `esep` is reduced to [`CLASSES`] classes under them, and the index is
//! `class · 2048 + eo'`, where `eo'` is the orientation of the position conjugated to its
//! class representative. A representative fixed by some of the eight (its self-symmetries)
//! has several `eo'` for one position; the generator sets all of them, so any choice
//! reads the same value. 4 bits an entry: 4.5 MB, which stays in the last-level cache
//! beside a main table that does not.
//!
//! **Where the search reads it.** The search computes `esep` and the orientation bits of
//! the position transformed to its corner-class representative anyway (the main-table
//! index is made of them), so this table's index costs two small-table reads
//! ([`EoesepCoord::index`]), and its value bounds that transformed position, which is as
//! far from solved as the position itself.

use super::coords::ESEP;
use crate::Error;
use std::path::Path;
use tables::bfs::{self, BfsOptions, Direction, PruneSpace};
use tables::coord::basic::EdgeSep;
use tables::coord::Coord;
use tables::moves::MOVE_CUBES;
use tables::packed::Packed4;
use tables::progress::Progress;
use tables::symmetry::symmetries;
use tables::tablefile::{self, TableFile, TableMeta};
use tables::Cube;

/// Name of the table file.
pub const NAME: &str = "eoesep";

/// The symmetries (Kociemba's numbering, `tables::symmetry`) that keep every axis:
/// `F2^b · U2^c · LR2^d`.
pub const SYMS: [usize; 8] = [0, 1, 4, 5, 8, 9, 12, 13];

/// Classes of `esep` under [`SYMS`].
pub const CLASSES: u32 = 4464;

/// Orientation values (the twelfth bit follows from the other eleven).
const EO: u64 = 2048;

/// Entries of the table.
pub const ENTRIES: u64 = CLASSES as u64 * EO;

/// The reduction of the coordinate: class and symmetry of each `esep`, and the action of
/// the eight symmetries on orientation bits.
pub struct EoesepCoord {
    /// Per `esep`: `class << 3 | k`, where `SYMS[k]` conjugates it to its representative.
    class_sym: Vec<u32>,
    /// Per symmetry `k` and 12-bit orientation `eo`: `[k · 4096 + eo]`, the orientation
    /// bits of the conjugated position.
    eo_map: Vec<u16>,
    /// Per class: its representative `esep`.
    reps: Vec<u32>,
    /// Per class: the `k` whose symmetries fix the representative, as a bit mask.
    selfsym: Vec<u8>,
}

/// The orientation bits of `c`, bit `i` for position `i`.
fn eo_bits(c: &Cube) -> u32 {
    (0..12).fold(0, |a, i| a | (c.edge_ori(i) as u32) << i)
}

/// A cube with solved corners, edge permutation `ep`'s and orientation bits `eo` (the
/// twelfth bit is made to agree with the others' parity).
fn with_eo(ep: &Cube, eo: u32) -> Cube {
    let eo = eo & 0x7ff;
    let eo = eo | (eo.count_ones() & 1) << 11;
    Cube::from_parts_unchecked(
        Cube::SOLVED.cp(),
        Cube::SOLVED.co(),
        ep.ep(),
        std::array::from_fn(|i| (eo >> i & 1) as u8),
    )
}

impl EoesepCoord {
    /// Computes the reduction (a few milliseconds: 34650 · 8 conjugations).
    pub fn new() -> EoesepCoord {
        let syms = symmetries();
        let mut class_sym = vec![u32::MAX; ESEP as usize];
        let (mut reps, mut selfsym) = (Vec::new(), Vec::new());
        for r in 0..ESEP {
            if class_sym[r as usize] != u32::MAX {
                continue;
            }
            let class = reps.len() as u32;
            let cube = EdgeSep.to_cube(r);
            let mut fixed = 0u8;
            for (k, &s) in SYMS.iter().enumerate() {
                let image = EdgeSep.index(&syms.conjugate(&cube, s)) as usize;
                if image == r as usize {
                    fixed |= 1 << k;
                }
                // `S_s` maps `r` to `image`, so its inverse maps `image` to `r`; every
                // symmetry of the eight is its own inverse.
                if class_sym[image] == u32::MAX {
                    class_sym[image] = class << 3 | k as u32;
                }
            }
            reps.push(r);
            selfsym.push(fixed);
        }
        let mut eo_map = vec![0u16; SYMS.len() * 4096];
        for (k, &s) in SYMS.iter().enumerate() {
            for eo in 0..4096u32 {
                let c = Cube::from_parts_unchecked(
                    Cube::SOLVED.cp(),
                    Cube::SOLVED.co(),
                    Cube::SOLVED.ep(),
                    std::array::from_fn(|i| (eo >> i & 1) as u8),
                );
                eo_map[k * 4096 + eo as usize] = eo_bits(&syms.conjugate(&c, s)) as u16;
            }
        }
        EoesepCoord {
            class_sym,
            eo_map,
            reps,
            selfsym,
        }
    }

    /// Number of classes.
    pub fn classes(&self) -> u32 {
        self.reps.len() as u32
    }

    /// The index of a position with edge separation `esep` (< 34650) and orientation bits
    /// `eo` (bit `i` for position `i`, 12 bits).
    #[inline(always)]
    pub fn index(&self, esep: u32, eo: u32) -> u64 {
        let w = self.class_sym[esep as usize];
        let eo = self.eo_map[((w & 7) << 12 | (eo & 0xfff)) as usize];
        (w >> 3) as u64 * EO + (eo & 0x7ff) as u64
    }

    /// The index of a cube.
    pub fn index_of(&self, c: &Cube) -> u64 {
        self.index(EdgeSep.index(c), eo_bits(c))
    }

    /// Every index of the position `class`, `eo` stands for: its images under the
    /// representative's self-symmetries (itself included).
    fn images(&self, class: u32, eo: u32, mut f: impl FnMut(u64)) {
        let fixed = self.selfsym[class as usize];
        let eo = eo & 0x7ff;
        let eo = eo | (eo.count_ones() & 1) << 11;
        for k in 0..SYMS.len() {
            if fixed & 1 << k != 0 {
                let e = self.eo_map[k << 12 | eo as usize] as u64 & 0x7ff;
                f(class as u64 * EO + e);
            }
        }
    }
}

impl Default for EoesepCoord {
    fn default() -> Self {
        EoesepCoord::new()
    }
}

/// The coordinate space the generator walks.
struct Space<'a> {
    coord: &'a EoesepCoord,
    /// Per class: a cube whose edges have the representative's separation.
    rep_cubes: Vec<Cube>,
}

impl PruneSpace for Space<'_> {
    fn size(&self) -> u64 {
        self.coord.classes() as u64 * EO
    }

    fn solved(&self) -> Vec<u64> {
        let x = self.coord.index_of(&Cube::SOLVED);
        let mut out = Vec::new();
        self.coord
            .images((x / EO) as u32, (x % EO) as u32, |i| out.push(i));
        out
    }

    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, mut f: F) {
        let class = (x / EO) as u32;
        let c = with_eo(&self.rep_cubes[class as usize], (x % EO) as u32);
        for mc in MOVE_CUBES.iter() {
            let y = self.coord.index_of(&c.compose(mc));
            self.coord.images((y / EO) as u32, (y % EO) as u32, &mut f);
        }
    }
}

/// The eoesep table, opened (or generated), with its coordinate.
pub struct Eoesep {
    /// The reduction.
    pub coord: EoesepCoord,
    /// The distances, 4 bits an entry.
    pub table: Packed4,
}

impl Eoesep {
    /// Generates the table (a few seconds), reporting each level to `progress`.
    pub fn generate(progress: &dyn Progress) -> (EoesepCoord, bfs::Generated) {
        let coord = EoesepCoord::new();
        let rep_cubes = coord.reps.iter().map(|&r| EdgeSep.to_cube(r)).collect();
        let space = Space {
            coord: &coord,
            rep_cubes,
        };
        let g = bfs::generate_with(
            &space,
            &BfsOptions {
                name: NAME.into(),
                max_depth: bfs::MAX_DEPTH,
                direction: Direction::Auto,
            },
            progress,
        );
        (coord, g)
    }

    /// Generates the table and writes it to `<dir>/eoesep.tbl`.
    pub fn build(dir: &Path, progress: &dyn Progress) -> Result<(), Error> {
        let (_, g) = Eoesep::generate(progress);
        let meta = TableMeta::for_packed4(NAME, &g.table);
        tablefile::write_table(&tablefile::table_path(dir, NAME), &meta, g.table.as_bytes())?;
        Ok(())
    }

    /// Opens `<dir>/eoesep.tbl` (mapped; its body checked once, as every table's).
    pub fn open(dir: &Path) -> Result<Eoesep, Error> {
        let path = tablefile::table_path(dir, NAME);
        if !path.exists() {
            return Err(Error::TableNotFound {
                name: NAME.into(),
                dir: dir.to_path_buf(),
            });
        }
        let table = TableFile::open_verified(&path, NAME)?.into_packed4()?;
        if table.len() != ENTRIES {
            return Err(Error::BadTable {
                name: NAME.into(),
                reason: format!("{} entries, expected {ENTRIES}", table.len()),
            });
        }
        Ok(Eoesep {
            coord: EoesepCoord::new(),
            table,
        })
    }

    /// The table in a private huge-page copy when `huge` (as the main table is read), else
    /// as it was opened.
    pub fn in_memory(self, huge: bool) -> Eoesep {
        if huge {
            Eoesep {
                table: self.table.to_huge_pages(),
                ..self
            }
        } else {
            self
        }
    }

    /// The table's bound for a position with edge separation `esep` and orientation bits
    /// `eo`.
    #[inline(always)]
    pub fn get(&self, esep: u32, eo: u32) -> u8 {
        self.table.get(self.coord.index(esep, eo))
    }

    /// Starts loading the entry [`Eoesep::get`] will read.
    #[inline(always)]
    pub fn prefetch(&self, esep: u32, eo: u32) {
        self.table.prefetch(self.coord.index(esep, eo))
    }

    /// The bound of a cube.
    pub fn bound(&self, c: &Cube) -> u8 {
        self.table.get(self.coord.index_of(c))
    }
}

#[cfg(test)]
mod tests;
