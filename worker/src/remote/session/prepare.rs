//! Getting a worker's tables ready: the missing ones fetched (retried while the
//! coordinator cannot be reached), every one checked, the engines opened.

use super::{connect_failed, seed, Prepared, SessionOptions, WorkerConfig, WorkerError};
use crate::remote::fetch::{fetch_tables, FetchError};
use crate::remote::memory_fit::{memory_fit, HostMemory};
use crate::remote::tableset::TableSet;
use crate::TableMemory;
use proto::backoff::Backoff;
use proto::catalog;
use std::sync::Arc;
use tables::progress::Silent;
use tokio::time::sleep;
use tonic::Code;

/// Fetches the tables of `config.fetch` whose files are missing (retrying while the
/// coordinator cannot be reached), checks every table served (body checksums), and opens
/// the engines.
pub async fn prepare(config: &WorkerConfig) -> Result<Prepared, WorkerError> {
    let dir = config.tables_dir.clone();
    let mut to_fetch = Vec::new();
    for name in &config.fetch {
        let entry = catalog::find(name)
            .ok_or_else(|| WorkerError::Fetch(FetchError::UnknownTable { name: name.clone() }))?;
        if !entry.present(&dir) {
            to_fetch.push(name.clone());
        }
    }
    if !to_fetch.is_empty() {
        fetch_with_retries(&config.session, &dir, &to_fetch).await?;
    }
    let choice = config.tables.clone();
    let memory = config.memory;
    let blocking = tokio::task::spawn_blocking(move || {
        // A directory without eoesep gets it here (a few seconds); where it cannot be
        // written (a read-only volume), the tables fall back on h48h0k4.
        let missing = catalog::all()
            .iter()
            .find_map(|e| crate::catalog::missing_fallback(&dir, e));
        if let Some(file) = missing {
            match crate::catalog::build_file(&dir, file, &Silent) {
                Ok(()) => tracing::info!(file, "built the fallback table"),
                Err(error) => tracing::warn!(
                    file,
                    %error,
                    "could not build the fallback table; searching with the older h48h0k4 \
                     fallback where present"
                ),
            }
        }
        let tables = TableSet::check(&dir, &choice).map_err(WorkerError::Tables)?;
        fits(&tables, memory)?;
        let engines = tables.open(memory).map_err(WorkerError::Tables)?;
        Ok::<_, WorkerError>(Prepared {
            tables,
            engines: Arc::new(engines),
        })
    });
    match blocking.await {
        Ok(r) => r,
        Err(e) => Err(WorkerError::JobRunner(crate::Error::Io {
            path: config.tables_dir.clone(),
            error: std::io::Error::other(format!("checking the tables did not finish: {e}")),
        })),
    }
}

/// Refuses a `--memory` mode the tables cannot be held in on this host, and logs which
/// mode to use when they take more than half of it (see [`memory_fit`]).
fn fits(tables: &TableSet, memory: TableMemory) -> Result<(), WorkerError> {
    let Some(host) = HostMemory::detect().map_err(WorkerError::Memory)? else {
        return Ok(());
    };
    let bytes = tables.bytes();
    match memory_fit(bytes, host, memory).map_err(WorkerError::Memory)? {
        Some(advice) => tracing::warn!(bytes, total = host.total, "{advice}"),
        None => tracing::debug!(
            bytes,
            total = host.total,
            available = host.available,
            "the tables fit in memory as asked"
        ),
    }
    Ok(())
}

/// Whether a fetch failure may go away by trying again (the coordinator is away or
/// restarting), as opposed to a refusal or a damaged file.
fn transient(e: &FetchError) -> bool {
    match e {
        FetchError::Rpc { status, .. } => matches!(
            status.code(),
            Code::Unavailable
                | Code::Unknown
                | Code::DeadlineExceeded
                | Code::Aborted
                | Code::Cancelled
                | Code::ResourceExhausted
                | Code::Internal
        ),
        FetchError::Truncated { .. } => true,
        _ => false,
    }
}

/// Fetches the missing files of `names`, retrying with backoff while the coordinator is
/// away or the stream breaks.
async fn fetch_with_retries(
    options: &SessionOptions,
    dir: &std::path::Path,
    names: &[String],
) -> Result<(), WorkerError> {
    let endpoint = options
        .coordinator
        .endpoint()
        .map_err(WorkerError::Transport)?;
    let auth = options.coordinator.auth().map_err(WorkerError::Transport)?;
    let mut backoff = Backoff::new(options.backoff.clone(), seed());
    loop {
        let reason = match endpoint.connect().await {
            Ok(channel) => {
                let mut client = proto::transport::tables_client(channel, auth.clone());
                match fetch_tables(&mut client, dir, names).await {
                    Ok(files) => {
                        tracing::info!(files = files.len(), "tables fetched: {names:?}");
                        return Ok(());
                    }
                    Err(e) if transient(&e) => e.to_string(),
                    Err(e) => return Err(WorkerError::Fetch(e)),
                }
            }
            Err(e) => connect_failed(&options.coordinator.url, e)?,
        };
        let delay = backoff.next_delay();
        tracing::warn!("fetching tables: {reason}; retrying in {delay:.1?}");
        sleep(delay).await;
    }
}
