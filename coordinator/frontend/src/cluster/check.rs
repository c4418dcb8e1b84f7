//! A resumed journal checked against its input: every kept record's input text against
//! the input's line of the same id, both read as streams (JSONL and CSV records carry
//! their input; text records do not).

use super::written::line_record;
use crate::output::Format;
use std::io::BufRead;

/// Why the kept records do not match the input.
#[derive(Debug)]
pub(super) enum CheckError {
    /// Reading the journal failed.
    Journal(std::io::Error),
    /// Reading the input failed.
    Input(std::io::Error),
    /// Line `line` of the input is `now`, its kept record is for `kept`.
    Differs {
        line: u64,
        kept: String,
        now: String,
    },
    /// A kept record's line is no position line of the input.
    Lacks { line: u64, what: &'static str },
}

/// Walks the kept records of a journal (`kept`: the part of the file that is kept) and the
/// input side by side, both as streams: each record's input text must be the text of the
/// input's line of its id (trimmed, as the reader sends it; empty for a line that is not
/// UTF-8). Records whose input cannot be read from their line are not checked.
pub(super) fn check_input(
    mut kept: impl BufRead,
    format: Format,
    input: impl BufRead,
) -> Result<(), CheckError> {
    let mut buf = Vec::with_capacity(256);
    if format == Format::Csv {
        kept.read_until(b'\n', &mut buf)
            .map_err(CheckError::Journal)?;
    }
    // The next kept record (its first line): id and input text.
    let mut last_id = None;
    let mut next_kept = || -> Result<Option<(u64, Option<String>)>, CheckError> {
        loop {
            buf.clear();
            if kept
                .read_until(b'\n', &mut buf)
                .map_err(CheckError::Journal)?
                == 0
            {
                return Ok(None);
            }
            let Some((id, text)) = line_record(&buf, format) else {
                continue;
            };
            if last_id != Some(id) {
                last_id = Some(id);
                return Ok(Some((id, text)));
            }
        }
    };
    let mut want = next_kept()?;
    let mut fault = None;
    let read = coordinator::input::read_lines(input, |l| loop {
        let Some((id, text)) = &want else {
            return false;
        };
        if *id > l.line {
            return true;
        }
        if *id < l.line {
            fault = Some(CheckError::Lacks {
                line: *id,
                what: "blank or a comment",
            });
            return false;
        }
        if let Some(text) = text {
            if *text != l.input {
                fault = Some(CheckError::Differs {
                    line: l.line,
                    kept: text.clone(),
                    now: l.input.clone(),
                });
                return false;
            }
        }
        match next_kept() {
            Ok(n) => want = n,
            Err(e) => {
                fault = Some(e);
                return false;
            }
        }
    });
    read.map_err(CheckError::Input)?;
    if let Some(e) = fault {
        return Err(e);
    }
    match want {
        Some((line, _)) => Err(CheckError::Lacks {
            line,
            what: "past its end",
        }),
        None => Ok(()),
    }
}
