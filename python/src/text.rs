//! A position's text from a Python value. An argument ([`arg`]) is a `str` that UTF-8
//! can hold, else a PositionError naming the argument; an item of an iterable of
//! positions ([`item`]) may also be bytes (a file opened in binary mode), and any other
//! item is the error of its own line, as a line that is not a position is.

use crate::errors::{err, Kind};
use proto::{BadLine, BadLineKind, RecordError};
use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice, PyString};

/// What an item of an iterable of positions holds.
pub enum Item {
    /// Its text.
    Text(String),
    /// Its bytes (the line of a file read in binary mode), UTF-8 or not.
    Bytes(Vec<u8>),
    /// No text: why, as its record says it.
    Bad(String),
}

/// The text of the argument `name`, or a PositionError naming it.
pub fn arg(v: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    let Ok(s) = v.cast::<PyString>() else {
        return Err(err(
            Kind::Position,
            format!("{name} must be a str, not {}", type_name(v)),
        ));
    };
    utf8(s).map_err(|why| err(Kind::Position, format!("{name} is {why}")))
}

/// What the item `v` holds.
pub fn item(v: &Bound<'_, PyAny>) -> Item {
    if let Ok(s) = v.cast::<PyString>() {
        return match utf8(s) {
            Ok(t) => Item::Text(t),
            Err(why) => Item::Bad(why),
        };
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Item::Bytes(b.as_bytes().to_vec());
    }
    Item::Bad(format!("expected a str, not {}", type_name(v)))
}

/// The error record of an item that holds no text (`why`, from [`Item::Bad`]): the same
/// from a local run and from a cluster.
pub fn no_text(why: String) -> RecordError {
    RecordError::Parse(BadLine {
        kind: BadLineKind::Notation,
        message: why,
    })
}

/// `s` as UTF-8, or why it cannot be ("not valid text: ..."): a lone surrogate, the only
/// thing a `str` holds that UTF-8 cannot (`'\udcff'` from `os.fsdecode` of a byte that is
/// not UTF-8, say).
fn utf8(s: &Bound<'_, PyString>) -> Result<String, String> {
    s.extract::<String>().map_err(|e| {
        let py = s.py();
        let at = e
            .is_instance_of::<PyUnicodeEncodeError>(py)
            .then(|| {
                let v = e.value(py);
                let start = v.getattr("start").ok()?.extract::<usize>().ok()?;
                let end = v.getattr("end").ok()?.extract::<usize>().ok()?;
                let run = PySlice::new(py, start as isize, end as isize, 1);
                let bad = s.as_any().get_item(run).ok()?.repr().ok()?;
                Some(format!(": character {start} is a lone surrogate ({bad})"))
            })
            .flatten()
            .unwrap_or_default();
        format!("not valid text{at}")
    })
}

/// The name of `v`'s type.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "an unknown type".to_string(), |n| n.to_string())
}
