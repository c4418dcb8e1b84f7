//! [`write_table`]: writing a table file atomically (temporary file, then rename).

use super::header::check_name;
use super::verify::scan_body;
use super::{TableFileError, TableHeader, TableMeta, HEADER_LEN};
use crate::progress::Silent;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A process-wide counter so concurrent writers in one process use distinct temp files.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

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
    let (checksum, distribution) = scan_body(body, meta, &Silent);
    let header = TableHeader {
        meta: meta.clone(),
        body_len: expected,
        checksum,
        distribution,
    };
    let block = header.encode();

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

    let written = (|| -> io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        // A zero block first: until the real header lands, the file is not a valid table.
        f.write_all(&vec![0u8; HEADER_LEN])?;
        f.write_all(body)?;
        f.seek(SeekFrom::Start(0))?;
        f.write_all(&block)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if let Err(error) = written {
        // Best effort: the temporary file is useless now.
        let _ = fs::remove_file(&tmp);
        return Err(TableFileError::Io { path: tmp, error });
    }
    // Make the rename durable. Some file systems refuse to sync a directory; the table is
    // complete either way, so that is not an error.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(header)
}
