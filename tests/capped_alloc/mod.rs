//! libFuzzer's `-malloc_limit_mb=512` for a test binary: `mod capped_alloc;` makes it the
//! binary's global allocator.
// The allocation cap needs unsafe; the library itself forbids it.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};

/// Single allocations above 512 MB fail: an allocation sized by untrusted input
/// (a claim on partition 2^31 - 1, say) fails at once, aborting the test with "memory allocation
/// of N bytes failed", instead of filling the machine's memory first.
struct Capped;

const CAP: usize = 512 << 20;

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > CAP {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > CAP {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > CAP {
            return std::ptr::null_mut();
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;
