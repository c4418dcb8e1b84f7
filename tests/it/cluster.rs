//! The cluster end to end: a real `cubeswarm coordinator`, real `cubeswarm worker`
//! processes and a real `cubeswarm solve --coordinator` client on loopback, ports chosen
//! by the OS, started the way a user starts them, killed the way machines die, and their
//! output checked record by record.
//!
//! Tables are the test tables of `target/test-tables` (h48h0k4 and the two-phase set),
//! built once per run when missing.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[test]
fn batch_with_good_and_bad_lines_matches_the_embedded_solver() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("batch");
    let input = dir.join("in.txt");
    let lines = write_input(&input, 400, 37);
    let (mut c, url) = coordinator(&dir, &["--metrics-listen", "127.0.0.1:0"]);
    let metrics = c.wait_for("metrics listening on ", Duration::from_secs(10));
    let _w1 = worker(&dir, "w1", &url, &["--table", "twophase"], &tables);
    let _w2 = worker(&dir, "w2", &url, &["--table", "twophase"], &tables);
    let out = dir.join("out.txt");
    let (st, _, err) = solve_file(&url, &input, &out, &["--method", "twophase"]);
    // Exit status 3: the run ended, but the bad lines have error records.
    assert_eq!(st.code(), Some(3), "{err}");
    check_records(&lines, &out, 20);
    // The same records as the embedded default (two-phase is deterministic).
    let local = dir.join("local.txt");
    let o = Command::new(bin())
        .args(["solve", "--method", "twophase", "--threads", "2", "--quiet"])
        .args(["--input", input.to_str().unwrap()])
        .args(["--output", local.to_str().unwrap()])
        .env("CUBESWARM_TABLES", &tables)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&local).unwrap()
    );
    // The metrics count what happened.
    let m = http_get(metrics.split_whitespace().next().unwrap(), "/metrics");
    assert!(m.starts_with("HTTP/1.1 200"), "{m}");
    assert!(
        m.contains(&format!("cubeswarm_positions_total {}", lines.len())),
        "{m}"
    );
    assert!(m.contains("cubeswarm_workers_connected 2"), "{m}");
    assert!(m.contains("cubeswarm_jobs_queued 0"), "{m}");
}

#[test]
fn one_optimal_scramble_split_over_three_workers_is_proved() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("optimal");
    let (len, scramble) = known_optimal().into_iter().next().unwrap();
    let (c, url) = coordinator(&dir, &[]);
    let ws: Vec<Proc> = (1..=3)
        .map(|i| {
            worker(
                &dir,
                &format!("w{i}"),
                &url,
                &["--table", "h48h0k4"],
                &tables,
            )
        })
        .collect();
    let (st, out, err) = client(&[
        "solve",
        "--coordinator",
        &url,
        "--format",
        "jsonl",
        "--quiet",
        &scramble,
    ]);
    assert!(st.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["length"], len as u64, "{out}");
    assert_eq!(v["optimal"], true, "{out}");
    let sol = tables::parse_moves(v["solution"].as_str().unwrap()).unwrap();
    assert!(tables::Position::parse(&scramble)
        .unwrap()
        .is_solved_by(&sol));
    // Every worker took part (jobs of the split went to all three).
    drop(c);
    for w in &ws {
        assert!(w.log().contains("job received"), "{} did no job", w.name);
    }
}

#[test]
fn a_worker_killed_and_one_stopped_past_its_lease_lose_nothing() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("faults");
    let input = dir.join("in.txt");
    let lines = write_input(&input, 3000, 101);
    let (c, url) = coordinator(
        &dir,
        &["--lease", "2", "--heartbeat", "0.25", "--batch-size", "16"],
    );
    let w1 = worker(&dir, "w1", &url, &["--table", "twophase"], &tables);
    let w2 = worker(
        &dir,
        "w2",
        &url,
        &["--table", "twophase", "--worker-id", "w2"],
        &tables,
    );
    let mut w3 = worker(&dir, "w3", &url, &["--table", "twophase"], &tables);
    let out = dir.join("out.txt");
    let mut cl = spawn_client(
        &dir,
        "client",
        &[
            "solve",
            "--coordinator",
            &url,
            "--method",
            "twophase",
            "--input",
            input.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
            "--quiet",
        ],
    );
    wait_for_records(&out, 200);
    w1.signal("KILL");
    w2.signal("STOP");
    // Stopped, w2 is silent: it wakes only once the coordinator has given up on it.
    eventually(Duration::from_secs(60), "w2's lease expired", || {
        c.log()
            .lines()
            .any(|l| l.contains("lease expired") && l.contains("worker=w2"))
    });
    w2.signal("CONT");
    // A worker told to stop drains and exits 0 within its grace period.
    w3.signal("TERM");
    let st = w3.wait(Duration::from_secs(40));
    assert!(st.success(), "w3 after SIGTERM: {st}\n{}", w3.log());
    let st = cl.wait(Duration::from_secs(600));
    assert_eq!(
        st.code(),
        Some(3),
        "bad lines have error records: {}",
        cl.log()
    );
    check_records(&lines, &out, 20);
    let log = c.log();
    assert!(log.contains("worker left"), "no worker left:\n{log}");
}

#[test]
fn a_coordinator_restart_mid_batch_loses_and_duplicates_nothing() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("restart");
    let input = dir.join("in.txt");
    let lines = write_input(&input, 3000, 0);
    let (c, url) = coordinator(&dir, &["--batch-size", "16"]);
    let port = url.rsplit(':').next().unwrap().to_string();
    let _w1 = worker(&dir, "w1", &url, &["--table", "twophase"], &tables);
    let _w2 = worker(&dir, "w2", &url, &["--table", "twophase"], &tables);
    let out = dir.join("out.txt");
    let mut cl = spawn_client(
        &dir,
        "client",
        &[
            "solve",
            "--coordinator",
            &url,
            "--method",
            "twophase",
            "--input",
            input.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
            "--quiet",
        ],
    );
    wait_for_records(&out, 300);
    c.signal("KILL");
    drop(c);
    // The new coordinator starts once the client has seen the old one go.
    cl.wait_for("lost the coordinator", Duration::from_secs(60));
    let listen = format!("127.0.0.1:{port}");
    let mut c2 = Proc::start(
        "coordinator2",
        &dir,
        &["coordinator", "--listen", &listen],
        &[("CUBESWARM_TABLES", &tables)],
    );
    c2.wait_for("grpc listening on ", Duration::from_secs(60));
    let st = cl.wait(Duration::from_secs(600));
    assert!(st.success(), "{}", cl.log());
    check_records(&lines, &out, 20);
    assert!(cl.log().contains("lost the coordinator"), "{}", cl.log());
    // SIGTERM ends the coordinator promptly even with workers' streams open.
    c2.signal("TERM");
    let st = c2.wait(Duration::from_secs(20));
    assert!(st.success(), "coordinator after SIGTERM: {st}");
}

#[test]
fn wrong_tokens_are_refused_with_a_clear_message() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("token");
    let good = dir.join("good");
    let bad = dir.join("bad");
    std::fs::write(&good, "right-token\n").unwrap();
    std::fs::write(&bad, "wrong-token\n").unwrap();
    let (mut c, url) = coordinator(
        &dir,
        &[
            "--token-file",
            good.to_str().unwrap(),
            "--metrics-listen",
            "127.0.0.1:0",
        ],
    );
    let m = metrics_addr(&mut c);
    // Probes need no secret: the health service answers SERVING without a token.
    assert_eq!(
        health(&url),
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    let log = refused_worker(
        &dir,
        "w-bad",
        &url,
        &["--table", "twophase", "--token-file", bad.to_str().unwrap()],
        &tables,
    );
    assert!(log.to_lowercase().contains("token"), "{log}");
    // Refused by the token check (before it could say hello): counted and logged all the
    // same, as is a worker with no token at all.
    refused_worker(&dir, "w-none", &url, &["--table", "twophase"], &tables);
    assert_eq!(metric(&m, "cubeswarm_workers_refused_total"), 2);
    assert!(c.log().contains("worker refused"), "{}", c.log());
    let (st, _, err) = solve_r_u(&url, &["--token-file", bad.to_str().unwrap()]);
    assert!(!st.success());
    assert!(err.to_lowercase().contains("token"), "{err}");
    // Clients too: counted and logged (never the token itself), with a wrong token or none.
    let (st, _, err) = solve_r_u(&url, &[]);
    assert!(!st.success(), "{err}");
    assert_eq!(metric(&m, "cubeswarm_clients_refused_total"), 2);
    assert!(c.log().contains("client refused"), "{}", c.log());
    assert!(!c.log().contains("wrong-token"), "{}", c.log());
    // The right token works.
    let _w = worker(
        &dir,
        "w-good",
        &url,
        &[
            "--table",
            "twophase",
            "--token-file",
            good.to_str().unwrap(),
        ],
        &tables,
    );
    let (st, out, err) = solve_r_u(&url, &["--token-file", good.to_str().unwrap()]);
    assert!(st.success(), "{err}");
    assert!(out.starts_with("1: U' R'"), "{out}");
}

#[test]
fn a_worker_without_a_table_gets_none_of_its_jobs_and_fetches_it_when_asked() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("fetch");
    // Worker A holds only the two-phase tables.
    let only_tp = dir.join("only-twophase");
    std::fs::create_dir_all(&only_tp).unwrap();
    for f in ["twophase-fsym.tbl", "twophase-p1.tbl", "twophase-p2.tbl"] {
        std::fs::hard_link(tables.join(f), only_tp.join(f))
            .or_else(|_| std::fs::copy(tables.join(f), only_tp.join(f)).map(|_| ()))
            .unwrap();
    }
    let (_c, url) = coordinator(&dir, &[]);
    let a = Proc::start(
        "a",
        &dir,
        &["worker", "--coordinator", &url, "--threads", "1"],
        &[("CUBESWARM_TABLES", &only_tp)],
    );
    // Worker B starts with nothing and fetches h48h0k4 from the coordinator.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut b = Proc::start(
        "b",
        &dir,
        &[
            "worker",
            "--coordinator",
            &url,
            "--threads",
            "1",
            "--fetch",
            "h48h0k4",
        ],
        &[("CUBESWARM_TABLES", &empty)],
    );
    b.wait_for("connected to coordinator", Duration::from_secs(120));
    for f in ["h48h0k4.tbl", "cocsep.tbl"] {
        assert_eq!(
            std::fs::read(empty.join(f)).unwrap(),
            std::fs::read(tables.join(f)).unwrap(),
            "{f} fetched whole"
        );
    }
    let input = dir.join("in.txt");
    std::fs::write(&input, "R U R' U'\nF2 D L'\nR U F D B L\n").unwrap();
    let out = dir.join("out.txt");
    let (st, _, err) = solve_file(&url, &input, &out, &["--table", "h48h0k4"]);
    assert!(st.success(), "{err}");
    let got = read_records(&out);
    assert_eq!(got.len(), 3);
    assert!(got.values().all(|v| v[0].contains("optimal")), "{got:?}");
    assert!(
        !a.log().contains("job received"),
        "worker A got an optimal job:\n{}",
        a.log()
    );
}

/// A coordinator whose table streams are cut after `cut` bytes each (the test-only
/// failpoint `CUBESWARM_FETCH_CUT_AFTER`).
fn cutting_coordinator(dir: &Path, name: &str, cut: &str) -> (Proc, String) {
    let tables = tables_dir();
    let mut p = Proc::start(
        name,
        dir,
        &["coordinator", "--listen", "127.0.0.1:0"],
        &[
            ("CUBESWARM_TABLES", &tables),
            ("CUBESWARM_FETCH_CUT_AFTER", Path::new(cut)),
        ],
    );
    let addr = p.wait_for("grpc listening on ", Duration::from_secs(60));
    let addr = addr.split_whitespace().next().unwrap().to_string();
    (p, format!("http://{addr}"))
}

#[test]
fn an_interrupted_table_fetch_resumes_and_yields_the_source_bytes() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("fetch-resume");
    let source = std::fs::read(tables.join("h48h0k4.tbl")).unwrap();
    let total = source.len();

    // `tables fetch` from a coordinator that cuts the stream after 20 MB: cocsep (616 kB)
    // arrives, h48h0k4 (58.8 MB) does not, and its first 20 MB are kept.
    let into = dir.join("cli");
    let into_s = into.to_str().unwrap();
    let (cut, url) = cutting_coordinator(&dir, "coordinator-cut", "20000000");
    let fetch = |url: &str| {
        client(&[
            "tables",
            "fetch",
            "h48h0k4",
            "--coordinator",
            url,
            "--tables-dir",
            into_s,
        ])
    };
    let (st, _, err) = fetch(&url);
    assert!(!st.success(), "the cut fetch succeeded:\n{err}");
    assert!(err.contains("cut after 20000000 bytes"), "{err}");
    assert!(!into.join("h48h0k4.tbl").exists());
    let held = std::fs::read(into.join("h48h0k4.tbl.fetch")).unwrap();
    assert_eq!(held.len(), 20_000_000);
    assert_eq!(held[..], source[..held.len()]);
    let (st, list, _) = client(&["tables", "list", "--tables-dir", into_s]);
    assert!(st.success());
    let row = list.lines().find(|l| l.starts_with("h48h0k4 ")).unwrap();
    assert!(
        row.contains("partial")
            && row.contains(&format!("partial fetch: 20000000 of {total} bytes")),
        "{list}"
    );
    // Against a coordinator that streams whole files, the next fetch resumes.
    cut.signal("KILL");
    let (_c, url) = coordinator(&dir, &[]);
    let (st, out, err) = fetch(&url);
    assert!(st.success(), "{err}");
    assert!(
        out.contains(&format!("resumed at 20000000 of {total} bytes")),
        "{out}\n{err}"
    );
    assert!(
        err.contains(&format!("resuming h48h0k4 at 20000000 of {total} bytes")),
        "{err}"
    );
    assert!(std::fs::read(into.join("h48h0k4.tbl")).unwrap() == source);
    assert!(!into.join("h48h0k4.tbl.fetch").exists());

    // `worker --fetch` against a coordinator that cuts every stream after 25 MB: each retry
    // resumes where the last one stopped, and the worker gets the whole file.
    let (_cut, url) = cutting_coordinator(&dir, "coordinator-cut-2", "25000000");
    let empty = dir.join("worker");
    std::fs::create_dir_all(&empty).unwrap();
    let mut w = start_worker(&dir, "w", &url, &["--fetch", "h48h0k4"], &empty);
    w.wait_for("connected to coordinator", Duration::from_secs(120));
    let log = w.log();
    assert!(log.contains("resuming h48h0k4 at 25000000 of"), "{log}");
    assert!(log.contains("resuming h48h0k4 at 50000000 of"), "{log}");
    for f in ["h48h0k4.tbl", "cocsep.tbl"] {
        assert!(
            std::fs::read(empty.join(f)).unwrap() == std::fs::read(tables.join(f)).unwrap(),
            "{f} differs from the source"
        );
    }
}

#[test]
fn a_worker_refuses_a_memory_mode_its_host_cannot_hold() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("memory-fit");
    // h48h0k4 + cocsep take 59.4 MB; the host is said to have 100 MB, 40 MB of it free.
    let host = Path::new("100000000,40000000");
    let start = |name: &str, memory: &str| {
        Proc::start(
            name,
            &dir,
            &[
                "worker",
                "--coordinator",
                "http://127.0.0.1:9",
                "--threads",
                "1",
                "--table",
                "h48h0k4",
                "--memory",
                memory,
            ],
            &[
                ("CUBESWARM_TABLES", &tables),
                ("CUBESWARM_HOST_MEMORY", host),
            ],
        )
    };
    let mut hp = start("huge-pages", "huge-pages");
    assert!(!hp.wait(Duration::from_secs(120)).success());
    let log = hp.log();
    assert!(
        log.contains("--memory huge-pages needs a private copy of the tables (0.06 GB), only 0.04 GB of this host's 0.10 GB is available: use --memory mapped"),
        "{log}"
    );
    // Mapped fits, with the advice that one copy is shared by the host's workers.
    let mut mapped = start("mapped", "mapped");
    mapped.wait_for(
        "more than half of this host's 0.10 GB: mapped, one copy in the page cache shared by every worker on this host",
        Duration::from_secs(120),
    );
}

#[test]
fn tls_end_to_end_with_the_clusters_own_ca() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("tls");
    // A private CA, and the coordinator's certificate (for "localhost") signed by it.
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let ca = dir.join("ca.pem");
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&ca, ca_cert.pem()).unwrap();
    std::fs::write(&cert, leaf.pem()).unwrap();
    std::fs::write(&key, leaf_key.serialize_pem()).unwrap();
    let (_c, url) = coordinator(
        &dir,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let url = url.replace("http://127.0.0.1", "https://localhost");
    let _w = worker(
        &dir,
        "w",
        &url,
        &["--table", "twophase", "--tls-ca", ca.to_str().unwrap()],
        &tables,
    );
    let (st, out, err) = solve_r_u(&url, &["--tls-ca", ca.to_str().unwrap()]);
    assert!(st.success(), "{err}");
    assert!(out.starts_with("1: U' R'"), "{out}");
    // Without the CA the client refuses the server's certificate, at once and clearly.
    let (st, _, err) = solve_r_u(&url, &[]);
    assert!(!st.success());
    assert!(err.contains("certificate"), "{err}");
    // So does a worker: a certificate error is configuration, not an outage to wait out.
    let log = refused_worker(&dir, "w-no-ca", &url, &["--table", "twophase"], &tables);
    assert!(log.contains("certificate"), "{log}");
}

/// A worker whose search panics on one line (the test seam `CUBESWARM_FAILPOINT`): that
/// line's record is an internal error, sent by the worker as a typed error; every other
/// line is solved, and the client finishes.
#[test]
fn a_line_that_panics_on_a_worker_is_one_error_record() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("panic");
    let input = dir.join("in.txt");
    let lines = write_input(&input, 40, 0);
    let (bad_id, bad) = lines.iter().nth(7).map(|(k, v)| (*k, v.clone())).unwrap();
    let (_c, url) = coordinator(&dir, &[]);
    let failpoint = format!("panic-on-input:{bad}");
    let mut all = vec!["worker", "--coordinator", &url, "--threads", "1"];
    all.extend_from_slice(&["--table", "twophase"]);
    let mut w = Proc::start(
        "w1",
        &dir,
        &all,
        &[
            ("CUBESWARM_TABLES", &tables),
            ("CUBESWARM_FAILPOINT", Path::new(&failpoint)),
        ],
    );
    w.wait_for("connected to coordinator", Duration::from_secs(120));
    let out = dir.join("out.txt");
    let (st, _, err) = solve_file(&url, &input, &out, &["--method", "twophase"]);
    assert_eq!(st.code(), Some(3), "one line has no solution: {err}");
    let got = read_records(&out);
    assert_eq!(
        got.keys().copied().collect::<Vec<_>>(),
        lines.keys().copied().collect::<Vec<_>>()
    );
    for (id, recs) in &got {
        if *id == bad_id {
            assert_eq!(recs.len(), 1);
            assert!(
                recs[0].starts_with("error: internal error: the search panicked"),
                "{recs:?}"
            );
            continue;
        }
        let sol = recs[0].split(" (").next().unwrap();
        let pos = tables::Position::parse(&lines[id]).unwrap();
        assert!(
            pos.is_solved_by(&tables::parse_moves(sol).unwrap()),
            "line {id}: {recs:?}"
        );
    }
}

/// Workers asked to hand back the pieces of the jobs they run when others idle; the
/// first that does is killed: the pieces it handed back, and the jobs it held (one it
/// handed back from made again from what it kept), run elsewhere, and the answer is the
/// known optimal one.
#[test]
fn a_worker_killed_after_it_handed_back_pieces_loses_nothing() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("handback");
    // The 16-mover: a few seconds over three single-thread workers.
    let (len, scramble) = (known_optimal().into_iter())
        .max_by_key(|(n, _)| *n)
        .unwrap();
    let (_c, url) = coordinator(&dir, &["--lease", "2", "--heartbeat", "0.25"]);
    let ws: Vec<Proc> = (1..=3)
        .map(|i| {
            worker(
                &dir,
                &format!("w{i}"),
                &url,
                &["--table", "h48h0k4"],
                &tables,
            )
        })
        .collect();
    let out = dir.join("out.jsonl");
    let mut cl = spawn_client(
        &dir,
        "client",
        &[
            "solve",
            "--coordinator",
            &url,
            "--format",
            "jsonl",
            "--output",
            out.to_str().unwrap(),
            "--quiet",
            &scramble,
        ],
    );
    // A job asked while still queued on its worker hands back every piece (kept 0).
    let handed = "unstarted pieces handed back job=";
    let gave = |log: &str| {
        log.lines()
            .any(|l| l.contains(handed) && l.contains("kept=Some(0)"))
    };
    let mut victim = None;
    eventually(
        Duration::from_secs(300),
        "a worker handed back pieces",
        || {
            victim = ws.iter().position(|w| gave(&w.log()));
            victim.is_some()
        },
    );
    let v = victim.unwrap();
    ws[v].signal("KILL");
    let st = cl.wait(Duration::from_secs(600));
    assert!(st.success(), "client: {st}\n{}", cl.log());
    let text = std::fs::read_to_string(&out).unwrap();
    let r: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(r["length"], len as u64, "{text}");
    assert_eq!(r["optimal"], true, "{text}");
    let sol = tables::parse_moves(r["solution"].as_str().unwrap()).unwrap();
    assert!(tables::Position::parse(&scramble)
        .unwrap()
        .is_solved_by(&sol));
}
