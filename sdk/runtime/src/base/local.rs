//! Where a kernel's local buffer lives, for a TCM copy's check (docs/customop-api.md,
//! "Device parity"): the device's `tensor_to_tcm` and `tcm_to_tensor` move data by DMA to or
//! from dataram and assert that the local address is in the dataram window
//! `[0x80000, 0x90000)` (the decode's "TensorStream + TCM" and "LSP / ELF" pages). A
//! kernel's static and global data are linked into the library's image elsewhere, so a copy
//! to or from them asserts; its stack is dataram until the device moves it to an HBM stack
//! (when the core's room is less than the build's `STACK_SIZE`).
//!
//! Here the program's image is the main executable's loaded segments (its globals and
//! statics, as the kernels are linked into it); the kernel's stack is the runtime's stack
//! watch's ([`crate::base::stack::Watch::holds`]).

/// The main executable's loaded segments: (first byte, end).
fn image_segments() -> Vec<(usize, usize)> {
    segments(false)
}

/// The main executable's code: its executable segments, (first byte, end).
pub fn image_code() -> Vec<(usize, usize)> {
    segments(true)
}

/// The main executable's loaded segments, or only its executable ones.
fn segments(code: bool) -> Vec<(usize, usize)> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid entry; `data` is the Vec below.
        let (info, (code, found)) =
            unsafe { (&*info, &mut *data.cast::<(bool, Vec<(usize, usize)>)>()) };
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        let code = *code;
        let wanted = headers
            .iter()
            .filter(|h| h.p_type == libc::PT_LOAD && (!code || h.p_flags & libc::PF_X != 0));
        for h in wanted {
            let start = info.dlpi_addr as usize + h.p_vaddr as usize;
            found.push((start, start + h.p_memsz as usize));
        }
        1 // the first object is the main executable: stop there
    }
    let mut found: (bool, Vec<(usize, usize)>) = (code, Vec::new());
    // SAFETY: the callback only reads the entries it is given and writes `found`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut found).cast()) };
    found.1
}

/// Whether the `bytes` at `p` overlap the program's image (static or global data, or code).
pub fn in_image(p: usize, bytes: usize) -> bool {
    let end = p.saturating_add(bytes.max(1));
    image_segments()
        .into_iter()
        .any(|(lo, hi)| p < hi && end > lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statics_are_the_image_and_the_stack_and_the_heap_are_not() {
        // A literal is the program's constant data, as a kernel's static array is.
        let table: &'static [u8] = b"0123456789abcdef";
        assert!(in_image(
            std::hint::black_box(table).as_ptr() as usize,
            table.len()
        ));
        let local = [0u8; 32];
        assert!(!in_image(
            std::hint::black_box(&local).as_ptr() as usize,
            32
        ));
        let heap = Box::new([0u8; 32]);
        assert!(!in_image(heap.as_ptr() as usize, 32));
    }
}
