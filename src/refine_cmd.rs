//! `cubeswarm bench refine-trace`: a recorded trace given the node counts of its heavy
//! 5-move prefixes' 6- and 7-move descendants ([`benchtools::trace::DepthCells::finer`])
//! without recording the whole search again: each heavy prefix of each depth is searched
//! anew as its 7-move pieces, every piece its own subtree search on the trace's table
//! (jobs of [`Work::Subtrees`] run by [`worker::run_job_counted`] on N threads). What is
//! searched and how it is recorded is [`benchtools::refine`]'s; the trace's other counts
//! are left as they were.

use anyhow::{bail, ensure, Context as _};
use benchtools::refine::{
    finer_entries, heavy_prefixes, pieces, Refined, PIECE_LEN, REFINE_FRACTION,
};
use benchtools::trace::{Trace, VERSION};
use proto::{Job, JobId, JobOutput, Stop, SubtreeWork, Work};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tables::{Move, Position};
use worker::{Engines, StopToken, TableMemory};

/// Flags of `bench refine-trace`.
#[derive(clap::Args)]
pub struct RefineArgs {
    /// The trace to refine (`cubeswarm solve --trace FILE`; .gz read through gzip).
    #[arg(long)]
    trace: PathBuf,
    /// Where the refined trace goes (the same file may be given).
    #[arg(long)]
    output: PathBuf,
    /// Search threads.
    #[arg(long, default_value_t = frontend::settings::cores())]
    threads: usize,
    /// The share of its depth's nodes a recorded 5-move prefix must hold to be refined,
    /// and a 6-move one to have its 7-move children kept [default: 1/65536].
    #[arg(long, default_value_t = REFINE_FRACTION)]
    fraction: f64,
    /// Refine only these depths (comma-separated) [default: every depth of the trace].
    #[arg(long, value_delimiter = ',')]
    depths: Vec<u8>,
    /// Also search each refined prefix again whole and as its 6-move children, and print
    /// their sums beside the recorded count and the 7-move pieces' (three times the
    /// search; nothing more is recorded).
    #[arg(long)]
    compare: bool,
}

/// How often a progress line is written.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Runs `bench refine-trace` with the tables of `dir`.
pub fn run(dir: &Path, a: RefineArgs) -> anyhow::Result<()> {
    ensure!(
        a.fraction.is_finite() && a.fraction > 0.0 && a.fraction <= 1.0,
        "--fraction must be above 0 and at most 1"
    );
    let threads = frontend::settings::threads(Some(a.threads), &frontend::Dialect::CLI)?;
    let mut trace = Trace::load(&a.trace)?;
    let table = trace.header.table.clone();
    let position = frontend::settings::position(&trace.header.position)?;
    // The trace names its position as given: a run with `--to` searched another one.
    for s in trace.solutions() {
        ensure!(
            position.is_solved_by(&s),
            "{}: the solution {} does not solve the trace's position (recorded with --to?)",
            a.trace.display(),
            tables::format_moves(&s)
        );
    }
    let depths = match a.depths.is_empty() {
        true => trace.depths.keys().copied().collect(),
        false => a.depths.clone(),
    };
    for d in &depths {
        ensure!(
            trace.depths.contains_key(d),
            "{} records no depth {d} (it holds {:?})",
            a.trace.display(),
            trace.depths.keys().collect::<Vec<_>>()
        );
    }
    let t = Instant::now();
    let engines =
        Engines::open(dir, &[table.as_str()], TableMemory::HugePages).with_context(|| {
            format!(
                "opening table {table} in {} (build it with `cubeswarm tables build {table}`)",
                dir.display()
            )
        })?;
    eprintln!("table {table} open in {:.1} s", t.elapsed().as_secs_f64());
    println!(
        "refining {} (table {table}) on {threads} threads: 5-move prefixes of at least {:.3e} of their depth's nodes, as their {PIECE_LEN}-move pieces",
        a.trace.display(),
        a.fraction
    );
    print!("depth  complete  prefixes  pieces  recorded nodes  searched nodes  ratio  entries (5, 6 moves)  seconds");
    println!(
        "{}",
        match a.compare {
            true => "  whole again  ratio  as 6-move  ratio",
            false => "",
        }
    );
    let start = Instant::now();
    for d in depths {
        let cells = &trace.depths[&d];
        let heavy = heavy_prefixes(cells, a.fraction);
        let t = Instant::now();
        let search = Search {
            engines: &engines,
            table: &table,
            position,
            depth: d,
            threads,
            compare: a.compare,
        };
        let counted = search.run(&heavy)?;
        let recorded: u64 = heavy.iter().map(|(_, c)| c).sum();
        let refined: Vec<Refined> = (heavy.iter().zip(&counted))
            .map(|((prefix, recorded), c)| Refined {
                prefix: prefix.clone(),
                recorded: *recorded,
                pieces: c.pieces.clone(),
            })
            .collect();
        let pieces = refined.iter().map(|r| r.pieces.len()).sum::<usize>();
        let searched: u64 = (refined.iter())
            .flat_map(|r| r.pieces.iter().map(|(_, c)| c))
            .sum();
        let entries = finer_entries(&refined, cells.total(), a.fraction);
        let ratio = |n: u64| n as f64 / recorded.max(1) as f64;
        let fives = entries.iter().filter(|(p, _)| p.split(' ').count() == 5);
        let fives = fives.count();
        print!(
            "{d:>5} {:>9} {:>9} {:>7} {:>15} {:>14} {:>6.4} {:>9} {:>11} {:>8.1}",
            cells.complete,
            heavy.len(),
            pieces,
            recorded,
            searched,
            ratio(searched),
            fives,
            entries.len() - fives,
            t.elapsed().as_secs_f64()
        );
        if a.compare {
            let whole: u64 = counted.iter().map(|c| c.whole).sum();
            let sixes: u64 = counted.iter().map(|c| c.sixes).sum();
            print!(
                " {whole:>12} {:>6.4} {sixes:>10} {:>6.4}",
                ratio(whole),
                ratio(sixes)
            );
        }
        println!();
        if let Some(cells) = trace.depths.get_mut(&d) {
            cells.finer = entries;
        }
    }
    trace.header.version = VERSION;
    trace
        .save(&a.output)
        .with_context(|| format!("writing {}", a.output.display()))?;
    println!(
        "refined in {:.1} s -> {}",
        start.elapsed().as_secs_f64(),
        a.output.display()
    );
    Ok(())
}

/// The searches of one depth.
struct Search<'a> {
    /// The opened table.
    engines: &'a Engines,
    /// Its name.
    table: &'a str,
    /// The trace's position.
    position: Position,
    /// The depth searched.
    depth: u8,
    /// Threads searching at once.
    threads: usize,
    /// Whether each prefix is also searched whole and as its 6-move children.
    compare: bool,
}

/// What the searches of one heavy prefix counted.
struct Counted {
    /// The nodes of each of its [`PIECE_LEN`]-move pieces.
    pieces: Vec<(Vec<Move>, u64)>,
    /// Its nodes searched whole (0 unless compared).
    whole: u64,
    /// The sum of its 6-move children's nodes, each searched whole (0 unless compared).
    sixes: u64,
}

impl Search<'_> {
    /// The nodes of every [`PIECE_LEN`]-move piece of each of `heavy` (5-move prefixes,
    /// heaviest first, taken in that order by the first free thread), in `heavy`'s
    /// order; progress on stderr.
    fn run(&self, heavy: &[(Vec<Move>, u64)]) -> anyhow::Result<Vec<Counted>> {
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let nodes = AtomicU64::new(0);
        let t = Instant::now();
        let mut by_prefix: Vec<(usize, anyhow::Result<Counted>)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..self.threads.min(heavy.len()))
                .map(|_| {
                    s.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some((p, _)) = heavy.get(i) else {
                                return out;
                            };
                            out.push((i, self.pieces(p, &nodes)));
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            let mut last = Instant::now();
            while !workers.iter().all(|w| w.is_finished()) {
                std::thread::sleep(Duration::from_millis(50));
                if last.elapsed() >= PROGRESS_EVERY {
                    last = Instant::now();
                    eprintln!(
                        "depth {}: {}/{} prefixes, {:.3e} nodes, {:.0} s",
                        self.depth,
                        done.load(Ordering::Relaxed),
                        heavy.len(),
                        nodes.load(Ordering::Relaxed) as f64,
                        t.elapsed().as_secs_f64()
                    );
                }
            }
            workers
                .into_iter()
                .flat_map(|w| match w.join() {
                    Ok(out) => out,
                    Err(_) => vec![(usize::MAX, Err(anyhow::anyhow!("a search thread panicked")))],
                })
                .collect()
        });
        by_prefix.sort_by_key(|(i, _)| *i);
        by_prefix.into_iter().map(|(_, r)| r).collect()
    }

    /// The nodes of each [`PIECE_LEN`]-move piece of `prefix`, each its own subtree
    /// search (one job; its nodes added to `nodes` as they finish), and where compared
    /// those of `prefix` whole and of its 6-move children.
    fn pieces(&self, prefix: &[Move], nodes: &AtomicU64) -> anyhow::Result<Counted> {
        let list = pieces(prefix, PIECE_LEN);
        let mut asked = list.clone();
        if self.compare {
            asked.push(prefix.to_vec());
            asked.extend(pieces(prefix, prefix.len() + 1));
        }
        let job = Job {
            id: JobId(0),
            attempt: 1,
            table: self.table.to_string(),
            work: Work::Subtrees(SubtreeWork {
                position: self.position,
                depth: self.depth,
                prefixes: asked.clone(),
                max_solutions: None,
                time_limit_ms: None,
                // Each piece is a prefix of its own, searched whole.
                pieces: 0,
                split: false,
            }),
        };
        let text = tables::format_moves(prefix);
        let r = worker::run_job_counted(self.engines, &job, &StopToken::new(), nodes);
        let rs = match r.output {
            Ok(JobOutput::Subtrees(rs)) => rs,
            Ok(JobOutput::Batch(_)) => bail!("{text}: a subtree job answered as a batch"),
            Err(e) => bail!(
                "searching the pieces of {text} at depth {}: {e}",
                self.depth
            ),
        };
        ensure!(
            rs.len() == asked.len()
                && rs
                    .iter()
                    .enumerate()
                    .all(|(i, r)| r.prefix as usize == i && r.stop == Stop::Exhausted),
            "{text}: {} of {} subtrees searched to their end",
            rs.iter().filter(|r| r.stop == Stop::Exhausted).count(),
            asked.len()
        );
        let n = list.len();
        Ok(Counted {
            pieces: list.into_iter().zip(rs.iter().map(|r| r.nodes)).collect(),
            whole: rs.get(n).map_or(0, |r| r.nodes),
            sixes: rs.iter().skip(n + 1).map(|r| r.nodes).sum(),
        })
    }
}
