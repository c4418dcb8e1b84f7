//! `Connection`: how to reach a cluster's coordinator (what a `Cluster` is made with),
//! checked once when it is made, and handed to each run and status query as one object.

use crate::errors::front;
use crate::request::{value, SECONDS};
use frontend::cluster::DEFAULT_CONNECT_TIMEOUT;
use proto::transport::ClientConfig;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// A coordinator's address and credentials, and how long a run waits for it and for its
/// workers.
#[pyclass(module = "cubeswarm._native", frozen)]
pub struct Connection {
    /// The client library's configuration: URL, bearer token, CA file.
    pub client: ClientConfig,
    /// How long a run goes on without a working connection (`None`: for ever).
    pub connect_timeout: Option<Duration>,
    /// How long the coordinator keeps a request no connected worker can take (`None`:
    /// refused at once).
    pub wait_for_workers: Option<Duration>,
    /// The two durations as given (None: the default), for `Cluster`'s attributes.
    given: (Option<f64>, Option<f64>),
}

/// The seconds of the argument `name`: `None` for None, else at least zero (zero: `None`,
/// the "never" of both durations).
fn seconds(v: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<(Option<f64>, Option<Duration>)> {
    let Some(s) = v
        .map(|v| value::<f64>(v, name, SECONDS))
        .transpose()?
        .flatten()
    else {
        return Ok((None, None));
    };
    let d = frontend::settings::seconds(name, s).map_err(front)?;
    Ok((Some(s), Some(d).filter(|d| !d.is_zero())))
}

#[pymethods]
impl Connection {
    #[new]
    #[pyo3(signature = (url, token=None, tls_ca=None, connect_timeout=None, wait_for_workers=None))]
    fn new(
        url: String,
        token: Option<String>,
        tls_ca: Option<PathBuf>,
        connect_timeout: Option<&Bound<'_, PyAny>>,
        wait_for_workers: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Connection> {
        let (given_connect, connect) = seconds(connect_timeout, "connect_timeout")?;
        let (given_wait, wait_for_workers) = seconds(wait_for_workers, "wait_for_workers")?;
        let mut client = ClientConfig::new(url);
        client.token = token;
        client.tls_ca = tls_ca;
        Ok(Connection {
            client,
            connect_timeout: match given_connect {
                None => Some(DEFAULT_CONNECT_TIMEOUT),
                Some(_) => connect,
            },
            wait_for_workers,
            given: (given_connect, given_wait),
        })
    }

    /// The coordinator's URL.
    #[getter]
    fn url(&self) -> &str {
        &self.client.url
    }

    /// The bearer token, if any.
    #[getter]
    fn token(&self) -> Option<&str> {
        self.client.token.as_deref()
    }

    /// The CA file, if any.
    #[getter]
    fn tls_ca(&self) -> Option<String> {
        self.client
            .tls_ca
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
    }

    /// `connect_timeout` as given.
    #[getter]
    fn connect_timeout(&self) -> Option<f64> {
        self.given.0
    }

    /// `wait_for_workers` as given.
    #[getter]
    fn wait_for_workers(&self) -> Option<f64> {
        self.given.1
    }
}
