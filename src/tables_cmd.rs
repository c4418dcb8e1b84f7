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

/// Every table name cubeswarm knows: the H48 family, then the two-phase tables.
pub fn known_tables() -> Vec<String> {
    let mut v = worker::h48::table_names();
    v.extend(
        worker::twophase::TwoPhaseTables::table_names()
            .iter()
            .map(|s| s.to_string()),
    );
    v
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
            println!(
                "{:<16} {:>10} {:>14}  {}",
                "name", "status", "size", "entries"
            );
            for name in known_tables() {
                let path = table_path(dir, &name);
                let (status, size, entries) = match TableFile::open(&path, &name) {
                    Ok(t) => (
                        "present",
                        human(std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0)),
                        t.header().meta.entries.to_string(),
                    ),
                    Err(_) if !path.exists() => {
                        let est = worker::h48::table_info(&name)
                            .map(|i| human(i.bytes))
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
            if worker::h48::table_names().contains(&name) {
                worker::h48::build_table(dir, &name, true)?;
            } else if worker::twophase::TwoPhaseTables::table_names().contains(&name.as_str()) {
                worker::twophase::TwoPhaseTables::build(dir, &name, true)?;
            } else {
                bail!("unknown table {name:?}; `cubeswarm tables list` shows the known ones");
            }
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
