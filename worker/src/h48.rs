//! The H48 optimal solver (seed 001): IDA* over the H48 pruning tables.
//!
//! # Layout
//! - [`coords`]: the H48 coordinates computed fast (SIMD) for the inner loop.
//! - [`cocsep`]: the corner table (class, transformation to representative, corner
//!   distance in one word per raw corner value).
//! - [`eoesep`]: the fallback table of the 2-bit tables (edge orientation × edge
//!   separation, reduced by the 8 symmetries that keep every axis).
//! - [`tables`](mod@tables): table names and sizes, building (`h48h0k4` with the generic
//!   generator, `h48hNk2` with [`gen_k2`]) and opening.
//! - [`gen_k2`]: the generation of the 2-bit tables h48hNk2 and their bases.
//! - [`checkpoint`]: a k2 build's checkpoints, from which a killed build resumes.
//! - [`search`](mod@search): the search primitive, `search(position, prefix, depth,
//!   max_solutions, stop)`, with every refinement of the seed (inverse estimate,
//!   tight bounds, NISS-style switching with premoves, lookup reuse, prefetching).
//! - `solve` (private): iterative deepening over the primitive for one position on the
//!   calling thread ([`H48Solver::solve`]).
//! - [`bench`](mod@bench): the `bench optimal` measurement.
//!
//! [`H48Solver`] holds the mapped tables behind an `Arc`: clone it freely and solve many
//! positions from many threads against one copy of the tables.

pub mod bench;
pub mod checkpoint;
pub mod cocsep;
pub mod coords;
pub mod eoesep;
pub mod gen_k2;
pub mod search;
mod solve;
pub mod tables;

pub use self::tables::{build_table, build_table_with_base, TableKind};

use self::cocsep::Cocsep;
use self::coords::Coords;
use self::eoesep::Eoesep;
use self::search::{Found, K2With, Pruner, H0};
use crate::{Error, StopToken, TableMemory};
use ::tables::packed::{Packed2, Packed4};
use ::tables::{Cube, Move, Position};
use proto::{PositionResult, Stop, ValidSettings};
use std::path::Path;
use std::sync::Arc;

/// What one call of the search primitive found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOutcome {
    /// Solutions of exactly the asked depth beginning with the prefix (each verified).
    pub solutions: Vec<Vec<Move>>,
    /// Positions generated.
    pub nodes: u64,
    /// Main-table lookups.
    pub lookups: u64,
    /// [`Stop::Exhausted`] when the whole subtree was searched, [`Stop::Completed`] when
    /// `max_solutions` were found first, [`Stop::Cancelled`] or [`Stop::TimeLimit`] when
    /// the stop token said so.
    pub stop: Stop,
    /// Solutions dropped because they failed verification: always 0 unless there is a
    /// bug (then [`H48Solver::solve`] reports [`Error::Verification`]).
    pub invalid: u64,
}

impl SearchOutcome {
    /// Whether the whole subtree was searched.
    pub fn exhausted(&self) -> bool {
        self.stop == Stop::Exhausted
    }
}

impl From<Found> for SearchOutcome {
    fn from(f: Found) -> Self {
        SearchOutcome {
            solutions: f.solutions,
            nodes: f.nodes,
            lookups: f.lookups,
            stop: f.stop,
            invalid: f.invalid,
        }
    }
}

/// The tables of one solver, by main-table width.
enum Inner {
    /// A 4-bit main table.
    K4(Pruner<Packed4>),
    /// A 2-bit main table.
    K2(Pruner<Packed2>),
    /// A 2-bit main table with h48h0k4 as its fallback.
    K2H0(Pruner<K2With<H0>>),
    /// A 2-bit main table with eoesep as its fallback.
    K2E(Pruner<K2With<Eoesep>>),
}

macro_rules! dispatch {
    ($inner:expr, $p:ident => $e:expr) => {
        match $inner {
            Inner::K4($p) => $e,
            Inner::K2($p) => $e,
            Inner::K2H0($p) => $e,
            Inner::K2E($p) => $e,
        }
    };
}

/// `t`, or its private huge-page copy when `huge`.
fn in_memory(t: Packed4, huge: bool) -> Packed4 {
    if huge {
        t.to_huge_pages()
    } else {
        t
    }
}

/// An H48 solver over one mapped table: `Send + Sync`, cheap to clone and share.
#[derive(Clone)]
pub struct H48Solver {
    /// The tables (shared by every clone).
    inner: Arc<Inner>,
    /// The main table's name.
    name: Arc<str>,
}

impl std::fmt::Debug for H48Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H48Solver")
            .field("table", &self.name)
            .finish()
    }
}

impl H48Solver {
    /// Opens `cocsep` and the main table `table` (for example `h48h3k2`) from `dir`,
    /// checking both headers. A 2-bit table's entries "at most the base" fall back on
    /// `eoesep` when `dir` has it ([`eoesep`]; [`build_table`] always builds it), else,
    /// for h48hNk2 with N >= 1, on h48h0k4 when `dir` has it, else on the corner bound
    /// alone.
    pub fn open(dir: &Path, table: &str) -> Result<Self, Error> {
        H48Solver::open_with(dir, table, TableMemory::default())
    }

    /// [`H48Solver::open`], reading the main table and its fallback as `memory`
    /// says: from private huge-page copies (the default) or straight from the maps.
    pub fn open_with(dir: &Path, table: &str, memory: TableMemory) -> Result<Self, Error> {
        let huge = memory == TableMemory::HugePages;
        let kind = TableKind::parse(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
        let TableKind::H48 { eo_bits, bits } = kind else {
            return Err(Error::UnknownTable(table.into()));
        };
        let cocsep = Cocsep::open(dir)?;
        let coords = Coords::new();
        let inner = if bits == 4 {
            Inner::K4(Pruner {
                coords,
                cocsep,
                table: in_memory(self::tables::open_k4(dir, table)?, huge),
                eo_bits: eo_bits.into(),
            })
        } else {
            let k2 = self::tables::open_k2(dir, table)?;
            let k2 = if huge { k2.to_huge_pages() } else { k2 };
            let present = |n: &str| ::tables::tablefile::table_path(dir, n).exists();
            let eo_bits = eo_bits.into();
            if present(eoesep::NAME) {
                Inner::K2E(Pruner {
                    coords,
                    cocsep,
                    table: K2With {
                        k2,
                        fallback: Eoesep::open(dir)?.in_memory(huge),
                    },
                    eo_bits,
                })
            } else if eo_bits > 0 && present("h48h0k4") {
                Inner::K2H0(Pruner {
                    coords,
                    cocsep,
                    table: K2With {
                        k2,
                        fallback: H0 {
                            table: in_memory(self::tables::open_k4(dir, "h48h0k4")?, huge),
                            shift: eo_bits,
                        },
                    },
                    eo_bits,
                })
            } else {
                Inner::K2(Pruner {
                    coords,
                    cocsep,
                    table: k2,
                    eo_bits,
                })
            }
        };
        Ok(H48Solver {
            inner: Arc::new(inner),
            name: table.into(),
        })
    }

    /// The main table's name.
    pub fn table_name(&self) -> &str {
        &self.name
    }

    /// The search primitive: up to `max_solutions` solutions of exactly `depth` moves
    /// that begin with `prefix` (canonical sequences only). `cube` must be legal
    /// (see [`Cube::check`]); `stop` is polled every few thousand nodes.
    pub fn search(
        &self,
        cube: &Cube,
        prefix: &[Move],
        depth: u8,
        max_solutions: usize,
        stop: &StopToken,
    ) -> SearchOutcome {
        dispatch!(&*self.inner, p => search::search(p, cube, prefix, depth, max_solutions, stop).into())
    }

    /// Runs many calls of the primitive at one `depth`, up to `lanes` of them interleaved
    /// on this thread (which hides memory latency): `next` hands out the tasks as
    /// `(id, prefix, max_solutions)` until it returns `None`, and `done` receives each
    /// task's outcome with its id as soon as that task is finished. `admit` is asked as
    /// each task starts (in the order handed out); after a no, no later task starts.
    #[allow(clippy::too_many_arguments)]
    pub fn search_lanes<'t>(
        &self,
        cube: &Cube,
        depth: u8,
        lanes: usize,
        stop: &StopToken,
        next: &mut dyn FnMut() -> Option<(usize, &'t [Move], usize)>,
        admit: &mut dyn FnMut(usize) -> bool,
        done: &mut dyn FnMut(usize, SearchOutcome),
    ) {
        let done = &mut |id, f: Found| done(id, f.into());
        dispatch!(&*self.inner, p => search::search_lanes(p, cube, depth, lanes, stop, next, admit, done))
    }

    /// [`H48Solver::search_lanes`], each task with its [`search::Gate`] where it is split
    /// where it runs (see [`search::search_lanes_gated`]).
    #[allow(clippy::too_many_arguments)]
    pub fn search_lanes_gated<'t>(
        &self,
        cube: &Cube,
        depth: u8,
        lanes: usize,
        stop: &StopToken,
        next: &mut dyn FnMut() -> Option<search::GatedTask<'t>>,
        admit: &mut dyn FnMut(usize) -> bool,
        done: &mut dyn FnMut(usize, SearchOutcome),
    ) {
        let done = &mut |id, f: Found| done(id, f.into());
        dispatch!(&*self.inner, p => search::search_lanes_gated(p, cube, depth, lanes, stop, next, admit, done))
    }

    /// Solves `position` on the calling thread as `settings` ask (`method`, `probe_limit`
    /// and `time_limit_ms` are not read: the deadline is `stop`'s): iterative deepening
    /// from the larger of the lower bound and `min_length` up to `max_length`, each depth
    /// searched whole by the primitive. The solutions are those of the first length that
    /// has any (up to `max_solutions`, all of them for `None`), sorted and verified.
    ///
    /// `depth_exhausted` is the longest length proved to have no solution, counting from
    /// the first length tried (lengths below the lower bound are proved by the bound
    /// itself); `optimal` holds when `min_length` is at most the lower bound. The settings
    /// were validated ([`proto::Settings::validate`]). Errors: [`Error::Verification`] (a
    /// bug) if a solution failed verification.
    pub fn solve(
        &self,
        position: &Position,
        settings: &ValidSettings,
        stop: &StopToken,
    ) -> Result<PositionResult, Error> {
        solve::solve(self, position, settings, stop)
    }

    /// A lower bound on the distance of `cube`: the larger of its and its inverse's
    /// estimates. `cube` must be legal.
    pub fn lower_bound(&self, cube: &Cube) -> u8 {
        let inv = cube.inverse();
        dispatch!(&*self.inner, p => p.estimate(cube).max(p.estimate(&inv)))
    }

    /// The main-table index of `cube` (for tests and tools).
    pub fn table_index(&self, cube: &Cube) -> u64 {
        dispatch!(&*self.inner, p => p.table_index(cube))
    }
}
