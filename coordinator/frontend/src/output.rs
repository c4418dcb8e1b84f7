//! The output formats of `solve` (text, JSONL, CSV): how a [`proto::Record`] is written,
//! the same for the embedded default and a cluster.

use proto::{Record, Settings};
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

/// Why `rec` has no solution (an error record, or nothing found within the limits), as
/// the output shows it; `None` when it has solutions.
pub fn failure(rec: &Record, settings: &Settings) -> Option<String> {
    match Shown::new(rec, settings).outcome {
        Err(e) => Some(e),
        Ok(s) if s.solutions.is_empty() => {
            Some(s.note.unwrap_or_else(|| "no solution found".into()))
        }
        Ok(_) => None,
    }
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

/// A record as the formats show it: moves in notation, the note of its settings.
#[derive(Debug, Clone)]
struct Shown {
    /// Line number in the input (1-based), or 1 for a command-line position.
    id: u64,
    /// The input text as given (trimmed).
    input: String,
    /// Solutions, or the reason there are none.
    outcome: Result<ShownSolved, String>,
}

/// Solutions of one position, as shown.
#[derive(Debug, Clone)]
struct ShownSolved {
    /// Each solution in canonical notation, shortest first (may be empty for a solved cube).
    solutions: Vec<String>,
    /// Their lengths.
    lengths: Vec<usize>,
    /// The length of the solutions proved optimal (no shorter solution exists), if any.
    optimal_length: Option<usize>,
    /// Search nodes visited.
    nodes: u64,
    /// Wall-clock milliseconds spent on this position.
    millis: f64,
    /// A note (e.g. "time limit reached") shown with the result.
    note: Option<String>,
}

impl Shown {
    /// The record of a position as the coordinator reports it, as `settings` asked it.
    fn new(r: &Record, settings: &Settings) -> Shown {
        let outcome = match &r.outcome {
            Err(e) => Err(e.to_string()),
            Ok(s) => {
                let note = s.note(settings);
                match note {
                    Some(n) if s.solutions.is_empty() => Err(n),
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
            (Err(e), Format::Text) => {
                let _ = writeln!(out, "{}: error: {}", self.id, e);
            }
            (Err(e), Format::Jsonl) => {
                let v = serde_json::json!({"id": self.id, "input": self.input, "error": e});
                let _ = writeln!(out, "{v}");
            }
            (Err(e), Format::Csv) => {
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
                            let _ = writeln!(
                                out,
                                "{}: {} ({} moves{}){}",
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
                if s.solutions.is_empty() {
                    let e = s.note.clone().unwrap_or_else(|| "no solution found".into());
                    return Shown {
                        id: self.id,
                        input: self.input.clone(),
                        outcome: Err(e),
                    }
                    .render(format);
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
