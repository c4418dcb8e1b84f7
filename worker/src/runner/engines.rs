//! [`Engines`]: the opened solvers of a process, by table name.

use crate::{catalog, Engine, Error, TableMemory};
use std::collections::BTreeMap;
use std::path::Path;

/// The opened solvers of a process, by catalog table name.
#[derive(Clone, Debug, Default)]
pub struct Engines {
    /// Each engine under [`Engine::name`].
    by_name: BTreeMap<String, Engine>,
}

impl Engines {
    /// Opens the tables `names` (catalog names, see [`catalog`]) from `dir`, reading the
    /// large tables as `memory` says. Fails on the first name that is unknown or whose
    /// files are missing or bad.
    pub fn open(dir: &Path, names: &[&str], memory: TableMemory) -> Result<Engines, Error> {
        let mut engines = Engines::default();
        for name in names {
            engines.insert(catalog::open(dir, name, memory)?);
        }
        Ok(engines)
    }

    /// Adds an opened engine (replacing one of the same name).
    pub fn insert(&mut self, engine: Engine) {
        self.by_name.insert(engine.name().to_string(), engine);
    }

    /// The engine of table `name`.
    pub fn get(&self, name: &str) -> Option<&Engine> {
        self.by_name.get(name)
    }

    /// The table names held, sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }
}
