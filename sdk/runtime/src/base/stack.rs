//! A kernel's stack against the device's. The device runs a kernel on the core's own stack
//! when its room is at least `-DSTACK_SIZE` (4196 bytes unless set,
//! [`crate::base::limits::STACK_DEFAULT`]), else on an HBM stack of that size; past
//! either the hardware's stack limit faults ([`Depth`]). On the emulated Q7 the device
//! runtime measures the depth itself (sdk/device/runtime.c: the stack pointer at each
//! request, and a painted region below the kernel's first frame, read after it returns) and
//! sends it; here on the host the frames are x86-64's, and [`Watch`] sees them only when the
//! kernel calls the SDK. docs/customop-device.md ("The stack") says what each can see.

use crate::base::limits::{CORE_DRAM, STACK_MAX, STACK_SWITCH_ALIGN, STACK_SWITCH_CONTEXT};

/// The stack pointer a kernel was called at on the host, and whether its depth was reported.
#[derive(Debug, Default, Clone, Copy)]
pub struct Watch {
    /// An address just above the kernel's first frame (0: no kernel is running).
    top: usize,
    /// The device's stack for this build, in bytes.
    limit: u32,
    /// Whether this call reported already (once is enough).
    reported: bool,
}

impl Watch {
    /// A watch over a kernel called below `top`, whose build gives it `limit` bytes.
    pub fn start(limit: u32, top: usize) -> Watch {
        Watch {
            top,
            limit,
            reported: false,
        }
    }

    /// An address just above the kernel's first frame (0: no kernel is running).
    pub fn top(&self) -> usize {
        self.top
    }

    /// The stack this build gives a core.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Whether `p` is in the kernel's frames while the runtime runs at `here`, an address on
    /// the running stack: between the two (the kernel is called below `top`).
    pub fn holds(&self, p: usize, here: usize) -> bool {
        self.top != 0 && (here..self.top).contains(&p)
    }

    /// `here`, an address on the running stack: the kernel's depth there the first time it
    /// is past the limit, else `None`.
    pub fn observe(&mut self, here: usize) -> Option<u64> {
        if self.top == 0 || self.reported || here > self.top {
            return None;
        }
        let depth = (self.top - here) as u64;
        self.reported = depth > switched_room(self.limit);
        self.reported.then_some(depth)
    }
}

extern "C" {
    /// glibc's `backtrace` (libgcc's unwinder, which steps through a signal frame too).
    pub fn backtrace(buffer: *mut *mut libc::c_void, size: libc::c_int) -> libc::c_int;
}

/// Frames [`callers`] keeps.
const CALLERS: usize = 32;

/// The calls that led here, innermost first: the first address is within its call
/// instruction (one byte before the return address), the others are return addresses, as
/// `place_stack` in the runner takes a stack. The runtime's own frames are among them;
/// the runner places the first frame in the kernel's sources.
pub fn callers() -> Vec<u64> {
    let mut raw = [core::ptr::null_mut(); CALLERS];
    // SAFETY: a buffer of its length.
    let n = unsafe { backtrace(raw.as_mut_ptr(), CALLERS as libc::c_int) }.max(0) as usize;
    let mut stack: Vec<u64> = raw[..n].iter().map(|p| *p as u64).collect();
    if let Some(first) = stack.first_mut() {
        *first = first.saturating_sub(1);
    }
    stack
}

/// The bytes a kernel's frames have on the HBM stack the device switches to for a build of
/// `limit` (`-DSTACK_SIZE`): the block's top aligned down, less the saved context
/// (stack-switch.md section 4; the block itself is 64-byte aligned).
pub fn switched_room(limit: u32) -> u64 {
    u64::from(limit & !(STACK_SWITCH_ALIGN - 1)).saturating_sub(u64::from(STACK_SWITCH_CONTEXT))
}

/// The smallest `-DSTACK_SIZE` whose switched stack holds `depth` bytes of frames.
pub fn size_for(depth: u64) -> u64 {
    let align = u64::from(STACK_SWITCH_ALIGN);
    (depth + u64::from(STACK_SWITCH_CONTEXT)).div_ceil(align) * align
}

/// What the device does with a kernel whose frames take `depth` bytes, in a build of
/// `limit`. `switch_stack_or_call_wrapper` (stack-switch.md section 3) runs the kernel on
/// the core's own stack when its room (`SP - ISL`) is at least `limit`, else on an HBM
/// stack of `limit` bytes, [`switched_room`] of them for frames; the hardware's stack limit
/// faults past either. The room is not in the decode; it is less than [`CORE_DRAM`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Within the switched stack, so within either.
    Fits,
    /// Past the switched stack, within a core's local memory: it runs if the runtime did
    /// not switch and the core's room holds the frames, and faults otherwise.
    MayFault,
    /// Past both (or past the switched stack when every core's room is under `limit`, so
    /// the runtime always switches): it faults.
    Faults,
}

impl Depth {
    /// The device's outcome for `depth` bytes of frames in a build of `limit`.
    pub fn of(limit: u32, depth: u64) -> Depth {
        if depth <= switched_room(limit) {
            Depth::Fits
        } else if depth > u64::from(CORE_DRAM) || limit > CORE_DRAM {
            Depth::Faults
        } else {
            Depth::MayFault
        }
    }
}

/// How to make `depth` bytes of frames run on the device whatever the core's room.
fn remedy(depth: u64) -> String {
    let need = size_for(depth);
    if need <= u64::from(STACK_MAX) {
        format!(
            "build with -DSTACK_SIZE={need} or more (extra_cflags; the switched stack then holds \
             the frames whether or not the runtime switches), or keep large arrays in TCM \
             (tcm_malloc) or a tensor"
        )
    } else {
        format!(
            "keep large arrays in TCM (tcm_malloc) or a tensor: the frames need more than the \
             {STACK_MAX} bytes -DSTACK_SIZE may give"
        )
    }
}

/// The words of a `stack-overflow` (`Faults`) or `stack-may-overflow` report: the device
/// runtime measured `depth` bytes of frames (or more, `at_least`) in a build of `limit`.
pub fn device_detail(limit: u32, depth: u64, at_least: bool) -> String {
    let more = if at_least { "at least " } else { "" };
    let room = switched_room(limit);
    let took = format!(
        "the kernel's frames took {more}{depth} bytes of stack on the emulated core, past the \
         {room} the device's HBM stack of -DSTACK_SIZE={limit} holds"
    );
    let why = match Depth::of(limit, depth) {
        Depth::Faults if limit > CORE_DRAM => format!(
            "; a core's room is under {limit} bytes (its local memory is {CORE_DRAM}), so the \
             device always switches to that stack, and faults"
        ),
        Depth::Faults => format!(
            " and the {CORE_DRAM} bytes of a core's local memory, which holds its own stack: \
             the device faults either way"
        ),
        Depth::Fits | Depth::MayFault => " (the runtime switches to it when the core's own \
             room, SP - ISL, is under -DSTACK_SIZE): the device runs the kernel if that room \
             holds the frames and faults otherwise, and the decode does not give the room"
            .to_string(),
    };
    format!("{took}{why}: {}", remedy(depth))
}

/// A `stack-overflow-host` report's words.
pub fn host_detail(limit: u32, depth: u64) -> String {
    format!(
        "the kernel's frames reached {depth} bytes below its call when it called the SDK, past \
         the {} the device's HBM stack of -DSTACK_SIZE={limit} holds; these are the host's \
         frames, not the device's (ntx op run --device measures those and says whether the \
         device faults): {}",
        switched_room(limit),
        remedy(depth)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_reports_once_past_the_switched_stack_and_never_when_stopped() {
        let mut w = Watch::start(8192, 100_000);
        assert_eq!(w.observe(100_000 - 8064), None, "8192 holds 8064 of frames");
        assert_eq!(w.observe(100_000 - 8065), Some(8065));
        assert_eq!(w.observe(100_000 - 20_000), None, "once");
        let mut idle = Watch::default();
        assert_eq!(idle.observe(1), None);
        let mut above = Watch::start(16, 1000);
        assert_eq!(
            above.observe(2000),
            None,
            "an address above the kernel's call"
        );
    }

    #[test]
    fn the_kernels_frames_are_between_the_runtime_and_the_call() {
        let w = Watch::start(8192, 100_000);
        assert!(w.holds(90_000, 80_000) && w.holds(80_000, 80_000));
        assert!(!w.holds(100_000, 80_000) && !w.holds(79_999, 80_000));
        assert!(!Watch::default().holds(90_000, 80_000), "no kernel running");
    }

    #[test]
    fn the_switched_stack_is_its_aligned_top_less_the_context() {
        assert_eq!(switched_room(4196), 4192 - 128);
        assert_eq!(switched_room(4192), 4192 - 128);
        assert_eq!(switched_room(4207), 4192 - 128);
        assert_eq!(switched_room(4208), 4208 - 128);
        assert_eq!(switched_room(100), 0);
        for depth in [1, 4064, 4065, 10_000, 300_000] {
            let n = size_for(depth);
            assert!(switched_room(n as u32) >= depth, "{depth}: {n}");
            assert!(
                switched_room(n as u32 - 1) < depth,
                "{depth}: {n} is the least"
            );
        }
    }

    #[test]
    fn the_device_faults_only_past_every_stack_it_could_use() {
        let dram = u64::from(CORE_DRAM);
        assert_eq!(Depth::of(4196, 4064), Depth::Fits);
        assert_eq!(
            Depth::of(4196, 4065),
            Depth::MayFault,
            "fits a room of 4196"
        );
        assert_eq!(Depth::of(4196, 10_000), Depth::MayFault);
        assert_eq!(Depth::of(4196, dram), Depth::MayFault);
        assert_eq!(
            Depth::of(4196, dram + 1),
            Depth::Faults,
            "past local memory"
        );
        assert_eq!(Depth::of(CORE_DRAM, dram - 128), Depth::Fits);
        assert_eq!(Depth::of(CORE_DRAM, dram - 127), Depth::MayFault);
        let always = CORE_DRAM + 16;
        assert_eq!(
            Depth::of(always, dram - 112),
            Depth::Fits,
            "switched, within"
        );
        assert_eq!(
            Depth::of(always, dram - 111),
            Depth::Faults,
            "always switched"
        );
    }

    #[test]
    fn the_reports_say_the_stacks_and_the_remedy() {
        let d = device_detail(4196, 10_000, false);
        assert!(
            d.contains("took 10000 bytes") && d.contains("past the 4064"),
            "{d}"
        );
        assert!(d.contains("runs the kernel if that room") && d.contains("-DSTACK_SIZE=10128"));
        let d = device_detail(4196, 300_000, true);
        assert!(
            d.contains("at least 300000") && d.contains("faults either way"),
            "{d}"
        );
        let d = device_detail(300_000, 300_000, false);
        assert!(
            d.contains("always switches") && d.contains("-DSTACK_SIZE=300128"),
            "{d}"
        );
        let d = device_detail(4196, 5 << 20, false);
        assert!(d.contains("more than the 4194304 bytes"), "{d}");
        let h = host_detail(8192, 9000);
        assert!(h.contains("9000 bytes") && h.contains("--device") && h.contains("8064"));
    }
}
