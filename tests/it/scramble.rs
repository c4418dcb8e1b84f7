//! End-to-end tests of `cubeswarm scramble`: the real binary, the two-phase tables of
//! `target/test-tables` (built there once if missing), each output read back and checked
//! against the scrambles it names.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use tables::facelet::to_facelets;
use tables::{parse_moves, Cube};

fn tables_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target")
                .join("test-tables");
            std::fs::create_dir_all(&d).unwrap();
            let files = ["twophase-fsym.tbl", "twophase-p1.tbl", "twophase-p2.tbl"];
            if !files.iter().all(|f| d.join(f).exists()) {
                let o = Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
                    .args(["tables", "build", "twophase"])
                    .env("CUBESWARM_TABLES", &d)
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}", stderr(&o));
            }
            d
        })
        .clone()
}

fn scramble(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
        .arg("scramble")
        .args(args)
        .env("CUBESWARM_TABLES", tables_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run cubeswarm")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(args: &[&str]) -> Output {
    let o = scramble(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

/// The state a scramble makes, as a facelet string.
fn facelets_of(scramble: &str) -> String {
    to_facelets(&Cube::from_moves(&parse_moves(scramble).unwrap()))
}

/// One scramble per line, the same for one thread or two and for a longer run of the
/// same seed; another seed gives others.
#[test]
fn text_scrambles_reproduce_by_seed_whatever_the_threads() {
    let one = stdout(&ok(&["-n", "12", "--seed", "9", "-t", "1", "--quiet"]));
    let two = stdout(&ok(&["--count", "12", "--seed", "9", "--threads", "2"]));
    assert_eq!(one, two);
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines.len(), 12);
    for l in &lines {
        let moves = parse_moves(l).unwrap();
        assert!((2..=20).contains(&moves.len()), "{l}");
        assert!(!Cube::from_moves(&moves).is_solved(), "{l}");
    }
    let fewer = stdout(&ok(&["-n", "5", "--seed", "9", "--quiet"]));
    assert_eq!(fewer.lines().collect::<Vec<_>>(), lines[..5]);
    let other = stdout(&ok(&["-n", "12", "--seed", "10", "--quiet"]));
    assert!(other.lines().zip(&lines).all(|(a, b)| a != *b));
}

/// JSONL and CSV rows carry the index, the scramble, the facelets of the state it makes
/// and its length, for the same scrambles as the text.
#[test]
fn jsonl_and_csv_rows_describe_each_scramble() {
    let text = stdout(&ok(&["-n", "6", "--seed", "3", "--quiet"]));
    let text: Vec<&str> = text.lines().collect();
    let jsonl = stdout(&ok(&[
        "-n", "6", "--seed", "3", "--format", "jsonl", "--quiet",
    ]));
    let rows: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 6);
    for (i, (v, t)) in rows.iter().zip(&text).enumerate() {
        assert_eq!(v["index"], i);
        assert_eq!(v["scramble"], *t);
        assert_eq!(v["facelets"], facelets_of(t));
        assert_eq!(v["length"], parse_moves(t).unwrap().len());
    }
    let csv = stdout(&ok(&[
        "-n", "6", "--seed", "3", "--format", "csv", "--quiet",
    ]));
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("index,scramble,facelets,length"));
    for (i, (line, t)) in lines.zip(&text).enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 4, "{line}");
        assert_eq!(f[0], i.to_string());
        assert_eq!(f[1], *t);
        assert_eq!(f[2], facelets_of(t));
        assert_eq!(f[3], parse_moves(t).unwrap().len().to_string());
    }
}

/// Without --seed a seed is chosen and said on stderr; giving it back makes the same
/// scrambles. --output writes the file and nothing to stdout; the closing line counts.
#[test]
fn the_chosen_seed_is_printed_and_makes_the_same_scrambles() {
    let o = ok(&["-n", "3"]);
    let err = stderr(&o);
    let seed = err
        .lines()
        .find_map(|l| l.strip_prefix("seed "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no seed line: {err}"));
    assert!(err.contains(&format!("--seed {seed}")), "{err}");
    assert!(err.contains("3 scrambles in"), "{err}");
    let dir = std::env::temp_dir().join(format!("cubeswarm-scramble-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.txt");
    let again = ok(&["-n", "3", "--seed", seed, "-o", file.to_str().unwrap()]);
    assert_eq!(stdout(&again), "");
    assert!(!stderr(&again).contains("seed "), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad flags: one clear line, exit 1 for values the command refuses, 2 for what clap
/// cannot parse; nothing on stdout.
#[test]
fn bad_flags_are_refused_with_a_clear_message() {
    for (args, code, says) in [
        (&["--count", "0"][..], 1, "--count must be at least 1"),
        (&["--threads", "0"][..], 1, "--threads must be at least 1"),
        (
            &["-n", "1", "--seed", "1", "-o", "/nonexistent-dir/s.txt"][..],
            1,
            "cannot create output file /nonexistent-dir/s.txt",
        ),
        (&["--count=-3"][..], 2, "--count"),
        (&["--count", "many"][..], 2, "--count"),
        (&["--seed", "abc"][..], 2, "--seed"),
        (&["--seed", "18446744073709551616"][..], 2, "--seed"),
        (&["--format", "xml"][..], 2, "--format"),
    ] {
        let o = scramble(args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(stdout(&o), "", "{args:?}");
        if code == 1 {
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        }
    }
}
