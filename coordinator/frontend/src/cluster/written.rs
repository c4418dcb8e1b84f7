//! A written record read back: its line id and input text, as the journal and its check
//! against the input need them.

use crate::output::Format;

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
