//! The two-phase tables: three table files (memory-mapped) and the small move, symmetry and
//! pruning tables computed when they are opened.
//!
//! # Files
//! | name | entries | bits | what |
//! | --- | --- | --- | --- |
//! | `twophase-fsym` | 2048 · 495 | 32 | raw FlipUDSlice (`flip + 2048 · slice`) → `class << 4 \| sym` |
//! | `twophase-p1` | 64430 · 2187 | 4 | phase-1 distance of (FlipUDSlice class, twist) |
//! | `twophase-p2` | 2768 · 40320 | 4 | phase-2 distance of (corner-permutation class, edge8 permutation) |
//! | `twophase-p1m` (optional) | 64430 · 2187 | 32 | how each move changes the phase-1 distance (`tables/p1m.rs`) |
//!
//! The sym index `sym` of a raw value is the symmetry that conjugates it to its class
//! representative; the pruning index of a position is `class · size_b + b'` where `b'` is the
//! second coordinate conjugated by that same symmetry (a sym-composite coordinate, seed 000).
//! The classes are the 16 symmetries that keep the UD axis.
//!
//! # In memory
//! Computed at open (a few hundred milliseconds, in parallel): 16-bit move tables of twist,
//! flip and UDSlice (phase 1, 18 moves) and of corner permutation, edge8 permutation and
//! slice4 permutation (phase 2, 10 moves), the twist and edge8 transformation tables, the
//! corner-permutation classes, 4-bit phase-1 distances of (UDSlice class, twist) (a first
//! in-cache bound, a few tens of kilobytes), byte tables of phase-2 distances of the
//! corner permutation and of (corner permutation, slice4 permutation), used to reject
//! phase-1 solutions cheaply, and the flip-conjugation tables. Of `twophase-fsym` only the
//! rows of the 45 UDSlice class representatives are kept (368 kB, where the file is 4 MB):
//! a node's class is read there after conjugating it by its UDSlice's symmetry
//! (`TwoPhaseTables::p1_index_from`).
//!
//! By default the two pruning tables are copied from their maps into memory backed by
//! transparent huge pages ([`TableMemory::HugePages`]); [`TableMemory::Mapped`] reads the
//! shared maps instead (about 10–30 % slower per lookup-bound search, no private copy).

mod p1m;
mod small;

pub(crate) use self::p1m::decode;
use self::p1m::P1Moves;
pub use self::p1m::P1M_NAME;
use self::small::SmallTables;
use super::huge::Nibbles;
use crate::Error;
use ::tables::bfs::{self, BfsOptions, PruneSpace};
use ::tables::coord::basic::{CornerPerm, Edge8Perm, Flip, Slice4Perm, Twist, UdSlice};
use ::tables::coord::{Composite, Coord, MoveTable, SymComposite, SymCoord, TransformTable};
use ::tables::packed::{nibble, Packed4};
use ::tables::progress::Progress;
use ::tables::tablefile::{table_path, write_table, TableFile, TableFileError, TableMeta};
use ::tables::{Cube, Move, NSYM_UD};
use rayon::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Name of the FlipUDSlice class table file.
pub const FSYM_NAME: &str = "twophase-fsym";
/// Name of the phase-1 pruning table file.
pub const P1_NAME: &str = "twophase-p1";
/// Name of the phase-2 pruning table file.
pub const P2_NAME: &str = "twophase-p2";
const NAMES: [&str; 3] = [FSYM_NAME, P1_NAME, P2_NAME];

/// Number of twist values.
pub(crate) const N_TWIST: usize = 2187;
/// Number of flip values.
pub(crate) const N_FLIP: usize = 2048;
/// Number of raw FlipUDSlice values.
pub(crate) const N_FLIPSLICE: usize = 2048 * 495;
/// FlipUDSlice classes under the 16 UD symmetries.
pub(crate) const N_FS_CLASSES: usize = 64430;
/// Number of 8-element permutations (corners, U/D edges).
pub(crate) const N_PERM8: usize = 40320;
/// Corner-permutation classes under the 16 UD symmetries.
pub(crate) const N_CP_CLASSES: usize = 2768;
/// Number of UDSlice values.
pub(crate) const N_SLICE: usize = 495;
/// Number of slice4 permutations.
pub(crate) const N_SLICE4: usize = 24;

/// The ten moves of phase 2 (`U U2 U' D D2 D' R2 L2 F2 B2`), as indices into `Move::ALL`.
pub const PHASE2_MOVES: [u8; 10] = [0, 1, 2, 9, 10, 11, 4, 13, 7, 16];

/// Golden cumulative phase-1 distribution, depths 0..=12 (seed data; also checked at open).
pub const P1_CUMULATIVE: [u64; 13] = [
    1, 2, 7, 51, 538, 6379, 74743, 851311, 8802059, 60900935, 137137169, 140908281, 140908410,
];
/// Golden cumulative phase-2 distribution, depths 0..=10 (the rest is deeper).
pub const P2_CUMULATIVE: [u64; 11] = [
    1, 4, 14, 66, 351, 1669, 7340, 33842, 149309, 620155, 2473211,
];

/// All two-phase tables, ready for searching. `Send + Sync`: share one across threads.
pub struct TwoPhaseTables {
    /// `twist_move[t · 18 + m]`: twist after move `m`.
    pub(crate) twist_move: Vec<u16>,
    /// `flip_move[f · 18 + m]`: flip after move `m`.
    pub(crate) flip_move: Vec<u16>,
    /// `slice_move[s · 18 + m]`: UDSlice (positions of the E-slice edges) after move `m`.
    pub(crate) slice_move: Vec<u16>,
    /// `flip_conj[s · 2048 + f] ^ slice_flip_conj[s · 495 + u]` is the flip of
    /// `S_s · c · S_s⁻¹` for a position `c` of flip `f` and UDSlice `u`: conjugation by a
    /// UD symmetry permutes the orientations and flips those of some positions, which
    /// depend only on where the slice edges are.
    pub(crate) flip_conj: Vec<u16>,
    pub(crate) slice_flip_conj: Vec<u16>,
    /// `fs_rep[c · 2048 + f]`: `class << 4 | sym` of the raw FlipUDSlice value with flip
    /// `f` and the UDSlice of class `c`'s representative (the rows of `twophase-fsym` for
    /// those slices: 45 × 2048 words, 368 kB, where the whole file is 4 MB).
    pub(crate) fs_rep: Vec<u32>,
    /// `twist_conj[s · 2187 + t]`: twist of `S_s · t · S_s⁻¹`.
    pub(crate) twist_conj: Vec<u16>,
    /// Phase-1 pruning table, indexed `class · 2187 + twist_conj`.
    pub(crate) p1: Nibbles,
    /// UDSlice → `class << 4 | sym` under the 16 UD symmetries.
    pub(crate) slice_sym: Vec<u16>,
    /// `slice_twist[class · 2187 + twist_conj]`, 4 bits: phase-1 distance of (UDSlice,
    /// twist) alone, symmetry-reduced (a few tens of kilobytes).
    pub(crate) slice_twist: Vec<u8>,
    /// `cp_move[c · 10 + k]`: corner permutation after phase-2 move `k`.
    pub(crate) cp_move: Vec<u16>,
    /// `e8_move[e · 10 + k]`: edge8 permutation after phase-2 move `k`.
    pub(crate) e8_move: Vec<u16>,
    /// `s4_move[s · 10 + k]`: slice4 permutation after phase-2 move `k`.
    pub(crate) s4_move: Vec<u8>,
    /// Corner permutation → `class << 4 | sym`.
    pub(crate) cpsym: Vec<u32>,
    /// `e8_conj[s · 40320 + e]`: edge8 permutation of `S_s · e · S_s⁻¹`.
    pub(crate) e8_conj: Vec<u16>,
    /// Phase-2 pruning table, indexed `class · 40320 + e8_conj`.
    pub(crate) p2: Nibbles,
    /// `s4_conj[s · 24 + p]`: slice4 permutation of `S_s · p · S_s⁻¹`.
    pub(crate) s4_conj: Vec<u8>,
    /// `cs_prune[class · 24 + s4_conj]`: exact phase-2 distance of (corner-permutation
    /// class, slice4 permutation).
    pub(crate) cs_prune: Vec<u8>,
    /// `cp_dist[class]`: phase-2 distance of the corner permutation alone (the minimum
    /// of `cs_prune` over the slice permutations).
    pub(crate) cp_dist: Vec<u8>,
    /// The optional phase-1 move table (`twophase-p1m`), used by the search when present.
    pub(crate) p1m: Option<P1Moves>,
    /// How long opening took (mapping files and computing the small tables).
    load_time: Duration,
}

pub use crate::TableMemory;

impl TwoPhaseTables {
    /// The names of the table files, in build order.
    pub fn table_names() -> &'static [&'static str] {
        &NAMES
    }

    /// Opens existing table files in `dir` (headers, lengths, golden distributions and the
    /// class table's range are checked); an error names a missing or bad file.
    pub fn open(dir: &Path) -> Result<Self, Error> {
        TwoPhaseTables::open_with(dir, TableMemory::default())
    }

    /// [`TwoPhaseTables::open`] with a choice of where the pruning tables are read from.
    pub fn open_with(dir: &Path, memory: TableMemory) -> Result<Self, Error> {
        let start = Instant::now();
        let fsym_file = TableFile::open_verified(table_path(dir, FSYM_NAME), FSYM_NAME)?;
        let p1_file = TableFile::open_verified(table_path(dir, P1_NAME), P1_NAME)?;
        let p2_file = TableFile::open_verified(table_path(dir, P2_NAME), P2_NAME)?;
        check_header(&fsym_file, N_FLIPSLICE as u64, 32)?;
        check_header(&p1_file, (N_FS_CLASSES * N_TWIST) as u64, 4)?;
        check_header(&p2_file, (N_CP_CLASSES * N_PERM8) as u64, 4)?;
        check_cumulative(&p1_file, &P1_CUMULATIVE)?;
        check_cumulative(&p2_file, &P2_CUMULATIVE)?;
        // The distances mod 3 that the move table must count, from the phase-1 table's.
        let mut p1_mod3 = [0u64; 3];
        for (d, &n) in p1_file.header().distribution.iter().enumerate() {
            p1_mod3[d % 3] += n;
        }
        let fsym = decode_fsym(&fsym_file)?;
        let copy = memory == TableMemory::HugePages;
        let p1 = Nibbles::new(p1_file.into_packed4()?, copy);
        let p2 = Nibbles::new(p2_file.into_packed4()?, copy);
        let p1m_path = table_path(dir, P1M_NAME);
        let p1m = if p1m_path.exists() {
            let file = TableFile::open_verified(p1m_path, P1M_NAME)?;
            check_header(&file, p1m::N_P1M, 32)?;
            let dist = &file.header().distribution;
            if dist[..3] != p1_mod3 || dist[3..].iter().any(|&n| n != 0) {
                return Err(Error::BadTable {
                    name: P1M_NAME.into(),
                    reason: "its distances mod 3 are not those of twophase-p1: the tables \
                             do not belong together"
                        .into(),
                });
            }
            Some(P1Moves::new(file, copy)?)
        } else {
            None
        };
        let small = SmallTables::new();
        let fs_rep: Vec<u32> = small
            .slice_rep
            .iter()
            .flat_map(|&u| &fsym[u as usize * N_FLIP..(u as usize + 1) * N_FLIP])
            .copied()
            .collect();
        let tables = TwoPhaseTables {
            twist_move: small.twist_move,
            flip_move: small.flip_move,
            slice_move: small.slice_move,
            flip_conj: small.flip_conj,
            slice_flip_conj: small.slice_flip_conj,
            fs_rep,
            twist_conj: small.twist_conj,
            slice_sym: small.slice_sym,
            slice_twist: small.slice_twist,
            p1,
            cp_move: small.cp_move,
            e8_move: small.e8_move,
            s4_move: small.s4_move,
            cpsym: small.cpsym,
            e8_conj: small.e8_conj,
            p2,
            cp_dist: small
                .cs_prune
                .chunks_exact(N_SLICE4)
                .map(|c| c.iter().copied().min().unwrap_or(0))
                .collect(),
            s4_conj: small.s4_conj,
            cs_prune: small.cs_prune,
            p1m,
            load_time: Duration::ZERO,
        };
        tables.check_known_distances()?;
        if tables.p1m.is_some() {
            tables.check_p1m()?;
        }
        Ok(TwoPhaseTables {
            load_time: start.elapsed(),
            ..tables
        })
    }

    /// Checks that the files agree with each other and with the moves on positions whose
    /// distances are known: one move from solved is phase-1 distance 1 for a quarter turn of
    /// R, L, F or B and 0 otherwise, and phase-2 distance 1 for a phase-2 move. A class
    /// table from another build would fail this, and so would most damage to the pruning
    /// tables (a wrong phase-2 distance is `twophase-p2`'s alone: its index comes from
    /// tables computed here).
    fn check_known_distances(&self) -> Result<(), Error> {
        for m in Move::ALL {
            let c = Cube::SOLVED.apply_move(m);
            let p1 = self.p1.get(self.p1_index(
                Flip.index(&c) as u16,
                UdSlice.index(&c) as u16,
                Twist.index(&c) as u16,
            ));
            let quarter_rlfb = m.axis() != 0 && !m.is_half();
            if p1 != u8::from(quarter_rlfb) {
                return Err(Error::BadTable {
                    name: P1_NAME.into(),
                    reason: format!(
                        "wrong distance after {m}: it and the class table {FSYM_NAME} do not \
                         belong together, or one is damaged (`cubeswarm tables verify` \
                         checks each file)"
                    ),
                });
            }
            if PHASE2_MOVES.contains(&(m.index() as u8)) {
                let cs = self.cpsym[CornerPerm.index(&c) as usize];
                let p2 = self
                    .p2
                    .get(self.p2_index_sym(cs, Edge8Perm.index(&c) as u16));
                if p2 != 1 {
                    return Err(Error::BadTable {
                        name: P2_NAME.into(),
                        reason: format!(
                            "wrong distance after {m}: the file is damaged or not of this \
                             build (`cubeswarm tables verify` checks it)"
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Opens the tables in `dir`, first building any file that is missing (reporting to
    /// `progress`). A file that exists but is
    /// damaged is an error, not silently rebuilt.
    pub fn open_or_build(dir: &Path, progress: &dyn Progress) -> Result<Self, Error> {
        for name in TwoPhaseTables::missing(dir) {
            TwoPhaseTables::build(dir, name, progress)?;
        }
        TwoPhaseTables::open(dir)
    }

    /// The tables that are not in `dir` yet, in the order to build them (building
    /// `twophase-p1` also writes `twophase-fsym`, so that one is not listed separately).
    pub fn missing(dir: &Path) -> Vec<&'static str> {
        let absent = |name| !table_path(dir, name).exists();
        let mut out = Vec::new();
        if absent(P1_NAME) {
            out.push(P1_NAME);
        } else if absent(FSYM_NAME) {
            out.push(FSYM_NAME);
        }
        if absent(P2_NAME) {
            out.push(P2_NAME);
        }
        out
    }

    /// Builds table `name` (one of [`TwoPhaseTables::table_names`]) into `dir`, replacing
    /// any existing file atomically. Building `twophase-p1` also writes `twophase-fsym`
    /// (the two share their class numbering).
    pub fn build(dir: &Path, name: &str, progress: &dyn Progress) -> Result<(), Error> {
        match name {
            FSYM_NAME => {
                let sym = SymCoord::new(&Composite::new(Flip, UdSlice), NSYM_UD);
                write_fsym(dir, &sym)?;
            }
            P1_NAME => {
                let space = SymComposite::new(Composite::new(Flip, UdSlice), Twist, NSYM_UD);
                write_fsym(dir, &space.sym)?;
                let generated = bfs::generate_with(
                    &space,
                    &BfsOptions {
                        name: P1_NAME.into(),
                        ..BfsOptions::default()
                    },
                    progress,
                );
                write_packed4(dir, P1_NAME, &generated.table)?;
            }
            P2_NAME => {
                let space = Phase2Space(SymComposite::new(CornerPerm, Edge8Perm, NSYM_UD));
                let generated = bfs::generate_with(
                    &space,
                    &BfsOptions {
                        name: P2_NAME.into(),
                        ..BfsOptions::default()
                    },
                    progress,
                );
                write_packed4(dir, P2_NAME, &generated.table)?;
            }
            P1M_NAME => p1m::build(dir, progress)?,
            other => return Err(Error::UnknownTable(other.to_owned())),
        }
        Ok(())
    }

    /// Re-reads every table file body in `dir` and checks its checksum and distribution.
    pub fn verify(dir: &Path) -> Result<(), Error> {
        for name in NAMES {
            TableFile::open(table_path(dir, name), name)?.verify()?;
        }
        Ok(())
    }

    /// How long [`TwoPhaseTables::open`] took.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// Whether the pruning tables are read from private huge-page copies.
    pub fn memory(&self) -> TableMemory {
        if self.p1.is_copy() {
            TableMemory::HugePages
        } else {
            TableMemory::Mapped
        }
    }

    /// Bytes held: mapped pruning tables plus the in-memory tables.
    pub fn memory_bytes(&self) -> usize {
        self.p1.bytes().len()
            + self.p2.bytes().len()
            + self.slice_twist.len()
            + 2 * (self.twist_move.len()
                + self.flip_move.len()
                + self.slice_move.len()
                + self.twist_conj.len()
                + self.cp_move.len()
                + self.e8_move.len()
                + self.e8_conj.len())
            + 2 * (self.flip_conj.len() + self.slice_flip_conj.len())
            + 4 * (self.fs_rep.len() + self.cpsym.len())
            + self.s4_move.len()
            + self.cs_prune.len()
            + self.p1m.as_ref().map_or(0, |m| m.bytes().len())
    }

    /// Touches every page of the mapped tables so that later searches do not pay for page
    /// faults (for benchmarks). Returns a value derived from the bytes so the reads stay.
    pub fn prefault(&self) -> u64 {
        let touch = |b: &[u8]| b.par_chunks(4096).map(|c| u64::from(c[0])).sum::<u64>();
        touch(self.p1.bytes())
            + touch(self.p2.bytes())
            + self.p1m.as_ref().map_or(0, |m| touch(m.bytes()))
    }

    /// Phase-1 pruning index of raw phase-1 coordinates.
    #[inline(always)]
    pub(crate) fn p1_index(&self, flip: u16, slice: u16, twist: u16) -> u64 {
        let (ss, t) = self.slice_class_twist(slice, twist);
        self.p1_index_from(flip, slice, ss, t)
    }

    /// `slice_sym` of `slice` and `twist` conjugated by its symmetry: the first half of
    /// the pruning index, and what the cheap bound reads.
    #[inline(always)]
    pub(crate) fn slice_class_twist(&self, slice: u16, twist: u16) -> (usize, usize) {
        let ss = self.slice_sym[slice as usize] as usize;
        let t = self.twist_conj[(ss & 15) * N_TWIST + twist as usize] as usize;
        (ss, t)
    }

    /// The pruning index from [`TwoPhaseTables::slice_class_twist`]'s values: the
    /// position conjugated by the slice's symmetry has the slice of its class
    /// representative, whose `fs_rep` row gives the FlipUDSlice class and a second
    /// symmetry. Only tables of some hundred kilobytes are read.
    #[inline(always)]
    pub(crate) fn p1_index_from(&self, flip: u16, slice: u16, ss: usize, t: usize) -> u64 {
        self.p1_index_sym_from(flip, slice, ss, t).0
    }

    /// [`TwoPhaseTables::p1_index_from`] and the second symmetry (the FlipUDSlice
    /// class's, applied after the slice's).
    #[inline(always)]
    pub(crate) fn p1_index_sym_from(
        &self,
        flip: u16,
        slice: u16,
        ss: usize,
        t: usize,
    ) -> (u64, usize) {
        let s = ss & 15;
        let f = self.flip_conj[s * N_FLIP + flip as usize]
            ^ self.slice_flip_conj[s * N_SLICE + slice as usize];
        let cs = self.fs_rep[(ss >> 4) * N_FLIP + f as usize];
        let s2 = (cs & 15) as usize;
        let t2 = self.twist_conj[s2 * N_TWIST + t];
        (u64::from(cs >> 4) * N_TWIST as u64 + u64::from(t2), s2)
    }

    /// Lower bound on the phase-1 distance from the small (UDSlice class, twist) table,
    /// which stays in cache, given [`TwoPhaseTables::slice_class_twist`]'s values. (A
    /// second bound from (UDSlice, flip), 507 kB unreduced, saved pruning-table reads but
    /// cost more in cache misses on the move tables it pushed out: `cubeswarm bench
    /// twophase --count 3000 --seed 7` 0.45-0.49 ms without it, 0.49-0.53 ms with.)
    #[inline(always)]
    pub(crate) fn p1_cheap(&self, ss: usize, t: usize) -> u8 {
        let a = (ss >> 4) * N_TWIST + t;
        nibble(&self.slice_twist, a as u64)
    }

    /// Index into `cs_prune` of a corner permutation's `cpsym` entry and a slice4
    /// permutation.
    #[inline(always)]
    pub(crate) fn cs_index(&self, cs: u32, s4: u8) -> usize {
        (cs >> 4) as usize * N_SLICE4
            + self.s4_conj[(cs & 15) as usize * N_SLICE4 + s4 as usize] as usize
    }

    /// Phase-2 pruning index of a corner permutation's `cpsym` entry and an edge8
    /// permutation.
    #[inline(always)]
    pub(crate) fn p2_index_sym(&self, cs: u32, e8: u16) -> u64 {
        let e = self.e8_conj[((cs & 15) as usize) * N_PERM8 + e8 as usize];
        u64::from(cs >> 4) * N_PERM8 as u64 + u64::from(e)
    }
}

impl std::fmt::Debug for TwoPhaseTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TwoPhaseTables")
            .field("p1", &self.p1)
            .field("p2", &self.p2)
            .field("load_time", &self.load_time)
            .finish_non_exhaustive()
    }
}

fn check_header(file: &TableFile, entries: u64, bits: u8) -> Result<(), Error> {
    let meta = &file.header().meta;
    if meta.entries != entries || meta.bits != bits {
        return Err(Error::BadTable {
            name: meta.name.clone(),
            reason: format!(
                "expected {entries} entries of {bits} bits, found {} of {}",
                meta.entries, meta.bits
            ),
        });
    }
    Ok(())
}

fn check_cumulative(file: &TableFile, golden: &[u64]) -> Result<(), Error> {
    let dist = &file.header().distribution;
    let mut sum = 0;
    for (d, &want) in golden.iter().enumerate() {
        sum += dist[d];
        if sum != want {
            return Err(Error::BadTable {
                name: file.header().meta.name.clone(),
                reason: format!(
                    "{sum} entries within depth {d}, the golden distribution says {want}"
                ),
            });
        }
    }
    Ok(())
}

fn decode_fsym(file: &TableFile) -> Result<Vec<u32>, Error> {
    let body = file.body();
    let fsym: Vec<u32> = body
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let bad = fsym.iter().position(|&v| (v >> 4) as usize >= N_FS_CLASSES);
    if fsym.len() != N_FLIPSLICE || bad.is_some() {
        return Err(Error::BadTable {
            name: FSYM_NAME.into(),
            reason: format!(
                "class index out of range at entry {}",
                bad.unwrap_or(fsym.len())
            ),
        });
    }
    Ok(fsym)
}

fn write_fsym(dir: &Path, sym: &SymCoord) -> Result<(), TableFileError> {
    let mut body = Vec::with_capacity(N_FLIPSLICE * 4);
    for raw in 0..N_FLIPSLICE as u32 {
        let v = sym.class_of(raw) << 4 | sym.ttrep(raw) as u32;
        body.extend_from_slice(&v.to_le_bytes());
    }
    let meta = TableMeta::new(FSYM_NAME, N_FLIPSLICE as u64, 32);
    write_table(&table_path(dir, FSYM_NAME), &meta, &body)?;
    Ok(())
}

fn write_packed4(dir: &Path, name: &str, table: &Packed4) -> Result<(), TableFileError> {
    let meta = TableMeta::for_packed4(name, table);
    write_table(&table_path(dir, name), &meta, table.as_bytes())?;
    Ok(())
}

/// A phase-2 pruning space: a sym-composite coordinate such as (corner-permutation class,
/// edge8 permutation) under the ten phase-2 moves only. The sym-composite coordinate of
/// `tables` supplies the indexing and the self-symmetric images; this wrapper restricts the
/// neighbours to phase-2 moves.
pub(crate) struct Phase2Space<A, B>(pub(crate) SymComposite<A, B>);

impl<A: Coord, B: Coord> PruneSpace for Phase2Space<A, B> {
    fn size(&self) -> u64 {
        self.0.size()
    }
    fn solved(&self) -> Vec<u64> {
        let mut v = Vec::new();
        self.0
            .for_each_equivalent(self.0.index(&Cube::SOLVED), |y| v.push(y));
        v
    }
    #[inline]
    fn for_each_neighbour<F: FnMut(u64)>(&self, x: u64, mut f: F) {
        for &m in &PHASE2_MOVES {
            self.0
                .for_each_equivalent(self.0.apply_move(x, Move::ALL[m as usize]), &mut f);
        }
    }
    #[inline]
    fn any_neighbour<P: FnMut(u64) -> bool>(&self, x: u64, mut pred: P) -> bool {
        // Self-symmetric images of a neighbour have its depth: plain neighbours suffice.
        PHASE2_MOVES
            .iter()
            .any(|&m| pred(self.0.apply_move(x, Move::ALL[m as usize])))
    }
}
#[cfg(test)]
mod tests;
