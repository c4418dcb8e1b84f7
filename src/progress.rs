//! What the user sees on stderr while the binary works: progress bars for long table
//! work (the binary's [`tables::progress::Progress`]), the bar of a scramble set, and its
//! closing line, and where a command's results go.
//!
//! [`Bars`] draws an indicatif bar per step on stderr when stderr is a terminal and
//! nothing otherwise (tests, CI, pipes, log files); notes between steps are printed
//! whenever progress was asked for. The library crates only report; drawing is done here.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::RwLock;
use tables::progress::Progress;

/// Bar layout: message, elapsed time, bar, position/length, estimated time left.
const TEMPLATE: &str = "{msg} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} (eta {eta})";

/// Progress drawn on stderr for a person watching.
#[derive(Debug)]
pub struct Bars {
    /// Whether progress was asked for at all (notes are printed only then).
    show: bool,
    /// Whether bars are drawn: progress asked for and stderr a terminal.
    draw: bool,
    /// The bar of the current step, if one is drawn. Read-locked by every `inc` (cheap:
    /// uncontended readers), write-locked only to start a step.
    bar: RwLock<Option<ProgressBar>>,
}

impl Bars {
    /// Bars when `show` is set and stderr is a terminal; notes when `show` is set.
    pub fn new(show: bool) -> Bars {
        Bars {
            show,
            draw: show && std::io::stderr().is_terminal(),
            bar: RwLock::new(None),
        }
    }

    /// The current bar, if any (a poisoned lock still holds a usable bar).
    fn current(&self) -> Option<ProgressBar> {
        self.bar.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Progress for Bars {
    fn start(&self, label: &str, len: u64) {
        if !self.draw {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
            bar.set_style(style);
        }
        bar.set_message(label.to_string());
        *self.bar.write().unwrap_or_else(|e| e.into_inner()) = Some(bar);
    }

    fn inc(&self, units: u64) {
        if !self.draw {
            return;
        }
        if let Some(bar) = self.bar.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
            bar.inc(units);
        }
    }

    fn finish(&self, message: &str) {
        if let Some(bar) = self.current() {
            bar.finish_with_message(message.to_string());
        }
    }

    fn note(&self, line: &str) {
        if !self.show {
            return;
        }
        match self.current() {
            Some(bar) if !bar.is_finished() => bar.println(line),
            _ => eprintln!("{line}"),
        }
    }
}

/// `one` for a count of 1, else `many` (a count of 0 is plural in English).
pub fn plural(count: u64, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 {
        one
    } else {
        many
    }
}

/// The closing line of a scramble set, on stderr.
pub fn print_summary(records: u64, errors: u64, seconds: f64) {
    eprintln!(
        "{records} {} ({errors} {}) in {seconds:.2} s: {:.1} positions/s",
        plural(records, "position", "positions"),
        plural(errors, "error", "errors"),
        records as f64 / seconds.max(1e-9)
    );
}

/// A progress bar on stderr over `total_bytes` of input (a spinner when unknown), when
/// `show` and stderr is a terminal.
pub fn progress_bar(show: bool, total_bytes: Option<u64>) -> Option<indicatif::ProgressBar> {
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

/// Where a command writes its results: `path` (created, or emptied, and locked for the
/// run), or standard output; buffered. Never the input, however either is named or
/// redirected (see [`frontend::outfile::check_not_input`]).
pub fn output(
    path: Option<&std::path::Path>,
    input: Option<&std::path::Path>,
) -> anyhow::Result<Box<dyn std::io::Write>> {
    Ok(match path {
        Some(p) => Box::new(std::io::BufWriter::new(frontend::outfile::create(
            p, input,
        )?)),
        None => {
            frontend::outfile::check_not_input(input, None)?;
            Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(plural(1, "move", "moves"), "move");
        assert_eq!(plural(0, "move", "moves"), "moves");
        assert_eq!(plural(2, "move", "moves"), "moves");
    }

    #[test]
    fn bars_are_drawn_only_when_asked_and_on_a_terminal() {
        assert!(!Bars::new(false).draw);
        let b = Bars::new(true);
        assert_eq!(b.draw, std::io::stderr().is_terminal());
        b.start("x", 10);
        b.inc(10);
        b.finish("x done");
        assert_eq!(b.current().is_some(), b.draw);
        let quiet = Bars::new(false);
        quiet.start("y", 10);
        assert!(quiet.current().is_none());
    }
}
