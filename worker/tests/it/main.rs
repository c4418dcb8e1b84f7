//! The worker crate's integration tests, in one binary (one link of the dependency graph,
//! not one per topic). The cached test tables are [`h48_common`]'s.

mod h48_common;

mod fingerprint;
mod h48_search;
mod h48_tables;
mod remote;
mod runner;
mod scramble;
mod twophase_p1m;
mod twophase_solve;
mod twophase_tables;
