//! [`TableFile`]: opening a table file (every check before the map) and handing out its
//! body.

use super::{TableFileError, TableHeader, TableMeta, HEADER_LEN};
use crate::packed::{body_len, Packed2, Packed4, TableBytes};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// An opened table file: checked header, read-only map of the whole file.
#[derive(Debug)]
pub struct TableFile {
    /// Where it was opened from, for error messages.
    pub(super) path: PathBuf,
    /// The checked header.
    pub(super) header: TableHeader,
    /// The whole file, mapped read-only; exactly `HEADER_LEN + body_len` bytes.
    pub(super) map: memmap2::Mmap,
    /// The file itself, kept open (a huge-page copy reads it).
    pub(super) file: File,
}

impl TableFile {
    /// Opens the table file at `path`, which must hold the table `expected_name`.
    ///
    /// Checks, in order: the file is at least a header long, magic, version, header
    /// checksum, field values, name, body length against entries and bits, and file length
    /// against body length; only then maps it. The body is not read: see
    /// [`TableFile::verify`].
    pub fn open(path: impl AsRef<Path>, expected_name: &str) -> Result<TableFile, TableFileError> {
        let path = path.as_ref();
        let io = |error| TableFileError::Io {
            path: path.to_path_buf(),
            error,
        };
        let mut file = File::open(path).map_err(io)?;
        let (header, expected_len) = read_checked_header(&mut file, path, expected_name)?;
        let map_len = usize::try_from(expected_len).map_err(|_| TableFileError::TooLarge {
            path: path.to_path_buf(),
            len: expected_len,
        })?;
        // SAFETY: the map is read-only and this program never writes a table file in place:
        // `write_table` writes a temporary file and renames it over the old one, which
        // leaves this (old) inode untouched. The length was checked just above, so every
        // mapped page is backed by the file; a SIGBUS would need another program to shrink
        // the file while it is mapped, which is outside what any table-loading code can
        // defend against.
        let map = unsafe { memmap2::MmapOptions::new().len(map_len).map(&file) }.map_err(io)?;
        if map.len() != map_len {
            return Err(TableFileError::Truncated {
                path: path.to_path_buf(),
                expected_len,
                actual_len: map.len() as u64,
            });
        }
        Ok(TableFile {
            path: path.to_path_buf(),
            header,
            map,
            file,
        })
    }

    /// The path the file was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The checked header.
    pub fn header(&self) -> &TableHeader {
        &self.header
    }

    /// The body bytes (mapped; 4096-byte aligned).
    pub fn body(&self) -> &[u8] {
        self.map.get(HEADER_LEN..).unwrap_or(&[])
    }

    /// The body as mapped bytes that outlive this `TableFile`.
    pub fn into_bytes(self) -> Result<TableBytes, TableFileError> {
        let TableFile {
            path,
            header,
            map,
            file,
        } = self;
        let len = map.len().saturating_sub(HEADER_LEN);
        TableBytes::mapped(map, file, HEADER_LEN, len).ok_or(TableFileError::Truncated {
            path,
            expected_len: header.body_len.saturating_add(HEADER_LEN as u64),
            actual_len: len as u64,
        })
    }

    /// The mapped 4-bit table; refuses a file of another width.
    pub fn into_packed4(self) -> Result<Packed4, TableFileError> {
        let (path, meta) = self.expect_bits(4)?;
        let bytes = self.into_bytes()?;
        let found = bytes.len() as u64;
        Packed4::from_bytes(bytes, meta.entries).ok_or_else(|| body_mismatch(path, &meta, found))
    }

    /// The mapped 2-bit table with the header's base; refuses a file of another width.
    pub fn into_packed2(self) -> Result<Packed2, TableFileError> {
        let (path, meta) = self.expect_bits(2)?;
        let bytes = self.into_bytes()?;
        let found = bytes.len() as u64;
        Packed2::from_bytes(bytes, meta.entries, meta.base)
            .ok_or_else(|| body_mismatch(path, &meta, found))
    }

    fn expect_bits(&self, bits: u8) -> Result<(PathBuf, TableMeta), TableFileError> {
        if self.header.meta.bits != bits {
            return Err(TableFileError::WrongBits {
                path: self.path.clone(),
                expected: bits,
                found: self.header.meta.bits,
            });
        }
        Ok((self.path.clone(), self.header.meta.clone()))
    }
}

fn body_mismatch(path: PathBuf, meta: &TableMeta, found: u64) -> TableFileError {
    TableFileError::BodyLength {
        path,
        entries: meta.entries,
        bits: meta.bits,
        expected: body_len(meta.entries, meta.bits).unwrap_or(u64::MAX),
        found,
    }
}

/// Reads and checks the header of the open `file` (at its start) and checks the file's
/// length against it: every check of [`TableFile::open`] before the map. Returns the
/// header and the file's length.
pub(super) fn read_checked_header(
    file: &mut File,
    path: &Path,
    expected_name: &str,
) -> Result<(TableHeader, u64), TableFileError> {
    let io = |error| TableFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let actual_len = file.metadata().map_err(io)?.len();
    let header = read_header_of(file, path, actual_len)?;
    if header.meta.name != expected_name {
        return Err(TableFileError::WrongName {
            path: path.to_path_buf(),
            expected: expected_name.to_owned(),
            found: header.meta.name,
        });
    }
    // `decode` checked body_len == ceil(entries * bits / 8) without overflow, but the
    // sum with the header may still overflow for a hostile entry count.
    let expected_len =
        header
            .body_len
            .checked_add(HEADER_LEN as u64)
            .ok_or(TableFileError::InvalidHeader {
                path: path.to_path_buf(),
                field: "body_len",
                value: header.body_len,
            })?;
    if actual_len < expected_len {
        return Err(TableFileError::Truncated {
            path: path.to_path_buf(),
            expected_len,
            actual_len,
        });
    }
    if actual_len > expected_len {
        return Err(TableFileError::TrailingData {
            path: path.to_path_buf(),
            expected_len,
            actual_len,
        });
    }
    Ok((header, expected_len))
}

/// Reads and decodes the header block at the start of `file` (`actual_len` bytes long),
/// whatever the rest of the file holds.
pub(super) fn read_header_of(
    file: &mut File,
    path: &Path,
    actual_len: u64,
) -> Result<TableHeader, TableFileError> {
    if actual_len < HEADER_LEN as u64 {
        return Err(TableFileError::TooShort {
            path: path.to_path_buf(),
            len: actual_len,
        });
    }
    let mut block = vec![0u8; HEADER_LEN];
    file.read_exact(&mut block)
        .map_err(|error| TableFileError::Io {
            path: path.to_path_buf(),
            error,
        })?;
    TableHeader::decode(path, &block)
}
