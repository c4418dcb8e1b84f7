//! The table a request names: given, or the first of a list of candidates that a
//! connected worker holds (asked of the coordinator).

use super::error::ClientError;
use super::observer::Observer;
use super::options::TableChoice;
use super::outage::Outage;
use super::session::{retrying, Broken};
use proto::transport::ClientConfig;
use proto::wire as w;

/// The table every job of the request needs.
pub(super) async fn choose_table(
    cfg: &ClientConfig,
    choice: &TableChoice,
    outage: &mut Outage,
    observer: &mut dyn Observer,
) -> Result<String, ClientError> {
    match choice {
        TableChoice::Named(t) => Ok(t.clone()),
        TableChoice::Unset => Err(ClientError::NoTable {
            url: cfg.url.clone(),
        }),
        TableChoice::FirstHeld(candidates) => {
            let status = cluster_status(cfg, outage, observer).await?;
            let held: Vec<String> = status.workers.into_iter().flat_map(|w| w.tables).collect();
            first_held(candidates, &held)
                .map(str::to_string)
                .ok_or_else(|| ClientError::NoTable {
                    url: cfg.url.clone(),
                })
        }
    }
}

/// The first of `candidates` that is in `held`.
pub(super) fn first_held<'a>(candidates: &'a [String], held: &[String]) -> Option<&'a str> {
    candidates
        .iter()
        .find(|c| held.contains(c))
        .map(String::as_str)
}

/// `Clients.Status`, retried like a broken stream.
pub(super) async fn cluster_status(
    cfg: &ClientConfig,
    outage: &mut Outage,
    observer: &mut dyn Observer,
) -> Result<w::ClusterStatus, ClientError> {
    retrying(cfg, outage, observer, || async {
        super::status::fetch(cfg)
            .await
            .map_err(|e| match super::status::unreachable(&e) {
                Some(why) => Broken::Retry(why),
                None => Broken::Fatal(e),
            })
    })
    .await
}
