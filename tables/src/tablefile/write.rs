//! [`write_table`]: writing a table file atomically (temporary file, then rename).

use super::header::check_name;
use super::verify::{scan_chunk, BodyScan, CHECK_CHUNK};
use super::{TableFileError, TableHeader, TableMeta, HEADER_LEN};
use rayon::prelude::*;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A process-wide counter so concurrent writers in one process use distinct temp files.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Bytes of body that [`write_table_with`] asks its filler for at a time (the last chunk
/// may be shorter).
pub const BODY_CHUNK: usize = CHECK_CHUNK;

/// Chunks filled (in parallel) and written per batch: the writer's memory.
const BATCH_CHUNKS: usize = 64;

/// Writes a table file at `path`: checks the description against the body, computes the
/// checksum and distribution, writes `<path>.tmp.<pid>.<n>` in the same directory (the
/// header block last), syncs it and renames it over `path`. Creates the directory if
/// needed. Returns the header written.
pub fn write_table(
    path: &Path,
    meta: &TableMeta,
    body: &[u8],
) -> Result<TableHeader, TableFileError> {
    check_name(path, &meta.name)?;
    let expected = meta.check(path)?;
    if body.len() as u64 != expected {
        return Err(TableFileError::BodyLength {
            path: path.to_path_buf(),
            entries: meta.entries,
            bits: meta.bits,
            expected,
            found: body.len() as u64,
        });
    }
    write_table_with(path, meta, &|i, chunk| {
        chunk.copy_from_slice(&body[i * BODY_CHUNK..i * BODY_CHUNK + chunk.len()]);
    })
}

/// [`write_table`] of a body that is never whole in memory: `fill(i, chunk)` writes the
/// body's bytes `i * BODY_CHUNK ..` into `chunk` (called in parallel, each chunk once, in
/// batches of 64), so the writer holds 64 MiB whatever the table's size.
pub fn write_table_with(
    path: &Path,
    meta: &TableMeta,
    fill: &(dyn Fn(usize, &mut [u8]) + Sync),
) -> Result<TableHeader, TableFileError> {
    check_name(path, &meta.name)?;
    let expected = meta.check(path)?;
    let mut header = TableHeader {
        meta: meta.clone(),
        body_len: expected,
        checksum: 0,
        distribution: [0; crate::packed::BUCKETS],
    };
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |error| TableFileError::Io { path: p, error }
    };
    let file_name = path.file_name().ok_or_else(|| {
        io(path)(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file path",
        ))
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(io(&dir))?;
    let mut tmp_name = OsString::from(file_name);
    tmp_name.push(format!(
        ".tmp.{}.{}",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);

    let written = (|| -> io::Result<File> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        // A zero block first: until the real header lands, the file is not a valid table.
        f.write_all(&vec![0u8; HEADER_LEN])?;
        let mut scan = BodyScan::new(expected);
        let batch = BATCH_CHUNKS * BODY_CHUNK;
        let mut buf = Vec::new();
        let mut done = 0u64;
        while done < expected {
            let len = (expected - done).min(batch as u64) as usize;
            buf.resize(len, 0);
            let first = (done / BODY_CHUNK as u64) as usize;
            let parts: Vec<_> = buf
                .par_chunks_mut(BODY_CHUNK)
                .enumerate()
                .map(|(j, chunk)| {
                    fill(first + j, chunk);
                    scan_chunk(first + j, chunk, meta)
                })
                .collect();
            for part in parts {
                scan.absorb(part);
            }
            f.write_all(&buf)?;
            done += len as u64;
        }
        let (checksum, distribution) = scan.finish();
        header.checksum = checksum;
        header.distribution = distribution;
        f.seek(SeekFrom::Start(0))?;
        f.write_all(&header.encode())?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        Ok(f)
    })();
    let f = match written {
        Ok(f) => f,
        Err(error) => {
            // Best effort: the temporary file is useless now.
            let _ = fs::remove_file(&tmp);
            return Err(TableFileError::Io { path: tmp, error });
        }
    };
    // Its body was checked as it was written: the first search need not read it again.
    super::stamp::Stamps::user().remember_file(&f, header.checksum);
    // Make the rename durable. Some file systems refuse to sync a directory; the table is
    // complete either way, so that is not an error.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(header)
}
