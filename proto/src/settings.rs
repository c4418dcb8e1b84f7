//! What is asked of each position, and its one validation.
//!
//! [`Settings::validate`] is the only check of settings in the system: the CLI, the
//! coordinator's client service and the executor call it at their boundary, and the
//! engines take the [`ValidSettings`] it returns, so they check nothing themselves.

use crate::method::Method;

/// The longest solution length that may be asked (no position needs more than 20; the
/// search's depth arrays and two-phase's budget are sized for this).
pub const MAX_LENGTH: u8 = 30;

/// The longest solution length when none is given (every position has a solution of at
/// most 20 moves).
pub const DEFAULT_MAX_LENGTH: u8 = 20;

/// The most solutions that may be asked of one position. A count asks the search to go on
/// until it has found that many (deeper and deeper for the optimal method, through ever
/// more phase-1 solutions for two-phase), so a count without a bound is a search without
/// an end; and a position's solutions are held until its record is written.
pub const MAX_SOLUTIONS: u32 = 10_000;

/// What is asked for each position (never how it runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Which solver.
    pub method: Method,
    /// Shortest length tried (optimal method).
    pub min_length: u8,
    /// Longest length accepted.
    pub max_length: u8,
    /// How many solutions: `Some(n)` = up to n, `None` = every optimal solution.
    pub max_solutions: Option<u32>,
    /// Budget of one position, in milliseconds of wall time from its start.
    pub time_limit_ms: Option<u64>,
    /// Budget of one position in phase-1 probes (two-phase method).
    pub probe_limit: Option<u64>,
    /// Two-phase only: after the first solution of at most `max_length` moves, keep
    /// searching for shorter ones until `time_limit_ms` runs out (or no shorter one
    /// exists), and report the shortest found (an "anytime" search).
    pub anytime: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            method: Method::Optimal,
            min_length: 0,
            max_length: DEFAULT_MAX_LENGTH,
            max_solutions: Some(1),
            time_limit_ms: None,
            probe_limit: None,
            anytime: false,
        }
    }
}

/// Why settings cannot be honoured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// `max_length` (or a subtree job's depth) beyond [`MAX_LENGTH`].
    #[error("max_length must be at most {MAX_LENGTH}, not {value}")]
    MaxLength {
        /// The length asked.
        value: u8,
    },
    /// The optimal method with `min_length > max_length`.
    #[error("min_length ({min}) is larger than max_length ({max})")]
    MinAboveMax {
        /// The shortest length asked.
        min: u8,
        /// The longest length asked.
        max: u8,
    },
    /// `max_solutions` of 0.
    #[error("max_solutions must be at least 1")]
    NoSolutions,
    /// `max_solutions` beyond [`MAX_SOLUTIONS`].
    #[error("max_solutions must be at most {MAX_SOLUTIONS}, not {value}")]
    TooManySolutions {
        /// The count asked.
        value: u32,
    },
    /// Every solution (`max_solutions` absent) asked of the two-phase method.
    #[error("the two-phase method needs a solution count, not every solution")]
    EverySolutionTwoPhase,
    /// An anytime search asked of the optimal method (whose every answer is the shortest).
    #[error("an anytime search is for the two-phase method (the optimal method's answers are already the shortest)")]
    AnytimeOptimal,
    /// An anytime search with no time limit (it would run until it proved optimality).
    #[error("an anytime search needs a time limit")]
    AnytimeWithoutTimeLimit,
}

impl Settings {
    /// Checks the settings once, at the boundary: lengths within [`MAX_LENGTH`],
    /// `min_length <= max_length` for the optimal method (two-phase does not read it), a
    /// solution count of 1 to [`MAX_SOLUTIONS`], a count (not "all") for two-phase, and an anytime
    /// search only for two-phase and with a time limit.
    pub fn validate(self) -> Result<ValidSettings, SettingsError> {
        if self.anytime {
            if self.method != Method::TwoPhase {
                return Err(SettingsError::AnytimeOptimal);
            }
            if self.time_limit_ms.is_none() {
                return Err(SettingsError::AnytimeWithoutTimeLimit);
            }
        }
        if self.max_length > MAX_LENGTH {
            return Err(SettingsError::MaxLength {
                value: self.max_length,
            });
        }
        if self.method == Method::Optimal && self.min_length > self.max_length {
            return Err(SettingsError::MinAboveMax {
                min: self.min_length,
                max: self.max_length,
            });
        }
        match (self.max_solutions, self.method) {
            (Some(0), _) => Err(SettingsError::NoSolutions),
            (Some(value), _) if value > MAX_SOLUTIONS => {
                Err(SettingsError::TooManySolutions { value })
            }
            (None, Method::TwoPhase) => Err(SettingsError::EverySolutionTwoPhase),
            _ => Ok(ValidSettings(self)),
        }
    }
}

/// [`Settings`] that passed [`Settings::validate`]: what the engines take. Read-only
/// (it derefs to the settings); the only way to make one is to validate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidSettings(Settings);

impl ValidSettings {
    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.0
    }

    /// The settings, to send or change (and validate again).
    pub fn into_inner(self) -> Settings {
        self.0
    }

    /// The solution count asked, `usize::MAX` for every optimal solution.
    pub fn solution_count(&self) -> usize {
        self.0
            .max_solutions
            .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX))
    }
}

impl std::ops::Deref for ValidSettings {
    type Target = Settings;
    fn deref(&self) -> &Settings {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut Settings)) -> Result<ValidSettings, SettingsError> {
        let mut s = Settings::default();
        f(&mut s);
        s.validate()
    }

    #[test]
    fn the_defaults_and_the_limits_pass() {
        assert!(with(|_| {}).is_ok());
        assert!(with(|s| s.max_length = MAX_LENGTH).is_ok());
        assert!(with(|s| s.max_solutions = None).is_ok());
        // Two-phase does not read min_length.
        assert!(with(|s| {
            s.method = Method::TwoPhase;
            s.min_length = 25;
        })
        .is_ok());
        assert_eq!(
            with(|s| s.max_solutions = Some(MAX_SOLUTIONS))
                .unwrap()
                .solution_count(),
            MAX_SOLUTIONS as usize
        );
        assert_eq!(
            with(|s| s.max_solutions = None).unwrap().solution_count(),
            usize::MAX
        );
        assert!(with(|s| {
            s.method = Method::TwoPhase;
            s.anytime = true;
            s.time_limit_ms = Some(10);
        })
        .is_ok());
    }

    #[test]
    fn each_fault_is_its_own_error_said_once() {
        let cases = [
            (
                with(|s| s.max_length = MAX_LENGTH + 1),
                SettingsError::MaxLength { value: 31 },
                "max_length must be at most 30, not 31",
            ),
            (
                with(|s| {
                    s.min_length = 9;
                    s.max_length = 8;
                }),
                SettingsError::MinAboveMax { min: 9, max: 8 },
                "min_length (9) is larger than max_length (8)",
            ),
            (
                with(|s| s.max_solutions = Some(0)),
                SettingsError::NoSolutions,
                "max_solutions must be at least 1",
            ),
            (
                with(|s| s.max_solutions = Some(MAX_SOLUTIONS + 1)),
                SettingsError::TooManySolutions { value: 10_001 },
                "max_solutions must be at most 10000, not 10001",
            ),
            (
                with(|s| {
                    s.method = Method::TwoPhase;
                    s.max_solutions = None;
                }),
                SettingsError::EverySolutionTwoPhase,
                "the two-phase method needs a solution count, not every solution",
            ),
            (
                with(|s| {
                    s.anytime = true;
                    s.time_limit_ms = Some(10);
                }),
                SettingsError::AnytimeOptimal,
                "an anytime search is for the two-phase method (the optimal method's answers are already the shortest)",
            ),
            (
                with(|s| {
                    s.method = Method::TwoPhase;
                    s.anytime = true;
                }),
                SettingsError::AnytimeWithoutTimeLimit,
                "an anytime search needs a time limit",
            ),
        ];
        for (got, want, text) in cases {
            assert_eq!(got, Err(want));
            assert_eq!(want.to_string(), text);
        }
    }
}
