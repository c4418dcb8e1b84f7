//! `cubeswarm solve --coordinator URL`: the cluster client of [`frontend::cluster`],
//! with a progress bar.
//!
//! # Layout
//! - [`run`]: the library's run, the summary.
//! - `View`: the progress bar (whole cluster: positions per second, workers busy) or, for
//!   one position, the deepening's depth and proof so far; the library's
//!   [`Observer`].

use crate::progress::{print_summary, progress_bar};

use frontend::cluster::{self, ClientError, Notice, Observer, Options, Positions, Summary};
use proto::wire as w;

use std::time::{Duration, Instant};

/// Runs `solve` on the cluster of `opts.client`: prints what a local `solve` prints, and
/// fails the way it fails.
pub fn run(opts: Options, quiet: bool) -> anyhow::Result<Summary> {
    let total = match &opts.work {
        Positions::File(p) if p.as_os_str() != "-" => std::fs::metadata(p).ok().map(|m| m.len()),
        _ => None,
    };
    let single = matches!(opts.work, Positions::One(_));
    let mut view = if single {
        View::single(!quiet)
    } else {
        View::batch(!quiet, total)
    };
    view.quiet = quiet;
    let r = cluster::run(&opts, &mut view);
    view.finish();
    let summary = match (r, &opts.work) {
        (Ok(s), _) => s,
        // What went wrong with the cluster, for a file, names the file as locally.
        (
            Err(
                e @ (ClientError::Refused { .. }
                | ClientError::GaveUp { .. }
                | ClientError::OutOfOrder { .. }
                | ClientError::BadRecord(_)
                | ClientError::Write(_)),
            ),
            Positions::File(p),
        ) => return Err(anyhow::Error::new(e).context(format!("solving {}", p.display()))),
        (Err(e), _) => return Err(e.into()),
    };
    if !quiet && !single {
        print_summary(summary.records, summary.errors, summary.seconds);
    }
    Ok(summary)
}

/// What the user sees on stderr while the cluster works (nothing when not a terminal or
/// with --quiet; warnings are still shown).
struct View {
    /// The bar (scramble set) or spinner (one position).
    bar: Option<indicatif::ProgressBar>,
    /// One position: the spinner shows the deepening.
    single: bool,
    /// No notices of a resume either.
    quiet: bool,
    /// When the run began (positions per second).
    start: Instant,
    /// Input bytes done (records received and lines skipped as already done).
    bytes: u64,
    /// Records received by this run.
    records: u64,
    /// Workers busy and connected, from the last Progress.
    workers: (u32, u32),
}

impl View {
    fn batch(show: bool, total: Option<u64>) -> View {
        View {
            bar: progress_bar(show, total),
            single: false,
            quiet: false,
            start: Instant::now(),
            bytes: 0,
            records: 0,
            workers: (0, 0),
        }
    }

    fn single(show: bool) -> View {
        let bar = progress_bar(show, None);
        if let Some(b) = &bar {
            b.set_message("waiting for the coordinator");
            b.enable_steady_tick(Duration::from_millis(200));
        }
        View {
            bar,
            single: true,
            quiet: false,
            start: Instant::now(),
            bytes: 0,
            records: 0,
            workers: (0, 0),
        }
    }

    /// The scramble set's bar: input bytes done, positions per second, workers busy.
    fn show_batch(&self) {
        let Some(b) = &self.bar else { return };
        b.set_position(self.bytes);
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let (busy, all) = self.workers;
        b.set_message(format!(
            "{} positions, {:.1}/s, {busy}/{all} workers busy",
            self.records,
            self.records as f64 / secs
        ));
    }

    /// Runs `f` (a warning) with the bar out of the way.
    fn suspend(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Observer for View {
    fn record(&mut self, records: u64, bytes: u64) {
        self.records = records;
        self.bytes = bytes;
        if !self.single {
            self.show_batch();
        }
    }

    fn progress(&mut self, p: &w::Progress, proved_empty: Option<u32>) {
        self.workers = (p.workers_busy, p.workers);
        let Some(b) = &self.bar else { return };
        if self.single {
            let proof = proved_empty
                .map(|e| format!(", proved empty through {e}"))
                .unwrap_or_default();
            b.set_message(format!(
                "depth {}{proof}, {} nodes, {}/{} workers busy",
                p.depth, p.nodes, p.workers_busy, p.workers
            ));
        } else {
            self.show_batch();
        }
    }

    fn notice(&mut self, notice: &Notice) {
        match notice {
            Notice::Resumed { .. } if self.quiet => {}
            Notice::Resumed { .. } => eprintln!("{notice}"),
            Notice::Reconnecting { .. } | Notice::AskingAgain { .. } => {
                self.suspend(|| tracing::warn!("{notice}"))
            }
        }
    }
}
