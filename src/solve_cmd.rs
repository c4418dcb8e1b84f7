//! `cubeswarm solve`: one position from the command line, or a file of them, through the
//! front-end library: the coordinator's driver over the in-process executors (the
//! embedded default), or a cluster's coordinator (`--coordinator`, see
//! [`crate::remote_solve`]). This file turns the flags into the library's terms and
//! draws what the user sees.

use crate::progress::{print_summary, progress_bar, Bars};
use crate::remote_solve;
use crate::Common;
use anyhow::{bail, Context as _};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use coordinator::input::InputLine;
use coordinator::Source;
use frontend::cluster::{self, DEFAULT_CONNECT_TIMEOUT};
use frontend::output::{self, Format, CSV_HEADER};
use frontend::{Dialect, Embedded, Request};
use proto::{Method, Settings};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tables::Position;

/// How a `solve` that ran to its end went (a run that could not is an error).
#[derive(Debug)]
pub enum Finished {
    /// Every line has its solutions.
    Solved,
    /// Some lines have no solution (an error record, or none within the limits).
    Failed {
        /// One position: why it has no solution (printed on stderr; a scramble set's
        /// summary line counts its errors).
        message: Option<String>,
    },
}

impl Finished {
    fn new(lines: u64, message: Option<String>) -> Finished {
        if lines == 0 && message.is_none() {
            Finished::Solved
        } else {
            Finished::Failed { message }
        }
    }
}

/// `--method`: the names of [`proto::Method`], each with its help line.
fn method_parser() -> impl TypedValueParser<Value = Method> {
    PossibleValuesParser::new([
        PossibleValue::new(Method::Optimal.name())
            .help("Shortest solutions (H48 tables + IDA*), proved optimal"),
        PossibleValue::new(Method::TwoPhase.name())
            .help("Kociemba's two-phase algorithm: fast, at most --max-length moves"),
    ])
    .try_map(|s| s.parse::<Method>())
}

/// `--format`: the names of [`output::Format`], each with its help line.
fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new([
        PossibleValue::new(Format::Text.name()).help("One human-readable line per solution"),
        PossibleValue::new(Format::Jsonl.name()).help("One JSON object per line"),
        PossibleValue::new(Format::Csv.name()).help("Comma-separated values with a header line"),
    ])
    .try_map(|s| s.parse::<Format>())
}

/// Flags of `solve`.
#[derive(Args)]
pub struct SolveArgs {
    /// A scramble in cubing.js notation ("R U R' U'", "M2 U M2 U2 M2 U M2", "[r, U]") or a
    /// 54-character facelet string (URFDLB order).
    position: Option<String>,
    /// Solver.
    #[arg(long, value_parser = method_parser(), default_value_t = Method::Optimal)]
    method: Method,
    /// Read positions from FILE, one per line ('-' = standard input); blank lines and
    /// lines starting with '#' are skipped.
    #[arg(long, short)]
    input: Option<PathBuf>,
    /// Write results to FILE instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_parser = format_parser(), default_value = "text")]
    format: Format,
    /// Number of solutions per position. Optimal: up to N of the optimal length (fewer when
    /// fewer exist); two-phase: N different solutions within --max-length.
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
    /// Per-position time limit in seconds. Optimal method: the depths proved empty and
    /// any solution found are reported. Two-phase: the search for a solution of at most
    /// --max-length moves gives up (with --anytime: the shortest found is reported).
    #[arg(long)]
    time_limit: Option<f64>,
    /// Two-phase: keep searching for shorter solutions until --time-limit runs out (or the
    /// shortest is proved), and report the shortest found. Robots' choice: e.g.
    /// `--method twophase --anytime --time-limit 0.01`.
    #[arg(long)]
    anytime: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Solve on a cluster: the coordinator's URL (http:// or https://). Every other flag
    /// keeps its meaning, except --threads (the workers have their own).
    #[arg(long, env = "CUBESWARM_COORDINATOR", value_name = "URL")]
    coordinator: Option<String>,
    /// Continue an interrupted run into --output: the records already there are kept (but
    /// the last one, which a crash may have cut, is solved again) and their lines of
    /// --input are skipped. JSONL and CSV records are checked against --input first: an
    /// output written from another input is refused. With --coordinator only.
    #[arg(long, requires = "output", requires = "input")]
    resume: bool,
    /// With --coordinator: give up after this many seconds without a working connection
    /// to the coordinator (counted from the first attempt, and again after each loss);
    /// 0: retry for ever.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_CONNECT_TIMEOUT.as_secs_f64())]
    connect_timeout: f64,
    /// With --coordinator: how long the coordinator keeps a request whose table no
    /// connected worker holds before refusing it; 0: refuse at once.
    #[arg(long, value_name = "SECS", default_value_t = 0.0)]
    wait_for_workers: f64,
    /// Solve to this pattern (a facelet string or a scramble) instead of the solved cube:
    /// the solutions take POSITION to it. One POSITION, solved here.
    #[arg(long, value_name = "FACELETS")]
    to: Option<String>,
    /// Record the search of one optimal position into FILE (JSON lines; gzipped when the
    /// name ends in .gz): every job and the node count of every prefix subtree per
    /// depth, for `cubeswarm bench split` to replay. Embedded runs only.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["coordinator", "input"])]
    trace: Option<PathBuf>,
    /// Optimal method: search every move prefix of a symmetric position, as if it had no
    /// symmetry (to measure the reduction; the solutions are the same). On a cluster the
    /// coordinator decides (`cubeswarm coordinator --no-symmetry`).
    #[arg(long)]
    no_symmetry: bool,
}

/// Runs `solve`: the positions go through the coordinator's driver to the in-process
/// executors (the embedded default), or to a cluster with `--coordinator`.
pub fn run(dir: &Path, common: &Common, a: SolveArgs) -> anyhow::Result<Finished> {
    let (request, settings, single) = checked(&a)?;
    let connect_timeout = frontend::settings::seconds("--connect-timeout", a.connect_timeout)?;
    let wait_for_workers = frontend::settings::seconds("--wait-for-workers", a.wait_for_workers)?;
    if let Some(url) = a.coordinator.as_deref().filter(|u| !u.is_empty()) {
        request.for_cluster(&Dialect::CLI)?;
        let opts = cluster::Options {
            client: common.client_config(url)?,
            table: frontend::table::on_cluster(
                settings.method,
                request.table.as_deref(),
                &Dialect::CLI,
            )?,
            settings,
            work: match (&a.position, &a.input) {
                (Some(p), _) => cluster::Positions::One(p.clone()),
                (None, i) => cluster::Positions::File(i.clone().unwrap_or_default()),
            },
            output: a
                .output
                .clone()
                .map_or(cluster::Output::Stdout, cluster::Output::File),
            format: a.format,
            resume: a.resume,
            connect_timeout: Some(connect_timeout).filter(|d| !d.is_zero()),
            wait_for_workers: Some(wait_for_workers).filter(|d| !d.is_zero()),
        };
        let s = remote_solve::run(opts, a.quiet)?;
        return Ok(Finished::new(s.errors, s.failure));
    }
    if a.resume {
        bail!("--resume continues the output file of a cluster run; use it with --coordinator");
    }
    let threads = request.local_threads(single.is_some(), &Dialect::CLI)?;
    let table = frontend::table::local(
        dir,
        a.method,
        request.table.as_deref(),
        &Dialect::CLI,
        &Bars::new(true),
    )?;
    let tables = Embedded::open(dir, &table, &Dialect::CLI, &Bars::new(!a.quiet))?;
    let local = Local {
        cfg: request.config(),
        pool: tables.executors(1, threads)?,
        threads,
        table,
        settings,
        out: crate::progress::output(a.output.as_deref(), a.input.as_deref())?,
    };
    match (single, &a.position) {
        (Some(position), Some(text)) => local.one(&a, position, text),
        _ => local.batch(&a),
    }
}

/// A local run, its tables open: what it asks, where it writes.
struct Local {
    cfg: coordinator::Config,
    pool: coordinator::Executors,
    threads: usize,
    table: String,
    settings: Settings,
    out: Box<dyn Write>,
}

impl Local {
    /// The command-line position, its record written as `solve` shows one (`--trace`:
    /// its search recorded).
    fn one(mut self, a: &SolveArgs, position: Position, text: &str) -> anyhow::Result<Finished> {
        let rec = if let Some(path) = &a.trace {
            if a.method != Method::Optimal {
                bail!("--trace records an optimal search (--method optimal)");
            }
            let run = crate::trace_cmd::TraceRun {
                path,
                input: text.to_string(),
                position,
                settings: self.settings.clone(),
                table: self.table.clone(),
                threads: self.threads,
                cfg: self.cfg,
            };
            crate::trace_cmd::solve_traced(self.pool, run)?
        } else {
            let line = InputLine {
                line: 1,
                input: text.to_string(),
                parsed: Ok(position),
            };
            let mut slow = SlowNote::new(a, &self.table);
            let mut tick = || {
                slow.tick(None);
                false
            };
            let interrupt = coordinator::Interrupt {
                every: Duration::from_millis(500),
                stop: &mut tick,
            };
            let (cfg, s, t) = (self.cfg.clone(), &self.settings, &self.table);
            frontend::embedded::one(cfg, &self.pool, s, t, line, Some(interrupt))?
        };
        let failure = output::write_single(&mut self.out, a.format, &rec, &self.settings)?;
        Ok(Finished::new(u64::from(failure.is_some()), failure))
    }

    /// The lines of `--input`, their records written as they are released, with a bar on
    /// a terminal (progress lines without one, when writing a file) and a closing line.
    fn batch(mut self, a: &SolveArgs) -> anyhow::Result<Finished> {
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
        let mut slow = SlowNote::new(a, &self.table);
        // Without a bar (stderr is no terminal: a log, a pipe, a CI job), a run writing a
        // file says how far it is every few seconds instead.
        let mut lines = (bar.is_none() && !a.quiet && a.output.is_some())
            .then(|| ProgressLines::new(&path, total));
        if a.format == Format::Csv {
            writeln!(self.out, "{CSV_HEADER}")?;
        }
        let start = Instant::now();
        let done = std::cell::Cell::new((0u64, 0u64));
        let mut tick = || {
            if let Some(l) = &mut lines {
                l.tick(done.get());
            }
            slow.seen(done.get().0);
            slow.tick(bar.as_ref());
            false
        };
        let out = &mut self.out;
        let settings = &self.settings;
        let tally = frontend::embedded::many(
            self.cfg.clone(),
            &self.pool,
            settings,
            &self.table,
            Source::Lines(reader),
            &mut |rec, _| {
                let text = output::render(&rec, settings, a.format);
                match (&bar, &a.output) {
                    // Records on the terminal the bar is drawn on: the bar steps aside
                    // for each, so that none is left behind above the results.
                    (Some(b), None) => b.suspend(|| {
                        out.write_all(text.as_bytes())?;
                        out.flush()
                    })?,
                    _ => out.write_all(text.as_bytes())?,
                }
                let (n, bytes) = done.get();
                let (n, bytes) = (n + 1, bytes + rec.input.len() as u64 + 1);
                done.set((n, bytes));
                if let Some(b) = &bar {
                    b.set_position(bytes);
                    let secs = start.elapsed().as_secs_f64().max(1e-9);
                    b.set_message(format!("{n} positions, {:.1}/s", n as f64 / secs));
                }
                Ok(())
            },
            Some(coordinator::Interrupt {
                every: Duration::from_millis(500),
                stop: &mut tick,
            }),
        )
        .with_context(|| format!("solving {}", path.display()))?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        self.out.flush()?;
        drop(self.out);
        if !a.quiet {
            print_summary(tally.records, tally.failed, tally.seconds);
        }
        Ok(Finished::new(tally.failed, None))
    }
}

/// What an optimal run with one of the smallest tables is told, once, when a position is
/// slow ([`frontend::table::cost_note`]): after [`SlowNote::AFTER`] with no record
/// released, not before (short scrambles are solved at once with any table).
struct SlowNote {
    /// The note, `None` once said (or when there is none to say).
    note: Option<String>,
    /// When the last record was released (or the run started).
    since: Instant,
    /// Records released so far.
    records: u64,
}

impl SlowNote {
    /// How long a position may take before the note is said.
    const AFTER: Duration = Duration::from_secs(10);

    fn new(a: &SolveArgs, table: &str) -> SlowNote {
        SlowNote {
            note: (!a.quiet && a.method == Method::Optimal)
                .then(|| frontend::table::cost_note(table))
                .flatten(),
            since: Instant::now(),
            records: 0,
        }
    }

    /// `records` released so far: a new one restarts the wait.
    fn seen(&mut self, records: u64) {
        if records != self.records {
            self.records = records;
            self.since = Instant::now();
        }
    }

    /// Says the note once the wait is past [`SlowNote::AFTER`] (above `bar`, when one is
    /// drawn).
    fn tick(&mut self, bar: Option<&indicatif::ProgressBar>) {
        if self.since.elapsed() < Self::AFTER {
            return;
        }
        if let Some(n) = self.note.take() {
            match bar {
                Some(b) => b.suspend(|| eprintln!("note: {n}")),
                None => eprintln!("note: {n}"),
            }
        }
    }
}

/// The flags checked and turned into settings, and the command-line position parsed:
/// what a local and a cluster run refuse alike, before any table is opened or any
/// connection made.
fn checked(a: &SolveArgs) -> anyhow::Result<(Request, Settings, Option<Position>)> {
    if a.input.is_some() == a.position.is_some() {
        bail!("give either a POSITION or --input FILE (not both, not neither)");
    }
    let request = Request {
        method: a.method,
        min_length: a.min_length.into(),
        max_length: a.max_length.map(u32::from),
        solutions: if a.all {
            None
        } else {
            Some(u32::try_from(a.solutions).unwrap_or(u32::MAX))
        },
        time_limit: a.time_limit,
        anytime: a.anytime,
        table: a.table.clone(),
        threads: a.threads,
        symmetry: !a.no_symmetry,
    };
    // Checked before any table is opened (or built), and before anything is written.
    let settings = request.settings(&Dialect::CLI)?;
    frontend::outfile::check_not_input(a.input.as_deref(), a.output.as_deref())?;
    let single = a
        .position
        .as_deref()
        .map(frontend::settings::position)
        .transpose()?;
    let cluster = a.coordinator.as_deref().is_some_and(|u| !u.is_empty());
    let single = crate::solve_to::position_to_solve(single, a.to.as_deref(), cluster)?;
    Ok((request, settings, single))
}

/// A run's progress as a line on stderr every [`ProgressLines::EVERY`], for a run whose
/// stderr is no terminal (no bar is drawn there).
struct ProgressLines {
    input: String,
    total: Option<u64>,
    start: Instant,
    last: Instant,
}

impl ProgressLines {
    /// How often a line is written.
    const EVERY: Duration = Duration::from_secs(5);

    fn new(input: &Path, total: Option<u64>) -> ProgressLines {
        let now = Instant::now();
        ProgressLines {
            input: input.display().to_string(),
            total,
            start: now,
            last: now,
        }
    }

    /// Writes a line if one is due: `done` is the records written and the input bytes
    /// they stand for.
    fn tick(&mut self, (records, bytes): (u64, u64)) {
        if self.last.elapsed() < Self::EVERY {
            return;
        }
        self.last = Instant::now();
        let secs = self.start.elapsed().as_secs_f64();
        let of = match self.total {
            Some(t) if t > 0 => format!(
                " ({:.0}% of {})",
                bytes as f64 * 100.0 / t as f64,
                self.input
            ),
            _ => String::new(),
        };
        eprintln!(
            "solve: {records} {} in {secs:.0} s{of}, {:.2} positions/s",
            crate::progress::plural(records, "position", "positions"),
            records as f64 / secs.max(1e-9)
        );
    }
}
