//! Writing large files around the page cache (`O_DIRECT`), where the file system allows:
//! a fetched table's body (`remote::fetch`) and a build's checkpoint (`h48::checkpoint`).
//!
//! A buffered `write` copies every byte into freshly allocated page-cache pages, which the
//! kernel later writes back and reclaims: for a table of several GB that copy was half of
//! the fetcher's CPU (`perf`: `copy_folio_from_iter_atomic`, 51% of its cycles for
//! h48h8k2), and it fills the page cache with a file nobody reads soon. With `O_DIRECT`
//! the disk reads the bytes from the process's own buffers. The bytes are staged (one
//! copy, into a buffer that stays in cache) in 4 KiB-aligned buffers of [`STAGE`] bytes,
//! and a second thread writes full buffers while the caller fills the next: producing the
//! bytes and the disk's writing overlap.
//!
//! Only whole, aligned blocks go this way; what is left at the end (the file's last,
//! partial block) is written through the ordinary file. A file system that refuses
//! `O_DIRECT`, at open or at the first write, gets ordinary writes for the rest of the
//! file. The page cache does not hold the file afterwards: its first reader reads it from
//! the disk.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// The alignment `O_DIRECT` asks of offsets, lengths and addresses (the largest logical
/// block size in common use; 512-byte devices accept it too).
const BLOCK: usize = 4096;

/// Bytes per staging buffer (the coordinator's chunk size).
const STAGE: usize = 4 << 20;

/// Staging buffers in all: one filling, one being written, one spare.
const BUFFERS: usize = 3;

/// One aligned block of a staging buffer.
#[repr(C, align(4096))]
#[derive(Clone, Copy)]
struct Block([u8; BLOCK]);

/// An aligned buffer and the file offset of its first byte.
struct Stage {
    blocks: Vec<Block>,
    /// File offset of byte 0 (a multiple of [`BLOCK`]).
    start: u64,
    /// Bytes filled.
    len: usize,
}

impl Stage {
    fn new() -> Stage {
        Stage {
            blocks: vec![Block([0; BLOCK]); STAGE / BLOCK],
            start: 0,
            len: 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `Block` is `repr(C)` around `[u8; BLOCK]` with alignment equal to its
        // size, so it has no padding; a `Vec<Block>` is one allocation of
        // `len · BLOCK` initialised bytes, borrowed here for as long as `self`.
        unsafe {
            std::slice::from_raw_parts(self.blocks.as_ptr().cast::<u8>(), self.blocks.len() * BLOCK)
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, borrowed mutably for as long as `self` is.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.blocks.as_mut_ptr().cast::<u8>(),
                self.blocks.len() * BLOCK,
            )
        }
    }

    /// File offset just past the bytes filled.
    fn end(&self) -> u64 {
        self.start + self.len as u64
    }
}

/// The staging side of direct writes: the buffer being filled, the spare buffers coming
/// back from the thread that writes them.
pub(crate) struct Direct {
    filling: Stage,
    to_disk: Option<SyncSender<Stage>>,
    back: Receiver<Stage>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

/// Opens `path` a second time for direct writes; `None` where that is not possible (not
/// Linux, or a file system such as tmpfs that refuses `O_DIRECT`).
fn open_direct(path: &Path) -> Option<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

impl Direct {
    /// Direct writes to `path` (the partial file, already open as `file` for ordinary
    /// writes), or `None` where they cannot be had.
    pub(crate) fn open(path: &Path, file: &File) -> Option<Direct> {
        let direct = open_direct(path)?;
        let fallback = file.try_clone().ok()?;
        let (to_disk, from_writer) = sync_channel::<Stage>(1);
        let (give_back, back) = channel();
        for _ in 1..BUFFERS {
            give_back.send(Stage::new()).ok()?;
        }
        let thread = std::thread::Builder::new()
            .name("direct-write".into())
            .spawn(move || write_stages(&direct, &fallback, &from_writer, &give_back))
            .ok()?;
        Some(Direct {
            filling: Stage::new(),
            to_disk: Some(to_disk),
            back,
            thread: Some(thread),
        })
    }

    /// Stages `data`, whose first byte goes at file offset `at` (each call continuing
    /// the previous one, except the first after a resume, whose start the file's bytes
    /// before `at` in the same block fill: `file` reads them).
    pub(crate) fn write(&mut self, mut data: &[u8], mut at: u64, file: &File) -> io::Result<()> {
        if self.filling.len > 0 && self.filling.end() != at {
            return Err(io::Error::other(format!(
                "direct write at {at}, where {} was expected",
                self.filling.end()
            )));
        }
        while !data.is_empty() {
            if self.filling.len == 0 {
                let start = at - at % BLOCK as u64;
                let before = (at - start) as usize;
                self.filling.start = start;
                if before > 0 {
                    file.read_exact_at(&mut self.filling.bytes_mut()[..before], start)?;
                }
                self.filling.len = before;
            }
            let n = (STAGE - self.filling.len).min(data.len());
            let len = self.filling.len;
            self.filling.bytes_mut()[len..len + n].copy_from_slice(&data[..n]);
            self.filling.len += n;
            data = &data[n..];
            at += n as u64;
            if self.filling.len == STAGE {
                self.send_filling()?;
            }
        }
        Ok(())
    }

    /// Hands the buffer being filled to the writing thread and takes a spare one.
    fn send_filling(&mut self) -> io::Result<()> {
        let spare = self.back.recv().map_err(|_| self.thread_error())?;
        let full = std::mem::replace(&mut self.filling, spare);
        self.hand_over(full)?;
        self.filling.len = 0;
        Ok(())
    }

    /// Gives `stage` to the writing thread; its error if it has stopped.
    fn hand_over(&mut self, stage: Stage) -> io::Result<()> {
        let sent = self
            .to_disk
            .as_ref()
            .is_some_and(|tx| tx.send(stage).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self.thread_error())
        }
    }

    /// The writing thread's error, once it has stopped.
    fn thread_error(&mut self) -> io::Error {
        self.to_disk = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            _ => io::Error::other("the direct-write thread stopped"),
        }
    }

    /// Writes everything staged (the whole blocks directly, the last partial block
    /// through `file`) and waits for the writing thread: afterwards the file holds every
    /// byte given to [`Direct::write`].
    pub(crate) fn finish(mut self, file: &File) -> io::Result<()> {
        let whole = self.filling.len - self.filling.len % BLOCK;
        let tail_at = self.filling.start + whole as u64;
        let tail = self.filling.bytes()[whole..self.filling.len].to_vec();
        if whole > 0 {
            self.filling.len = whole;
            let spare = Stage {
                blocks: Vec::new(),
                start: 0,
                len: 0,
            };
            let last = std::mem::replace(&mut self.filling, spare);
            self.hand_over(last)?;
        }
        self.to_disk = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result?,
            _ => return Err(io::Error::other("the direct-write thread panicked")),
        }
        if !tail.is_empty() {
            file.write_all_at(&tail, tail_at)?;
        }
        Ok(())
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        // An abandoned file: let the thread write what it holds and stop, so that no
        // write lands in the file after its owner has moved on.
        self.to_disk = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The writing thread: each staged buffer's bytes at its offset, directly; after a
/// refusal (`EINVAL`: the file system takes `O_DIRECT` at open but not these writes),
/// through the ordinary file from then on.
fn write_stages(
    direct: &File,
    fallback: &File,
    stages: &Receiver<Stage>,
    give_back: &Sender<Stage>,
) -> io::Result<()> {
    let mut refused = false;
    for stage in stages {
        let bytes = &stage.bytes()[..stage.len];
        if !refused {
            match direct.write_all_at(bytes, stage.start) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    tracing::debug!("direct writes refused ({e}): ordinary writes from here");
                    refused = true;
                }
                Err(e) => return Err(e),
            }
        }
        if refused {
            fallback.write_all_at(bytes, stage.start)?;
        }
        // The writer may have finished and dropped its end: nothing left to fill.
        let _ = give_back.send(stage);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
