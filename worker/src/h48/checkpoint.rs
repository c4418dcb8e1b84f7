//! Checkpoints of a k2 build ([`super::gen_k2`]): `<dir>/<name>.tbl.partial`, the working
//! table's words and how many batches of depth-first tails they include, so a build killed
//! at any point (SIGKILL, power loss) resumes from its last checkpoint.
//!
//! Layout: a 4096-byte header (magic `CSWPART1`, the name zero-padded to 32 bytes, N, the
//! base, then little-endian u64s: batches done, batches in all, words, a checksum of the
//! words), then the words, little-endian. A checkpoint is written to `.partial.tmp`,
//! synced and renamed over the previous one, so the file on disk is always a whole one.
//! Resuming is exact: every mark is an atomic minimum, so replaying the batches after the
//! last checkpoint (some of which may already be in the words) gives the same table.
//!
//! The words go to the disk around the page cache where the file system allows
//! ([`crate::direct`]): a checkpoint of h48h8k2 is 7.5 GB every two minutes, which through
//! the page cache cost 14 s of a stalled build each time and pushed everything else out
//! of the cache.

use crate::direct::Direct;
use crate::Error;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const MAGIC: [u8; 8] = *b"CSWPART1";
const HEADER: usize = 4096;
/// Words per read (64 MiB).
const IO_WORDS: usize = 1 << 23;
/// Words turned into bytes at a time when saving (512 KiB: the bytes stay in cache until
/// they are staged or written).
const SAVE_WORDS: usize = 1 << 16;

/// The build a checkpoint belongs to, and how far it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Table name.
    pub name: String,
    /// Edge-orientation bits N.
    pub eo_bits: u8,
    /// Base of the table.
    pub base: u8,
    /// Batches of tails already in the words.
    pub done: u64,
    /// Batches of tails in all.
    pub total: u64,
    /// Words of the working table.
    pub words: u64,
}

/// `<dir>/<name>.tbl.partial`.
pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.tbl.partial"))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |error| Error::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn checksum(words: &[AtomicU64]) -> u64 {
    use rayon::prelude::*;
    words
        .par_iter()
        .enumerate()
        .map(|(i, w)| {
            (w.load(Relaxed) ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .wrapping_mul(0xbf58_476d_1ce4_e5b9)
                .rotate_left(31)
        })
        .reduce(|| 0, u64::wrapping_add)
}

impl Checkpoint {
    fn encode(&self, sum: u64) -> Vec<u8> {
        let mut b = vec![0u8; HEADER];
        b[..8].copy_from_slice(&MAGIC);
        let n = self.name.as_bytes();
        let n = &n[..n.len().min(32)];
        b[8..8 + n.len()].copy_from_slice(n);
        b[40] = self.eo_bits;
        b[41] = self.base;
        for (i, v) in [self.done, self.total, self.words, sum].iter().enumerate() {
            b[48 + 8 * i..56 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn decode(b: &[u8]) -> Option<(Checkpoint, u64)> {
        if b.len() < HEADER || b[..8] != MAGIC {
            return None;
        }
        let name_len = b[8..40].iter().position(|&c| c == 0).unwrap_or(32);
        let name = std::str::from_utf8(&b[8..8 + name_len]).ok()?.to_string();
        let u = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[48 + 8 * i..56 + 8 * i]);
            u64::from_le_bytes(a)
        };
        Some((
            Checkpoint {
                name,
                eo_bits: b[40],
                base: b[41],
                done: u(0),
                total: u(1),
                words: u(2),
            },
            u(3),
        ))
    }

    /// The checkpoint of `name` in `dir`, if one is there and whole (its header only: the
    /// words are read by [`Checkpoint::load`]). For `tables list`.
    pub fn probe(dir: &Path, name: &str) -> Option<Checkpoint> {
        let p = path(dir, name);
        let mut f = File::open(&p).ok()?;
        let mut b = vec![0u8; HEADER];
        f.read_exact(&mut b).ok()?;
        let (c, _) = Checkpoint::decode(&b)?;
        let len = f.metadata().ok()?.len();
        (c.name == name && len == HEADER as u64 + 8 * c.words).then_some(c)
    }

    /// Writes `words` with this description over the checkpoint of its table in `dir`.
    pub fn save(&self, dir: &Path, words: &[AtomicU64]) -> Result<(), Error> {
        let dest = path(dir, &self.name);
        let tmp = dir.join(format!("{}.tbl.partial.tmp", self.name));
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io(&tmp))?;
        f.write_all(&self.encode(checksum(words)))
            .map_err(io(&tmp))?;
        let mut direct = Direct::open(&tmp, &f);
        let mut buf = Vec::with_capacity(SAVE_WORDS * 8);
        let mut at = HEADER as u64;
        for part in words.chunks(SAVE_WORDS) {
            buf.clear();
            for w in part {
                buf.extend_from_slice(&w.load(Relaxed).to_le_bytes());
            }
            match &mut direct {
                Some(d) => d.write(&buf, at, &f),
                None => f.write_all_at(&buf, at),
            }
            .map_err(io(&tmp))?;
            at += buf.len() as u64;
        }
        if let Some(d) = direct {
            d.finish(&f).map_err(io(&tmp))?;
        }
        f.sync_all().map_err(io(&tmp))?;
        drop(f);
        fs::rename(&tmp, &dest).map_err(io(&dest))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Reads the checkpoint of `want`'s table into `words` when it belongs to the same
    /// build (name, N, base, words) and its words check; returns it (how many batches it
    /// includes). `None` when there is none or it does not fit; the words may then hold
    /// anything and must be reset by the caller.
    pub fn load(dir: &Path, want: &Checkpoint, words: &[AtomicU64]) -> Option<Checkpoint> {
        let c = Checkpoint::probe(dir, &want.name)?;
        if (c.eo_bits, c.base, c.words) != (want.eo_bits, want.base, want.words)
            || c.words != words.len() as u64
            || c.done > c.total
        {
            return None;
        }
        let mut f = File::open(path(dir, &want.name)).ok()?;
        let mut b = vec![0u8; HEADER];
        f.read_exact(&mut b).ok()?;
        let (_, sum) = Checkpoint::decode(&b)?;
        let mut buf = vec![0u8; IO_WORDS * 8];
        for part in words.chunks(IO_WORDS) {
            let bytes = &mut buf[..part.len() * 8];
            f.read_exact(bytes).ok()?;
            for (w, b8) in part.iter().zip(bytes.chunks_exact(8)) {
                let mut a = [0u8; 8];
                a.copy_from_slice(b8);
                w.store(u64::from_le_bytes(a), Relaxed);
            }
        }
        (checksum(words) == sum).then_some(c)
    }

    /// Removes the checkpoint of `name` (the table is complete).
    pub fn remove(dir: &Path, name: &str) {
        let _ = fs::remove_file(path(dir, name));
    }
}
