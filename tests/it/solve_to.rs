//! `cubeswarm solve --to FACELETS`: the solutions take the position to the target.

use crate::common;

use std::process::Command;
use tables::Position;

fn solve(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(common::bin())
        .arg("solve")
        .args(args)
        .env("CUBESWARM_TABLES", common::tables_dir())
        .env_remove("CUBESWARM_COORDINATOR")
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn facelets(scramble: &str) -> String {
    tables::facelet::to_facelets(Position::parse(scramble).unwrap().cube())
}

/// The moves of a JSONL record.
fn moves(stdout: &str) -> Vec<tables::Move> {
    let v: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    tables::parse_moves(v["solution"].as_str().unwrap()).unwrap()
}

#[test]
fn both_methods_solve_to_the_target() {
    let target = facelets("F2 U' B L2 D");
    for (method, position) in [("optimal", "R U R'"), ("twophase", "L D2 B' R F U2")] {
        let (ok, out, err) = solve(&[
            "--method", method, "--format", "jsonl", "--quiet", "--to", &target, position,
        ]);
        assert!(ok, "{method}: {err}");
        let m = moves(&out);
        let reached = Position::parse(position).unwrap().cube().apply_moves(&m);
        assert_eq!(
            reached,
            *Position::parse(&target).unwrap().cube(),
            "{method}: {out}"
        );
        assert!(out.contains(&format!("\"input\":\"{position}\"")), "{out}");
    }
    // (R U) · U' = R: the optimal solution to the pattern R is the one move U'.
    let (ok, out, err) = solve(&[
        "--format",
        "jsonl",
        "--quiet",
        "--to",
        &facelets("R"),
        "R U",
    ]);
    assert!(ok, "{err}");
    assert_eq!(tables::format_moves(&moves(&out)), "U'");
}

#[test]
fn a_bad_target_or_a_file_is_refused_before_any_table() {
    let (ok, _, err) = solve(&["--to", "UUUUUUUUU", "R U"]);
    assert!(!ok);
    assert!(err.contains("--to \"UUUUUUUUU\""), "{err}");
    let (ok, _, err) = solve(&["--to", &facelets("R"), "--input", "-"]);
    assert!(!ok);
    assert!(err.contains("--to solves one POSITION"), "{err}");
}
