//! The 4096-byte header block: [`TableMeta`] (what a table is), [`TableHeader`] (plus
//! what was computed from the body), their encoding and checks.

use super::hash;
use super::{TableFileError, FORMAT_VERSION, HEADER_LEN, MAGIC, NAME_LEN};
use crate::packed::{body_len, Packed2, Packed4, BUCKETS};
use std::path::Path;

pub(super) const OFF_VERSION: usize = 8;
pub(super) const OFF_BITS: usize = 12;
pub(super) const OFF_BASE: usize = 13;
pub(super) const OFF_SHIFT: usize = 14;
pub(super) const OFF_WIDTH: usize = 15;
pub(super) const OFF_NAME: usize = 16;
pub(super) const OFF_ENTRIES: usize = 48;
pub(super) const OFF_BODY_OFFSET: usize = 56;
pub(super) const OFF_BODY_LEN: usize = 64;
pub(super) const OFF_CHECKSUM: usize = 72;
pub(super) const OFF_PARAMS: usize = 80;
pub(super) const OFF_DIST: usize = 96;
pub(super) const OFF_HEADER_CHECKSUM: usize = OFF_DIST + 8 * BUCKETS;

/// Seed of the header checksum (distinct from every chunk index a body can have).
const HEADER_SEED: u64 = u64::MAX;

/// What a table is: everything in the header except what is computed from the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMeta {
    /// Name such as `h48h0k4`: 1 to 32 characters from `A-Z a-z 0-9 _ - .`; readers ask for
    /// a table by this name, and [`table_path`](super::table_path) derives the file name
    /// from it.
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
    pub(super) fn check(&self, path: &Path) -> Result<u64, TableFileError> {
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
    pub(super) fn encode(&self) -> Vec<u8> {
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
    pub(super) fn decode(path: &Path, b: &[u8]) -> Result<TableHeader, TableFileError> {
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

pub(super) fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

pub(super) fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Checksum of a header block, taken with its own checksum field zeroed.
pub(super) fn header_checksum(block: &[u8]) -> u64 {
    let mut b = block.to_vec();
    b[OFF_HEADER_CHECKSUM..OFF_HEADER_CHECKSUM + 8].fill(0);
    hash::bytes(HEADER_SEED, &b)
}

/// Refuses names that are empty, longer than [`NAME_LEN`], or not made of
/// `A-Z a-z 0-9 _ - .` (names become file names).
pub(super) fn check_name(path: &Path, name: &str) -> Result<(), TableFileError> {
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
