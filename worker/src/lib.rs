//! The search engines, their executor, and the worker process.
//!
//! # Layout
//! - [`h48`]: the H48 optimal solver (IDA* over H48 pruning tables), built on the search
//!   primitive `search(position, prefix, depth, max_solutions, stop)`; its tables, their
//!   builds and checkpoints.
//! - [`twophase`]: Kociemba's two-phase solver for fast near-optimal solutions, and its
//!   tables.
//! - [`Engine`] (`engine`): an opened solver of either method, named by its catalog table.
//! - [`catalog`]: building and opening the tables of [`proto::catalog`] (every solver
//!   table a job can name, its files, sizes and method) as [`Engine`]s; the check of their
//!   files before a search.
//! - [`runner`]: [`Engines`] (the opened solvers by table name), [`run_job`] (one
//!   [`proto::Job`] on the calling thread: the entry point of both engines for a job) and
//!   [`JobRunner`] (a pool of threads running submitted jobs, cancellable by id, a free
//!   thread helping a running subtree job).
//! - [`hollow`]: an engine whose search is told, not done (a bench's hollow workers:
//!   the real worker session at scale, its search taken from a recorded trace).
//! - [`scramble`]: random-state scrambles (the WCA's filter, reproducible by seed), each
//!   a two-phase solution of its state's inverse.
//! - [`StopToken`] (`stop`): the cancel flag and deadline both searches poll.
//! - [`Error`] (`error`): the one error type (tables read or built, settings,
//!   verification, the executor's threads).
//! - [`failpoint`]: the test seam that makes the executor panic on one position
//!   (`CUBESWARM_FAILPOINT`).
//! - [`remote`]: the worker process: its tables checked (or fetched) once, a gRPC session
//!   with the coordinator running jobs on an [`JobRunner`], reconnection, draining on
//!   shutdown, and the health probes.
//! - `direct` (private): large files written around the page cache (`O_DIRECT`): a
//!   fetched table's body and a build's checkpoint.
//!
//! Both engines answer one position with a [`proto::PositionResult`] (its `line` and
//! `micros` set by the executor) and take [`proto::ValidSettings`]: settings are checked
//! once, at the boundary, by [`proto::Settings::validate`].
#![warn(missing_docs)]

pub mod catalog;
mod direct;
mod engine;
mod error;
pub mod failpoint;
pub mod h48;
pub mod hollow;
#[cfg(feature = "remote")]
pub mod remote;
pub mod runner;
pub mod scramble;
mod stop;
pub mod twophase;

pub use engine::Engine;
pub use error::Error;
pub use h48::H48Solver;
pub use runner::{
    run_job, run_job_counted, run_job_split, run_job_with, Engines, JobRunner, PieceCursor,
    ResultSink, RunnerOptions, ShareEvent, ShareHook,
};
pub use scramble::{Scramble, ScrambleError, Scrambler};
pub use stop::StopToken;
pub use twophase::TwoPhaseSolver;

/// Where the large pruning tables are read from during a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableMemory {
    /// A private copy in transparent huge pages (the table's size per process). Random
    /// lookups then rarely miss the TLB, which makes the lookup-bound searches faster
    /// (measured: two-phase 10–30 %, H48 see docs/performance.md) and their speed
    /// steadier; the default.
    #[default]
    HugePages,
    /// Straight from the read-only memory maps, shared by every process on the machine
    /// through the page cache (for many solver processes on one machine).
    Mapped,
}
