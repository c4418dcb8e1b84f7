//! The checks every front end applies to what its user typed, each fault said in the
//! front end's words: threads, positions, method names, seconds, and the settings faults
//! of [`crate::Request::settings`].

use crate::{Dialect, Error};
use proto::{Method, SettingsError};
use std::time::Duration;

/// Threads per core that one process may start at most: a search thread waits on memory,
/// so a few per core can pay; thousands only cost their start (about 4 ms each) and the
/// scheduler's time.
pub const THREADS_PER_CORE: usize = 16;

/// Threads one process may start at most, whatever its cores.
pub const MAX_THREADS: usize = 4096;

/// The cores this process may run on (at least 1), asked of the system once per process:
/// the answer reads the cgroup's files (tens of microseconds), and a Python caller asks
/// on every call.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
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

/// The longest a number of seconds may be (some 31 years): the bound of every flag and
/// keyword given in seconds.
pub const MAX_SECONDS: f64 = 1e9;

/// A number of seconds given as `name`: from 0 to [`MAX_SECONDS`].
pub fn seconds(name: &str, secs: f64) -> Result<Duration, Error> {
    let refused = || bad(format!("{name} must be a number of seconds from 0 to 1e9"));
    if !(0.0..=MAX_SECONDS).contains(&secs) {
        return Err(refused());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| refused())
}

pub(crate) fn bad(message: String) -> Error {
    Error::Settings(message)
}

/// A settings fault said in terms of the arguments that caused it.
pub(crate) fn message(e: SettingsError, d: &Dialect) -> String {
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

    #[test]
    fn seconds_have_a_stated_bound() {
        assert_eq!(seconds("--x", 0.0).unwrap(), Duration::ZERO);
        assert_eq!(
            seconds("--x", 1e9).unwrap(),
            Duration::from_secs(1_000_000_000)
        );
        for refused in [-1.0, 1e9 + 1.0, 1e300, f64::INFINITY, f64::NAN] {
            let e = seconds("--wait-for-workers", refused)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("--wait-for-workers must be a number of seconds from 0 to 1e9"),
                "{refused}: {e}"
            );
        }
    }

    #[test]
    fn bounds_are_said_in_each_front_end_s_words() {
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
        assert_eq!(threads(None, &Dialect::CLI).unwrap(), cores());
        assert_eq!(
            threads(Some(max_threads()), &Dialect::CLI).unwrap(),
            max_threads()
        );
        assert!(max_threads() <= MAX_THREADS);
    }
}
