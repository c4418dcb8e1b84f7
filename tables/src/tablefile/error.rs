//! [`TableFileError`]: why a table file could not be written, opened or verified.

use super::HEADER_LEN;
use std::io;
use std::path::PathBuf;

/// Why a table file could not be written, opened or verified. Every variant names the
/// file.
#[derive(Debug, thiserror::Error)]
pub enum TableFileError {
    /// The operating system refused an operation.
    ///
    /// The message already ends with what the operating system said, so `error` is not
    /// also reported as the [`source`](std::error::Error::source): a chain printed in full
    /// (`anyhow`'s `{:#}`) would say it twice.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file (or directory) concerned.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
    /// The file is shorter than the header block.
    #[error("{}: not a table file: {len} bytes, shorter than the {HEADER_LEN}-byte header", path.display())]
    TooShort {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// The file does not start with [`MAGIC`](super::MAGIC).
    #[error("{}: not a cubeswarm table file (magic bytes {found:02x?})", path.display())]
    BadMagic {
        /// The file.
        path: PathBuf,
        /// Its first eight bytes.
        found: [u8; 8],
    },
    /// The file uses a format version this code does not read.
    #[error("{}: table format version {found}, this program reads version {supported}", path.display())]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this code reads.
        supported: u32,
    },
    /// The header block does not match its checksum.
    #[error("{}: header is corrupt (checksum {stored:016x} stored, {computed:016x} computed)", path.display())]
    HeaderCorrupt {
        /// The file.
        path: PathBuf,
        /// Checksum in the header.
        stored: u64,
        /// Checksum of the header as read.
        computed: u64,
    },
    /// A header field holds a value this format does not allow (in a file, or in the
    /// description handed to [`write_table`](super::write_table)).
    #[error("{}: invalid header field {field} = {value}", path.display())]
    InvalidHeader {
        /// The file.
        path: PathBuf,
        /// The field's name.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A table name is empty, too long, or has characters other than `A-Z a-z 0-9 _ - .`.
    #[error("{}: invalid table name {name:?}: {reason}", path.display())]
    BadName {
        /// The file.
        path: PathBuf,
        /// The name (lossily decoded when read from a file).
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The file holds a different table than the one asked for.
    #[error("{}: holds table {found:?}, expected {expected:?}", path.display())]
    WrongName {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        expected: String,
        /// The name in the file.
        found: String,
    },
    /// The body length does not fit the number of entries and their width.
    #[error("{}: {entries} entries of {bits} bits need {expected} body bytes, found {found}", path.display())]
    BodyLength {
        /// The file.
        path: PathBuf,
        /// Number of entries.
        entries: u64,
        /// Bits per entry.
        bits: u8,
        /// Bytes those entries need.
        expected: u64,
        /// Body length given.
        found: u64,
    },
    /// The file is shorter than its header says (an interrupted copy or download).
    #[error("{}: truncated: {actual_len} bytes, the header says {expected_len}", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Header block plus body length.
        expected_len: u64,
        /// The file's length.
        actual_len: u64,
    },
    /// The file is longer than its header says.
    #[error("{}: {actual_len} bytes, but the header says {expected_len}: trailing data", path.display())]
    TrailingData {
        /// The file.
        path: PathBuf,
        /// Header block plus body length.
        expected_len: u64,
        /// The file's length.
        actual_len: u64,
    },
    /// The table is too large to map in this process's address space.
    #[error("{}: {len} bytes cannot be mapped on this platform", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The file length.
        len: u64,
    },
    /// The table has another entry width than the caller needs.
    #[error("{}: table has {found}-bit entries, expected {expected}-bit", path.display())]
    WrongBits {
        /// The file.
        path: PathBuf,
        /// Bits per entry asked for.
        expected: u8,
        /// Bits per entry in the file.
        found: u8,
    },
    /// The body does not match the header's checksum: the data is damaged.
    #[error("{}: body checksum mismatch ({stored:016x} in header, {computed:016x} computed): the table is damaged", path.display())]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
        /// Checksum in the header.
        stored: u64,
        /// Checksum of the body as read.
        computed: u64,
    },
    /// The body's per-value counts differ from the header's.
    #[error("{}: {computed} entries hold value {value}, the header says {stored}", path.display())]
    DistributionMismatch {
        /// The file.
        path: PathBuf,
        /// The first value whose count differs.
        value: usize,
        /// Count in the header.
        stored: u64,
        /// Count in the body.
        computed: u64,
    },
}
