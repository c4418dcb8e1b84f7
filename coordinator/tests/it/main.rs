//! The coordinator's integration tests, in one binary (one link of the dependency graph,
//! not one per topic): the driver, the scheduler's hooks, and the seeded fault simulation,
//! all over the fake executors of [`fake`].

mod fake;

mod driver;
mod hooks;
mod liars;
mod sim;
