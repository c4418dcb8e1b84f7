//! [`TableBytes`]: a table body, an owned 64-byte-aligned buffer or a read-only map.

use super::{prefetch, ALIGN};
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// One cache line; only used to obtain a well-aligned dangling pointer for empty buffers.
#[repr(C, align(64))]
struct Line([u8; ALIGN]);

/// An owned, zero-initialised, 64-byte-aligned heap buffer whose capacity is a multiple of
/// 64 bytes (so it can also be viewed as whole `u64` words).
pub(super) struct AlignedBuf {
    /// Start of the allocation (dangling but aligned when `cap == 0`).
    ptr: NonNull<u8>,
    /// Allocated bytes, a multiple of [`ALIGN`].
    cap: usize,
}

// SAFETY: `AlignedBuf` uniquely owns its allocation, like a `Box<[u8]>`; sending it to or
// sharing `&AlignedBuf` with another thread is as safe as for a box of bytes.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; shared references only allow reads (or atomic accesses arranged by
// the owner, see `AtomicPacked4::words`).
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Start of the buffer (aligned to [`ALIGN`]; dangling when empty).
    pub(super) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// A zeroed buffer of at least `len` bytes.
    ///
    /// # Panics
    /// If `len` rounded up to 64 does not fit the address space; aborts (like `Vec`) if the
    /// allocator fails. Sizes come from coordinate definitions, never from input.
    pub(super) fn zeroed(len: usize) -> AlignedBuf {
        let cap = len
            .checked_next_multiple_of(ALIGN)
            .expect("table buffer size overflows the address space");
        if cap == 0 {
            return AlignedBuf {
                ptr: NonNull::<Line>::dangling().cast(),
                cap: 0,
            };
        }
        let layout = Layout::from_size_align(cap, ALIGN)
            .expect("table buffer size overflows the address space");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, cap }
    }

    /// The whole buffer, mutably.
    pub(super) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` is valid for `cap` initialised (zeroed) bytes that we own, and
        // `&mut self` guarantees no other reference into them exists.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.cap) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.cap != 0 {
            // SAFETY: allocated in `zeroed` with exactly this size and alignment (which was
            // valid then, so `from_size_align_unchecked` is fine).
            unsafe {
                alloc::dealloc(
                    self.ptr.as_ptr(),
                    Layout::from_size_align_unchecked(self.cap, ALIGN),
                )
            };
        }
    }
}

/// What keeps the bytes of a [`TableBytes`] alive.
enum Backing {
    /// Our own allocation (held for its `Drop`).
    Owned(#[allow(dead_code)] AlignedBuf),
    /// A read-only map of a whole table file, the body a sub-range of it (held for its
    /// `Drop`), and the open file with the body's offset in it (a huge-page copy reads
    /// the file, which is faster than copying the map).
    Mapped(#[allow(dead_code)] memmap2::Mmap, std::fs::File, u64),
    /// A private copy in (transparent) huge pages (held for its `Drop`).
    Huge(#[allow(dead_code)] crate::huge::HugeArray<u8>),
    /// A read-only map of a whole table file that the page cache backs with huge pages
    /// ([`crate::huge::page_cache_map`]; held for its `Drop`).
    #[cfg(target_os = "linux")]
    PageCache(#[allow(dead_code)] memmap2::Mmap),
}

/// The read-only bytes of a table body: an owned aligned buffer or a memory-mapped file.
///
/// Access is a plain slice ([`TableBytes::as_slice`]) with no branch on the backing, so
/// lookups cost the same either way.
pub struct TableBytes {
    /// First body byte (64-byte aligned: buffers are allocated so, file bodies start at
    /// a page-aligned offset of a page-aligned map).
    ptr: NonNull<u8>,
    /// Body length in bytes.
    len: usize,
    /// Owner of the memory `ptr` points into; never mutated while `self` exists.
    _backing: Backing,
}

// SAFETY: the bytes are immutable for the lifetime of `TableBytes` and owned by `_backing`
// (a heap buffer or an `Mmap`, both `Send + Sync`); the raw pointer only caches their
// address.
unsafe impl Send for TableBytes {}
// SAFETY: as above: shared access is read-only.
unsafe impl Sync for TableBytes {}

impl TableBytes {
    /// Takes the first `len` bytes of an owned buffer (`len <= buf.cap`).
    pub(super) fn owned(buf: AlignedBuf, len: usize) -> TableBytes {
        assert!(len <= buf.cap, "table length exceeds its buffer");
        TableBytes {
            ptr: buf.ptr,
            len,
            _backing: Backing::Owned(buf),
        }
    }

    /// The bytes `offset .. offset + len` of a map of `file` (kept open, for
    /// [`TableBytes::to_huge_pages`]). Returns `None` if out of range.
    pub(crate) fn mapped(
        map: memmap2::Mmap,
        file: std::fs::File,
        offset: usize,
        len: usize,
    ) -> Option<TableBytes> {
        let end = offset.checked_add(len)?;
        let body = map.get(offset..end)?;
        let ptr = NonNull::new(body.as_ptr().cast_mut())?;
        Some(TableBytes {
            ptr,
            len,
            _backing: Backing::Mapped(map, file, offset as u64),
        })
    }

    /// The bytes in huge pages where the system has them ([`crate::huge`]): random
    /// lookups then rarely miss the TLB.
    ///
    /// A mapped table of [`crate::huge::PAGE_CACHE_FROM`] or more is first mapped again
    /// from a page cache in huge pages ([`crate::huge::page_cache_map`]): no copy, and
    /// one copy in memory shared by every process. Otherwise the bytes are copied into
    /// transparent huge pages, which costs the table's size in memory per process: a
    /// mapped table is read from its file by up to four threads (several times faster
    /// than copying the map, whose pages would each be faulted in); if that read fails,
    /// the map is copied.
    pub fn to_huge_pages(&self) -> TableBytes {
        #[cfg(target_os = "linux")]
        if let Backing::Mapped(own, file, offset) = &self._backing {
            let own = Some(own.as_ptr() as usize);
            let body = crate::huge::page_cache_map(file, own).and_then(|map| {
                let start = usize::try_from(*offset).ok()?;
                let ptr = NonNull::new(
                    map.get(start..start.checked_add(self.len)?)?
                        .as_ptr()
                        .cast_mut(),
                )?;
                Some((map, ptr))
            });
            if let Some((map, ptr)) = body {
                return TableBytes {
                    ptr,
                    len: self.len,
                    _backing: Backing::PageCache(map),
                };
            }
        }
        let copy = self.huge_copy();
        let ptr = NonNull::new(copy.as_ptr().cast_mut()).unwrap_or(NonNull::dangling());
        TableBytes {
            ptr,
            len: self.len,
            _backing: Backing::Huge(copy),
        }
    }

    /// The bytes copied into huge pages, as [`TableBytes::to_huge_pages`] makes them.
    pub fn huge_copy(&self) -> crate::huge::HugeArray<u8> {
        #[cfg(unix)]
        let read = match &self._backing {
            Backing::Mapped(_, file, offset) => {
                let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
                crate::huge::HugeArray::read_file(file, *offset, self.len, threads).ok()
            }
            _ => None,
        };
        #[cfg(not(unix))]
        let read = None;
        read.unwrap_or_else(|| crate::huge::HugeArray::from_slice(self.as_slice()))
    }

    /// Whether the bytes are a private huge-page copy ([`TableBytes::to_huge_pages`]).
    pub fn is_huge_copy(&self) -> bool {
        matches!(self._backing, Backing::Huge(_))
    }

    /// Whether the bytes are a map of their file that the page cache backs with huge
    /// pages ([`TableBytes::to_huge_pages`]).
    pub fn is_page_cache_huge(&self) -> bool {
        #[cfg(target_os = "linux")]
        return matches!(self._backing, Backing::PageCache(_));
        #[cfg(not(target_os = "linux"))]
        return false;
    }

    /// The bytes.
    #[inline(always)]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr .. ptr + len` lies inside the allocation or map owned by `_backing`
        // (checked at construction), which lives as long as `self`, is initialised, and is
        // never written while `self` exists (maps are read-only; owned buffers are only
        // written before they are wrapped).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the bytes come from a memory-mapped file (rather than the heap).
    pub fn is_mapped(&self) -> bool {
        matches!(self._backing, Backing::Mapped(..))
    }

    /// Hints the CPU to fetch the cache line holding byte `byte` (see [`prefetch`]).
    #[inline(always)]
    pub(super) fn prefetch_byte(&self, byte: usize) {
        prefetch(self.as_slice(), byte)
    }
}

impl std::fmt::Debug for TableBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBytes")
            .field("len", &self.len)
            .field("mapped", &self.is_mapped())
            .field("page_cache_huge", &self.is_page_cache_huge())
            .finish()
    }
}
