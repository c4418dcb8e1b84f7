//! Input lines longer than a gRPC message may be, through a real coordinator and worker:
//! the client never sends such a message and writes what a local run writes (past the
//! bound on a position's text, an error record of its own); a message over the limit that
//! reaches the coordinator anyway is refused with a status that says so.

use crate::common;

use common::*;
use proto::wire as w;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Over the 16 MiB a message may hold.
const LONG: usize = 17_000_000;

/// The records of a JSONL output, without what differs between runs (time, nodes).
fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("millis");
            o.remove("nodes");
            v
        })
        .collect()
}

/// Solves `input` locally (the embedded default) into `out`; its exit code.
fn local(input: &Path, out: &Path) -> Option<i32> {
    Command::new(bin())
        .args([
            "solve", "--method", "twophase", "--format", "jsonl", "--quiet",
        ])
        .args(["--input", input.to_str().unwrap()])
        .args(["--output", out.to_str().unwrap()])
        .env("CUBESWARM_TABLES", tables_dir())
        .status()
        .unwrap()
        .code()
}

#[test]
fn a_line_too_long_for_a_message_gets_its_record_as_a_local_run_gives_it() {
    let _g = serial();
    let tables = tables_dir();
    let dir = scratch("long-lines");
    let (_c, url) = coordinator(&dir, &[]);
    let _w = worker(&dir, "w", &url, &["--table", "twophase"], &tables);
    // Lines over a message's limit, that would be a position but for their length (a
    // scramble of 8.5 million moves) or would not anyway: past the bound on a position's
    // text, each is its own error record, with no input text kept. A line over the 64 KiB
    // a client sends as text, within that bound, is sent as its position's facelets.
    let bad = format!("{}Q", "R U ".repeat(LONG / 4));
    let long = "R U ".repeat(LONG / 4);
    let within = "R U ".repeat(tables::MAX_TEXT_BYTES / 8);
    for (name, middle, errors) in [("bad", &bad, 1), ("long", &long, 1), ("within", &within, 0)] {
        let input = dir.join(format!("{name}.txt"));
        std::fs::write(&input, format!("R U\n{middle}\nF2 D'\n")).unwrap();
        let out = dir.join(format!("{name}.jsonl"));
        let (st, _, err) = solve_file(
            &url,
            &input,
            &out,
            &["--method", "twophase", "--format", "jsonl"],
        );
        let code = if errors > 0 { 3 } else { 0 };
        assert_eq!(st.code(), Some(code), "{name}: {err}");
        let got = records(&out);
        let ids: Vec<u64> = got.iter().map(|r| r["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3], "{name}");
        let failed = got.iter().filter(|r| r.get("error").is_some()).count();
        assert_eq!(failed, errors, "{name}");
        let kept = if middle.len() > tables::MAX_TEXT_BYTES {
            ""
        } else {
            middle.trim()
        };
        assert_eq!(got[1]["input"].as_str().unwrap(), kept, "{name}");
        let here = dir.join(format!("{name}-local.jsonl"));
        assert_eq!(local(&input, &here), Some(code));
        assert_eq!(got, records(&here), "{name}: the records of a local run");
    }
}

#[test]
fn a_message_over_the_limit_is_refused_with_a_status_naming_it() {
    let _g = serial();
    let dir = scratch("long-message");
    let (_c, url) = coordinator(&dir, &[]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let status = rt.block_on(async {
        let cfg = proto::transport::ClientConfig::new(&url);
        let channel = cfg.connect().await.unwrap();
        // A client that sends what a cubeswarm client never does.
        let mut client = proto::transport::clients_client(channel, cfg.auth().unwrap())
            .max_encoding_message_size(64 << 20);
        let open = w::Open {
            settings: Some((&proto::Settings::default()).into()),
            table: "twophase".into(),
            wait_for_workers_ms: Some(60_000),
        };
        let lines = w::Lines {
            lines: vec![w::Line {
                id: 1,
                text: "R ".repeat(LONG / 2),
                proved_empty: None,
                not_utf8: false,
            }],
        };
        let msgs = [
            w::solve_request::Msg::Open(open),
            w::solve_request::Msg::Lines(lines),
        ]
        .map(|m| w::SolveRequest { msg: Some(m) });
        let call = client.solve(tokio_stream::iter(msgs));
        let mut stream = match tokio::time::timeout(Duration::from_secs(60), call).await {
            Ok(Ok(r)) => r.into_inner(),
            Ok(Err(s)) => return s,
            Err(_) => panic!("no answer within 60 s"),
        };
        loop {
            match tokio::time::timeout(Duration::from_secs(60), stream.message()).await {
                Ok(Ok(Some(_))) => {}
                Ok(Ok(None)) => panic!("the stream ended with OK"),
                Ok(Err(s)) => return s,
                Err(_) => panic!("the stream neither ended nor failed within 60 s"),
            }
        }
    });
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(
        status
            .message()
            .contains(&proto::MAX_MESSAGE_BYTES.to_string()),
        "{status:?}"
    );
}
