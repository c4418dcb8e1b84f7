//! An input line as it goes to the coordinator.
//!
//! A line's text is sent as it is when it is at most [`LINE_BYTES`] long. A longer line
//! is never sent: a message holds at most [`proto::MAX_MESSAGE_BYTES`], and the record
//! that comes back carries the text too. The client parses the line itself instead, as
//! the coordinator would: a position is sent as its 54-character facelet string (its
//! record gets the line's own text back), and a line that is no position gets its error
//! record here, the one the coordinator (and a local run) gives it. Either way the
//! output is what a local run writes. So does a line past the bound on a position's text,
//! which the reader did not keep (its text is empty: sent, it would read as the solved
//! cube).

use coordinator::input::InputLine;
use proto::wire as w;
use proto::{BadLineKind, Record, RecordError};

/// The longest line text sent as it is.
pub const LINE_BYTES: usize = 64 << 10;

/// What the client does with one input line.
#[derive(Debug)]
pub enum Outgoing {
    /// Sent as read.
    Line(w::Line),
    /// Sent as the facelet string of its position; `input` is the line's text, for its
    /// record.
    Restated {
        /// The line sent.
        line: w::Line,
        /// The line's own text.
        input: String,
    },
    /// Not sent: its record, made by the client.
    Record(Record),
}

/// What goes on the wire for the input line `l`.
pub fn outgoing(l: InputLine) -> Outgoing {
    let line = |text| w::Line {
        id: l.line,
        text,
        proved_empty: None,
        not_utf8: matches!(l.parsed, Err(RecordError::NotUtf8)),
    };
    let kept = !matches!(
        &l.parsed,
        Err(RecordError::Parse(b)) if b.kind == BadLineKind::TooLong
    );
    if kept && l.input.len() <= LINE_BYTES {
        return Outgoing::Line(line(l.input));
    }
    match l.parsed {
        Ok(p) => Outgoing::Restated {
            line: line(tables::facelet::to_facelets(p.cube())),
            input: l.input,
        },
        Err(e) => Outgoing::Record(Record {
            line: l.line,
            input: l.input,
            outcome: Err(e),
        }),
    }
}

/// [`outgoing`] for a position given as text, not read from a file (line 1).
pub fn outgoing_text(text: String) -> Outgoing {
    if text.len() <= LINE_BYTES {
        // The coordinator parses it.
        return Outgoing::Line(w::Line {
            id: 1,
            text,
            proved_empty: None,
            not_utf8: false,
        });
    }
    let parsed = tables::Position::parse(&text).map_err(RecordError::from);
    outgoing(InputLine {
        line: 1,
        input: text,
        parsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables::Position;

    fn read(text: &str) -> InputLine {
        InputLine {
            line: 7,
            input: text.to_string(),
            parsed: Position::parse(text).map_err(RecordError::from),
        }
    }

    #[test]
    fn short_lines_go_as_they_are_long_ones_as_what_they_mean() {
        let Outgoing::Line(l) = outgoing(read("R U Q")) else {
            panic!("a short line is sent")
        };
        assert_eq!((l.id, l.text.as_str(), l.not_utf8), (7, "R U Q", false));
        // A long scramble: its position, as facelets; its text kept for the record.
        let long = "R U ".repeat(LINE_BYTES / 4 + 1);
        let long = long.trim();
        let Outgoing::Restated { line, input } = outgoing(read(long)) else {
            panic!("a long position is restated")
        };
        assert_eq!(input, long);
        assert_eq!(
            Position::parse(&line.text).unwrap(),
            Position::parse(long).unwrap()
        );
        // A long line that is no position: the record a local run writes.
        let bad = format!("{long} Q");
        let Outgoing::Record(r) = outgoing(read(&bad)) else {
            panic!("a long bad line is its record")
        };
        assert_eq!(r.line, 7);
        assert_eq!(r.input, bad);
        assert_eq!(
            r.outcome,
            Err(RecordError::from(Position::parse(&bad).unwrap_err()))
        );
        // A line the reader did not keep (past a position's bound): its record here,
        // never its empty text on the wire.
        let too_long = InputLine {
            line: 8,
            input: String::new(),
            parsed: Err(RecordError::from(tables::ParseError::TooLong {
                bytes: tables::MAX_TEXT_BYTES + 1,
            })),
        };
        let Outgoing::Record(r) = outgoing(too_long) else {
            panic!("a line past the bound is its record")
        };
        assert_eq!((r.line, r.input.as_str()), (8, ""));
        assert!(r.outcome.is_err());
        // Given as text: only a long one is parsed here.
        assert!(matches!(outgoing_text("R U Q".into()), Outgoing::Line(_)));
        assert!(matches!(outgoing_text(bad), Outgoing::Record(_)));
    }
}
