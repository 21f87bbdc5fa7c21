//! The checks behind the accessors, the TCM copies and the TCM pool, which the C ABI's
//! `nt_customop_open` and the rest forward to: which accessors may be open together on a
//! tensor (the coherence rules and the tensor's policy), element types and dimension
//! counts, ranges, one core or several, and what each costs in TCM.

use core::ffi::{c_int, c_void};

use crate::base::dtype::DType;
use crate::base::misuse::Kind;
use crate::percore::state::{self, Access, Runtime};

use crate::base::cabi::Policy;
pub use crate::base::cabi::{AccessorKind, Populated};

/// Bytes of a fast stream's TCM buffer.
pub const STREAM_BUFFER: usize = crate::base::codes::STREAM_BUFFER_BYTES;
/// Streams open at once with a TCM buffer.
pub const FAST_STREAMS: u32 = 4;

/// The checks every opener shares: a shape function's input has no data, and the type
/// (and, for a standard accessor, the dimension count) must be the tensor's.
fn check_open(rt: &mut Runtime, h: u32, kind: AccessorKind, dtype: c_int, ndim: c_int) {
    let (data_less, tdtype, tndim) = {
        let e = rt.entry(h);
        (e.meta.data_less != 0, e.dtype, e.meta.ndim as c_int)
    };
    if data_less {
        let d = format!(
            "a {} opened in a shape function (its inputs have no data)",
            kind.name()
        );
        rt.misuse_here(Kind::ShapeDataRead, Some(h), None, d);
    }
    let t = DType::from_code(dtype);
    if t != Some(tdtype) || (kind == AccessorKind::Standard && ndim != tndim) {
        let asked = t.map_or("an unknown type", DType::name);
        let d = if kind == AccessorKind::Standard {
            format!(
                "{} <{asked}, {ndim}> on a {tndim}-dimensional {tdtype} tensor",
                kind.name()
            )
        } else {
            format!("{} of {asked} on a {tdtype} tensor", kind.name())
        };
        rt.misuse_here(Kind::AccessorType, Some(h), None, d);
    }
    if rt.job.cores > 1 && kind != AccessorKind::Tcm {
        let d = format!(
            "a {} under {} cores: only the TCM accessor is defined there",
            kind.name(),
            rt.job.cores
        );
        rt.misuse_here(Kind::AccessorMulticore, Some(h), None, d);
    }
}

/// Whether opening `kind` keeps the coherence rules: several read streams, or one write
/// stream alone; never streams beside standard accessors.
fn coherent(open: &state::Open, kind: AccessorKind) -> bool {
    let streams = open.read_streams + open.write_streams;
    match kind {
        AccessorKind::Standard => streams == 0,
        AccessorKind::ReadStream => open.write_streams == 0 && open.standard == 0,
        AccessorKind::WriteStream => streams == 0 && open.standard == 0,
        AccessorKind::Tcm => true,
    }
}

fn open(rt: &mut Runtime, h: u32, kind: AccessorKind) -> *mut u8 {
    let (ok, policy, open) = {
        let e = rt.entry(h);
        (coherent(&e.open, kind), e.policy, e.open)
    };
    if !ok && policy != Policy::IncoherentQuiet {
        let d = format!(
            "a {} opened beside {} standard accessor(s), {} read and {} write stream(s)",
            kind.name(),
            open.standard,
            open.read_streams,
            open.write_streams
        );
        let k = if policy == Policy::Coherent {
            Kind::Incoherent
        } else {
            Kind::IncoherentAllowed
        };
        rt.misuse_here(k, Some(h), None, d);
    }
    // A standard accessor's elements are proxies that tell of each read and write (as the
    // device's are proxies): the tensor's written elements stay tracked.
    let e = rt.entry(h);
    match kind {
        AccessorKind::Standard => e.open.standard += 1,
        AccessorKind::ReadStream => e.open.read_streams += 1,
        AccessorKind::WriteStream => e.open.write_streams += 1,
        AccessorKind::Tcm => return core::ptr::null_mut(),
    }
    if kind == AccessorKind::Standard {
        rt.job.counts.standard_accessors += 1;
        return core::ptr::null_mut();
    }
    let buffer = if rt.job.fast_streams_open < FAST_STREAMS {
        rt.job.pool.alloc(STREAM_BUFFER)
    } else {
        None
    };
    match buffer {
        Some(b) => {
            rt.job.fast_streams_open += 1;
            rt.job.counts.fast_streams += 1;
            b
        }
        None => {
            crate::percore::tensors::untrack(rt, h);
            rt.job.counts.slow_streams += 1;
            let open = rt.job.fast_streams_open;
            let d = if open < FAST_STREAMS {
                format!(
                    "the TCM pool has no {STREAM_BUFFER} bytes left for a stream's buffer \
                     ({open} open streams; tcm_malloc blocks hold the rest): this one goes \
                     element by element"
                )
            } else {
                format!("{open} open streams: this one goes element by element")
            };
            rt.misuse_here(Kind::SlowStream, Some(h), None, d);
            core::ptr::null_mut()
        }
    }
}

/// Opens an accessor of `kind` with element type `dtype` (and `ndim` dimensions for a
/// standard one) on tensor `h`: a stream gets its TCM buffer (null: a slow stream).
pub fn open_checked(
    rt: &mut Runtime,
    h: u32,
    kind: AccessorKind,
    dtype: c_int,
    ndim: c_int,
) -> *mut u8 {
    check_open(rt, h, kind, dtype, ndim);
    open(rt, h, kind)
}

/// Closes what [`open_checked`] opened (a stream returns its buffer).
pub fn close(rt: &mut Runtime, h: u32, kind: AccessorKind, buffer: *mut u8) {
    let e = rt.entry(h);
    match kind {
        AccessorKind::Standard => e.open.standard -= 1,
        AccessorKind::ReadStream => e.open.read_streams -= 1,
        AccessorKind::WriteStream => e.open.write_streams -= 1,
        AccessorKind::Tcm => {}
    }
    if !buffer.is_null() && rt.job.pool.free(buffer) {
        rt.job.fast_streams_open -= 1;
    }
}

/// Reports an accessor index outside its dimension (and stops the core).
pub fn bad_index(rt: &mut Runtime, h: u32, dim: c_int, index: i64, size: i64) {
    let d = if dim < 0 {
        format!("dimension {index} of a {size}-dimensional tensor")
    } else {
        format!("index {index} in dimension {dim} of size {size}")
    };
    rt.misuse_here(Kind::IndexOutOfRange, Some(h), Some(index.to_string()), d);
}

/// Reports a stream used past its end or after `close()` (and stops the core).
pub fn bad_stream(rt: &mut Runtime, h: u32, closed: bool, write: bool, index: u64) {
    let verb = if write { "written" } else { "read" };
    let (kind, d) = if closed {
        (Kind::StreamClosed, format!("a stream {verb} after close()"))
    } else {
        let n = rt.entry(h).meta.numel;
        (
            Kind::StreamPastEnd,
            format!("a stream {verb} at element {index} of {n}"),
        )
    };
    rt.misuse_here(kind, Some(h), Some(index.to_string()), d);
}

/// Counts bytes a stream moved between its tensor and TCM.
pub fn count_tcm(rt: &mut Runtime, in_bytes: u64, out_bytes: u64) {
    rt.job.counts.tcm_in_bytes += in_bytes;
    rt.job.counts.tcm_out_bytes += out_bytes;
}

/// Checks and records a TCM copy of `count` elements of type `dtype` from element
/// `offset` (`write`: TCM to tensor): a range past the end or a foreign type stop the core.
pub fn tcm_copy(rt: &mut Runtime, h: u32, dtype: c_int, offset: u64, count: u64, write: bool) {
    check_open(rt, h, AccessorKind::Tcm, dtype, 0);
    let (n, addr, size) = {
        let e = rt.entry(h);
        (e.meta.numel, e.meta.hbm_addr, e.dtype.size() as u64)
    };
    if offset.checked_add(count).is_none_or(|end| end > n) {
        let verb = if write {
            "tcm_to_tensor"
        } else {
            "tensor_to_tcm"
        };
        let d = format!("{verb} of {count} elements from element {offset}: the tensor has {n}");
        let range = format!("{offset}..{}", offset.saturating_add(count));
        rt.misuse_here(Kind::TcmCopyPastEnd, Some(h), Some(range), d);
    }
    // A copy that continues one of the last few of its tensor and direction extends it
    // (a kernel alternating reads and writes of two tensors keeps two ranges, not one
    // per block).
    let n = rt.job.accesses.len();
    let mut recent = rt.job.accesses[n.saturating_sub(4)..].iter_mut().rev();
    match recent.find(|a| a.tensor == addr && a.write == write) {
        Some(a) if a.first + a.count == offset => a.count += count,
        _ => {
            // Its place only where checks across cores may name it.
            let at = (rt.job.cores > 1).then(|| rt.here());
            rt.job.accesses.push(Access {
                tensor: addr,
                first: offset,
                count,
                write,
                at,
            })
        }
    }
    if write {
        rt.job.counts.tcm_out_bytes += count * size;
    } else {
        rt.job.counts.tcm_in_bytes += count * size;
    }
}

/// `torch::neuron::tcm_malloc`: `bytes` from this core's 16 KiB pool, or null; `site`
/// (the call's return address, 0 if unknown) is kept until the block is freed.
pub fn tcm_malloc(rt: &mut Runtime, bytes: usize, site: u64) -> *mut c_void {
    // Under --sanitize the block is watched for reads of bytes nothing wrote (this needs
    // to tell a faulting store from a load: the x86 fault error code, i386 and x86-64).
    let watch = rt.job.sanitize && cfg!(any(target_arch = "x86_64", target_arch = "x86"));
    let Some(p) = rt.job.pool.alloc_watched(bytes, watch) else {
        return core::ptr::null_mut();
    };
    rt.job.tcm_blocks.push((p as usize, bytes, site));
    p.cast()
}

/// At a kernel's return: a `tcm-leak` warning for each `tcm_malloc` block still live, with
/// its size, its offset in the pool and the place that allocated it (`place` turns a
/// return address into words).
pub fn report_leaks(rt: &mut Runtime, place: &dyn Fn(u64) -> String) {
    for (p, _, site) in rt.job.tcm_blocks.clone() {
        if let Some(written) = rt.job.pool.slack_written(p as *const u8) {
            let at = place(site.saturating_sub(1));
            let d = format!(
                "{}, found at the kernel's return (allocated at {at})",
                slack_words(written)
            );
            rt.misuse(Kind::TcmOutOfBounds, None, None, d);
        }
    }
    let blocks = std::mem::take(&mut rt.job.tcm_blocks);
    for (p, bytes, site) in blocks {
        let offset = rt.job.pool.offset_of(p as *const u8).unwrap_or_default();
        let at = if site == 0 {
            "a place not known".into()
        } else {
            place(site - 1)
        };
        let d = format!(
            "a block of {bytes} bytes (pool offset {offset}) allocated at {at} was never freed"
        );
        rt.misuse(Kind::TcmLeak, None, None, d);
    }
}

/// Before a `tcm_to_tensor` (called from return address `site`) of the `bytes` at `p`: a
/// stretch of a watched TCM block nothing wrote is an `uninitialized-read` (and stops the
/// core).
pub fn tcm_read(rt: &mut Runtime, p: usize, bytes: usize, site: u64) {
    if let Some((at, len, block)) = rt.job.pool.unwritten(p, bytes) {
        let d = format!(
            "tcm_to_tensor of {bytes} bytes reads bytes {at}..{} of {block}, which nothing wrote",
            at + len
        );
        rt.placed(Kind::UninitializedRead, d, vec![site.saturating_sub(1)])
    }
}

/// The local side of a TCM copy, the `bytes` at `p`, called from return address `site`: in
/// the program's static or global data it stops the core at the caller's line
/// (`tcm-copy-not-dataram`, the device asserts); on the stack of a build whose
/// `STACK_SIZE` is above the device's default, a warning once a job (the device may have
/// moved the stack to HBM).
pub fn tcm_local(rt: &mut Runtime, p: usize, bytes: usize, site: u64) {
    if crate::base::local::in_image(p, bytes) {
        rt.placed(
            Kind::TcmCopyNotDataram,
            not_dataram(p, bytes),
            vec![site.saturating_sub(1)],
        )
    }
    let limit = rt.stack.limit();
    if limit <= crate::base::limits::STACK_DEFAULT
        || rt.job.reports.iter().any(|r| r.kind == Kind::TcmCopyStack)
    {
        return;
    }
    let here = 0u8;
    if rt
        .stack
        .holds(p, std::hint::black_box(&here) as *const u8 as usize)
    {
        let d = format!(
            "a TCM copy through a stack buffer, in a build with -DSTACK_SIZE={limit}: the device runs \
             a kernel on an HBM stack when its core has less room than that, and a TCM copy from or \
             to the stack there asserts (the stack is dataram only on the core); use tcm_malloc"
        );
        rt.misuse_here(Kind::TcmCopyStack, None, None, d);
    }
}

/// On the emulated Q7: `n` bytes at pool offset `offset` a TCM copy, `memcpy`, `memmove`,
/// `memset` or `neuron_memcpy` was about to touch, outside the `tcm_malloc` blocks the
/// device runtime knows: nothing if they are inside one live block of the pool (a
/// stream's or an accessor's buffer), else reported at [`Runtime::here`] (the call).
pub fn device_span(rt: &mut Runtime, offset: i64, n: usize) {
    if let Some((first, place)) = rt.job.pool.outside_blocks(offset, n) {
        let what = if n == 1 {
            "1 byte".into()
        } else {
            format!("{n} bytes")
        };
        let d = format!(
            "{what} from pool offset {offset}, to be copied or set there: byte {first} is {place}"
        );
        rt.misuse_here(Kind::TcmOutOfBounds, None, None, d);
    }
}

/// On the emulated Q7: a store of `n` bytes at `addr`, pool offset `offset`, that the
/// counting plugin's watch saw land outside every live block; reported at
/// [`Runtime::here`] (the store), and the core stops.
pub fn device_store(rt: &mut Runtime, addr: u64, offset: i64, n: usize) {
    let place = rt.job.pool.outside_blocks(offset, n).map_or_else(
        || "inside a live block by the pool's blocks now (the watch's were older)".into(),
        |(first, place)| format!("byte {first} is {place}"),
    );
    let d = format!("a {n}-byte store at {addr:#x} (pool offset {offset}): {place}");
    rt.misuse_here(Kind::TcmOutOfBounds, None, None, d);
}

/// A TCM copy's local buffer, the `bytes` at `p`, that is the program's static or global
/// data, in a report's words (`tcm-copy-not-dataram`, on the host run and the emulated Q7).
pub fn not_dataram(p: usize, bytes: usize) -> String {
    format!(
        "the TCM copy's local buffer ({p:#x}, {bytes} bytes) is the program's static or global data: \
         the device moves TCM copies by DMA to and from dataram, [0x80000, 0x90000), and asserts \
         on any other address; use tcm_malloc (or a local array)"
    )
}

/// `torch::neuron::tcm_free` of a non-null pointer: one the pool did not give is reported
/// (and stops the core).
pub fn tcm_free(rt: &mut Runtime, p: *mut c_void) {
    if let Some(written) = rt.job.pool.slack_written(p.cast()) {
        let d = format!("{}, found when it was freed", slack_words(written));
        rt.placed(Kind::TcmOutOfBounds, d, crate::base::stack::callers());
    }
    rt.job.tcm_blocks.retain(|b| b.0 != p as usize);
    if !rt.job.pool.free(p.cast()) {
        let d = format!("tcm_free({p:p}): not a live block of this core's TCM pool");
        rt.misuse_here(Kind::TcmFreeForeign, None, None, d);
    }
}

/// A store into a block's slack ([`crate::base::tcm::Pool::slack_written`]), in words.
fn slack_words((first, end, block): (usize, usize, String)) -> String {
    format!(
        "a store past the end of {block}: bytes {first}..{end} of its 64-byte granule (the \
         device's block holds them, so nothing faults there) were written"
    )
}

/// The NX window holding local address `p`: its range.
fn window_of(p: u64) -> Option<(u64, u64)> {
    neuron_translate::init::APERTURES
        .iter()
        .map(|a| (u64::from(a.window), u64::from(a.window) + a.size))
        .find(|(lo, hi)| (*lo..*hi).contains(&p))
}

/// Before a TCM or stream copy of the stretch at local `p` (tensor `h`'s element `first`):
/// fills the page tables of the rest of the tensor in that window at once
/// (`MADV_POPULATE_*`), instead of a page fault per page as the copies go. Once per window
/// view: a view the model moved to other SoC memory is filled again. Only a speed-up: a
/// failure changes nothing. The view filled (or found filled); none outside the windows.
pub fn prefault(rt: &mut Runtime, h: u32, first: u64, p: u64, write: bool) -> Option<Populated> {
    let (_, window_end) = window_of(p)?;
    let (addr, size, numel) = {
        let e = rt.entry(h);
        (e.meta.hbm_addr, e.dtype.size() as u64, e.meta.numel)
    };
    let soc = addr + first * size;
    let shown = |r: &&Populated| (r.lo..r.hi).contains(&p) && r.soc + (p - r.lo) == soc;
    if let Some(r) = rt.populated.iter().find(shown) {
        return Some(*r);
    }
    let page = 4096;
    let lo = p & !(page - 1);
    let hi = (p + (numel - first) * size).min(window_end).div_ceil(page) * page;
    let advice = if write {
        libc::MADV_POPULATE_WRITE
    } else {
        libc::MADV_POPULATE_READ
    };
    crate::base::filler::fill(&mut rt.filler, lo, hi, advice);
    rt.populated.retain(|r| r.hi <= lo || r.lo >= hi);
    let r = Populated {
        lo,
        hi,
        soc: soc - (p - lo),
    };
    rt.populated.push(r);
    Some(r)
}
