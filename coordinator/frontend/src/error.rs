//! Why a front end's call failed ([`Error`], by what the user has to fix), and the one
//! way an error chain is said ([`chain`]).

use crate::cluster::ClientError;

/// Why a call failed. Each variant is a class of fault the user fixes differently; the
/// Python package raises one exception class per variant.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument is not acceptable (in the front end's words, see
    /// [`Dialect`](crate::Dialect)).
    #[error("{0}")]
    Settings(String),
    /// The text is not a position.
    #[error("position {text:?}")]
    Position {
        /// What the user gave.
        text: String,
        /// Why it is not a position.
        #[source]
        source: tables::ParseError,
    },
    /// A table cannot be built, checked or opened (an unknown table name is a
    /// [`Error::Settings`]).
    #[error("{what}")]
    Table {
        /// Which table and what was being done with it.
        what: String,
        /// The fault.
        #[source]
        source: worker::Error,
    },
    /// The in-process run failed.
    #[error(transparent)]
    Run(#[from] coordinator::RunError),
    /// The cluster refused the request, or could not be reached.
    #[error(transparent)]
    Cluster(#[from] ClientError),
}

impl Error {
    /// A table fault: `what` was being done when `source` happened.
    pub fn table(what: impl Into<String>, source: worker::Error) -> Error {
        Error::Table {
            what: what.into(),
            source,
        }
    }
}

/// An error and its causes on one line, outermost first, separated by ": "; a cause
/// whose message the line already holds is not repeated.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_says_each_cause_once() {
        let parse = tables::Position::parse("R U X").unwrap_err();
        let e = Error::Position {
            text: "R U X".into(),
            source: parse.clone(),
        };
        assert_eq!(chain(&e), format!("position \"R U X\": {parse}"));
        // A message that already holds its cause's text does not repeat it.
        #[derive(Debug, thiserror::Error)]
        #[error("reading it: {0}")]
        struct Outer(#[source] tables::ParseError);
        assert_eq!(chain(&Outer(parse.clone())), format!("reading it: {parse}"));
    }
}
