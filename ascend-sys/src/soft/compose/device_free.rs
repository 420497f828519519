//! `aclrtFree` of device memory: the device-memory family and the sharing
//! tables composed in lock order. An allocation exported through an IPC key
//! loses its keys with it, under the sharing tables' lock (taken first: a
//! lower rank than the device memory's shards), so no importer opens a key
//! to memory already given back. Here rather than in `entry/` because the
//! allocators above the families (managed memory, memory pools) free
//! device memory too.

use crate::soft::core::soft_result::SoftResult;
use crate::soft::device_mem::{self, Freed};
use crate::soft::share::{self, Share};

/// Frees the `aclrtMalloc*` allocation starting at `address`, withdrawing
/// its IPC keys when it is exported.
pub(crate) fn free(address: usize) -> SoftResult {
    match device_mem::free(address)? {
        Freed::Done => Ok(()),
        Freed::Exported => {
            let mut sharing = share::write()?;
            device_mem::free_exported(address)?;
            share::forget_allocation(&mut sharing, address);
            Ok(())
        }
    }
}

/// [`free`] with the sharing tables locked by the caller (a device reset,
/// which holds them throughout): the allocation goes whether or not it is
/// exported, and its IPC keys with it.
pub(crate) fn free_with_sharing(sharing: &mut Share, address: usize) -> SoftResult {
    device_mem::free_exported(address)?;
    share::forget_allocation(sharing, address);
    Ok(())
}
