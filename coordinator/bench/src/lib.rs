//! The coordinator's bench tooling: what `cubeswarm bench coordinator` and `cubeswarm
//! bench split` run, and what `cubeswarm solve --trace` records.
//!
//! # Layout
//! - [`simbench`]: the driver at scale with simulated executors (`cubeswarm bench
//!   coordinator`).
//! - [`hollow`]: the search of a hollow worker (`cubeswarm bench hollow-worker`): a
//!   trace's, charged as the replay charges it.
//! - [`trace`]: the recorded work of one optimal search (`cubeswarm solve --trace`).
//! - [`refine`]: what `cubeswarm bench refine-trace` searches to add the 6- and 7-move
//!   counts of a trace's heavy 5-move prefixes, and how it records them.
//! - [`splitsim`]: a trace replayed through the real scheduler in simulated time under
//!   another splitting (`cubeswarm bench split`).
#![warn(missing_docs)]

pub mod hollow;
pub mod refine;
pub mod simbench;
pub mod splitsim;
pub mod trace;
