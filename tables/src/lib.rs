//! The cube and its numbers.
//!
//! # Layout
//! - [`cube`]: the cubie-level cube (permutation + orientation), composition, inverse,
//!   legality checks.
//! - [`moves`]: the 18 face moves of the half-turn metric.
//! - [`notation`]: reading scrambles (cubing.js notation) and move lists, writing moves.
//! - [`canonical`]: the canonical-move rule shared by every search and the splitter.
//! - [`position`]: [`Position`], a checked cube, and parsing text into one.
//! - [`symmetry`]: the 48 symmetries (and the 16 that keep the UD axis), conjugation.
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
pub use position::{ParseError, Position};
pub use random::SplitMix64;
pub use symmetry::{symmetries, Symmetries, NSYM, NSYM_UD};
pub mod bfs;
pub mod coord;
pub mod facelet;
pub mod huge;
pub mod packed;
pub mod progress;
pub mod tablefile;
