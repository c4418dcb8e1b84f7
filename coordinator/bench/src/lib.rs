//! The coordinator's bench tooling: what `cubeswarm bench coordinator` and `cubeswarm
//! bench split` run, and what `cubeswarm solve --trace` records.
//!
//! # Layout
//! - [`simbench`]: the driver at scale with simulated executors (`cubeswarm bench
//!   coordinator`).
//! - [`trace`]: the recorded work of one optimal search (`cubeswarm solve --trace`).
//! - [`splitsim`]: a trace replayed through the real scheduler in simulated time under
//!   another splitting (`cubeswarm bench split`).
#![warn(missing_docs)]

pub mod simbench;
pub mod splitsim;
pub mod trace;
