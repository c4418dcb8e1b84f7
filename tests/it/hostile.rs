//! Hostile input through the real binary: an output that is the input, move amounts past
//! 2^64, rotations, unbounded counts and threads, CSV fields holding a carriage return,
//! a line past the bound, single tokens read the wrong way, two writers of one output
//! file, and standard input or output that is the input file. Each test is a row of the "hostile input, round two" issue, as a user meets it.

use crate::common;

use common::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary with the shared test tables, standard input closed.
fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("CUBESWARM_TABLES", tables_dir())
        .env_remove("CUBESWARM_COORDINATOR")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The two-phase solution `solve` prints for `position` (text format, line 1).
fn twophase(position: &str) -> String {
    let o = run(&["solve", "--method", "twophase", "--quiet", position]);
    assert!(o.status.success(), "{position}: {}", text(&o.stderr));
    let out = text(&o.stdout);
    let line = out.lines().next().unwrap_or_default();
    let moves = line.strip_prefix("1: ").unwrap_or(line);
    moves.split(" (").next().unwrap_or_default().to_string()
}

/// The facelet string `show` prints for `position`.
fn facelets(position: &str) -> String {
    let o = run(&["show", position]);
    assert!(o.status.success(), "{position}: {}", text(&o.stderr));
    let out = text(&o.stdout);
    out.split_whitespace()
        .find(|w| w.len() == 54 && w.chars().all(|c| "URFDLB".contains(c)))
        .unwrap_or_else(|| panic!("no facelets in {out}"))
        .to_string()
}

#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = scratch("hostile-same-file");
    let input = dir.join("f");
    std::fs::write(&input, "R U\nF2 D\n").unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(&input, dir.join("link")).unwrap();
    let i = input.to_str().unwrap();
    for out in [
        input.clone(),
        dir.join("link"),
        dir.join("sub").join("..").join("f"),
    ] {
        let o = run(&[
            "solve",
            "--method",
            "twophase",
            "--quiet",
            "--input",
            i,
            "--output",
            out.to_str().unwrap(),
        ]);
        assert_ne!(o.status.code(), Some(0), "{}", out.display());
        let err = text(&o.stderr);
        assert!(err.contains("is the input file"), "{err}");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "R U\nF2 D\n");
    }
}

/// `solve ARGS` with standard input and output opened on the given files (a shell's `<`
/// and `>>`), locally or through a coordinator that is never reached.
fn run_redirected(args: &[&str], stdin: Option<&Path>, stdout_append: Option<&Path>) -> Output {
    let open = |p: &Path| std::fs::File::open(p).unwrap();
    let append = |p: &Path| std::fs::OpenOptions::new().append(true).open(p).unwrap();
    Command::new(bin())
        .args(args)
        .env("CUBESWARM_TABLES", tables_dir())
        .env_remove("CUBESWARM_COORDINATOR")
        .stdin(stdin.map_or(Stdio::null(), |p| Stdio::from(open(p))))
        .stdout(stdout_append.map_or(Stdio::piped(), |p| Stdio::from(append(p))))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn standard_input_is_never_the_output_file() {
    let dir = scratch("hostile-stdin");
    let input = dir.join("in.txt");
    let kept = "R U\nF2 D\n";
    std::fs::write(&input, kept).unwrap();
    let i = input.to_str().unwrap();
    // A coordinator nobody listens on: the refusal comes before any connection.
    for cluster in [&[][..], &["--coordinator", "http://127.0.0.1:9"][..]] {
        for out in [i, "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"] {
            let mut args = vec![
                "solve", "--method", "twophase", "--quiet", "-i", "-", "-o", out,
            ];
            args.extend_from_slice(cluster);
            let o = run_redirected(&args, Some(&input), None);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains("is the input file (standard input reads it)"),
                "{err}"
            );
            assert_eq!(std::fs::read_to_string(&input).unwrap(), kept, "{args:?}");
        }
    }
    // Standard input from another file, or a pipe, is fine.
    let other = dir.join("out.txt");
    let o = run_redirected(
        &[
            "solve",
            "--method",
            "twophase",
            "--quiet",
            "-i",
            "-",
            "-o",
            other.to_str().unwrap(),
        ],
        Some(&input),
        None,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&other).unwrap().lines().count(), 2);
}

#[test]
fn standard_output_is_never_the_input_file() {
    let dir = scratch("hostile-stdout");
    let input = dir.join("app.txt");
    let kept = "R U F\n".repeat(1000);
    std::fs::write(&input, &kept).unwrap();
    let i = input.to_str().unwrap();
    for cluster in [&[][..], &["--coordinator", "http://127.0.0.1:9"][..]] {
        for (args, stdin) in [
            (
                vec!["solve", "--method", "twophase", "-t", "1", "-i", i],
                None,
            ),
            (
                vec!["solve", "--method", "twophase", "-i", i, "-o", "-"],
                None,
            ),
            (
                vec!["solve", "--method", "twophase", "-i", "-"],
                Some(input.as_path()),
            ),
        ] {
            let mut args = args.clone();
            args.extend_from_slice(cluster);
            let o = run_redirected(&args, stdin, Some(&input));
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains("standard output is the input file"), "{err}");
            assert_eq!(std::fs::read_to_string(&input).unwrap(), kept, "{args:?}");
        }
    }
    // Standard output appended to another file is fine.
    let other = dir.join("log.txt");
    std::fs::write(&other, "").unwrap();
    let o = run_redirected(
        &["solve", "--method", "twophase", "--quiet", "-i", i],
        None,
        Some(&other),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&other).unwrap().lines().count(),
        1000
    );
}

#[test]
fn move_amounts_past_two_to_the_64_are_taken_mod_4() {
    let r_u = twophase("R U");
    assert_eq!(twophase("R18446744073709551617 U"), r_u);
    assert_eq!(twophase("R18446744073709551619' U"), r_u);
    let u = twophase("U");
    assert_eq!(twophase("R100000000000000000000 U"), u);
    let zeros = format!("1{}", "0".repeat(40));
    assert_eq!(twophase(&format!("x{zeros} U")), u);
    assert_eq!(twophase(&format!("M{zeros} U")), u);
}

#[test]
fn rotations_are_read_as_the_cube_is_held_at_the_end() {
    // After x2 the layer on top is turned: a cuber holding the cube turns U' back.
    assert_eq!(twophase("x2 U"), "U'");
    assert_eq!(facelets("U x U"), facelets("B U"));
    assert_eq!(facelets("F x"), facelets("U"));
    assert_eq!(facelets("x U x'"), facelets("F"));
    assert_eq!(facelets("y"), facelets(""));
}

#[test]
fn threads_are_bounded_with_a_clear_error() {
    let start = Instant::now();
    let o = run(&[
        "scramble",
        "--threads",
        "100000",
        "--seed",
        "1",
        "-n",
        "3",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("--threads 100000 is more than"), "{err}");
    // Refused before anything starts (a bound far above any start-up, not a timing).
    assert!(start.elapsed() < Duration::from_secs(60));
    for args in [
        &[
            "solve",
            "--method",
            "twophase",
            "--threads",
            "100000",
            "R U",
        ][..],
        &["solve", "--method", "twophase", "--threads", "0", "R U"][..],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(text(&o.stderr).contains("--threads"), "{}", text(&o.stderr));
    }
}

#[test]
fn what_a_cluster_cannot_honour_is_refused_with_the_reason_before_connecting() {
    // Nothing listens on port 1: a refusal that names the option came before any
    // connection was tried.
    for (flag, says) in [
        (
            &["--threads", "2"][..],
            "--threads sets the local solver's threads",
        ),
        (
            &["--no-symmetry"][..],
            "--no-symmetry is the coordinator's choice",
        ),
    ] {
        let mut args = vec!["solve", "--coordinator", "http://127.0.0.1:1", "R U"];
        args.extend_from_slice(flag);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("connect"), "refused before connecting: {err}");
    }
}

/// The records of a CSV text as an RFC 4180 reader cuts them: a CR or LF outside quotes
/// ends a record (CRLF is one end), inside quotes it is part of the field.
fn csv_records(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            '\r' | '\n' if !quoted => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(std::mem::take(&mut cur));
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn a_carriage_return_in_a_csv_field_is_quoted() {
    let mut child = Command::new(bin())
        .args([
            "solve", "--method", "twophase", "--format", "csv", "--quiet", "--input", "-",
        ])
        .env("CUBESWARM_TABLES", tables_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"R\rU\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let records = csv_records(&out);
    assert_eq!(records.len(), 2, "the header and one record: {out:?}");
    assert!(records[1].starts_with("1,\"R\rU\",U' R',"), "{out:?}");
}

#[test]
fn a_solution_count_past_the_bound_is_refused() {
    let o = run(&[
        "solve",
        "--method",
        "twophase",
        "-n",
        "18446744073709551615",
        "R U",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "--solutions must be at most {}",
            proto::MAX_SOLUTIONS
        )),
        "{err}"
    );
}

#[test]
fn a_line_past_the_bound_is_its_own_record_and_the_rest_are_solved() {
    let dir = scratch("hostile-long-line");
    let input = dir.join("in.txt");
    let long = "R U ".repeat(tables::MAX_TEXT_BYTES / 2);
    std::fs::write(&input, format!("R U\n{long}\nF2 D'\n")).unwrap();
    let out = dir.join("out.jsonl");
    let o = run(&[
        "solve",
        "--method",
        "twophase",
        "--quiet",
        "--format",
        "jsonl",
        "--input",
        input.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<u64> = lines.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3]);
    let e = lines[1]["error"].as_str().unwrap();
    assert!(e.contains(&(long.len()).to_string()), "{e}");
    assert!(lines[0]["solution"].is_string() && lines[2]["solution"].is_string());
}

#[test]
fn a_single_token_that_is_no_facelet_string_is_read_as_moves() {
    for (token, same_as) in [("R1000", ""), ("Rw13'", "Rw'"), ("R//comment", "R")] {
        assert_eq!(facelets(token), facelets(same_as), "{token}");
    }
    let o = run(&["show", "R.U.F"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(!err.contains("facelet"), "read as moves: {err}");
    // One rule for moves glued together, after a bracket as after a move.
    for glued in ["R2U", "(R U)3x"] {
        let o = run(&["show", glued]);
        assert_eq!(o.status.code(), Some(1), "{glued}");
        assert!(
            text(&o.stderr).contains("separated by spaces"),
            "{glued}: {}",
            text(&o.stderr)
        );
    }
}

/// Whether another process holds `path`'s lock now.
fn locked(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

#[test]
fn a_second_writer_of_one_output_is_refused_at_once() {
    let dir = scratch("hostile-two-writers");
    let input = dir.join("in.txt");
    std::fs::write(&input, "R U\nF2 D\n").unwrap();
    let out = dir.join("out.txt");
    // The first run reads standard input, held open: it writes `out` until it ends.
    let mut first = Command::new(bin())
        .args(["solve", "--method", "twophase", "--quiet", "--input", "-"])
        .args(["--output", out.to_str().unwrap()])
        .env("CUBESWARM_TABLES", tables_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = first.stdin.take().unwrap();
    stdin.write_all(b"R U\n").unwrap();
    let start = Instant::now();
    while !locked(&out) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the first run never locked {}",
            out.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = run(&[
        "solve",
        "--method",
        "twophase",
        "--quiet",
        "--input",
        input.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(second.status.code(), Some(1));
    let err = text(&second.stderr);
    assert!(err.contains("being written by another run"), "{err}");
    assert!(err.contains(out.to_str().unwrap()), "{err}");
    stdin.write_all(b"F2 D\n").unwrap();
    drop(stdin);
    let o = first.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let written = std::fs::read_to_string(&out).unwrap();
    let ids: Vec<&str> = written
        .lines()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(ids, ["1", "2"], "the first run's records, whole: {written}");
}

#[test]
fn a_second_cluster_client_of_one_journal_is_refused_at_once() {
    let dir = scratch("hostile-two-clients");
    let input = dir.join("in.txt");
    std::fs::write(&input, "R U\nF2 D\n").unwrap();
    let out = dir.join("out.jsonl");
    // Nothing listens on port 1: the first client keeps retrying, its journal open.
    let args = |resume: bool| {
        let mut a = vec![
            "solve".to_string(),
            "--coordinator".into(),
            "http://127.0.0.1:1".into(),
            "--connect-timeout".into(),
            "600".into(),
            "--method".into(),
            "twophase".into(),
            "--format".into(),
            "jsonl".into(),
            "--quiet".into(),
            "--input".into(),
            input.to_str().unwrap().into(),
            "--output".into(),
            out.to_str().unwrap().into(),
        ];
        if resume {
            a.push("--resume".into());
        }
        a
    };
    let mut first = Command::new(bin())
        .args(args(true))
        .env_remove("CUBESWARM_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !locked(&out) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the first client never locked its journal"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for resume in [true, false] {
        let o = Command::new(bin())
            .args(args(resume))
            .env_remove("CUBESWARM_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "resume {resume}");
        let err = text(&o.stderr);
        assert!(err.contains("being written by another run"), "{err}");
        assert!(err.contains(out.to_str().unwrap()), "{err}");
    }
    let _ = first.kill();
    let _ = first.wait();
    // The journal lock ends with its run: the file can be resumed again.
    assert!(!locked(&out));
}
