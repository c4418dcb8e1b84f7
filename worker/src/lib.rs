//! The search engines.
//!
//! # Layout
//! - [`h48`]: the H48 optimal solver (IDA* over H48 pruning tables), built on the search
//!   primitive `search(position, prefix, depth, max_solutions, cancel)`.
//! - [`twophase`]: Kociemba's two-phase solver for fast near-optimal solutions.
#![warn(missing_docs)]

pub mod h48;
pub mod twophase;

/// Where the large pruning tables are read from during a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableMemory {
    /// A private copy in transparent huge pages (the table's size per process). Random
    /// lookups then rarely miss the TLB, which makes the lookup-bound searches faster
    /// (measured: two-phase 10–30 %, H48 see the README) and their speed steadier; the
    /// default.
    #[default]
    HugePages,
    /// Straight from the read-only memory maps, shared by every process on the machine
    /// through the page cache (for many solver processes on one machine).
    Mapped,
}
