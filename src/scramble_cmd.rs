//! `cubeswarm scramble`: random-state scrambles as the WCA makes them ([`worker::scramble`]:
//! uniformly random states at least two moves from solved, each written as a two-phase
//! solution of its inverse), reproducible by seed, made on every core and written in
//! index order.

use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use worker::Scramble;

/// The CSV header line.
const CSV_HEADER: &str = "index,scramble,facelets,length";

/// Scrambles made between two writes: enough to keep every thread busy, few enough that
/// the bar moves and memory stays small whatever the count.
const CHUNK: u64 = 1024;

/// Output format of `scramble`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScrambleFormat {
    /// One scramble per line (what `solve --input` reads).
    Text,
    /// One JSON object per line: index, scramble, facelets of its state, length.
    Jsonl,
    /// Comma-separated values with a header line: index, scramble, facelets, length.
    Csv,
}

/// Flags of `scramble`.
#[derive(Args)]
pub struct ScrambleArgs {
    /// How many scrambles.
    #[arg(long, short = 'n', default_value_t = 1)]
    count: u64,
    /// Seed: the same seed gives the same scrambles, whatever the thread count [default: a
    /// random seed, printed on stderr].
    #[arg(long)]
    seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScrambleFormat::Text)]
    format: ScrambleFormat,
    /// Write the scrambles to FILE instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Threads [default: all cores].
    #[arg(long, short = 't')]
    threads: Option<usize>,
    /// No progress bar and no closing line.
    #[arg(long)]
    quiet: bool,
}

/// Runs `scramble`: the two-phase tables of `dir` (built first if missing), then `count`
/// scrambles of the seed, written as they are made, in index order.
pub fn run(dir: &Path, a: ScrambleArgs) -> anyhow::Result<()> {
    if a.count == 0 {
        bail!("--count must be at least 1");
    }
    // Never more threads than scrambles.
    let threads = frontend::settings::threads(a.threads, &frontend::Dialect::CLI)?
        .min(usize::try_from(a.count).unwrap_or(usize::MAX));
    let seed = match a.seed {
        Some(s) => s,
        None => {
            let s = frontend::scramble::random_seed();
            eprintln!("seed {s} (--seed {s} makes these scrambles again)");
            s
        }
    };
    let scrambler = frontend::scramble::scrambler(
        dir,
        &frontend::Dialect::CLI,
        &crate::progress::Bars::new(!a.quiet),
    )?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("cubeswarm-scramble-{i}"))
        .build()
        .context("starting the scramble threads")?;
    let mut out = crate::progress::output(a.output.as_deref(), None)?;
    let bar = progress_bar(!a.quiet, a.count);
    let start = Instant::now();
    let mut written = 0u64;
    let mut text = String::new();
    if a.format == ScrambleFormat::Csv {
        text.push_str(CSV_HEADER);
        text.push('\n');
    }
    while written < a.count {
        let end = written.saturating_add(CHUNK).min(a.count);
        let batch = pool.install(|| scrambler.scrambles(seed, written..end))?;
        for s in &batch {
            text.push_str(&render(s, a.format));
        }
        if !write_or_closed(&mut out, &text)? {
            return Ok(());
        }
        text.clear();
        written = end;
        if let Some(b) = &bar {
            b.set_position(written);
        }
    }
    if !write_or_closed(&mut out, "")? {
        return Ok(());
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !a.quiet {
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "{written} {} in {secs:.2} s: {:.1} scrambles/s on {threads} {}",
            crate::progress::plural(written, "scramble", "scrambles"),
            written as f64 / secs.max(1e-9),
            crate::progress::plural(threads as u64, "thread", "threads"),
        );
    }
    Ok(())
}

/// Writes `text` and flushes; `false` when the reader went away (a closed pipe, as in
/// `cubeswarm scramble -n 1000 | head`), which ends the run quietly.
fn write_or_closed(out: &mut dyn Write, text: &str) -> anyhow::Result<bool> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e).context("writing the scrambles"),
    }
}

/// One scramble as a line of `format` (newline included). CSV fields need no quotes:
/// moves, spaces, apostrophes and facelet letters only.
fn render(s: &Scramble, format: ScrambleFormat) -> String {
    let moves = s.text();
    match format {
        ScrambleFormat::Text => format!("{moves}\n"),
        ScrambleFormat::Jsonl => {
            let v = serde_json::json!({
                "index": s.index,
                "scramble": moves,
                "facelets": s.facelets(),
                "length": s.moves.len(),
            });
            format!("{v}\n")
        }
        ScrambleFormat::Csv => format!("{},{moves},{},{}\n", s.index, s.facelets(), s.moves.len()),
    }
}

/// A bar over `count` scrambles on stderr, when `show` and stderr is a terminal.
fn progress_bar(show: bool, count: u64) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !show || !std::io::stderr().is_terminal() {
        return None;
    }
    let style = indicatif::ProgressStyle::with_template(
        "scrambles [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} (eta {eta})",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    Some(indicatif::ProgressBar::new(count).with_style(style))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables::{parse_moves, Cube};

    fn sample() -> Scramble {
        let moves = parse_moves("R U2 F' D").unwrap();
        Scramble {
            index: 3,
            state: Cube::from_moves(&moves),
            moves,
        }
    }

    #[test]
    fn records_carry_index_scramble_facelets_and_length() {
        let s = sample();
        assert_eq!(render(&s, ScrambleFormat::Text), "R U2 F' D\n");
        let line = render(&s, ScrambleFormat::Jsonl);
        let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(v["index"], 3);
        assert_eq!(v["scramble"], "R U2 F' D");
        assert_eq!(v["facelets"], s.facelets());
        assert_eq!(v["length"], 4);
        let csv = render(&s, ScrambleFormat::Csv);
        assert_eq!(csv, format!("3,R U2 F' D,{},4\n", s.facelets()));
        assert_eq!(csv.trim().split(',').count(), CSV_HEADER.split(',').count());
    }

    #[test]
    fn a_closed_reader_ends_the_run_and_other_errors_are_errors() {
        struct Fails(std::io::ErrorKind);
        impl Write for Fails {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(self.0.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let closed = write_or_closed(&mut Fails(std::io::ErrorKind::BrokenPipe), "x");
        assert!(!closed.unwrap());
        let full = write_or_closed(&mut Fails(std::io::ErrorKind::StorageFull), "x");
        assert!(full.is_err());
        assert!(write_or_closed(&mut Vec::new(), "x").unwrap());
    }

    #[test]
    fn random_seeds_differ() {
        assert_ne!(
            frontend::scramble::random_seed(),
            frontend::scramble::random_seed()
        );
    }
}
