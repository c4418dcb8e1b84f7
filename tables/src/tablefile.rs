//! Self-describing table files: a checked header, then a page-aligned body that is
//! memory-mapped read-only.
//!
//! # Layout
//! A file is a 4096-byte header block followed by the body (the table's bytes, exactly
//! `ceil(entries * bits / 8)` of them), so the body starts page-aligned and every process
//! that maps the same file shares one copy in the page cache. Header fields, little-endian:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `CUBESWRM` |
//! | 8 | 4 | format version ([`FORMAT_VERSION`]) |
//! | 12 | 1 | bits per entry: 2, 4, 8 or 32 |
//! | 13 | 1 | base value (2-bit tables; 0 otherwise) |
//! | 14 | 1 | depth-field shift (32-bit tables; 0 otherwise) |
//! | 15 | 1 | depth-field width (32-bit tables; equal to bits otherwise) |
//! | 16 | 32 | table name, ASCII, zero-padded |
//! | 48 | 8 | number of entries |
//! | 56 | 8 | body offset (always 4096) |
//! | 64 | 8 | body length in bytes |
//! | 72 | 8 | body checksum |
//! | 80 | 16 | two free parameters of the table's own |
//! | 96 | 256 | distribution: 32 counts of entries per value (31 = "31 or more") |
//! | 352 | 8 | header checksum (of the 4096-byte block with this field zeroed) |
//! | 360 | 3736 | zero |
//!
//! The distribution counts the stored values: whole entries for 2-, 4- and 8-bit tables
//! (for 2-bit tables the values 0..=3 relative to the base), and the bit field
//! `(entry >> shift) & (2^width - 1)` of 32-bit entries.
//!
//! The body checksum is computed over 1 MiB chunks in parallel: each chunk is hashed with
//! its index as seed, and the chunk hashes are folded in order with the body length.
//!
//! # Writing and opening
//! [`write_table`] writes a temporary file in the target directory (header block last),
//! syncs it and renames it into place, so a table file is never modified in place: a
//! reader sees either the old complete file or the new one. [`TableFile::open`] checks the
//! header and the file length *before* mapping anything, so a truncated or foreign file is
//! an error naming the path, never a crash (a short map would raise SIGBUS).
//! [`TableFile::verify`] re-reads the whole body to check its checksum and distribution;
//! [`TableFile::verify_once`] does so once per file and remembers it until the file
//! changes (what a search opens its tables with: [`TableFile::open_verified`]);
//! [`BodyCheck`] checks the same of a body fed in pieces as it arrives (a fetch).

mod error;
mod hash;
mod header;
mod incremental;
mod open;
mod paths;
mod stamp;
mod stream;
mod verify;
mod write;

#[cfg(test)]
mod tests;

pub use error::TableFileError;
pub use header::{TableHeader, TableMeta};
pub use incremental::BodyCheck;
pub use open::TableFile;
pub use paths::{default_tables_dir, table_path};
pub use stamp::Checked;
pub use stream::{read_header, verify_file, verify_file_with};
pub use write::{write_table, write_table_with, BODY_CHUNK};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"CUBESWRM";
/// The file format version this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the header block; the body starts at this offset.
pub const HEADER_LEN: usize = 4096;
/// Longest table name, in bytes.
pub const NAME_LEN: usize = 32;
