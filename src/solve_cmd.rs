//! `cubeswarm solve`: one position from the command line, or a file of them.

use crate::batch::{self, BatchOptions};
use crate::bench_cmd::default_threads;
use crate::input::parse_position;
use crate::output::{Format, Record, Solved, CSV_HEADER};
use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tables::{format_moves, Cube};

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
}

/// Opens the H48 solver on `table`, or the largest present, building h48h0k4 if none is.
pub fn open_optimal(dir: &Path, table: Option<&str>) -> anyhow::Result<worker::h48::H48Solver> {
    let name = match table {
        Some(t) => t.to_string(),
        None => match worker::h48::largest_available(dir) {
            Some(t) => t,
            None => {
                eprintln!(
                    "no H48 table in {}; building h48h0k4 (about 60 MB, once)…",
                    dir.display()
                );
                worker::h48::build_table(dir, "h48h0k4", true)?;
                "h48h0k4".to_string()
            }
        },
    };
    if !worker::h48::table_names().contains(&name) {
        anyhow::bail!("unknown H48 table {name:?}; `cubeswarm tables list` shows the known ones");
    }
    if table.is_some() && !tables::tablefile::table_path(dir, &name).exists() {
        eprintln!("table {name} is not in {}; building it…", dir.display());
        worker::h48::build_table(dir, &name, true)?;
    }
    worker::h48::H48Solver::open(dir, &name).with_context(|| format!("opening table {name}"))
}

enum Solver {
    Optimal(worker::h48::H48Solver),
    TwoPhase(worker::twophase::TwoPhaseTables),
}

struct Settings {
    solutions: Option<usize>,
    min_length: u8,
    max_length: u8,
    threads_per_position: usize,
    time_limit: Option<Duration>,
}

fn solve_one(solver: &Solver, s: &Settings, cube: &Cube) -> Result<Solved, String> {
    let t0 = Instant::now();
    match solver {
        Solver::Optimal(h) => {
            let opts = worker::h48::OptimalOptions {
                max_solutions: s.solutions,
                min_length: s.min_length,
                max_length: s.max_length,
                threads: s.threads_per_position,
                time_limit: s.time_limit,
                cancel: None,
            };
            let r = h.solve(cube, &opts).map_err(|e| e.to_string())?;
            let note = if r.timed_out {
                Some(match r.depth_exhausted {
                    Some(d) => format!("time limit reached; no solution of {d} moves or fewer"),
                    None => "time limit reached".to_string(),
                })
            } else if r.solutions.is_empty() {
                Some(format!("no solution of at most {} moves", s.max_length))
            } else {
                None
            };
            Ok(Solved {
                lengths: r.solutions.iter().map(Vec::len).collect(),
                solutions: r.solutions.iter().map(|m| format_moves(m)).collect(),
                optimal: r.optimal,
                nodes: r.nodes,
                millis: t0.elapsed().as_secs_f64() * 1e3,
                note,
            })
        }
        Solver::TwoPhase(t) => {
            let opts = worker::twophase::TwoPhaseOptions {
                max_length: s.max_length,
                max_solutions: s.solutions.unwrap_or(1),
                time_limit: s.time_limit,
                ..Default::default()
            };
            let mut r = worker::twophase::solve(t, cube, &opts).map_err(|e| e.to_string())?;
            r.solutions.sort_by_key(|x| x.moves.len());
            Ok(Solved {
                lengths: r.solutions.iter().map(|x| x.moves.len()).collect(),
                optimal: r.solutions.first().is_some_and(|x| x.optimal),
                solutions: r.solutions.iter().map(|x| format_moves(&x.moves)).collect(),
                nodes: r.nodes,
                millis: t0.elapsed().as_secs_f64() * 1e3,
                note: None,
            })
        }
    }
}

/// Runs `solve`.
pub fn run(dir: &Path, a: SolveArgs) -> anyhow::Result<()> {
    let threads = a.threads.unwrap_or_else(default_threads).max(1);
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
        Some(p) => Some(parse_position(p).with_context(|| format!("position {p:?}"))?),
        None => None,
    };
    let solver = match a.method {
        Method::Optimal => Solver::Optimal(open_optimal(dir, a.table.as_deref())?),
        Method::Twophase => Solver::TwoPhase(
            worker::twophase::TwoPhaseTables::open_or_build(dir, !a.quiet)
                .with_context(|| format!("two-phase tables in {}", dir.display()))?,
        ),
    };
    let settings = Settings {
        solutions: if a.all { None } else { Some(a.solutions) },
        min_length: a.min_length,
        max_length: a.max_length.unwrap_or(20),
        // One position: all threads on it. A batch: positions side by side, one thread each.
        threads_per_position: if batch_mode { 1 } else { threads },
        time_limit: a.time_limit.map(Duration::from_secs_f64),
    };
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => {
            Box::new(BufWriter::new(File::create(p).with_context(|| {
                format!("cannot create output file {}", p.display())
            })?))
        }
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    if let (Some(cube), Some(text)) = (single, &a.position) {
        let rec = Record {
            id: 1,
            input: text.clone(),
            outcome: solve_one(&solver, &settings, &cube),
        };
        let failure = match &rec.outcome {
            Err(e) => Some(e.clone()),
            Ok(s) if s.solutions.is_empty() => {
                Some(s.note.clone().unwrap_or_else(|| "no solution found".into()))
            }
            Ok(_) => None,
        };
        // Machine-readable formats always get their record; a person reading text gets
        // the failure once, on stderr.
        if failure.is_none() || a.format != Format::Text {
            if a.format == Format::Csv {
                writeln!(out, "{CSV_HEADER}")?;
            }
            out.write_all(rec.render(a.format).as_bytes())?;
        }
        out.flush()?;
        if let Some(e) = failure {
            bail!("{e}");
        }
        return Ok(());
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
    let opts = BatchOptions {
        threads,
        format: a.format,
        progress: !a.quiet,
        total_bytes: total,
    };
    let stats = batch::run(reader, &mut out, &opts, |id, text| Record {
        id,
        input: text.to_string(),
        outcome: parse_position(text)
            .map_err(|e| e.to_string())
            .and_then(|c| solve_one(&solver, &settings, &c)),
    })
    .with_context(|| format!("reading {}", path.display()))?;
    drop(out);
    if !a.quiet {
        eprintln!(
            "{} positions ({} errors) in {:.2} s: {:.1} positions/s",
            stats.positions,
            stats.errors,
            stats.seconds,
            stats.positions as f64 / stats.seconds.max(1e-9)
        );
    }
    Ok(())
}
