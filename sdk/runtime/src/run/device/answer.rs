//! The device protocol's requests (sdk/device/protocol.h) and their answers: each request
//! is read once as it arrives, its code to a [`DeviceRequest`] and its payload field by field;
//! a code not listed, or a payload shorter than its fields, ends the program's run with
//! the reason, never an answer made up from missing bytes.

use crate::base::cabi::{Arg, Meta, ARG_TENSOR};
use crate::base::codes::{Undefined, MAX_DIMS};
use crate::base::misuse::Kind;
use crate::base::wire::{self, Payload, Wire};
use crate::percore::ops::{self, Operand};
use crate::percore::state::Runtime;
use crate::percore::{access, decode, tensors};
use crate::run::device::count::DeviceCounts;

pub use crate::base::codes::DeviceRequest;

/// What the program's run left: the tensor it returned (a reference for the runtime), the
/// translate calls it counted by window, and what it executed.
#[derive(Debug, Default)]
pub struct ProgramRun {
    /// The returned tensor's handle.
    pub returned: Option<u32>,
    /// Translate calls, hits and refills by window.
    pub translations: u64,
    pub hits: [u64; neuron_translate::layout::RECORDS],
    pub refills: [u64; neuron_translate::layout::RECORDS],
    /// Instructions.
    pub counts: DeviceCounts,
    /// Why it ended without returning (its exit or signal), if it did.
    pub ended: Option<String>,
    /// `--profile`: where the counted instructions went, or why that is not known.
    pub profile: Option<Result<crate::run::device::profile::Profile, crate::run::error::RunError>>,
    /// Whether the counting plugin watched the TCM pool's stores
    /// ([`crate::run::device::watch`]).
    pub watched: bool,
    /// The store the watch saw outside every live block, which ended the program.
    pub stray_store: Option<crate::run::device::watch::StrayStore>,
}

use crate::run::error::{RunError, Unanswered};

/// A request's payload: its struct as [`wire::EXCHANGES`] names it, then its tail.
struct Reader<'a> {
    request: DeviceRequest,
    rest: &'a [u8],
}

impl Reader<'_> {
    /// The request's struct: the one its exchange names (another is the runner's own bug),
    /// all its bytes there, and nothing after them where the exchange says no tail follows.
    fn ask<P: Payload>(&mut self) -> Result<P, RunError> {
        let x = wire::exchange(self.request);
        if x.ask.map(|l| l.c_name) != Some(P::LAYOUT.c_name) {
            return Err(RunError::Unanswered(Unanswered::OtherStruct {
                request: self.request,
                read: P::LAYOUT.c_name.into(),
            }));
        }
        let short = P::BYTES.saturating_sub(self.rest.len());
        let p = P::take(&mut self.rest).ok_or(RunError::Unanswered(Unanswered::Short {
            request: self.request,
            bytes: short,
        }))?;
        if x.ask_tail.is_empty() && !self.rest.is_empty() {
            return Err(RunError::Unanswered(Unanswered::Long {
                request: self.request,
                bytes: self.rest.len(),
            }));
        }
        Ok(p)
    }
}

/// Appends `request`'s answer struct `p` to `out`: the one its exchange names.
fn give<P: Payload>(request: DeviceRequest, p: &P, out: &mut Vec<u8>) {
    let named = wire::exchange(request).answer.map(|l| l.c_name);
    assert_eq!(
        named,
        Some(P::LAYOUT.c_name),
        "{request:?}'s answer is the struct protocol.h gives it"
    );
    p.put(out);
}

/// An operand as the runtime takes it (as the C ABI's `operand`).
fn operand(rt: &mut Runtime, o: wire::Operand) -> Operand {
    decode::operand(rt, o.kind, o.handle, o.i, o.f)
}

/// A check's place: `file:line:column`, the file's name being the payload's tail.
fn place(line: u32, column: u32, file: &[u8]) -> String {
    format!("{}:{line}:{column}", String::from_utf8_lossy(file))
}

/// A meta as the program keeps it (the same layout on both sides: sdk_abi.rs).
fn meta_bytes(rt: &mut Runtime, h: u32) -> Vec<u8> {
    let m: Meta = if h == 0 {
        Meta::default()
    } else {
        *rt.entry(h).meta
    };
    // SAFETY: a plain-data #[repr(C)] struct without padding, read as bytes.
    unsafe {
        std::slice::from_raw_parts((&m as *const Meta).cast::<u8>(), size_of::<Meta>()).to_vec()
    }
}

/// A pool block's offset as the program's TCM offset (-1: none).
fn offset_of(rt: &Runtime, p: *const u8) -> i64 {
    if p.is_null() {
        return -1;
    }
    rt.job.pool.offset_of(p).map_or(-1, |o| o as i64)
}

/// The answer to request `code` with payload `p` (START's is [`start`]'s): whether the
/// program goes on (false once it returned, with what it gave in `ran`), or why the run
/// ends here. A request that names its call's place (`device_site`) names it for itself only.
pub fn answer(
    rt: &mut Runtime,
    code: u32,
    p: &[u8],
    ran: &mut ProgramRun,
    out: &mut Vec<u8>,
) -> Result<bool, RunError> {
    let went_on = answer_one(rt, code, p, ran, out);
    rt.job.device_site = None;
    went_on
}

fn answer_one(
    rt: &mut Runtime,
    code: u32,
    p: &[u8],
    ran: &mut ProgramRun,
    out: &mut Vec<u8>,
) -> Result<bool, RunError> {
    let request = DeviceRequest::from_code(code)
        .ok_or(RunError::Unanswered(Unanswered::UnknownCode(code)))?;
    let mut r = Reader { request, rest: p };
    match request {
        DeviceRequest::Return => {
            let q: wire::Return = r.ask()?;
            ran.returned = (q.handle != 0).then_some(q.handle);
            (ran.translations, ran.hits, ran.refills) = (q.translations, q.hits, q.refills);
            return Ok(false);
        }
        DeviceRequest::Stack => {
            let q: wire::Stack = r.ask()?;
            stack_report(rt, q.limit, q.depth, q.at_least != 0);
        }
        DeviceRequest::DivideByZero => {
            let q: wire::Place = r.ask()?;
            let at = place(q.line, q.column, r.rest);
            let detail =
                format!("an integer division or remainder by zero (undefined in C++), at {at}");
            rt.misuse(Kind::IntegerDivideByZero, None, None, detail);
        }
        DeviceRequest::Undefined => {
            let q: wire::UndefinedAt = r.ask()?;
            let words =
                Undefined::from_code(q.what).map_or("an operation undefined in C++", |u| u.words());
            let detail = format!("{words}, at {}", place(q.line, q.column, r.rest));
            rt.misuse(Kind::UndefinedArithmetic, None, None, detail);
        }
        DeviceRequest::Start => return Err(RunError::Unanswered(Unanswered::StartAgain)),
        DeviceRequest::New
        | DeviceRequest::Retain
        | DeviceRequest::Release
        | DeviceRequest::Fill
        | DeviceRequest::Apply
        | DeviceRequest::Policy
        | DeviceRequest::Dst
        | DeviceRequest::Print => tensor_answer(rt, &mut r, out)?,
        DeviceRequest::Open
        | DeviceRequest::Close
        | DeviceRequest::BadIndex
        | DeviceRequest::BadStream
        | DeviceRequest::CountTcm
        | DeviceRequest::TcmCopy
        | DeviceRequest::Note => access_answer(rt, &mut r, out)?,
        DeviceRequest::Malloc
        | DeviceRequest::Free
        | DeviceRequest::TcmSpan
        | DeviceRequest::NotDataram => pool_answer(rt, &mut r, out)?,
        DeviceRequest::HbmAllocate | DeviceRequest::HbmFree | DeviceRequest::HbmCopy => {
            hbm_answer(rt, &mut r, out)?
        }
        DeviceRequest::HeapTake | DeviceRequest::HeapGive => heap_answer(rt, &mut r, out)?,
    }
    Ok(true)
}

/// A call's return address as the device runtime sent it (0: none), as a place in the
/// program: the call instruction's address (a return address less one, its window bits
/// cleared).
fn site(ret: u32) -> Option<u64> {
    (ret != 0).then(|| crate::run::device::symbols::code_address(u64::from(ret)).saturating_sub(1))
}

/// Tensors and operations.
fn tensor_answer(rt: &mut Runtime, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), RunError> {
    match r.request {
        DeviceRequest::New => {
            let q: wire::NewTensor = r.ask()?;
            let sizes = &q.sizes[..(q.ndim as usize).min(MAX_DIMS)];
            let value = operand(rt, q.value);
            rt.job.device_site = site(q.site);
            let h = decode::factory(rt, q.dtype, sizes, q.fill, value);
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Retain => tensors::retain(rt, r.ask::<wire::Handle>()?.handle),
        DeviceRequest::Release => tensors::release_from_kernel(rt, r.ask::<wire::Handle>()?.handle),
        DeviceRequest::Fill => {
            let q: wire::Fill = r.ask()?;
            let v = operand(rt, q.value);
            ops::fill_with(rt, q.handle, v);
        }
        DeviceRequest::Apply => {
            let q: wire::Apply = r.ask()?;
            let operands = q.operands.map(|o| operand(rt, o));
            rt.job.device_site = site(q.site);
            let h = decode::apply(rt, q.op, operands, (q.out != 0).then_some(q.out));
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Policy => {
            let q: wire::Policy = r.ask()?;
            let value = decode::set_policy(rt, q.handle, q.set);
            give(r.request, &wire::Value32 { value }, out);
        }
        DeviceRequest::Dst => {
            rt.job.device_site = site(r.ask::<wire::Site>()?.site);
            let h = tensors::dst_tensor(rt);
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Print => {
            let bytes = crate::run::device::print::print(r.rest);
            give(r.request, &wire::Printed { bytes }, out);
        }
        other => unreachable!("{other:?} is routed elsewhere"),
    }
    Ok(())
}

/// Accessors and copies.
fn access_answer(rt: &mut Runtime, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), RunError> {
    match r.request {
        DeviceRequest::Open => {
            let q: wire::Open = r.ask()?;
            let b = decode::open(rt, q.handle, q.kind, q.dtype, q.ndim);
            give(
                r.request,
                &wire::TcmAt {
                    at: offset_of(rt, b),
                },
                out,
            );
            out.extend(meta_bytes(rt, q.handle));
        }
        DeviceRequest::Close => {
            let q: wire::Close = r.ask()?;
            let b = rt.job.pool.block_at(q.at).unwrap_or(core::ptr::null_mut());
            decode::close(rt, q.handle, q.kind, b);
        }
        DeviceRequest::BadIndex => {
            let q: wire::BadIndex = r.ask()?;
            access::bad_index(rt, q.handle, q.dim, q.index, q.size);
        }
        DeviceRequest::BadStream => {
            let q: wire::BadStream = r.ask()?;
            access::bad_stream(rt, q.handle, q.closed != 0, q.write != 0, q.index);
        }
        DeviceRequest::CountTcm => {
            let q: wire::CountTcm = r.ask()?;
            access::count_tcm(rt, q.bytes_in, q.bytes_out);
        }
        DeviceRequest::TcmCopy => {
            let q: wire::TcmCopy = r.ask()?;
            rt.job.device_site = site(q.site);
            access::tcm_copy(rt, q.handle, q.dtype, q.offset, q.count, q.write != 0);
        }
        DeviceRequest::Note => {
            let q: wire::Note = r.ask()?;
            let what = "a TCM or stream copy";
            tensors::note(rt, q.handle, q.first, q.count, q.write != 0, what);
            out.extend(meta_bytes(rt, q.handle));
        }
        other => unreachable!("{other:?} is routed elsewhere"),
    }
    Ok(())
}

/// The TCM pool: its blocks, and the bytes a copy touches in it.
fn pool_answer(rt: &mut Runtime, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), RunError> {
    match r.request {
        DeviceRequest::Malloc => {
            let q: wire::TcmMalloc = r.ask()?;
            rt.job.tcm_mallocs += 1;
            let bytes = usize::try_from(q.bytes).unwrap_or(usize::MAX);
            // The site is a return address with the window bits: made a code address here.
            let at = crate::run::device::symbols::code_address(u64::from(q.site));
            let p = access::tcm_malloc(rt, bytes, at);
            give(
                r.request,
                &wire::TcmAt {
                    at: offset_of(rt, p.cast()),
                },
                out,
            );
        }
        DeviceRequest::Free => {
            let q: wire::TcmFree = r.ask()?;
            let p = rt
                .job
                .pool
                .block_at(q.at)
                .unwrap_or(q.pointer as usize as *mut u8);
            access::tcm_free(rt, p.cast());
        }
        DeviceRequest::TcmSpan => {
            let q: wire::TcmSpan = r.ask()?;
            // The offset wraps below the pool (its red zone): as the device's u32 says.
            let offset = i64::from(q.offset as i32);
            rt.job.device_site = site(q.site);
            access::device_span(rt, offset, q.bytes as usize);
        }
        DeviceRequest::NotDataram => {
            let q: wire::NotDataram = r.ask()?;
            rt.job.device_site = site(q.site);
            let d = access::not_dataram(q.address as usize, q.bytes as usize);
            rt.misuse_here(Kind::TcmCopyNotDataram, None, None, d);
        }
        other => unreachable!("{other:?} is routed elsewhere"),
    }
    Ok(())
}

/// The kernel's frames past the HBM stack of its build: where the device faults whatever
/// the core's room, `stack-overflow`; where that depends on the room, `stack-may-overflow`.
/// The verdict is [`crate::base::stack::Depth`]'s alone: the device runtime's own test of
/// the depth only spares a request, and a depth within the HBM stack is not reported.
fn stack_report(rt: &mut Runtime, limit: u32, depth: u64, at_least: bool) {
    use crate::base::stack::{device_detail, Depth};
    let kind = match Depth::of(limit, depth) {
        Depth::Faults => Kind::StackOverflow,
        Depth::MayFault => Kind::StackMayOverflow,
        Depth::Fits => return,
    };
    rt.misuse(kind, None, None, device_detail(limit, depth, at_least));
}

/// The C heap's `malloc` and `free` (`crate::percore::c_heap`).
fn heap_answer(rt: &mut Runtime, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), RunError> {
    use crate::percore::c_heap::{give_back, take, Take};
    if r.request == DeviceRequest::HeapGive {
        give_back(rt, r.ask::<wire::HeapGive>()?.offset);
        return Ok(());
    }
    let q: wire::HeapTake = r.ask()?;
    rt.job.device_site = site(q.site);
    let at = match take(rt, q.bytes, q.align, q.new != 0) {
        Take::At(at) => i64::from(at),
        Take::NoRoom => -1,
        Take::Outside => -2,
    };
    give(r.request, &wire::HeapAt { at }, out);
    Ok(())
}

/// The calls on HBM beyond the guide (`crate::percore::hbm`).
fn hbm_answer(rt: &mut Runtime, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), RunError> {
    match r.request {
        DeviceRequest::HbmAllocate => {
            let q: wire::HbmAllocate = r.ask()?;
            rt.job.device_site = site(q.site);
            let addr = crate::percore::hbm::allocate(rt, q.bytes, q.align);
            let a = wire::HbmAllocated {
                status: addr.map_or(-1, |_| 0),
                address: addr.unwrap_or_default(),
            };
            give(r.request, &a, out);
        }
        DeviceRequest::HbmFree => {
            let q: wire::HbmFree = r.ask()?;
            rt.job.device_site = site(q.site);
            let freed = crate::percore::hbm::deallocate(rt, q.address);
            give(
                r.request,
                &wire::Value32 {
                    value: if freed { 0 } else { -1 },
                },
                out,
            );
        }
        DeviceRequest::HbmCopy => {
            let q: wire::HbmCopy = r.ask()?;
            rt.job.device_site = site(q.site);
            crate::percore::hbm::copy(rt, q.address, q.bytes, None, q.write != 0);
        }
        other => unreachable!("{other:?} is routed elsewhere"),
    }
    Ok(())
}

/// START's answer: the core, the model's layout, the kernel and its arguments.
pub fn start(rt: &mut Runtime, kernel: &str, call: &[Arg]) -> Vec<u8> {
    let m = rt.machine.as_ref().expect("the model runs");
    let c = m.config();
    let mut out = Vec::new();
    let head = wire::Started {
        core: rt.job.core,
        cores: rt.job.cores,
        engine_base: c.engine_base,
        hbm_scratch: c.hbm_scratch,
        hbm_base: c.hbm_base,
        hbm_bytes: c.hbm_size,
        name_bytes: kernel.len() as u32,
    };
    give(DeviceRequest::Start, &head, &mut out);
    out.extend(kernel.as_bytes());
    out.extend((call.len() as u32).to_le_bytes());
    for a in call {
        // SAFETY: a tensor argument's meta is live while the job runs.
        let h = (a.kind == ARG_TENSOR).then(|| unsafe { (*a.meta).handle });
        let o = wire::Operand {
            kind: a.kind,
            handle: h.unwrap_or(0),
            i: a.i,
            f: a.f,
        };
        o.put(&mut out);
        if let Some(h) = h {
            out.extend(meta_bytes(rt, h));
        }
    }
    out
}
