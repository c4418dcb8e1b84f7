//! `cubeswarm status --coordinator URL`: the cluster at a glance (workers, open
//! requests, totals), as a table or JSON, once or refreshed in place with `--watch`.

use crate::Common;
use anyhow::{bail, Context};
use frontend::cluster::{status, ClientError};
use proto::transport::ClientConfig;
use proto::wire::ClusterStatus;
use std::io::Write;
use std::time::Duration;

/// How `status` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusFormat {
    /// Totals, then a table of workers and one of open requests.
    Table,
    /// One JSON object (the same as the coordinator's `/api/status`).
    Json,
}

/// `cubeswarm status` flags.
#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// The coordinator's URL (http:// or https://); the token and TLS flags are as for
    /// `solve --coordinator`.
    #[arg(long)]
    coordinator: String,
    /// What to print.
    #[arg(long, value_enum, default_value = "table")]
    format: StatusFormat,
    /// Print again every SECONDS (a table is redrawn in place; JSON is one object per
    /// line) until interrupted. While the coordinator cannot be reached (down,
    /// restarting, or not up yet: the first poll too) each poll says "unreachable" with
    /// the error instead (JSON: {"unreachable": ERROR}) and the watch goes on; wrong
    /// settings (URL, TLS, token) end it at once.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "2")]
    watch: Option<f64>,
}

/// How long a poll of `--watch` waits for its answer.
const POLL_TIMEOUT: Duration = Duration::from_secs(10);

/// What one poll found.
enum Poll {
    /// The coordinator's answer.
    Status(Box<ClusterStatus>),
    /// Why it could not be reached (`--watch` goes on).
    Unreachable(String),
}

/// Asks once; `watching`: an absent coordinator is [`Poll::Unreachable`], not an error.
fn poll(
    rt: &tokio::runtime::Runtime,
    cfg: &ClientConfig,
    watching: bool,
) -> Result<Poll, ClientError> {
    let status = |st| Poll::Status(Box::new(st));
    if !watching {
        return rt.block_on(status::fetch(cfg)).map(status);
    }
    match rt.block_on(async { tokio::time::timeout(POLL_TIMEOUT, status::fetch(cfg)).await }) {
        Ok(Ok(st)) => Ok(status(st)),
        Ok(Err(e)) => status::unreachable(&e).map(Poll::Unreachable).ok_or(e),
        Err(_) => Ok(Poll::Unreachable(format!(
            "no answer within {} s",
            POLL_TIMEOUT.as_secs()
        ))),
    }
}

/// Runs `status`.
pub fn run(common: &Common, a: StatusArgs) -> anyhow::Result<()> {
    let cfg = common.client_config(&a.coordinator)?;
    let every = match a.watch {
        None => None,
        Some(s) if (0.1..=86_400.0).contains(&s) => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--watch {s}: give seconds between 0.1 and 86400"),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client's runtime")?;
    let mut out = std::io::stdout().lock();
    loop {
        let polled = poll(&rt, &cfg, every.is_some())
            .with_context(|| format!("asking {} for its status", a.coordinator))?;
        let text = match (polled, a.format) {
            (Poll::Status(st), StatusFormat::Table) => status::render_table(&st),
            (Poll::Status(st), StatusFormat::Json) => {
                let v = status::to_json(&st);
                if every.is_some() {
                    format!("{v}\n")
                } else {
                    format!("{v:#}\n")
                }
            }
            (Poll::Unreachable(why), StatusFormat::Table) => {
                format!("coordinator {} unreachable: {why}\n", a.coordinator)
            }
            (Poll::Unreachable(why), StatusFormat::Json) => {
                format!("{}\n", serde_json::json!({ "unreachable": why }))
            }
        };
        if every.is_some() && a.format == StatusFormat::Table {
            // Home, clear: redraw in place.
            write!(out, "\x1b[H\x1b[2J")?;
        }
        out.write_all(text.as_bytes())?;
        out.flush()?;
        match every {
            Some(d) => std::thread::sleep(d),
            None => return Ok(()),
        }
    }
}
