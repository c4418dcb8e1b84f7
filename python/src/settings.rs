//! Keyword arguments checked into settings, with the CLI's messages said in the keyword
//! names.

use crate::errors::{err, Kind};
use proto::{Method, Settings, SettingsError};
use pyo3::PyResult;

/// What `solve` and `solve_many` accept.
pub struct Args {
    pub method: String,
    pub max_length: u32,
    pub min_length: u32,
    pub solutions: Option<u32>,
    pub time_limit: Option<f64>,
}

/// The checked settings.
pub fn settings(a: &Args) -> PyResult<Settings> {
    let method: Method = a.method.parse().map_err(|_| {
        err(
            Kind::Settings,
            format!(
                "unknown method {:?}; use \"optimal\" or \"twophase\"",
                a.method
            ),
        )
    })?;
    if let Some(t) = a.time_limit {
        if !(t.is_finite() && t > 0.0) {
            return Err(err(
                Kind::Settings,
                "time_limit must be a positive number of seconds",
            ));
        }
    }
    let byte = |v: u32, name: &str| {
        u8::try_from(v).map_err(|_| {
            err(
                Kind::Settings,
                format!("{name} must be at most {}", proto::MAX_LENGTH),
            )
        })
    };
    let s = Settings {
        method,
        min_length: byte(a.min_length, "min_length")?,
        max_length: byte(a.max_length, "max_length")?,
        max_solutions: a.solutions,
        time_limit_ms: a.time_limit.map(|t| (t * 1000.0).round().max(1.0) as u64),
        probe_limit: None,
        // The CLI's `--anytime` is not offered here yet.
        anytime: false,
    };
    s.validate()
        .map(|v| v.into_inner())
        .map_err(|e| err(Kind::Settings, message(e)))
}

fn message(e: SettingsError) -> String {
    match e {
        SettingsError::MaxLength { .. } => {
            format!("max_length must be at most {}", proto::MAX_LENGTH)
        }
        SettingsError::MinAboveMax { .. } => "min_length is larger than max_length".into(),
        SettingsError::NoSolutions => "solutions must be at least 1".into(),
        SettingsError::EverySolutionTwoPhase => {
            "solutions=None asks for every optimal solution; use it with method=\"optimal\"".into()
        }
        SettingsError::AnytimeOptimal => "an anytime search is for method=\"twophase\"".into(),
        SettingsError::AnytimeWithoutTimeLimit => "an anytime search needs a time_limit".into(),
    }
}
