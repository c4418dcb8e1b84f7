//! The keyword arguments of `solve`, `solve_many` and a cluster's runs, taken as one dict
//! into the front-end library's one [`Request`]: the Python package passes what its user
//! gave as one object, and this is its one parse. A key this does not know is refused
//! (a misspelt option must not be ignored); a value of the wrong type is a SettingsError
//! naming the argument.

use crate::errors::{err, front, Kind};
use frontend::{Dialect, Request};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The keys a request dict may hold.
const KEYS: &[&str] = &[
    "method",
    "max_length",
    "min_length",
    "solutions",
    "time_limit",
    "anytime",
    "table",
    "threads",
    "symmetry",
];

/// What a flag must be.
const FLAG: &str = "True or False";

/// The value of `key` in `d` as a `T` (`None`: absent or None), else a SettingsError.
fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    what: &str,
) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => {
            // A bool is an int to Python: it is taken only where a bool is meant.
            let is_bool = v.is_instance_of::<pyo3::types::PyBool>();
            match v.extract::<T>() {
                Ok(t) if is_bool == (what == FLAG) => Ok(Some(t)),
                _ => Err(err(
                    Kind::Settings,
                    format!("{key} must be {what}, not {}", v.repr()?),
                )),
            }
        }
    }
}

/// The request a dict of keyword arguments describes (absent keys: the defaults).
pub fn request(d: &Bound<'_, PyDict>) -> PyResult<Request> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !KEYS.contains(&k.as_str()) {
            return Err(err(
                Kind::Settings,
                format!("unknown option {k:?}; the options are {}", KEYS.join(", ")),
            ));
        }
    }
    let base = Request::default();
    let method = match get::<String>(d, "method", "a string")? {
        Some(m) => frontend::settings::method(&m, &Dialect::PYTHON).map_err(front)?,
        None => base.method,
    };
    let whole = "a whole number, 0 or more";
    Ok(Request {
        method,
        max_length: get::<u32>(d, "max_length", whole)?.or(base.max_length),
        min_length: get::<u32>(d, "min_length", whole)?.unwrap_or(base.min_length),
        // None asks for every optimal solution: an absent key is the default, one.
        solutions: match d.get_item("solutions")? {
            None => base.solutions,
            Some(_) => get::<u32>(d, "solutions", whole)?,
        },
        time_limit: get::<f64>(d, "time_limit", "a number of seconds")?,
        anytime: get::<bool>(d, "anytime", FLAG)?.unwrap_or(base.anytime),
        table: get::<String>(d, "table", "a table name")?,
        threads: get::<usize>(d, "threads", "a whole number, 1 or more")?,
        symmetry: get::<bool>(d, "symmetry", FLAG)?.unwrap_or(base.symmetry),
    })
}
