//! What a user asks of a solve ([`Asked`]), checked into [`Settings`] with every fault said
//! in the front end's words, before any table is opened or any connection made.

use crate::{Dialect, Error};
use proto::{Method, Settings, SettingsError};
use std::time::Duration;

/// What a solve is asked, as a front end takes it from its user.
#[derive(Clone, Debug)]
pub struct Asked {
    /// The solver.
    pub method: Method,
    /// The shortest solution length to look for.
    pub min_length: u32,
    /// The longest solution length accepted; `None`: [`proto::DEFAULT_MAX_LENGTH`].
    pub max_length: Option<u32>,
    /// Solutions per position; `None`: every optimal solution.
    pub solutions: Option<u32>,
    /// The per-position time limit, in seconds.
    pub time_limit: Option<f64>,
    /// Two-phase: keep shortening until the time limit.
    pub anytime: bool,
}

impl Default for Asked {
    /// One optimal solution of at most the default length, no time limit.
    fn default() -> Self {
        Asked {
            method: Method::Optimal,
            min_length: 0,
            max_length: None,
            solutions: Some(1),
            time_limit: None,
            anytime: false,
        }
    }
}

impl Asked {
    /// The checked settings.
    pub fn settings(&self, d: &Dialect) -> Result<Settings, Error> {
        if let Some(t) = self.time_limit {
            if !(t.is_finite() && t > 0.0) {
                return Err(bad(format!(
                    "{} must be a positive number of seconds",
                    d.time_limit
                )));
            }
        }
        let length = |v: u32, name: &str| {
            u8::try_from(v)
                .map_err(|_| bad(format!("{name} must be at most {}", proto::MAX_LENGTH)))
        };
        let settings = Settings {
            method: self.method,
            min_length: length(self.min_length, d.min_length)?,
            max_length: match self.max_length {
                Some(v) => length(v, d.max_length)?,
                None => proto::DEFAULT_MAX_LENGTH,
            },
            max_solutions: self.solutions,
            time_limit_ms: self
                .time_limit
                .map(|t| (t * 1000.0).round().max(1.0) as u64),
            probe_limit: None,
            anytime: self.anytime,
        };
        settings
            .validate()
            .map(|v| v.into_inner())
            .map_err(|e| bad(message(e, d)))
    }
}

/// Threads per core that one process may start at most: a search thread waits on memory,
/// so a few per core can pay; thousands only cost their start (about 4 ms each) and the
/// scheduler's time.
pub const THREADS_PER_CORE: usize = 16;

/// Threads one process may start at most, whatever its cores.
pub const MAX_THREADS: usize = 4096;

/// The cores this process may run on (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most threads one process starts here: [`THREADS_PER_CORE`] per core, at most
/// [`MAX_THREADS`].
pub fn max_threads() -> usize {
    cores().saturating_mul(THREADS_PER_CORE).min(MAX_THREADS)
}

/// The threads to start for `asked` (`None`: one per core): at least 1 and at most
/// [`max_threads`], else a fault in the front end's words. The command line, Python and
/// a worker all take their thread count through here.
pub fn threads(asked: Option<usize>, d: &Dialect) -> Result<usize, Error> {
    match asked {
        None => Ok(cores()),
        Some(0) => Err(bad(format!(
            "{} must be at least 1 (leave it out for one per core)",
            d.threads
        ))),
        Some(n) if n > max_threads() => Err(bad(format!(
            "{} {n} is more than {} threads, the most this machine starts ({THREADS_PER_CORE} \
             per core on {} cores, at most {MAX_THREADS})",
            d.threads,
            max_threads(),
            cores()
        ))),
        Some(n) => Ok(n),
    }
}

/// The threads worth starting for one position of `method` out of `threads`: a
/// two-phase search is one job on one thread, an optimal one is split over them all.
pub fn threads_for_one(threads: usize, method: Method) -> usize {
    match method {
        Method::TwoPhase => 1,
        Method::Optimal => threads,
    }
}

/// The position `text` (a scramble in the cuber's notation, or facelets).
pub fn position(text: &str) -> Result<tables::Position, Error> {
    tables::Position::parse(text).map_err(|source| Error::Position {
        text: text.to_string(),
        source,
    })
}

/// The method named `name`.
pub fn method(name: &str, d: &Dialect) -> Result<Method, Error> {
    name.parse().map_err(|_| {
        bad(format!(
            "unknown {} {name:?}; use \"{}\" or \"{}\"",
            d.method,
            Method::Optimal.name(),
            Method::TwoPhase.name()
        ))
    })
}

/// A number of seconds given as `name`: finite and not negative.
pub fn seconds(name: &str, secs: f64) -> Result<Duration, Error> {
    Duration::try_from_secs_f64(secs)
        .map_err(|_| bad(format!("{name} must be a number of seconds, 0 or more")))
}

fn bad(message: String) -> Error {
    Error::Settings(message)
}

/// A settings fault said in terms of the arguments that caused it.
fn message(e: SettingsError, d: &Dialect) -> String {
    match e {
        SettingsError::MaxLength { .. } => {
            format!("{} must be at most {}", d.max_length, proto::MAX_LENGTH)
        }
        SettingsError::MinAboveMax { .. } => {
            format!("{} is larger than {}", d.min_length, d.max_length)
        }
        SettingsError::NoSolutions => format!("{} must be at least 1", d.solutions),
        SettingsError::TooManySolutions { .. } => {
            format!("{} must be at most {}", d.solutions, proto::MAX_SOLUTIONS)
        }
        SettingsError::EverySolutionTwoPhase => format!(
            "{} asks for every optimal solution; use it with {}",
            d.all, d.optimal
        ),
        SettingsError::AnytimeOptimal => format!(
            "{} is for {} (optimal solutions are already the shortest)",
            d.anytime, d.twophase
        ),
        SettingsError::AnytimeWithoutTimeLimit => format!(
            "{} needs {} (how long to keep shortening)",
            d.anytime, d.time_limit
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(a: Asked, d: &Dialect) -> String {
        a.settings(d).unwrap_err().to_string()
    }

    #[test]
    fn faults_are_said_in_each_front_end_s_words() {
        let long = Asked {
            max_length: Some(99),
            ..Asked::default()
        };
        let most = proto::MAX_LENGTH;
        assert_eq!(
            fault(long.clone(), &Dialect::CLI),
            format!("--max-length must be at most {most}")
        );
        assert_eq!(
            fault(long, &Dialect::PYTHON),
            format!("max_length must be at most {most}")
        );
        let above = Asked {
            min_length: 5,
            max_length: Some(3),
            ..Asked::default()
        };
        assert_eq!(
            fault(above, &Dialect::PYTHON),
            "min_length is larger than max_length"
        );
        let all = Asked {
            method: Method::TwoPhase,
            solutions: None,
            ..Asked::default()
        };
        assert!(fault(all, &Dialect::CLI).starts_with("--all asks for every optimal solution"));
        let anytime = Asked {
            method: Method::TwoPhase,
            anytime: true,
            ..Asked::default()
        };
        assert!(fault(anytime, &Dialect::CLI).starts_with("--anytime needs --time-limit"));
        let many = Asked {
            solutions: Some(u32::MAX),
            ..Asked::default()
        };
        assert_eq!(
            fault(many, &Dialect::CLI),
            format!("--solutions must be at most {}", proto::MAX_SOLUTIONS)
        );
        let negative = Asked {
            time_limit: Some(-1.0),
            ..Asked::default()
        };
        assert_eq!(
            fault(negative, &Dialect::PYTHON),
            "time_limit must be a positive number of seconds"
        );
        let zero = threads(Some(0), &Dialect::CLI).unwrap_err().to_string();
        assert!(zero.starts_with("--threads must be at least 1"), "{zero}");
        let many = threads(Some(100_000), &Dialect::PYTHON)
            .unwrap_err()
            .to_string();
        assert!(many.starts_with("threads 100000 is more than"), "{many}");
        assert!(threads(Some(usize::MAX), &Dialect::CLI).is_err());
        let e = method("fast", &Dialect::PYTHON).unwrap_err().to_string();
        assert!(e.starts_with("unknown method \"fast\""), "{e}");
        assert!(seconds("--connect-timeout", -1.0).is_err());
        assert_eq!(seconds("x", 1.5).unwrap(), Duration::from_millis(1500));
    }

    #[test]
    fn what_is_asked_becomes_the_settings() {
        let s = Asked {
            method: Method::TwoPhase,
            max_length: Some(22),
            solutions: Some(3),
            time_limit: Some(0.0004),
            anytime: true,
            ..Asked::default()
        }
        .settings(&Dialect::CLI)
        .unwrap();
        assert_eq!(s.max_length, 22);
        assert_eq!(s.max_solutions, Some(3));
        assert_eq!(s.time_limit_ms, Some(1));
        assert!(s.anytime);
        let d = Asked::default().settings(&Dialect::CLI).unwrap();
        assert_eq!(d.max_length, proto::DEFAULT_MAX_LENGTH);
        assert_eq!(threads(None, &Dialect::CLI).unwrap(), cores());
        assert_eq!(
            threads(Some(max_threads()), &Dialect::CLI).unwrap(),
            max_threads()
        );
        assert!(max_threads() <= MAX_THREADS);
    }
}
