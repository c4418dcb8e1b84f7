//! The end-to-end tests' harness: the real binary, started the way a user starts it, on
//! loopback with ports chosen by the OS, its output read back.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cubeswarm")
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared test tables, built once (h48h0k4 + cocsep, and the two-phase set).
pub fn tables_dir() -> PathBuf {
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
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cubeswarm-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A process whose stderr goes to a file, killed when dropped.
pub struct Proc {
    pub child: Child,
    pub log: PathBuf,
    pub name: String,
}

impl Proc {
    pub fn start(name: &str, dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Proc {
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
        // A test run started in the background by a non-interactive shell (`.ci/run &`)
        // inherits SIGINT ignored, and so would every process it starts: the tests that
        // send SIGINT mean a user's Ctrl-C, so the child gets the default action back.
        // SAFETY: between fork and exec the closure only calls signal(2), which is
        // async-signal-safe, and touches no memory of the parent.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        Proc {
            child: cmd.spawn().unwrap(),
            log,
            name: name.to_string(),
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log holds `what`, and returns the rest of that line.
    pub fn wait_for(&mut self, what: &str, limit: Duration) -> String {
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

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([format!("-{sig}"), self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig} {}", self.name);
    }

    pub fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
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
pub fn coordinator(dir: &Path, args: &[&str]) -> (Proc, String) {
    let mut all = vec!["coordinator", "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let tables = tables_dir();
    let mut p = Proc::start("coordinator", dir, &all, &[("CUBESWARM_TABLES", &tables)]);
    let addr = p.wait_for("grpc listening on ", Duration::from_secs(60));
    let addr = addr.split_whitespace().next().unwrap().to_string();
    (p, format!("http://{addr}"))
}

pub fn worker(dir: &Path, name: &str, url: &str, args: &[&str], tables: &Path) -> Proc {
    let mut p = start_worker(dir, name, url, args, tables);
    p.wait_for("connected to coordinator", Duration::from_secs(120));
    p
}

/// A single-thread worker, started (not waited for).
pub fn start_worker(dir: &Path, name: &str, url: &str, args: &[&str], tables: &Path) -> Proc {
    let mut all = vec!["worker", "--coordinator", url, "--threads", "1"];
    all.extend_from_slice(args);
    Proc::start(name, dir, &all, &[("CUBESWARM_TABLES", tables)])
}

/// A worker that must be refused: its exit status (a failure) and its log.
pub fn refused_worker(dir: &Path, name: &str, url: &str, args: &[&str], tables: &Path) -> String {
    let mut w = start_worker(dir, name, url, args, tables);
    let st = w.wait(Duration::from_secs(120));
    assert!(!st.success(), "{name} was not refused:\n{}", w.log());
    w.log()
}

/// The client solving "R U" with two-phase through `url`, with `extra` flags.
pub fn solve_r_u(url: &str, extra: &[&str]) -> (std::process::ExitStatus, String, String) {
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
pub fn client(args: &[&str]) -> (std::process::ExitStatus, String, String) {
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

/// The scrambles of `worker/tests/data/known_optimal.txt` with their optimal lengths, in
/// file order.
pub fn known_optimal() -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(root().join("worker/tests/data/known_optimal.txt")).unwrap();
    (text.lines())
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('|'))
        .map(|(n, s)| (n.trim().parse::<usize>().unwrap(), s.trim().to_string()))
        .collect()
}

pub fn spawn_client(dir: &Path, name: &str, args: &[&str]) -> Proc {
    Proc::start(name, dir, args, &[])
}

/// Deterministic scrambles of 8–20 moves, with some bad lines and comments among them.
pub fn write_input(path: &Path, count: usize, bad_every: usize) -> BTreeMap<u64, String> {
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
pub fn read_records(path: &Path) -> BTreeMap<u64, Vec<String>> {
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
pub fn check_records(input: &BTreeMap<u64, String>, path: &Path, max_len: usize) {
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
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A plain HTTP/1.1 GET; the whole response.
pub fn http_get(addr: &str, path: &str) -> String {
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
pub fn health(url: &str) -> i32 {
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

/// Waits until `path` holds at least `n` lines.
pub fn wait_for_records(path: &Path, n: usize) {
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

/// The coordinator's `/metrics` address (it was started with `--metrics-listen`).
pub fn metrics_addr(c: &mut Proc) -> String {
    let m = c.wait_for("metrics listening on ", Duration::from_secs(10));
    m.split_whitespace().next().unwrap().to_string()
}

/// A gauge or counter of the coordinator's `/metrics`.
pub fn metric(addr: &str, name: &str) -> u64 {
    metrics(addr, &[name])[0]
}

/// Gauges or counters of the coordinator's `/metrics`, all from one reading.
pub fn metrics(addr: &str, names: &[&str]) -> Vec<u64> {
    let text = http_get(addr, "/metrics");
    names
        .iter()
        .map(|name| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
        })
        .collect()
}

/// Polls until `ok`, at most `limit`.
pub fn eventually(limit: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The client solving the file `input` into `out` through `url`, with `extra` flags; returns
/// (exit status, stdout, stderr).
pub fn solve_file(
    url: &str,
    input: &Path,
    out: &Path,
    extra: &[&str],
) -> (std::process::ExitStatus, String, String) {
    let mut args = vec![
        "solve",
        "--coordinator",
        url,
        "--quiet",
        "--input",
        input.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    client(&args)
}
