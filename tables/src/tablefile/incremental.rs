//! [`BodyCheck`]: the body checksum and distribution of a table file computed from its
//! bytes as they arrive, in order (a fetch hashes what it writes, so the file is not read
//! a second time), then compared with the header.

use super::verify::{scan_chunk, BodyScan, CHECK_CHUNK};
use super::{TableFileError, TableHeader, HEADER_LEN};
use crate::packed::BUCKETS;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The bytes of a table body fed in order, in pieces of any size, and checked at the end
/// against the header they belong to. Memory: one checksum chunk (1 MiB), and only when
/// the pieces fed do not fall on the body's 1 MiB chunk boundaries.
pub struct BodyCheck {
    /// The file named in errors.
    path: PathBuf,
    /// The header the body must match.
    header: TableHeader,
    /// The checksum and distribution of the whole chunks fed so far.
    scan: BodyScan,
    /// The start of a chunk not yet complete (fewer than [`CHECK_CHUNK`] bytes).
    carry: Vec<u8>,
    /// The index of the next chunk to scan.
    next_chunk: usize,
    /// Body bytes fed so far (may exceed the header's length: an error at the end).
    fed: u64,
}

impl BodyCheck {
    /// A check of the body of the file at `path` (named in errors) whose header is
    /// `header`, before any of its bytes.
    pub fn new(path: &Path, header: TableHeader) -> BodyCheck {
        BodyCheck {
            path: path.to_path_buf(),
            scan: BodyScan::new(header.body_len),
            header,
            carry: Vec::new(),
            next_chunk: 0,
            fed: 0,
        }
    }

    /// The header the body is checked against.
    pub fn header(&self) -> &TableHeader {
        &self.header
    }

    /// Body bytes fed so far.
    pub fn fed(&self) -> u64 {
        self.fed
    }

    /// Feeds the next bytes of the body. Whole chunks are scanned where they lie (in
    /// parallel when there are several); only a chunk split between two calls is copied.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.fed = self.fed.saturating_add(bytes.len() as u64);
        if !self.carry.is_empty() {
            let take = (CHECK_CHUNK - self.carry.len()).min(bytes.len());
            self.carry.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.carry.len() < CHECK_CHUNK {
                return;
            }
            let part = scan_chunk(self.next_chunk, &self.carry, &self.header.meta);
            self.scan.absorb(part);
            self.next_chunk += 1;
            self.carry.clear();
        }
        let whole = bytes.len() / CHECK_CHUNK * CHECK_CHUNK;
        let (chunks, rest) = bytes.split_at(whole);
        let first = self.next_chunk;
        let meta = &self.header.meta;
        let parts: Vec<(u64, [u64; BUCKETS])> = if chunks.len() > CHECK_CHUNK {
            chunks
                .par_chunks(CHECK_CHUNK)
                .enumerate()
                .map(|(i, c)| scan_chunk(first + i, c, meta))
                .collect()
        } else {
            chunks
                .chunks(CHECK_CHUNK)
                .enumerate()
                .map(|(i, c)| scan_chunk(first + i, c, meta))
                .collect()
        };
        self.next_chunk += parts.len();
        for part in parts {
            self.scan.absorb(part);
        }
        if !rest.is_empty() {
            if self.carry.capacity() == 0 {
                self.carry.reserve_exact(CHECK_CHUNK);
            }
            self.carry.extend_from_slice(rest);
        }
    }

    /// Checks what was fed against the header: its length, checksum and distribution.
    /// Returns the header.
    pub fn finish(mut self) -> Result<TableHeader, TableFileError> {
        let expected_len = self.header.body_len.saturating_add(HEADER_LEN as u64);
        let actual_len = self.fed.saturating_add(HEADER_LEN as u64);
        if actual_len < expected_len {
            return Err(TableFileError::Truncated {
                path: self.path,
                expected_len,
                actual_len,
            });
        }
        if actual_len > expected_len {
            return Err(TableFileError::TrailingData {
                path: self.path,
                expected_len,
                actual_len,
            });
        }
        if !self.carry.is_empty() {
            let part = scan_chunk(self.next_chunk, &self.carry, &self.header.meta);
            self.scan.absorb(part);
        }
        let (computed, dist) = self.scan.finish();
        if computed != self.header.checksum {
            return Err(TableFileError::ChecksumMismatch {
                path: self.path,
                stored: self.header.checksum,
                computed,
            });
        }
        if let Some(value) = (0..BUCKETS).find(|&v| dist[v] != self.header.distribution[v]) {
            return Err(TableFileError::DistributionMismatch {
                path: self.path,
                value,
                stored: self.header.distribution[value],
                computed: dist[value],
            });
        }
        Ok(self.header)
    }
}
