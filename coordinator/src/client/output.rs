//! Result records and their three output formats (text, JSONL, CSV).

use std::fmt::Write as _;

/// Output format of `solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One human-readable line per solution.
    Text,
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
}

/// What solving one input line produced.
#[derive(Debug, Clone)]
pub struct Record {
    /// Line number in the input (1-based), or 1 for a command-line position.
    pub id: u64,
    /// The input text as given (trimmed).
    pub input: String,
    /// Solutions, or the reason there are none.
    pub outcome: Result<Solved, String>,
}

/// Solutions of one position.
#[derive(Debug, Clone)]
pub struct Solved {
    /// Each solution in canonical notation, shortest first (may be empty for a solved cube).
    pub solutions: Vec<String>,
    /// Their lengths.
    pub lengths: Vec<usize>,
    /// Proved optimal (no shorter solution exists).
    pub optimal: bool,
    /// Search nodes visited.
    pub nodes: u64,
    /// Wall-clock milliseconds spent on this position.
    pub millis: f64,
    /// A note (e.g. "time limit reached") shown with the result.
    pub note: Option<String>,
}

impl Record {
    /// The record of a position as the coordinator reports it, as `settings` asked it.
    pub fn from_proto(r: proto::Record, settings: &proto::Settings) -> Record {
        let outcome = match r.outcome {
            Err(e) => Err(e.to_string()),
            Ok(s) => {
                let note = s.note(settings);
                match note {
                    Some(n) if s.solutions.is_empty() => Err(n),
                    note => Ok(Solved {
                        lengths: s.solutions.iter().map(Vec::len).collect(),
                        solutions: s
                            .solutions
                            .iter()
                            .map(|m| tables::format_moves(m))
                            .collect(),
                        optimal: s.optimal,
                        nodes: s.nodes,
                        millis: s.micros as f64 / 1e3,
                        note,
                    }),
                }
            }
        };
        Record {
            id: r.line,
            input: r.input,
            outcome,
        }
    }
}

/// The CSV header line.
pub const CSV_HEADER: &str = "id,input,solution,length,optimal,nodes,millis,error";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Record {
    /// Renders the record (one or more lines, each ending in a newline).
    pub fn render(&self, format: Format) -> String {
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
                    match format {
                        Format::Text => {
                            let shown = if sol.is_empty() {
                                "(solved: empty solution)"
                            } else {
                                sol
                            };
                            let proof = if s.optimal { ", optimal" } else { "" };
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
                                "optimal": s.optimal, "nodes": s.nodes,
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
                                s.optimal,
                                s.nodes,
                                s.millis
                            );
                        }
                    }
                }
                if s.solutions.is_empty() {
                    let e = s.note.clone().unwrap_or_else(|| "no solution found".into());
                    return Record {
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

    fn ok() -> Record {
        Record {
            id: 3,
            input: "R U".into(),
            outcome: Ok(Solved {
                solutions: vec!["U' R'".into()],
                lengths: vec![2],
                optimal: true,
                nodes: 10,
                millis: 1.5,
                note: None,
            }),
        }
    }

    #[test]
    fn jsonl_has_the_documented_fields() {
        let line = ok().render(Format::Jsonl);
        let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(v["id"], 3);
        assert_eq!(v["input"], "R U");
        assert_eq!(v["solution"], "U' R'");
        assert_eq!(v["length"], 2);
        assert_eq!(v["optimal"], true);
        let err = Record {
            id: 4,
            input: "X".into(),
            outcome: Err("bad \"move\"".into()),
        };
        let v: serde_json::Value = serde_json::from_str(err.render(Format::Jsonl).trim()).unwrap();
        assert_eq!(v["error"], "bad \"move\"");
    }

    #[test]
    fn csv_quotes_and_text_reads_well() {
        let err = Record {
            id: 4,
            input: "a,b".into(),
            outcome: Err("x".into()),
        };
        assert_eq!(err.render(Format::Csv), "4,\"a,b\",,,,,,x\n");
        assert_eq!(ok().render(Format::Text), "3: U' R' (2 moves, optimal)\n");
    }
}
