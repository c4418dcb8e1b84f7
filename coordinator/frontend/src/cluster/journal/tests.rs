use super::*;
use proto::{RecordError, Solved, Stop};

fn settings() -> Settings {
    Settings::default()
}

fn show(r: &Record, f: Format) -> String {
    render(r, &settings(), f)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cubeswarm-journal-{}-{name}", std::process::id()));
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
    let mixed = "1: U (1 move)\nnot a record\n2: U (1 move)\n".to_string();
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
    let mut j = Journal::create(&p, None, Format::Csv, &settings()).unwrap();
    j.write(&[solved(1, &["R", "L"])]).unwrap();
    let got = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        got,
        format!(
            "{CSV_HEADER}\n{}",
            show(&solved(1, &["R", "L"]), Format::Csv)
        )
    );
    assert!(Journal::create(&dir.join("no/such/dir"), None, Format::Text, &settings()).is_err());
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
