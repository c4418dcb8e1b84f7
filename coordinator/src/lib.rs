//! The coordinator: scramble sets and hard scrambles cut into jobs, scheduled on
//! executors, gathered back into records in input order.
//!
//! # Layout
//! - [`scheduler`]: [`Scheduler`], the deterministic state machine: requests, jobs,
//!   leases, dispatch, results, in-order records, as [`Action`]s for a driver.
//! - [`deepen`]: one optimal position spread over move-prefix subtree jobs, depth by
//!   depth (lower bound first, ranking by the previous depth's node counts, early start).
//! - [`executor`]: the [`Executor`] trait that the in-process executor and the cluster's
//!   remote workers implement, and their [`ExecutorEvent`]s.
//! - [`input`]: input lines (skipped, position, not UTF-8) and the windowed reader.
//! - [`run`](mod@run): the driver loop for one request over a set of executors.
//! - [`server`]: the same scheduler behind gRPC: remote workers, clients, table fetches,
//!   health and Prometheus metrics.
//! - [`client`]: the client of a cluster (journal, reconnection, resume, the output
//!   formats), as a library any front end can drive.
//! - [`simbench`]: the driver at scale with simulated executors (`cubeswarm bench
//!   coordinator`).
//!
//! Everything but [`server`] is transport-agnostic: it knows nothing of thread pools,
//! table files or the network.
#![warn(missing_docs)]

pub mod client;
pub mod deepen;
pub mod executor;
mod inflight;
pub mod input;
mod pool;
pub mod run;
pub mod scheduler;
pub mod server;
pub mod simbench;

pub use executor::{Executor, ExecutorEvent, ExecutorId};
pub use run::{run, Event, Executors, RunError, RunStats, Source};
pub use scheduler::{Action, Config, Counters, Deepening, Progress, RequestId, Scheduler};
