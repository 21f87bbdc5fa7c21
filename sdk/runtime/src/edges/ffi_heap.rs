//! The C heap's C ABI on the host run: `ntx op build` renames a kernel's calls of `malloc`,
//! `calloc`, `realloc`, `free`, `aligned_alloc`, `posix_memalign`, `strdup`, `strndup` and
//! the `operator new` and `delete` forms in its compute objects to these (its shape
//! functions run on the host on the device too, and keep the C library's). A block is at
//! the model's offset ([`crate::percore::c_heap`]) in this process's arena, the heap's size;
//! a pointer outside the arena is the C library's (an allocation outside a kernel, or
//! libstdc++'s own code) and goes back to it.

use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void};
use core::ptr::null_mut;

use crate::base::codes::C_HEAP_BYTES;
use crate::percore::c_heap::{self, Take};
use crate::percore::state;

/// The heap's bytes, 64-byte aligned as the model's offsets take them.
#[repr(C, align(64))]
struct Arena(UnsafeCell<[u8; C_HEAP_BYTES]>);

// SAFETY: one core's process runs one kernel at a time; the blocks are the model's, which
// the runtime's lock guards.
unsafe impl Sync for Arena {}

static ARENA: Arena = Arena(UnsafeCell::new([0; C_HEAP_BYTES]));

fn arena() -> *mut u8 {
    ARENA.0.get().cast()
}

/// The offset of `p` in the arena, if it is there.
fn offset_of(p: *const c_void) -> Option<u32> {
    let at = (p as usize).checked_sub(arena() as usize)?;
    (at < C_HEAP_BYTES).then_some(at as u32)
}

/// `bytes` aligned to `align` (0: the heap's), for `operator new` (`new`) or the C library.
fn take(bytes: usize, align: usize, new: bool) -> *mut c_void {
    let align32 = u32::try_from(align).unwrap_or(u32::MAX);
    match state::with(|rt| c_heap::take(rt, bytes as u64, align32, new)) {
        // SAFETY: the model's offsets are inside the heap's bytes.
        Take::At(at) => unsafe { arena().add(at as usize) }.cast(),
        Take::NoRoom => null_mut(),
        Take::Outside if align <= 16 => {
            // SAFETY: plain malloc; a 0-byte request gets the C library's unique pointer.
            unsafe { libc::malloc(bytes) }
        }
        Take::Outside => {
            let mut p = null_mut();
            // SAFETY: `p` is writable; a failure leaves it null.
            unsafe { libc::posix_memalign(&mut p, align, bytes) };
            p
        }
    }
}

/// `malloc(bytes)`.
#[no_mangle]
pub extern "C" fn nt_customop_heap_malloc(bytes: usize) -> *mut c_void {
    take(bytes, 0, false)
}

/// `operator new(bytes)`: where the device's heap has no room, the core has stopped.
#[no_mangle]
pub extern "C" fn nt_customop_heap_new(bytes: usize) -> *mut c_void {
    take(bytes, 0, true)
}

/// `calloc(count, size)`: NULL where the product overflows, as the C library's.
#[no_mangle]
pub extern "C" fn nt_customop_heap_calloc(count: usize, size: usize) -> *mut c_void {
    let Some(bytes) = count.checked_mul(size) else {
        return null_mut();
    };
    let p = take(bytes, 0, false);
    if !p.is_null() {
        // SAFETY: `bytes` writable bytes at `p`.
        unsafe { p.cast::<u8>().write_bytes(0, bytes) };
    }
    p
}

/// `aligned_alloc(align, bytes)` and `memalign`: NULL for an alignment not a power of two.
#[no_mangle]
pub extern "C" fn nt_customop_heap_aligned(align: usize, bytes: usize) -> *mut c_void {
    if !align.is_power_of_two() {
        return null_mut();
    }
    take(bytes, align, false)
}

/// `posix_memalign(out, align, bytes)`: 0, `EINVAL` or `ENOMEM`, as the C library's.
///
/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_heap_posix_memalign(
    out: *mut *mut c_void,
    align: usize,
    bytes: usize,
) -> c_int {
    if !align.is_power_of_two() || !align.is_multiple_of(core::mem::size_of::<*mut c_void>()) {
        return libc::EINVAL;
    }
    let p = take(bytes, align, false);
    if p.is_null() && bytes != 0 {
        return libc::ENOMEM;
    }
    // SAFETY: the caller's contract.
    unsafe { *out = p };
    0
}

/// `free(p)` and every `operator delete`.
///
/// # Safety
/// `p` is null, a block of this heap, or the C library's.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_heap_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    match offset_of(p) {
        Some(at) => {
            state::with(|rt| c_heap::give_back(rt, at));
        }
        // SAFETY: the caller's contract: the C library's.
        None => unsafe { libc::free(p) },
    }
}

/// `realloc(p, bytes)`: a new block with the old one's bytes, the old one freed; NULL (the
/// old one kept) where the heap has no room.
///
/// # Safety
/// As [`nt_customop_heap_free`].
#[no_mangle]
pub unsafe extern "C" fn nt_customop_heap_realloc(p: *mut c_void, bytes: usize) -> *mut c_void {
    if p.is_null() {
        return take(bytes, 0, false);
    }
    let Some(at) = offset_of(p) else {
        // SAFETY: the caller's contract: the C library's.
        return unsafe { libc::realloc(p, bytes) };
    };
    if bytes == 0 {
        // SAFETY: the caller's contract.
        unsafe { nt_customop_heap_free(p) };
        return null_mut();
    }
    let old = state::with(|rt| c_heap::usable(rt, at)).unwrap_or(0) as usize;
    let q = take(bytes, 0, false);
    if !q.is_null() {
        // SAFETY: both blocks are in the arena, apart, and hold the bytes copied.
        unsafe { core::ptr::copy_nonoverlapping(p.cast::<u8>(), q.cast::<u8>(), old.min(bytes)) };
        // SAFETY: a block of this heap.
        unsafe { nt_customop_heap_free(p) };
    }
    q
}

/// `strndup(s, most)`; `strdup` is `most` = `usize::MAX`.
///
/// # Safety
/// `s` is a C string, or `most` bytes readable.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_heap_strndup(s: *const c_char, most: usize) -> *mut c_char {
    // SAFETY: the caller's contract.
    let len = unsafe { libc::strnlen(s, most) };
    let p = take(len + 1, 0, false).cast::<c_char>();
    if !p.is_null() {
        // SAFETY: `len` bytes readable at `s`, `len + 1` writable at `p`.
        unsafe {
            core::ptr::copy_nonoverlapping(s, p, len);
            *p.add(len) = 0;
        }
    }
    p
}

/// `strdup(s)`.
///
/// # Safety
/// `s` is a C string.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_heap_strdup(s: *const c_char) -> *mut c_char {
    // SAFETY: the caller's contract.
    unsafe { nt_customop_heap_strndup(s, usize::MAX) }
}
