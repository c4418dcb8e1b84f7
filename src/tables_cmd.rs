//! `cubeswarm tables list | build NAME | verify [NAME] | fetch NAME`.

use crate::progress::Bars;
use crate::Common;
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
        /// Keep the files that are present and pass `verify`; build only the missing or
        /// damaged ones (for provisioning steps that run on every start).
        #[arg(long)]
        if_missing: bool,
        /// Build an h48hNk2 table (N >= 1) with this base instead of its default (the
        /// 2-bit entries store base+1, base+2, base+3 or more, and "at most the base"
        /// falls back on eoesep, or on h48h0k4 in a directory without eoesep). The base is
        /// in the file's header, so the file serves like any other; for measuring which
        /// base a table should have.
        #[arg(long, value_name = "B", conflicts_with = "if_missing")]
        base: Option<u8>,
    },
    /// Re-check a table file's checksum and per-depth distribution (all present tables
    /// when no name is given).
    Verify {
        /// Table file name, or a solver table that is no file (`twophase`: its files,
        /// the optional move table when present), as shown by `tables list`.
        name: Option<String>,
    },
    /// Fetch a table from the coordinator: the files of a solver table (`twophase`,
    /// `h48h3k2`...) that are missing here, or one table file (`cocsep`...) even if present.
    /// Each file is checked (length, header, body checksum) before it is renamed into place.
    Fetch {
        /// Solver table or table file name, as shown by `tables list`.
        name: String,
        /// The coordinator's URL: http://HOST:PORT, or https://HOST:PORT with --tls-ca.
        #[arg(long, env = "CUBESWARM_COORDINATOR")]
        coordinator: String,
    },
}

/// Every table file cubeswarm knows (the catalog's files, in build order).
pub fn known_tables() -> Vec<String> {
    proto::catalog::files()
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
pub fn run(dir: &Path, common: &Common, action: TablesAction) -> anyhow::Result<()> {
    match action {
        TablesAction::List => {
            list(dir);
            Ok::<(), anyhow::Error>(())
        }
        TablesAction::Build {
            name,
            if_missing,
            base,
        } => build(dir, &name, if_missing, base),
        TablesAction::Verify { name } => verify(dir, name),
        TablesAction::Fetch { name, coordinator } => fetch(dir, common, &name, &coordinator),
    }
    .with_context(|| format!("tables directory {}", dir.display()))
}

/// `tables list`: a line per known table file, with its status, sizes and entries.
fn list(dir: &Path) {
    println!("tables directory: {}", dir.display());
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>10}  entries",
        "name", "status", "size", "build mem", "search mem"
    );
    for name in known_tables() {
        let file = proto::catalog::file(&name);
        let build = file.map(|f| human(f.build_memory)).unwrap_or_default();
        // Searching maps the solver table's required files (an H48 table: it and cocsep;
        // the optional eoesep, its fallback when present, is not counted).
        let search = proto::catalog::find(&name)
            .map(|e| e.bytes())
            .or(file.map(|f| f.bytes()))
            .map(human)
            .unwrap_or_default();
        let (status, size, entries) = status_of(dir, &name);
        println!("{name:<16} {status:>10} {size:>10} {build:>10} {search:>10}  {entries}");
    }
}

/// What `tables list` says of table file `name` in `dir`: its status (present, partial,
/// missing or BAD), its size (estimated when not present), and its entries or a note.
fn status_of(dir: &Path, name: &str) -> (&'static str, String, String) {
    let path = table_path(dir, name);
    let file = proto::catalog::file(name);
    let partial = worker::h48::checkpoint::Checkpoint::probe(dir, name);
    match TableFile::open(&path, name) {
        Ok(t) => (
            "present",
            human(std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0)),
            t.header().meta.entries.to_string(),
        ),
        Err(_) if !path.exists() => {
            let est = file.map(|f| human(f.bytes())).unwrap_or_default();
            match &partial {
                Some(c) => (
                    "partial",
                    est,
                    format!(
                        "build checkpoint: {} of {} batches of tails ({:.1}%); \
                         `tables build {name}` resumes it",
                        c.done,
                        c.total,
                        100.0 * c.done as f64 / c.total.max(1) as f64
                    ),
                ),
                None => match worker::remote::partial_bytes(dir, name) {
                    Some(held) => (
                        "partial",
                        est,
                        partial_fetch_note(name, held, file.map(|f| f.bytes())),
                    ),
                    None => ("missing", est, String::new()),
                },
            }
        }
        Err(e) => ("BAD", String::new(), e.to_string()),
    }
}

/// `tables build`: one table (or, with `if_missing`, those of its files not present and
/// verified), with a base of its own when `base` says so.
fn build(dir: &Path, name: &str, if_missing: bool, base: Option<u8>) -> anyhow::Result<()> {
    let t = Instant::now();
    if !known_tables().iter().any(|n| n == name) && proto::catalog::find(name).is_none() {
        bail!("unknown table {name:?}; `cubeswarm tables list` shows the known ones");
    }
    if if_missing {
        return build_missing(dir, name);
    }
    match base {
        Some(b) => worker::h48::build_table_with_base(dir, name, Some(b), &Bars::new(true))?,
        None => worker::catalog::build_file(dir, name, &Bars::new(true))?,
    }
    eprintln!(
        "built {name} in {:.1} s ({})",
        t.elapsed().as_secs_f64(),
        table_path(dir, name).display()
    );
    Ok(())
}

/// `tables verify`: the files `name` stands for, or every present one, each checked
/// and its line printed; `Err` when any fails.
fn verify(dir: &Path, name: Option<String>) -> anyhow::Result<()> {
    let names = match name {
        Some(n) => files_of(dir, n),
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
        if !verify_file(dir, &n) {
            bad += 1;
        }
    }
    if bad > 0 {
        bail!("{bad} table(s) failed verification");
    }
    Ok(())
}

/// Verifies table file `n` and prints its line: its checksum and distribution, or why
/// it failed. Whether it passed.
fn verify_file(dir: &Path, n: &str) -> bool {
    let path = table_path(dir, n);
    let t = Instant::now();
    match TableFile::open(&path, n).and_then(|f| f.verify().map(|()| f)) {
        Ok(f) => {
            let h = f.header();
            // Values past the width never occur; show the ones that can.
            let shown = 1usize << h.meta.depth_width.min(4);
            let dist: Vec<String> = h.distribution[..shown.min(h.distribution.len())]
                .iter()
                .map(u64::to_string)
                .collect();
            println!(
                "{n}: ok ({:.1} s): body checksum of {} bytes and the entries \
                 per stored value{} match the header: [{}]",
                t.elapsed().as_secs_f64(),
                h.body_len,
                if h.meta.base > 0 {
                    format!(" (base {}: 0 = at most {0})", h.meta.base)
                } else {
                    String::new()
                },
                dist.join(", ")
            );
            true
        }
        Err(e) => {
            println!("{n}: FAILED: {e}");
            false
        }
    }
}

/// The table files `name` stands for: itself when it is a file, else the files of the
/// solver table of that name (the optional one when present).
fn files_of(dir: &Path, name: String) -> Vec<String> {
    match proto::catalog::find(&name) {
        Some(e) if !known_tables().contains(&name) => e
            .files
            .iter()
            .chain(e.optional.iter().filter(|f| table_path(dir, f).exists()))
            .map(|f| f.to_string())
            .collect(),
        _ => vec![name],
    }
}

/// `tables build --if-missing`: each file of `name` (in build order) is verified, and
/// built when it is missing or fails verification.
fn build_missing(dir: &Path, name: &str) -> anyhow::Result<()> {
    let mut wanted = vec![name.to_string()];
    if let Some(e) = proto::catalog::find(name) {
        wanted = e
            .files
            .iter()
            .chain(e.optional.iter().filter(|f| {
                // The two-phase move table is built only by name; checked when present.
                **f != proto::catalog::TWOPHASE_P1M || table_path(dir, f).exists()
            }))
            .map(|f| f.to_string())
            .collect();
    }
    for file in known_tables().into_iter().filter(|f| wanted.contains(f)) {
        let path = table_path(dir, &file);
        match TableFile::open(&path, &file).and_then(|t| t.verify()) {
            Ok(()) => println!("{file}: present and verified"),
            Err(e) => {
                if path.exists() {
                    eprintln!("{file}: {e}; building it again");
                }
                let t = Instant::now();
                worker::catalog::build_file(dir, &file, &Bars::new(true))?;
                println!("{file}: built in {:.1} s", t.elapsed().as_secs_f64());
            }
        }
    }
    Ok(())
}

/// What `tables list` says of a partial fetch holding `held` bytes of `total`.
fn partial_fetch_note(name: &str, held: u64, total: Option<u64>) -> String {
    match total {
        Some(t) => format!(
            "partial fetch: {held} of {t} bytes ({:.1}%); `tables fetch {name}` or \
             `worker --fetch` resumes it",
            100.0 * held as f64 / t.max(1) as f64
        ),
        None => format!("partial fetch: {held} bytes; `tables fetch {name}` resumes it"),
    }
}

/// `tables fetch`: one attempt (an init container that fails is started again).
fn fetch(dir: &Path, common: &Common, name: &str, url: &str) -> anyhow::Result<()> {
    let table = proto::catalog::find(name);
    if table.is_none() && !known_tables().iter().any(|f| f == name) {
        bail!("unknown table {name:?}; `cubeswarm tables list` shows the known ones");
    }
    let config = common.client_config(url)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let fetched = rt.block_on(async {
        let channel = config.connect().await?;
        let mut client = proto::transport::tables_client(channel, config.auth()?);
        let files = match table {
            Some(_) => worker::remote::fetch_tables(&mut client, dir, &[name.to_string()]).await?,
            None => vec![worker::remote::fetch_file(&mut client, dir, name).await?],
        };
        Ok::<_, anyhow::Error>(files)
    })?;
    if fetched.is_empty() {
        println!("{name}: every file is already in {}", dir.display());
    }
    for f in fetched {
        let resumed = if f.resumed_from > 0 {
            format!("; resumed at {} of {} bytes", f.resumed_from, f.bytes)
        } else {
            String::new()
        };
        println!(
            "{}: fetched and verified ({}, checksum {:016x}{resumed})",
            f.file,
            human(f.bytes),
            f.checksum
        );
    }
    Ok(())
}
