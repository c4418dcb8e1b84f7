//! Read-only arrays in memory backed by huge pages where the system allows it.
//!
//! The search reads its larger tables at random; with 4 KiB pages almost every such read
//! also misses the TLB, and under virtualisation a page walk costs several memory
//! accesses. A 2 MiB-aligned allocation advised with `MADV_HUGEPAGE` lets the kernel back
//! it with transparent huge pages, so the whole table needs a handful of TLB entries.
//!
//! From [`GIGANTIC_FROM`] bytes, an array goes in 1 GiB pages instead where the operator
//! has reserved enough of them (`hugepages-1048576kB/nr_hugepages` in
//! `/sys/kernel/mm/hugepages/`, or `hugepagesz=1G hugepages=N` on the kernel's command
//! line; in Kubernetes, a `hugepages-1Gi` request): a 4 GB table then takes four TLB
//! entries instead of two thousand. Without reserved pages the mapping fails at once and
//! the array falls back on transparent huge pages, so nothing changes for a system that
//! reserves none. `CUBESWARM_HUGETLB=off` in the environment turns 1 GiB pages off.
//! Where neither is available the array is an ordinary aligned allocation.

use std::alloc::{self, Layout};
use std::ops::Deref;
use std::ptr::NonNull;

/// Alignment and granularity of huge pages on x86_64.
const HUGE: usize = 2 << 20;

/// A gigantic page (x86_64's largest).
pub const GIGANTIC: usize = 1 << 30;

/// Arrays from this many bytes go in 1 GiB pages where enough are reserved. Below it the
/// rounding to whole gigantic pages would cost more reserved memory than the TLB reach
/// is worth (h48h5k2, 0.94 GB, takes one page; h48h4k2, 0.47 GB, stays in 2 MiB pages).
pub const GIGANTIC_FROM: usize = 512 << 20;

/// What backs an array's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pages {
    /// Nothing allocated (an empty array).
    None,
    /// The heap, 2 MiB aligned and advised for transparent huge pages (which the kernel
    /// may or may not grant: `/proc/self/smaps` says).
    Transparent,
    /// Reserved 1 GiB pages (hugetlb), certain once mapped.
    Gigantic,
}

/// How an array's memory was obtained, and so how it is freed.
enum Backing {
    /// No allocation (`len * size_of::<T>() == 0`).
    None,
    /// `alloc::alloc` with this layout.
    Heap(Layout),
    /// An anonymous hugetlb mapping of this many bytes.
    Gigantic(usize),
}

/// An immutable array of `T` in (possibly) huge-page-backed memory.
pub struct HugeArray<T: Copy> {
    /// Start of the allocation (dangling but aligned when `len == 0`).
    ptr: NonNull<T>,
    /// Number of elements.
    len: usize,
    /// Where the memory came from.
    backing: Backing,
}

/// Whether an array of `bytes` asks for 1 GiB pages, given the value of
/// `CUBESWARM_HUGETLB` (only `off` turns them off).
pub fn wants_gigantic(bytes: usize, setting: Option<&str>) -> bool {
    bytes >= GIGANTIC_FROM && setting.map(str::trim) != Some("off")
}

/// `bytes` in reserved 1 GiB pages, or `None` where the system has not reserved enough
/// (the kernel refuses the mapping at once; nothing is faulted).
#[cfg(target_os = "linux")]
fn map_gigantic(bytes: usize) -> Option<(NonNull<u8>, usize)> {
    let size = bytes.checked_next_multiple_of(GIGANTIC)?;
    // SAFETY: a fresh anonymous private mapping of `size` bytes, overlapping nothing we
    // own; the kernel reserves its pages now (no MAP_NORESERVE), so a later first touch
    // cannot fail for want of pages, and a refusal is MAP_FAILED.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | libc::MAP_HUGE_1GB,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(raw.cast::<u8>()).map(|p| (p, size))
}

#[cfg(not(target_os = "linux"))]
fn map_gigantic(_bytes: usize) -> Option<(NonNull<u8>, usize)> {
    None
}

// SAFETY: `HugeArray` uniquely owns its allocation and only hands out shared references to
// plain `Copy` data that is never mutated after construction, like a `Box<[T]>`.
unsafe impl<T: Copy + Send> Send for HugeArray<T> {}
// SAFETY: as above; shared access is read-only.
unsafe impl<T: Copy + Sync> Sync for HugeArray<T> {}

impl<T: Copy> HugeArray<T> {
    /// Room for `len` elements, not initialised: in 1 GiB pages where
    /// [`wants_gigantic`] and the system has them, else 2 MiB aligned and advised for
    /// transparent huge pages. `None` when `len` is 0 (nothing to allocate).
    ///
    /// # Panics
    /// If the size overflows the address space (sizes come from table definitions, never
    /// from input); aborts like `Vec` if the allocator fails.
    fn allocate(len: usize) -> Option<(NonNull<T>, Backing)> {
        let setting = std::env::var("CUBESWARM_HUGETLB").ok();
        Self::allocate_in(len, wants_gigantic(Self::bytes(len), setting.as_deref()))
    }

    /// `len` elements' bytes.
    fn bytes(len: usize) -> usize {
        len.checked_mul(std::mem::size_of::<T>())
            .expect("table size overflows the address space")
    }

    /// As [`HugeArray::allocate`], trying 1 GiB pages first only when `gigantic`.
    fn allocate_in(len: usize, gigantic: bool) -> Option<(NonNull<T>, Backing)> {
        let bytes = Self::bytes(len);
        if bytes == 0 {
            return None;
        }
        // A mapping is page aligned, so aligned for any `T` of alignment up to 1 GiB.
        if let Some((base, size)) = gigantic.then(|| map_gigantic(bytes)).flatten() {
            return Some((base.cast::<T>(), Backing::Gigantic(size)));
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
        Some((base.cast::<T>(), Backing::Heap(layout)))
    }

    /// An empty array (no allocation).
    fn empty(len: usize) -> HugeArray<T> {
        HugeArray {
            ptr: NonNull::dangling(),
            len,
            backing: Backing::None,
        }
    }

    /// What backs this array: for the operator's log and the benchmarks.
    pub fn pages(&self) -> Pages {
        match self.backing {
            Backing::None => Pages::None,
            Backing::Heap(_) => Pages::Transparent,
            Backing::Gigantic(_) => Pages::Gigantic,
        }
    }

    /// A copy of `data`.
    ///
    /// # Panics
    /// If the size overflows the address space (sizes come from table definitions, never
    /// from input); aborts like `Vec` if the allocator fails.
    pub fn from_slice(data: &[T]) -> HugeArray<T> {
        Self::copy_into(data, Self::allocate(data.len()))
    }

    /// A copy of `data` in the pages asked for: 1 GiB pages when `gigantic` (falling back
    /// as [`HugeArray::from_slice`] does where the system has too few), transparent huge
    /// pages otherwise, whatever the size and the environment. For benchmarks that
    /// compare the two.
    ///
    /// # Panics
    /// As [`HugeArray::from_slice`].
    pub fn from_slice_in(data: &[T], gigantic: bool) -> HugeArray<T> {
        Self::copy_into(data, Self::allocate_in(data.len(), gigantic))
    }

    fn copy_into(data: &[T], room: Option<(NonNull<T>, Backing)>) -> HugeArray<T> {
        let Some((ptr, backing)) = room else {
            return Self::empty(data.len());
        };
        // SAFETY: the allocation holds at least `data.len()` elements, is aligned for `T`,
        // and does not overlap `data`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.as_ptr(), data.len()) };
        HugeArray {
            ptr,
            len: data.len(),
            backing,
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
        let Some((ptr, backing)) = Self::allocate(len) else {
            return Ok(Self::empty(0));
        };
        // Owned from here on, so an error frees it.
        let out = HugeArray { ptr, len, backing };
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
        match self.backing {
            Backing::None => {}
            // SAFETY: allocated in `allocate_in` with exactly this layout.
            Backing::Heap(layout) => unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), layout) },
            #[cfg(target_os = "linux")]
            // SAFETY: mapped in `map_gigantic` with exactly this size, and no reference
            // into it outlives `self`.
            Backing::Gigantic(size) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), size);
            },
            #[cfg(not(target_os = "linux"))]
            Backing::Gigantic(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gigantic_pages_are_asked_for_from_half_a_gib_unless_turned_off() {
        assert!(!wants_gigantic(GIGANTIC_FROM - 1, None));
        assert!(wants_gigantic(GIGANTIC_FROM, None));
        assert!(wants_gigantic(15 << 30, Some("on")));
        assert!(wants_gigantic(15 << 30, Some("")));
        assert!(!wants_gigantic(15 << 30, Some("off")));
        assert!(!wants_gigantic(15 << 30, Some(" off\n")));
    }

    /// Asked for 1 GiB pages, an array gets them exactly where the system has a free
    /// one reserved (none on most machines: then transparent huge pages), and holds the
    /// same bytes either way; below the threshold it is never in them.
    #[test]
    fn an_array_in_gigantic_pages_falls_back_where_none_are_reserved() {
        let data: Vec<u32> = (0..(3 << 20) + 5)
            .map(|i: u32| i.wrapping_mul(2_654_435_761))
            .collect();
        let free =
            std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0);
        let asked = HugeArray::from_slice_in(&data, true);
        let expect = if cfg!(target_os = "linux") && free >= 1 {
            Pages::Gigantic
        } else {
            Pages::Transparent
        };
        assert_eq!(asked.pages(), expect, "{free} free 1 GiB pages");
        assert_eq!(&asked[..], &data[..]);
        drop(asked);
        let small = HugeArray::from_slice(&data);
        assert_eq!(small.pages(), Pages::Transparent);
        assert_eq!(&small[..], &data[..]);
        assert_eq!(HugeArray::<u32>::from_slice(&[]).pages(), Pages::None);
    }
}
