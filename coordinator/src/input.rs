//! Input lines: what is skipped, what is a position, and the reader that streams a
//! scramble set into the driver within a window of lines in flight.

use crate::scheduler::Config;
use proto::{Method, RecordError, Settings};
use std::io::{BufRead, Read};
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

/// The most bytes of one line kept in memory: the bound on a position's text
/// ([`tables::MAX_TEXT_BYTES`]) and room for the whitespace around it. A longer line is
/// read through to its end without being kept, and is its own error record.
const MAX_LINE_KEPT: usize = tables::MAX_TEXT_BYTES + 64;

/// Reads one line (with its newline) into `buf`, keeping at most [`MAX_LINE_KEPT`] bytes.
/// Returns the bytes read (0 at the end of input) and whether the line was longer than
/// what was kept (the rest read and dropped); for such a line, the bytes read do not
/// count its newline.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<(usize, bool)> {
    let kept = input
        .by_ref()
        .take(MAX_LINE_KEPT as u64 + 1)
        .read_until(b'\n', buf)?;
    if kept <= MAX_LINE_KEPT || buf.last() == Some(&b'\n') {
        return Ok((kept, false));
    }
    let mut len = kept;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok((len, true));
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok((len + i, true));
            }
            None => {
                let used = chunk.len();
                input.consume(used);
                len += used;
            }
        }
    }
}

/// Reads `input` line by line, hands each position line (parsed) to `emit`, and skips
/// blanks and comments. A byte-order mark at the start of the input is not part of the
/// first line. A line longer than a position's text may be ([`tables::MAX_TEXT_BYTES`])
/// is read in bounded memory and is an error record of its own, its text not echoed
/// (an empty input text), whether it is one byte past the bound or a gigabyte. Stops at the end of input, at a read error, or when `emit` returns false.
pub fn read_lines<R: BufRead>(
    mut input: R,
    mut emit: impl FnMut(InputLine) -> bool,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(256);
    let mut n = 0u64;
    loop {
        buf.clear();
        let (len, too_long) = read_line(&mut input, &mut buf)?;
        if len == 0 {
            return Ok(());
        }
        n += 1;
        if too_long {
            let item = InputLine {
                line: n,
                input: String::new(),
                parsed: Err(tables::ParseError::TooLong { bytes: len }.into()),
            };
            if !emit(item) {
                return Ok(());
            }
            continue;
        }
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
                // A position's text past its bound is not echoed, however far past it
                // the line runs: one rule for every too-long line.
                Line::Position(t) if t.len() > tables::MAX_TEXT_BYTES => InputLine {
                    line: n,
                    input: String::new(),
                    parsed: Err(tables::ParseError::TooLong { bytes: t.len() }.into()),
                },
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

    /// A line past the bound is its own error record, read through without being kept;
    /// the lines around it are read as ever.
    #[test]
    fn an_overlong_line_is_its_own_record_and_the_rest_are_read() {
        let long = "R U ".repeat(tables::MAX_TEXT_BYTES / 4 + 100);
        let data = format!("F\n{long}\nB\n{long}");
        // A reader with a small buffer, so the long line's rest is skipped chunk by chunk.
        let input = std::io::BufReader::with_capacity(1000, data.as_bytes());
        let mut got = Vec::new();
        read_lines(input, |l| {
            got.push(l);
            true
        })
        .unwrap();
        assert_eq!(got.iter().map(|l| l.line).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert!(got[0].parsed.is_ok() && got[2].parsed.is_ok());
        assert_eq!(got[2].input, "B");
        for l in [&got[1], &got[3]] {
            assert_eq!(l.input, "");
            let e = l.parsed.as_ref().unwrap_err().to_string();
            assert!(e.contains(&long.len().to_string()), "{e}");
        }
        // A line just within the bound is parsed (and refused by the parser's own bound
        // only when its text is over it).
        let within = "U ".repeat(tables::MAX_TEXT_BYTES / 2);
        let mut one = Vec::new();
        read_lines(format!("{within}\n").as_bytes(), |l| {
            one.push(l);
            true
        })
        .unwrap();
        assert_eq!(one[0].input, within.trim());
        assert!(one[0].parsed.is_ok(), "{:?}", one[0].parsed);
        // One byte past the bound (kept in memory, unlike a longer line) is refused the
        // same way: its text is not echoed.
        let past = "U".repeat(tables::MAX_TEXT_BYTES + 1);
        let mut one = Vec::new();
        read_lines(format!("{past}\nR\n").as_bytes(), |l| {
            one.push(l);
            true
        })
        .unwrap();
        assert_eq!(one[0].input, "");
        let e = one[0].parsed.as_ref().unwrap_err().to_string();
        assert!(e.contains(&past.len().to_string()), "{e}");
        assert!(one[1].parsed.is_ok());
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
