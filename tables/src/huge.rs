//! Read-only arrays in memory backed by transparent huge pages where the system allows it.
//!
//! The search reads its larger tables at random; with 4 KiB pages almost every such read
//! also misses the TLB, and under virtualisation a page walk costs several memory
//! accesses. A 2 MiB-aligned allocation advised with `MADV_HUGEPAGE` lets the kernel back
//! it with huge pages, so the whole table needs a handful of TLB entries. Where huge pages
//! are unavailable this is an ordinary aligned allocation.
//!
//! Better still, where the kernel keeps a file's page cache in 2 MiB folios (a kernel and
//! filesystem whose page cache takes large folios, as Linux 6.18 with ext4), a map of the
//! file itself is backed by huge pages ([`page_cache_map`]): no copy, no second copy of
//! the table's memory, and one copy shared by every process that maps it.

use std::alloc::{self, Layout};
use std::ops::Deref;
use std::ptr::NonNull;

/// Alignment and granularity of huge pages on x86_64.
const HUGE: usize = 2 << 20;

/// An immutable array of `T` in (possibly) huge-page-backed memory.
pub struct HugeArray<T: Copy> {
    /// Start of the allocation (dangling but aligned when `len == 0`).
    ptr: NonNull<T>,
    /// Number of elements.
    len: usize,
    /// The allocation's layout (size 0 when nothing was allocated).
    layout: Layout,
}

// SAFETY: `HugeArray` uniquely owns its allocation and only hands out shared references to
// plain `Copy` data that is never mutated after construction, like a `Box<[T]>`.
unsafe impl<T: Copy + Send> Send for HugeArray<T> {}
// SAFETY: as above; shared access is read-only.
unsafe impl<T: Copy + Sync> Sync for HugeArray<T> {}

impl<T: Copy> HugeArray<T> {
    /// Room for `len` elements, 2 MiB aligned and advised for huge pages; not initialised.
    /// `None` when `len` is 0 (nothing to allocate).
    ///
    /// # Panics
    /// If the size overflows the address space (sizes come from table definitions, never
    /// from input); aborts like `Vec` if the allocator fails.
    fn allocate(len: usize) -> Option<(NonNull<T>, Layout)> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("table size overflows the address space");
        if bytes == 0 {
            return None;
        }
        let size = bytes
            .checked_next_multiple_of(HUGE)
            .expect("table size overflows the address space");
        let layout = Layout::from_size_align(size, HUGE.max(std::mem::align_of::<T>()))
            .expect("table size overflows the address space");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc::alloc(layout) };
        let Some(base) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        #[cfg(target_os = "linux")]
        // SAFETY: `raw .. raw + size` is our own allocation, 2 MiB aligned; madvise only
        // changes how the kernel backs it and fails harmlessly where unsupported.
        unsafe {
            libc::madvise(raw.cast(), size, libc::MADV_HUGEPAGE);
        }
        Some((base.cast::<T>(), layout))
    }

    /// An empty array (no allocation).
    fn empty(len: usize) -> HugeArray<T> {
        HugeArray {
            ptr: NonNull::dangling(),
            len,
            layout: Layout::new::<()>(),
        }
    }

    /// A copy of `data`.
    ///
    /// # Panics
    /// If the size overflows the address space (sizes come from table definitions, never
    /// from input); aborts like `Vec` if the allocator fails.
    pub fn from_slice(data: &[T]) -> HugeArray<T> {
        let Some((ptr, layout)) = Self::allocate(data.len()) else {
            return Self::empty(data.len());
        };
        // SAFETY: the allocation holds at least `data.len()` elements, is aligned for `T`,
        // and does not overlap `data`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.as_ptr(), data.len()) };
        HugeArray {
            ptr,
            len: data.len(),
            layout,
        }
    }
}

impl HugeArray<u8> {
    /// The bytes `offset .. offset + len` of `file`, read with `pread` by up to `threads`
    /// threads at once. Reading a file is several times faster than copying its memory
    /// map: the map's source pages would each be faulted in (4 KiB at a time), while the
    /// kernel copies straight from its page cache (measured for a 0.94 GB table in the
    /// page cache: 0.06–0.10 s against 0.63 s; see docs/performance.md). A short read
    /// (the file shrank) is an error of kind `UnexpectedEof`.
    ///
    /// # Panics
    /// As [`HugeArray::from_slice`].
    #[cfg(unix)]
    pub fn read_file(
        file: &std::fs::File,
        offset: u64,
        len: usize,
        threads: usize,
    ) -> std::io::Result<HugeArray<u8>> {
        use std::os::unix::io::AsRawFd;
        let Some((ptr, layout)) = Self::allocate(len) else {
            return Ok(Self::empty(0));
        };
        // Owned from here on, so an error frees it.
        let out = HugeArray { ptr, len, layout };
        // Pieces 2 MiB aligned (each huge page is faulted by one thread), at most 64 MiB
        // per call.
        const PIECE: usize = 64 << 20;
        let threads = threads.clamp(1, 8).min(len.div_ceil(HUGE));
        let share = len.div_ceil(threads).next_multiple_of(HUGE);
        let fd = file.as_raw_fd();
        let base = ptr.as_ptr() as usize;
        let read_range = |start: usize, end: usize| -> std::io::Result<()> {
            let mut at = start;
            while at < end {
                let want = (end - at).min(PIECE);
                let pos = offset + at as u64;
                // SAFETY: `base + at .. base + at + want` lies inside our allocation of at
                // least `len` bytes (`at + want <= end <= len`); the threads write
                // disjoint ranges, and nothing reads the array before they are joined.
                let got = unsafe {
                    libc::pread(
                        fd,
                        (base + at) as *mut libc::c_void,
                        want,
                        pos as libc::off_t,
                    )
                };
                match got {
                    n if n > 0 => at += n as usize,
                    0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                    _ => {
                        let e = std::io::Error::last_os_error();
                        if e.kind() != std::io::ErrorKind::Interrupted {
                            return Err(e);
                        }
                    }
                }
            }
            Ok(())
        };
        std::thread::scope(|s| {
            let handles: Vec<_> = (1..threads)
                .map(|k| {
                    let (start, end) = ((k * share).min(len), ((k + 1) * share).min(len));
                    let read_range = &read_range;
                    s.spawn(move || read_range(start, end))
                })
                .collect();
            let first = read_range(0, share.min(len));
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .fold(first, |acc, r| acc.and(r))
        })?;
        Ok(out)
    }
}

impl<T: Copy> Deref for HugeArray<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` initialised elements owned by `self` (or is a
        // dangling aligned pointer with `len * size_of::<T>() == 0`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for HugeArray<T> {
    fn drop(&mut self) {
        if self.layout.size() != 0 {
            // SAFETY: allocated in `from_slice` with exactly this layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), self.layout) };
        }
    }
}

/// Tables from this size on are mapped from a page cache in huge pages where the system
/// has it ([`page_cache_map`]); smaller ones are copied (a copy costs little and any
/// 2 MiB block left in small pages would be a large share of them).
pub const PAGE_CACHE_FROM: u64 = 32 << 20;

/// Huge-page coverage of the mapping that holds `addr`, from `/proc/self/smaps`: (its
/// size, the part mapped by huge pages: `AnonHugePages` + `FilePmdMapped`), in kB. `None`
/// where the file is unreadable or no mapping holds `addr`.
pub fn coverage(addr: usize) -> Option<(u64, u64)> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    let (mut size, mut huge) = (0, 0);
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                if inside {
                    break;
                }
                inside = a <= addr && addr < b;
                continue;
            }
        }
        if !inside {
            continue;
        }
        let kb = || {
            line.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        if line.starts_with("Size:") {
            size = kb();
        } else if line.starts_with("AnonHugePages:") || line.starts_with("FilePmdMapped:") {
            huge += kb();
        }
    }
    (size > 0).then_some((size, huge))
}

/// A read-only map of the whole of `file` backed by huge pages of the page cache, or
/// `None` where the system does not give them (then copy the table instead:
/// [`HugeArray::read_file`]).
///
/// The map is advised `MADV_HUGEPAGE` and faulted in at once (`MADV_POPULATE_READ`): a
/// file not yet cached is read in 2 MiB folios, and a file cached so is mapped by 2 MiB
/// entries in milliseconds. It is kept when all its whole 2 MiB blocks but at most one
/// (or 1%) are mapped by huge pages. Otherwise, if some are (so the system can), the
/// rest of the file is cached in small folios (from random faults through a map without
/// the advice, or short reads): the cached pages that no process maps are dropped
/// (`POSIX_FADV_DONTNEED`, which never loses data: the file is clean or written back
/// first) and the map is made once more, reading the file again from disk, once; after
/// that every process finds it in huge pages. Where none are, nothing is dropped. After
/// one failure this process copies its tables without trying again.
///
/// The file is not dropped from the cache while another map of it in this process could
/// hold some of its pages (a search started on a plain map of it), other than the map at
/// `own` (the caller's, which has only read the file's header).
///
/// `CUBESWARM_PAGE_CACHE=off` in the environment turns this off (every table copied).
#[cfg(target_os = "linux")]
pub fn page_cache_map(file: &std::fs::File, own: Option<usize>) -> Option<memmap2::Mmap> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static FAILED: AtomicBool = AtomicBool::new(false);
    if FAILED.load(Ordering::Relaxed)
        || std::env::var_os("CUBESWARM_PAGE_CACHE").is_some_and(|v| v == "off")
    {
        return None;
    }
    let len = file.metadata().ok()?.len();
    if len < PAGE_CACHE_FROM {
        return None;
    }
    let map = try_page_cache_map(file, len, own);
    if map.is_none() {
        FAILED.store(true, Ordering::Relaxed);
    }
    map
}

/// [`page_cache_map`], each time.
#[cfg(target_os = "linux")]
fn try_page_cache_map(file: &std::fs::File, len: u64, own: Option<usize>) -> Option<memmap2::Mmap> {
    use std::os::unix::io::AsRawFd;
    let whole = len / HUGE as u64 * HUGE as u64;
    let allowed_miss = (HUGE as u64).max(whole / 100);
    for attempt in 0..2 {
        if attempt == 1 {
            // SAFETY: a plain system call on an open descriptor; it only drops clean
            // cached pages that nothing maps.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
        // SAFETY: a read-only shared map of a table file. Table files are written whole
        // under another name and renamed into place, never changed in place, so the
        // mapped bytes do not change under the map (the same contract as every table
        // map; a file truncated by someone else could fault, as for any map).
        let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
        let addr = map.as_ptr() as usize;
        if !addr.is_multiple_of(HUGE) {
            // The kernel did not align the map: no 2 MiB entry can map it.
            return None;
        }
        // SAFETY: both calls only change how the kernel backs our own read-only map and
        // fault it in; they fail harmlessly (EINVAL) where unsupported.
        let ok = unsafe {
            libc::madvise(addr as *mut libc::c_void, map.len(), libc::MADV_HUGEPAGE) == 0
                && libc::madvise(
                    addr as *mut libc::c_void,
                    map.len(),
                    libc::MADV_POPULATE_READ,
                ) == 0
        };
        if !ok {
            return None;
        }
        let (_, huge_kb) = coverage(addr)?;
        if huge_kb * 1024 + allowed_miss >= whole {
            return Some(map);
        }
        if huge_kb == 0 {
            // No 2 MiB folio at all: this system (kernel, filesystem or THP setting)
            // does not give them; dropping the cache would only cost a read.
            return None;
        }
        if attempt == 0 && mapped_elsewhere(file, &[Some(addr), own]) {
            // Another map of the file in this process (a search started on the plain
            // map) holds its small pages: dropping the rest would only read it again.
            return None;
        }
    }
    None
}

/// Whether a mapping of this process other than those starting at `except` maps `file`
/// (same device and inode, from `/proc/self/maps`). Unknown counts as yes.
#[cfg(target_os = "linux")]
fn mapped_elsewhere(file: &std::fs::File, except: &[Option<usize>]) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(meta), Ok(maps)) = (file.metadata(), std::fs::read_to_string("/proc/self/maps")) else {
        return true;
    };
    let dev = format!(
        "{:02x}:{:02x}",
        libc::major(meta.dev()),
        libc::minor(meta.dev())
    );
    let ino = meta.ino().to_string();
    maps.lines().any(|line| {
        let mut f = line.split_whitespace();
        let range = f.next().unwrap_or("");
        let start = range
            .split_once('-')
            .and_then(|(a, _)| usize::from_str_radix(a, 16).ok());
        let (_perms, _offset, d, i) = (f.next(), f.next(), f.next(), f.next());
        !except.contains(&start) && d == Some(dev.as_str()) && i == Some(ino.as_str())
    })
}

/// The share of `file`'s pages in the page cache (0 to 1), from `mincore` on a map of it;
/// `None` where that fails. Nothing is read: a page not cached stays so.
#[cfg(target_os = "linux")]
pub fn cached_share(file: &std::fs::File) -> Option<f64> {
    let len = file.metadata().ok()?.len();
    if len == 0 {
        return Some(1.0);
    }
    // SAFETY: a read-only shared map of a table file that is never read through here:
    // `mincore` only asks the kernel which of its pages are cached.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    let pages = map.len().div_ceil(4096);
    let mut cached = vec![0u8; pages];
    // SAFETY: `map` is a live mapping of `map.len()` bytes at a page-aligned address,
    // and `cached` has one byte per 4 KiB page of it, as `mincore` writes.
    let ok = unsafe {
        libc::mincore(
            map.as_ptr() as *mut libc::c_void,
            map.len(),
            cached.as_mut_ptr(),
        ) == 0
    };
    ok.then(|| cached.iter().filter(|&&c| c & 1 != 0).count() as f64 / pages as f64)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A file of `len` bytes under the system temp dir, removed on drop.
    struct TempFile(std::path::PathBuf);
    impl TempFile {
        fn new(tag: &str, len: usize) -> TempFile {
            let path =
                std::env::temp_dir().join(format!("cubeswarm-huge-{tag}-{}", std::process::id()));
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
            std::fs::write(&path, bytes).unwrap();
            TempFile(path)
        }
    }
    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn another_map_of_the_same_file_is_seen_and_the_excepted_ones_are_not() {
        let f = TempFile::new("maps", 3 << 20);
        let file = std::fs::File::open(&f.0).unwrap();
        let other = TempFile::new("other", 1 << 20);
        let other_file = std::fs::File::open(&other.0).unwrap();
        // SAFETY: read-only maps of test files nothing writes while they live.
        let (a, b, c) = unsafe {
            (
                memmap2::Mmap::map(&file).unwrap(),
                memmap2::Mmap::map(&file).unwrap(),
                memmap2::Mmap::map(&other_file).unwrap(),
            )
        };
        let (a, b) = (a.as_ptr() as usize, b.as_ptr() as usize);
        assert!(mapped_elsewhere(&file, &[Some(a)]), "b maps the file");
        assert!(mapped_elsewhere(&file, &[Some(b)]), "a maps the file");
        assert!(!mapped_elsewhere(&file, &[Some(a), Some(b)]));
        // The other file's map is not this file's.
        assert!(mapped_elsewhere(&other_file, &[]));
        assert!(!mapped_elsewhere(&other_file, &[Some(c.as_ptr() as usize)]));
    }

    #[test]
    fn a_file_just_read_is_all_in_the_page_cache() {
        let f = TempFile::new("cached", 5 << 20);
        let file = std::fs::File::open(&f.0).unwrap();
        std::fs::read(&f.0).unwrap();
        let share = cached_share(&file).unwrap();
        assert!(share > 0.99, "{share}");
    }

    #[test]
    fn small_files_are_left_to_the_copy() {
        // 4 MiB, under PAGE_CACHE_FROM.
        let f = TempFile::new("small", 4 << 20);
        let file = std::fs::File::open(&f.0).unwrap();
        assert!(page_cache_map(&file, None).is_none());
    }
}
