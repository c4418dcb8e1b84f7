//! The output file as the client's journal.
//!
//! A cluster client keeps no other state: what is in `--output` is done, what is not is
//! still to solve. So records are appended whole (rendered first, then one `write_all`
//! and a flush for each batch the coordinator sends), and `--resume` reads the file back:
//! it collects the ids of the records present, cuts off the last record (a crash may have
//! torn it, between two of its lines or inside one) so that it is solved again, and
//! appends after what is kept. Only the file's last record can be damaged: everything
//! before it was written and flushed earlier. A partial last line (a write cut short) goes
//! too, together with the last whole-lined record before it: the partial line's id
//! cannot be trusted, so that record may be the one it belongs to. So does a last line
//! that is no record after lines that are (a cut-short line that something ended with a
//! newline, a blank line an editor added). At most one finished record is solved again;
//! none is lost or written twice.
//!
//! Each format starts every line with the record's id (`ID: …` in text, `{"id":ID,…}`
//! in JSONL, `ID,…` in CSV after its header), and the lines of one record (one per
//! solution) are adjacent, so a record is a run of lines with the same id.
//!
//! JSONL and CSV records carry their input text too: a resume given the input file checks
//! every kept record against the input's line of the same id (both read as streams)
//! before it cuts or writes anything, and refuses an output written from another input.
//! Text records do not carry their input, so a text journal cannot be checked.

use super::check::{check_input, CheckError};
use super::written::line_record;
use crate::outfile::{self, OutputError};
use crate::output::{render, Format, CSV_HEADER};
use proto::{Record, Settings};

use std::io::{BufRead, BufReader, Read as _, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Why the output file cannot be used as a journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file is the input, or another run is writing it (it is left as it is).
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The file could not be created, read, cut or written.
    #[error("output file {path}: {source}")]
    Io {
        /// The output file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The first line of the file is not a record of the format asked: the file was
    /// written with another `--format`, or is not a `solve` output at all (it is left
    /// untouched).
    #[error(
        "output file {path}, line {line}: not a {format} record of `cubeswarm solve`; \
         was it written with another --format? (the file is left as it is)"
    )]
    NotARecord {
        /// The output file.
        path: PathBuf,
        /// The 1-based line number.
        line: u64,
        /// The format asked for ("text", "jsonl" or "csv").
        format: &'static str,
    },
    /// A complete line is not a record, though records come before it and more lines
    /// after it: the file was changed after `solve` wrote it (it is left untouched).
    #[error(
        "output file {path}, line {line}: not a {format} record of `cubeswarm solve`, \
         unlike the lines before it; the file was changed after it was written (the file \
         is left as it is: remove that line and resume again, or give another --output)"
    )]
    Damaged {
        /// The output file.
        path: PathBuf,
        /// The 1-based line number.
        line: u64,
        /// The format asked for ("text", "jsonl" or "csv").
        format: &'static str,
    },
    /// A CSV output file does not start with the header `solve` writes.
    #[error("output file {path}: the first line is not the CSV header {CSV_HEADER:?}; was it written with another --format? (the file is left as it is)")]
    CsvHeader {
        /// The output file.
        path: PathBuf,
    },
    /// The input file to resume from could not be read.
    #[error("input file {path}: {source}")]
    Input {
        /// The input file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A kept record was written for another text than the input's line of its id: the
    /// output file was written from another input.
    #[error(
        "cannot resume {output}: its record of line {line} is for {kept:?}, but line {line} \
         of {input} is {now:?}; was it written from another input? (nothing was sent or \
         written; give the input it was written from, or another --output)"
    )]
    InputDiffers {
        /// The output file.
        output: PathBuf,
        /// The input file.
        input: PathBuf,
        /// The first line id that differs.
        line: u64,
        /// The input text of the kept record.
        kept: String,
        /// The input's text at that line.
        now: String,
    },
    /// A kept record has an id that is no position line of the input (a blank line, a
    /// comment, or past its end).
    #[error(
        "cannot resume {output}: it holds a record of line {line}, but line {line} of \
         {input} is {what}; was it written from another input? (nothing was sent or \
         written; give the input it was written from, or another --output)"
    )]
    InputLacks {
        /// The output file.
        output: PathBuf,
        /// The input file.
        input: PathBuf,
        /// The kept record's line id.
        line: u64,
        /// What the input has there: "blank or a comment", "past its end".
        what: &'static str,
    },
}

/// The ids already in a journal, to be looked up in increasing order (the order of the
/// input's line numbers).
#[derive(Debug, Default)]
pub struct Done {
    /// Sorted, without duplicates.
    ids: Vec<u64>,
    /// Every id before this index is smaller than the last id asked.
    next: usize,
}

impl Done {
    /// A set of the given ids.
    pub fn new(mut ids: Vec<u64>) -> Done {
        ids.sort_unstable();
        ids.dedup();
        Done { ids, next: 0 }
    }

    /// How many ids are done.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no id is done.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether `id` is done. Ids must be asked in increasing order: each call skips the
    /// done ids below `id` for good.
    pub fn contains_next(&mut self, id: u64) -> bool {
        while self.ids.get(self.next).is_some_and(|&d| d < id) {
            self.next += 1;
        }
        self.ids.get(self.next) == Some(&id)
    }
}

/// What `--resume` found in the output file.
#[derive(Debug)]
pub struct Resumed {
    /// The ids of the records kept.
    pub done: Done,
    /// The id of the record cut off (solved again), if the file had any record.
    pub dropped: Option<u64>,
    /// Whether the file ended in a partial line (a torn write).
    pub torn: bool,
}

/// The input a resumed journal must have been written from (see [`Journal::resume`]).
pub struct ResumeInput<'a> {
    /// Its name in messages (the input file's path).
    pub path: &'a Path,
    /// Its lines, from the first.
    pub reader: Box<dyn BufRead + 'a>,
}

/// Where records go: an output file (the journal) or standard output.
pub struct Journal {
    /// The file, or stdout. Unbuffered: each batch is one `write_all`.
    out: Box<dyn Write + Send>,
    /// How records are rendered.
    format: Format,
    /// What was asked, for the notes records are rendered with.
    settings: Settings,
}

impl Journal {
    /// Records to standard output (the CSV header first).
    pub fn stdout(format: Format, settings: &Settings) -> std::io::Result<Journal> {
        Journal::to_writer(Box::new(std::io::stdout()), format, settings)
    }

    /// Records to `out`, which the caller buffers if it wants (the CSV header first).
    pub fn to_writer(
        out: Box<dyn Write + Send>,
        format: Format,
        settings: &Settings,
    ) -> std::io::Result<Journal> {
        let mut j = Journal {
            out,
            format,
            settings: settings.clone(),
        };
        j.header()?;
        Ok(j)
    }

    /// A new journal at `path` (replacing any file there; the CSV header first), locked
    /// for as long as the journal lives; refused when it is `input` or another run holds
    /// it (see [`outfile`]).
    pub fn create(
        path: &Path,
        input: Option<&Path>,
        format: Format,
        settings: &Settings,
    ) -> Result<Journal, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let f = outfile::create(path, input)?;
        let mut j = Journal {
            out: Box::new(f),
            format,
            settings: settings.clone(),
        };
        j.header().map_err(io)?;
        Ok(j)
    }

    /// Reopens the journal at `path` to continue it (see the module doc): a missing or
    /// empty file is a journal with nothing done. The file is checked whole before
    /// anything is cut from it, and so are its kept records against `input` when given
    /// (JSONL and CSV: each record's input text against the input's line of its id).
    /// The file is locked first, and refused as [`Journal::create`] refuses.
    pub fn resume(
        path: &Path,
        format: Format,
        settings: &Settings,
        input: Option<ResumeInput<'_>>,
    ) -> Result<(Journal, Resumed), JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut f = outfile::append(path, input.as_ref().map(|i| i.path))?;
        let scan = scan(BufReader::new(&f), format).map_err(|e| match e {
            ScanError::Io(source) => io(source),
            ScanError::NotARecord(line) => JournalError::NotARecord {
                path: path.to_path_buf(),
                line,
                format: format.name(),
            },
            ScanError::Damaged(line) => JournalError::Damaged {
                path: path.to_path_buf(),
                line,
                format: format.name(),
            },
            ScanError::CsvHeader => JournalError::CsvHeader {
                path: path.to_path_buf(),
            },
        })?;
        if let Some(input) = input.filter(|_| format.carries_input()) {
            f.seek(SeekFrom::Start(0)).map_err(io)?;
            let kept = BufReader::new((&f).take(scan.keep));
            check_input(kept, format, input.reader).map_err(|e| match e {
                CheckError::Journal(source) => io(source),
                CheckError::Input(source) => JournalError::Input {
                    path: input.path.to_path_buf(),
                    source,
                },
                CheckError::Differs { line, kept, now } => JournalError::InputDiffers {
                    output: path.to_path_buf(),
                    input: input.path.to_path_buf(),
                    line,
                    kept,
                    now,
                },
                CheckError::Lacks { line, what } => JournalError::InputLacks {
                    output: path.to_path_buf(),
                    input: input.path.to_path_buf(),
                    line,
                    what,
                },
            })?;
        }
        f.set_len(scan.keep).map_err(io)?;
        f.seek(SeekFrom::End(0)).map_err(io)?;
        let mut j = Journal {
            out: Box::new(f),
            format,
            settings: settings.clone(),
        };
        if scan.keep == 0 {
            j.header().map_err(io)?;
        }
        Ok((
            j,
            Resumed {
                done: Done::new(scan.ids),
                dropped: scan.dropped,
                torn: scan.torn,
            },
        ))
    }

    /// Appends `records` (each whole, in order) with one write, and flushes.
    pub fn write(&mut self, records: &[Record]) -> std::io::Result<()> {
        let mut text = String::new();
        for r in records {
            text.push_str(&render(r, &self.settings, self.format));
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }

    fn header(&mut self) -> std::io::Result<()> {
        if self.format == Format::Csv {
            self.out.write_all(format!("{CSV_HEADER}\n").as_bytes())?;
        }
        self.out.flush()
    }
}

/// What reading a journal found.
#[derive(Debug, PartialEq, Eq)]
struct Scan {
    /// The ids of the records to keep.
    ids: Vec<u64>,
    /// The id of the last record, cut off.
    dropped: Option<u64>,
    /// The file ended in a partial line.
    torn: bool,
    /// The length to cut the file to (0: nothing kept, not even a CSV header).
    keep: u64,
}

#[derive(Debug)]
enum ScanError {
    Io(std::io::Error),
    /// The first line (1-based number; after a CSV header) is not a record.
    NotARecord(u64),
    /// A complete line that is not a record, with records before it and more lines
    /// after it.
    Damaged(u64),
    CsvHeader,
}

/// Reads a journal: the ids of its records, all but the last, and where the last begins.
fn scan(mut r: impl BufRead, format: Format) -> Result<Scan, ScanError> {
    let mut buf = Vec::with_capacity(256);
    let mut offset = 0u64;
    let mut line_no = 0u64;
    // Where the records begin (after a CSV header).
    let mut body = 0u64;
    if format == Format::Csv {
        let n = r.read_until(b'\n', &mut buf).map_err(ScanError::Io)?;
        let header = format!("{CSV_HEADER}\n");
        if buf == header.as_bytes() {
            body = n as u64;
            offset = body;
            line_no = 1;
        } else if header.as_bytes().starts_with(&buf) {
            // Empty, or a header torn by a crash: start over.
            return Ok(Scan {
                ids: Vec::new(),
                dropped: None,
                torn: n > 0,
                keep: 0,
            });
        } else {
            return Err(ScanError::CsvHeader);
        }
    }
    let mut ids = Vec::new();
    let mut last: Option<u64> = None;
    let mut last_start = body;
    let mut torn = false;
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf).map_err(ScanError::Io)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if buf.last() != Some(&b'\n') {
            // A line cut short: the end of the last record, whatever id it shows.
            torn = true;
            break;
        }
        let Some(id) = line_id(&buf, format) else {
            if last.is_none() {
                return Err(ScanError::NotARecord(line_no));
            }
            // After records: the end of the last one, damaged, if nothing but a partial
            // line follows.
            buf.clear();
            let more = r.read_until(b'\n', &mut buf).map_err(ScanError::Io)?;
            if more == 0 || buf.last() != Some(&b'\n') {
                torn = true;
                break;
            }
            return Err(ScanError::Damaged(line_no));
        };
        if last != Some(id) {
            ids.extend(last);
            last = Some(id);
            last_start = offset;
        }
        offset += n as u64;
    }
    let keep = if last.is_some() { last_start } else { body };
    Ok(Scan {
        ids,
        dropped: last,
        torn,
        keep,
    })
}

/// The id a complete output line starts with, `None` if it is not a record's line.
fn line_id(line: &[u8], format: Format) -> Option<u64> {
    line_record(line, format).map(|(id, _)| id)
}

#[cfg(test)]
mod tests;
