//! The coordinator: scramble sets and hard scrambles cut into jobs, scheduled on
//! executors, gathered back into records in input order.
//!
//! # Layout
//! - [`scheduler`]: [`Scheduler`], the deterministic state machine: requests, jobs,
//!   leases, dispatch, results, in-order records, as [`Action`]s for a driver; with its
//!   helpers under it ([`scheduler::deepen`], [`scheduler::cut`], the executor pool and
//!   the lines in flight).
//! - [`executor`]: the [`Executor`] trait (implemented by the in-process executor, the
//!   cluster's remote workers, the benches' and the simulation's fakes) and the
//!   [`ExecutorEvent`]s executors report.
//! - [`input`]: input lines (skipped, position, not UTF-8) and the windowed reader.
//! - [`driver`]: the [`Driver`], the one loop of the coordinator: scheduler, executors,
//!   requests and clock, fed with [`Event`]s; leases enforced; requests end with their
//!   clients.
//! - [`run`](mod@run): the embedded default, one request over in-process executors
//!   through the driver.
//!
//! This crate is transport-agnostic: it knows nothing of thread pools, table files or the
//! network. Around it, each in a crate of its own under `coordinator/`, with dependencies
//! pointing one way (each uses this crate, none another of them):
//! - `server/` (`cubeswarm-server`): the same driver behind gRPC: remote workers,
//!   clients, table fetches, health and Prometheus metrics.
//! - `frontend/` (`cubeswarm-frontend`): what a front end does (settings, the table to
//!   use, the embedded executors, a request run embedded or on a cluster, records and
//!   their writers, the status query), called by the command line and the Python package.
//! - `bench/` (`cubeswarm-benchtools`): the driver at scale with simulated executors, and
//!   the recorded search of one position replayed under another splitting.
#![warn(missing_docs)]

pub mod driver;
pub mod executor;
pub mod input;
pub mod run;
pub mod scheduler;

pub use driver::{Driver, DriverConfig, Event};
pub use executor::{Executor, ExecutorEvent, ExecutorId, LiveJob};
pub use run::{run, run_interruptible, Executors, Interrupt, RunError, RunStats, Source};
pub use scheduler::{
    Action, Config, Counters, Deepening, Progress, RejectReason, Rejection, RequestId, Scheduler,
    Verify, VerifyMode,
};
