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
//! [`TableFile::verify`] re-reads the whole body to check its checksum and distribution.

use crate::packed::{self, body_len, Packed2, Packed4, TableBytes, BUCKETS};
use crate::progress::Progress;
use rayon::prelude::*;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"CUBESWRM";
/// The file format version this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the header block; the body starts at this offset.
pub const HEADER_LEN: usize = 4096;
/// Longest table name, in bytes.
pub const NAME_LEN: usize = 32;

const OFF_VERSION: usize = 8;
const OFF_BITS: usize = 12;
const OFF_BASE: usize = 13;
const OFF_SHIFT: usize = 14;
const OFF_WIDTH: usize = 15;
const OFF_NAME: usize = 16;
const OFF_ENTRIES: usize = 48;
const OFF_BODY_OFFSET: usize = 56;
const OFF_BODY_LEN: usize = 64;
const OFF_CHECKSUM: usize = 72;
const OFF_PARAMS: usize = 80;
const OFF_DIST: usize = 96;
const OFF_HEADER_CHECKSUM: usize = OFF_DIST + 8 * BUCKETS;

/// Body bytes per checksum chunk (part of the format: changing it changes checksums).
const CHECK_CHUNK: usize = 1 << 20;
/// Seed of the header checksum (distinct from every chunk index a body can have).
const HEADER_SEED: u64 = u64::MAX;

/// Why a table file could not be written, opened or verified. Every variant names the
/// file.
#[derive(Debug, thiserror::Error)]
pub enum TableFileError {
    /// The operating system refused an operation.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file (or directory) concerned.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
    /// The file is shorter than the header block.
    #[error("{}: not a table file: {len} bytes, shorter than the {HEADER_LEN}-byte header", path.display())]
    TooShort {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// The file does not start with [`MAGIC`].
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
    /// description handed to [`write_table`]).
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

/// What a table is: everything in the header except what is computed from the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMeta {
    /// Name such as `h48h0k4`: 1 to 32 characters from `A-Z a-z 0-9 _ - .`; readers ask for
    /// a table by this name, and [`table_path`] derives the file name from it.
    pub name: String,
    /// Number of entries.
    pub entries: u64,
    /// Bits per entry: 2, 4, 8 or 32.
    pub bits: u8,
    /// Base value of a 2-bit table (see [`Packed2::base`]); 0 for other widths.
    pub base: u8,
    /// For 32-bit tables, the lowest bit of the field whose distribution the header
    /// records; 0 for other widths.
    pub depth_shift: u8,
    /// For 32-bit tables, the width of that field (0 records nothing useful: every entry
    /// counts as value 0); equal to `bits` for other widths.
    pub depth_width: u8,
    /// Two numbers of the table's own (for example the parameters it was generated with),
    /// stored and returned verbatim.
    pub params: [u64; 2],
}

impl TableMeta {
    /// A description with base 0, no parameters, and, for 32-bit entries, no depth field.
    pub fn new(name: impl Into<String>, entries: u64, bits: u8) -> TableMeta {
        TableMeta {
            name: name.into(),
            entries,
            bits,
            base: 0,
            depth_shift: 0,
            depth_width: if bits == 32 { 0 } else { bits },
            params: [0; 2],
        }
    }

    /// The description of a 4-bit table.
    pub fn for_packed4(name: impl Into<String>, table: &Packed4) -> TableMeta {
        TableMeta::new(name, table.len(), 4)
    }

    /// The description of a 2-bit table, with its base.
    pub fn for_packed2(name: impl Into<String>, table: &Packed2) -> TableMeta {
        TableMeta {
            base: table.base(),
            ..TableMeta::new(name, table.len(), 2)
        }
    }

    /// Checks everything but the name; returns the body length.
    fn check(&self, path: &Path) -> Result<u64, TableFileError> {
        let invalid = |field, value: u64| TableFileError::InvalidHeader {
            path: path.to_path_buf(),
            field,
            value,
        };
        if !matches!(self.bits, 2 | 4 | 8 | 32) {
            return Err(invalid("bits", self.bits.into()));
        }
        if self.base != 0 && self.bits != 2 {
            return Err(invalid("base", self.base.into()));
        }
        if self.bits == 32 {
            if u32::from(self.depth_shift) + u32::from(self.depth_width) > 32 {
                return Err(invalid("depth_width", self.depth_width.into()));
            }
        } else if self.depth_shift != 0 {
            return Err(invalid("depth_shift", self.depth_shift.into()));
        } else if self.depth_width != self.bits {
            return Err(invalid("depth_width", self.depth_width.into()));
        }
        body_len(self.entries, self.bits).ok_or_else(|| invalid("entries", self.entries))
    }
}

/// A table file's header: the table's description plus what was computed from its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableHeader {
    /// What the table is.
    pub meta: TableMeta,
    /// Body length in bytes: `ceil(entries * bits / 8)`.
    pub body_len: u64,
    /// Checksum of the body.
    pub checksum: u64,
    /// How many entries hold each value (31 counts "31 or more"); see the module docs.
    pub distribution: [u64; BUCKETS],
}

impl TableHeader {
    /// The 4096-byte header block.
    fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_LEN];
        let m = &self.meta;
        b[..8].copy_from_slice(&MAGIC);
        b[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[OFF_BITS] = m.bits;
        b[OFF_BASE] = m.base;
        b[OFF_SHIFT] = m.depth_shift;
        b[OFF_WIDTH] = m.depth_width;
        let name = m.name.as_bytes();
        b[OFF_NAME..OFF_NAME + name.len().min(NAME_LEN)]
            .copy_from_slice(&name[..name.len().min(NAME_LEN)]);
        put_u64(&mut b, OFF_ENTRIES, m.entries);
        put_u64(&mut b, OFF_BODY_OFFSET, HEADER_LEN as u64);
        put_u64(&mut b, OFF_BODY_LEN, self.body_len);
        put_u64(&mut b, OFF_CHECKSUM, self.checksum);
        put_u64(&mut b, OFF_PARAMS, m.params[0]);
        put_u64(&mut b, OFF_PARAMS + 8, m.params[1]);
        for (i, &n) in self.distribution.iter().enumerate() {
            put_u64(&mut b, OFF_DIST + 8 * i, n);
        }
        let sum = header_checksum(&b);
        put_u64(&mut b, OFF_HEADER_CHECKSUM, sum);
        b
    }

    /// Parses and checks a header block (`b.len() == HEADER_LEN`).
    fn decode(path: &Path, b: &[u8]) -> Result<TableHeader, TableFileError> {
        let p = || path.to_path_buf();
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&b[..8]);
        if magic != MAGIC {
            return Err(TableFileError::BadMagic {
                path: p(),
                found: magic,
            });
        }
        let version = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        if version != FORMAT_VERSION {
            return Err(TableFileError::UnsupportedVersion {
                path: p(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let stored = get_u64(b, OFF_HEADER_CHECKSUM);
        let computed = header_checksum(b);
        if stored != computed {
            return Err(TableFileError::HeaderCorrupt {
                path: p(),
                stored,
                computed,
            });
        }
        let invalid = |field, value| TableFileError::InvalidHeader {
            path: p(),
            field,
            value,
        };
        let raw_name = &b[OFF_NAME..OFF_NAME + NAME_LEN];
        let name_len = raw_name.iter().position(|&c| c == 0).unwrap_or(NAME_LEN);
        let name = String::from_utf8_lossy(&raw_name[..name_len]).into_owned();
        if raw_name[name_len..].iter().any(|&c| c != 0) {
            return Err(TableFileError::BadName {
                path: p(),
                name,
                reason: "name field is not zero-padded",
            });
        }
        check_name(path, &name)?;
        let meta = TableMeta {
            name,
            entries: get_u64(b, OFF_ENTRIES),
            bits: b[OFF_BITS],
            base: b[OFF_BASE],
            depth_shift: b[OFF_SHIFT],
            depth_width: b[OFF_WIDTH],
            params: [get_u64(b, OFF_PARAMS), get_u64(b, OFF_PARAMS + 8)],
        };
        let expected = meta.check(path)?;
        let body_offset = get_u64(b, OFF_BODY_OFFSET);
        if body_offset != HEADER_LEN as u64 {
            return Err(invalid("body_offset", body_offset));
        }
        let found = get_u64(b, OFF_BODY_LEN);
        if found != expected {
            return Err(TableFileError::BodyLength {
                path: p(),
                entries: meta.entries,
                bits: meta.bits,
                expected,
                found,
            });
        }
        let distribution: [u64; BUCKETS] = std::array::from_fn(|i| get_u64(b, OFF_DIST + 8 * i));
        let total = distribution.iter().try_fold(0u64, |a, &n| a.checked_add(n));
        if total != Some(meta.entries) {
            return Err(invalid("distribution total", total.unwrap_or(u64::MAX)));
        }
        Ok(TableHeader {
            meta,
            body_len: found,
            checksum: get_u64(b, OFF_CHECKSUM),
            distribution,
        })
    }
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Checksum of a header block, taken with its own checksum field zeroed.
fn header_checksum(block: &[u8]) -> u64 {
    let mut b = block.to_vec();
    b[OFF_HEADER_CHECKSUM..OFF_HEADER_CHECKSUM + 8].fill(0);
    hash::bytes(HEADER_SEED, &b)
}

/// Refuses names that are empty, longer than [`NAME_LEN`], or not made of
/// `A-Z a-z 0-9 _ - .` (names become file names).
fn check_name(path: &Path, name: &str) -> Result<(), TableFileError> {
    let reason = if name.is_empty() {
        "empty"
    } else if name.len() > NAME_LEN {
        "longer than 32 bytes"
    } else if !name
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
    {
        "only A-Z a-z 0-9 _ - . are allowed"
    } else if name.starts_with('.') {
        "must not start with a dot"
    } else {
        return Ok(());
    };
    Err(TableFileError::BadName {
        path: path.to_path_buf(),
        name: name.to_owned(),
        reason,
    })
}

/// Checksum and distribution of a body, in parallel over [`CHECK_CHUNK`]-byte chunks.
fn scan_body(body: &[u8], meta: &TableMeta, progress: &Progress) -> (u64, [u64; BUCKETS]) {
    let per_chunk = (CHECK_CHUNK as u64 * 8) / u64::from(meta.bits.max(1));
    let parts: Vec<(u64, [u64; BUCKETS])> = body
        .par_chunks(CHECK_CHUNK)
        .enumerate()
        .map(|(i, chunk)| {
            let n = meta
                .entries
                .saturating_sub(i as u64 * per_chunk)
                .min(per_chunk);
            let dist =
                packed::histogram_seq(chunk, n, meta.bits, meta.depth_shift, meta.depth_width);
            let h = hash::bytes(i as u64, chunk);
            progress.inc(chunk.len() as u64);
            (h, dist)
        })
        .collect();
    let mut sum = hash::start(body.len() as u64);
    let mut dist = [0u64; BUCKETS];
    for (h, d) in parts {
        sum = hash::absorb(sum, h);
        dist = packed::add_arrays(dist, d);
    }
    (hash::finish(sum), dist)
}

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
    let (checksum, distribution) = scan_body(body, meta, &Progress::hidden());
    let header = TableHeader {
        meta: meta.clone(),
        body_len: expected,
        checksum,
        distribution,
    };
    let block = header.encode();

    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| TableFileError::Io { path: p, source }
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
    if let Err(source) = written {
        // Best effort: the temporary file is useless now.
        let _ = fs::remove_file(&tmp);
        return Err(TableFileError::Io { path: tmp, source });
    }
    // Make the rename durable. Some file systems refuse to sync a directory; the table is
    // complete either way, so that is not an error.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(header)
}

/// An opened table file: checked header, read-only map of the whole file.
#[derive(Debug)]
pub struct TableFile {
    /// Where it was opened from, for error messages.
    path: PathBuf,
    /// The checked header.
    header: TableHeader,
    /// The whole file, mapped read-only; exactly `HEADER_LEN + body_len` bytes.
    map: memmap2::Mmap,
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
        let io = |source| TableFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = File::open(path).map_err(io)?;
        let actual_len = file.metadata().map_err(io)?.len();
        if actual_len < HEADER_LEN as u64 {
            return Err(TableFileError::TooShort {
                path: path.to_path_buf(),
                len: actual_len,
            });
        }
        let mut block = vec![0u8; HEADER_LEN];
        file.read_exact(&mut block).map_err(io)?;
        let header = TableHeader::decode(path, &block)?;
        if header.meta.name != expected_name {
            return Err(TableFileError::WrongName {
                path: path.to_path_buf(),
                expected: expected_name.to_owned(),
                found: header.meta.name,
            });
        }
        // `decode` checked body_len == ceil(entries * bits / 8) without overflow, but the
        // sum with the header may still overflow for a hostile entry count.
        let expected_len = header.body_len.checked_add(HEADER_LEN as u64).ok_or(
            TableFileError::InvalidHeader {
                path: path.to_path_buf(),
                field: "body_len",
                value: header.body_len,
            },
        )?;
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

    /// Re-reads the whole body (in parallel) and checks its checksum and distribution
    /// against the header.
    pub fn verify(&self) -> Result<(), TableFileError> {
        self.verify_with(&Progress::hidden())
    }

    /// [`TableFile::verify`], advancing `progress` by the bytes checked (its length should
    /// be `header().body_len`).
    pub fn verify_with(&self, progress: &Progress) -> Result<(), TableFileError> {
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

    /// The body as mapped bytes that outlive this `TableFile`.
    pub fn into_bytes(self) -> Result<TableBytes, TableFileError> {
        let TableFile { path, header, map } = self;
        let len = map.len().saturating_sub(HEADER_LEN);
        TableBytes::mapped(map, HEADER_LEN, len).ok_or(TableFileError::Truncated {
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

/// Where tables live by default: `$CUBESWARM_TABLES` if set, else
/// `$XDG_DATA_HOME/cubeswarm/tables`, else `~/.local/share/cubeswarm/tables`, else
/// `./cubeswarm-tables`.
pub fn default_tables_dir() -> PathBuf {
    tables_dir_from(|key| std::env::var_os(key))
}

fn tables_dir_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |key: &str| var(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("CUBESWARM_TABLES") {
        return dir;
    }
    // The XDG spec says relative values are invalid and must be ignored.
    if let Some(data) = set("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return data.join("cubeswarm").join("tables");
    }
    if let Some(home) = set("HOME") {
        return home
            .join(".local")
            .join("share")
            .join("cubeswarm")
            .join("tables");
    }
    PathBuf::from("./cubeswarm-tables")
}

/// The file of table `name` in directory `dir`: `<dir>/<name>.tbl`.
pub fn table_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.tbl"))
}

/// The checksum: four independent multiply–rotate lanes over 8-byte words, so a single
/// changed word always changes the result (every step is a bijection of the lane state),
/// and throughput is limited by memory rather than by one dependency chain.
mod hash {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xbf58_476d_1ce4_e5b9;
    const K3: u64 = 0x94d0_49bb_1331_11eb;

    #[inline(always)]
    fn round(acc: u64, word: u64) -> u64 {
        (acc ^ word).wrapping_mul(K2).rotate_left(29)
    }

    #[inline(always)]
    fn le64(b: &[u8], at: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(a)
    }

    /// A bijective final mix.
    pub(super) fn finish(mut x: u64) -> u64 {
        x ^= x >> 31;
        x = x.wrapping_mul(K3);
        x ^= x >> 29;
        x = x.wrapping_mul(K2);
        x ^ (x >> 32)
    }

    /// Initial state of a fold over chunk hashes.
    pub(super) fn start(len: u64) -> u64 {
        len.wrapping_mul(K1) ^ K3
    }

    /// Folds one chunk hash into the state (a bijection of the state).
    pub(super) fn absorb(state: u64, h: u64) -> u64 {
        round(state, h)
    }

    /// Hash of `data` with `seed`.
    pub(super) fn bytes(seed: u64, data: &[u8]) -> u64 {
        let mut lanes = [
            seed ^ K1,
            seed.wrapping_add(K2),
            seed.rotate_left(17) ^ K3,
            !seed,
        ];
        let mut blocks = data.chunks_exact(32);
        for b in &mut blocks {
            lanes[0] = round(lanes[0], le64(b, 0));
            lanes[1] = round(lanes[1], le64(b, 8));
            lanes[2] = round(lanes[2], le64(b, 16));
            lanes[3] = round(lanes[3], le64(b, 24));
        }
        let rest = blocks.remainder();
        let mut words = rest.chunks_exact(8);
        for (lane, w) in lanes.iter_mut().zip(&mut words) {
            *lane = round(*lane, le64(w, 0));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            let mut a = [0u8; 8];
            a[..tail.len()].copy_from_slice(tail);
            lanes[3] = round(lanes[3], u64::from_le_bytes(a));
        }
        let mut h = (data.len() as u64).wrapping_mul(K3);
        for lane in lanes {
            h = round(h, finish(lane));
        }
        finish(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::AtomicPacked4;
    use proptest::prelude::*;

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> TempDir {
            static N: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "cubeswarm-tablefile-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A 4-bit table whose entry `i` holds `(i * 7 + i / 3) % 13`.
    fn sample4(entries: u64) -> Packed4 {
        let t = AtomicPacked4::new(entries);
        for i in 0..entries {
            t.set_if_unset(i, ((i * 7 + i / 3) % 13) as u8);
        }
        t.into_packed()
    }

    fn write_sample(dir: &Path, name: &str, entries: u64) -> PathBuf {
        let path = table_path(dir, name);
        let table = sample4(entries);
        write_table(
            &path,
            &TableMeta::for_packed4(name, &table),
            table.as_bytes(),
        )
        .unwrap();
        path
    }

    /// Rewrites bytes of a file in place (tests only: real tables are never edited).
    fn patch(path: &Path, at: usize, f: impl FnOnce(&mut [u8])) {
        let mut data = fs::read(path).unwrap();
        f(&mut data[at..]);
        fs::write(path, data).unwrap();
    }

    /// Patches a header field and re-seals the header checksum, as a buggy or foreign
    /// writer would.
    fn patch_sealed(path: &Path, f: impl FnOnce(&mut [u8])) {
        patch(path, 0, |b| {
            f(&mut b[..HEADER_LEN]);
            let sum = header_checksum(&b[..HEADER_LEN]);
            put_u64(b, OFF_HEADER_CHECKSUM, sum);
        });
    }

    #[test]
    fn packed4_round_trip_write_open_verify() {
        let dir = TempDir::new("rt4");
        let table = sample4(1_000_001);
        let path = table_path(&dir.0, "h48h0k4");
        let mut meta = TableMeta::for_packed4("h48h0k4", &table);
        meta.params = [7, u64::MAX];
        let written = write_table(&path, &meta, table.as_bytes()).unwrap();
        assert_eq!(written.meta, meta);
        assert_eq!(written.distribution[..16], table.distribution()[..]);
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            HEADER_LEN as u64 + 500_001
        );

        let file = TableFile::open(&path, "h48h0k4").unwrap();
        assert_eq!(file.header(), &written);
        assert_eq!(file.path(), path);
        file.verify().unwrap();
        assert_eq!(
            file.body().as_ptr() as usize % 64,
            0,
            "body must be cache-line aligned"
        );
        let loaded = file.into_packed4().unwrap();
        assert!(loaded.is_mapped());
        assert_eq!(loaded.len(), table.len());
        assert_eq!(loaded.as_bytes(), table.as_bytes());
        for i in (0..table.len()).step_by(997) {
            assert_eq!(loaded.get(i), table.get(i));
        }
        // Only the table is left in the directory: no temporary files.
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1);
    }

    #[test]
    fn packed2_8bit_and_32bit_round_trips() {
        let dir = TempDir::new("rt2");
        let two = sample4(12_345).to_packed2(9);
        let p2 = table_path(&dir.0, "h48h0k2");
        write_table(
            &p2,
            &TableMeta::for_packed2("h48h0k2", &two),
            two.as_bytes(),
        )
        .unwrap();
        let f = TableFile::open(&p2, "h48h0k2").unwrap();
        f.verify().unwrap();
        assert_eq!(f.header().meta.base, 9);
        assert_eq!(f.header().distribution[..4], two.distribution()[..]);
        let loaded = f.into_packed2().unwrap();
        assert_eq!(loaded.base(), 9);
        assert!((0..two.len()).all(|i| loaded.get(i) == two.get(i)));

        let bytes: Vec<u8> = (0..1000u32).map(|i| (i % 40) as u8).collect();
        let p8 = table_path(&dir.0, "bytes");
        let h8 = write_table(&p8, &TableMeta::new("bytes", 1000, 8), &bytes).unwrap();
        assert_eq!(h8.distribution[5], 25);
        assert_eq!(
            h8.distribution[31],
            9 * 25,
            "values 31..=39 share the last bucket"
        );
        TableFile::open(&p8, "bytes").unwrap().verify().unwrap();

        let words: Vec<u8> = (0..3000u32)
            .flat_map(|i| ((i % 11) << 4 | 0xabc0_0000).to_le_bytes())
            .collect();
        let p32 = table_path(&dir.0, "cocsep");
        let meta = TableMeta {
            depth_shift: 4,
            depth_width: 4,
            ..TableMeta::new("cocsep", 3000, 32)
        };
        let h32 = write_table(&p32, &meta, &words).unwrap();
        assert_eq!(
            h32.distribution[..11],
            [273, 273, 273, 273, 273, 273, 273, 273, 272, 272, 272]
        );
        let f = TableFile::open(&p32, "cocsep").unwrap();
        f.verify().unwrap();
        assert_eq!(f.body(), &words[..]);
        assert!(matches!(
            f.into_packed4(),
            Err(TableFileError::WrongBits {
                expected: 4,
                found: 32,
                ..
            })
        ));
    }

    #[test]
    fn truncated_files_are_refused_before_mapping() {
        let dir = TempDir::new("trunc");
        let path = write_sample(&dir.0, "t", 100_000);
        let full = fs::metadata(&path).unwrap().len();
        for len in [
            full - 1,
            full - 4096,
            HEADER_LEN as u64 + 1,
            HEADER_LEN as u64,
        ] {
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(len).unwrap();
            drop(f);
            match TableFile::open(&path, "t") {
                Err(TableFileError::Truncated {
                    path: p,
                    expected_len,
                    actual_len,
                }) => {
                    assert_eq!(
                        (p.as_path(), expected_len, actual_len),
                        (path.as_path(), full, len)
                    );
                }
                other => panic!("length {len}: expected Truncated, got {other:?}"),
            }
        }
        for len in [HEADER_LEN as u64 - 1, 100, 0] {
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(len).unwrap();
            drop(f);
            assert!(
                matches!(TableFile::open(&path, "t"), Err(TableFileError::TooShort { len: l, .. }) if l == len)
            );
        }
    }

    #[test]
    fn trailing_data_is_refused() {
        let dir = TempDir::new("trail");
        let path = write_sample(&dir.0, "t", 1000);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"x").unwrap();
        drop(f);
        assert!(matches!(
            TableFile::open(&path, "t"),
            Err(TableFileError::TrailingData {
                expected_len: 4596,
                actual_len: 4597,
                ..
            })
        ));
    }

    #[test]
    fn flipped_body_byte_fails_verify_with_checksum_mismatch() {
        let dir = TempDir::new("flip");
        let path = write_sample(&dir.0, "t", 3_000_000);
        for at in [HEADER_LEN, HEADER_LEN + 1_234_567, HEADER_LEN + 1_499_999] {
            patch(&path, at, |b| b[0] ^= 0x10);
            let file = TableFile::open(&path, "t").expect("the header is intact");
            let err = file.verify().unwrap_err();
            assert!(
                matches!(err, TableFileError::ChecksumMismatch { .. }),
                "{err:?}"
            );
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{err}"
            );
            patch(&path, at, |b| b[0] ^= 0x10);
            TableFile::open(&path, "t").unwrap().verify().unwrap();
        }
    }

    #[test]
    fn distribution_mismatch_is_reported() {
        let dir = TempDir::new("dist");
        let path = write_sample(&dir.0, "t", 5000);
        // Move one count from value 0 to value 1 (the total stays right) and re-seal.
        patch_sealed(&path, |h| {
            let d0 = get_u64(h, OFF_DIST);
            let d1 = get_u64(h, OFF_DIST + 8);
            put_u64(h, OFF_DIST, d0 - 1);
            put_u64(h, OFF_DIST + 8, d1 + 1);
        });
        let err = TableFile::open(&path, "t").unwrap().verify().unwrap_err();
        assert!(
            matches!(err, TableFileError::DistributionMismatch { value: 0, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn foreign_and_damaged_headers_are_refused() {
        let dir = TempDir::new("hdr");
        let path = write_sample(&dir.0, "h48h0k4", 777);
        let pristine = fs::read(&path).unwrap();
        let reset = || fs::write(&path, &pristine).unwrap();

        patch(&path, 0, |b| b[..8].copy_from_slice(b"GIF89a\0\0"));
        assert!(
            matches!(TableFile::open(&path, "h48h0k4"), Err(TableFileError::BadMagic { found, .. }) if &found == b"GIF89a\0\0")
        );
        reset();

        patch_sealed(&path, |h| {
            h[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&2u32.to_le_bytes())
        });
        assert!(matches!(
            TableFile::open(&path, "h48h0k4"),
            Err(TableFileError::UnsupportedVersion {
                found: 2,
                supported: 1,
                ..
            })
        ));
        reset();

        // Damage anywhere in the header block: entries, the name, the reserved zeros.
        for at in [
            OFF_ENTRIES,
            OFF_NAME + 3,
            OFF_DIST + 40,
            OFF_HEADER_CHECKSUM,
            4000,
        ] {
            patch(&path, at, |b| b[0] ^= 1);
            assert!(
                matches!(
                    TableFile::open(&path, "h48h0k4"),
                    Err(TableFileError::HeaderCorrupt { .. })
                ),
                "damage at {at} not detected"
            );
            reset();
        }

        let err = TableFile::open(&path, "h48h11k2").unwrap_err();
        assert!(
            matches!(&err, TableFileError::WrongName { expected, found, .. } if expected == "h48h11k2" && found == "h48h0k4")
        );

        patch_sealed(&path, |h| h[OFF_BITS] = 3);
        assert!(matches!(
            TableFile::open(&path, "h48h0k4"),
            Err(TableFileError::InvalidHeader {
                field: "bits",
                value: 3,
                ..
            })
        ));
        reset();

        patch_sealed(&path, |h| put_u64(h, OFF_BODY_LEN, 388));
        assert!(matches!(
            TableFile::open(&path, "h48h0k4"),
            Err(TableFileError::BodyLength {
                expected: 389,
                found: 388,
                ..
            })
        ));
        reset();

        // A hostile entry count whose body length would overflow.
        patch_sealed(&path, |h| put_u64(h, OFF_ENTRIES, u64::MAX));
        assert!(matches!(
            TableFile::open(&path, "h48h0k4"),
            Err(TableFileError::InvalidHeader {
                field: "entries",
                ..
            })
        ));
        reset();

        patch_sealed(&path, |h| h[OFF_NAME..OFF_NAME + 3].copy_from_slice(b"../"));
        assert!(matches!(
            TableFile::open(&path, "h48h0k4"),
            Err(TableFileError::BadName { .. })
        ));
        reset();

        let opened = TableFile::open(&path, "h48h0k4").unwrap();
        assert!(matches!(
            opened.into_packed2(),
            Err(TableFileError::WrongBits {
                expected: 2,
                found: 4,
                ..
            })
        ));

        let missing = dir.0.join("nope.tbl");
        let err = TableFile::open(&missing, "nope").unwrap_err();
        assert!(matches!(&err, TableFileError::Io { path, .. } if path == &missing));
        assert!(err.to_string().contains("nope.tbl"));
    }

    #[test]
    fn write_refuses_bad_descriptions() {
        let dir = TempDir::new("badmeta");
        let path = dir.0.join("x.tbl");
        let cases: [(TableMeta, usize); 6] = [
            (TableMeta::new("", 8, 4), 4),
            (TableMeta::new("a/b", 8, 4), 4),
            (TableMeta::new("x".repeat(33), 8, 4), 4),
            (TableMeta::new("x", 8, 5), 5),
            (
                TableMeta {
                    base: 2,
                    ..TableMeta::new("x", 8, 4)
                },
                4,
            ),
            (TableMeta::new("x", 8, 4), 5),
        ];
        for (meta, len) in cases {
            let err = write_table(&path, &meta, &vec![0; len]).unwrap_err();
            assert!(
                matches!(
                    err,
                    TableFileError::BadName { .. }
                        | TableFileError::InvalidHeader { .. }
                        | TableFileError::BodyLength { .. }
                ),
                "{meta:?}: {err:?}"
            );
        }
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 0, "nothing written");
    }

    #[test]
    fn replacing_a_table_leaves_existing_maps_intact() {
        let dir = TempDir::new("replace");
        let path = table_path(&dir.0, "t");
        let old = sample4(10_000);
        write_table(&path, &TableMeta::for_packed4("t", &old), old.as_bytes()).unwrap();
        let mapped = TableFile::open(&path, "t").unwrap().into_packed4().unwrap();
        let new = sample4(20_000).to_packed2(3);
        write_table(&path, &TableMeta::for_packed2("t", &new), new.as_bytes()).unwrap();
        assert_eq!(
            mapped.as_bytes(),
            old.as_bytes(),
            "the old mapping still sees the old file"
        );
        let reopened = TableFile::open(&path, "t").unwrap();
        assert_eq!(reopened.header().meta.bits, 2);
        reopened.verify().unwrap();
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1);
    }

    #[test]
    fn checksum_depends_on_every_chunk_and_its_position() {
        let a = vec![0u8; 3 * CHECK_CHUNK];
        let meta = TableMeta::new("x", a.len() as u64, 8);
        let base = scan_body(&a, &meta, &Progress::hidden()).0;
        let mut b = a.clone();
        b[2 * CHECK_CHUNK + 5] = 1;
        assert_ne!(scan_body(&b, &meta, &Progress::hidden()).0, base);
        // Swapping two different chunks changes the checksum.
        let mut c = a.clone();
        c[..CHECK_CHUNK].fill(7);
        let mut d = a.clone();
        d[CHECK_CHUNK..2 * CHECK_CHUNK].fill(7);
        assert_ne!(
            scan_body(&c, &meta, &Progress::hidden()).0,
            scan_body(&d, &meta, &Progress::hidden()).0
        );
        // Trailing zero bytes are not invisible.
        assert_ne!(hash::bytes(0, &[1, 2, 3]), hash::bytes(0, &[1, 2, 3, 0]));
    }

    #[test]
    fn default_tables_dir_follows_env_then_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            tables_dir_from(env(&[
                ("CUBESWARM_TABLES", "/t"),
                ("XDG_DATA_HOME", "/x"),
                ("HOME", "/h")
            ])),
            PathBuf::from("/t")
        );
        assert_eq!(
            tables_dir_from(env(&[("CUBESWARM_TABLES", ""), ("XDG_DATA_HOME", "/x")])),
            PathBuf::from("/x/cubeswarm/tables")
        );
        assert_eq!(
            tables_dir_from(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/h")])),
            PathBuf::from("/h/.local/share/cubeswarm/tables")
        );
        assert_eq!(
            tables_dir_from(env(&[])),
            PathBuf::from("./cubeswarm-tables")
        );
        assert_eq!(
            table_path(Path::new("/t"), "h48h0k4"),
            PathBuf::from("/t/h48h0k4.tbl")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Arbitrary damage (one byte anywhere, or a cut anywhere) never panics and never
        /// goes unnoticed: open refuses it, or verify does.
        #[test]
        fn damage_is_always_detected(at in 0usize..HEADER_LEN + 2500, xor in 1u8..=255, cut in any::<bool>()) {
            let dir = TempDir::new("fuzz");
            let path = write_sample(&dir.0, "f", 5000);
            if cut {
                let f = OpenOptions::new().write(true).open(&path).unwrap();
                f.set_len(at as u64).unwrap();
            } else {
                patch(&path, at, |b| b[0] ^= xor);
            }
            let ok = TableFile::open(&path, "f").and_then(|f| f.verify());
            prop_assert!(ok.is_err());
        }
    }
}
