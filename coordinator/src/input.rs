//! Input lines: what is skipped, what is a position, and the reader that streams a
//! scramble set into the driver within a window of lines in flight.

use crate::scheduler::Config;
use proto::{Method, RecordError, Settings};
use std::io::BufRead;
use std::sync::{Arc, Condvar, Mutex};
use tables::Position;

/// A line of an input file, with what to do with it.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// Blank or a `#` comment: skipped, no record.
    Skip,
    /// A position to solve (the trimmed text).
    Position(&'a str),
}

/// Classifies an input line.
pub fn classify(line: &str) -> Line<'_> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        Line::Skip
    } else {
        Line::Position(t)
    }
}

/// One position line, parsed.
#[derive(Debug)]
pub struct InputLine {
    /// 1-based line number in the input.
    pub line: u64,
    /// The trimmed text (empty for a line that is not UTF-8).
    pub input: String,
    /// The position, or why the line is not one.
    pub parsed: Result<Position, RecordError>,
}

/// The UTF-8 byte-order mark, which some editors write at the start of a text file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads `input` line by line, hands each position line (parsed) to `emit`, and skips
/// blanks and comments. A byte-order mark at the start of the input is not part of line
/// 1. Stops at the end of input, at a read error, or when `emit` returns false.
pub fn read_lines<R: BufRead>(
    mut input: R,
    mut emit: impl FnMut(InputLine) -> bool,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(256);
    let mut n = 0u64;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            return Ok(());
        }
        n += 1;
        let bytes = match buf.strip_prefix(BOM) {
            Some(rest) if n == 1 => rest,
            _ => &buf[..],
        };
        let item = match std::str::from_utf8(bytes) {
            Err(_) => InputLine {
                line: n,
                input: String::new(),
                parsed: Err(RecordError::NotUtf8),
            },
            Ok(text) => match classify(text) {
                Line::Skip => continue,
                Line::Position(t) => InputLine {
                    line: n,
                    input: t.to_string(),
                    parsed: Position::parse(t).map_err(RecordError::from),
                },
            },
        };
        if !emit(item) {
            return Ok(());
        }
    }
}

/// Lets a reader run at most `window` lines ahead of the records released.
#[derive(Debug)]
pub struct Window {
    released: Mutex<(u64, bool)>,
    moved: Condvar,
    size: u64,
}

impl Window {
    /// A window of `size` lines (at least 1).
    pub fn new(size: u64) -> Arc<Window> {
        Arc::new(Window {
            released: Mutex::new((0, false)),
            moved: Condvar::new(),
            size: size.max(1),
        })
    }

    /// Blocks until line number `sent` (0-based count of lines sent so far) fits in the
    /// window; false when the window was closed (the driver stopped).
    pub fn wait_for_room(&self, sent: u64) -> bool {
        let mut g = self.released.lock().unwrap_or_else(|p| p.into_inner());
        while sent >= g.0 + self.size && !g.1 {
            g = self.moved.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        !g.1
    }

    /// `n` records in all have been released.
    pub fn release(&self, n: u64) {
        let mut g = self.released.lock().unwrap_or_else(|p| p.into_inner());
        g.0 = n;
        self.moved.notify_all();
    }

    /// The driver stopped: wake and stop the reader.
    pub fn close(&self) {
        let mut g = self.released.lock().unwrap_or_else(|p| p.into_inner());
        g.1 = true;
        self.moved.notify_all();
    }
}

/// How many lines may be in flight (read, not yet released) for `settings` on `slots`
/// executor threads: enough to keep every thread busy, bounded whatever the input size.
pub fn window(cfg: &Config, settings: &Settings, slots: usize) -> u64 {
    let slots = slots.max(1) as u64;
    match settings.method {
        Method::TwoPhase => (cfg.batch_size.max(1) as u64 * slots * 4).max(256),
        Method::Optimal => slots * 4 + 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blanks_and_bad_bytes() {
        assert_eq!(classify("   "), Line::Skip);
        assert_eq!(classify("# R U"), Line::Skip);
        assert_eq!(classify(" R U "), Line::Position("R U"));
        let data = b"# c\n\nR U\r\nR \xff\nX\n".to_vec();
        let mut got = Vec::new();
        read_lines(&data[..], |l| {
            got.push(l);
            true
        })
        .unwrap();
        assert_eq!(
            got.iter().map(|l| l.line).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
        assert_eq!(got[0].input, "R U");
        assert!(got[0].parsed.is_ok());
        assert!(matches!(got[1].parsed, Err(RecordError::NotUtf8)));
        assert!(matches!(got[2].parsed, Err(RecordError::Parse(_))));
    }

    #[test]
    fn a_byte_order_mark_opens_the_first_line_only() {
        let data = "\u{feff}R U\n\u{feff}F\n".as_bytes();
        let mut got = Vec::new();
        read_lines(data, |l| {
            got.push(l);
            true
        })
        .unwrap();
        assert_eq!(got[0].input, "R U");
        assert!(got[0].parsed.is_ok());
        // Anywhere else it is a character of the line.
        assert_eq!(got[1].input, "\u{feff}F");
        assert!(got[1].parsed.is_err());
        // A BOM before a comment or a blank first line leaves it skipped.
        let mut ids = Vec::new();
        read_lines("\u{feff}# c\nU\n".as_bytes(), |l| {
            ids.push(l.line);
            true
        })
        .unwrap();
        assert_eq!(ids, [2]);
    }
}
