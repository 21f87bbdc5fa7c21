//! Simulated SoC memory and the NX windows' views of it: one `memfd` per region, and each
//! window a shared mapping of the range it shows (or an inaccessible one). The only place
//! the model calls `mmap`.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::string::ToString;
use std::vec::Vec;
use std::{format, vec};

use super::SimError;
use crate::init::{PINNED_WINDOW_SIZE, REFILL_WINDOW_SIZE};

pub(super) const PAGE: u64 = 4096;

/// One region of simulated SoC memory.
struct Region {
    base: u64,
    size: u64,
    /// The region's memfd.
    file: File,
}

/// One NX window: where it is, and which SoC range it shows now.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub(super) nx: u64,
    pub(super) size: u64,
    /// The `_LO` address of the register that programs it, if any.
    pub(super) register: Option<u64>,
    pub(super) soc: Option<u64>,
    /// It shows one view of one region (so it can be moved whole: keep.rs).
    pub(super) whole: bool,
}

/// SoC memory: SBUF (64 MiB) and the HBM region, sparse.
pub(super) struct Soc {
    regions: Vec<Region>,
}

impl Soc {
    /// SBUF at `sbuf_base` and `hbm_size` bytes of HBM at `hbm_base`, reading as zeros.
    pub(super) fn new(sbuf_base: u64, hbm_base: u64, hbm_size: u64) -> Result<Soc, SimError> {
        Ok(Soc {
            regions: vec![
                Region {
                    base: sbuf_base,
                    size: PINNED_WINDOW_SIZE,
                    file: memfd("nx-sbuf", PINNED_WINDOW_SIZE)?,
                },
                Region {
                    base: hbm_base,
                    size: hbm_size,
                    file: memfd("nx-hbm", hbm_size)?,
                },
            ],
        })
    }

    /// SoC address of SBUF.
    pub(super) fn sbuf(&self) -> u64 {
        self.regions[0].base
    }

    /// The HBM region's memfd (offset 0 is the region's first SoC address).
    pub(super) fn hbm_fd(&self) -> i32 {
        std::os::fd::AsRawFd::as_raw_fd(&self.regions[1].file)
    }

    /// Points `w` at the SoC range from `soc`: the parts regions back as shared views of
    /// their memfd, the rest inaccessible. One `mmap` when one region backs it all (a
    /// refill's usual case: each such call costs microseconds, docs/host-model.md).
    pub(super) fn show(&self, w: &Window, soc: Option<u64>) -> Result<(), SimError> {
        let Some(base) = soc.filter(|b| b.is_multiple_of(PAGE)) else {
            // No SoC range, or a table's tag that is not page-aligned (it cannot be a
            // view): the window is inaccessible.
            return map(w.nx, w.size, Backing::Inaccessible, true);
        };
        let end = base.saturating_add(w.size);
        // What no region backs is inaccessible; when one region backs it all, its view
        // alone replaces what the window showed.
        if !self
            .regions
            .iter()
            .any(|r| base >= r.base && end <= r.base + r.size)
        {
            map(w.nx, w.size, Backing::Inaccessible, true)?;
        }
        for r in &self.regions {
            let lo = base.max(r.base);
            let hi = end.min(r.base + r.size);
            if lo < hi {
                map(
                    w.nx + (lo - base),
                    hi - lo,
                    Backing::File(&r.file, lo - r.base),
                    true,
                )?;
            }
        }
        Ok(())
    }

    /// Whether one region backs `size` bytes from the page-aligned `base` (a window
    /// showing them is then one view).
    pub(super) fn backs_whole(&self, base: u64, size: u64) -> bool {
        base.is_multiple_of(PAGE)
            && base.checked_add(size).is_some_and(|end| {
                self.regions
                    .iter()
                    .any(|r| base >= r.base && end <= r.base + r.size)
            })
    }

    /// SoC memory that exists, in bytes: the regions' allocated pages.
    pub(super) fn resident(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        self.regions
            .iter()
            .filter_map(|r| r.file.metadata().ok())
            .map(|m| m.blocks() * 512)
            .sum()
    }

    fn region(&self, addr: u64, len: u64) -> Result<&Region, SimError> {
        self.regions
            .iter()
            .find(|r| addr >= r.base && addr.checked_add(len).is_some_and(|e| e <= r.base + r.size))
            .ok_or(SimError::Unbacked { addr, len })
    }

    /// Writes `data` at `soc` (not through a window).
    pub(super) fn write(&self, soc: u64, data: &[u8]) -> Result<(), SimError> {
        let r = self.region(soc, data.len() as u64)?;
        r.file
            .write_all_at(data, soc - r.base)
            .map_err(|e| SimError::Os(format!("writing SoC memory: {e}")))
    }

    /// Copies `len` bytes from `from` to `to`, both in one region and not overlapping,
    /// inside the kernel (`copy_file_range`): no buffer, no page of this process touched.
    pub(super) fn copy(&self, from: u64, to: u64, len: u64) -> Result<(), SimError> {
        let r = self.region(from, len)?;
        let same = core::ptr::eq(r, self.region(to, len)?);
        if !same || from.max(to) < from.min(to) + len {
            return Err(SimError::Unbacked { addr: to, len });
        }
        let fd = std::os::fd::AsRawFd::as_raw_fd(&r.file);
        let (mut a, mut b) = ((from - r.base) as i64, (to - r.base) as i64);
        let mut left = len;
        while left > 0 {
            // A 32-bit process (the SDK's host run) copies at most 1 GiB a call.
            let part = usize::try_from(left.min(1 << 30)).unwrap_or(1 << 30);
            // SAFETY: one descriptor this region owns, offsets inside it.
            let n = unsafe { libc::copy_file_range(fd, &mut a, fd, &mut b, part, 0) };
            if n <= 0 {
                return Err(os_error("copying SoC memory"));
            }
            left -= n as u64;
        }
        Ok(())
    }

    /// Reads `buf.len()` bytes at `soc` (not through a window).
    pub(super) fn read(&self, soc: u64, buf: &mut [u8]) -> Result<(), SimError> {
        let r = self.region(soc, buf.len() as u64)?;
        r.file
            .read_exact_at(buf, soc - r.base)
            .map_err(|e| SimError::Os(format!("reading SoC memory: {e}")))
    }
}

fn os_error(what: &str) -> SimError {
    SimError::Os(format!("{what}: {}", std::io::Error::last_os_error()))
}

/// What a mapping shows.
#[derive(Clone, Copy)]
pub(super) enum Backing<'a> {
    /// Nothing: every access faults.
    Inaccessible,
    /// Private read-write memory of its own (the register block).
    Memory,
    /// A region's memfd from this offset, shared, read-write (a window's view).
    File(&'a File, u64),
}

/// Maps `len` bytes at `addr` from `backing`. `fixed` replaces what is there (the model's
/// own mapping); otherwise the range must be free.
pub(super) fn map(addr: u64, len: u64, backing: Backing<'_>, fixed: bool) -> Result<(), SimError> {
    let anonymous = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    let (prot, flags, raw, off) = match backing {
        Backing::File(fd, off) => (
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            off,
        ),
        Backing::Memory => (libc::PROT_READ | libc::PROT_WRITE, anonymous, -1, 0),
        Backing::Inaccessible => (libc::PROT_NONE, anonymous | libc::MAP_NORESERVE, -1, 0),
    };
    let place = if fixed {
        libc::MAP_FIXED
    } else {
        libc::MAP_FIXED_NOREPLACE
    };
    // A range this process cannot address (a 32-bit one) is not free.
    let (Ok(at), Ok(size), Ok(off)) = (
        usize::try_from(addr),
        usize::try_from(len),
        libc::off64_t::try_from(off),
    ) else {
        return Err(SimError::AddressTaken { addr, size: len });
    };
    // SAFETY: maps pages at an address this model owns (fixed: a range it reserved) or
    // that must be free (MAP_FIXED_NOREPLACE fails instead of replacing anything). mmap64
    // takes a 64-bit offset in a 32-bit process too (the SDK's host run: HBM is 56 GiB).
    let p = unsafe { libc::mmap64(at as *mut libc::c_void, size, prot, flags | place, raw, off) };
    if p == libc::MAP_FAILED {
        let err = std::io::Error::last_os_error();
        if !fixed && err.raw_os_error() == Some(libc::EEXIST) {
            return Err(SimError::AddressTaken { addr, size: len });
        }
        return Err(SimError::Os(format!("mmap {addr:#x} ({len} bytes): {err}")));
    }
    if p as usize as u64 != addr {
        // An old kernel that ignores MAP_FIXED_NOREPLACE maps elsewhere: undo it.
        // SAFETY: `p` is the mapping just made.
        unsafe { libc::munmap(p, size) };
        return Err(SimError::AddressTaken { addr, size: len });
    }
    Ok(())
}

/// Ranges mapped while a machine starts, unmapped again unless it comes up.
pub(super) struct Claimed(pub(super) Vec<(u64, u64)>);

impl Drop for Claimed {
    fn drop(&mut self) {
        for &(addr, len) in &self.0 {
            unmap(addr, len);
        }
    }
}

pub(super) fn unmap(addr: u64, len: u64) {
    // SAFETY: the model unmaps only ranges it mapped.
    unsafe { libc::munmap(addr as usize as *mut libc::c_void, len as usize) };
}

fn memfd(name: &str, size: u64) -> Result<File, SimError> {
    let cname = std::ffi::CString::new(name).map_err(|_| SimError::BadConfig(name.to_string()))?;
    // SAFETY: a valid C string; the returned descriptor is owned below.
    let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(os_error("memfd_create"));
    }
    // SAFETY: `fd` is a new descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let file = File::from(fd);
    file.set_len(size)
        .map_err(|e| SimError::Os(format!("sizing SoC memory: {e}")))?;
    Ok(file)
}

/// The parked views (docs/host-model.md, "Kept views"): an arena of slots the size of a
/// reusable window, 16 MiB aligned so that the kernel moves whole page tables, each holding
/// a view moved out of a window with `mremap` (its page table with it) or reserved and
/// inaccessible while free.
pub(super) struct Parking {
    /// The reservation: (address, length).
    raw: (u64, u64),
    /// The first slot's address.
    base: u64,
    /// The SoC base each slot's view shows, or `None` for a free slot.
    slots: Vec<Option<u64>>,
}

impl Parking {
    /// Reserves room for `views` kept views (none: an arena that parks nothing), and one
    /// slot more: a refill parks the outgoing view before the incoming one leaves its slot.
    pub(super) fn new(views: usize) -> Result<Parking, SimError> {
        let size = REFILL_WINDOW_SIZE;
        let slots = if views == 0 { 0 } else { views + 1 };
        // One slot's worth more, to align the first slot.
        let len = (slots as u64 + 1)
            .checked_mul(size)
            .filter(|_| slots > 0)
            .unwrap_or(0);
        let raw = if len == 0 {
            0
        } else {
            reserve(len).ok_or_else(|| os_error("reserving the kept views' address space"))?
        };
        Ok(Parking {
            raw: (raw, len),
            base: raw.next_multiple_of(size),
            slots: vec![None; slots],
        })
    }

    fn slot_addr(&self, i: usize) -> u64 {
        self.base + i as u64 * REFILL_WINDOW_SIZE
    }

    /// Moves the view at NX `nx` (one mapping, a reusable window's size) into a free slot.
    pub(super) fn park(&mut self, nx: u64, soc: u64) -> Result<(), SimError> {
        let i = self
            .slots
            .iter()
            .position(Option::is_none)
            .ok_or_else(|| SimError::Os("no free slot for a kept view".into()))?;
        move_mapping(nx, self.slot_addr(i))?;
        self.slots[i] = Some(soc);
        Ok(())
    }

    /// Moves the parked view of `soc` to NX `nx` (replacing what is there) and reserves
    /// its slot again; false if no view of `soc` is parked.
    pub(super) fn unpark(&mut self, soc: u64, nx: u64) -> Result<bool, SimError> {
        let Some(i) = self.slots.iter().position(|s| *s == Some(soc)) else {
            return Ok(false);
        };
        self.slots[i] = None;
        let at = self.slot_addr(i);
        let moved = move_mapping(at, nx);
        map(at, REFILL_WINDOW_SIZE, Backing::Inaccessible, true)?;
        moved.map(|()| true)
    }

    /// Drops the parked view of `soc` (its page table with it), if there is one.
    pub(super) fn evict(&mut self, soc: u64) -> Result<(), SimError> {
        if let Some(i) = self.slots.iter().position(|s| *s == Some(soc)) {
            self.slots[i] = None;
            map(
                self.slot_addr(i),
                REFILL_WINDOW_SIZE,
                Backing::Inaccessible,
                true,
            )?;
        }
        Ok(())
    }

    /// Views parked now.
    pub(super) fn kept(&self) -> usize {
        self.slots.iter().flatten().count()
    }
}

impl Drop for Parking {
    fn drop(&mut self) {
        if self.raw.1 > 0 {
            unmap(self.raw.0, self.raw.1);
        }
    }
}

/// Reserves `len` bytes of inaccessible address space wherever the kernel has room.
fn reserve(len: u64) -> Option<u64> {
    // SAFETY: a new private mapping at an address of the kernel's choosing.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as usize as u64)
}

/// Moves the reusable window's size of mapping at `from` to `to` (replacing what is
/// there), page table and all.
fn move_mapping(from: u64, to: u64) -> Result<(), SimError> {
    let len = REFILL_WINDOW_SIZE as usize;
    // SAFETY: both ranges are the model's own: a window's view or a slot of its arena.
    let p = unsafe {
        libc::mremap(
            from as usize as *mut libc::c_void,
            len,
            len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            to as usize as *mut libc::c_void,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(os_error("mremap"));
    }
    Ok(())
}
