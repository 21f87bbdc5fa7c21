//! The device protocol's requests (sdk/device/protocol.h) and their answers: each request
//! is read once as it arrives, its code to a [`DeviceRequest`] and its payload field by field;
//! a code not listed, or a payload shorter than its fields, ends the program's run with
//! the reason, never an answer made up from missing bytes.

use crate::base::cabi::{Arg, Meta, ARG_TENSOR};
use crate::base::codes::{Undefined, MAX_DIMS};
use crate::base::misuse::Kind;
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

use crate::run::error::RunError;

/// A request's payload, read in order; reading past its end is an error.
struct Reader<'a> {
    request: DeviceRequest,
    rest: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], RunError> {
        let Some((head, rest)) = self.rest.split_first_chunk::<N>() else {
            return Err(RunError::Unanswered(format!(
                "a {:?} request whose payload ends {} bytes short (the program and the runner are from different SDKs?)",
                self.request,
                N - self.rest.len()
            )));
        };
        self.rest = rest;
        Ok(*head)
    }
    fn u32(&mut self) -> Result<u32, RunError> {
        self.take().map(u32::from_le_bytes)
    }
    /// A call's return address (u32, 0: none) as a place in the program ([`site`]).
    fn site(&mut self) -> Result<Option<u64>, RunError> {
        Ok(site(self.u32()?))
    }

    /// A check's place, the rest of the request: u32 line, u32 column, the file's name, as
    /// `file:line:column`.
    fn place(&mut self) -> Result<String, RunError> {
        let (line, column) = (self.u32()?, self.u32()?);
        let file = String::from_utf8_lossy(self.rest);
        Ok(format!("{file}:{line}:{column}"))
    }
    fn i32(&mut self) -> Result<i32, RunError> {
        self.take().map(i32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, RunError> {
        self.take().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Result<i64, RunError> {
        self.take().map(i64::from_le_bytes)
    }
    fn f64(&mut self) -> Result<f64, RunError> {
        self.take().map(f64::from_le_bytes)
    }
    /// An argument: kind, handle, integer, double (as the C ABI's `operand`).
    fn operand(&mut self, rt: &mut Runtime) -> Result<Operand, RunError> {
        let (kind, h, i, f) = (self.i32()?, self.u32()?, self.i64()?, self.f64()?);
        Ok(decode::operand(rt, kind, h, i, f))
    }
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
        .ok_or_else(|| RunError::Unanswered(format!("a request of unknown code {code}")))?;
    let mut r = Reader { request, rest: p };
    match request {
        DeviceRequest::Return => {
            let h = r.u32()?;
            ran.returned = (h != 0).then_some(h);
            ran.translations = r.u64()?;
            for k in 0..neuron_translate::layout::RECORDS {
                ran.hits[k] = r.u64()?;
            }
            for k in 0..neuron_translate::layout::RECORDS {
                ran.refills[k] = r.u64()?;
            }
            return Ok(false);
        }
        DeviceRequest::Stack => {
            let (limit, depth, at_least) = (r.u32()?, r.u64()?, r.u32()? != 0);
            stack_report(rt, limit, depth, at_least);
        }
        DeviceRequest::DivideByZero => {
            let detail = format!(
                "an integer division or remainder by zero (undefined in C++), at {}",
                r.place()?
            );
            rt.misuse(Kind::IntegerDivideByZero, None, None, detail);
        }
        DeviceRequest::Undefined => {
            let what = Undefined::from_code(r.u32()?);
            let words = what.map_or("an operation undefined in C++", |u| u.words());
            let detail = format!("{words}, at {}", r.place()?);
            rt.misuse(Kind::UndefinedArithmetic, None, None, detail);
        }
        DeviceRequest::Start => {
            return Err(RunError::Unanswered(
                "a START past start(), which answers every START".into(),
            ))
        }
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
        | DeviceRequest::Note
        | DeviceRequest::Malloc
        | DeviceRequest::Free
        | DeviceRequest::TcmSpan => access_answer(rt, &mut r, out)?,
        DeviceRequest::HbmAllocate | DeviceRequest::HbmFree | DeviceRequest::HbmCopy => {
            hbm_answer(rt, &mut r, out)?
        }
        DeviceRequest::HeapTake | DeviceRequest::HeapGive => heap_answer(rt, &mut r, out)?,
        DeviceRequest::NotDataram => {
            let (p, bytes) = (r.u32()? as usize, r.u32()? as usize);
            rt.job.device_site = r.site()?;
            let d = access::not_dataram(p, bytes);
            rt.misuse_here(Kind::TcmCopyNotDataram, None, None, d);
        }
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
            let (dtype, fill, ndim) = (r.i32()?, r.i32()?, r.u32()? as usize);
            let sizes = (0..ndim.min(MAX_DIMS))
                .map(|_| r.i64())
                .collect::<Result<Vec<i64>, _>>()?;
            let value = r.operand(rt)?;
            rt.job.device_site = r.site()?;
            let h = decode::factory(rt, dtype, &sizes, fill, value);
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Retain => tensors::retain(rt, r.u32()?),
        DeviceRequest::Release => tensors::release_from_kernel(rt, r.u32()?),
        DeviceRequest::Fill => {
            let h = r.u32()?;
            let v = r.operand(rt)?;
            ops::fill_with(rt, h, v);
        }
        DeviceRequest::Apply => {
            let (op, to) = (r.i32()?, r.u32()?);
            let operands = [r.operand(rt)?, r.operand(rt)?, r.operand(rt)?];
            rt.job.device_site = r.site()?;
            let h = decode::apply(rt, op, operands, (to != 0).then_some(to));
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Policy => {
            let (h, set) = (r.u32()?, r.i32()?);
            out.extend(decode::set_policy(rt, h, set).to_le_bytes());
        }
        DeviceRequest::Dst => {
            rt.job.device_site = r.site()?;
            let h = tensors::dst_tensor(rt);
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Print => out.extend(crate::run::device::print::print(r.rest).to_le_bytes()),
        other => unreachable!("{other:?} is routed to access_answer"),
    }
    Ok(())
}

/// Accessors, copies and the TCM pool.
fn access_answer(rt: &mut Runtime, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), RunError> {
    match r.request {
        DeviceRequest::Open => {
            let (h, kind, dtype, ndim) = (r.u32()?, r.i32()?, r.i32()?, r.i32()?);
            let b = decode::open(rt, h, kind, dtype, ndim);
            out.extend(offset_of(rt, b).to_le_bytes());
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Close => {
            let (h, kind, at) = (r.u32()?, r.i32()?, r.i64()?);
            let b = rt.job.pool.block_at(at).unwrap_or(core::ptr::null_mut());
            decode::close(rt, h, kind, b);
        }
        DeviceRequest::BadIndex => {
            let (h, dim, index, size) = (r.u32()?, r.i32()?, r.i64()?, r.i64()?);
            access::bad_index(rt, h, dim, index, size);
        }
        DeviceRequest::BadStream => {
            let (h, closed, write, index) = (r.u32()?, r.i32()?, r.i32()?, r.u64()?);
            access::bad_stream(rt, h, closed != 0, write != 0, index);
        }
        DeviceRequest::CountTcm => {
            let (bytes_in, bytes_out) = (r.u64()?, r.u64()?);
            access::count_tcm(rt, bytes_in, bytes_out);
        }
        DeviceRequest::TcmCopy => {
            let (h, dtype, offset, count) = (r.u32()?, r.i32()?, r.u64()?, r.u64()?);
            let write = r.i32()? != 0;
            rt.job.device_site = r.site()?;
            access::tcm_copy(rt, h, dtype, offset, count, write);
        }
        DeviceRequest::Note => {
            let (h, first, count, write) = (r.u32()?, r.u64()?, r.u64()?, r.i32()? != 0);
            tensors::note(rt, h, first, count, write, "a TCM or stream copy");
            out.extend(meta_bytes(rt, h));
        }
        DeviceRequest::Malloc => {
            let (bytes, site) = (r.u64()?, r.u32()?);
            rt.job.tcm_mallocs += 1;
            let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
            // The site is a return address with the window bits: made a code address here.
            let site = crate::run::device::symbols::code_address(u64::from(site));
            let p = access::tcm_malloc(rt, bytes, site);
            out.extend(offset_of(rt, p.cast()).to_le_bytes());
        }
        DeviceRequest::Free => {
            let (at, raw) = (r.i64()?, r.u32()?);
            let p = rt.job.pool.block_at(at).unwrap_or(raw as usize as *mut u8);
            access::tcm_free(rt, p.cast());
        }
        DeviceRequest::TcmSpan => {
            // The offset wraps below the pool (its red zone): as the device's u32 says.
            let (offset, n) = (i64::from(r.u32()? as i32), r.u32()? as usize);
            rt.job.device_site = r.site()?;
            access::device_span(rt, offset, n);
        }
        other => unreachable!("{other:?} is routed to tensor_answer"),
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
        give_back(rt, r.u32()?);
        return Ok(());
    }
    let (bytes, align, new) = (r.u64()?, r.u32()?, r.u32()? != 0);
    rt.job.device_site = r.site()?;
    let at = match take(rt, bytes, align, new) {
        Take::At(at) => i64::from(at),
        Take::NoRoom => -1,
        Take::Outside => -2,
    };
    out.extend(at.to_le_bytes());
    Ok(())
}

/// The calls on HBM beyond the guide (`crate::percore::hbm`).
fn hbm_answer(rt: &mut Runtime, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), RunError> {
    match r.request {
        DeviceRequest::HbmAllocate => {
            let (bytes, align) = (r.u32()?, r.u32()?);
            rt.job.device_site = r.site()?;
            let addr = crate::percore::hbm::allocate(rt, bytes, align);
            out.extend(addr.map_or(-1i32, |_| 0).to_le_bytes());
            out.extend(addr.unwrap_or_default().to_le_bytes());
        }
        DeviceRequest::HbmFree => {
            let addr = r.u64()?;
            rt.job.device_site = r.site()?;
            let freed = crate::percore::hbm::deallocate(rt, addr);
            out.extend(if freed { 0i32 } else { -1 }.to_le_bytes());
        }
        DeviceRequest::HbmCopy => {
            let (addr, bytes, write) = (r.u64()?, r.u64()?, r.i32()? != 0);
            rt.job.device_site = r.site()?;
            crate::percore::hbm::copy(rt, addr, bytes, None, write);
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
    out.extend(rt.job.core.to_le_bytes());
    out.extend(rt.job.cores.to_le_bytes());
    for v in [c.engine_base, c.hbm_scratch, c.hbm_base, c.hbm_size] {
        out.extend(v.to_le_bytes());
    }
    out.extend((kernel.len() as u32).to_le_bytes());
    out.extend(kernel.as_bytes());
    out.extend((call.len() as u32).to_le_bytes());
    for a in call {
        // SAFETY: a tensor argument's meta is live while the job runs.
        let h = (a.kind == ARG_TENSOR).then(|| unsafe { (*a.meta).handle });
        out.extend(a.kind.to_le_bytes());
        out.extend(h.unwrap_or(0).to_le_bytes());
        out.extend(a.i.to_le_bytes());
        out.extend(a.f.to_le_bytes());
        if let Some(h) = h {
            out.extend(meta_bytes(rt, h));
        }
    }
    out
}
