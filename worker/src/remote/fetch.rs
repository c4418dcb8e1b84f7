//! Fetching a table file from the coordinator (`Tables.Fetch`), so that a new machine
//! needs neither a shared volume nor a long build.
//!
//! The stream is a `Start` (file, checksum, length) then the bytes in `Chunk`s, in order.
//! [`fetch_file`] hands them to a writer thread (`sink`) that writes them to
//! `<dir>/<file>.tbl.fetch` (locked while a fetch writes it) and hashes the body as it
//! writes it, while the next chunks are received; any gap, overlap or excess is refused at
//! once. Once every announced byte is written, the file is synced and checked: the header
//! (read back from the file) against the name and the announced checksum, the length on
//! disk, the body checksum and distribution of the bytes written. The file is never read
//! a second time and never held in memory (a few chunks of 4 MiB at most are in flight,
//! and three 4 MiB staging buffers), and only then is it renamed into place. A reader sees
//! the old file (or none), never a partial or damaged one. The body is written around
//! the page cache where the file system allows (`direct`): the fetch then runs at the
//! disk's speed rather than at that of the kernel's copy into the cache, and the page
//! cache is not filled with a file of tens of GB; the worker's own check before it serves
//! the file then reads it from the disk, so it checks what the disk holds.
//!
//! **Resuming.** A transfer cut short (the coordinator or the link went away, the process
//! was killed) leaves its bytes in `<file>.tbl.fetch`, which `tables list` reports as a
//! partial fetch. The next fetch of that file asks the coordinator for the rest only
//! (`FetchRequest.offset`), once the `Start` shows the same file: the same length and the
//! body checksum of the header held. A file changed on the coordinator in between
//! (another checksum or length) is fetched again from zero, with a message, so two
//! versions are never spliced; so is a partial file whose header does not read, and a
//! coordinator that ignores offsets (it sends from byte 0) is followed from zero. The
//! bytes held are read back from the file and hashed before the rest is appended, so the
//! final check covers them too. A stream that breaks protocol (a gap, excess) or a file
//! that fails its checks removes the partial file.
//!
//! # Layout
//! - this file: fetching one file and a table's files, the partial file, the checks;
//! - `sink`: the writer thread the chunks go to;
//! - `error`: [`FetchError`], why a fetch failed;
//! - `tests`: the module's unit tests.

use proto::catalog;
use proto::transport::Authed;
use proto::wire::{self, fetch_response, tables_client::TablesClient};
use sink::{Piece, Sink, Target, Written};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tables::tablefile::{
    read_header, table_path, TableFileError, TableHeader, HEADER_LEN, NAME_LEN,
};

mod error;
mod sink;

pub use self::error::FetchError;

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
    /// The bytes already held from an interrupted fetch that this one resumed from (0: a
    /// transfer of the whole file).
    pub resumed_from: u64,
}

/// Where a fetch of `file` into `dir` keeps the bytes received until the file is complete
/// and checked: `<dir>/<file>.tbl.fetch`.
pub fn partial_path(dir: &Path, file: &str) -> PathBuf {
    dir.join(format!("{file}.tbl.fetch"))
}

/// The bytes a partial fetch of `file` in `dir` holds, if there is one.
pub fn partial_bytes(dir: &Path, file: &str) -> Option<u64> {
    std::fs::metadata(partial_path(dir, file))
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
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
/// the new one is complete and checked; resumes an interrupted fetch of the same file.
/// See the module documentation for every check.
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
    let start = Instant::now();
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|error| FetchError::Io {
            path: dir.to_path_buf(),
            error,
        })?;
    let partial = partial_path(dir, file);
    let out = open_locked(dir, file, &partial)?;
    let Received {
        info,
        resumed_from,
        written,
        header,
    } = match receive(client, file, &partial, out).await {
        Ok(r) => r,
        Err(e) => {
            // The partial file was closed by the writer: its bytes are on it.
            if !keeps_partial(&e) {
                let _ = std::fs::remove_file(&partial);
            }
            return Err(e);
        }
    };
    let checksum = header.checksum;
    let target = table_path(dir, file);
    // Renamed while still open, so the lock covers it until it is in place.
    let renamed = tokio::fs::rename(&partial, &target)
        .await
        .map_err(io_error(&target));
    drop(written.file);
    renamed?;
    // Make the rename itself durable (best effort: not every file system allows it).
    if let Ok(d) = tokio::fs::File::open(dir).await {
        let _ = d.sync_all().await;
    }
    let secs = start.elapsed().as_secs_f64();
    tracing::info!(
        file,
        bytes = info.bytes,
        "checked {file} ({:.2} GB) as it was written: header, announced checksum, length, \
         body checksum and distribution ({:.1} s of hashing{}; {})",
        info.bytes as f64 / 1e9,
        written.hashing.as_secs_f64(),
        if written.reread > 0 {
            format!(", the {} bytes held read back from disk", written.reread)
        } else {
            String::new()
        },
        if written.direct {
            "written around the page cache"
        } else {
            "written through the page cache"
        }
    );
    tracing::info!(
        file,
        bytes = info.bytes,
        resumed_from,
        "fetched table file {file} ({:.1} MB in {secs:.1} s, {:.1} MB/s, checksum verified)",
        info.bytes as f64 / 1e6,
        (info.bytes - resumed_from) as f64 / 1e6 / secs.max(1e-9)
    );
    Ok(FetchedFile {
        file: file.to_string(),
        path: target,
        bytes: info.bytes,
        checksum,
        resumed_from,
    })
}

/// Whether a failed fetch keeps its bytes for a resume: only when the transfer was
/// interrupted, never when the stream or the file proved wrong.
fn keeps_partial(e: &FetchError) -> bool {
    matches!(
        e,
        FetchError::Rpc { .. }
            | FetchError::Truncated { .. }
            | FetchError::Io { .. }
            | FetchError::Busy { .. }
    )
}

/// An I/O error on `path` as a [`FetchError`].
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> FetchError {
    let path = path.to_path_buf();
    move |error| FetchError::Io { path, error }
}

/// Opens (creating it if missing) the partial file, locked for this fetch.
fn open_locked(dir: &Path, file: &str, partial: &Path) -> Result<std::fs::File, FetchError> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(partial)
        .map_err(io_error(partial))?;
    // (`File::try_lock` would need Rust 1.89; the workspace supports 1.88.)
    // SAFETY: `f` is open for the whole call, so its descriptor is valid; flock only takes
    // an advisory lock on that open file and touches no memory of this process. The lock
    // goes with the descriptor when the file is closed.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(f);
    }
    let error = std::io::Error::last_os_error();
    if error.kind() == std::io::ErrorKind::WouldBlock {
        return Err(FetchError::Busy {
            file: file.to_string(),
            dir: dir.to_path_buf(),
            partial: partial.to_path_buf(),
        });
    }
    Err(FetchError::Io {
        path: partial.to_path_buf(),
        error,
    })
}

/// The bytes held in the partial file that a resume may keep, and the version they are
/// of (the body checksum and length of their header), or 0 and none.
fn held(partial: &Path, len: u64) -> (u64, Option<(u64, u64)>) {
    if len < HEADER_LEN as u64 {
        // Less than a header: nothing to identify the version by; refetched (4 KiB at most).
        return (0, None);
    }
    match read_header(partial) {
        Ok(h) => (
            len,
            Some((h.checksum, h.body_len.saturating_add(HEADER_LEN as u64))),
        ),
        Err(e) => {
            tracing::warn!(
                "discarding the partial fetch {}: {e}; fetching from the start",
                partial.display()
            );
            (0, None)
        }
    }
}

/// A transfer complete, written and checked.
struct Received {
    /// What the stream announced.
    info: wire::TableFileInfo,
    /// The bytes that were already held (0: a whole transfer).
    resumed_from: u64,
    /// The partial file, complete, still open and locked.
    written: Written,
    /// Its checked header.
    header: TableHeader,
}

/// Runs the transfer into `out` (the locked partial file): resumes from the bytes held
/// when the coordinator announces the same version, else from zero. Returns once every
/// announced byte is written, synced and checked; on an error the file is closed with the
/// bytes written in it.
async fn receive(
    client: &mut TablesClient<Authed>,
    file: &str,
    partial: &Path,
    out: std::fs::File,
) -> Result<Received, FetchError> {
    let rpc = |status| FetchError::Rpc {
        file: file.to_string(),
        status,
    };
    let len = out.metadata().map_err(io_error(partial))?.len();
    let (mut offset, mut version) = held(partial, len);
    loop {
        let mut stream = client
            .fetch(wire::FetchRequest {
                file: file.to_string(),
                offset,
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
        check_announced(file, &info)?;
        if offset > 0 && version != Some((info.checksum, info.bytes)) {
            let (sum, total) = version.unwrap_or_default();
            tracing::warn!(
                file,
                "{file} changed on the coordinator since the partial fetch (held: {offset} \
                 bytes of a {total}-byte file with checksum {sum:016x}; now {} bytes with \
                 checksum {:016x}): discarding the bytes held and fetching from the start",
                info.bytes,
                info.checksum
            );
            drop(stream);
            (offset, version) = (0, None);
            continue;
        }
        if offset > 0 {
            tracing::info!(
                file,
                offset,
                bytes = info.bytes,
                "resuming {file} at {offset} of {} bytes",
                info.bytes
            );
        } else {
            tracing::info!(
                file,
                bytes = info.bytes,
                "fetching table file {file} from the coordinator ({} bytes)",
                info.bytes
            );
        }
        out.set_len(offset).map_err(io_error(partial))?;
        let sink = Sink::start(Target {
            file: out,
            path: partial.to_path_buf(),
            name: file.to_string(),
            announced: info.bytes,
            checksum: info.checksum,
            held: offset,
        });
        let streamed = write_chunks(file, &mut stream, &sink, offset, info.bytes).await;
        drop(stream);
        // The writer's error first: it is why the stream stopped being read.
        let written = sink.finish().await?;
        let resumed_from = match streamed {
            Ok(resumed) => resumed,
            Err(Stop::Stream(e)) => return Err(e),
            Err(Stop::Writer) => {
                return Err(FetchError::Io {
                    path: partial.to_path_buf(),
                    error: std::io::Error::other("the writer stopped without an error"),
                })
            }
        };
        let Some(header) = written.checked.clone() else {
            return Err(FetchError::Truncated {
                file: file.to_string(),
                announced: info.bytes,
                received: written.bytes,
            });
        };
        return Ok(Received {
            info,
            resumed_from,
            written,
            header,
        });
    }
}

/// Checks the `Start`'s file name and length against what was asked.
fn check_announced(file: &str, info: &wire::TableFileInfo) -> Result<(), FetchError> {
    if info.file != file {
        return Err(FetchError::WrongFile {
            asked: file.to_string(),
            announced: info.file.clone(),
        });
    }
    let expected = catalog::file_bytes(file);
    let size_ok = match expected {
        Some(e) => info.bytes == e,
        None => info.bytes >= HEADER_LEN as u64,
    };
    if !size_ok {
        return Err(FetchError::WrongSize {
            file: file.to_string(),
            announced: info.bytes,
            expected: expected.unwrap_or(HEADER_LEN as u64),
        });
    }
    Ok(())
}

/// Why [`write_chunks`] stopped early.
enum Stop {
    /// The stream failed or broke protocol.
    Stream(FetchError),
    /// The writer stopped (its error says why).
    Writer,
}

/// Hands the stream's chunks to the writer from byte `offset` up to `announced`, checking
/// that each starts where the previous ended and that none goes past the end. A first
/// chunk at 0 when `offset` was asked is a coordinator that does not resume: followed from
/// zero. Returns the offset the transfer really resumed from.
async fn write_chunks(
    file: &str,
    stream: &mut tonic::Streaming<wire::FetchResponse>,
    sink: &Sink,
    offset: u64,
    announced: u64,
) -> Result<u64, Stop> {
    let rpc = |status| {
        Stop::Stream(FetchError::Rpc {
            file: file.to_string(),
            status,
        })
    };
    let mut resumed = offset;
    let mut received = offset;
    let mut first = true;
    while let Some(msg) = stream.message().await.map_err(rpc)? {
        match msg.msg {
            Some(fetch_response::Msg::Chunk(chunk)) => {
                if first && chunk.offset == 0 && received > 0 {
                    tracing::warn!(
                        file,
                        "the coordinator sends {file} from the start (it does not resume): \
                         discarding the {received} bytes held"
                    );
                    if !sink.send(Piece::Restart).await {
                        return Err(Stop::Writer);
                    }
                    (received, resumed) = (0, 0);
                }
                first = false;
                if chunk.offset != received {
                    return Err(Stop::Stream(FetchError::Gap {
                        file: file.to_string(),
                        expected: received,
                        offset: chunk.offset,
                    }));
                }
                let end = u64::try_from(chunk.data.len())
                    .ok()
                    .and_then(|n| received.checked_add(n))
                    .filter(|&end| end <= announced)
                    .ok_or_else(|| {
                        Stop::Stream(FetchError::Oversize {
                            file: file.to_string(),
                            announced,
                        })
                    })?;
                if !sink.send(Piece::Write(chunk)).await {
                    return Err(Stop::Writer);
                }
                received = end;
            }
            Some(fetch_response::Msg::Start(_)) => {
                return Err(Stop::Stream(FetchError::SecondStart {
                    file: file.to_string(),
                }))
            }
            // A message of a later protocol revision: nothing this build can use.
            None => {}
        }
    }
    if received != announced {
        return Err(Stop::Stream(FetchError::Truncated {
            file: file.to_string(),
            announced,
            received,
        }));
    }
    Ok(resumed)
}

/// Fetches the files of the catalog tables `names` that are missing in `dir`: the required
/// ones, and the optional ones (eoesep, the 2-bit H48 tables' fallback; twophase-p1m, the
/// two-phase move table) that the coordinator lists. Returns the files fetched (none when
/// everything was there).
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
        for &f in entry.optional {
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
mod tests;
