//! Translating an address range into the bytes behind it.
//!
//! A device range becomes one or more segments of the device's own view of
//! physical memory (several when it spans adjacent mappings); a host range
//! is itself. The rules of what may be touched live here, so synchronous and
//! stream copies enforce the same ones.

use crate::soft::core::segments::{Segments, Side};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::device_mem;
use crate::soft::host_mem;
use crate::soft::host_register;
use crate::soft::share::{self, Share, ShareReader};
use crate::soft::started;
use crate::soft::vmm::{self, Vmm, VmmReader};
use crate::types::*;

/// Whether `address` is `aclrtMallocHost` memory or registered host memory.
pub(crate) fn is_pinned_host(address: usize) -> bool {
    host_mem::find(address).is_some() || host_register::is_registered_host(address)
}

/// Translation that reads the VMM and sharing tables only when an address
/// needs them: device memory from `aclrtMalloc` is translated by its own
/// family and plain host memory by the core, so a copy between such ranges
/// takes no family-wide lock.
///
/// A table is read-locked on first use and held until the translator is
/// dropped, the VMM tables always before the sharing tables (the lock
/// order).
#[derive(Default)]
pub(crate) struct Translator {
    vmm: Option<VmmReader>,
    share: Option<ShareReader>,
}

impl Translator {
    /// The VMM tables.
    pub(crate) fn vmm(&mut self) -> SoftResult<&Vmm> {
        Ok(match self.vmm {
            Some(ref vmm) => vmm,
            None => self.vmm.insert(vmm::read()?),
        })
    }

    /// The sharing tables (the VMM tables are taken first if they are not
    /// held yet, so a later [`Translator::vmm`] keeps the lock order).
    pub(crate) fn share(&mut self) -> SoftResult<&Share> {
        self.vmm()?;
        Ok(match self.share {
            Some(ref share) => share,
            None => self.share.insert(share::read()?),
        })
    }

    /// Which side of the bus `address` is on, as the runtime's location
    /// queries see it. The VMM and sharing tables are read only for
    /// addresses the core's map of host ranges names.
    pub(crate) fn side_of(&mut self, address: usize) -> SoftResult<Side> {
        if let Some(device) = started::core()?.device_of(address) {
            return Ok(Side::Device(Some(device)));
        }
        if crate::soft::core::address_map::touches(address, address) {
            if let Some(device) = host_register::window_device(address) {
                return Ok(Side::Device(Some(device)));
            }
            if let Some((_, reservation)) = self.vmm()?.reservation_of(address) {
                return Ok(Side::Device(reservation.device));
            }
            if let Some(device) = share::import_device(self.share()?, address) {
                return Ok(Side::Device(Some(device)));
            }
        }
        Ok(if is_pinned_host(address) {
            Side::PinnedHost
        } else {
            Side::Pageable
        })
    }

    /// Translates `[address, address + length)` as [`Translator::resolve`]
    /// does, refusing it unless `address` is device memory (a stream task
    /// that reads its addresses from device memory when it runs: hardware
    /// reaches no host memory through them, and the software device never
    /// touches the host address).
    pub(crate) fn resolve_device(&mut self, address: usize, length: usize, role: &str) -> SoftResult<Segments> {
        if !matches!(self.side_of(address)?, Side::Device(_)) {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("{role} {address:#x} is not device memory"),
            );
        }
        self.resolve(address, length, role)
    }

    /// Translates `[address, address + length)`, refusing ranges the
    /// runtime would refuse.
    pub(crate) fn resolve(&mut self, address: usize, length: usize, role: &str) -> SoftResult<Segments> {
        // The common case first: inside the allocation this thread placed
        // or translated last, still live (no lock taken).
        if let Some((pointer, device)) = device_mem::remembered_view(address, length) {
            return Ok(Segments::one(pointer, length).on_device(device));
        }
        let Some(end) = address.checked_add(length) else {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("{role} range wraps around the address space"),
            );
        };
        let core = started::core()?;
        if let Some(device) = core.device_of(address) {
            let Some((start, allocation)) = device_mem::find(address) else {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("{role} {address:#x} on device {device} is not inside a live allocation"),
                );
            };
            let limit = start + allocation.size as usize;
            if end > limit {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "{role} range {address:#x}+{length} runs {} bytes past the end of the allocation at {start:#x} ({} bytes)",
                        end - limit,
                        allocation.size
                    ),
                );
            }
            let offset = allocation.offset + (address - start) as u64;
            let pointer = core.device(allocation.device)?.arena.view_at(offset);
            return Ok(Segments::one(pointer, length).on_device(allocation.device));
        }
        if !crate::soft::core::address_map::touches(address, end) {
            // Plain host memory is the caller's responsibility, as on
            // hardware.
            return Ok(Segments::one(address as *mut u8, length));
        }
        let vmm = self.vmm()?;
        if let Some((base, reservation)) = vmm.reservation_of(address) {
            let segments = vmm.resolve(base, address, length, role)?;
            // Memory of one device (a reservation maps one device); host-located
            // physical memory has no device.
            return Ok(match reservation.device {
                Some(device) => segments.on_device(device),
                None => segments,
            });
        }
        if let Some(segments) = share::resolve(self.share()?, address, length, role)? {
            return Ok(segments);
        }
        host_register::refuse_device_window(address, end, role)?;
        if let Some((start, allocation)) = host_mem::find(address)
            && end > start + allocation.size
        {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "{role} range {address:#x}+{length} runs past the end of the pinned host allocation at {start:#x} ({} bytes)",
                    allocation.size
                ),
            );
        }
        // Other host memory (pageable) is the caller's responsibility, as on
        // hardware.
        Ok(Segments::one(address as *mut u8, length))
    }
}

#[cfg(test)]
mod tests {
    use crate::types::*;
    use std::ffi::c_void;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn device_memory_copies_while_the_vmm_and_sharing_tables_are_locked() {
        let buffers = std::thread::spawn(|| {
            // SAFETY: plain runtime calls with valid out-pointers.
            unsafe {
                assert_eq!(crate::aclrtSetDevice(0), ACL_SUCCESS);
                let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
                assert_eq!(crate::aclrtMalloc(&mut a, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
                assert_eq!(crate::aclrtMalloc(&mut b, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
                (a as usize, b as usize)
            }
        })
        .join()
        .unwrap();
        // Both families locked for writing, as a VMM or sharing call would.
        let vmm = crate::soft::vmm::write().unwrap();
        let share = crate::soft::share::write().unwrap();
        let (done, finished) = mpsc::channel();
        let copier = std::thread::spawn(move || {
            let (a, b) = buffers;
            let mut host = [7u8; 64];
            // SAFETY: live buffers of 4096 bytes and a 64-byte host array.
            let codes = unsafe {
                assert_eq!(crate::aclrtSetDevice(0), ACL_SUCCESS);
                [
                    crate::aclrtMemcpy(
                        a as *mut c_void,
                        4096,
                        host.as_ptr().cast(),
                        64,
                        ACL_MEMCPY_HOST_TO_DEVICE,
                    ),
                    crate::aclrtMemcpy(
                        b as *mut c_void,
                        4096,
                        a as *const c_void,
                        64,
                        ACL_MEMCPY_DEVICE_TO_DEVICE,
                    ),
                    crate::aclrtMemset(a as *mut c_void, 4096, 0, 64),
                    crate::aclrtMemcpy(
                        host.as_mut_ptr().cast(),
                        64,
                        b as *const c_void,
                        64,
                        ACL_MEMCPY_DEVICE_TO_HOST,
                    ),
                ]
            };
            done.send((codes, host)).unwrap();
        });
        let outcome = finished.recv_timeout(Duration::from_secs(20));
        drop((share, vmm));
        let (codes, host) = outcome.expect("a copy of aclrtMalloc memory waited for the VMM or sharing tables");
        assert_eq!(codes, [ACL_SUCCESS; 4]);
        assert_eq!(host, [7u8; 64]);
        copier.join().unwrap();
        let (a, b) = buffers;
        // SAFETY: the buffers allocated above, freed once.
        unsafe {
            assert_eq!(crate::aclrtFree(a as *mut c_void), ACL_SUCCESS);
            assert_eq!(crate::aclrtFree(b as *mut c_void), ACL_SUCCESS);
        }
    }

    /// A fresh physical allocation of `size` bytes on device 0, mapped at a
    /// fresh reservation: `(handle, address)`.
    fn mapped(size: usize) -> (aclrtDrvMemHandle, usize) {
        let prop = crate::soft::vmm::test_prop(ACL_MEM_HUGE, ACL_MEM_LOCATION_TYPE_DEVICE);
        let (mut handle, mut base) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid out-pointers and property.
        unsafe {
            assert_eq!(crate::aclrtMallocPhysical(&mut handle, size, &prop, 0), ACL_SUCCESS);
            assert_eq!(
                crate::aclrtReserveMemAddress(&mut base, size, 0, std::ptr::null_mut(), 0),
                ACL_SUCCESS
            );
            assert_eq!(crate::aclrtMapMem(base, size, 0, handle, 0), ACL_SUCCESS);
        }
        (handle, base as usize)
    }

    /// Unmaps, releases and frees what [`mapped`] made.
    fn unmapped(handle: aclrtDrvMemHandle, address: usize) {
        // SAFETY: the mapping, reservation and handle of `mapped`.
        unsafe {
            assert_eq!(crate::aclrtUnmapMem(address as *mut c_void), ACL_SUCCESS);
            assert_eq!(crate::aclrtReleaseMemAddress(address as *mut c_void), ACL_SUCCESS);
            assert_eq!(crate::aclrtFreePhysical(handle), ACL_SUCCESS);
        }
    }

    // Software device only: a copy in flight holds the VMM memory it
    // translated, so a free meanwhile (a caller's error) neither unmaps
    // the bytes under it nor hands them to the next allocation.
    #[test]
    fn translated_vmm_bytes_outlive_a_free_and_are_not_reused() {
        // SAFETY: a plain runtime call.
        assert_eq!(unsafe { crate::aclrtSetDevice(0) }, ACL_SUCCESS);
        // A size no other test of this crate allocates.
        let size = 13 << 21;
        let (handle, address) = mapped(size);
        // SAFETY: a fill of the mapped range.
        assert_eq!(
            unsafe { crate::aclrtMemset(address as *mut c_void, size, 0x33, size) },
            ACL_SUCCESS
        );
        let held = super::Translator::default().resolve(address, size, "src").unwrap();
        unmapped(handle, address);
        // The held bytes are still there...
        for segment in held.iter() {
            // SAFETY: the segment's memory is held alive by the segment.
            let bytes = unsafe { std::slice::from_raw_parts(segment.pointer, segment.len) };
            assert!(bytes.iter().all(|&byte| byte == 0x33));
        }
        // ...and the next allocation of their size is fresh memory (zeros),
        // not them (reused memory reads 0xA5 in debug builds, 0x33 else).
        let (again, at) = mapped(size);
        let mut first = [1u8; 64];
        // Reads memory nothing wrote, on purpose (what it holds is the
        // point): the sanitizer, when on, reports it.
        let watch = crate::soft::MisuseWatch::start();
        // SAFETY: 64 live host bytes and a mapped device range.
        let code = unsafe {
            crate::aclrtMemcpy(
                first.as_mut_ptr().cast(),
                64,
                at as *const c_void,
                64,
                ACL_MEMCPY_DEVICE_TO_HOST,
            )
        };
        assert_eq!(code, ACL_SUCCESS);
        if crate::soft::sanitizer_checks().contains(crate::soft::Checks::INIT) {
            let expected = format!("uninitialized read: aclrtMemcpy on the host reads {at:#x}..");
            assert!(
                watch
                    .seen()
                    .iter()
                    .any(|misuse| misuse.description.starts_with(&expected)),
                "the sanitizer did not report the read of fresh memory: {:#?}",
                watch.seen()
            );
        }
        drop(watch);
        assert_eq!(first, [0u8; 64]);
        unmapped(again, at);
        drop(held);
    }
}
