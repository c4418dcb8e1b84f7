//! What every front end does, once: the command line (`src/`) and the Python package
//! (`python/src/`) both call this library and differ only in how they take arguments and
//! show results.
#![warn(missing_docs)]

pub mod cluster;
pub mod output;
