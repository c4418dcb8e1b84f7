//! Fetching a table file from the coordinator (`Tables.Fetch`), so that a new machine
//! needs neither a shared volume nor a long build.
//!
//! The stream is a `Start` (file, checksum, length) then the bytes in `Chunk`s, in order.
//! [`fetch_file`] writes them to a temporary file in the tables directory, refusing any
//! gap, overlap or excess at once, then checks the total length, syncs, opens the file
//! (header checks), compares the header's checksum with the announced one, re-reads the
//! body against it, and only then renames it into place. On any failure the temporary
//! file is removed and nothing is renamed: a reader sees the old file (or none), never a
//! partial or damaged one.

use proto::catalog;
use proto::transport::Authed;
use proto::wire::{self, fetch_response, tables_client::TablesClient};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tables::tablefile::{table_path, TableFile, TableFileError, HEADER_LEN, NAME_LEN};
use tokio::io::AsyncWriteExt;

/// Why a fetch failed. Nothing was left in the tables directory.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The RPC failed or the coordinator refused (for example: it does not hold the file).
    #[error("fetching {file} from the coordinator: {status}")]
    Rpc {
        /// The file asked for.
        file: String,
        /// What gRPC said.
        status: tonic::Status,
    },
    /// A file name that cannot be a table file's.
    #[error("{file:?} is not a table file name")]
    BadName {
        /// The name given.
        file: String,
    },
    /// A name that is not a catalog table.
    #[error("unknown table {name:?} (known: {known})", known = catalog::names().join(", "))]
    UnknownTable {
        /// The name given.
        name: String,
    },
    /// The stream did not begin with `Start`.
    #[error("fetching {file}: the stream did not begin with Start")]
    NoStart {
        /// The file asked for.
        file: String,
    },
    /// A second `Start`.
    #[error("fetching {file}: a second Start in the stream")]
    SecondStart {
        /// The file asked for.
        file: String,
    },
    /// The coordinator announced another file than the one asked for.
    #[error("asked for {asked}, the coordinator announced {announced:?}")]
    WrongFile {
        /// The file asked for.
        asked: String,
        /// The file announced.
        announced: String,
    },
    /// The announced length cannot be this file's.
    #[error(
        "fetching {file}: the coordinator announced {announced} bytes, the file is {expected}"
    )]
    WrongSize {
        /// The file.
        file: String,
        /// Bytes announced.
        announced: u64,
        /// Bytes this build's catalog says the file has (or the least any table has).
        expected: u64,
    },
    /// A chunk does not start where the previous one ended.
    #[error("fetching {file}: a chunk at offset {offset}, expected {expected}")]
    Gap {
        /// The file.
        file: String,
        /// The next byte expected.
        expected: u64,
        /// The chunk's offset.
        offset: u64,
    },
    /// More bytes than announced.
    #[error("fetching {file}: more than the {announced} bytes announced")]
    Oversize {
        /// The file.
        file: String,
        /// Bytes announced.
        announced: u64,
    },
    /// The stream ended early.
    #[error("fetching {file}: the stream ended after {received} of {announced} bytes")]
    Truncated {
        /// The file.
        file: String,
        /// Bytes announced.
        announced: u64,
        /// Bytes received.
        received: u64,
    },
    /// The file's header records another checksum than the one announced.
    #[error("fetching {file}: the header's checksum {header:016x} is not the announced {announced:016x}")]
    ChecksumNotAnnounced {
        /// The file.
        file: String,
        /// Checksum announced in `Start`.
        announced: u64,
        /// Checksum in the received header.
        header: u64,
    },
    /// The received file is not a sound table file (the message says why: a damaged
    /// body, a bad header, a wrong name...).
    #[error("fetched file is not sound: {0}")]
    Table(TableFileError),
    /// Writing the file failed.
    #[error("writing {}: {error}", path.display())]
    Io {
        /// The file written.
        path: PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },
}

/// A file fetched and in place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchedFile {
    /// The file's table name.
    pub file: String,
    /// Where it is now.
    pub path: PathBuf,
    /// Its length.
    pub bytes: u64,
    /// Its body checksum (checked).
    pub checksum: u64,
}

/// Removes the temporary file unless the fetch succeeded.
struct TempFile {
    /// The temporary file.
    path: PathBuf,
    /// Set once it was renamed into place.
    kept: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether `file` can be a table file's name (and so no path can hide in it).
fn valid_name(file: &str) -> bool {
    !file.is_empty()
        && file.len() <= NAME_LEN
        && !file.starts_with('.')
        && file
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Fetches table file `file` (e.g. `cocsep`, `twophase-p1`) from the coordinator into
/// `dir` (created if missing) as `<dir>/<file>.tbl`, replacing any file there only once
/// the new one is complete and checked. See the module documentation for every check.
pub async fn fetch_file(
    client: &mut TablesClient<Authed>,
    dir: &Path,
    file: &str,
) -> Result<FetchedFile, FetchError> {
    if !valid_name(file) {
        return Err(FetchError::BadName {
            file: file.to_string(),
        });
    }
    let rpc = |status| FetchError::Rpc {
        file: file.to_string(),
        status,
    };
    let start = Instant::now();
    let mut stream = client
        .fetch(wire::FetchRequest {
            file: file.to_string(),
        })
        .await
        .map_err(rpc)?
        .into_inner();
    let info = match stream.message().await.map_err(rpc)? {
        Some(wire::FetchResponse {
            msg: Some(fetch_response::Msg::Start(wire::FetchStart { info: Some(info) })),
        }) => info,
        _ => {
            return Err(FetchError::NoStart {
                file: file.to_string(),
            })
        }
    };
    if info.file != file {
        return Err(FetchError::WrongFile {
            asked: file.to_string(),
            announced: info.file,
        });
    }
    let announced = info.bytes;
    let expected = catalog::file_bytes(file);
    let size_ok = match expected {
        Some(e) => announced == e,
        None => announced >= HEADER_LEN as u64,
    };
    if !size_ok {
        return Err(FetchError::WrongSize {
            file: file.to_string(),
            announced,
            expected: expected.unwrap_or(HEADER_LEN as u64),
        });
    }
    tracing::info!(
        file,
        bytes = announced,
        "fetching table file {file} from the coordinator"
    );
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|error| FetchError::Io {
            path: dir.to_path_buf(),
            error,
        })?;
    let target = table_path(dir, file);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut temp = TempFile {
        path: dir.join(format!(
            ".{file}.tbl.fetch-{}-{nanos}.tmp",
            std::process::id()
        )),
        kept: false,
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| FetchError::Io { path, error }
    };
    let mut out = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp.path)
        .await
        .map_err(io(&temp.path))?;
    let mut received: u64 = 0;
    while let Some(msg) = stream.message().await.map_err(rpc)? {
        match msg.msg {
            Some(fetch_response::Msg::Chunk(chunk)) => {
                if chunk.offset != received {
                    return Err(FetchError::Gap {
                        file: file.to_string(),
                        expected: received,
                        offset: chunk.offset,
                    });
                }
                let end = u64::try_from(chunk.data.len())
                    .ok()
                    .and_then(|n| received.checked_add(n))
                    .filter(|&end| end <= announced)
                    .ok_or_else(|| FetchError::Oversize {
                        file: file.to_string(),
                        announced,
                    })?;
                out.write_all(&chunk.data).await.map_err(io(&temp.path))?;
                received = end;
            }
            Some(fetch_response::Msg::Start(_)) => {
                return Err(FetchError::SecondStart {
                    file: file.to_string(),
                })
            }
            // A message of a later protocol revision: nothing this build can use.
            None => {}
        }
    }
    if received != announced {
        return Err(FetchError::Truncated {
            file: file.to_string(),
            announced,
            received,
        });
    }
    out.flush().await.map_err(io(&temp.path))?;
    out.sync_all().await.map_err(io(&temp.path))?;
    drop(out);
    let check_path = temp.path.clone();
    let name = file.to_string();
    let checked = tokio::task::spawn_blocking(move || {
        let table = TableFile::open(&check_path, &name)?;
        let header = table.header().checksum;
        if header != info.checksum {
            return Ok(Err(header));
        }
        table.verify()?;
        Ok(Ok(header))
    })
    .await
    .map_err(|e| {
        FetchError::Table(TableFileError::Io {
            path: temp.path.clone(),
            error: std::io::Error::other(format!("the check did not finish: {e}")),
        })
    })?
    .map_err(FetchError::Table)?;
    let checksum = checked.map_err(|header| FetchError::ChecksumNotAnnounced {
        file: file.to_string(),
        announced: info.checksum,
        header,
    })?;
    tokio::fs::rename(&temp.path, &target)
        .await
        .map_err(io(&target))?;
    temp.kept = true;
    // Make the rename itself durable (best effort: not every file system allows it).
    if let Ok(d) = tokio::fs::File::open(dir).await {
        let _ = d.sync_all().await;
    }
    let secs = start.elapsed().as_secs_f64();
    tracing::info!(
        file,
        bytes = announced,
        "fetched table file {file} ({:.1} MB in {secs:.1} s, checksum verified)",
        announced as f64 / 1e6
    );
    Ok(FetchedFile {
        file: file.to_string(),
        path: target,
        bytes: announced,
        checksum,
    })
}

/// Fetches the files of the catalog tables `names` that are missing in `dir`: the required
/// ones, and the optional one (h48h0k4 for the 2-bit H48 tables) when the coordinator
/// lists it. Returns the files fetched (none when everything was there).
pub async fn fetch_tables(
    client: &mut TablesClient<Authed>,
    dir: &Path,
    names: &[String],
) -> Result<Vec<FetchedFile>, FetchError> {
    let mut wanted: Vec<&'static str> = Vec::new();
    let mut optional: Vec<&'static str> = Vec::new();
    for name in names {
        let entry =
            catalog::find(name).ok_or_else(|| FetchError::UnknownTable { name: name.clone() })?;
        for f in entry.missing(dir) {
            if !wanted.contains(&f) {
                wanted.push(f);
            }
        }
        if let Some(f) = entry.optional {
            if !table_path(dir, f).exists() && !wanted.contains(&f) && !optional.contains(&f) {
                optional.push(f);
            }
        }
    }
    if !optional.is_empty() {
        // Optional files only when the coordinator has them; a coordinator that cannot
        // list its files gets asked for the required ones only.
        match client.list(wire::ListTablesRequest {}).await {
            Ok(list) => {
                let served = list.into_inner().files;
                optional.retain(|f| served.iter().any(|s| s.file == *f));
                wanted.extend(optional);
            }
            Err(status) => {
                tracing::warn!("the coordinator cannot list its table files: {status}")
            }
        }
    }
    let mut fetched = Vec::with_capacity(wanted.len());
    for file in wanted {
        fetched.push(fetch_file(client, dir, file).await?);
    }
    Ok(fetched)
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn names_cannot_hide_paths() {
        assert!(valid_name("cocsep"));
        assert!(valid_name("twophase-p1"));
        assert!(!valid_name(""));
        assert!(!valid_name("../etc/passwd"));
        assert!(!valid_name("a/b"));
        assert!(!valid_name(".hidden"));
        assert!(!valid_name(&"x".repeat(33)));
    }
}
