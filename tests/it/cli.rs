//! End-to-end tests of the `cubeswarm` binary: real processes, real table files.
//!
//! Tables are built once per test run into `target/test-tables` (shared with the worker
//! crate's tests; files are written to a temporary name and renamed, so concurrent builders
//! are safe).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn tables_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("test-tables");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cubeswarm-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Copies h48h0k4 and cocsep from the shared test tables (built there first if missing)
/// into `dir`.
fn copy_h0k4_tables(dir: &std::path::Path) {
    for f in ["h48h0k4.tbl", "cocsep.tbl"] {
        let src = tables_dir().join(f);
        if !src.exists() {
            let o = cubeswarm(&["tables", "build", "h48h0k4"]);
            assert!(o.status.success(), "{}", stderr(&o));
        }
        std::fs::copy(&src, dir.join(f)).unwrap();
    }
}

fn cubeswarm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
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

#[test]
fn show_prints_net_and_facelets() {
    let o = cubeswarm(&["show", "R"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"),
        "{out}"
    );
    // Not a terminal: plain letters, no escape codes.
    assert!(!out.contains('\x1b'));
    assert_eq!(out.lines().count(), 11);
    // A quarter turn is kept by the 4 rotations about its axis, and inverted by the 4
    // mirrors in planes through it.
    assert!(
        out.contains("symmetries: 4 of the 48 fix it, 4 map it to its inverse"),
        "{out}"
    );
}

#[test]
fn bad_input_is_one_clear_line_and_nonzero_exit() {
    let o = cubeswarm(&["show", "R U Q2"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("\"Q2\"") && err.contains("token 3"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A facelet string with a flipped edge: UF edge stickers swapped (U8 <-> F2).
    let mut f: Vec<char> = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
        .chars()
        .collect();
    f.swap(7, 19);
    let s: String = f.into_iter().collect();
    let o = cubeswarm(&["solve", "--method", "twophase", &s]);
    assert!(!o.status.success());
    assert!(stderr(&o).to_lowercase().contains("flip"), "{}", stderr(&o));
}

/// A scramble in cubing.js notation: slices, wide moves, rotations, brackets, comments
/// and newlines, each the cube its face moves make (as the cube is held at the end).
#[test]
fn show_reads_cubing_js_notation() {
    let facelets = |position: &str| {
        let o = cubeswarm(&["show", "--no-color", position]);
        assert!(o.status.success(), "{position:?}: {}", stderr(&o));
        stdout(&o).lines().last().unwrap_or_default().to_string()
    };
    let h = facelets("M2 U M2 U2 M2 U M2");
    assert_eq!(h, facelets("R2 U2 R U2 R2 U2 R2 U2 R U2 R2"));
    assert_ne!(h, facelets(""));
    assert_eq!(facelets("[R,U]"), facelets("R U R' U'"));
    assert_eq!(
        facelets("(R U R' U')3"),
        facelets("R U R' U' R U R' U' R U R' U'")
    );
    assert_eq!(
        facelets("r U R' // wide\nx (R U)'"),
        facelets("L B R' U' R'")
    );
    assert_eq!(facelets("x y z2"), facelets(""));
}

/// A bad scramble fails as a bad face move does, naming the token and saying why.
#[test]
fn notation_errors_name_the_token_and_the_reason() {
    let bad_move = cubeswarm(&["show", "R U Q2"]);
    for (position, token, place, reason) in [
        ("R [U, ", "\"[\"", "token 2 (character 2)", "never closed"),
        (
            "[R, U]2",
            "\"]2\"",
            "token 5 (character 5)",
            "takes no amount",
        ),
        ("R 3Rw", "\"3Rw\"", "token 2 (character 2)", "layer numbers"),
    ] {
        let o = cubeswarm(&["show", position]);
        assert!(!o.status.success(), "{position}");
        assert_eq!(o.status.code(), bad_move.status.code(), "{position}");
        let err = stderr(&o);
        assert!(
            err.contains(token) && err.contains(place) && err.contains(reason),
            "{position}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn twophase_batch_keeps_order_and_reports_bad_lines() {
    let dir = scratch("batch");
    let input = dir.join("in.txt");
    let output = dir.join("out.jsonl");
    let solved = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";
    let mut parity: Vec<char> = solved.chars().collect();
    // Swap two edges' stickers wholesale (UF and UR): a single edge swap = parity fault.
    for (a, b) in [(7usize, 5usize), (19, 10)] {
        parity.swap(a, b);
    }
    let parity: String = parity.into_iter().collect();
    let lines = [
        "# a comment line",
        "R U R' U' F2 D L2 B",
        "",
        "R U X",
        "D2 F' L U2 R B' D F2 U L' B2 R2 D' F",
        "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBBX",
        &parity,
        "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2",
        solved,
    ];
    std::fs::File::create(&input)
        .unwrap()
        .write_all(lines.join("\n").as_bytes())
        .unwrap();
    let o = cubeswarm(&[
        "solve",
        "--method",
        "twophase",
        "--input",
        input.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--format",
        "jsonl",
        "--quiet",
    ]);
    // Exit status 3: every line has its record, but some are errors.
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let text = std::fs::read_to_string(&output).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<u64> = recs.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert_eq!(
        ids,
        vec![2, 4, 5, 6, 7, 8, 9],
        "one record per position line, in order"
    );
    let errors: Vec<bool> = recs.iter().map(|r| r.get("error").is_some()).collect();
    assert_eq!(errors, vec![false, true, false, true, true, false, false]);
    assert!(recs[1]["error"].as_str().unwrap().contains("\"X\""));
    assert!(recs[4]["error"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("parity"));
    for r in recs.iter().filter(|r| r.get("error").is_none()) {
        let len = r["length"].as_u64().unwrap();
        assert!(len <= 20);
        // Check the solution really solves the input, through the binary's own `show`:
        // scramble followed by solution must be the solved cube.
        let input = r["input"].as_str().unwrap();
        if input.len() == 54 {
            assert_eq!(len, 0);
            continue;
        }
        let both = format!("{} {}", input, r["solution"].as_str().unwrap());
        let o = cubeswarm(&["show", &both]);
        assert!(stdout(&o).contains(solved), "{both}");
    }
}

/// A solution is marked optimal only when it is proved so: with `-n 3`, two-phase proves
/// its shortest answer, and the longer ones it lists are not optimal.
#[test]
fn only_the_proved_shortest_solutions_are_marked_optimal() {
    let scramble = "R U R' U' F2 D L2 B";
    for format in ["text", "jsonl", "csv"] {
        let o = cubeswarm(&[
            "solve", "--method", "twophase", "-n", "3", "--format", format, scramble,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        let rows: Vec<(usize, bool)> = out
            .lines()
            .filter(|l| !l.starts_with("id,"))
            .map(|l| match format {
                "text" => {
                    let (_, tail) = l.rsplit_once(" (").unwrap();
                    let len = tail.split(' ').next().unwrap().parse().unwrap();
                    (len, tail.contains("optimal"))
                }
                "jsonl" => {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    (v["length"].as_u64().unwrap() as usize, v["optimal"] == true)
                }
                _ => {
                    let f: Vec<&str> = l.split(',').collect();
                    (f[3].parse().unwrap(), f[4] == "true")
                }
            })
            .collect();
        assert_eq!(rows.len(), 3, "{out}");
        let shortest = rows[0].0;
        assert!(rows[0].1, "the shortest is proved optimal: {out}");
        for &(len, optimal) in &rows {
            assert_eq!(optimal, len == shortest, "{format}: {out}");
        }
        assert!(rows.iter().any(|&(len, _)| len > shortest), "{out}");
    }
}

/// A file that starts with a UTF-8 byte-order mark (as some editors write it) is read
/// without it: its first line is a position like the others.
#[test]
fn a_byte_order_mark_is_not_part_of_the_first_line() {
    let dir = scratch("bom");
    let input = dir.join("in.txt");
    std::fs::write(&input, "\u{feff}R U\nF2 D'\n").unwrap();
    let o = cubeswarm(&[
        "solve",
        "--method",
        "twophase",
        "--format",
        "jsonl",
        "--quiet",
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["input"], "R U", "{out}");
    assert_eq!(first["solution"], "U' R'", "{out}");
}

#[test]
fn optimal_solve_of_a_short_scramble() {
    let o = cubeswarm(&["solve", "--format", "jsonl", "R U F' D2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["length"], 4);
    assert_eq!(v["optimal"], true);
    let both = format!("R U F' D2 {}", v["solution"].as_str().unwrap());
    let o = cubeswarm(&["show", &both]);
    assert!(
        stdout(&o).contains("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"),
        "{both}"
    );
    // A solved cube gets the empty solution.
    let o = cubeswarm(&["solve", "--format", "jsonl", ""]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["length"], 0);
    assert_eq!(v["solution"], "");
}

#[test]
fn the_small_table_note_waits_for_a_slow_position() {
    // The README's first command: short scrambles, solved at once even with h48h0k4, so
    // the note on random-state positions (said when a position is slow) is not said.
    let dir = scratch("small-table-note");
    copy_h0k4_tables(&dir);
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/scrambles.txt");
    let o = cubeswarm(&[
        "solve",
        "--tables-dir",
        dir.to_str().unwrap(),
        "--table",
        "h48h0k4",
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&input).unwrap();
    let lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .count();
    assert_eq!(stdout(&o).lines().count(), lines);
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
}

#[test]
fn corrupt_table_file_is_refused_with_name_and_reason() {
    let dir = scratch("corrupt");
    // A truncated copy of a real table, and a foreign file under a table's name.
    let src = tables_dir().join("h48h0k4.tbl");
    if !src.exists() {
        let o = cubeswarm(&["tables", "build", "h48h0k4"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // The corner table it also needs is intact.
    std::fs::copy(tables_dir().join("cocsep.tbl"), dir.join("cocsep.tbl")).unwrap();
    let bytes = std::fs::read(&src).unwrap();
    std::fs::write(dir.join("h48h0k4.tbl"), &bytes[..bytes.len() / 2]).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
        .args([
            "--tables-dir",
            dir.to_str().unwrap(),
            "solve",
            "--table",
            "h48h0k4",
            "R U",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("h48h0k4") && err.to_lowercase().contains("truncated"),
        "{err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
        .args([
            "--tables-dir",
            dir.to_str().unwrap(),
            "tables",
            "verify",
            "h48h0k4",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stdout(&o).contains("FAILED"), "{}", stdout(&o));
}

/// A directory made before eoesep existed (a 2-bit table beside cocsep and h48h0k4, no
/// eoesep) keeps working: where it cannot be written, a solve says so and searches with
/// the h48h0k4 fallback; where it can, the first solve builds the missing fallback, says so, and
/// answers the optimum; `tables list` then shows it present.
#[test]
fn a_table_directory_without_eoesep_gets_it_on_its_first_solve() {
    let dir = scratch("no-eoesep");
    copy_h0k4_tables(&dir);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
            .arg("--tables-dir")
            .arg(&dir)
            .args(args)
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .output()
            .unwrap()
    };
    // h48h0k2 made the old way: converted from h48h0k4, no fallback built beside it.
    let o = run(&["tables", "build", "h48h0k2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(dir.join("eoesep.tbl")).unwrap();
    // eoesep's row of `tables list`.
    let listed = || {
        let o = run(&["tables", "list"]);
        stdout(&o)
            .lines()
            .find(|l| l.starts_with("eoesep "))
            .map(String::from)
            .unwrap_or_default()
    };
    assert!(listed().contains("missing"), "{}", listed());
    solve_where_the_directory_cannot_be_written(&dir);
    assert!(listed().contains("missing"), "{}", listed());
    let o = run(&SOLVE_H0K2);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("eoesep"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["length"], 6);
    assert_eq!(v["optimal"], true);
    assert!(dir.join("eoesep.tbl").exists());
    assert!(listed().contains("present"), "{}", listed());
}

/// A six-move scramble solved with h48h0k2, whose fallback is eoesep (or h48h0k4).
const SOLVE_H0K2: [&str; 6] = [
    "solve",
    "--table",
    "h48h0k2",
    "--format",
    "jsonl",
    "R U2 F' L D2 B",
];

/// `solve` on `dir` as a user who cannot write it (root: `nobody`, through `setpriv`;
/// others: the directory made read-only): the solve answers with the h48h0k4 fallback and
/// says why eoesep is missing.
fn solve_where_the_directory_cannot_be_written(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let root = stdout(&Command::new("id").arg("-u").output().unwrap()).trim() == "0";
    let cache = dir.join("cache-anyone");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_cubeswarm"));
        c
    } else {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
    };
    let o = cmd
        .arg("--tables-dir")
        .arg(dir)
        .args(SOLVE_H0K2)
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    if !root {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("searching with the older h48h0k4 fallback"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (v["length"].as_u64(), v["optimal"].as_bool()),
        (Some(6), Some(true))
    );
    assert!(!dir.join("eoesep.tbl").exists());
}

/// A table whose body was damaged in place (8,000,000 bytes flipped) never answers: a
/// solve reads the body once, refuses the file with its name and the reason, and writes
/// no record; a solve on the intact file is remembered in the user's cache, and the
/// damage after it is still caught (the stamp no longer matches the changed file).
#[test]
fn a_table_damaged_in_place_is_refused_before_it_answers() {
    let dir = scratch("damaged-body");
    let cache = dir.join("cache");
    copy_h0k4_tables(&dir);
    let solve = || {
        Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
            .args([
                "--tables-dir",
                dir.to_str().unwrap(),
                "solve",
                "--quiet",
                "--table",
                "h48h0k4",
                "--format",
                "jsonl",
                "R U R' U'",
            ])
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap()
    };
    let o = solve();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"length\":4"), "{}", stdout(&o));
    let stamps = std::fs::read_dir(cache.join("cubeswarm/verified"))
        .unwrap()
        .count();
    assert_eq!(stamps, 2, "one stamp per file checked");
    // Damage the body in place: the same file, changed.
    let path = dir.join("h48h0k4.tbl");
    {
        use std::io::{Read, Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let mut body = vec![0u8; 8_000_000];
        f.seek(SeekFrom::Start(4096)).unwrap();
        f.read_exact(&mut body).unwrap();
        body.iter_mut().for_each(|b| *b ^= 0xff);
        f.seek(SeekFrom::Start(4096)).unwrap();
        f.write_all(&body).unwrap();
    }
    let o = solve();
    assert!(!o.status.success(), "{}", stdout(&o));
    assert_eq!(stdout(&o), "", "no record from a damaged table");
    let err = stderr(&o);
    assert!(
        err.contains("h48h0k4.tbl") && err.contains("checksum"),
        "{err}"
    );
}

/// A damaged `twophase-p2` is named as the file at fault, by a solve and by `tables
/// verify`, and `twophase-p1` (intact) is not blamed.
#[test]
fn a_damaged_twophase_p2_is_named_and_p1_is_not_blamed() {
    let dir = scratch("damaged-p2");
    // The shared test tables may not be built yet when this test runs first.
    let o = cubeswarm(&["tables", "build", "twophase", "--if-missing"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["twophase-fsym.tbl", "twophase-p1.tbl"] {
        std::fs::hard_link(tables_dir().join(f), dir.join(f))
            .or_else(|_| std::fs::copy(tables_dir().join(f), dir.join(f)).map(|_| ()))
            .unwrap();
    }
    // Every byte of the body (after the 4096-byte header) flipped.
    let mut p2 = std::fs::read(tables_dir().join("twophase-p2.tbl")).unwrap();
    for b in &mut p2[4096..] {
        *b ^= 0xff;
    }
    std::fs::write(dir.join("twophase-p2.tbl"), p2).unwrap();
    let at = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
            .arg("--tables-dir")
            .arg(&dir)
            .args(args)
            .output()
            .unwrap()
    };
    let o = at(&["solve", "--method", "twophase", "R U"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("twophase-p2"), "{err}");
    assert!(!err.contains("twophase-p1"), "{err}");
    // Every file present, or the solver table's files by its name.
    for args in [&["tables", "verify"][..], &["tables", "verify", "twophase"]] {
        let o = at(args);
        assert!(!o.status.success());
        let out = stdout(&o);
        assert!(out.contains("twophase-p2: FAILED"), "{args:?}: {out}");
        assert!(out.contains("twophase-p1: ok"), "{args:?}: {out}");
        assert!(out.contains("twophase-fsym: ok"), "{args:?}: {out}");
    }
}

#[test]
fn tables_build_if_missing_builds_then_verifies_then_repairs() {
    let dir = scratch("if-missing");
    let build = || {
        let o = Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
            .args(["--tables-dir", dir.to_str().unwrap()])
            .args(["tables", "build", "cocsep", "--if-missing"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o))
    };
    let (out, _) = build();
    assert!(out.contains("cocsep: built"), "{out}");
    let file = dir.join("cocsep.tbl");
    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    let (out, _) = build();
    assert!(out.contains("cocsep: present and verified"), "{out}");
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        modified
    );
    // One byte of the body changed: found by the checksum, and the file built again.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[5000] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let (out, err) = build();
    assert!(
        err.contains("checksum") && out.contains("cocsep: built"),
        "{out}{err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
        .args([
            "--tables-dir",
            dir.to_str().unwrap(),
            "tables",
            "verify",
            "cocsep",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stdout(&o));
}

/// The test seam `CUBESWARM_FAILPOINT` makes the search panic on one line of a batch:
/// that line's record is an internal error, every other line is solved, and the run ends
/// as a run with bad lines does (exit 3, the errors counted in the summary).
#[test]
fn a_panicking_line_is_one_error_record_and_the_others_are_solved() {
    let dir = scratch("panic");
    let input = dir.join("in.txt");
    let output = dir.join("out.jsonl");
    let lines = ["R U R' U' F2 D L2 B", "R U F", "D2 F' L U2 R B'", "B L' D2"];
    std::fs::write(&input, lines.join("\n")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
        .args(["solve", "--method", "twophase", "--input"])
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .args(["--format", "jsonl", "--threads", "2"])
        .env("CUBESWARM_TABLES", tables_dir())
        .env("CUBESWARM_FAILPOINT", "panic-on-input:R U F")
        .stdin(Stdio::null())
        .output()
        .expect("run cubeswarm");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 positions (1 error)"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&output).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 4, "{text}");
    for (r, line) in recs.iter().zip(lines) {
        if line == "R U F" {
            let e = r["error"].as_str().unwrap();
            assert!(e.starts_with("internal error: the search panicked"), "{e}");
        } else {
            assert!(r.get("error").is_none(), "{r}");
            let p = tables::Position::parse(line).unwrap();
            let sol = tables::parse_moves(r["solution"].as_str().unwrap()).unwrap();
            assert!(p.is_solved_by(&sol), "{r}");
        }
    }
}
/// Runs the binary with `args` (no tables needed), killed and failed if it runs past
/// `limit` (a hang guard, not a timing assertion).
fn cubeswarm_within(args: &[&str], limit: std::time::Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
        .args(args)
        .env("CUBESWARM_TABLES", tables_dir())
        .env_remove("CUBESWARM_COORDINATOR")
        .env_remove("CUBESWARM_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cubeswarm");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "cubeswarm {args:?} still ran after {limit:?}:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_client_gives_up_on_a_coordinator_that_never_answers() {
    // A listener that accepts connections (the kernel's backlog) and never answers, and
    // a port nobody listens on.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    for addr in [silent.local_addr().unwrap(), closed_addr] {
        let url = format!("http://{addr}");
        let o = cubeswarm_within(
            &[
                "solve",
                "--coordinator",
                &url,
                "--method",
                "twophase",
                "--connect-timeout",
                "1.5",
                "--quiet",
                "R U",
            ],
            std::time::Duration::from_secs(60),
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "gave up on the coordinator at {url} after trying for"
            )),
            "{err}"
        );
        assert!(err.contains("last error:"), "{err}");
    }
}

#[test]
fn resume_refuses_an_output_written_from_another_input() {
    let dir = scratch("resume-other");
    let a = dir.join("a.txt");
    let b = dir.join("b.txt");
    std::fs::write(&a, "R U\nF2\n# note\nD L'\n").unwrap();
    // Line 4 differs.
    std::fs::write(&b, "R U\nF2\n# note\nB2 R\nU\n").unwrap();
    let out = dir.join("out.jsonl");
    let journal = concat!(
        "{\"id\":1,\"input\":\"R U\",\"length\":2,\"millis\":0.1,\"nodes\":3,\"optimal\":false,\"solution\":\"U' R'\"}\n",
        "{\"id\":2,\"input\":\"F2\",\"length\":1,\"millis\":0.1,\"nodes\":3,\"optimal\":false,\"solution\":\"F2\"}\n",
        "{\"id\":4,\"input\":\"D L'\",\"length\":2,\"millis\":0.1,\"nodes\":3,\"optimal\":false,\"solution\":\"L D'\"}\n",
        "{\"id\":5,\"input\":\"U\",\"length\":1,\"millis\":0.1,\"nodes\":3,\"optimal\":false,\"solution\":\"U'\"}\n",
    );
    std::fs::write(&out, journal).unwrap();
    // Nobody listens there: the refusal must come before any connection.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let o = cubeswarm_within(
        &[
            "solve",
            "--coordinator",
            &url,
            "--method",
            "twophase",
            "--format",
            "jsonl",
            "--resume",
            "--input",
            b.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
            "--quiet",
        ],
        std::time::Duration::from_secs(60),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("record of line 4 is for \"D L'\""), "{err}");
    assert!(
        err.contains("line 4 of") && err.contains("is \"B2 R\""),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        journal,
        "the output is left as it was"
    );
}

#[test]
fn exit_status_and_new_flags_are_documented() {
    let o = cubeswarm(&["solve", "--help"]);
    let help = stdout(&o);
    for flag in ["--connect-timeout", "--wait-for-workers"] {
        assert!(help.contains(flag), "{help}");
    }
    let o = cubeswarm(&["--help"]);
    assert!(stdout(&o).contains("Exit status"), "{}", stdout(&o));
    let o = cubeswarm(&["solve", "--connect-timeout", "-1", "R U"]);
    assert!(!o.status.success());
}

#[test]
fn anytime_two_phase_shortens_to_the_optimum_and_its_flags_are_checked() {
    // Ten moves: the anytime search shortens its first answer, then proves it shortest.
    let scramble = "R U F' L2 D B' R2 U' F D2";
    let o = cubeswarm(&[
        "solve",
        "--method",
        "twophase",
        "--anytime",
        "--time-limit",
        "60",
        "--format",
        "jsonl",
        scramble,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("\"optimal\":true"), "{out}");
    let length: usize = out
        .split("\"length\":")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .expect("a length");
    assert!(length <= 10, "{out}");
    // Without a time limit, or with the optimal method: a flag error, nothing solved.
    let o = cubeswarm(&["solve", "--method", "twophase", "--anytime", scramble]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--anytime needs --time-limit"),
        "{}",
        stderr(&o)
    );
    let o = cubeswarm(&["solve", "--anytime", "--time-limit", "1", scramble]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--anytime is for --method twophase"),
        "{}",
        stderr(&o)
    );
}

/// `bench optimal --list` prints the random states a benchmark of that seed would solve
/// (what the side-by-side scripts give another solver), and solves nothing: the same
/// lines for the same seed, other lines for another seed, each a legal position's
/// facelet string (`show` prints it back unchanged).
#[test]
fn bench_optimal_list_prints_the_seeds_states_and_solves_nothing() {
    let run = |seed: &str| {
        let o = cubeswarm(&["bench", "optimal", "--count", "3", "--seed", seed, "--list"]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).lines().map(str::to_string).collect::<Vec<_>>()
    };
    let (a, again, other) = (run("5"), run("5"), run("6"));
    assert_eq!(a.len(), 3, "{a:?}");
    assert_eq!(a, again);
    assert_ne!(a, other);
    for f in &a {
        assert_eq!(f.len(), 54, "{f}");
        let shown = cubeswarm(&["show", "--no-color", f]);
        assert!(shown.status.success(), "{f}: {}", stderr(&shown));
        assert_eq!(stdout(&shown).lines().last(), Some(f.as_str()));
    }
}
