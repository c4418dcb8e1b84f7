//! Progress bars for long table work, drawn only for a person watching.
//!
//! A [`Progress`] draws an indicatif bar on stderr when stderr is a terminal and does
//! nothing at all otherwise (tests, CI, pipes, log files), so library code can report
//! progress unconditionally. It is `Sync`: rayon workers call [`Progress::inc`] once per
//! chunk of work (an atomic add, and a redraw at most a few times a second).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Bar layout: message, elapsed time, bar, position/length, estimated time left.
const TEMPLATE: &str = "{msg} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} (eta {eta})";

/// A progress bar that is visible only when stderr is a terminal.
#[derive(Debug, Clone)]
pub struct Progress {
    /// The bar, or `None` when nothing is drawn (every method is then a no-op).
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `len` steps labelled `message`, drawn iff stderr is a terminal.
    pub fn new(message: impl Into<String>, len: u64) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
            bar.set_style(style);
        }
        bar.set_message(message.into());
        Progress { bar: Some(bar) }
    }

    /// A bar that never draws.
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    /// [`Progress::new`] when `show` is true, [`Progress::hidden`] otherwise.
    pub fn new_if(show: bool, message: impl Into<String>, len: u64) -> Progress {
        if show {
            Progress::new(message, len)
        } else {
            Progress::hidden()
        }
    }

    /// Whether anything is drawn.
    pub fn is_visible(&self) -> bool {
        self.bar.is_some()
    }

    /// Advances by `steps`. Cheap and callable from many threads; call it per chunk of
    /// work rather than per item.
    #[inline]
    pub fn inc(&self, steps: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(steps);
        }
    }

    /// Replaces the label.
    pub fn set_message(&self, message: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.into());
        }
    }

    /// Completes the bar, leaving it on screen with a final label.
    pub fn finish(&self, message: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.finish_with_message(message.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn hidden_progress_accepts_every_call_from_many_threads() {
        let p = Progress::hidden();
        assert!(!p.is_visible());
        (0..10_000u64).into_par_iter().for_each(|_| p.inc(1));
        p.set_message("still fine");
        p.finish("done");
    }

    #[test]
    fn progress_is_silent_when_not_asked_or_not_on_a_terminal() {
        assert!(!Progress::new_if(false, "x", 10).is_visible());
        let p = Progress::new("x", 10);
        assert_eq!(p.is_visible(), std::io::stderr().is_terminal());
        p.inc(10);
        p.finish("x done");
    }
}
