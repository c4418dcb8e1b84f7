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
//! - [`server`]: the same scheduler behind gRPC: remote workers, clients, table fetches,
//!   health and Prometheus metrics.
//! - [`client`]: the client of a cluster (journal, reconnection, resume, the output
//!   formats), as a library any front end can drive.
//! - [`simbench`]: the driver at scale with simulated executors (`cubeswarm bench
//!   coordinator`).
//! - [`trace`]: the recorded work of one optimal search (`cubeswarm solve --trace`);
//!   [`splitsim`]: its replay through the real scheduler in simulated time (`cubeswarm
//!   bench split`).
//!
//! Everything but [`server`] and [`client`] is transport-agnostic: it knows nothing of
//! thread pools, table files or the network.
#![warn(missing_docs)]

pub mod client;
pub mod driver;
pub mod executor;
pub mod input;
pub mod run;
pub mod scheduler;
pub mod server;
pub mod simbench;
pub mod splitsim;
pub mod trace;

pub use driver::{Driver, DriverConfig, Event};
pub use executor::{Executor, ExecutorEvent, ExecutorId, LiveJob};
pub use run::{run, Executors, RunError, RunStats, Source};
pub use scheduler::{
    Action, Config, Counters, Deepening, Progress, RejectReason, Rejection, RequestId, Scheduler,
};
