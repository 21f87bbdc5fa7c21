//! Tensors: storage in the host model's HBM, by handle, with reference counts (a C++
//! `Tensor` copy shares the storage, as in ATen). The model starts on first use, with HBM
//! laid out for the runner: the host's share first, then one share per core, so that cores
//! (processes over the same HBM) never allocate the same bytes.

use neuron_translate::model::{Config, Machine};

use crate::base::cabi::Policy;
use crate::base::dtype::{DType, Num};
use crate::base::misuse::Kind;
use crate::base::npy;
use crate::percore::error::CoreError;
use crate::percore::state::{Arena, Entry, Meta, Open, Phase, Runtime, MAX_DIMS};

/// First SoC address of the simulated HBM.
pub const HBM_BASE: u64 = neuron_translate::model::defaults::HBM_BASE;
/// The host's share (inputs, the output, shape functions' tensors).
pub const HOST_SHARE: u64 = 16 << 30;
/// Each core's share (tensors a kernel creates).
pub const CORE_SHARE: u64 = 5 << 30;
pub use crate::base::limits::MAX_CORES;

/// Byte the output is filled with before the kernel writes it (floats read NaN, integers -1).
pub const POISON: u8 = 0xFF;
/// The whole HBM region: the shares and the pinned scratch window's 64 MiB at the top
/// (below 64 GiB, where the default engine base puts SBUF).
pub const HBM_SIZE: u64 = HOST_SHARE + CORE_SHARE * MAX_CORES as u64 + (64 << 20);

extern "C" {
    /// `extended_isa::sdk::hbm_scratch`, which the translation library imports: defined
    /// weak in src/hbm_scratch.c (a program may define it itself).
    #[link_name = neuron_translate::sym!(hbm_scratch)]
    static mut HBM_SCRATCH: u64;
}

/// Starts the model (once per process tree) and builds the translation context.
pub fn ensure_machine(rt: &mut Runtime) {
    if rt.machine.is_some() {
        return;
    }
    let scratch = HBM_BASE + HBM_SIZE - (64 << 20);
    // SAFETY: written once per process, before the library reads it in
    // _init_translate_ctx; nothing else writes it.
    unsafe { core::ptr::addr_of_mut!(HBM_SCRATCH).write(scratch) };
    // (Every field named, no `..Config::default()`: cargo-mutants 27.1 lists the field
    // deletions of such an expression whatever examine_re says, and this function is
    // outside the checks `make mutants` examines.)
    let d = Config::default();
    let config = Config {
        engine_base: d.engine_base,
        hbm_base: HBM_BASE,
        hbm_size: HBM_SIZE,
        hbm_scratch: scratch,
        keep: d.keep,
    };
    match Machine::start(config) {
        Ok(m) => rt.machine = Some(m),
        Err(e) => {
            eprintln!("neuron_customop_host: cannot start the host model: {e}");
            std::process::exit(crate::base::codes::ExitStatus::Refused.code())
        }
    }
    neuron_translate::abi::_init_translate_ctx();
    rt.arena = Arena::new(HBM_BASE, HOST_SHARE);
}

/// Moves this process onto core `core`'s share of HBM (a forked core, before its kernel).
pub fn use_core_share(rt: &mut Runtime, core: u32) {
    rt.arena = Arena::new(
        HBM_BASE + HOST_SHARE + CORE_SHARE * u64::from(core),
        CORE_SHARE,
    );
}

/// On the emulated Q7 (`--device`) the program maps HBM through qemu, whose file offsets
/// end at 4 GiB: the host's share is the first 2 GiB of HBM, each core's 256 MiB after it.
pub const DEVICE_HOST_SHARE: u64 = 2 << 30;
/// Each core's share of HBM on the emulated Q7.
pub const DEVICE_CORE_SHARE: u64 = 256 << 20;

/// This (the runner's) process allocates from the device's host share.
pub fn use_device_host_share(rt: &mut Runtime) {
    rt.arena = Arena::new(HBM_BASE, DEVICE_HOST_SHARE);
}

/// Moves this process onto core `core`'s share of HBM on the emulated Q7.
pub fn use_device_core_share(rt: &mut Runtime, core: u32) {
    rt.arena = Arena::new(
        HBM_BASE + DEVICE_HOST_SHARE + DEVICE_CORE_SHARE * u64::from(core),
        DEVICE_CORE_SHARE,
    );
}

/// Elements of a shape; `None` if a size is negative or the count overflows.
pub fn numel(sizes: &[i64]) -> Option<u64> {
    sizes.iter().try_fold(1u64, |n, s| {
        u64::try_from(*s).ok().and_then(|s| n.checked_mul(s))
    })
}

/// A new tensor of `sizes` and `dtype`, its elements left as HBM has them (fresh HBM reads
/// as zeros); a data-less one has no storage (a shape function's input). Refcount 1.
pub fn create(rt: &mut Runtime, dtype: DType, sizes: &[i64], data_less: bool) -> u32 {
    ensure_machine(rt);
    let n = numel(sizes).filter(|_| sizes.len() <= MAX_DIMS);
    let Some(n) = n else {
        let detail = format!(
            "cannot make a tensor of sizes {sizes:?} (at most {MAX_DIMS} non-negative sizes)"
        );
        rt.misuse(Kind::OpFailed, None, None, detail);
        return 0;
    };
    let bytes = n.saturating_mul(dtype.size() as u64);
    // A kernel's tensor takes its block in the device's heap first: there it fails first.
    let block = if data_less {
        None
    } else {
        crate::percore::heap::take(rt, bytes)
    };
    let addr = if data_less {
        Some(0)
    } else {
        rt.arena.alloc(bytes)
    };
    let Some(addr) = addr else {
        if let Some(b) = block {
            crate::percore::heap::give_back(rt, b);
        }
        rt.misuse(
            Kind::OpFailed,
            None,
            None,
            format!("no room for {bytes} bytes of HBM"),
        );
        return 0;
    };
    let h = insert(rt, dtype, sizes, (!data_less).then_some((addr, bytes)));
    rt.entry(h).heap = block;
    h
}

/// Whether the HBM left has room for a tensor of `sizes` elements of `dtype`: the reason
/// (its bytes, the room) when it has not. A caller that cannot stop the process on a
/// misuse (the server, the runner before the kernels) asks before [`create`].
pub fn room_for(rt: &mut Runtime, dtype: DType, sizes: &[i64]) -> Result<(), CoreError> {
    ensure_machine(rt);
    let bytes = numel(sizes).and_then(|n| n.checked_mul(dtype.size() as u64));
    let room = rt.arena.largest_free();
    if bytes.is_some_and(|b| b <= room) {
        return Ok(());
    }
    Err(CoreError::HbmFull {
        sizes: sizes.to_vec(),
        dtype: dtype.name(),
        bytes,
        room,
        share: HOST_SHARE,
    })
}

/// The first tensor of int64 elements a kernel makes or is given on core 0 is a warning:
/// the vendor's current guide dropped `torch::kLong`. Still run, as the device once did.
fn warn_int64(rt: &mut Runtime, dtype: DType) {
    // Every tensor made passes here: the cheap tests first, the reports scanned last.
    if dtype != DType::Long
        || rt.job.core != 0
        || rt.job.phase != crate::percore::state::Phase::Kernel
    {
        return;
    }
    if rt.job.reports.iter().any(|r| r.kind == Kind::Int64Tensor) {
        return;
    }
    let detail = "a tensor of int64 elements (torch::kLong): the vendor's current guide dropped it, as the device is \
                  unable to support 64-bit custom ops; it runs here as before"
        .to_string();
    rt.misuse(Kind::Int64Tensor, None, None, detail);
}

/// A tensor entry for `numel(sizes)` elements with `storage` (its HBM address and bytes;
/// `None`: data-less), under the first free handle. The caller checked the sizes.
pub fn insert(rt: &mut Runtime, dtype: DType, sizes: &[i64], storage: Option<(u64, u64)>) -> u32 {
    warn_int64(rt, dtype);
    let (addr, bytes) = storage.unwrap_or_default();
    let mut meta = Meta {
        hbm_addr: addr,
        numel: numel(sizes).unwrap_or_default(),
        ndim: sizes.len() as u32,
        dtype: dtype as i32,
        data_less: u32::from(storage.is_none()),
        ..Meta::default()
    };
    let mut stride = 1i64;
    for d in (0..sizes.len()).rev() {
        meta.sizes[d] = sizes[d];
        meta.strides[d] = stride;
        stride = stride.wrapping_mul(sizes[d]);
    }
    let k = rt
        .tensors
        .iter()
        .position(Option::is_none)
        .unwrap_or(rt.tensors.len());
    if k == rt.tensors.len() {
        rt.tensors.push(None);
    }
    meta.handle = k as u32 + 1;
    rt.tensors[k] = Some(Entry {
        meta: Box::new(meta),
        dtype,
        refs: 1,
        label: format!("tensor {}", k + 1),
        source: None,
        policy: Policy::Coherent,
        open: Open::default(),
        bytes,
        owned: true,
        written: Vec::new(),
        heap: None,
    });
    meta.handle
}

/// A tensor over HBM another process allocated (`hbm_addr`, 0 for a data-less one): a
/// kernel's input or output on a worker, which the worker never frees. Refcount 1.
pub fn adopt(rt: &mut Runtime, dtype: DType, sizes: &[i64], hbm_addr: u64, label: &str) -> u32 {
    let h = create(rt, dtype, sizes, true);
    if h == 0 {
        return 0;
    }
    let e = rt.entry(h);
    e.label = label.into();
    e.owned = false;
    if hbm_addr != 0 {
        e.meta.hbm_addr = hbm_addr;
        e.meta.data_less = 0;
        e.bytes = e.meta.numel * dtype.size() as u64;
    }
    h
}

/// One more holder of `h`.
pub fn retain(rt: &mut Runtime, h: u32) {
    rt.entry(h).refs += 1;
}

/// One reference fewer, let go by a kernel's `torch::Tensor`: the last one while accessors
/// are open on the tensor is a `tensor-not-live` error, as they outlive it (an accessor of a
/// temporary tensor); the core stops there.
pub fn release_from_kernel(rt: &mut Runtime, h: u32) {
    let e = rt.entry(h);
    let open = e.open.standard + e.open.read_streams + e.open.write_streams;
    if e.refs == 1 && open > 0 {
        let label = e.label.clone();
        let detail = format!(
            "the last torch::Tensor holding it was destroyed while {open} accessor(s) of it were \
             open, which then read or write memory the tensor no longer owns: the variable given \
             another tensor, say; keep the tensor while its accessors are used"
        );
        rt.tensor_not_live(Some(label), detail)
    }
    release(rt, h)
}

/// One fewer; the last frees the storage.
pub fn release(rt: &mut Runtime, h: u32) {
    let e = rt.entry(h);
    e.refs -= 1;
    if e.refs == 0 {
        let (addr, bytes, block) = (e.meta.hbm_addr, e.bytes, e.heap);
        if bytes > 0 && e.owned {
            rt.arena.free(addr, bytes);
        }
        if let Some(b) = block {
            crate::percore::heap::give_back(rt, b);
        }
        rt.tensors[h as usize - 1] = None;
    }
}

/// The bytes of tensor `h` (read from SoC memory, not through a window).
pub fn read_all(rt: &mut Runtime, h: u32) -> Vec<u8> {
    let (addr, bytes, data_less) = {
        let e = rt.entry(h);
        (e.meta.hbm_addr, e.bytes, e.meta.data_less != 0)
    };
    let numel = rt.entry(h).meta.numel;
    note(rt, h, 0, numel, false, "an operation");
    if data_less && rt.job.phase == Phase::Shape {
        rt.misuse(
            Kind::ShapeDataRead,
            Some(h),
            None,
            "an operation read a shape-only input".into(),
        );
    }
    let mut buf = vec![0u8; whole(rt, h, bytes)];
    if bytes > 0 {
        let m = rt
            .machine
            .as_ref()
            .expect("the model runs while a tensor lives");
        m.read(addr, &mut buf).expect("a tensor's bytes are in HBM");
    }
    buf
}

/// `bytes` of tensor `h` as a length in this process's memory. The host run is a 32-bit
/// process, as the device is (docs/customop-api.md, "Device parity"): a tensor past what
/// it can address cannot be held whole, and is refused by name rather than cut short.
fn whole(rt: &mut Runtime, h: u32, bytes: u64) -> usize {
    if let Ok(n) = usize::try_from(bytes) {
        return n;
    }
    let detail = format!(
        "a tensor of {bytes} bytes is more than the host run's 32-bit process can hold whole"
    );
    rt.misuse(Kind::OpFailed, Some(h), None, detail);
    unreachable!("an error ends the call")
}

/// Writes all bytes of tensor `h`.
pub fn write_all(rt: &mut Runtime, h: u32, data: &[u8]) {
    untrack(rt, h);
    let (addr, bytes) = {
        let e = rt.entry(h);
        (e.meta.hbm_addr, e.bytes)
    };
    assert_eq!(bytes, data.len() as u64, "a tensor's bytes replaced whole");
    if bytes > 0 {
        let m = rt
            .machine
            .as_ref()
            .expect("the model runs while a tensor lives");
        m.write(addr, data).expect("a tensor's bytes are in HBM");
    }
}

/// A new tensor holding `a` (one reference).
pub fn from_array(rt: &mut Runtime, a: &npy::Array) -> u32 {
    let sizes: Vec<i64> = a.shape.iter().map(|d| *d as i64).collect();
    let h = create(rt, a.dtype, &sizes, false);
    write_all(rt, h, &a.data);
    h
}

/// Tensor `h` as an array (its bytes read from SoC memory).
pub fn to_array(rt: &mut Runtime, h: u32) -> npy::Array {
    let data = read_all(rt, h);
    let e = rt.entry(h);
    let shape = e.meta.sizes[..e.meta.ndim as usize]
        .iter()
        .map(|s| *s as u64)
        .collect();
    npy::Array {
        dtype: e.dtype,
        shape,
        data,
    }
}

/// Sets every element of `h` to `v` (converted to its type).
pub fn fill(rt: &mut Runtime, h: u32, v: Num) {
    let dtype = rt.entry(h).dtype;
    let mut one = vec![0u8; dtype.size()];
    dtype.store(&mut one, 0, v);
    fill_bytes(rt, h, &one);
}

/// Fills `h`'s bytes with `pattern` repeated (its length divides the tensor's bytes),
/// written a megabyte at a time: no buffer the size of the tensor.
pub fn fill_bytes(rt: &mut Runtime, h: u32, pattern: &[u8]) {
    untrack(rt, h);
    let (addr, bytes) = {
        let e = rt.entry(h);
        (e.meta.hbm_addr, e.bytes)
    };
    // At most a megabyte: a length on any target.
    let chunk_len = (bytes.min(1 << 20) as usize).div_ceil(pattern.len()) * pattern.len();
    let chunk: Vec<u8> = pattern.iter().copied().cycle().take(chunk_len).collect();
    let m = rt
        .machine
        .as_ref()
        .expect("the model runs while a tensor lives");
    let mut at = 0;
    while at < bytes {
        let n = chunk
            .len()
            .min(usize::try_from(bytes - at).unwrap_or(usize::MAX));
        m.write(addr + at, &chunk[..n])
            .expect("a tensor's bytes are in HBM");
        at += n as u64;
    }
}

/// The 2-D identity: ones where row == column.
pub fn eye(rt: &mut Runtime, h: u32) {
    let (dtype, rows, cols, bytes) = {
        let e = rt.entry(h);
        (
            e.dtype,
            e.meta.sizes[0] as usize,
            e.meta.sizes[1] as usize,
            e.bytes,
        )
    };
    if bytes == 0 {
        return;
    }
    let mut data = vec![0u8; whole(rt, h, bytes)];
    let one = if dtype.is_integral() {
        Num::Int(1)
    } else {
        Num::Float(1.0)
    };
    for i in 0..rows.min(cols) {
        dtype.store(&mut data, i * cols + i, one);
    }
    write_all(rt, h, &data);
}

/// Tensor `h`'s coherence policy, set first to `set` if given.
pub fn policy(rt: &mut Runtime, h: u32, set: Option<Policy>) -> Policy {
    if let Some(p) = set {
        rt.entry(h).policy = p;
    }
    rt.entry(h).policy
}

/// `get_dst_tensor()`: the op's output (one more reference), or 0 after a reported misuse
/// outside a kernel the runner runs.
pub fn dst_tensor(rt: &mut Runtime) -> u32 {
    match (rt.job.phase, rt.job.dst) {
        (Phase::Kernel, Some(h)) => {
            rt.job.dst_called = true;
            if rt.job.dst_at.is_none() {
                rt.job.dst_at = Some(rt.here());
            }
            if std::mem::take(&mut rt.job.dst_poison) {
                fill_bytes(rt, h, &[POISON]);
            }
            retain(rt, h);
            h
        }
        _ => {
            let detail = "get_dst_tensor() outside a kernel the runner runs".into();
            rt.misuse(Kind::OpFailed, None, None, detail);
            0
        }
    }
}

/// Starts tracking which elements of `h` are written (none yet): a tensor made without
/// values on one core.
pub fn track(rt: &mut Runtime, h: u32) {
    let e = rt.entry(h);
    if e.bytes > 0 {
        e.meta.track = 1;
        e.written.clear();
    }
}

/// Stops tracking `h`: all of it is written, or the runtime can no longer see its writes
/// (a standard accessor or an element-by-element stream on it).
pub fn untrack(rt: &mut Runtime, h: u32) {
    let e = rt.entry(h);
    e.meta.track = 0;
    e.written = Vec::new();
}

/// A copy of elements `[first, first + count)` of tracked tensor `h`: a write records
/// them; a read of any that nothing wrote stops the core with `uninitialized-read`.
pub fn note(rt: &mut Runtime, h: u32, first: u64, count: u64, write: bool, what: &str) {
    let e = rt.entry(h);
    if e.meta.track == 0 || count == 0 {
        return;
    }
    let end = first.saturating_add(count).min(e.meta.numel);
    if write {
        let w = &mut e.written;
        let k = w.partition_point(|r| r.1 < first);
        let mut range = (first, end);
        while k < w.len() && w[k].0 <= range.1 {
            let r = w.remove(k);
            range = (range.0.min(r.0), range.1.max(r.1));
        }
        w.insert(k, range);
        if w.len() == 1 && w[0] == (0, e.meta.numel) {
            untrack(rt, h);
        }
        return;
    }
    // The written ranges are sorted and apart: walk them while they cover from `first`;
    // the first one that starts beyond ends the gap.
    let mut at = first;
    let mut next = None;
    for r in &e.written {
        if r.0 > at {
            next = Some(r.0);
            break;
        }
        at = at.max(r.1);
    }
    if at < end {
        let gap_end = next.map_or(end, |s| s.min(end));
        let d = format!("{what} read elements {at}..{gap_end}, which nothing wrote");
        rt.misuse(
            Kind::UninitializedRead,
            Some(h),
            Some(format!("{at}..{gap_end}")),
            d,
        );
    }
}
