//! Checking a table file without mapping it: [`verify_file`] reads the body in pieces
//! through a fixed buffer (for a file just received, whose pages should not all count in
//! the receiver's memory), and [`read_header`] reads the header of a file that may be
//! incomplete (a partial fetch).

use super::open::{read_checked_header, read_header_of};
use super::verify::{scan_chunk, BodyScan, CHECK_CHUNK};
use super::{TableFileError, TableHeader, HEADER_LEN};
use crate::packed::BUCKETS;
use crate::progress::{Progress, Silent};
use rayon::prelude::*;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Checksum chunks read at a time by [`verify_file`] (32 MiB of buffer).
const PIECE_CHUNKS: usize = 32;

/// The decoded header of the file at `path`, which need only be a header long (the rest
/// may be missing or anything). Checks the header block itself (magic, version, header
/// checksum, field values), nothing else.
pub fn read_header(path: impl AsRef<Path>) -> Result<TableHeader, TableFileError> {
    let path = path.as_ref();
    let io = |error| TableFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    read_header_of(&mut file, path, len)
}

/// Every check of [`TableFile::open`](super::TableFile::open) and
/// [`TableFile::verify`](super::TableFile::verify) on the file at `path`, reading the body
/// with `read` through one buffer of 32 MiB instead of mapping the file: the memory used
/// stays that buffer whatever the file's size. Returns the checked header.
pub fn verify_file(
    path: impl AsRef<Path>,
    expected_name: &str,
) -> Result<TableHeader, TableFileError> {
    verify_file_with(path, expected_name, &Silent)
}

/// [`verify_file`], advancing `progress` by the body bytes checked.
pub fn verify_file_with(
    path: impl AsRef<Path>,
    expected_name: &str,
    progress: &dyn Progress,
) -> Result<TableHeader, TableFileError> {
    verify_in_pieces(path.as_ref(), expected_name, progress, PIECE_CHUNKS)
}

/// [`verify_file_with`] reading `piece_chunks` checksum chunks at a time.
pub(super) fn verify_in_pieces(
    path: &Path,
    expected_name: &str,
    progress: &dyn Progress,
    piece_chunks: usize,
) -> Result<TableHeader, TableFileError> {
    let io = |error| TableFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut file = File::open(path).map_err(io)?;
    let (header, _) = read_checked_header(&mut file, path, expected_name)?;
    file.seek(SeekFrom::Start(HEADER_LEN as u64)).map_err(io)?;
    let mut buf = vec![0u8; piece_chunks.max(1) * CHECK_CHUNK];
    let mut scan = BodyScan::new(header.body_len);
    let mut left = header.body_len;
    let mut first_chunk = 0usize;
    while left > 0 {
        let n = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        let piece = &mut buf[..n];
        file.read_exact(piece).map_err(io)?;
        let parts: Vec<(u64, [u64; BUCKETS])> = piece
            .par_chunks(CHECK_CHUNK)
            .enumerate()
            .map(|(i, chunk)| scan_chunk(first_chunk + i, chunk, &header.meta))
            .collect();
        for part in parts {
            scan.absorb(part);
        }
        progress.inc(n as u64);
        first_chunk += piece_chunks.max(1);
        left -= n as u64;
    }
    let (computed, dist) = scan.finish();
    if computed != header.checksum {
        return Err(TableFileError::ChecksumMismatch {
            path: path.to_path_buf(),
            stored: header.checksum,
            computed,
        });
    }
    if let Some(value) = (0..BUCKETS).find(|&v| dist[v] != header.distribution[v]) {
        return Err(TableFileError::DistributionMismatch {
            path: path.to_path_buf(),
            value,
            stored: header.distribution[value],
            computed: dist[value],
        });
    }
    Ok(header)
}
