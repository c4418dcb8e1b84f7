//! The cluster end to end: a real `cubeswarm coordinator`, real `cubeswarm worker`
//! processes and a real `cubeswarm solve --coordinator` client on loopback, ports chosen
//! by the OS, started the way a user starts them, killed the way machines die, and their
//! output checked record by record.
//!
//! Tables are the test tables of `target/test-tables` (h48h0k4 and the two-phase set),
//! built once per run when missing.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cubeswarm")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared test tables, built once (h48h0k4 + cocsep, and the two-phase set).
fn tables_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let d = root().join("target").join("test-tables");
            std::fs::create_dir_all(&d).unwrap();
            for (t, files) in [
                ("h48h0k4", &["h48h0k4.tbl", "cocsep.tbl"][..]),
                (
                    "twophase",
                    &["twophase-fsym.tbl", "twophase-p1.tbl", "twophase-p2.tbl"][..],
                ),
            ] {
                if files.iter().all(|f| d.join(f).exists()) {
                    continue;
                }
                let o = Command::new(bin())
                    .args(["tables", "build", t])
                    .env("CUBESWARM_TABLES", &d)
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            }
            d
        })
        .clone()
}

/// A scratch directory of its own for each test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cubeswarm-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A process whose stderr goes to a file, killed when dropped.
struct Proc {
    child: Child,
    log: PathBuf,
    name: String,
}

impl Proc {
    fn start(name: &str, dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Proc {
        let log = dir.join(format!("{name}.log"));
        let err = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(bin());
        cmd.args(args)
            .env_remove("CUBESWARM_TOKEN")
            .env_remove("CUBESWARM_COORDINATOR")
            .env("RUST_LOG", "info,worker::remote=debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Proc {
            child: cmd.spawn().unwrap(),
            log,
            name: name.to_string(),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log holds `what`, and returns the rest of that line.
    fn wait_for(&mut self, what: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            let log = self.log();
            if let Some(i) = log.find(what) {
                let rest = &log[i + what.len()..];
                return rest.lines().next().unwrap_or("").trim().to_string();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited ({status}) before {what:?}:\n{log}", self.name);
            }
            assert!(
                start.elapsed() < limit,
                "{} did not log {what:?} within {limit:?}:\n{log}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([format!("-{sig}"), self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig} {}", self.name);
    }

    fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                start.elapsed() < limit,
                "{} still runs after {limit:?}:\n{}",
                self.name,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address a coordinator logged ("grpc listening on ADDR").
fn coordinator(dir: &Path, args: &[&str]) -> (Proc, String) {
    let mut all = vec!["coordinator", "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let tables = tables_dir();
    let mut p = Proc::start("coordinator", dir, &all, &[("CUBESWARM_TABLES", &tables)]);
    let addr = p.wait_for("grpc listening on ", Duration::from_secs(60));
    let addr = addr.split_whitespace().next().unwrap().to_string();
    (p, format!("http://{addr}"))
}

fn worker(dir: &Path, name: &str, url: &str, args: &[&str], tables: &Path) -> Proc {
    let mut p = start_worker(dir, name, url, args, tables);
    p.wait_for("connected to coordinator", Duration::from_secs(120));
    p
}

/// A single-thread worker, started (not waited for).
fn start_worker(dir: &Path, name: &str, url: &str, args: &[&str], tables: &Path) -> Proc {
    let mut all = vec!["worker", "--coordinator", url, "--threads", "1"];
    all.extend_from_slice(args);
    Proc::start(name, dir, &all, &[("CUBESWARM_TABLES", tables)])
}

/// A worker that must be refused: its exit status (a failure) and its log.
fn refused_worker(dir: &Path, name: &str, url: &str, args: &[&str], tables: &Path) -> String {
    let mut w = start_worker(dir, name, url, args, tables);
    let st = w.wait(Duration::from_secs(120));
    assert!(!st.success(), "{name} was not refused:\n{}", w.log());
    w.log()
}

/// The client solving "R U" with two-phase through `url`, with `extra` flags.
fn solve_r_u(url: &str, extra: &[&str]) -> (std::process::ExitStatus, String, String) {
    let mut args = vec![
        "solve",
        "--coordinator",
        url,
        "--method",
        "twophase",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    args.push("R U");
    client(&args)
}

/// Runs the client to the end; returns (exit status, stdout, stderr).
fn client(args: &[&str]) -> (std::process::ExitStatus, String, String) {
    let o = Command::new(bin())
        .args(args)
        .env_remove("CUBESWARM_TOKEN")
        .env_remove("CUBESWARM_COORDINATOR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status,
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn spawn_client(dir: &Path, name: &str, args: &[&str]) -> Proc {
    Proc::start(name, dir, args, &[])
}

/// Deterministic scrambles of 8–20 moves, with some bad lines and comments among them.
fn write_input(path: &Path, count: usize, bad_every: usize) -> BTreeMap<u64, String> {
    const MOVES: [&str; 18] = [
        "U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'", "D", "D2", "D'", "L", "L2", "L'", "B",
        "B2", "B'",
    ];
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut lines = BTreeMap::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut n = 0u64;
    writeln!(f, "# scrambles for the cluster test").unwrap();
    n += 1;
    for i in 0..count {
        n += 1;
        let text = if bad_every > 0 && i % bad_every == bad_every - 1 {
            format!("R U Q{i}")
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 8 + (x % 13) as usize;
            (0..len)
                .map(|k| MOVES[((x >> (k * 3)) % 18) as usize])
                .collect::<Vec<_>>()
                .join(" ")
        };
        writeln!(f, "{text}").unwrap();
        lines.insert(n, text);
    }
    lines
}

/// Text-format records: id → the record's lines (one per solution, or one error).
fn read_records(path: &Path) -> BTreeMap<u64, Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut last = 0;
    for line in text.lines() {
        let (id, rest) = line.split_once(": ").expect("an id");
        let id: u64 = id.parse().expect("a numeric id");
        if id != last {
            assert!(!out.contains_key(&id), "id {id} written twice:\n{text}");
            last = id;
        }
        out.entry(id).or_default().push(rest.to_string());
    }
    out
}

/// Every input line has exactly one record; each solution solves its position; bad
/// lines are errors naming the bad move.
fn check_records(input: &BTreeMap<u64, String>, path: &Path, max_len: usize) {
    let got = read_records(path);
    let ids: Vec<u64> = got.keys().copied().collect();
    let want: Vec<u64> = input.keys().copied().collect();
    assert_eq!(ids, want, "ids in the output");
    for (id, lines) in &got {
        let text = &input[id];
        for l in lines {
            if text.contains('Q') {
                assert!(l.starts_with("error: "), "line {id}: {l}");
                continue;
            }
            let sol = l.split(" (").next().unwrap();
            let sol = if sol.starts_with("(solved") { "" } else { sol };
            let pos = tables::Position::parse(text).unwrap();
            let moves = tables::parse_moves(sol).unwrap();
            assert!(
                pos.is_solved_by(&moves),
                "line {id}: {sol} does not solve {text}"
            );
            assert!(moves.len() <= max_len, "line {id}: {l}");
        }
    }
}

/// Heavy tests share two cores: one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

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
    let (st, _, err) = client(&[
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
    ]);
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

/// A plain HTTP/1.1 GET; the whole response.
fn http_get(addr: &str, path: &str) -> String {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// The gRPC health service's answer for the whole server (no token needed).
fn health(url: &str) -> i32 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let ch = tonic::transport::Endpoint::from_shared(url.to_string())
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut c = tonic_health::pb::health_client::HealthClient::new(ch);
        c.check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .status
    })
}

#[test]
fn one_optimal_scramble_split_over_three_workers_is_proved() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("optimal");
    let known =
        std::fs::read_to_string(root().join("worker/tests/data/known_optimal.txt")).unwrap();
    let (len, scramble) = known
        .lines()
        .find(|l| !l.starts_with('#'))
        .and_then(|l| l.split_once('|'))
        .map(|(n, s)| (n.trim().parse::<usize>().unwrap(), s.trim().to_string()))
        .unwrap();
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
    let w2 = worker(&dir, "w2", &url, &["--table", "twophase"], &tables);
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
    std::thread::sleep(Duration::from_secs(4));
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
    assert!(log.contains("lease expired"), "no lease expired:\n{log}");
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
    std::thread::sleep(Duration::from_millis(500));
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
    let (_c, url) = coordinator(&dir, &["--token-file", good.to_str().unwrap()]);
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
    let (st, _, err) = solve_r_u(&url, &["--token-file", bad.to_str().unwrap()]);
    assert!(!st.success());
    assert!(err.to_lowercase().contains("token"), "{err}");
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
    let (st, _, err) = client(&[
        "solve",
        "--coordinator",
        &url,
        "--table",
        "h48h0k4",
        "--quiet",
        "--input",
        input.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
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

/// Waits until `path` holds at least `n` lines.
fn wait_for_records(path: &Path, n: usize) {
    let start = Instant::now();
    loop {
        let count = std::fs::File::open(path)
            .map(|f| std::io::BufReader::new(f).lines().count())
            .unwrap_or(0);
        if count >= n {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "only {count} records after 300 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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
