//! The package's exceptions, raised from Rust. The classes live in `cubeswarm/errors.py`
//! (so that they can also derive from `ValueError`); this module only names them.

use pyo3::prelude::*;

/// Which exception class.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// The position (scramble or facelets) is not one.
    Position,
    /// An argument (settings, table name) is not acceptable.
    Settings,
    /// A table is missing, damaged, or cannot be built.
    Table,
    /// The cluster refused, or could not be reached.
    Cluster,
    /// Anything else.
    Other,
}

impl Kind {
    fn class(self) -> &'static str {
        match self {
            Kind::Position => "PositionError",
            Kind::Settings => "SettingsError",
            Kind::Table => "TableError",
            Kind::Cluster => "ClusterError",
            Kind::Other => "CubeswarmError",
        }
    }
}

/// An exception of `kind` with `message`.
pub fn err(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let class = py
            .import("cubeswarm.errors")
            .and_then(|m| m.getattr(kind.class()));
        match class {
            Ok(c) => match c.call1((message.clone(),)) {
                Ok(v) => PyErr::from_value(v),
                Err(e) => e,
            },
            Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message),
        }
    })
}

/// A front-end library error as the exception of its class, with its whole chain.
pub fn front(e: frontend::Error) -> PyErr {
    let kind = match &e {
        frontend::Error::Settings(_) => Kind::Settings,
        frontend::Error::Position { .. } => Kind::Position,
        frontend::Error::Table { .. } => Kind::Table,
        frontend::Error::Run(coordinator::RunError::NoExecutorForTable(_)) => Kind::Table,
        frontend::Error::Run(_) => Kind::Other,
        frontend::Error::Cluster(_) => Kind::Cluster,
    };
    err(kind, frontend::chain(&e))
}
