//! The device's C heap: where a kernel's `malloc`, `calloc`, `realloc` and `operator new`
//! take their bytes on the device. Once set up, the library's runtime gives the C library's
//! allocations to its libc heap: an xmem heap of 10 KiB in dataram, set up again before
//! each call (`_init_libc_heap_allocator`; docs/customop-api.md, "Device parity"). The model
//! ([`crate::base::xmem`] over [`C_HEAP_BYTES`], with the 32 descriptors of the library's
//! other two heaps: the decode does not give this one's) says whether and where each
//! allocation goes, on the host run and on the emulated Q7 alike. Where the device's heap has
//! no room, `malloc` returns NULL here too (`malloc-null`, a warning once a call) and
//! `operator new` stops the core (`c-heap-exhausted`: the device throws `std::bad_alloc`).
//!
//! The bytes are an arena of the heap's size in each core's process (the host run's,
//! `crate::edges::ffi_heap`) or in the device program (sdk/device/support.c), a block at
//! the model's offset in it: a pointer kept past a call points where the device's would.

use crate::base::codes::{C_HEAP_ALIGN, C_HEAP_BYTES};
use crate::base::misuse::Kind;
use crate::percore::state::{Phase, Runtime};

/// Where an allocation goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// In the C heap, at this offset.
    At(u32),
    /// Not modelled: outside a kernel (a static constructor, say), where the C library's
    /// own heap gives it.
    Outside,
    /// The device's heap has no room (reported).
    NoRoom,
}

/// Where a kernel's allocation of `bytes` aligned to `align` (0: the heap's) starts in this
/// call's C heap. Where the device's has no room: for `operator new` (`new`) the core stops
/// at the author's line, else a `malloc-null` warning once a call and [`Take::NoRoom`].
pub fn take(rt: &mut Runtime, bytes: u64, align: u32, new: bool) -> Take {
    if rt.job.phase != Phase::Kernel {
        return Take::Outside;
    }
    // xmem refuses 0 bytes; what the library's malloc asks it for then is not in the
    // decode: here a block of one byte, a pointer of its own as the C library gives.
    let bytes = bytes.max(1);
    let align = align.max(C_HEAP_ALIGN as u32);
    let taken = u32::try_from(bytes)
        .ok()
        .and_then(|size| rt.job.c_heap.alloc(size, align));
    if let Some(at) = taken {
        return Take::At(at);
    }
    let (live, held) = (rt.job.c_heap.taken_count(), rt.job.c_heap.taken_bytes());
    let what = if new { "operator new" } else { "malloc" };
    let detail = format!(
        "{what} of {bytes} bytes found no room in the device's C heap ({C_HEAP_BYTES} bytes, set \
         up again before each call; {live} blocks of {held} bytes live){}: keep large buffers in \
         a tensor (torch::empty) or in TCM (tcm_malloc)",
        if new {
            ", where the device throws std::bad_alloc"
        } else {
            ", so it returned NULL, as the device's does"
        }
    );
    if new {
        rt.misuse_here(Kind::CHeapExhausted, None, None, detail);
    } else if !rt.job.c_heap_null_said {
        rt.job.c_heap_null_said = true;
        rt.misuse_here(Kind::MallocNull, None, None, detail);
    }
    Take::NoRoom
}

/// Gives the block at `at` back to this call's heap; false where no live block starts
/// there (a pointer freed twice, or kept from an earlier call: the device's xmem refuses it
/// too, `XMEM_ERR_PTR_OUT_OF_BOUNDS`).
pub fn give_back(rt: &mut Runtime, at: u32) -> bool {
    rt.job.c_heap.free(at)
}

/// The bytes a caller may use in the live block at `at` (what `realloc` copies).
pub fn usable(rt: &Runtime, at: u32) -> Option<u32> {
    rt.job.c_heap.usable(at)
}
