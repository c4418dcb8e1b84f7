//! The tables a worker serves, checked once before it says hello.
//!
//! [`TableSet::check`] opens every file of every table chosen (its required files and the
//! optional one when present, since the engine reads it too), re-reads each body against
//! its header's checksum and distribution, and keeps each file's checksum and size for the
//! Hello: a damaged table never answers, and a coordinator can refuse a table that differs
//! from the cluster's. [`TableSet::open`] then opens the engines over the checked files.

use crate::{Engines, TableMemory};
use proto::catalog::{self, Entry};
use proto::wire;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tables::tablefile::{table_path, TableFile, TableFileError};

/// Which tables a worker serves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ServedTables {
    /// Every catalog table whose required files are all in the directory.
    #[default]
    AllPresent,
    /// These catalog tables; each must be complete.
    Named(Vec<String>),
}

/// Why the tables cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TableSetError {
    /// Nothing to serve.
    #[error(
        "no table to serve in {}: build one there (`cubeswarm tables build twophase`, \
         `cubeswarm tables build h48h0k4`) or fetch one from the coordinator \
         (`cubeswarm worker --fetch NAME`, or `cubeswarm tables fetch NAME --coordinator URL`)",
        dir.display()
    )]
    NoTables {
        /// The tables directory.
        dir: PathBuf,
    },
    /// A name that is not a catalog table.
    #[error("unknown table {name:?} (known: {known})", known = catalog::names().join(", "))]
    Unknown {
        /// The name given.
        name: String,
    },
    /// A table chosen by name lacks files.
    #[error(
        "table {name}: {} missing in {} (build it with `cubeswarm tables build {name}` or \
         fetch it from the coordinator with `--fetch {name}`)",
        files.join(", "), dir.display()
    )]
    Missing {
        /// The table.
        name: String,
        /// The tables directory.
        dir: PathBuf,
        /// The files it lacks.
        files: Vec<String>,
    },
    /// A file is damaged or not what its name says (the message names the file).
    #[error("refusing to serve a damaged table: {0}")]
    Damaged(TableFileError),
    /// The engine could not open a checked table.
    #[error("opening table {name}: {error}")]
    Open {
        /// The table.
        name: String,
        /// Why.
        error: crate::Error,
    },
}

/// One checked file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedFile {
    /// The file's table name (the file is `<dir>/<file>.tbl`).
    pub file: String,
    /// The body checksum its header records (and the body was found to match).
    pub checksum: u64,
    /// The file's length in bytes.
    pub bytes: u64,
}

/// One checked table: its catalog name and every file the engine reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedTable {
    /// The catalog name, as jobs give it.
    pub name: String,
    /// Its files: the required ones, then the optional one when present.
    pub files: Vec<CheckedFile>,
}

/// The tables a worker serves, every file checked.
#[derive(Clone, Debug)]
pub struct TableSet {
    /// Where the files are.
    dir: PathBuf,
    /// The tables, in catalog order.
    tables: Vec<CheckedTable>,
}

impl TableSet {
    /// Chooses the tables in `dir` as `choice` says and checks every file they read
    /// (each file once, however many tables share it). Blocking: reads every body.
    pub fn check(dir: &Path, choice: &ServedTables) -> Result<TableSet, TableSetError> {
        let entries = choose(dir, choice)?;
        let mut checked: BTreeMap<&'static str, CheckedFile> = BTreeMap::new();
        let mut tables = Vec::with_capacity(entries.len());
        for entry in &entries {
            let optional = entry
                .optional
                .iter()
                .filter(|f| table_path(dir, f).exists() && !entry.files.contains(f));
            let mut files = Vec::new();
            for &file in entry.files.iter().chain(optional) {
                if !checked.contains_key(file) {
                    checked.insert(file, check_file(dir, file)?);
                }
                files.extend(checked.get(file).cloned());
            }
            tables.push(CheckedTable {
                name: entry.name.to_string(),
                files,
            });
        }
        Ok(TableSet {
            dir: dir.to_path_buf(),
            tables,
        })
    }

    /// A hollow worker's set ([`crate::hollow`]): the tables `names`, with no file behind
    /// them (the Hello lists no file, so no checksum is compared).
    pub fn hollow(names: &[&str]) -> TableSet {
        TableSet {
            dir: PathBuf::new(),
            tables: (names.iter())
                .map(|n| CheckedTable {
                    name: n.to_string(),
                    files: Vec::new(),
                })
                .collect(),
        }
    }

    /// The tables directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The checked tables, in catalog order.
    pub fn tables(&self) -> &[CheckedTable] {
        &self.tables
    }

    /// The bytes of every file the tables read (each file once).
    pub fn bytes(&self) -> u64 {
        let mut seen: Vec<&str> = Vec::new();
        let mut total = 0u64;
        for f in self.tables.iter().flat_map(|t| &t.files) {
            if !seen.contains(&f.file.as_str()) {
                seen.push(&f.file);
                total = total.saturating_add(f.bytes);
            }
        }
        total
    }

    /// The tables' catalog names.
    pub fn names(&self) -> Vec<&str> {
        self.tables.iter().map(|t| t.name.as_str()).collect()
    }

    /// What the worker's Hello says about its tables.
    pub fn hello_tables(&self) -> Vec<wire::TableInfo> {
        self.tables
            .iter()
            .map(|t| wire::TableInfo {
                name: t.name.clone(),
                files: t
                    .files
                    .iter()
                    .map(|f| wire::TableFileInfo {
                        file: f.file.clone(),
                        checksum: f.checksum,
                        bytes: f.bytes,
                    })
                    .collect(),
            })
            .collect()
    }

    /// Opens an engine per table, reading the large tables as `memory` says. Blocking
    /// (with huge pages, each table is copied into private memory).
    ///
    /// The engines open the files by path again; a file replaced between the check and
    /// this call would not have been checked, but tables are only ever replaced by
    /// renaming a complete, checked file over them.
    pub fn open(&self, memory: TableMemory) -> Result<Engines, TableSetError> {
        let mut engines = Engines::default();
        for t in &self.tables {
            let engine = crate::catalog::open(&self.dir, &t.name, memory).map_err(|error| {
                TableSetError::Open {
                    name: t.name.clone(),
                    error,
                }
            })?;
            engines.insert(engine);
        }
        Ok(engines)
    }
}

/// The catalog entries `choice` names, checked for completeness.
fn choose(dir: &Path, choice: &ServedTables) -> Result<Vec<Entry>, TableSetError> {
    let entries: Vec<Entry> = match choice {
        ServedTables::AllPresent => catalog::all()
            .iter()
            .copied()
            .filter(|e| e.present(dir))
            .collect(),
        ServedTables::Named(names) => {
            let mut v: Vec<Entry> = Vec::with_capacity(names.len());
            for name in names {
                let &entry = catalog::find(name)
                    .ok_or_else(|| TableSetError::Unknown { name: name.clone() })?;
                let missing = entry.missing(dir);
                if !missing.is_empty() {
                    return Err(TableSetError::Missing {
                        name: name.clone(),
                        dir: dir.to_path_buf(),
                        files: missing.iter().map(|f| f.to_string()).collect(),
                    });
                }
                if !v.contains(&entry) {
                    v.push(entry);
                }
            }
            v
        }
    };
    if entries.is_empty() {
        return Err(TableSetError::NoTables {
            dir: dir.to_path_buf(),
        });
    }
    Ok(entries)
}

/// Opens `file` in `dir`, checks its body, and returns what the Hello says of it.
fn check_file(dir: &Path, file: &str) -> Result<CheckedFile, TableSetError> {
    let path = table_path(dir, file);
    let start = Instant::now();
    let table = TableFile::open(&path, file).map_err(TableSetError::Damaged)?;
    let bytes = std::fs::metadata(&path)
        .map_err(|error| {
            TableSetError::Damaged(TableFileError::Io {
                path: path.clone(),
                error,
            })
        })?
        .len();
    tracing::info!(file, bytes, "checking table file {}", path.display());
    table.verify().map_err(TableSetError::Damaged)?;
    tracing::info!(
        file,
        bytes,
        "checked {file} ({:.2} GB) in {:.1} s: intact",
        bytes as f64 / 1e9,
        start.elapsed().as_secs_f64()
    );
    Ok(CheckedFile {
        file: file.to_string(),
        checksum: table.header().checksum,
        bytes,
    })
}
