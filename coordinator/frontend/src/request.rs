//! What a solve is asked ([`Request`]): the one description every front end fills, the
//! command line from its flags, Python from its keyword arguments, and checked here once,
//! before any table is opened or any connection made.
//!
//! A new option is a field here, its parse in each front end (a flag in `src/solve_cmd.rs`,
//! a key in `python/src/request.rs`) and, when a cluster must see it, its wire mapping in
//! `proto`. What cannot reach a cluster (the local thread count, the scheduler's choices,
//! which are the coordinator's own) is refused by [`Request::for_cluster`] with the
//! reason, in the front end's words.

use crate::settings::{bad, message, threads, threads_for_one};
use crate::{Dialect, Error};
use proto::{Method, Settings};

/// What a solve is asked, as a front end takes it from its user.
#[derive(Clone, Debug)]
pub struct Request {
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
    /// The table (`None`: the catalog's rule, [`crate::table`]).
    pub table: Option<String>,
    /// Solver threads here (`None`: one per core). Local only.
    pub threads: Option<usize>,
    /// Optimal method: cut a symmetric position into one prefix per orbit (`false`: every
    /// prefix, to measure the reduction). Local only: a cluster's coordinator decides.
    pub symmetry: bool,
}

impl Default for Request {
    /// One optimal solution of at most the default length, no time limit, the default
    /// table, one thread per core.
    fn default() -> Self {
        Request {
            method: Method::Optimal,
            min_length: 0,
            max_length: None,
            solutions: Some(1),
            time_limit: None,
            anytime: false,
            table: None,
            threads: None,
            symmetry: true,
        }
    }
}

impl Request {
    /// The checked settings (what a job and the wire carry).
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

    /// The scheduler's configuration for a local run.
    pub fn config(&self) -> coordinator::Config {
        coordinator::Config {
            symmetry: self.symmetry,
            ..coordinator::Config::default()
        }
    }

    /// The threads to start here: [`crate::settings::threads`], and one for a single
    /// two-phase position (`one`: the run solves one position).
    pub fn local_threads(&self, one: bool, d: &Dialect) -> Result<usize, Error> {
        let n = threads(self.threads, d)?;
        Ok(if one {
            threads_for_one(n, self.method)
        } else {
            n
        })
    }

    /// Refuses what a cluster cannot honour, with the reason: the local thread count (the
    /// workers have their own) and the scheduler's choices (the coordinator's own).
    pub fn for_cluster(&self, d: &Dialect) -> Result<(), Error> {
        if self.threads.is_some() {
            return Err(bad(format!(
                "{} sets the local solver's threads; on a cluster each worker has its own \
                 (`cubeswarm worker --threads`)",
                d.threads
            )));
        }
        if !self.symmetry {
            return Err(bad(format!(
                "{} is the coordinator's choice on a cluster (`cubeswarm coordinator \
                 --no-symmetry`)",
                d.no_symmetry
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(a: Request, d: &Dialect) -> String {
        a.settings(d).unwrap_err().to_string()
    }

    #[test]
    fn faults_are_said_in_each_front_end_s_words() {
        let long = Request {
            max_length: Some(99),
            ..Request::default()
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
        let above = Request {
            min_length: 5,
            max_length: Some(3),
            ..Request::default()
        };
        assert_eq!(
            fault(above, &Dialect::PYTHON),
            "min_length is larger than max_length"
        );
        let all = Request {
            method: Method::TwoPhase,
            solutions: None,
            ..Request::default()
        };
        assert!(fault(all, &Dialect::CLI).starts_with("--all asks for every optimal solution"));
        let anytime = Request {
            method: Method::TwoPhase,
            anytime: true,
            ..Request::default()
        };
        assert!(fault(anytime, &Dialect::CLI).starts_with("--anytime needs --time-limit"));
        let many = Request {
            solutions: Some(u32::MAX),
            ..Request::default()
        };
        assert_eq!(
            fault(many, &Dialect::CLI),
            format!("--solutions must be at most {}", proto::MAX_SOLUTIONS)
        );
        let negative = Request {
            time_limit: Some(-1.0),
            ..Request::default()
        };
        assert_eq!(
            fault(negative, &Dialect::PYTHON),
            "time_limit must be a positive number of seconds"
        );
    }

    #[test]
    fn what_is_asked_becomes_the_settings_and_the_scheduler_s_configuration() {
        let r = Request {
            method: Method::TwoPhase,
            max_length: Some(22),
            solutions: Some(3),
            time_limit: Some(0.0004),
            anytime: true,
            symmetry: false,
            ..Request::default()
        };
        let s = r.settings(&Dialect::CLI).unwrap();
        assert_eq!(s.max_length, 22);
        assert_eq!(s.max_solutions, Some(3));
        assert_eq!(s.time_limit_ms, Some(1));
        assert!(s.anytime);
        assert!(!r.config().symmetry);
        assert!(Request::default().config().symmetry);
        let d = Request::default().settings(&Dialect::CLI).unwrap();
        assert_eq!(d.max_length, proto::DEFAULT_MAX_LENGTH);
        // One two-phase position runs on one thread; a batch on them all.
        let four = Request {
            method: Method::TwoPhase,
            threads: Some(4),
            ..Request::default()
        };
        if crate::settings::max_threads() >= 4 {
            assert_eq!(four.local_threads(true, &Dialect::CLI).unwrap(), 1);
            assert_eq!(four.local_threads(false, &Dialect::CLI).unwrap(), 4);
        }
        assert!(four
            .local_threads(false, &Dialect::CLI)
            .is_ok_and(|n| n >= 1));
    }

    #[test]
    fn what_a_cluster_cannot_honour_is_refused_with_the_reason() {
        assert!(Request::default().for_cluster(&Dialect::CLI).is_ok());
        let threads = Request {
            threads: Some(2),
            ..Request::default()
        };
        let e = threads.for_cluster(&Dialect::CLI).unwrap_err().to_string();
        assert!(
            e.starts_with("--threads sets the local solver's threads"),
            "{e}"
        );
        let sym = Request {
            symmetry: false,
            ..Request::default()
        };
        let e = sym.for_cluster(&Dialect::PYTHON).unwrap_err().to_string();
        assert!(
            e.starts_with("symmetry=False is the coordinator's choice"),
            "{e}"
        );
        let e = sym.for_cluster(&Dialect::CLI).unwrap_err().to_string();
        assert!(
            e.starts_with("--no-symmetry is the coordinator's choice"),
            "{e}"
        );
    }
}
