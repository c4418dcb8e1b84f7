//! `cubeswarm bench hollow-worker`: a hollow worker, the real worker session (connection,
//! token, leases, heartbeats, jobs queued ahead, shared jobs, hand-backs, cancellations,
//! reconnects) whose search is a recorded trace's ([`benchtools::hollow`]), its link to
//! the coordinator delayed in the process. `bench/hollow.sh` runs a cluster of them
//! against a real coordinator and client, beside the replay of the same trace.

use crate::Common;
use anyhow::Context as _;
use benchtools::hollow::TraceSearch;
use benchtools::trace::Trace;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use worker::hollow::HollowEngine;
use worker::remote::{Health, Prepared, SessionOptions, TableSet};
use worker::{Engine, Engines};

/// Flags of `bench hollow-worker`.
#[derive(Args)]
pub struct HollowArgs {
    /// The coordinator's URL, as `worker --coordinator` takes it.
    #[arg(long, env = "CUBESWARM_COORDINATOR")]
    coordinator: String,
    /// The trace whose search the worker answers with (`solve --trace FILE`; .gz read
    /// through gzip).
    #[arg(long)]
    trace: PathBuf,
    /// Nodes one thread searches a second (1 to 1e12).
    #[arg(long)]
    rate: f64,
    /// Jobs run at once.
    #[arg(long, short = 't', default_value_t = 1)]
    threads: usize,
    /// One-way latency added to every message in both directions, ms (0 to 10,000).
    #[arg(long, default_value_t = 0.0)]
    latency_ms: f64,
    /// The worker's name in the coordinator's logs and status [default: HOSTNAME-PID].
    #[arg(long)]
    worker_id: Option<String>,
}

/// Serves the coordinator as a hollow worker until SIGTERM or SIGINT.
pub fn run(common: &Common, a: HollowArgs) -> anyhow::Result<()> {
    if !(a.rate.is_finite() && (1.0..=1e12).contains(&a.rate)) {
        anyhow::bail!("--rate must be a node rate from 1 to 1e12 a second");
    }
    if !(a.latency_ms.is_finite() && (0.0..=10_000.0).contains(&a.latency_ms)) {
        anyhow::bail!("--latency-ms must be 0 to 10000");
    }
    let threads = frontend::settings::threads(Some(a.threads), &frontend::Dialect::CLI)?;
    let trace =
        Trace::load(&a.trace).with_context(|| format!("reading trace {}", a.trace.display()))?;
    let search = TraceSearch::new(trace, a.rate);
    let table = search.table().to_string();
    let mut engines = Engines::default();
    engines.insert(Engine::Hollow(HollowEngine::new(&table, Arc::new(search))));
    let prepared = Prepared {
        tables: TableSet::hollow(&[table.as_str()]),
        engines: Arc::new(engines),
    };
    let mut session = SessionOptions::new(common.client_config(&a.coordinator)?);
    session.coordinator.endpoint()?;
    session.threads = threads;
    session.link_delay = Duration::from_secs_f64(a.latency_ms / 1e3);
    if let Some(id) = a.worker_id {
        session.worker_id = id;
    }
    let rt = crate::worker_cmd::io_runtime()?;
    let result = rt.block_on(async move {
        let shutdown = crate::worker_cmd::on_signal()?;
        let health = Health::new();
        health.set_ready();
        tracing::info!(%table, threads, rate = a.rate, latency_ms = a.latency_ms, "hollow worker ready");
        worker::remote::serve(&session, &prepared, &health, shutdown).await?;
        Ok::<(), anyhow::Error>(())
    });
    rt.shutdown_timeout(Duration::from_millis(500));
    result
}
