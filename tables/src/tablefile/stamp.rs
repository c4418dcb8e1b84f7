//! Verified once, remembered until the file changes: a stamp in the user's cache says
//! that one file's body was checked against its header, for that file exactly as it was
//! (device, inode, size, modification and change times, header checksum). Any write to
//! the file, a rebuild (a new inode), a copy or a fetch makes the stamp stale, and the
//! next [`TableFile::verify_once`] reads the whole body again.
//!
//! Stamps live in `$XDG_CACHE_HOME/cubeswarm/verified` (else `~/.cache/cubeswarm/verified`),
//! one small file per table file, named by device and inode, never beside the tables: a
//! tables directory may be read-only (a shared volume) and holds table files only. Where
//! no cache directory can be written, nothing is remembered and every run verifies.

use super::{TableFile, TableFileError};
use crate::progress::Progress;
use std::fs::{self, File, Metadata};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// What [`TableFile::verify_once`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// A stamp matched: the body was verified before and the file has not changed.
    Remembered,
    /// The body was read and verified now (and the result stamped where possible).
    Verified,
}

/// The identity of one file's contents, as far as the file system tells without reading
/// it, and the header checksum it was verified against.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    /// The stamp's text: one line of `key=value` fields.
    line: String,
    /// The stamp's file name: device and inode.
    name: String,
}

impl Identity {
    fn of(meta: &Metadata, checksum: u64) -> Identity {
        Identity {
            line: format!(
                "cubeswarm-verified 1 dev={} ino={} size={} mtime={}.{:09} ctime={}.{:09} checksum={checksum:016x}\n",
                meta.dev(),
                meta.ino(),
                meta.size(),
                meta.mtime(),
                meta.mtime_nsec(),
                meta.ctime(),
                meta.ctime_nsec(),
            ),
            name: format!("{:x}-{:x}", meta.dev(), meta.ino()),
        }
    }
}

/// Where stamps are kept.
#[derive(Clone, Debug)]
pub(super) struct Stamps {
    /// The directory (`None`: nowhere, nothing is remembered).
    dir: Option<PathBuf>,
}

impl Stamps {
    /// The user's cache (see the module documentation).
    pub(super) fn user() -> Stamps {
        Stamps {
            dir: super::paths::stamp_dir(),
        }
    }

    /// Stamps kept in `dir` (tests).
    #[cfg(test)]
    pub(super) fn at(dir: PathBuf) -> Stamps {
        Stamps { dir: Some(dir) }
    }

    /// Whether a stamp says `id` was verified.
    fn remembered(&self, id: &Identity) -> bool {
        let Some(dir) = &self.dir else {
            return false;
        };
        fs::read_to_string(dir.join(&id.name)).is_ok_and(|s| s == id.line)
    }

    /// Stamps `id` as verified (best effort: a cache that cannot be written only means
    /// the next run verifies again).
    fn remember(&self, id: &Identity) {
        let Some(dir) = &self.dir else { return };
        let tmp = dir.join(format!("{}.tmp.{}", id.name, std::process::id()));
        let written = fs::create_dir_all(dir)
            .and_then(|()| File::create(&tmp))
            .and_then(|mut f| f.write_all(id.line.as_bytes()))
            .and_then(|()| fs::rename(&tmp, dir.join(&id.name)));
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
    }

    /// Stamps the file `file` as verified against `checksum` (it was just written whole).
    pub(super) fn remember_file(&self, file: &File, checksum: u64) {
        if let Ok(meta) = file.metadata() {
            self.remember(&Identity::of(&meta, checksum));
        }
    }
}

impl TableFile {
    /// Whether this very file was verified before and has not changed since (a stamp
    /// matches); [`TableFile::verify_once`] would not read it.
    pub fn verified_before(&self) -> bool {
        self.verified_in(&Stamps::user())
    }

    pub(super) fn verified_in(&self, stamps: &Stamps) -> bool {
        self.file
            .metadata()
            .is_ok_and(|meta| stamps.remembered(&Identity::of(&meta, self.header.checksum)))
    }

    /// [`TableFile::verify`], unless this very file was verified before and has not
    /// changed since (a stamp in the user's cache says so: see the module
    /// documentation). Costs a `stat` and a small read when remembered; a full read of
    /// the body, advancing `progress` by its bytes, otherwise.
    pub fn verify_once(&self, progress: &dyn Progress) -> Result<Checked, TableFileError> {
        self.verify_once_in(&Stamps::user(), progress)
    }

    pub(super) fn verify_once_in(
        &self,
        stamps: &Stamps,
        progress: &dyn Progress,
    ) -> Result<Checked, TableFileError> {
        let meta = self.file.metadata().map_err(|error| TableFileError::Io {
            path: self.path.clone(),
            error,
        })?;
        let id = Identity::of(&meta, self.header.checksum);
        if stamps.remembered(&id) {
            return Ok(Checked::Remembered);
        }
        self.verify_with(progress)?;
        stamps.remember(&id);
        Ok(Checked::Verified)
    }

    /// Opens the table file at `path` ([`TableFile::open`]) and checks its body once
    /// ([`TableFile::verify_once`], silently): what an engine opens to search.
    pub fn open_verified(
        path: impl AsRef<std::path::Path>,
        expected_name: &str,
    ) -> Result<TableFile, TableFileError> {
        let file = TableFile::open(path, expected_name)?;
        file.verify_once(&crate::progress::Silent)?;
        Ok(file)
    }
}
