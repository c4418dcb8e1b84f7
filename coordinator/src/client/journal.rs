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
use super::output::{render, Format, CSV_HEADER};
use proto::{Record, Settings};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read as _, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Why the output file cannot be used as a journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
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

    /// A new journal at `path` (replacing any file there; the CSV header first).
    pub fn create(
        path: &Path,
        format: Format,
        settings: &Settings,
    ) -> Result<Journal, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let f = File::create(path).map_err(io)?;
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
        let mut f = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
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

/// The id a complete output line starts with and the input text it carries (JSONL and
/// CSV; `None` for text, or a CSV input that cannot be read back), `None` if it is not a
/// record's line.
pub(super) fn line_record(line: &[u8], format: Format) -> Option<(u64, Option<String>)> {
    let text = std::str::from_utf8(line).ok()?;
    let digits = |s: &str| {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            s.parse::<u64>().ok()
        } else {
            None
        }
    };
    match format {
        Format::Text => text
            .split_once(": ")
            .and_then(|(id, _)| digits(id))
            .map(|id| (id, None)),
        Format::Csv => text
            .split_once(',')
            .and_then(|(id, rest)| Some((digits(id)?, csv_first_field(rest)))),
        Format::Jsonl => {
            /// The fields of a JSONL record the journal needs.
            #[derive(serde::Deserialize)]
            struct IdInput {
                id: u64,
                input: Option<String>,
            }
            serde_json::from_str::<IdInput>(text)
                .ok()
                .map(|r| (r.id, r.input))
        }
    }
}

/// The first field of a CSV line's rest (quoted or not), `None` if a quote is not closed.
fn csv_first_field(rest: &str) -> Option<String> {
    let Some(quoted) = rest.strip_prefix('"') else {
        return Some(rest.split(',').next().unwrap_or("").to_string());
    };
    let mut out = String::new();
    let mut chars = quoted.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            if chars.peek() == Some(&'"') {
                chars.next();
                out.push('"');
            } else {
                return Some(out);
            }
        } else {
            out.push(c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::{RecordError, Solved, Stop};

    fn settings() -> Settings {
        Settings::default()
    }

    fn show(r: &Record, f: Format) -> String {
        render(r, &settings(), f)
    }

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("cubeswarm-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn solved(id: u64, solutions: &[&str]) -> Record {
        Record {
            line: id,
            input: format!("scramble {id}, quoted \"x\""),
            outcome: Ok(Solved {
                solutions: solutions
                    .iter()
                    .map(|s| tables::parse_moves(s).unwrap())
                    .collect(),
                optimal: true,
                depth_exhausted: None,
                nodes: 7,
                lookups: 1,
                micros: 500,
                stop: Stop::Completed,
            }),
        }
    }

    fn failed(id: u64) -> Record {
        Record {
            line: id,
            input: "R Q".into(),
            outcome: Err(RecordError::from(
                tables::Position::parse("R Q").unwrap_err(),
            )),
        }
    }

    /// Records 1 (two lines), 3 (an error), 4, 9 (two lines) rendered in `f`.
    fn sample(f: Format) -> String {
        let mut s = String::new();
        if f == Format::Csv {
            s.push_str(CSV_HEADER);
            s.push('\n');
        }
        for r in [
            solved(1, &["R U", "U R"]),
            failed(3),
            solved(4, &["F"]),
            solved(9, &["D2 L", "L D2"]),
        ] {
            s.push_str(&show(&r, f));
        }
        s
    }

    const FORMATS: [Format; 3] = [Format::Text, Format::Jsonl, Format::Csv];

    #[test]
    fn the_last_record_is_dropped_whole_with_all_its_lines() {
        for f in FORMATS {
            let text = sample(f);
            let s = scan(text.as_bytes(), f).unwrap();
            assert_eq!(s.ids, vec![1, 3, 4], "{f:?}");
            assert_eq!(s.dropped, Some(9));
            assert!(!s.torn);
            // Cut right before record 9's first line.
            let nine = text.find(&show(&solved(9, &["D2 L", "L D2"]), f)).unwrap();
            assert_eq!(s.keep, nine as u64, "{f:?}");
        }
    }

    #[test]
    fn a_torn_last_line_goes_with_its_record() {
        for f in FORMATS {
            let text = sample(f);
            let nine = text.find(&show(&solved(9, &["D2 L", "L D2"]), f)).unwrap();
            // Cut inside record 9's second line, and just after its first line (a
            // record torn between two of its lines): record 9 goes whole.
            let first_end = nine + text[nine..].find('\n').unwrap() + 1;
            for cut in [text.len() - 3, first_end] {
                let s = scan(&text.as_bytes()[..cut], f).unwrap();
                assert_eq!(s.ids, vec![1, 3, 4], "{f:?} cut at {cut}");
                assert_eq!(s.dropped, Some(9));
                assert_eq!(s.keep, nine as u64);
                assert_eq!(s.torn, cut != first_end);
            }
            // Torn inside record 9's first line: the torn line may show any id (or none),
            // so it goes, and so does the last whole record, 4.
            let four = text.find(&show(&solved(4, &["F"]), f)).unwrap();
            for cut in [nine + 1, nine + 2, nine + 7] {
                let s = scan(&text.as_bytes()[..cut], f).unwrap();
                assert_eq!(s.ids, vec![1, 3], "{f:?} cut at {cut}");
                assert_eq!(s.dropped, Some(4));
                assert_eq!(s.keep, four as u64);
                assert!(s.torn);
            }
        }
    }

    #[test]
    fn a_damaged_last_line_ending_in_a_newline_goes_like_a_torn_one() {
        let dir = scratch("damaged-last");
        for f in FORMATS {
            let text = sample(f);
            let nine = text.find(&show(&solved(9, &["D2 L", "L D2"]), f)).unwrap();
            let four = text.find(&show(&solved(4, &["F"]), f)).unwrap();
            // An empty line after the last record (an editor's), and record 9's first
            // line cut short and then ended (another writer's newline).
            for (file, keep) in [
                (format!("{text}\n"), nine),
                (format!("{}\n", &text[..nine + 1]), four),
            ] {
                let s = scan(file.as_bytes(), f).unwrap();
                let kept = if keep == nine {
                    vec![1, 3, 4]
                } else {
                    vec![1, 3]
                };
                assert_eq!(s.ids, kept, "{f:?} {file:?}");
                assert_eq!(s.keep, keep as u64);
                assert!(s.torn);
                let p = dir.join(format!("out-{f:?}"));
                std::fs::write(&p, &file).unwrap();
                let (_, r) = Journal::resume(&p, f, &settings(), None).unwrap();
                assert!(r.torn);
                assert_eq!(std::fs::read_to_string(&p).unwrap(), &text[..keep]);
            }
        }
    }

    #[test]
    fn empty_files_and_lone_headers() {
        for f in FORMATS {
            let s = scan(&b""[..], f).unwrap();
            assert_eq!(
                (s.ids.len(), s.dropped, s.keep, s.torn),
                (0, None, 0, false)
            );
        }
        let header = format!("{CSV_HEADER}\n");
        let s = scan(header.as_bytes(), Format::Csv).unwrap();
        assert_eq!(s.keep, header.len() as u64, "a whole header is kept");
        assert_eq!(s.dropped, None);
        // A torn header is rewritten.
        let s = scan(&header.as_bytes()[..5], Format::Csv).unwrap();
        assert_eq!((s.keep, s.torn), (0, true));
        // One torn line and nothing else.
        let s = scan(&b"12: R U (2 mo"[..], Format::Text).unwrap();
        assert_eq!((s.ids.len(), s.dropped, s.keep, s.torn), (0, None, 0, true));
    }

    #[test]
    fn foreign_files_are_refused_and_left_alone() {
        assert!(matches!(
            scan(&b"hello\n"[..], Format::Text),
            Err(ScanError::NotARecord(1))
        ));
        // Text read as JSONL, JSONL read as CSV, CSV without its header.
        let text = sample(Format::Text);
        assert!(matches!(
            scan(text.as_bytes(), Format::Jsonl),
            Err(ScanError::NotARecord(1))
        ));
        let jsonl = sample(Format::Jsonl);
        assert!(matches!(
            scan(jsonl.as_bytes(), Format::Csv),
            Err(ScanError::CsvHeader)
        ));
        let csv = sample(Format::Csv);
        let body = &csv[CSV_HEADER.len() + 1..];
        assert!(matches!(
            scan(body.as_bytes(), Format::Csv),
            Err(ScanError::CsvHeader)
        ));
        // A bad line in the middle (not at the torn end) is an error too, said as such.
        let mixed = "1: U (1 moves)\nnot a record\n2: U (1 moves)\n".to_string();
        assert!(matches!(
            scan(mixed.as_bytes(), Format::Text),
            Err(ScanError::Damaged(2))
        ));
        // And resume leaves such files as they were.
        let dir = scratch("foreign");
        let p = dir.join("notes.txt");
        std::fs::write(&p, &mixed).unwrap();
        let e = Journal::resume(&p, Format::Text, &settings(), None)
            .err()
            .unwrap();
        let e = e.to_string();
        assert!(
            e.contains("line 2") && e.contains("unlike the lines before it"),
            "{e}"
        );
        assert!(!e.contains("--format"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), mixed);
        std::fs::write(&p, &text).unwrap();
        let e = Journal::resume(&p, Format::Jsonl, &settings(), None)
            .err()
            .unwrap();
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(e.to_string().contains("another --format"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    }

    #[test]
    fn resume_cuts_the_file_and_appends_after_it() {
        let dir = scratch("resume");
        for f in FORMATS {
            let p = dir.join(format!("out-{f:?}"));
            let text = sample(f);
            // Torn inside record 9, without a newline at the end.
            std::fs::write(&p, &text[..text.len() - 4]).unwrap();
            let (mut j, r) = Journal::resume(&p, f, &settings(), None).unwrap();
            assert_eq!(r.dropped, Some(9));
            assert!(r.torn);
            let mut done = r.done;
            assert_eq!(done.len(), 3);
            let asked: Vec<u64> = (1..=10).filter(|&i| done.contains_next(i)).collect();
            assert_eq!(asked, vec![1, 3, 4]);
            j.write(&[solved(9, &["D2 L", "L D2"]), failed(10)])
                .unwrap();
            drop(j);
            let mut want = text.clone();
            want.push_str(&show(&failed(10), f));
            assert_eq!(std::fs::read_to_string(&p).unwrap(), want, "{f:?}");
        }
    }

    #[test]
    fn resume_of_a_missing_or_empty_file_starts_it() {
        let dir = scratch("fresh");
        for f in FORMATS {
            let p = dir.join(format!("new-{f:?}"));
            let (mut j, r) = Journal::resume(&p, f, &settings(), None).unwrap();
            assert_eq!((r.done.len(), r.dropped, r.torn), (0, None, false));
            j.write(&[failed(2)]).unwrap();
            drop(j);
            let header = if f == Format::Csv {
                format!("{CSV_HEADER}\n")
            } else {
                String::new()
            };
            let want = format!("{header}{}", show(&failed(2), f));
            assert_eq!(std::fs::read_to_string(&p).unwrap(), want);
            // Resuming that file drops record 2 and keeps the header.
            let (_, r) = Journal::resume(&p, f, &settings(), None).unwrap();
            assert_eq!((r.done.len(), r.dropped), (0, Some(2)));
            assert_eq!(std::fs::read_to_string(&p).unwrap(), header);
        }
    }

    #[test]
    fn done_ids_may_be_absent_from_the_input() {
        // Ids 1, 3, 4 are done; the input now has lines 2, 4, 5 only: 4 is skipped, the
        // others are solved, and 1 and 3 are never asked.
        let mut done = Done::new(vec![4, 1, 3, 3]);
        let todo: Vec<u64> = [2, 4, 5]
            .into_iter()
            .filter(|&i| !done.contains_next(i))
            .collect();
        assert_eq!(todo, vec![2, 5]);
        let mut none = Done::default();
        assert!(!none.contains_next(1));
    }

    #[test]
    fn create_writes_the_header_and_records_whole() {
        let dir = scratch("create");
        let p = dir.join("out.csv");
        std::fs::write(&p, "old content\n").unwrap();
        let mut j = Journal::create(&p, Format::Csv, &settings()).unwrap();
        j.write(&[solved(1, &["R", "L"])]).unwrap();
        let got = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            got,
            format!(
                "{CSV_HEADER}\n{}",
                show(&solved(1, &["R", "L"]), Format::Csv)
            )
        );
        assert!(Journal::create(&dir.join("no/such/dir"), Format::Text, &settings()).is_err());
    }

    #[test]
    fn kept_records_are_checked_against_the_input() {
        for f in [Format::Jsonl, Format::Csv] {
            let text = sample(f);
            // Record 9 would be dropped by a resume: keep what precedes it.
            let nine = text.find(&show(&solved(9, &["D2 L", "L D2"]), f)).unwrap();
            let kept = &text.as_bytes()[..nine];
            let line = |id: u64| solved(id, &[]).input;
            // The input of the records: line 1, a comment at 2, 3 "R Q", line 4.
            let good = format!("{}\n# c\nR Q\n  {}  \nX\n", line(1), line(4));
            check_input(kept, f, good.as_bytes()).unwrap();
            let other = format!("{}\n# c\nR Q\nU2\n", line(1));
            match check_input(kept, f, other.as_bytes()) {
                Err(CheckError::Differs { line: 4, kept, now }) => {
                    assert_eq!((kept.as_str(), now.as_str()), (line(4).as_str(), "U2"));
                }
                e => panic!("{f:?}: {e:?}"),
            }
            let blank = format!("{}\n# c\n\n{}\n", line(1), line(4));
            assert!(matches!(
                check_input(kept, f, blank.as_bytes()),
                Err(CheckError::Lacks {
                    line: 3,
                    what: "blank or a comment"
                })
            ));
            let short = format!("{}\n# c\nR Q\n", line(1));
            assert!(matches!(
                check_input(kept, f, short.as_bytes()),
                Err(CheckError::Lacks {
                    line: 4,
                    what: "past its end"
                })
            ));
        }
        // Text records carry no input: resume does not check them.
        let dir = scratch("check-text");
        let p = dir.join("out.txt");
        std::fs::write(&p, sample(Format::Text)).unwrap();
        let input = ResumeInput {
            path: Path::new("in.txt"),
            reader: Box::new(&b"nothing alike\n"[..]),
        };
        assert!(Journal::resume(&p, Format::Text, &settings(), Some(input)).is_ok());
        // A JSONL journal of another input is left as it was.
        let p = dir.join("out.jsonl");
        let text = sample(Format::Jsonl);
        std::fs::write(&p, &text).unwrap();
        let input = ResumeInput {
            path: Path::new("in.txt"),
            reader: Box::new(&b"U\nU\nU\nU\n"[..]),
        };
        let e = Journal::resume(&p, Format::Jsonl, &settings(), Some(input))
            .err()
            .unwrap();
        assert!(e.to_string().contains("line 1 of in.txt is \"U\""), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    }

    #[test]
    fn csv_fields_are_read_back_with_their_quotes() {
        assert_eq!(
            csv_first_field("\"a,\"\"b\"\"\",x,y").as_deref(),
            Some("a,\"b\"")
        );
        assert_eq!(csv_first_field("plain,x").as_deref(), Some("plain"));
        assert_eq!(csv_first_field("\"open").as_deref(), None);
    }
}
