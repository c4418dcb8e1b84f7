//! `cubeswarm solve` prints what it printed before the coordinator existed.
//!
//! `tests/golden/cases.txt` lists command lines; each case's expected standard output,
//! standard error and exit code were recorded with the binary as it was before `solve`
//! went through the coordinator and the in-process executor (commit 705924e). Intended
//! changes since: `single_bad.stderr` says the parse error once instead of twice; the
//! exit code is 3 (was 0 or 1) when `solve` ran to its end but lines have no solution
//! (every batch case, whose input has bad lines, and the `*_nosol*` cases), so that a
//! script can tell (issue 17); `tp_csv_n3.stdout` marks optimal only the solutions as
//! short as the proved first one, no longer every solution listed with it (issue 38);
//! the 53-character line of face letters (ids 15, 29 and 43 of every batch case) is read
//! as a scramble, as any token that is not 54 characters is, and its error says that both
//! readings failed instead of "a facelet string has 54 stickers, found 53" (issue 50).
//!
//! Compared byte for byte, except what a clock or the job split decides: the `millis`
//! of JSONL and CSV records, and the `nodes` of optimal JSONL records (the nodes spent
//! before the first solution depend on how a depth is cut into jobs; the solutions do
//! not, with one thread or with `--all`). Regenerate with `BLESS=1` after an intended
//! change, and say why in this comment.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tables_dir() -> PathBuf {
    let d = root().join("target").join("test-tables");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cubeswarm(args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cubeswarm"))
        .arg("--tables-dir")
        .arg(tables_dir())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run cubeswarm")
}

/// Splits a case's argument text: spaces separate, one double-quoted argument may hold
/// spaces.
fn split_args(text: &str, input: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('"') {
            let end = r.find('"').expect("closing quote");
            out.push(r[..end].to_string());
            rest = r[end + 1..].trim_start();
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            let word = &rest[..end];
            out.push(if word == "INPUT" {
                input.display().to_string()
            } else {
                word.to_string()
            });
            rest = rest[end..].trim_start();
        }
    }
    out
}

fn normalise(stdout: &str, optimal: bool) -> String {
    let mut out = String::new();
    for line in stdout.lines() {
        if line.starts_with('{') {
            let mut v: serde_json::Value = serde_json::from_str(line).expect("JSON record");
            if let Some(o) = v.as_object_mut() {
                o.remove("millis");
                if optimal {
                    o.remove("nodes");
                }
            }
            out.push_str(&v.to_string());
        } else if line.contains(',') && !line.starts_with("id,") {
            // CSV: id,input,solution,length,optimal,nodes,millis,error (inputs here
            // hold no commas).
            let mut f: Vec<&str> = line.split(',').collect();
            if f.len() == 8 {
                f[6] = "";
                if optimal {
                    f[5] = "";
                }
            }
            out.push_str(&f.join(","));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[test]
fn solve_prints_what_it_printed_before_the_coordinator() {
    let dir = root().join("tests").join("golden");
    let input = dir.join("input.txt");
    // The tables first, so that no case prints a "building" message.
    let sets: [(&str, &[&str]); 2] = [
        ("h48h0k4", &["h48h0k4.tbl", "cocsep.tbl"]),
        (
            "twophase",
            &["twophase-fsym.tbl", "twophase-p1.tbl", "twophase-p2.tbl"],
        ),
    ];
    for (t, files) in sets {
        if files.iter().all(|f| tables_dir().join(f).exists()) {
            continue;
        }
        let o = cubeswarm(&["tables".into(), "build".into(), t.into()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let bless = std::env::var_os("BLESS").is_some();
    let cases = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (name, args) = line.split_once('|').expect("name | args");
        let name = name.trim();
        let args = split_args(args, &input);
        let o = cubeswarm(&args);
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        );
        let code = o.status.code().unwrap_or(-1);
        let path = |ext: &str| dir.join(format!("{name}.{ext}"));
        if bless {
            std::fs::write(path("stdout"), &out).unwrap();
            std::fs::write(path("stderr"), &err).unwrap();
            std::fs::write(path("code"), format!("{code}\n")).unwrap();
            continue;
        }
        count += 1;
        let optimal = !args.iter().any(|a| a == "twophase");
        let want_out = std::fs::read_to_string(path("stdout")).unwrap();
        let want_err = std::fs::read_to_string(path("stderr")).unwrap();
        let want_code: i32 = std::fs::read_to_string(path("code"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        if normalise(&out, optimal) != normalise(&want_out, optimal) {
            failures.push(format!(
                "{name}: stdout\n--- got\n{out}--- want\n{want_out}"
            ));
        }
        if err != want_err {
            failures.push(format!(
                "{name}: stderr\n--- got\n{err}--- want\n{want_err}"
            ));
        }
        if code != want_code {
            failures.push(format!("{name}: exit code {code}, want {want_code}"));
        }
    }
    assert!(bless || count >= 16, "only {count} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
