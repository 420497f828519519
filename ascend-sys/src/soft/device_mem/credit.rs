//! A shard's credit: device capacity counted ahead of its allocations.

use crate::soft::started::DeviceCore;

/// Capacity a shard counted on the device ahead of its allocations, so
/// that most allocations and frees do not touch the device's shared count
/// (a cache line every allocating thread would otherwise write).
#[derive(Default)]
pub(super) struct Credit(u64);

/// Bytes a shard takes beyond an allocation when its credit runs out.
const REFILL: u64 = 1 << 20;

/// Credit beyond this goes back to the device at a free.
const MAX_CREDIT: u64 = 2 * REFILL;

impl Credit {
    /// Makes sure `size` bytes are covered, counting more on `device` if
    /// needed (with [`REFILL`] to spare when the device has room); `false`
    /// when the device's capacity has no room.
    pub(super) fn cover(&mut self, size: u64, device: &DeviceCore) -> bool {
        if self.0 >= size {
            return true;
        }
        let missing = size - self.0;
        let taken = [missing + REFILL, missing]
            .into_iter()
            .find(|&bytes| device.commit(bytes));
        match taken {
            Some(bytes) => {
                self.0 += bytes;
                true
            }
            None => false,
        }
    }

    /// Uses `size` covered bytes.
    pub(super) fn spend(&mut self, size: u64) {
        self.0 -= size;
    }

    /// Takes back `size` freed bytes, returning what is beyond
    /// [`MAX_CREDIT`] to `device`.
    pub(super) fn refund(&mut self, size: u64, device: &DeviceCore) {
        self.0 += size;
        if self.0 > MAX_CREDIT {
            device.uncommit(self.0 - REFILL);
            self.0 = REFILL;
        }
    }

    /// Returns all of it to `device`.
    pub(super) fn give_back(&mut self, device: &DeviceCore) {
        device.uncommit(self.0);
        self.0 = 0;
    }

    /// The bytes held.
    pub(super) fn bytes(&self) -> u64 {
        self.0
    }
}
