//! Which solver: the one [`Method`] of the CLI, the wire and the engines.

/// Which solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Shortest solutions (H48 tables + IDA*), proved optimal.
    Optimal,
    /// Kociemba's two-phase algorithm: fast, at most `max_length` moves.
    TwoPhase,
}

impl Method {
    /// Every method, in the order a help text lists them.
    pub const ALL: [Method; 2] = [Method::Optimal, Method::TwoPhase];

    /// The name users write (`optimal`, `twophase`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Optimal => "optimal",
            Method::TwoPhase => "twophase",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A method name that is none of [`Method::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown method {given:?} (known: optimal, twophase)")]
pub struct UnknownMethod {
    /// The name given.
    pub given: String,
}

impl std::str::FromStr for Method {
    type Err = UnknownMethod;
    fn from_str(s: &str) -> Result<Method, UnknownMethod> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMethod {
                given: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_refused() {
        for m in Method::ALL {
            assert_eq!(m.to_string().parse::<Method>(), Ok(m));
        }
        let e = "two-phase".parse::<Method>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown method \"two-phase\" (known: optimal, twophase)"
        );
    }
}
