//! `cubeswarm status --coordinator URL`: the cluster at a glance (workers, open
//! requests, totals), as a table or JSON, once or refreshed in place with `--watch`.

use crate::Common;
use anyhow::{bail, Context};
use coordinator::client::status;
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
    /// line) until interrupted.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "2")]
    watch: Option<f64>,
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
        let st = rt
            .block_on(status::fetch(&cfg))
            .with_context(|| format!("asking {} for its status", a.coordinator))?;
        let text = match a.format {
            StatusFormat::Table => status::render_table(&st),
            StatusFormat::Json => {
                let v = status::to_json(&st);
                if every.is_some() {
                    format!("{v}\n")
                } else {
                    format!("{v:#}\n")
                }
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
