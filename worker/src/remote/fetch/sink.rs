//! The writing side of a fetch: a blocking thread that writes each chunk at its offset
//! in the partial file and hashes the body as it writes it ([`BodyCheck`]), while the
//! async side receives the next chunks. Once the last byte is written it syncs the file
//! and checks it: the header read back from the file, its name and announced checksum,
//! the file's length on disk, and the body checksum and distribution of the bytes
//! written, so a fetched file is never read a second time. The bytes of an interrupted
//! fetch that a resume keeps are read back from the file and hashed first. The body goes
//! to the disk around the page cache where the file system allows ([`Direct`]).

use super::{io_error, FetchError};
use crate::direct::Direct;
use proto::wire;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tables::tablefile::{read_header, BodyCheck, TableFileError, TableHeader, HEADER_LEN};
use tokio::sync::mpsc;

/// Chunks received and not yet written: the memory between the two sides (4 of the
/// coordinator's 4 MiB chunks at most).
const QUEUED: usize = 4;

/// Bytes read at a time when the bytes held by an interrupted fetch are hashed.
const REREAD: usize = 32 << 20;

/// What the async side hands the writer.
pub(super) enum Piece {
    /// A chunk whose offset the async side checked: it starts where the previous ended.
    Write(wire::Chunk),
    /// The coordinator sends from byte 0 (it does not resume): drop every byte held.
    Restart,
}

/// The file once the writer has stopped.
pub(super) struct Written {
    /// The partial file, still open (and locked) until it is renamed.
    pub(super) file: File,
    /// Bytes in the file.
    pub(super) bytes: u64,
    /// The checked header, when the file is complete and was checked.
    pub(super) checked: Option<TableHeader>,
    /// Time spent hashing (including the held bytes read back).
    pub(super) hashing: Duration,
    /// Bytes held from an interrupted fetch that were read back from the file and hashed.
    pub(super) reread: u64,
    /// Whether the body was written around the page cache.
    pub(super) direct: bool,
}

/// The writer thread and the channel to it.
pub(super) struct Sink {
    /// Pieces to write, in order.
    tx: mpsc::Sender<Piece>,
    /// The thread; its result once the channel closes.
    handle: tokio::task::JoinHandle<Result<Written, FetchError>>,
    /// The file written (named in an error).
    path: PathBuf,
}

/// What the writer must know of the file.
pub(super) struct Target {
    /// The partial file, open for writing and locked, holding `held` bytes to keep.
    pub(super) file: File,
    /// Its path (for errors and the header read back).
    pub(super) path: PathBuf,
    /// The table file's name, which its header must hold.
    pub(super) name: String,
    /// Bytes the coordinator announced.
    pub(super) announced: u64,
    /// The body checksum the coordinator announced.
    pub(super) checksum: u64,
    /// Bytes already in the file, kept (a resume).
    pub(super) held: u64,
}

impl Sink {
    /// Starts the writer on `target`.
    pub(super) fn start(target: Target) -> Sink {
        let (tx, rx) = mpsc::channel(QUEUED);
        let path = target.path.clone();
        let handle = tokio::task::spawn_blocking(move || run(target, rx));
        Sink { tx, handle, path }
    }

    /// Hands the writer the next piece; `false` when the writer has stopped (on an
    /// error, which [`Sink::finish`] returns).
    pub(super) async fn send(&self, piece: Piece) -> bool {
        self.tx.send(piece).await.is_ok()
    }

    /// Lets the writer write what it was given and stop; returns what it left, or its
    /// error.
    pub(super) async fn finish(self) -> Result<Written, FetchError> {
        drop(self.tx);
        let path = self.path;
        self.handle.await.unwrap_or_else(|e| {
            Err(FetchError::Io {
                path,
                error: std::io::Error::other(format!("the writer did not finish: {e}")),
            })
        })
    }
}

/// The writer's state between pieces.
struct Writer {
    target: Target,
    /// Bytes in the file (all contiguous from 0).
    bytes: u64,
    /// The body's check, from the moment the header is in the file.
    check: Option<BodyCheck>,
    hashing: Duration,
    reread: u64,
    /// Direct writes of the body, where the file system takes them.
    direct: Option<Direct>,
    /// Whether any were made.
    went_direct: bool,
}

/// The writer thread: pieces until the channel closes, then the sync and the check when
/// every announced byte is there.
fn run(target: Target, mut rx: mpsc::Receiver<Piece>) -> Result<Written, FetchError> {
    let mut w = Writer {
        bytes: target.held,
        target,
        check: None,
        hashing: Duration::ZERO,
        reread: 0,
        direct: None,
        went_direct: false,
    };
    if w.bytes >= HEADER_LEN as u64 {
        w.hash_held()?;
    }
    w.direct = Direct::open(&w.target.path, &w.target.file);
    while let Some(piece) = rx.blocking_recv() {
        match piece {
            Piece::Write(chunk) => w.write(&chunk)?,
            Piece::Restart => {
                w.finish_direct()?;
                w.target.file.set_len(0).map_err(io_error(&w.target.path))?;
                w.direct = Direct::open(&w.target.path, &w.target.file);
                (w.bytes, w.check) = (0, None);
            }
        }
    }
    w.finish_direct()?;
    let checked = if w.bytes == w.target.announced {
        Some(w.finish_check()?)
    } else {
        None
    };
    Ok(Written {
        file: w.target.file,
        bytes: w.bytes,
        checked,
        hashing: w.hashing,
        reread: w.reread,
        direct: w.went_direct,
    })
}

impl Writer {
    /// Writes a chunk at its offset, then hashes its body bytes.
    fn write(&mut self, chunk: &wire::Chunk) -> Result<(), FetchError> {
        let path = &self.target.path;
        let file = &self.target.file;
        let (mut at, mut data) = (chunk.offset, &chunk.data[..]);
        match &mut self.direct {
            Some(direct) if at + data.len() as u64 > HEADER_LEN as u64 => {
                // The header through the page cache (it is read back at once), the body
                // around it.
                if at < HEADER_LEN as u64 {
                    let n = HEADER_LEN - at as usize;
                    file.write_all_at(&data[..n], at).map_err(io_error(path))?;
                    (at, data) = (HEADER_LEN as u64, &data[n..]);
                }
                direct.write(data, at, file).map_err(io_error(path))?;
                self.went_direct = true;
            }
            _ => file.write_all_at(data, at).map_err(io_error(path))?,
        }
        let start = chunk.offset;
        self.bytes = start + chunk.data.len() as u64;
        if self.check.is_none() && self.bytes >= HEADER_LEN as u64 {
            self.check = Some(self.header_check()?);
        }
        if let Some(check) = &mut self.check {
            let skip = (HEADER_LEN as u64).saturating_sub(start);
            let body = usize::try_from(skip)
                .ok()
                .and_then(|s| chunk.data.get(s..))
                .unwrap_or_default();
            let t = Instant::now();
            check.feed(body);
            self.hashing += t.elapsed();
        }
        Ok(())
    }

    /// Writes what the direct writer holds and stops it: the file then holds every byte
    /// received.
    fn finish_direct(&mut self) -> Result<(), FetchError> {
        match self.direct.take() {
            Some(direct) => direct
                .finish(&self.target.file)
                .map_err(io_error(&self.target.path)),
            None => Ok(()),
        }
    }

    /// The header, read back from the file, checked against the name and checksum
    /// announced; the check of the body that follows it.
    fn header_check(&self) -> Result<BodyCheck, FetchError> {
        let path = &self.target.path;
        let header = read_header(path).map_err(FetchError::Table)?;
        if header.meta.name != self.target.name {
            return Err(FetchError::Table(TableFileError::WrongName {
                path: path.clone(),
                expected: self.target.name.clone(),
                found: header.meta.name,
            }));
        }
        if header.checksum != self.target.checksum {
            return Err(FetchError::ChecksumNotAnnounced {
                file: self.target.name.clone(),
                announced: self.target.checksum,
                header: header.checksum,
            });
        }
        Ok(BodyCheck::new(path, header))
    }

    /// Hashes the body bytes a resume keeps, read back from the file.
    fn hash_held(&mut self) -> Result<(), FetchError> {
        let t = Instant::now();
        let mut check = self.header_check()?;
        let path = &self.target.path;
        let mut left = self.bytes - HEADER_LEN as u64;
        let mut at = HEADER_LEN as u64;
        let mut buf = vec![0u8; REREAD];
        while left > 0 {
            let n = usize::try_from(left.min(REREAD as u64)).unwrap_or(REREAD);
            self.target
                .file
                .read_exact_at(&mut buf[..n], at)
                .map_err(io_error(path))?;
            check.feed(&buf[..n]);
            at += n as u64;
            left -= n as u64;
        }
        self.reread = self.bytes;
        self.check = Some(check);
        self.hashing += t.elapsed();
        Ok(())
    }

    /// Syncs the complete file and checks it: its length on disk, then the body hashed.
    fn finish_check(&mut self) -> Result<TableHeader, FetchError> {
        let path = self.target.path.clone();
        self.target.file.sync_all().map_err(io_error(&path))?;
        let check = match self.check.take() {
            Some(c) => c,
            None => self.header_check()?,
        };
        let expected_len = check.header().body_len.saturating_add(HEADER_LEN as u64);
        let actual_len = self.target.file.metadata().map_err(io_error(&path))?.len();
        if actual_len != expected_len {
            return Err(FetchError::Table(if actual_len < expected_len {
                TableFileError::Truncated {
                    path,
                    expected_len,
                    actual_len,
                }
            } else {
                TableFileError::TrailingData {
                    path,
                    expected_len,
                    actual_len,
                }
            }));
        }
        let t = Instant::now();
        let header = check.finish().map_err(FetchError::Table);
        self.hashing += t.elapsed();
        header
    }
}
