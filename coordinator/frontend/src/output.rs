//! The output formats of `solve` (text, JSONL, CSV): how a [`proto::Record`] is written,
//! the same for the embedded default and a cluster.

use proto::{Record, RecordError, Settings};
use std::fmt::Write as _;

/// Output format of `solve`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// One human-readable line per solution.
    #[default]
    Text,
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
}

impl Format {
    /// The name of the format, as `--format` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
        }
    }

    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 3] = [Format::Text, Format::Jsonl, Format::Csv];

    /// Whether each record of this format carries its input text (text records do not).
    pub fn carries_input(self) -> bool {
        self != Format::Text
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown format {s:?}; use text, jsonl or csv"))
    }
}

/// Renders `rec` as `settings` asked it (one or more lines, each ending in a newline).
pub fn render(rec: &Record, settings: &Settings, format: Format) -> String {
    Shown::new(rec, settings).render(format)
}

/// Whether `rec` has no solution ([`failure`] is `Some`), without rendering anything.
pub fn failed(rec: &Record) -> bool {
    rec.outcome
        .as_ref()
        .map_or(true, |s| s.solutions.is_empty())
}

/// Why `rec` has no solution (an error record, or nothing found within the limits), as
/// the output shows it; `None` when it has solutions.
pub fn failure(rec: &Record, settings: &Settings) -> Option<String> {
    Shown::new(rec, settings).outcome.err().map(|(_, e)| e)
}

/// The record as one object, with the names the writers use (`id`, `input`, `solutions`
/// in notation, `lengths`, `optimal`: the first solution is proved optimal, `nodes`,
/// `millis`, `note`, `error`, `error_kind`: "position", "job", "no_solution" or null):
/// what a front end that hands records over as values gives (Python's dicts). A position
/// searched without a solution keeps its nodes, time and note.
pub fn fields(rec: &Record, settings: &Settings) -> serde_json::Value {
    let shown = Shown::new(rec, settings);
    let mut v = serde_json::json!({
        "id": shown.id,
        "input": shown.input,
        "solutions": [],
        "lengths": [],
        "optimal": false,
        "nodes": 0,
        "millis": 0.0,
        "note": null,
        "error": null,
        "error_kind": null,
    });
    match (&shown.outcome, &rec.outcome) {
        (Ok(s), _) => {
            v["solutions"] = serde_json::json!(s.solutions);
            v["lengths"] = serde_json::json!(s.lengths);
            v["optimal"] = serde_json::json!(
                s.optimal_length.is_some() && s.optimal_length == s.lengths.first().copied()
            );
            v["nodes"] = serde_json::json!(s.nodes);
            v["millis"] = serde_json::json!(s.millis);
            v["note"] = serde_json::json!(s.note);
        }
        (Err((kind, e)), searched) => {
            if let Ok(s) = searched {
                v["nodes"] = serde_json::json!(s.nodes);
                v["millis"] = serde_json::json!(s.micros as f64 / 1e3);
                v["note"] = serde_json::json!(s.note(settings));
            }
            v["error"] = serde_json::json!(e);
            v["error_kind"] = serde_json::json!(kind.name());
        }
    }
    v
}

/// Writes the record of a command-line position as `solve` shows it: text shows a
/// failure only in the returned reason (the caller prints it once, on stderr), machine
/// formats always get their record. Returns why the position has no solution, if so.
pub fn write_single(
    out: &mut dyn std::io::Write,
    format: Format,
    rec: &Record,
    settings: &Settings,
) -> std::io::Result<Option<String>> {
    let failure = failure(rec, settings);
    if failure.is_none() || format != Format::Text {
        if format == Format::Csv {
            writeln!(out, "{CSV_HEADER}")?;
        }
        out.write_all(render(rec, settings, format).as_bytes())?;
    }
    out.flush()?;
    Ok(failure)
}

/// A record as every output shows it (the formats here, Python's dicts): moves in
/// notation, the note of its settings, the reason when there is no solution. A field a
/// record gains is added here and to the writers below.
#[derive(Debug, Clone)]
pub struct Shown {
    /// Line number in the input (1-based), or 1 for a command-line position.
    pub id: u64,
    /// The input text as given (trimmed).
    pub input: String,
    /// Solutions, or why there are none.
    pub outcome: Result<ShownSolved, (Failure, String)>,
}

/// What kind of line has no solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The line is not a position.
    Position,
    /// Its job failed.
    Job,
    /// It was searched: no solution within the limits asked.
    NoSolution,
}

impl Failure {
    /// Its name, as Python's `error_kind` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Failure::Position => "position",
            Failure::Job => "job",
            Failure::NoSolution => "no_solution",
        }
    }
}

/// Solutions of one position, as shown.
#[derive(Debug, Clone)]
pub struct ShownSolved {
    /// Each solution in canonical notation, shortest first (may be empty for a solved cube).
    pub solutions: Vec<String>,
    /// Their lengths.
    pub lengths: Vec<usize>,
    /// The length of the solutions proved optimal (no shorter solution exists), if any.
    pub optimal_length: Option<usize>,
    /// Search nodes visited.
    pub nodes: u64,
    /// Wall-clock milliseconds spent on this position.
    pub millis: f64,
    /// A note (e.g. "time limit reached") shown with the result.
    pub note: Option<String>,
}

impl Shown {
    /// The record of a position as the coordinator reports it, as `settings` asked it.
    pub fn new(r: &Record, settings: &Settings) -> Shown {
        let outcome = match &r.outcome {
            Err(e) => Err((
                match e {
                    RecordError::Parse(_) | RecordError::NotUtf8 => Failure::Position,
                    RecordError::Job(_) => Failure::Job,
                },
                e.to_string(),
            )),
            Ok(s) => {
                let note = s.note(settings);
                match note {
                    _ if s.solutions.is_empty() => Err((
                        Failure::NoSolution,
                        note.unwrap_or_else(|| "no solution found".into()),
                    )),
                    note => Ok(ShownSolved {
                        lengths: s.solutions.iter().map(Vec::len).collect(),
                        solutions: s
                            .solutions
                            .iter()
                            .map(|m| tables::format_moves(m))
                            .collect(),
                        optimal_length: s.optimal_length(),
                        nodes: s.nodes,
                        millis: s.micros as f64 / 1e3,
                        note,
                    }),
                }
            }
        };
        Shown {
            id: r.line,
            input: r.input.clone(),
            outcome,
        }
    }
}

/// The CSV header line.
pub const CSV_HEADER: &str = "id,input,solution,length,optimal,nodes,millis,error";

/// A CSV field as RFC 4180 writes it: quoted (its quotes doubled) when it holds a comma,
/// a quote, a line feed or a carriage return, which a reader would otherwise take for the
/// end of the field or of the record.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Shown {
    /// Renders the record (one or more lines, each ending in a newline).
    fn render(&self, format: Format) -> String {
        let mut out = String::new();
        match (&self.outcome, format) {
            (Err((_, e)), Format::Text) => {
                let _ = writeln!(out, "{}: error: {}", self.id, e);
            }
            (Err((_, e)), Format::Jsonl) => {
                let v = serde_json::json!({"id": self.id, "input": self.input, "error": e});
                let _ = writeln!(out, "{v}");
            }
            (Err((_, e)), Format::Csv) => {
                let _ = writeln!(
                    out,
                    "{},{},,,,,,{}",
                    self.id,
                    csv_field(&self.input),
                    csv_field(e)
                );
            }
            (Ok(s), _) => {
                for (sol, len) in s.solutions.iter().zip(&s.lengths) {
                    let optimal = s.optimal_length == Some(*len);
                    match format {
                        Format::Text => {
                            let shown = if sol.is_empty() {
                                "(solved: empty solution)"
                            } else {
                                sol
                            };
                            let proof = if optimal { ", optimal" } else { "" };
                            let note = s
                                .note
                                .as_deref()
                                .map(|n| format!(" [{n}]"))
                                .unwrap_or_default();
                            let moves = if *len == 1 { "move" } else { "moves" };
                            let _ = writeln!(
                                out,
                                "{}: {} ({} {moves}{}){}",
                                self.id, shown, len, proof, note
                            );
                        }
                        Format::Jsonl => {
                            let mut v = serde_json::json!({
                                "id": self.id, "input": self.input, "solution": sol, "length": len,
                                "optimal": optimal, "nodes": s.nodes,
                                "millis": (s.millis * 1000.0).round() / 1000.0,
                            });
                            if let Some(n) = &s.note {
                                v["note"] = serde_json::Value::String(n.clone());
                            }
                            let _ = writeln!(out, "{v}");
                        }
                        Format::Csv => {
                            let _ = writeln!(
                                out,
                                "{},{},{},{},{},{},{:.3},",
                                self.id,
                                csv_field(&self.input),
                                csv_field(sol),
                                len,
                                optimal,
                                s.nodes,
                                s.millis
                            );
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::{RecordError, Solved, Stop};

    fn settings() -> Settings {
        Settings::default()
    }

    fn ok() -> Record {
        Record {
            line: 3,
            input: "R U".into(),
            outcome: Ok(Solved {
                solutions: vec![tables::parse_moves("U' R'").unwrap()],
                optimal: true,
                depth_exhausted: Some(1),
                nodes: 10,
                lookups: 4,
                micros: 1500,
                stop: Stop::Completed,
            }),
        }
    }

    fn bad(id: u64, input: &str) -> Record {
        Record {
            line: id,
            input: input.into(),
            outcome: Err(RecordError::from(
                tables::Position::parse(input).unwrap_err(),
            )),
        }
    }

    #[test]
    fn the_one_record_object_and_the_failure_check_agree_with_the_writers() {
        let none = Record {
            outcome: Ok(Solved {
                solutions: Vec::new(),
                ..ok().outcome.unwrap()
            }),
            ..ok()
        };
        for (rec, kind) in [
            (ok(), None),
            (bad(4, "R Q"), Some("position")),
            (none, Some("no_solution")),
        ] {
            let f = fields(&rec, &settings());
            assert_eq!(failed(&rec), failure(&rec, &settings()).is_some());
            assert_eq!(f["error_kind"].as_str(), kind, "{f}");
            assert_eq!(
                f["error"].as_str().map(str::to_string),
                failure(&rec, &settings())
            );
            assert_eq!(f["id"], rec.line);
        }
        let f = fields(&ok(), &settings());
        assert_eq!(f["solutions"], serde_json::json!(["U' R'"]));
        assert_eq!(f["lengths"], serde_json::json!([2]));
        assert_eq!(f["optimal"], true);
        assert_eq!(f["millis"], 1.5);
    }

    #[test]
    fn jsonl_has_the_documented_fields() {
        let line = render(&ok(), &settings(), Format::Jsonl);
        let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(v["id"], 3);
        assert_eq!(v["input"], "R U");
        assert_eq!(v["solution"], "U' R'");
        assert_eq!(v["length"], 2);
        assert_eq!(v["optimal"], true);
        assert_eq!(v["millis"], 1.5);
        let err = bad(4, "R \"Q\"");
        let v: serde_json::Value =
            serde_json::from_str(render(&err, &settings(), Format::Jsonl).trim()).unwrap();
        assert!(v["error"].as_str().unwrap().contains("bad move"), "{v}");
        assert_eq!(v["input"], "R \"Q\"");
    }

    #[test]
    fn csv_quotes_and_text_reads_well() {
        let err = bad(4, "a,b");
        let csv = render(&err, &settings(), Format::Csv);
        assert!(csv.starts_with("4,\"a,b\",,,,,,"), "{csv}");
        // A carriage return (whitespace to the notation) is quoted too: one record, one line.
        let cr = render(&bad(5, "R\rQ"), &settings(), Format::Csv);
        assert!(cr.starts_with("5,\"R\rQ\","), "{cr:?}");
        assert_eq!(cr.matches(['\n', '\r']).count(), 2, "{cr:?}");
        assert_eq!(
            render(&ok(), &settings(), Format::Text),
            "3: U' R' (2 moves, optimal)\n"
        );
    }

    #[test]
    fn a_record_without_solutions_is_a_failure_with_its_note() {
        let mut none = ok();
        if let Ok(s) = &mut none.outcome {
            s.solutions.clear();
        }
        let s = Settings {
            max_length: 3,
            ..settings()
        };
        assert_eq!(
            failure(&none, &s).as_deref(),
            Some("no solution of at most 3 moves")
        );
        assert_eq!(failure(&ok(), &s), None);
        let mut out = Vec::new();
        let why = write_single(&mut out, Format::Text, &none, &s).unwrap();
        assert!(
            why.is_some() && out.is_empty(),
            "text shows it on stderr only"
        );
        let why = write_single(&mut out, Format::Jsonl, &none, &s).unwrap();
        assert!(why.is_some());
        assert!(String::from_utf8(out).unwrap().contains("\"error\""));
    }

    #[test]
    fn only_solutions_as_short_as_the_proved_first_are_optimal() {
        let mut three = ok();
        if let Ok(s) = &mut three.outcome {
            s.solutions = ["U' R'", "R U R' U2 R'", "F R U R' U' F'"]
                .iter()
                .map(|m| tables::parse_moves(m).unwrap())
                .collect();
        }
        assert_eq!(
            render(&three, &settings(), Format::Text),
            "3: U' R' (2 moves, optimal)\n3: R U R' U2 R' (5 moves)\n3: F R U R' U' F' (6 moves)\n"
        );
        let optimal: Vec<bool> = render(&three, &settings(), Format::Jsonl)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["optimal"] == true)
            .collect();
        assert_eq!(optimal, [true, false, false]);
        let csv = render(&three, &settings(), Format::Csv);
        let optimal: Vec<&str> = csv.lines().map(|l| l.split(',').nth(4).unwrap()).collect();
        assert_eq!(optimal, ["true", "false", "false"], "{csv}");
        // Every optimal solution (--all) is as short as the first: all are optimal.
        if let Ok(s) = &mut three.outcome {
            s.solutions = ["U' R'", "R' U'"]
                .iter()
                .map(|m| tables::parse_moves(m).unwrap())
                .collect();
        }
        assert_eq!(
            render(&three, &settings(), Format::Text),
            "3: U' R' (2 moves, optimal)\n3: R' U' (2 moves, optimal)\n"
        );
        // Nothing proved: none is.
        if let Ok(s) = &mut three.outcome {
            s.optimal = false;
        }
        assert!(!render(&three, &settings(), Format::Jsonl).contains("\"optimal\":true"));
    }
}
