//! Reading a whole body: its checksum and distribution ([`scan_body`], also used when
//! writing) and [`TableFile::verify`], which checks them against the header.

use super::{hash, TableFile, TableFileError, TableMeta};
use crate::packed::{self, BUCKETS};
use crate::progress::{Progress, Silent};
use rayon::prelude::*;

/// Body bytes per checksum chunk (part of the format: changing it changes checksums).
pub(super) const CHECK_CHUNK: usize = 1 << 20;

/// Checksum and distribution of a body, in parallel over [`CHECK_CHUNK`]-byte chunks.
pub(super) fn scan_body(
    body: &[u8],
    meta: &TableMeta,
    progress: &dyn Progress,
) -> (u64, [u64; BUCKETS]) {
    let parts: Vec<(u64, [u64; BUCKETS])> = body
        .par_chunks(CHECK_CHUNK)
        .enumerate()
        .map(|(i, chunk)| {
            let part = scan_chunk(i, chunk, meta);
            progress.inc(chunk.len() as u64);
            part
        })
        .collect();
    let mut scan = BodyScan::new(body.len() as u64);
    for part in parts {
        scan.absorb(part);
    }
    scan.finish()
}

/// Hash and distribution of chunk `i` of a body ([`CHECK_CHUNK`] bytes, or fewer for the
/// last chunk).
pub(super) fn scan_chunk(i: usize, chunk: &[u8], meta: &TableMeta) -> (u64, [u64; BUCKETS]) {
    let per_chunk = (CHECK_CHUNK as u64 * 8) / u64::from(meta.bits.max(1));
    let n = meta
        .entries
        .saturating_sub(i as u64 * per_chunk)
        .min(per_chunk);
    let dist = packed::histogram_seq(chunk, n, meta.bits, meta.depth_shift, meta.depth_width);
    (hash::bytes(i as u64, chunk), dist)
}

/// The fold of the chunks' hashes and distributions, in chunk order.
pub(super) struct BodyScan {
    sum: u64,
    dist: [u64; BUCKETS],
}

impl BodyScan {
    pub(super) fn new(body_len: u64) -> BodyScan {
        BodyScan {
            sum: hash::start(body_len),
            dist: [0; BUCKETS],
        }
    }

    /// Folds the next chunk's [`scan_chunk`].
    pub(super) fn absorb(&mut self, (h, d): (u64, [u64; BUCKETS])) {
        self.sum = hash::absorb(self.sum, h);
        self.dist = packed::add_arrays(self.dist, d);
    }

    pub(super) fn finish(self) -> (u64, [u64; BUCKETS]) {
        (hash::finish(self.sum), self.dist)
    }
}

impl TableFile {
    /// Re-reads the whole body (in parallel) and checks its checksum and distribution
    /// against the header.
    pub fn verify(&self) -> Result<(), TableFileError> {
        self.verify_with(&Silent)
    }

    /// [`TableFile::verify`], advancing `progress` by the bytes checked (its length should
    /// be `header().body_len`).
    pub fn verify_with(&self, progress: &dyn Progress) -> Result<(), TableFileError> {
        let (computed, dist) = scan_body(self.body(), &self.header.meta, progress);
        if computed != self.header.checksum {
            return Err(TableFileError::ChecksumMismatch {
                path: self.path.clone(),
                stored: self.header.checksum,
                computed,
            });
        }
        if let Some(value) = (0..BUCKETS).find(|&v| dist[v] != self.header.distribution[v]) {
            return Err(TableFileError::DistributionMismatch {
                path: self.path.clone(),
                value,
                stored: self.header.distribution[value],
                computed: dist[value],
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_depends_on_every_chunk_and_its_position() {
        let a = vec![0u8; 3 * CHECK_CHUNK];
        let meta = TableMeta::new("x", a.len() as u64, 8);
        let base = scan_body(&a, &meta, &Silent).0;
        let mut b = a.clone();
        b[2 * CHECK_CHUNK + 5] = 1;
        assert_ne!(scan_body(&b, &meta, &Silent).0, base);
        // Swapping two different chunks changes the checksum.
        let mut c = a.clone();
        c[..CHECK_CHUNK].fill(7);
        let mut d = a.clone();
        d[CHECK_CHUNK..2 * CHECK_CHUNK].fill(7);
        assert_ne!(
            scan_body(&c, &meta, &Silent).0,
            scan_body(&d, &meta, &Silent).0
        );
        // Trailing zero bytes are not invisible.
        assert_ne!(hash::bytes(0, &[1, 2, 3]), hash::bytes(0, &[1, 2, 3, 0]));
    }
}
