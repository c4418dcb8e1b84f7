//! A fault-injection seam for tests: make the executor panic on one position.
//!
//! [`RunnerOptions::before_position`](crate::RunnerOptions) is called before each
//! position of a batch job and before each subtree job; a test sets it to panic on a
//! position of its choosing. Real processes read the same seam from the environment
//! variable [`FAILPOINT_ENV`], set only by tests:
//!
//! ```text
//! CUBESWARM_FAILPOINT=panic-on-input:<scramble or facelets>
//! CUBESWARM_FAILPOINT=lie-empty
//! ```
//!
//! The first makes `cubeswarm solve` (embedded default) and `cubeswarm worker` panic
//! inside the search of every job of that position, to check that such a panic becomes
//! an error record for its line and nothing else. The second makes `cubeswarm worker` a
//! liar: every subtree job it answers says "searched whole, no solution, one node" (the
//! coordinator's checks of claims must catch it: see [`lie`]). Unset or empty: no seam.

use std::sync::Arc;
use tables::{ParseError, Position};

/// The environment variable of the seam (see the module doc).
pub const FAILPOINT_ENV: &str = "CUBESWARM_FAILPOINT";

/// The prefix of the failpoint that panics on a position.
const PANIC_ON_INPUT: &str = "panic-on-input:";

/// The failpoint that makes a worker lie about its subtree jobs.
pub const LIE_EMPTY: &str = "lie-empty";

/// Whether [`FAILPOINT_ENV`] makes this worker a liar ([`LIE_EMPTY`]).
pub fn lies() -> bool {
    std::env::var(FAILPOINT_ENV).is_ok_and(|v| v == LIE_EMPTY)
}

/// What a liar sends instead of `r`: every subtree of a subtree job searched whole,
/// with no solution and one node. (Whole searches are answered truly.)
pub fn lie(r: &proto::JobResult) -> proto::JobResult {
    let mut r = r.clone();
    if let Ok(proto::JobOutput::Subtrees(rs)) = &mut r.output {
        for s in rs {
            s.solutions.clear();
            s.nodes = 1;
            s.stop = proto::Stop::Exhausted;
        }
    }
    r
}

/// Called with each position before the executor searches it.
pub type PositionHook = Arc<dyn Fn(&Position) + Send + Sync>;

/// Why [`FAILPOINT_ENV`] cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FailpointError {
    /// The value is neither `panic-on-input:<position>` nor `lie-empty`.
    #[error(
        "{FAILPOINT_ENV}={0:?}: the failpoints are {PANIC_ON_INPUT}<position> and {LIE_EMPTY}"
    )]
    Unknown(String),
    /// The position after the prefix does not parse.
    #[error("{FAILPOINT_ENV}: position {text:?}: {error}")]
    Position {
        /// The text after the prefix.
        text: String,
        /// Why it does not parse.
        error: ParseError,
    },
}

/// A hook that panics when it sees `target`.
pub fn panic_on(target: Position) -> PositionHook {
    Arc::new(move |p: &Position| {
        if *p == target {
            panic!("failpoint: panic on this position");
        }
    })
}

/// The hook [`FAILPOINT_ENV`] asks for, if any.
pub fn from_env() -> Result<Option<PositionHook>, FailpointError> {
    match std::env::var(FAILPOINT_ENV) {
        // A liar searches as asked: its answers are changed as they leave (`lie`).
        Ok(v) if v == LIE_EMPTY => Ok(None),
        Ok(v) if !v.is_empty() => parse(&v).map(Some),
        _ => Ok(None),
    }
}

/// The hook a failpoint value asks for.
fn parse(value: &str) -> Result<PositionHook, FailpointError> {
    let text = value
        .strip_prefix(PANIC_ON_INPUT)
        .ok_or_else(|| FailpointError::Unknown(value.to_string()))?;
    let target = Position::parse(text).map_err(|error| FailpointError::Position {
        text: text.to_string(),
        error,
    })?;
    Ok(panic_on(target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_or_say_why_not() {
        let hook = parse("panic-on-input:R U").unwrap();
        hook(&Position::parse("R").unwrap());
        let p = Position::parse("R U").unwrap();
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&p))).is_err());
        assert!(matches!(parse("crash"), Err(FailpointError::Unknown(_))));
        assert!(matches!(
            parse("panic-on-input:Q"),
            Err(FailpointError::Position { .. })
        ));
    }
}
