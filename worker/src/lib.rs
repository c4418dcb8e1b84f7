//! The search engines.
//!
//! # Layout
//! - [`h48`]: the H48 optimal solver (IDA* over H48 pruning tables), built on the search
//!   primitive `search(position, prefix, depth, max_solutions, cancel)`.
//! - [`twophase`]: Kociemba's two-phase solver for fast near-optimal solutions.
#![warn(missing_docs)]

pub mod h48;
pub mod twophase;
