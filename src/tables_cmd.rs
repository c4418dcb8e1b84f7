//! `cubeswarm tables list | build NAME | verify [NAME]`.

use anyhow::{bail, Context as _};
use clap::Subcommand;
use std::path::Path;
use std::time::Instant;
use tables::tablefile::{table_path, TableFile};

/// What to do with tables.
#[derive(Subcommand)]
pub enum TablesAction {
    /// Every table cubeswarm knows, whether it is present, and its size.
    List,
    /// Build one table (and any table it is derived from), with a progress bar.
    Build {
        /// Table name, as shown by `tables list`.
        name: String,
    },
    /// Re-check a table file's checksum and per-depth distribution (all present tables
    /// when no name is given).
    Verify {
        /// Table name.
        name: Option<String>,
    },
}

/// Every table file cubeswarm knows (the catalog's files, in build order).
pub fn known_tables() -> Vec<String> {
    worker::catalog::files()
        .into_iter()
        .map(str::to_string)
        .collect()
}

fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} kB", b / 1e3)
    }
}

/// Runs the action.
pub fn run(dir: &Path, action: TablesAction) -> anyhow::Result<()> {
    match action {
        TablesAction::List => {
            println!("tables directory: {}", dir.display());
            println!("{:<16} {:>10} {:>14}  entries", "name", "status", "size");
            for name in known_tables() {
                let path = table_path(dir, &name);
                let (status, size, entries) = match TableFile::open(&path, &name) {
                    Ok(t) => (
                        "present",
                        human(std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0)),
                        t.header().meta.entries.to_string(),
                    ),
                    Err(_) if !path.exists() => {
                        let est = worker::catalog::file_bytes(&name)
                            .map(human)
                            .unwrap_or_default();
                        ("missing", est, String::new())
                    }
                    Err(e) => ("BAD", String::new(), e.to_string()),
                };
                println!("{name:<16} {status:>10} {size:>14}  {entries}");
            }
            Ok::<(), anyhow::Error>(())
        }
        TablesAction::Build { name } => {
            let t = Instant::now();
            if !known_tables().contains(&name) && worker::catalog::find(&name).is_none() {
                bail!("unknown table {name:?}; `cubeswarm tables list` shows the known ones");
            }
            worker::catalog::build_file(dir, &name, true)?;
            eprintln!(
                "built {name} in {:.1} s ({})",
                t.elapsed().as_secs_f64(),
                table_path(dir, &name).display()
            );
            Ok(())
        }
        TablesAction::Verify { name } => {
            let names = match name {
                Some(n) => vec![n],
                None => known_tables()
                    .into_iter()
                    .filter(|n| table_path(dir, n).exists())
                    .collect(),
            };
            if names.is_empty() {
                bail!("no table files in {}", dir.display());
            }
            let mut bad = 0;
            for n in names {
                let path = table_path(dir, &n);
                let t = Instant::now();
                match TableFile::open(&path, &n).and_then(|f| f.verify()) {
                    Ok(()) => println!("{n}: ok ({:.1} s)", t.elapsed().as_secs_f64()),
                    Err(e) => {
                        println!("{n}: FAILED: {e}");
                        bad += 1;
                    }
                }
            }
            if bad > 0 {
                bail!("{bad} table(s) failed verification");
            }
            Ok(())
        }
    }
    .with_context(|| format!("tables directory {}", dir.display()))
}
