//! The runtime's state in one process (one core): the host model it started, its share of
//! HBM, the tensors by handle, the TCM pool, what the core counted and every misuse so far.
//! One value behind one lock ([`with`]); each core is a process of its own (the runner
//! forks them), so nothing here is shared between cores but the HBM the model backs.

use std::sync::{Mutex, MutexGuard};

use neuron_translate::model::Machine;
use serde::Serialize;

use crate::base::dtype::DType;
use crate::base::misuse::{At, Kind, Report, Severity};
use crate::base::tcm::Pool;

pub use crate::base::cabi::{Meta, MAX_DIMS};

/// Which accessors are open on a tensor's storage (coherence rules).
#[derive(Debug, Clone, Copy, Default)]
pub struct Open {
    /// Standard accessors.
    pub standard: u32,
    /// Read streams.
    pub read_streams: u32,
    /// Write streams.
    pub write_streams: u32,
}

/// A tensor's storage and what the runtime tracks of it.
#[derive(Debug)]
pub struct Entry {
    /// What C++ reads.
    pub meta: Box<Meta>,
    /// Element type.
    pub dtype: DType,
    /// C++ `Tensor` objects holding it.
    pub refs: u32,
    /// Its name in reports.
    pub label: String,
    /// The file it was read from (`ntx op run`'s argument), for its label.
    pub source: Option<String>,
    /// `CoherencyEnforcer::Policy`.
    pub policy: crate::base::cabi::Policy,
    /// Open accessors.
    pub open: Open,
    /// Bytes allocated in HBM.
    pub bytes: u64,
    /// Whether this process allocated them (and frees them with the last reference).
    pub owned: bool,
    /// While `meta.track` is 1: the element ranges written so far, sorted and merged.
    pub written: Vec<(u64, u64)>,
    /// A kernel's tensor of this call: where its block starts in the device's HBM heap.
    pub heap: Option<u32>,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Outside an op (the runner preparing, or an author's own program).
    Host,
    /// In a shape function.
    Shape,
    /// In a kernel, on a core.
    Kernel,
}

/// A TCM copy: which elements of which tensor a core read or wrote, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Access {
    /// The tensor's HBM address (the same on every core).
    pub tensor: u64,
    /// First element.
    pub first: u64,
    /// Elements.
    pub count: u64,
    /// A write (tcm_to_tensor) or a read (tensor_to_tcm).
    pub write: bool,
    /// Where the kernel made the copy (its first, when later ones extended it), on several
    /// cores: a finding across cores is placed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<At>,
}

/// A live `neuron_hbm_allocate` block (`crate::percore::hbm`): the address given, its
/// bytes, where it starts in the heap, and the arena's bytes behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HbmBlock {
    pub addr: u64,
    pub bytes: u64,
    pub heap_at: u32,
    pub raw: u64,
    pub raw_bytes: u64,
}

/// What a core counted that the model does not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Counts {
    /// Bytes copied from tensors to TCM (TCM accessors and stream refills).
    pub tcm_in_bytes: u64,
    /// Bytes copied from TCM to tensors.
    pub tcm_out_bytes: u64,
    /// Standard accessors opened.
    pub standard_accessors: u64,
    /// Stream accessors opened with a TCM buffer.
    pub fast_streams: u64,
    /// Stream accessors opened without one (element by element).
    pub slow_streams: u64,
}

/// HBM a process allocates from: first fit over `[start, end)`.
#[derive(Debug, Default)]
pub struct Arena {
    /// Free ranges (start, len), sorted.
    free: Vec<(u64, u64)>,
}

impl Arena {
    /// An arena over `[start, start + len)`.
    pub fn new(start: u64, len: u64) -> Arena {
        Arena {
            free: vec![(start, len)],
        }
    }

    /// `bytes` (rounded up to 64, at least 64) aligned to 64.
    pub fn alloc(&mut self, bytes: u64) -> Option<u64> {
        let size = bytes.max(1).div_ceil(64) * 64;
        let k = self.free.iter().position(|(_, len)| *len >= size)?;
        let (at, len) = self.free[k];
        if len == size {
            self.free.remove(k);
        } else {
            self.free[k] = (at + size, len - size);
        }
        Some(at)
    }

    /// The most bytes one `alloc` can give now.
    pub fn largest_free(&self) -> u64 {
        self.free.iter().map(|(_, len)| *len).max().unwrap_or(0)
    }

    /// Returns `[at, at + bytes)` (as `alloc` rounded it) to the arena.
    pub fn free(&mut self, at: u64, bytes: u64) {
        let size = bytes.max(1).div_ceil(64) * 64;
        let k = self.free.partition_point(|(s, _)| *s < at);
        self.free.insert(k, (at, size));
        // Merge with the neighbours.
        if k + 1 < self.free.len() && at + size == self.free[k + 1].0 {
            self.free[k].1 += self.free.remove(k + 1).1;
        }
        if k > 0 && self.free[k - 1].0 + self.free[k - 1].1 == at {
            self.free[k - 1].1 += self.free.remove(k).1;
        }
    }
}

/// Everything one process (core) holds: what outlives a job, and the job running.
#[derive(Debug)]
pub struct Runtime {
    /// The host model, once started.
    pub machine: Option<Machine>,
    /// This process's HBM.
    pub arena: Arena,
    /// Tensors by handle - 1.
    pub tensors: Vec<Option<Entry>>,
    /// Window views whose page tables the core filled ([`crate::percore::access::prefault`]).
    pub populated: Vec<crate::base::cabi::Populated>,
    /// The thread that fills them ahead of the copies ([`crate::base::filler`]).
    pub filler: Option<crate::base::filler::Filler>,
    /// The core whose share of HBM this process allocates from (a worker's, once set).
    pub share: Option<u32>,
    /// The running kernel's stack on the host ([`crate::base::stack`]).
    pub stack: crate::base::stack::Watch,
    /// The job running: made whole by [`Runtime::begin_job`], so nothing of one job is
    /// left for the next.
    pub job: Job,
}

/// One job of a process (a kernel on a core, a shape function, the runner's own calls):
/// what it is, and what it counted, copied and reported.
#[derive(Debug)]
pub struct Job {
    /// The op's name, for reports.
    pub op: String,
    /// This core.
    pub core: u32,
    /// Cores running the op.
    pub cores: u32,
    /// Where the run is.
    pub phase: Phase,
    /// What stops the process on an error (a core's process writes its report first).
    pub on_error: fn(&Runtime) -> !,
    /// `--sanitize`: the TCM blocks' bytes nothing wrote are watched.
    pub sanitize: bool,
    /// The op's output (`get_dst_tensor()`).
    pub dst: Option<u32>,
    /// Whether `get_dst_tensor()` was called.
    pub dst_called: bool,
    /// Where the kernel first called `get_dst_tensor()` (an unwritten output is named there).
    pub dst_at: Option<At>,
    /// Whether the output still has to be poisoned when the kernel first asks for it.
    pub dst_poison: bool,
    /// The TCM pool.
    pub pool: Pool,
    /// Live `tcm_malloc` blocks: address, bytes asked for, the call's return address.
    pub tcm_blocks: Vec<(usize, usize, u64)>,
    /// Live `neuron_hbm_allocate` blocks.
    pub hbm_blocks: Vec<HbmBlock>,
    /// `tcm_malloc` calls of a kernel on the emulated Q7 (whose blocks' bounds it does not
    /// check).
    pub tcm_mallocs: u32,
    /// Stream accessors open with a TCM buffer.
    pub fast_streams_open: u32,
    /// What the core counted.
    pub counts: Counts,
    /// TCM copies (for the checks across cores).
    pub accesses: Vec<Access>,
    /// Every misuse so far.
    pub reports: Vec<Report>,
    /// Whether the kernel asked `get_cpu_count()` (which says 8 on one core).
    pub asked_cpu_count: bool,
    /// The device's HBM heap the kernel's tensors come from.
    pub hbm_heap: crate::base::xmem::Heap,
    /// The device's C heap the kernel's `malloc` and `operator new` take from
    /// ([`crate::percore::c_heap`]).
    pub c_heap: crate::base::xmem::Heap,
    /// Whether this call said `malloc-null` already.
    pub c_heap_null_said: bool,
    /// On the emulated Q7, while a request that makes a tensor is answered: the kernel's
    /// call's return address in the device program.
    pub device_site: Option<u64>,
}

impl Job {
    /// Phase `phase` of op `op` on `core` of `cores`, stopped on an error by `on_error`:
    /// nothing counted, copied or reported yet, a fresh TCM pool.
    pub fn new(op: &str, core: u32, cores: u32, phase: Phase, on_error: fn(&Runtime) -> !) -> Job {
        Job {
            op: op.into(),
            core,
            cores,
            phase,
            on_error,
            sanitize: false,
            dst: None,
            dst_called: false,
            dst_at: None,
            dst_poison: false,
            pool: Pool::default(),
            tcm_blocks: Vec::new(),
            hbm_blocks: Vec::new(),
            tcm_mallocs: 0,
            fast_streams_open: 0,
            counts: Counts::default(),
            accesses: Vec::new(),
            reports: Vec::new(),
            asked_cpu_count: false,
            hbm_heap: crate::base::xmem::Heap::new(crate::base::xmem::HBM_HEAP_BYTES),
            c_heap: crate::base::xmem::Heap::new(crate::base::codes::C_HEAP_BYTES as u32),
            c_heap_null_said: false,
            device_site: None,
        }
    }
}

/// What ends a unit test's core: a panic the tests catch.
#[cfg(test)]
fn stopped_for_tests(_: &Runtime) -> ! {
    panic!("the core stopped")
}

fn exit_on_error(rt: &Runtime) -> ! {
    for r in &rt.job.reports {
        eprintln!("{}", r.line());
    }
    std::process::exit(rt.exit_status().code())
}

static RT: Mutex<Option<Runtime>> = Mutex::new(None);

/// Runs `f` on the runtime unless its lock is held (a signal handler's way in).
pub fn try_with<T>(f: impl FnOnce(&mut Runtime) -> T) -> Option<T> {
    let mut g = RT.try_lock().ok()?;
    Some(f(g.get_or_insert_with(Runtime::new)))
}

/// Runs `f` on the runtime (made on first use).
pub fn with<T>(f: impl FnOnce(&mut Runtime) -> T) -> T {
    let mut g: MutexGuard<'_, Option<Runtime>> = RT.lock().unwrap_or_else(|e| e.into_inner());
    let rt = g.get_or_insert_with(Runtime::new);
    // Every call of a kernel into the SDK comes here: how deep its frames are.
    let here = 0u8;
    rt.stack_seen(std::hint::black_box(&here) as *const u8 as usize);
    f(rt)
}

impl Runtime {
    fn new() -> Runtime {
        Runtime {
            machine: None,
            arena: Arena::default(),
            tensors: Vec::new(),
            populated: Vec::new(),
            filler: None,
            share: None,
            stack: crate::base::stack::Watch::default(),
            job: Job::new("(none)", 0, 1, Phase::Host, exit_on_error),
        }
    }

    /// A runtime for unit tests: an error panics ("the core stopped") instead of ending
    /// the process.
    #[cfg(test)]
    pub fn for_tests() -> Runtime {
        let mut rt = Runtime::new();
        rt.job.on_error = stopped_for_tests;
        rt
    }

    /// The live tensor `h`. A handle that is not live is a `tensor-not-live` error, placed
    /// at the kernel's call: a kernel reaches one through a torch::Tensor (or an accessor)
    /// that outlived the last reference to its tensor (an accessor of a temporary no longer
    /// compiles, as on the device).
    pub fn entry(&mut self, h: u32) -> &mut Entry {
        if !self.is_live(h) {
            self.not_live(h)
        }
        match self.tensors.get_mut(h as usize - 1) {
            Some(Some(e)) => e,
            _ => unreachable!("tensor {h} was found live"),
        }
    }

    /// Whether `h` is the handle of a live tensor.
    pub fn is_live(&self, h: u32) -> bool {
        (h as usize)
            .checked_sub(1)
            .is_some_and(|k| self.tensors.get(k).is_some_and(Option::is_some))
    }

    /// A kernel used tensor handle `h`, which is not live: reported, and the core stops.
    fn not_live(&mut self, h: u32) -> ! {
        let detail = format!(
            "tensor {h} was used after the last torch::Tensor holding it was destroyed (on the \
             device its memory may hold anything by then): an accessor kept after its tensor's \
             variable was given another tensor, say; keep the tensor while its accessors are used"
        );
        self.tensor_not_live(None, detail)
    }

    /// A `tensor-not-live` error (on `tensor`, as labelled) placed at the kernel's call into
    /// the SDK: reported, and the core stops.
    pub fn tensor_not_live(&mut self, tensor: Option<String>, detail: String) -> ! {
        let core = self.kernel_core();
        let at = At::Calls(crate::base::stack::callers());
        self.stop_at(Kind::TensorNotLive, core, tensor, detail, at)
    }

    /// An error of `kind` placed at the kernel's call into the runtime (a compiler's check
    /// calling it, say): reported, and the core stops.
    pub fn stop_at_caller(&mut self, kind: Kind, detail: String) -> ! {
        let core = self.kernel_core();
        let at = At::Calls(crate::base::stack::callers());
        self.stop_at(kind, core, None, detail, at)
    }

    /// An error of `kind` (on `core` and `tensor`) made `at` a place the runner puts into
    /// the kernel's source: reported, and the core stops here.
    fn stop_at(
        &mut self,
        kind: Kind,
        core: Option<u32>,
        tensor: Option<String>,
        detail: String,
        at: At,
    ) -> ! {
        self.job.reports.push(Report {
            severity: Severity::Error,
            tensor,
            at: Some(at),
            ..Report::of_run(&self.job.op, kind, core, detail)
        });
        (self.job.on_error)(self)
    }

    /// Starts a job on a worker: `phase` of op `op` on `core` of `cores`, stopped on an
    /// error by `on_error`, with nothing counted, copied or reported yet and a fresh TCM
    /// pool ([`Job::new`]). The window views' page tables the worker filled stay filled
    /// (the point of keeping it).
    pub fn begin_job(
        &mut self,
        op: &str,
        core: u32,
        cores: u32,
        phase: Phase,
        on_error: fn(&Runtime) -> !,
    ) {
        let ended = std::mem::replace(&mut self.job, Job::new(op, core, cores, phase, on_error));
        // The device's HBM heap is set up again for each call: no earlier block is in it.
        for b in ended.hbm_blocks {
            self.arena.free(b.raw, b.raw_bytes);
        }
        for e in self.tensors.iter_mut().flatten() {
            e.heap = None;
        }
    }

    /// The exit status the reports so far call for: a crash's, else a misuse error's.
    pub fn exit_status(&self) -> crate::base::codes::ExitStatus {
        crate::base::status::of_errors(&self.job.reports)
    }

    /// A C++ exception left a kernel or shape function: reported as a crash of its phase,
    /// with the exception's message, and the phase stops here (through `on_error`).
    pub fn thrown(&mut self, what: Option<String>) -> ! {
        let phase = if self.job.phase == Phase::Shape {
            "shape function"
        } else {
            "kernel"
        };
        let detail = match &what {
            Some(w) => format!("the {phase} threw a C++ exception: {w}"),
            None => format!("the {phase} threw a C++ exception that is no std::exception"),
        };
        let core = (self.job.phase == Phase::Kernel).then_some(self.job.core);
        self.job.reports.push(Report {
            severity: Severity::Error,
            crash: Some(crate::base::misuse::Crash {
                phase: phase.into(),
                signal: None,
                exit_code: None,
                exception: what,
            }),
            ..Report::of_run(&self.job.op, Kind::Crashed, core, detail)
        });
        (self.job.on_error)(self)
    }

    /// A load or store at `addr` that faulted in the TCM pool's pages (`what` it was to the
    /// pool), the fault's `stack` (innermost first): reported, and the core stops here.
    pub fn out_of_bounds(
        &mut self,
        addr: usize,
        what: String,
        write: Option<bool>,
        stack: Vec<u64>,
    ) -> ! {
        let access = match write {
            Some(true) => "a store",
            Some(false) => "a load",
            None => "an access",
        };
        let detail = format!("{access} at {addr:#x}: {what}");
        self.placed(Kind::TcmOutOfBounds, detail, stack)
    }

    /// An error of `kind` made at `stack` (innermost first: the instruction, then the
    /// callers' return addresses), which the runner places in the kernel's source:
    /// reported, and the core stops here.
    pub fn placed(&mut self, kind: Kind, detail: String, stack: Vec<u64>) -> ! {
        let core = self.kernel_core();
        self.stop_at(kind, core, None, detail, At::Calls(stack))
    }

    /// A `stack-overflow-host` warning if the kernel running is deeper than its build's
    /// stack at `here` (an address on the stack).
    fn stack_seen(&mut self, here: usize) {
        if let Some(depth) = self.stack.observe(here) {
            let detail = crate::base::stack::host_detail(self.stack.limit(), depth);
            self.misuse(Kind::StackOverflowHost, None, None, detail);
        }
    }

    /// The core a report is made on: the kernel's; none for the shape function, which runs
    /// once for the op, on no core.
    fn kernel_core(&self) -> Option<u32> {
        (self.job.phase == Phase::Kernel).then_some(self.job.core)
    }

    /// Records a misuse made by the kernel's call into the SDK that is running now (an
    /// accessor's index, a TCM copy's range), placed at that call in the kernel's source
    /// (the runner names the innermost line of the author's); an error stops the core here.
    pub fn misuse_here(
        &mut self,
        kind: Kind,
        tensor: Option<u32>,
        index: Option<String>,
        detail: String,
    ) {
        let at = self.here();
        self.record(kind, tensor, index, detail, Some(at));
    }

    /// Where the kernel's call into the runtime is: on the emulated Q7 the call the
    /// request answered came from, else this process's stack.
    pub fn here(&self) -> At {
        self.job
            .device_site
            .map_or_else(|| At::Calls(crate::base::stack::callers()), At::Device)
    }

    /// Records a misuse; an error stops the core here (through `on_error`).
    pub fn misuse(
        &mut self,
        kind: Kind,
        tensor: Option<u32>,
        index: Option<String>,
        detail: String,
    ) {
        self.record(kind, tensor, index, detail, None);
    }

    /// A misuse's report, placed `at` (if known); an error stops the core here.
    fn record(
        &mut self,
        kind: Kind,
        tensor: Option<u32>,
        index: Option<String>,
        detail: String,
        at: Option<At>,
    ) {
        let tensor = tensor.map(|h| self.entry(h).label.clone());
        let core = self.kernel_core();
        self.job.reports.push(Report {
            tensor,
            index,
            at,
            ..Report::of_run(&self.job.op, kind, core, detail)
        });
        if kind.severity() == Severity::Error {
            (self.job.on_error)(self)
        }
    }
}
