//! The workspace's end-to-end tests, in one binary: every integration-test binary links the
//! whole dependency graph again (tonic, tokio, rayon, …), so the topics are modules of one
//! test crate, not a binary each. The shared harness is [`common`]; the test tables are
//! built once per run into `target/test-tables`.

mod common;

mod cli;
mod cluster;
mod doc_paths;
mod golden;
mod hollow;
mod hostile;
mod lifecycle;
mod limits;
mod long_lines;
mod rogue;
mod scramble;
mod solve_to;
mod split;
mod status;
mod symmetry;
