//! The cube and its numbers.
//!
//! # Layout
//! The cube:
//! - [`cube`]: the cubie-level cube (permutation + orientation), composition (SIMD, with a
//!   scalar reference), inverse, legality checks.
//! - [`moves`]: the 18 face moves of the half-turn metric and their cubies.
//! - [`canonical`]: the canonical-move rule shared by every search and the splitter.
//! - [`symmetry`]: the 48 symmetries (and the 16 that keep the UD axis), conjugation, a
//!   position's own symmetry, and the move prefixes a search of a symmetric position keeps.
//! - [`position`]: [`Position`], a checked cube, and parsing text into one.
//! - [`random`]: [`SplitMix64`], a small seeded generator, and uniformly random cubes.
//!
//! Text:
//! - [`notation`]: reading scrambles (cubing.js notation) and move lists, writing moves.
//! - [`facelet`]: Kociemba's 54-character facelet strings, written and read.
//!
//! Tables:
//! - [`coord`]: coordinates (basic, composite, symmetric, sym-composite) and their move
//!   and transformation tables.
//! - [`packed`]: packed 4-bit and 2-bit pruning-table storage over owned or mapped bytes.
//! - [`bfs`]: the one generic multi-threaded breadth-first pruning-table generator.
//! - [`tablefile`]: self-describing table files: header, atomic write, checked open,
//!   verification (remembered per file by a stamp), paths.
//! - [`huge`]: read-only arrays in transparent huge pages, for tables searched at random.
//! - [`progress`]: the [`progress::Progress`] reporter long table work takes (the library
//!   draws nothing).
#![warn(missing_docs)]

pub mod canonical;
pub mod cube;
pub mod moves;
pub mod notation;
pub mod position;
pub mod random;
pub mod symmetry;

pub use cube::{Cube, CubieError};
pub use moves::{Face, Move};
pub use notation::{format_moves, parse_alg, parse_moves, NotationError};
pub use position::{ParseError, Position, MAX_TEXT_BYTES};
pub use random::SplitMix64;
pub use symmetry::{symmetries, Symmetries, NSYM, NSYM_UD};
pub mod bfs;
pub mod coord;
pub mod facelet;
pub mod huge;
pub mod packed;
pub mod progress;
pub mod tablefile;
