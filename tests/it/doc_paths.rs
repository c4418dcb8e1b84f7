//! Every path the docs name exists: the README, `docs/*.md` and every directory's
//! `README.md` are read (no build, no binary run), and each file, example, test and
//! command they point a reader to is looked up in the tree.
//!
//! What counts as a path:
//! - a markdown link `[text](dest)` that is not a URL (`scheme:`) or an anchor (`#…`);
//!   its `#anchor` is dropped and it is resolved from the markdown file's directory, as
//!   a renderer does;
//! - a code span `` `…` `` of one word that contains a `/` or ends in a source extension
//!   ([`SOURCE_EXTS`]), with a `#anchor` or `:line` suffix dropped;
//! - in a fenced code block, or a code span of several words (a command), each word that
//!   starts with `./`, `../` or a top-level entry of the repository followed by `/`
//!   (`bench/x.sh`, `deploy/check`): the files a command runs or reads;
//! - `--example NAME` and `--test NAME` (in `-p PACKAGE` when the command says so, else in
//!   any package), and `-p PACKAGE` itself.
//!
//! `DOC_PATHS_LIST=1 cargo test --test it doc_paths -- --nocapture` lists every lookup.
//!
//! A code span or command word is found if it exists from the markdown file's directory,
//! from that directory's `src/` (a crate README's module names) or from the repository
//! root. Not required, by rule rather than by list: absolute paths (`/dev/…`, `/healthz`),
//! `~/…`, anything with `$`, `*`, `?`, `=`, braces, brackets or angle brackets
//! (variables, globs, placeholders), URLs, paths that leave the repository (`../shared/…`
//! beside a checkout), `target/…` and `dist/…` (build outputs), `TYPE/NAME` in a
//! `kubectl` command (a Kubernetes resource), a code span that is a link's text (its
//! link is checked instead), and a bare file name whose extension is not a source one
//! (`scrambles.txt`, `out.jsonl`, `hard.jsonl.gz` in usage examples are files the user
//! makes).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Extensions of files that live in the repository: a bare name ending in one of these
/// (`runner.rs`) is a claim that the file exists. Data and output extensions (`.txt`,
/// `.jsonl`, `.csv`, `.gz`, `.tbl`) are left out: bare, they name the user's files.
const SOURCE_EXTS: &[&str] = &[
    "rs", "md", "toml", "py", "pyi", "sh", "proto", "yaml", "yml", "json", "mjs", "png",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Directories never searched for READMEs: build outputs, tools' caches, hidden ones.
fn skipped_dir(name: &str) -> bool {
    name.starts_with('.') || name == "target" || name == "node_modules" || name == "__pycache__"
}

/// The markdown files checked: `README.md` in any directory, and `docs/*.md`.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !skipped_dir(&name) {
                    walk(&path, out);
                }
            } else if name == "README.md" {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root(), &mut files);
    for e in std::fs::read_dir(root().join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            files.push(e.path());
        }
    }
    files.sort();
    files
}

/// A package of the workspace (or the Python package's own): its name and directory.
struct Package {
    name: String,
    dir: PathBuf,
}

/// Every directory up to two levels down whose `Cargo.toml` has a `[package]`.
fn packages() -> Vec<Package> {
    let mut dirs = vec![root()];
    for e in std::fs::read_dir(root()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() && !skipped_dir(&name) {
            dirs.push(e.path());
            for f in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
                if f.path().is_dir() {
                    dirs.push(f.path());
                }
            }
        }
    }
    dirs.into_iter()
        .filter_map(|dir| {
            let toml = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
            let after = toml.split("[package]").nth(1)?;
            let line = after.lines().find(|l| l.trim_start().starts_with("name"))?;
            let name = line.split('"').nth(1)?.to_string();
            Some(Package { name, dir })
        })
        .collect()
}

/// One thing the docs name, where they name it.
struct Mention {
    file: PathBuf,
    line: usize,
    what: String,
}

/// The checker: the tree's facts, and what it found missing.
struct Checker {
    packages: Vec<Package>,
    top_level: BTreeSet<String>,
    /// How many paths, examples, tests and packages were looked up: a parser that
    /// matched nothing would pass with no missing path.
    checked: usize,
    missing: Vec<Mention>,
}

fn strip_suffixes(s: &str) -> &str {
    let s = s.split('#').next().unwrap();
    // `src/main.rs:42`: a line number.
    match s.rsplit_once(':') {
        Some((p, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => p,
        _ => s,
    }
}

/// A word no rule requires to exist: variables, globs, placeholders, URLs, absolute and
/// home paths, build outputs.
fn exempt(s: &str) -> bool {
    s.is_empty()
        || s.starts_with('/')
        || s.starts_with('~')
        || s.contains("://")
        || s.contains(|c: char| "$*?{}[]<>|=\\".contains(c))
        || ["target", "dist"]
            .iter()
            .any(|out| s == *out || s.starts_with(&format!("{out}/")))
}

/// Whether a path, its `..` taken lexically, leaves the repository.
fn outside_repo(p: &Path) -> bool {
    let mut parts: Vec<std::path::Component> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            c => parts.push(c),
        }
    }
    !parts.iter().collect::<PathBuf>().starts_with(root())
}

fn source_ext(s: &str) -> bool {
    s.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && SOURCE_EXTS.contains(&ext))
}

impl Checker {
    fn new() -> Checker {
        let top_level = std::fs::read_dir(root())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "target")
            .collect();
        Checker {
            packages: packages(),
            top_level,
            checked: 0,
            missing: Vec::new(),
        }
    }

    /// One lookup: `found` or not, `what` said in the report.
    fn expect(&mut self, found: bool, file: &Path, line: usize, what: String) {
        self.checked += 1;
        if std::env::var_os("DOC_PATHS_LIST").is_some() {
            eprintln!("{}:{line}: {what}: {found}", file.display());
        }
        if found {
            return;
        }
        self.missing.push(Mention {
            file: file.to_path_buf(),
            line,
            what,
        });
    }

    /// Whether `p` exists from the markdown file's directory, its `src/`, or the root.
    /// A path that leaves the repository from there names a file of the machine, not of
    /// the repository, and is not required.
    fn found(&self, md: &Path, p: &str) -> bool {
        let dir = md.parent().unwrap();
        [dir.to_path_buf(), dir.join("src"), root()]
            .iter()
            .any(|base| outside_repo(&base.join(p)) || base.join(p).exists())
    }

    /// A markdown link's destination, resolved as a renderer resolves it.
    fn link(&mut self, md: &Path, line: usize, dest: &str) {
        let dest = dest.split_whitespace().next().unwrap_or("");
        let dest = dest.trim_start_matches('<').trim_end_matches('>');
        let scheme = dest
            .split_once(':')
            .is_some_and(|(s, _)| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic()));
        if dest.is_empty() || dest.starts_with('#') || scheme {
            return;
        }
        let path = md.parent().unwrap().join(dest.split('#').next().unwrap());
        let found = outside_repo(&path) || path.exists();
        self.expect(found, md, line, format!("link ({dest})"));
    }

    /// A code span of one word.
    fn span_path(&mut self, md: &Path, line: usize, span: &str) {
        let p = strip_suffixes(span);
        if exempt(p) || !(p.contains('/') || source_ext(p)) {
            return;
        }
        // `--tables-dir`/`--table`: flags, not paths.
        if p.starts_with('-') || p.contains("::") {
            return;
        }
        let found = self.found(md, p);
        self.expect(found, md, line, format!("`{span}`"));
    }

    /// A package a command names with `-p`, if the tree has it.
    fn package(&self, name: &str) -> Option<&Package> {
        self.packages.iter().find(|p| p.name == name)
    }

    /// Whether `kind/NAME.rs` (or `kind/NAME/main.rs`) is in the package, or in any.
    fn target_exists(&self, pkg: Option<&str>, kind: &str, name: &str) -> bool {
        self.packages
            .iter()
            .filter(|p| pkg.is_none_or(|n| p.name == n))
            .any(|p| {
                let d = p.dir.join(kind);
                d.join(format!("{name}.rs")).exists() || d.join(name).join("main.rs").exists()
            })
    }

    /// One line of a command (a code block's line, or a code span of several words).
    fn command(&mut self, md: &Path, line: usize, text: &str) {
        let words: Vec<&str> = text
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| "\"'`(),;".contains(c)))
            .collect();
        let cargo = words.contains(&"cargo");
        let pkg = words
            .windows(2)
            .find(|w| cargo && (w[0] == "-p" || w[0] == "--package"))
            .map(|w| w[1]);
        if let Some(name) = pkg {
            let found = self.package(name).is_some();
            self.expect(found, md, line, format!("package `{name}` (-p)"));
            if !found {
                return;
            }
        }
        for w in words.windows(2) {
            for (flag, kind) in [("--example", "examples"), ("--test", "tests")] {
                if w[0] == flag && !exempt(w[1]) && !w[1].starts_with('-') {
                    let found = self.target_exists(pkg, kind, w[1]);
                    self.expect(found, md, line, format!("{flag} {}", w[1]));
                }
            }
        }
        let kubectl = words.contains(&"kubectl");
        for w in &words {
            let p = strip_suffixes(w.trim_end_matches(':'));
            let p = p.strip_prefix("./").unwrap_or(p);
            let first = p.split('/').next().unwrap();
            let repo_path =
                p.contains('/') && (p.starts_with("../") || self.top_level.contains(first));
            // `kubectl logs deploy/NAME`: a Kubernetes resource, TYPE/NAME.
            let resource = kubectl && p.matches('/').count() == 1 && !p.contains('.');
            if repo_path && !resource && !exempt(p) {
                let found = self.found(md, p);
                self.expect(found, md, line, format!("`{w}` (in a command)"));
            }
        }
    }

    /// Reads one markdown file: fenced blocks as commands, the rest for code spans and
    /// links.
    fn check(&mut self, md: &Path) {
        let text = std::fs::read_to_string(md).unwrap();
        let mut prose = String::new();
        // The line of each byte of `prose` is found through the lines it starts.
        let mut starts: Vec<(usize, usize)> = Vec::new();
        let mut fence: Option<String> = None;
        for (i, l) in text.lines().enumerate() {
            let t = l.trim_start();
            match &fence {
                Some(f) if t.starts_with(f.as_str()) => fence = None,
                Some(_) => self.command(md, i + 1, l),
                None if t.starts_with("```") || t.starts_with("~~~") => {
                    fence = Some(t[..3].to_string());
                }
                None => {
                    starts.push((prose.len(), i + 1));
                    prose.push_str(l);
                    prose.push('\n');
                }
            }
        }
        let line_of = |at: usize| starts[starts.partition_point(|&(s, _)| s <= at) - 1].1;

        // Code spans first (a run of n backticks closed by the next run of n); what is
        // left outside them is searched for links.
        let b = prose.as_bytes();
        let mut outside = String::with_capacity(prose.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'`' {
                let c = prose[i..].chars().next().unwrap();
                outside.push(c);
                i += c.len_utf8();
                continue;
            }
            let n = b[i..].iter().take_while(|&&c| c == b'`').count();
            let open = i;
            let body = i + n;
            let mut j = body;
            let mut close = None;
            while j < b.len() {
                if b[j] == b'`' {
                    let m = b[j..].iter().take_while(|&&c| c == b'`').count();
                    if m == n {
                        close = Some(j);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            let Some(close) = close else {
                outside.push_str(&prose[open..body]);
                i = body;
                continue;
            };
            let span = prose[body..close].replace('\n', " ");
            let span = span.trim();
            let line = line_of(open);
            // A span that is a link's text (`[`x`](dest)`) is checked through its link.
            let link_text = prose[..open].ends_with('[') && prose[close + n..].starts_with("](");
            if !link_text && span.contains(' ') {
                self.command(md, line, span);
            } else if !link_text {
                self.span_path(md, line, span);
            }
            // Blank the span out, keeping `outside`'s byte offsets those of `prose`.
            outside.extend(std::iter::repeat_n(' ', close + n - open));
            i = close + n;
        }

        let mut from = 0;
        while let Some(k) = outside[from..].find("](") {
            let start = from + k + 2;
            let mut depth = 1;
            let mut end = start;
            for (off, c) in outside[start..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    '\n' => break,
                    _ => {}
                }
                if depth == 0 {
                    end = start + off;
                    break;
                }
            }
            if end > start {
                self.link(md, line_of(start), &outside[start..end]);
            }
            from = start;
        }
    }
}

#[test]
fn every_path_the_docs_name_exists() {
    let files = markdown_files();
    assert!(files.len() >= 5, "markdown files found: {files:?}");
    let mut checker = Checker::new();
    for md in &files {
        checker.check(md);
    }
    assert!(
        checker.checked >= 100,
        "only {} paths found in the docs: is the parser still reading them?",
        checker.checked
    );
    let report: Vec<String> = checker
        .missing
        .iter()
        .map(|m| {
            let rel = m.file.strip_prefix(root()).unwrap_or(&m.file);
            format!("{}:{}: {} does not exist", rel.display(), m.line, m.what)
        })
        .collect();
    assert!(
        report.is_empty(),
        "{} of the {} paths named in the docs are missing:\n{}",
        report.len(),
        checker.checked,
        report.join("\n")
    );
}
