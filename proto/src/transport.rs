//! What every process of a cluster shares about connections: the bearer token (read,
//! attached, compared in constant time), TLS, and the message size limits.

use crate::wire::workers_client::WorkersClient;
use crate::wire::{clients_client::ClientsClient, tables_client::TablesClient};
use crate::MAX_MESSAGE_BYTES;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

/// The environment variable holding the token when no `--token-file` is given.
pub const TOKEN_ENV: &str = "CUBESWARM_TOKEN";

/// Why a connection could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The token file could not be read.
    #[error("cannot read token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The token is empty or not printable ASCII (it must fit an HTTP header).
    #[error("the token {0} is empty or holds characters other than printable ASCII")]
    BadToken(&'static str),
    /// A certificate or key file could not be read.
    #[error("cannot read {what} {path}: {source}")]
    TlsFile {
        /// "CA certificate", "certificate" or "key".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The coordinator URL is not usable.
    #[error("bad coordinator URL {url:?}: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// Why.
        reason: String,
    },
    /// The coordinator's certificate was refused (wrong CA, wrong name, expired): dialling
    /// again cannot help.
    #[error("the coordinator at {url} presented a certificate this side refuses: {reason}")]
    Certificate {
        /// The URL.
        url: String,
        /// What TLS said.
        reason: String,
    },
    /// Connecting failed.
    #[error("cannot connect to the coordinator at {url}: {}", error_chain(source))]
    Connect {
        /// The URL.
        url: String,
        /// Why.
        source: tonic::transport::Error,
    },
}

/// An error and its causes on one line ("transport error: tcp connect error: Connection
/// refused"), each cause once. `std::io::Error` hides the error it wraps from `source()`,
/// so that one is looked into too.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = String::new();
    for_each_cause(e, &mut |c| {
        let text = c.to_string();
        if !s.ends_with(&text) {
            if !s.is_empty() {
                s.push_str(": ");
            }
            s.push_str(&text);
        }
    });
    s
}

/// When a connection failed because TLS refused the peer's certificate (unknown issuer, a
/// name that does not match, expired, a CA used as the server's certificate, ...), what
/// TLS said. Such a failure is a configuration error, not an outage.
pub fn certificate_error(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut found = None;
    for_each_cause(e, &mut |c| {
        if found.is_none() {
            if let Some(r) = c.downcast_ref::<rustls::Error>() {
                if matches!(
                    r,
                    rustls::Error::InvalidCertificate(_)
                        | rustls::Error::NoCertificatesPresented
                        | rustls::Error::UnsupportedNameType
                ) {
                    found = Some(r.to_string());
                }
            }
        }
    });
    found
}

/// Calls `f` on `e` and each of its causes, looking inside `std::io::Error`s.
fn for_each_cause(
    e: &(dyn std::error::Error + 'static),
    f: &mut dyn FnMut(&(dyn std::error::Error + 'static)),
) {
    let mut cur = Some(e);
    while let Some(c) = cur {
        f(c);
        if let Some(inner) = c
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            for_each_cause(inner, f);
        }
        cur = c.source();
    }
}

/// The shared secret, from `--token-file` (trailing newline dropped) or `$CUBESWARM_TOKEN`.
/// `None` when neither is set: then the coordinator accepts everyone (a loopback or
/// otherwise closed network).
pub fn read_token(file: Option<&Path>) -> Result<Option<String>, TransportError> {
    let (token, from) = match file {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|source| TransportError::TokenFile {
                    path: path.to_path_buf(),
                    source,
                })?;
            (text.trim_end_matches(['\n', '\r']).to_string(), "file")
        }
        None => match std::env::var(TOKEN_ENV) {
            Ok(t) => (t, "in $CUBESWARM_TOKEN"),
            Err(_) => return Ok(None),
        },
    };
    if token.is_empty() || !token.bytes().all(|b| (0x21..0x7f).contains(&b)) {
        return Err(TransportError::BadToken(from));
    }
    Ok(Some(token))
}

/// Compares two byte strings in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    // Keep the compiler from turning the loop into an early exit.
    std::hint::black_box(diff) == 0
}

/// Whether a request carries `authorization: Bearer <token>` for `expected`.
pub fn check_bearer<T>(req: &Request<T>, expected: &str) -> Result<(), Status> {
    let got = req
        .metadata()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if constant_time_eq(got.as_bytes(), expected.as_bytes()) {
        Ok(())
    } else {
        Err(crate::Error::Unauthenticated.into())
    }
}

/// Attaches the bearer token to every outgoing request.
#[derive(Clone)]
pub struct Auth {
    header: Option<MetadataValue<tonic::metadata::Ascii>>,
}

impl Auth {
    /// An interceptor for `token` (none: requests go out bare).
    pub fn new(token: Option<&str>) -> Result<Auth, TransportError> {
        let header = match token {
            Some(t) => Some(
                format!("Bearer {t}")
                    .parse()
                    .map_err(|_| TransportError::BadToken("given"))?,
            ),
            None => None,
        };
        Ok(Auth { header })
    }
}

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(h) = &self.header {
            req.metadata_mut().insert("authorization", h.clone());
        }
        Ok(req)
    }
}

/// How a worker or client reaches the coordinator.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `http://host:port` or `https://host:port`.
    pub url: String,
    /// The bearer token, if the cluster has one.
    pub token: Option<String>,
    /// PEM file of the CA that signed the coordinator's certificate (https URLs; the
    /// system's roots are not used).
    pub tls_ca: Option<PathBuf>,
    /// How long one connection attempt may take.
    pub connect_timeout: Duration,
}

impl ClientConfig {
    /// A configuration for `url` with no token and no TLS.
    pub fn new(url: impl Into<String>) -> ClientConfig {
        ClientConfig {
            url: url.into(),
            token: None,
            tls_ca: None,
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// The endpoint, checked (URL, TLS material) but not connected.
    pub fn endpoint(&self) -> Result<Endpoint, TransportError> {
        let url_err = |reason: String| TransportError::Url {
            url: self.url.clone(),
            reason,
        };
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err(url_err(
                "it must start with http:// or https://".to_string(),
            ));
        }
        let mut ep = Endpoint::from_shared(self.url.clone())
            .map_err(|e| url_err(e.to_string()))?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(20))
            .keep_alive_while_idle(true)
            // HTTP/2 settings this end announces, for the coordinator's table streams (a
            // few GB in 4 MiB messages): frames up to 1 MiB instead of 16 KiB (60 times
            // fewer frames and writes on both sides), and room for two such messages in
            // flight. The peer may use them or not; any HTTP/2 peer accepts them.
            .max_frame_size(MAX_FRAME_BYTES)
            .initial_stream_window_size(STREAM_WINDOW_BYTES)
            .initial_connection_window_size(2 * STREAM_WINDOW_BYTES);
        if self.url.starts_with("https://") {
            let mut tls = ClientTlsConfig::new();
            if let Some(ca) = &self.tls_ca {
                let pem = std::fs::read(ca).map_err(|source| TransportError::TlsFile {
                    what: "CA certificate",
                    path: ca.clone(),
                    source,
                })?;
                tls = tls.ca_certificate(Certificate::from_pem(pem));
            }
            ep = ep.tls_config(tls).map_err(|e| url_err(e.to_string()))?;
        }
        Ok(ep)
    }

    /// Connects (one attempt).
    pub async fn connect(&self) -> Result<Channel, TransportError> {
        self.endpoint()?
            .connect()
            .await
            .map_err(|source| match certificate_error(&source) {
                Some(reason) => TransportError::Certificate {
                    url: self.url.clone(),
                    reason,
                },
                None => TransportError::Connect {
                    url: self.url.clone(),
                    source,
                },
            })
    }

    /// The token interceptor.
    pub fn auth(&self) -> Result<Auth, TransportError> {
        Auth::new(self.token.as_deref())
    }
}

/// The largest HTTP/2 frame a client accepts (announced to the server).
pub const MAX_FRAME_BYTES: u32 = 1 << 20;

/// A client's HTTP/2 flow-control window per stream (the connection's: twice that): the
/// bytes a server may send ahead of what the client has read.
pub const STREAM_WINDOW_BYTES: u32 = 8 << 20;

/// A client of a service, with the token attached and the size limits set.
pub type Authed = InterceptedService<Channel, Auth>;

/// The workers service's client on `channel`.
pub fn workers_client(channel: Channel, auth: Auth) -> WorkersClient<Authed> {
    WorkersClient::with_interceptor(channel, auth)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
}

/// The clients service's client on `channel`.
pub fn clients_client(channel: Channel, auth: Auth) -> ClientsClient<Authed> {
    ClientsClient::with_interceptor(channel, auth)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
}

/// The tables service's client on `channel`.
pub fn tables_client(channel: Channel, auth: Auth) -> TablesClient<Authed> {
    TablesClient::with_interceptor(channel, auth)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }

    #[test]
    fn bearer_is_checked() {
        let mut req = Request::new(());
        assert!(check_bearer(&req, "abc").is_err());
        req.metadata_mut()
            .insert("authorization", "Bearer abc".parse().unwrap());
        assert!(check_bearer(&req, "abc").is_ok());
        assert_eq!(
            check_bearer(&req, "abd").unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
    }

    #[test]
    fn token_files_are_trimmed_and_checked() {
        let dir = std::env::temp_dir().join(format!("cubeswarm-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t");
        std::fs::write(&f, "s3cret\n").unwrap();
        assert_eq!(read_token(Some(&f)).unwrap().as_deref(), Some("s3cret"));
        std::fs::write(&f, "two words\n").unwrap();
        assert!(matches!(
            read_token(Some(&f)),
            Err(TransportError::BadToken(_))
        ));
        assert!(matches!(
            read_token(Some(&dir.join("absent"))),
            Err(TransportError::TokenFile { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn urls_need_a_scheme() {
        assert!(ClientConfig::new("localhost:7070").endpoint().is_err());
        assert!(ClientConfig::new("http://127.0.0.1:7070")
            .endpoint()
            .is_ok());
    }
}
