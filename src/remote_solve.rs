//! `cubeswarm solve --coordinator URL`: the cluster client of [`frontend::cluster`],
//! with a progress bar.
//!
//! # Layout
//! - [`run`]: the table to ask for (by the catalog), the library's run, the summary.
//! - `View`: the progress bar (whole cluster: positions per second, workers busy) or, for
//!   one position, the deepening's depth and proof so far; the library's
//!   [`Observer`].

use crate::solve_cmd;
use anyhow::anyhow;
use frontend::cluster::{self, ClientError, Notice, Observer, Options, Summary, TableChoice, Work};
use proto::wire as w;
use proto::Method;
use std::time::{Duration, Instant};

/// Runs `solve` on the cluster of `opts.client` with `table` (`--table`, checked against
/// the catalog; none: the largest a connected worker holds): prints what a local `solve`
/// prints, and fails the way it fails.
pub fn run(mut opts: Options, table: Option<&str>, quiet: bool) -> anyhow::Result<Summary> {
    opts.table = choose_table(opts.settings.method, table)?;
    let total = match &opts.work {
        Work::File(p) if p.as_os_str() != "-" => std::fs::metadata(p).ok().map(|m| m.len()),
        _ => None,
    };
    let single = matches!(opts.work, Work::One(_));
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
            Work::File(p),
        ) => return Err(anyhow::Error::new(e).context(format!("solving {}", p.display()))),
        (Err(e), _) => return Err(e.into()),
    };
    if !quiet && !single {
        solve_cmd::print_summary(summary.records, summary.errors, summary.seconds);
    }
    Ok(summary)
}

/// The table every job of the request needs: "twophase", the `--table` asked for, or the
/// H48 tables by the catalog's rule, largest first (the first a connected worker holds).
fn choose_table(method: Method, table: Option<&str>) -> anyhow::Result<TableChoice> {
    if method == Method::TwoPhase {
        return Ok(TableChoice::Named(proto::catalog::TWOPHASE.to_string()));
    }
    if let Some(t) = table {
        return match proto::catalog::find(t) {
            Some(e) if e.method == Method::Optimal => Ok(TableChoice::Named(t.to_string())),
            _ => Err(anyhow!(
                "unknown H48 table {t:?}; `cubeswarm tables list` shows the known ones"
            )),
        };
    }
    let mut order: Vec<String> = Vec::new();
    while let Some(t) = proto::catalog::largest_h48_where(|e| !order.iter().any(|n| n == e.name)) {
        order.push(t.to_string());
    }
    Ok(TableChoice::FirstHeld(order))
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
            bar: solve_cmd::progress_bar(show, total),
            single: false,
            quiet: false,
            start: Instant::now(),
            bytes: 0,
            records: 0,
            workers: (0, 0),
        }
    }

    fn single(show: bool) -> View {
        let bar = solve_cmd::progress_bar(show, None);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_asked_for_follows_the_catalog() {
        assert_eq!(
            choose_table(Method::TwoPhase, Some("h48h0k4")).unwrap(),
            TableChoice::Named("twophase".into())
        );
        assert_eq!(
            choose_table(Method::Optimal, Some("h48h1k2")).unwrap(),
            TableChoice::Named("h48h1k2".into())
        );
        for bad in ["h48h99k2", "twophase"] {
            let e = choose_table(Method::Optimal, Some(bad)).unwrap_err();
            assert!(e.to_string().contains("unknown H48 table"), "{e}");
        }
        // Largest first, by the catalog's one rule: the first a worker holds is the
        // largest it holds.
        let TableChoice::FirstHeld(order) = choose_table(Method::Optimal, None).unwrap() else {
            panic!("candidates")
        };
        let first_of = |held: &[&str]| order.iter().find(|c| held.contains(&c.as_str())).cloned();
        assert_eq!(
            first_of(&["h48h0k2", "h48h0k4"]).as_deref(),
            Some("h48h0k4")
        );
        assert_eq!(
            first_of(&["twophase", "h48h2k2", "h48h0k4", "h48h1k2"]).as_deref(),
            Some("h48h2k2")
        );
        assert!(!order.iter().any(|t| t == "twophase"));
    }
}
