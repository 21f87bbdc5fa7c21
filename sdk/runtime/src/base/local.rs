//! Where a kernel's local buffer lives, for a TCM copy's check (docs/customop-api.md,
//! "Device parity"): the device's `tensor_to_tcm` and `tcm_to_tensor` move data by DMA to or
//! from dataram and assert that the local address is in the dataram window
//! `[0x80000, 0x90000)` (the decode's "TensorStream + TCM" and "LSP / ELF" pages). A
//! kernel's static and global data are linked into the library's image elsewhere, so a copy
//! to or from them asserts; its stack is dataram until the device moves it to an HBM stack
//! (when the core's room is less than the build's `STACK_SIZE`).
//!
//! Here the program's image is the main executable's loaded segments (its globals and
//! statics, as the kernels are linked into it) and the stack is the calling thread's.

/// What a local address is to the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Local {
    /// In the main executable's loaded segments: static or global data (or code).
    Image,
    /// On the calling thread's stack.
    Stack,
    /// Anything else (the heap, the TCM pool, a mapping).
    Other,
}

/// The main executable's loaded segments: (first byte, end).
fn image_segments() -> Vec<(usize, usize)> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid entry; `data` is the Vec below.
        let (info, found) = unsafe { (&*info, &mut *data.cast::<Vec<(usize, usize)>>()) };
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        for h in headers.iter().filter(|h| h.p_type == libc::PT_LOAD) {
            let start = info.dlpi_addr as usize + h.p_vaddr as usize;
            found.push((start, start + h.p_memsz as usize));
        }
        1 // the first object is the main executable: stop there
    }
    let mut found: Vec<(usize, usize)> = Vec::new();
    // SAFETY: the callback only reads the entries it is given and writes `found`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut found as *mut Vec<(usize, usize)>).cast()) };
    found
}

/// The calling thread's stack: (lowest byte, end), if the system says.
fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: attr is initialised by pthread_getattr_np before use and destroyed after.
    unsafe {
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let (mut low, mut size) = (core::ptr::null_mut(), 0usize);
        let ok = libc::pthread_attr_getstack(&attr, &mut low, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        ok.then(|| (low as usize, low as usize + size))
    }
}

/// What the `bytes` at `p` are to the program.
pub fn of(p: usize, bytes: usize) -> Local {
    let end = p.saturating_add(bytes.max(1));
    let within = |(lo, hi): (usize, usize)| p < hi && end > lo;
    if image_segments().into_iter().any(within) {
        Local::Image
    } else if stack_bounds().is_some_and(within) {
        Local::Stack
    } else {
        Local::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statics_the_stack_and_the_heap_are_told_apart() {
        // A literal is the program's constant data, as a kernel's static array is.
        let table: &'static [u8] = b"0123456789abcdef";
        assert_eq!(
            of(std::hint::black_box(table).as_ptr() as usize, table.len()),
            Local::Image
        );
        let local = [0u8; 32];
        assert_eq!(
            of(std::hint::black_box(&local).as_ptr() as usize, 32),
            Local::Stack
        );
        let heap = Box::new([0u8; 32]);
        assert_eq!(of(heap.as_ptr() as usize, 32), Local::Other);
    }
}
