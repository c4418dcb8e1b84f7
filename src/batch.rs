//! Streaming many positions through a solver: any number of lines, bounded memory, all
//! cores, output in input order.
//!
//! A reader hands `(line number, text)` to `threads` worker threads through a bounded
//! channel; each worker solves and sends its rendered record to the writer, which keeps a
//! small reorder buffer and writes records in input order. The reader may run at most
//! `window` lines ahead of the writer, so memory stays bounded even when one position is
//! slow, and one bad line only produces its own error record.

use crate::input::{classify, Line};
use crate::output::{Format, Record, CSV_HEADER};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Counts of what a batch did.
#[derive(Debug, Default, Clone, Copy)]
pub struct BatchStats {
    /// Position lines read.
    pub positions: u64,
    /// Lines that produced an error record.
    pub errors: u64,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// Options of [`run`].
pub struct BatchOptions {
    /// Worker threads solving positions side by side.
    pub threads: usize,
    /// Output format.
    pub format: Format,
    /// Show a progress bar on stderr (only drawn on a terminal).
    pub progress: bool,
    /// Total input size in bytes, for the progress bar's ETA, if known.
    pub total_bytes: Option<u64>,
}

struct Window {
    next_to_write: Mutex<u64>,
    advanced: Condvar,
}

/// Solves every position line of `input` with `solve` and writes the records to `output`.
/// `solve(id, text)` must not panic on bad input: it returns an error record instead.
pub fn run<R, W, F>(
    input: R,
    mut output: W,
    opts: &BatchOptions,
    solve: F,
) -> std::io::Result<BatchStats>
where
    R: BufRead + Send,
    W: Write,
    F: Fn(u64, &str) -> Record + Sync,
{
    let start = Instant::now();
    let threads = opts.threads.max(1);
    let window = (threads as u64) * 64;
    let win = Arc::new(Window {
        next_to_write: Mutex::new(0),
        advanced: Condvar::new(),
    });
    let (job_tx, job_rx) = mpsc::sync_channel::<(u64, u64, String)>(threads * 4);
    let job_rx = Arc::new(Mutex::new(job_rx));
    let (res_tx, res_rx) = mpsc::channel::<(u64, Record)>();
    let bar = progress_bar(opts);
    let mut stats = BatchStats::default();
    if opts.format == Format::Csv {
        writeln!(output, "{CSV_HEADER}")?;
    }
    let read_result: std::io::Result<()> = std::thread::scope(|scope| {
        // Reader.
        let win_r = Arc::clone(&win);
        let reader = scope.spawn(move || -> std::io::Result<()> {
            let mut seq = 0u64;
            for (n, line) in input.lines().enumerate() {
                let line = match line {
                    Ok(l) => l,
                    Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                        // Not UTF-8: still a line of its own, reported as an error below.
                        "\u{fffd}<line is not valid UTF-8>".to_string()
                    }
                    Err(e) => return Err(e),
                };
                let Line::Position(text) = classify(&line) else {
                    continue;
                };
                {
                    let mut next = win_r
                        .next_to_write
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    while seq >= *next + window {
                        next = win_r.advanced.wait(next).unwrap_or_else(|p| p.into_inner());
                    }
                }
                if job_tx.send((seq, n as u64 + 1, text.to_string())).is_err() {
                    break;
                }
                seq += 1;
            }
            Ok(())
        });
        // Workers.
        for _ in 0..threads {
            let rx = Arc::clone(&job_rx);
            let tx = res_tx.clone();
            let solve = &solve;
            scope.spawn(move || loop {
                let job = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok((seq, id, text)) = job else { break };
                let rec = if text.starts_with('\u{fffd}') {
                    Record {
                        id,
                        input: String::new(),
                        outcome: Err("line is not valid UTF-8".into()),
                    }
                } else {
                    solve(id, &text)
                };
                if tx.send((seq, rec)).is_err() {
                    break;
                }
            });
        }
        drop(res_tx);
        // Writer (this thread).
        let mut pending: BTreeMap<u64, Record> = BTreeMap::new();
        let mut next = 0u64;
        let mut write_err = None;
        for (seq, rec) in res_rx.iter() {
            pending.insert(seq, rec);
            while let Some(rec) = pending.remove(&next) {
                stats.positions += 1;
                if rec.outcome.is_err() {
                    stats.errors += 1;
                }
                if write_err.is_none() {
                    if let Err(e) = output.write_all(rec.render(opts.format).as_bytes()) {
                        write_err = Some(e);
                    }
                }
                next += 1;
                *win.next_to_write.lock().unwrap_or_else(|p| p.into_inner()) = next;
                win.advanced.notify_all();
                if let Some(b) = &bar {
                    b.inc(rec.input.len() as u64 + 1);
                    let secs = start.elapsed().as_secs_f64().max(1e-9);
                    b.set_message(format!(
                        "{} positions, {:.1}/s",
                        stats.positions,
                        stats.positions as f64 / secs
                    ));
                }
            }
        }
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("input reader panicked")));
        match write_err {
            Some(e) => Err(e),
            None => read,
        }
    });
    read_result?;
    output.flush()?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(stats)
}

fn progress_bar(opts: &BatchOptions) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !opts.progress || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = match opts.total_bytes {
        Some(n) => indicatif::ProgressBar::new(n).with_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {percent}% ETA {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        ),
        None => indicatif::ProgressBar::new_spinner(),
    };
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Solved;

    fn fake_solve(id: u64, text: &str) -> Record {
        let outcome = match crate::input::parse_position(text) {
            Ok(_) => Ok(Solved {
                solutions: vec![text.to_string()],
                lengths: vec![text.split_whitespace().count()],
                optimal: false,
                nodes: 0,
                millis: 0.0,
                note: None,
            }),
            Err(e) => Err(e.to_string()),
        };
        // Make later lines finish first sometimes, to exercise reordering.
        if id % 3 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Record {
            id,
            input: text.to_string(),
            outcome,
        }
    }

    #[test]
    fn output_in_input_order_with_errors_in_place() {
        let mut input = String::from("# header comment\n\n");
        for i in 0..500 {
            if i % 50 == 7 {
                input.push_str("R U X\n");
            } else {
                input.push_str(&format!("R{}\n", ["", "2", "'"][i % 3]));
            }
        }
        let mut out = Vec::new();
        let opts = BatchOptions {
            threads: 4,
            format: Format::Jsonl,
            progress: false,
            total_bytes: None,
        };
        let stats = run(input.as_bytes(), &mut out, &opts, fake_solve).unwrap();
        assert_eq!(stats.positions, 500);
        assert_eq!(stats.errors, 10);
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 500);
        for (k, v) in lines.iter().enumerate() {
            assert_eq!(
                v["id"],
                k as u64 + 3,
                "line ids follow the input's line numbers"
            );
            assert_eq!(v.get("error").is_some(), k % 50 == 7);
        }
    }
}
