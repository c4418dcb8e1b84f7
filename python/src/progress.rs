//! Table work reported on stderr, one line per step (a notebook shows them): the package's
//! [`tables::progress::Progress`].

/// Reports each step of table work on stderr.
pub struct Stderr;

impl tables::progress::Progress for Stderr {
    fn start(&self, label: &str, _len: u64) {
        eprintln!("cubeswarm: {label}…");
    }
    fn inc(&self, _units: u64) {}
    fn finish(&self, message: &str) {
        if !message.is_empty() {
            eprintln!("cubeswarm: {message}");
        }
    }
}
