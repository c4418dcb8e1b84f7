//! The keyword arguments of `solve`, `solve_many` and a cluster's runs, taken as one dict
//! into the front-end library's one [`Request`]: the Python package passes what its user
//! gave as one object, and this is its one parse. A key this does not know is refused by
//! its name (a misspelt option must not be ignored); a value of the wrong type is a
//! SettingsError naming the argument ([`value`], which a cluster's connection settings
//! use too).

use crate::errors::{err, front, Kind};
use frontend::{Dialect, Request};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The keys a request dict may hold: the one list of the keywords the native module
/// takes (the package's typed listing is `cubeswarm/_options.py`).
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

/// What a number of seconds must be.
pub const SECONDS: &str = "a number of seconds";

/// The argument `key`'s value `v` as a `T` (`None`: None), else a SettingsError saying
/// what it must be (`what`). A bool is an int to Python: it is taken only for a flag.
pub fn value<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    v: &Bound<'py, PyAny>,
    key: &str,
    what: &str,
) -> PyResult<Option<T>> {
    if v.is_none() {
        return Ok(None);
    }
    let is_bool = v.is_instance_of::<pyo3::types::PyBool>();
    match v.extract::<T>() {
        Ok(t) if is_bool == (what == FLAG) => Ok(Some(t)),
        _ => Err(err(
            Kind::Settings,
            format!("{key} must be {what}, not {}", v.repr()?),
        )),
    }
}

/// The value of `key` in `d` as a `T` (`None`: absent or None), else a SettingsError.
fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    what: &str,
) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) => value(&v, key, what),
    }
}

/// The refusal of the unknown key `k`, naming it and the known key it is likely a
/// misspelling of.
fn unknown(k: &str) -> PyErr {
    let near = KEYS
        .iter()
        .map(|&known| (distance(k, known), known))
        .min()
        .filter(|&(d, known)| d <= 2 && d < known.len() / 2)
        .map_or(String::new(), |(_, known)| {
            format!(" (did you mean {known:?}?)")
        });
    err(
        Kind::Settings,
        format!(
            "unknown option {k:?}{near}; the options are {}",
            KEYS.join(", ")
        ),
    )
}

/// The edit distance of `a` and `b` (insertions, deletions, substitutions and swaps of
/// neighbours), in characters.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: the distance of a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let differs = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + differs);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The request a dict of keyword arguments describes (absent keys: the defaults).
pub fn request(d: &Bound<'_, PyDict>) -> PyResult<Request> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !KEYS.contains(&k.as_str()) {
            return Err(unknown(&k));
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
        time_limit: get::<f64>(d, "time_limit", SECONDS)?,
        anytime: get::<bool>(d, "anytime", FLAG)?.unwrap_or(base.anytime),
        table: get::<String>(d, "table", "a table name")?,
        threads: get::<usize>(d, "threads", "a whole number, 1 or more")?,
        symmetry: get::<bool>(d, "symmetry", FLAG)?.unwrap_or(base.symmetry),
    })
}
