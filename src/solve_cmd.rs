//! `cubeswarm solve`: one position from the command line, or a file of them, through the
//! coordinator and the in-process executor, or through a cluster's coordinator
//! (`--coordinator`, see [`crate::remote_solve`]).

use crate::bench_cmd::default_threads;
use crate::local;
use crate::output::{Format, Record, CSV_HEADER};
use crate::remote_solve;
use crate::Common;
use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};
use coordinator::input::InputLine;
use coordinator::Source;
use proto::Settings;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tables::Position;

/// Which solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Shortest solutions (H48 tables + IDA*), proved optimal.
    Optimal,
    /// Kociemba's two-phase algorithm: fast, at most --max-length moves.
    Twophase,
}

/// Flags of `solve`.
#[derive(Args)]
pub struct SolveArgs {
    /// A scramble ("R U R' U'") or a 54-character facelet string (URFDLB order).
    position: Option<String>,
    /// Solver.
    #[arg(long, value_enum, default_value_t = Method::Optimal)]
    method: Method,
    /// Read positions from FILE, one per line ('-' = standard input); blank lines and
    /// lines starting with '#' are skipped.
    #[arg(long, short)]
    input: Option<PathBuf>,
    /// Write results to FILE instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Number of solutions per position.
    #[arg(long, short = 'n', default_value_t = 1)]
    solutions: usize,
    /// All optimal solutions (optimal method only).
    #[arg(long, conflicts_with = "solutions")]
    all: bool,
    /// Shortest solution length to look for (optimal method).
    #[arg(long, default_value_t = 0)]
    min_length: u8,
    /// Longest solution length accepted [default: 20].
    #[arg(long)]
    max_length: Option<u8>,
    /// Threads [default: all cores].
    #[arg(long, short = 't')]
    threads: Option<usize>,
    /// H48 table to use (default: the largest present; h48h0k4 is built if none is).
    #[arg(long)]
    table: Option<String>,
    /// Per-position time limit in seconds; the best found so far is reported.
    #[arg(long)]
    time_limit: Option<f64>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Solve on a cluster: the coordinator's URL (http:// or https://). Every other flag
    /// keeps its meaning, except --threads (the workers have their own).
    #[arg(long, env = "CUBESWARM_COORDINATOR", value_name = "URL")]
    coordinator: Option<String>,
    /// Continue an interrupted run into --output: the records already there are kept (but
    /// the last one, which a crash may have cut, is solved again) and their lines of
    /// --input are skipped. With --coordinator only.
    #[arg(long, requires = "output", requires = "input")]
    resume: bool,
}

/// Runs `solve`: the positions go through the coordinator's scheduler to the in-process
/// executor (the embedded default), or to a cluster with `--coordinator`.
pub fn run(dir: &Path, common: &Common, a: SolveArgs) -> anyhow::Result<()> {
    let (settings, single) = checked(&a)?;
    if let Some(url) = a.coordinator.as_deref().filter(|u| !u.is_empty()) {
        if a.threads.is_some() {
            bail!("--threads sets the local solver's threads; with --coordinator each worker has its own");
        }
        remote_solve::run(remote_solve::Options {
            client: common.client_config(url)?,
            settings,
            table: a.table.clone(),
            work: match (&a.position, &a.input) {
                (Some(p), _) => remote_solve::Work::One(p.clone()),
                (None, i) => remote_solve::Work::File(i.clone().unwrap_or_default()),
            },
            output: a.output.clone(),
            format: a.format,
            resume: a.resume,
            quiet: a.quiet,
        })?;
        return Ok(());
    }
    if a.resume {
        bail!("--resume continues the output file of a cluster run; use it with --coordinator");
    }
    let threads = a.threads.unwrap_or_else(default_threads).max(1);
    let table = match a.method {
        Method::Optimal => local::optimal_table(dir, a.table.as_deref())?,
        Method::Twophase => proto::catalog::TWOPHASE.to_string(),
    };
    let engine = local::open_engine(dir, &table, !a.quiet)?;
    let pool = local::executors(engine, threads)?;
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => {
            Box::new(BufWriter::new(File::create(p).with_context(|| {
                format!("cannot create output file {}", p.display())
            })?))
        }
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    let cfg = coordinator::Config::default();
    if let (Some(position), Some(text)) = (single, &a.position) {
        let line = InputLine {
            line: 1,
            input: text.clone(),
            parsed: Ok(position),
        };
        let mut got = None;
        coordinator::run(
            cfg,
            &pool,
            settings.clone(),
            table,
            Source::<std::io::Empty>::One(line),
            &mut |r| {
                got = Some(r);
                Ok(())
            },
        )?;
        let rec = Record::from_proto(got.context("no record for the position")?, &settings);
        return write_single(&mut out, a.format, &rec);
    }
    let path = a.input.clone().unwrap_or_default();
    let (reader, total): (Box<dyn BufRead + Send>, Option<u64>) = if path.as_os_str() == "-" {
        (Box::new(BufReader::new(std::io::stdin())), None)
    } else {
        let f = File::open(&path)
            .with_context(|| format!("cannot open input file {}", path.display()))?;
        let len = f.metadata().ok().map(|m| m.len());
        (Box::new(BufReader::with_capacity(1 << 16, f)), len)
    };
    let bar = progress_bar(!a.quiet, total);
    if a.format == Format::Csv {
        writeln!(out, "{CSV_HEADER}")?;
    }
    let start = Instant::now();
    let mut done = 0u64;
    let stats = coordinator::run(
        cfg,
        &pool,
        settings.clone(),
        table,
        Source::Lines(reader),
        &mut |r| {
            let rec = Record::from_proto(r, &settings);
            out.write_all(rec.render(a.format).as_bytes())?;
            done += 1;
            if let Some(b) = &bar {
                b.inc(rec.input.len() as u64 + 1);
                let secs = start.elapsed().as_secs_f64().max(1e-9);
                b.set_message(format!("{done} positions, {:.1}/s", done as f64 / secs));
            }
            Ok(())
        },
    )
    .with_context(|| format!("solving {}", path.display()))?;
    out.flush()?;
    drop(out);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !a.quiet {
        print_summary(stats.records, stats.errors, stats.seconds);
    }
    Ok(())
}

/// The flags checked and turned into settings, and the command-line position parsed:
/// what a local and a cluster run refuse alike, before any table is opened or any
/// connection made.
fn checked(a: &SolveArgs) -> anyhow::Result<(Settings, Option<Position>)> {
    let batch_mode = a.input.is_some();
    if batch_mode == a.position.is_some() {
        bail!("give either a POSITION or --input FILE (not both, not neither)");
    }
    if a.all && a.method == Method::Twophase {
        bail!("--all asks for every optimal solution; use it with --method optimal");
    }
    if a.solutions == 0 {
        bail!("--solutions must be at least 1");
    }
    if let Some(t) = a.time_limit {
        if !(t.is_finite() && t > 0.0) {
            bail!("--time-limit must be a positive number of seconds");
        }
    }
    // Check a command-line position before opening (or building) any table.
    let single = match &a.position {
        Some(p) => Some(Position::parse(p).with_context(|| format!("position {p:?}"))?),
        None => None,
    };
    let settings = Settings {
        method: match a.method {
            Method::Optimal => proto::Method::Optimal,
            Method::Twophase => proto::Method::TwoPhase,
        },
        min_length: a.min_length,
        max_length: a.max_length.unwrap_or(20),
        max_solutions: if a.all {
            None
        } else {
            Some(u32::try_from(a.solutions).unwrap_or(u32::MAX))
        },
        time_limit_ms: a.time_limit.map(|t| (t * 1000.0).round().max(1.0) as u64),
        probe_limit: None,
    };
    check_settings(&settings)?;
    Ok((settings, single))
}

/// Writes the record of a command-line position as `solve` shows it: text shows a
/// failure once, on stderr (the error returned), machine formats always get their record.
pub(crate) fn write_single(
    out: &mut dyn Write,
    format: Format,
    rec: &Record,
) -> anyhow::Result<()> {
    let failure = match &rec.outcome {
        Err(e) => Some(e.clone()),
        Ok(s) if s.solutions.is_empty() => {
            Some(s.note.clone().unwrap_or_else(|| "no solution found".into()))
        }
        Ok(_) => None,
    };
    if failure.is_none() || format != Format::Text {
        if format == Format::Csv {
            writeln!(out, "{CSV_HEADER}")?;
        }
        out.write_all(rec.render(format).as_bytes())?;
    }
    out.flush()?;
    if let Some(e) = failure {
        bail!("{e}");
    }
    Ok(())
}

/// The closing line of a scramble set, on stderr.
pub(crate) fn print_summary(records: u64, errors: u64, seconds: f64) {
    eprintln!(
        "{records} positions ({errors} errors) in {seconds:.2} s: {:.1} positions/s",
        records as f64 / seconds.max(1e-9)
    );
}

/// Refuses settings the engines would refuse, before any work starts.
fn check_settings(s: &Settings) -> anyhow::Result<()> {
    if s.max_length > 30 {
        bail!("--max-length must be at most 30");
    }
    if s.method == proto::Method::Optimal && s.min_length > s.max_length {
        bail!("--min-length is larger than --max-length");
    }
    Ok(())
}

/// A progress bar on stderr over `total_bytes` of input (a spinner when unknown), when
/// `show` and stderr is a terminal.
pub(crate) fn progress_bar(show: bool, total_bytes: Option<u64>) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !show || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = match total_bytes {
        Some(n) => indicatif::ProgressBar::new(n).with_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {percent}% ETA {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        ),
        None => indicatif::ProgressBar::new_spinner(),
    };
    Some(bar)
}
