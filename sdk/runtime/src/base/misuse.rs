//! What the device leaves undefined and this runtime reports: each kind by name, whether it
//! stops the run (an error) or is noted (a warning), and the report that names the op, the
//! core, the tensor and the index. The table in docs/customop-host.md lists the same kinds;
//! a test checks it against [`Kind::ALL`].

use serde::{Deserialize, Serialize};

/// Whether a misuse stops the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The kernel stops there; the run fails with [`crate::base::codes::ExitStatus::Misuse`]
    /// ([`crate::base::codes::ExitStatus::Crashed`] for [`Kind::Crashed`]).
    Error,
    /// Reported (stderr and `--stats`); the run goes on.
    Warning,
}

macro_rules! kinds {
    ($($variant:ident = $name:literal, $sev:ident, $what:literal;)*) => {
        /// A kind of misuse.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum Kind { $(#[doc = $what] #[serde(rename = $name)] $variant,)* }

        impl Kind {
            /// Every kind, in the order of the docs' table.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant,)*];
            /// Its name in reports and the docs.
            pub fn name(self) -> &'static str { match self { $(Kind::$variant => $name,)* } }
            /// Whether it stops the run.
            pub fn severity(self) -> Severity { match self { $(Kind::$variant => Severity::$sev,)* } }
            /// What it is, in a sentence.
            pub fn what(self) -> &'static str { match self { $(Kind::$variant => $what,)* } }
        }
    };
}

kinds! {
    AccessorMulticore = "accessor-multicore", Error,
        "a standard or stream accessor opened while several cores run";
    IndexOutOfRange = "index-out-of-range", Error,
        "a standard accessor index outside its dimension";
    AccessorType = "accessor-type", Error,
        "an accessor or TCM copy whose element type or dimension count is not the tensor's";
    Incoherent = "incoherent-accessors", Error,
        "accessors that break the coherence rules on one tensor under the COHERENT policy";
    IncoherentAllowed = "incoherent-accessors-allowed", Warning,
        "the same under INCOHERENT_VERBOSE: allowed, noted";
    StreamPastEnd = "stream-past-end", Error,
        "a stream read or written past the tensor's last element";
    StreamClosed = "stream-after-close", Error,
        "a stream read or written after close()";
    SlowStream = "slow-stream", Warning,
        "a stream opened with four already open (or no 4 KiB left in the pool): element by element";
    TcmCopyPastEnd = "tcm-copy-past-end", Error,
        "a tensor_to_tcm or tcm_to_tensor range past the tensor's end";
    TcmCopyNotDataram = "tcm-copy-not-dataram", Error,
        "a tensor_to_tcm or tcm_to_tensor whose local buffer is static or global data: the device's copy asserts outside dataram";
    TcmCopyStack = "tcm-copy-stack-switched", Warning,
        "a TCM copy through a stack buffer in a build with -DSTACK_SIZE above the default: on an HBM stack the device's copy asserts";
    TcmFreeForeign = "tcm-free-foreign", Error,
        "tcm_free of a pointer tcm_malloc did not return (or freed twice)";
    ShapeDataRead = "shape-function-data-read", Error,
        "a shape function opened an accessor on an input (shape functions get no data)";
    ReturnMismatch = "returned-tensor-mismatch", Error,
        "the kernel returned a tensor whose shape or dtype is not the shape function's";
    NoDstTensor = "multicore-no-dst-tensor", Error,
        "several cores ran and a core returned without calling get_dst_tensor()";
    SharedWrite = "cores-write-same-element", Error,
        "two cores wrote the same element of a tensor";
    CrossRead = "core-reads-other-core-write", Warning,
        "a core read elements another core wrote (no ordering between cores)";
    Unwritten = "output-unwritten", Error,
        "output elements the kernel never wrote (several cores; one core while its writes are tracked)";
    PrintfOffCore0 = "printf-off-core-0", Warning,
        "a core other than 0 printed: the device drops it (shown here after the run)";
    OpFailed = "operation-error", Error,
        "a tensor operation or factory refused its arguments (shape, dtype, size)";
    Crashed = "kernel-crashed", Error,
        "a kernel or shape function died (a signal, a C++ exception, exit() before returning)";
    TcmOutOfBounds = "tcm-out-of-bounds", Error,
        "a load or store outside every live TCM block: past a block's end, between blocks, into a freed block";
    UninitializedRead = "uninitialized-read", Error,
        "a kernel read tensor elements that nothing wrote (torch::empty and the like, the output)";
    TcmLeak = "tcm-leak", Warning,
        "tcm_malloc blocks still live when the kernel returned (their sizes and places)";
    Timeout = "timeout", Error,
        "a kernel or shape function still ran when --timeout ran out (every core is ended)";
    Int64Tensor = "int64-tensor", Warning,
        "a tensor of torch::kLong (int64): the vendor's current guide dropped it (64-bit custom ops are not supported on the device)";
    DeviceLacks = "device-lacks", Warning,
        "the kernel calls a function the device runtime does not have (fopen, say): it runs here, not on the device";
    PrintfLost = "printf-lost", Warning,
        "core 0's printf text the device would not show: its output ring is off (NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES unset or 0) or smaller than the text";
    DeviceCores = "device-cores", Warning,
        "a run on 2 to 7 cores: the device builds an op for 1 core or 8";
    DeviceParityOff = "device-parity-off", Warning,
        "the program was built with --no-device-parity (device_parity=False): the device's own build may refuse what runs here";
    StackOverflow = "stack-overflow", Error,
        "on the emulated Q7: the kernel's frames went past every stack the device could run it on (the HBM stack of -DSTACK_SIZE, 4196 bytes unless set, and a core's 256 KiB of local memory)";
    StackMayOverflow = "stack-may-overflow", Warning,
        "on the emulated Q7: the kernel's frames went past the HBM stack of -DSTACK_SIZE; the device runs it only if the core's own room, which the runtime checks and the decode does not give, holds them";
    StackOverflowHost = "stack-overflow-host", Warning,
        "on the host: the kernel's frames were past the HBM stack of -DSTACK_SIZE when it called the SDK (the host's frames, not the device's)";
    DeviceTcmUnchecked = "device-tcm-unchecked", Warning,
        "on the emulated Q7 without the counting plugin: the kernel used tcm_malloc blocks, and no store past one was checked (the plugin's store watch checks every one)";
    X86DefaultNan = "x86-default-nan", Warning,
        "on the host: output elements hold the NaN an invalid operation gives on x86, whose sign the Q7's clears";
    IntegerDivideByZero = "integer-divide-by-zero", Error,
        "an integer division or remainder by zero, undefined in C++ (the host would die of SIGFPE, the device gives a value)";
    UndefinedArithmetic = "undefined-arithmetic", Error,
        "a signed integer overflow, a shift past its operand's width, or a float converted to an integer that cannot hold it: undefined in C++, the host's value and the device's differ";
    HbmHeapExhausted = "hbm-heap-exhausted", Error,
        "a kernel made a tensor the device's HBM heap has no block for: its 32 block descriptors in use (the device's allocator asserts)";
    HbmFreeForeign = "hbm-free-foreign", Error,
        "neuron_hbm_deallocate of an address neuron_hbm_allocate did not give in this call (or freed twice)";
    MallocNull = "malloc-null", Warning,
        "malloc, calloc or realloc returned NULL as the device's would: its C heap (10 KiB a call) had no room";
    CHeapExhausted = "c-heap-exhausted", Error,
        "operator new found no room in the device's C heap (10 KiB a call), where the device throws std::bad_alloc";
    HbmCopyOutOfBounds = "hbm-copy-out-of-bounds", Error,
        "a neuron_memcpy whose HBM bytes are not all inside one live tensor or neuron_hbm_allocate block";
    TensorNotLive = "tensor-not-live", Error,
        "a tensor used after the last torch::Tensor holding it was destroyed (an accessor kept after its tensor's variable was given another, say)";
}

/// How a kernel or shape function ended when it did not return: where it ran, and the
/// signal or exit status (or the C++ exception) that ended it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Crash {
    /// `kernel` or `shape function`.
    pub phase: String,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// The exit status it called `exit` with before returning.
    pub exit_code: Option<i32>,
    /// The message of the C++ exception it threw (`what()`).
    pub exception: Option<String>,
}

/// One misuse, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Its kind.
    pub kind: Kind,
    /// Its severity (from the kind).
    pub severity: Severity,
    /// The op running.
    pub op: String,
    /// The core it happened on (`None`: found after the run, across cores).
    pub core: Option<u32>,
    /// The tensor (as the runner names it: `input 0`, `output`, `tensor 3`).
    pub tensor: Option<String>,
    /// The element index or range, where there is one.
    pub index: Option<String>,
    /// The rest, in words.
    pub detail: String,
    /// How it died, for [`Kind::Crashed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<Crash>,
    /// Where in the program it happened, until the runner puts the place into `detail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<At>,
    /// Where it happened, frame by frame, innermost first (`function (file:line)`, inlined
    /// calls too): the chain the runner walked to the author's line that `detail` names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// The cores it was found on, when it was found on several and is reported once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<u32>,
    /// Each finding it groups, in words (a pair of cores' overlap, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<String>,
}

/// Where in the program a report's misuse happened, as a core saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum At {
    /// The stack, innermost first: the first address exact (a faulting instruction, an
    /// address within a call instruction), the others return addresses
    /// ([`crate::base::stack::callers`]).
    Calls(Vec<u64>),
    /// A call's return address in the emulated Q7's program, placed with its DWARF.
    Device(u64),
}

impl Report {
    /// A report of `kind` (its severity the kind's) on op `op` (`core`: on that core's run
    /// of it), in `detail`'s words, of no tensor: the one place every field is written;
    /// callers add a tensor, an index, a crash or a place with `..Report::of_run(...)`.
    pub fn of_run(op: &str, kind: Kind, core: Option<u32>, detail: String) -> Report {
        Report {
            kind,
            severity: kind.severity(),
            op: op.into(),
            core,
            tensor: None,
            index: None,
            detail,
            crash: None,
            at: None,
            stack: Vec::new(),
            cores: Vec::new(),
            instances: Vec::new(),
        }
    }

    /// One line for stderr: `error[kind] op relu, core 1, tensor input 0, index 7: ...`.
    pub fn line(&self) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut where_ = format!("op {}", self.op);
        if let Some(c) = &self.crash {
            where_ += &format!(", {}", c.phase);
        }
        if let Some(c) = self.core {
            where_ += &format!(", core {c}");
        }
        if !self.cores.is_empty() {
            where_ += &format!(", {}", cores_text(&self.cores));
        }
        if let Some(t) = &self.tensor {
            where_ += &format!(", {t}");
        }
        if let Some(i) = self.index.as_ref().filter(|i| !i.is_empty()) {
            where_ += &format!(", index {i}");
        }
        format!("{sev}[{}] {where_}: {}", self.kind.name(), self.detail)
    }
}

/// `cores 0 to 7`, `cores 0, 2 and 5` (sorted, distinct).
pub fn cores_text(cores: &[u32]) -> String {
    let contiguous = cores.windows(2).all(|w| w[1] == w[0] + 1);
    match cores {
        [] => String::new(),
        [one] => format!("core {one}"),
        [first, .., last] if contiguous && cores.len() > 2 => format!("cores {first} to {last}"),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(u32::to_string).collect();
            format!("cores {} and {last}", rest.join(", "))
        }
    }
}
