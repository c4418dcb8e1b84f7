//! The size limits a reader relies on, checked on every test run (no build, no binary run):
//! - every non-test Rust source file holds at most [`MAX_SOURCE_LINES`] lines before its
//!   `#[cfg(test)]` module (a file past it is split by concern);
//! - `docs/performance.md` at most [`MAX_PERFORMANCE_LINES`], and the scale study's page
//!   `docs/scale.md` at most [`MAX_SCALE_LINES`]: the docs are today's figures, one table per
//!   topic, and git keeps their history;
//! - no PyO3 function or constructor takes more than [`MAX_PYO3_PARAMETERS`] parameters
//!   (options travel as one object).
//!
//! A change that grows a file past its limit fails here and says which file and by how much.

use std::path::{Path, PathBuf};

const MAX_SOURCE_LINES: usize = 600;
const MAX_PERFORMANCE_LINES: usize = 450;
const MAX_SCALE_LINES: usize = 250;
const MAX_PYO3_PARAMETERS: usize = 6;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Rust files under `dir`, skipping build outputs and test directories.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(name.as_str(), "target" | "tests" | ".git" | "node_modules") {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(p);
        }
    }
}

/// The lines of `text` before its first `#[cfg(test)]` line (all of them without one).
fn non_test_lines(text: &str) -> usize {
    text.lines()
        .take_while(|l| l.trim_start() != "#[cfg(test)]")
        .count()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .count()
}

#[test]
fn non_test_lines_are_counted_to_the_test_module() {
    assert_eq!(non_test_lines("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(non_test_lines("a\nb\nc\n"), 3);
}

#[test]
fn no_source_file_is_past_its_limit() {
    let mut files = Vec::new();
    for dir in [
        "src",
        "tables",
        "proto",
        "worker",
        "coordinator",
        "python/src",
    ] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} source files", files.len());
    let over: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = non_test_lines(&std::fs::read_to_string(f).unwrap());
            (n > MAX_SOURCE_LINES).then(|| {
                format!(
                    "{}: {n} lines before its tests (limit {MAX_SOURCE_LINES})",
                    f.strip_prefix(root()).unwrap_or(f).display()
                )
            })
        })
        .collect();
    assert!(over.is_empty(), "split by concern:\n{}", over.join("\n"));
}

#[test]
fn the_performance_pages_hold_todays_figures_only() {
    let perf = lines(&root().join("docs/performance.md"));
    assert!(
        perf <= MAX_PERFORMANCE_LINES,
        "docs/performance.md has {perf} lines (limit {MAX_PERFORMANCE_LINES}): a new figure replaces the row it updates"
    );
    let scale = root().join("docs/scale.md");
    if scale.exists() {
        let n = lines(&scale);
        assert!(
            n <= MAX_SCALE_LINES,
            "docs/scale.md has {n} lines (limit {MAX_SCALE_LINES})"
        );
    }
}

/// The parameters of each function that PyO3 exposes: a `#[pyfunction]`, or any `fn` in a
/// `#[pymethods]` block, counted from its signature (`self`, `py: Python` and `cls` are
/// not parameters a caller passes).
fn pyo3_signatures(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut exposed = false;
    let mut in_methods = false;
    let mut depth = 0i64;
    let mut methods_depth = 0i64;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[pyfunction") || t.starts_with("#[new]") {
            exposed = true;
        }
        if t.starts_with("#[pymethods") {
            in_methods = true;
            methods_depth = depth;
        }
        let is_fn = t.starts_with("fn ") || t.starts_with("pub fn ");
        if is_fn && (exposed || (in_methods && depth == methods_depth + 1)) {
            let mut sig = String::from(t);
            while !sig.contains('{') && !sig.contains(';') {
                match lines.next() {
                    Some(l) => sig.push_str(l.trim()),
                    None => break,
                }
            }
            let name = sig
                .split(['(', '<'])
                .next()
                .unwrap_or("")
                .trim_start_matches("pub ")
                .trim_start_matches("fn ")
                .to_string();
            let open = sig.find('(').unwrap_or(0);
            let mut level = 0;
            let mut close = sig.len();
            for (i, c) in sig[open..].char_indices() {
                match c {
                    '(' | '<' | '[' => level += 1,
                    ')' | '>' | ']' => {
                        level -= 1;
                        if level == 0 && c == ')' {
                            close = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let params = sig.get(open + 1..close).unwrap_or("");
            let mut n = 0;
            let mut level = 0;
            let mut current = String::new();
            let count = |p: &str| {
                let p = p.trim();
                let name = p.split(':').next().unwrap_or("").trim();
                let passed = !p.is_empty()
                    && !name.ends_with("self")
                    && name != "py"
                    && name != "_py"
                    && name != "cls";
                usize::from(passed)
            };
            for c in params.chars() {
                match c {
                    '(' | '<' | '[' => level += 1,
                    ')' | '>' | ']' => level -= 1,
                    ',' if level == 0 => {
                        n += count(&current);
                        current.clear();
                        continue;
                    }
                    _ => {}
                }
                current.push(c);
            }
            n += count(&current);
            out.push((name, n));
            exposed = false;
            depth += sig.matches('{').count() as i64 - sig.matches('}').count() as i64;
            continue;
        }
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        if in_methods && depth <= methods_depth && t.starts_with('}') {
            in_methods = false;
        }
    }
    out
}

#[test]
fn pyo3_signatures_are_counted() {
    let text = "#[pyfunction]\n#[pyo3(signature = (a, b))]\nfn f(py: Python<'_>, a: u8, b: Vec<(u8, u8)>) -> u8 {\n    a\n}\n\
                #[pymethods]\nimpl X {\n    #[new]\n    fn new(a: u8) -> Self {\n        X\n    }\n    fn g(&self, a: u8, b: u8, c: u8) {}\n}\n\
                fn private(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8) {}\n";
    assert_eq!(
        pyo3_signatures(text),
        vec![
            ("f".to_string(), 2),
            ("new".to_string(), 1),
            ("g".to_string(), 3)
        ]
    );
}

#[test]
fn no_pyo3_signature_takes_more_than_six_parameters() {
    let mut files = Vec::new();
    rust_files(&root().join("python/src"), &mut files);
    let mut over = Vec::new();
    for f in &files {
        for (name, n) in pyo3_signatures(&std::fs::read_to_string(f).unwrap()) {
            if n > MAX_PYO3_PARAMETERS {
                over.push(format!(
                    "{}: {name} takes {n} parameters (limit {MAX_PYO3_PARAMETERS})",
                    f.strip_prefix(root()).unwrap_or(f).display()
                ));
            }
        }
    }
    assert!(
        over.is_empty(),
        "pass options as one object:\n{}",
        over.join("\n")
    );
}
