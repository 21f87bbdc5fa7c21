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
use crate::init::PINNED_WINDOW_SIZE;

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
    // SAFETY: maps pages at an address this model owns (fixed: a range it reserved) or
    // that must be free (MAP_FIXED_NOREPLACE fails instead of replacing anything).
    let p = unsafe {
        libc::mmap(
            addr as usize as *mut libc::c_void,
            len as usize,
            prot,
            flags | place,
            raw,
            off as libc::off_t,
        )
    };
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
        unsafe { libc::munmap(p, len as usize) };
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
