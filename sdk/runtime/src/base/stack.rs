//! A kernel's stack against the device's. A core runs a kernel on a stack in its local
//! memory, `-DSTACK_SIZE` bytes or 4196 ([`crate::base::limits::STACK_DEFAULT`]); deeper
//! frames overwrite what lies below it. On the emulated Q7 the device runtime measures the
//! depth itself (sdk/device/runtime.c: the stack pointer at each request, and a painted
//! region below the kernel's first frame, read after it returns) and sends it; here on the
//! host the frames are x86-64's, and [`Watch`] sees them only when the kernel calls the SDK.
//! docs/customop-device.md ("The stack") says what each can see.

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
        self.reported = depth > u64::from(self.limit);
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

/// How to give a kernel more stack, or need less.
fn remedy() -> String {
    format!(
        "build with -DSTACK_SIZE=N (extra_cflags; at most {} bytes), or keep large arrays in \
         TCM (tcm_malloc) or a tensor",
        crate::base::limits::STACK_MAX
    )
}

/// A `stack-overflow` report's words: the device runtime measured `depth` bytes (or more,
/// `at_least`) against `limit`.
pub fn device_detail(limit: u32, depth: u64, at_least: bool) -> String {
    let more = if at_least { "at least " } else { "" };
    format!(
        "the kernel's frames took {more}{depth} bytes of stack on the emulated core, past the \
         {limit} a core has on the device (where they would overwrite its local memory): {}",
        remedy()
    )
}

/// A `stack-overflow-host` report's words.
pub fn host_detail(limit: u32, depth: u64) -> String {
    format!(
        "the kernel's frames reached {depth} bytes below its call when it called the SDK, past \
         the {limit} bytes a core's stack has on the device; these are the host's frames, not \
         the device's (ntx op run --device measures those): {}",
        remedy()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_reports_once_past_its_limit_and_never_when_stopped() {
        let mut w = Watch::start(8192, 100_000);
        assert_eq!(w.observe(100_000 - 8192), None);
        assert_eq!(w.observe(100_000 - 8193), Some(8193));
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
    fn the_reports_say_the_limit_and_the_remedy() {
        let d = device_detail(8192, 12_000, true);
        assert!(d.contains("at least 12000 bytes") && d.contains("the 8192 a core has"));
        assert!(d.contains("-DSTACK_SIZE=N") && d.contains("4194304"));
        let h = host_detail(8192, 9000);
        assert!(h.contains("9000 bytes") && h.contains("--device"));
    }
}
