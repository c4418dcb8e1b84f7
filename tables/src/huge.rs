//! Read-only arrays in memory backed by transparent huge pages where the system allows it.
//!
//! The search reads its larger tables at random; with 4 KiB pages almost every such read
//! also misses the TLB, and under virtualisation a page walk costs several memory
//! accesses. A 2 MiB-aligned allocation advised with `MADV_HUGEPAGE` lets the kernel back
//! it with huge pages, so the whole table needs a handful of TLB entries. Where huge pages
//! are unavailable this is an ordinary aligned allocation.

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
    /// A copy of `data`.
    ///
    /// # Panics
    /// If the size overflows the address space (sizes come from table definitions, never
    /// from input); aborts like `Vec` if the allocator fails.
    pub fn from_slice(data: &[T]) -> HugeArray<T> {
        let bytes = std::mem::size_of_val(data);
        if bytes == 0 {
            return HugeArray {
                ptr: NonNull::dangling(),
                len: data.len(),
                layout: Layout::new::<()>(),
            };
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
        let ptr = base.cast::<T>();
        // SAFETY: the allocation holds at least `bytes` bytes, is aligned for `T`, and does
        // not overlap `data`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.as_ptr(), data.len()) };
        HugeArray {
            ptr,
            len: data.len(),
            layout,
        }
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
