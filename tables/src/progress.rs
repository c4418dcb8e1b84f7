//! Progress of long table work, reported to whoever watches.
//!
//! Library code reports through a [`Progress`] it is given and never draws anything
//! itself: the `cubeswarm` binary draws bars on a terminal, tests and services pass
//! [`Silent`]. A reporter is `Sync`: rayon workers call [`Progress::inc`] once per chunk of
//! work, so an implementation keeps it cheap (an atomic add).

/// A receiver of progress reports: one step of work at a time, started, advanced and
/// finished.
pub trait Progress: Sync {
    /// A new step labelled `label` begins, `len` units long (the previous one, if any, is
    /// over).
    fn start(&self, label: &str, len: u64);

    /// The current step advanced by `units`. Called from many threads, once per chunk.
    fn inc(&self, units: u64);

    /// The current step is complete; `message` says how it went.
    fn finish(&self, message: &str);

    /// A line of news between steps (a level's count, say), for a person watching.
    fn note(&self, _line: &str) {}
}

/// A reporter that ignores every report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _label: &str, _len: u64) {}

    #[inline]
    fn inc(&self, _units: u64) {}

    fn finish(&self, _message: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;

    /// Counts what it is told.
    #[derive(Default)]
    struct Tally {
        units: AtomicU64,
        labels: Mutex<Vec<String>>,
    }

    impl Progress for Tally {
        fn start(&self, label: &str, _len: u64) {
            self.labels.lock().unwrap().push(label.to_string());
        }
        fn inc(&self, units: u64) {
            self.units.fetch_add(units, Ordering::Relaxed);
        }
        fn finish(&self, message: &str) {
            self.labels.lock().unwrap().push(message.to_string());
        }
    }

    #[test]
    fn reporters_take_reports_from_many_threads() {
        let silent: &dyn Progress = &Silent;
        (0..10_000u64).into_par_iter().for_each(|_| silent.inc(1));
        let tally = Tally::default();
        let p: &dyn Progress = &tally;
        p.start("x", 10_000);
        (0..10_000u64).into_par_iter().for_each(|_| p.inc(1));
        p.finish("x done");
        assert_eq!(tally.units.load(Ordering::Relaxed), 10_000);
        assert_eq!(*tally.labels.lock().unwrap(), ["x", "x done"]);
    }
}
