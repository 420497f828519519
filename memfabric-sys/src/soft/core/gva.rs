//! The GVA layout: two linear ranges, one for the pool's host memory (DRAM)
//! and one for its device memory (HBM). Rank `r`'s segment of a range
//! starts at `base + r × stride`, where the stride is the rank's local size
//! rounded up to 2 MiB (the large page the real library requires its
//! segment sizes to be a multiple of), as in MemFabric's source, where the
//! per-rank size is the local segment size and the rank of a GVA is its
//! offset divided by it.
//!
//! The bases are the real library's: host GVAs from `0x2000_0000_0000`
//! (32 TiB), device GVAs from `0x2800_0000_0000` (40 TiB). A range of
//! `world size × stride` bytes must end before the next base (the host
//! range before the device base, the device range before 168 TiB, where the
//! real library's reservable space ends). The software fabric never maps
//! anything at a GVA: GVAs are numbers it translates (`smem_bm_gva_to_va`
//! gives the local address behind one of this rank's).

/// The first host (DRAM) GVA.
pub(crate) const HOST_BASE: u64 = 0x2000_0000_0000;
/// The first device (HBM) GVA.
pub(crate) const DEVICE_BASE: u64 = 0x2800_0000_0000;
/// The end of the device range (168 TiB).
pub(crate) const DEVICE_END: u64 = 0xA800_0000_0000;
/// The granularity of a rank's segment: 2 MiB.
pub(crate) const SEGMENT_ALIGN: u64 = 2 << 20;

/// One of the two ranges of a BM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    /// The first GVA.
    pub(crate) base: u64,
    /// Bytes per rank (0: no rank contributes this memory).
    pub(crate) stride: u64,
    /// Ranks.
    pub(crate) ranks: u32,
}

impl Range {
    /// The range of `ranks` segments of `local` bytes (rounded up to 2 MiB)
    /// from `base`, or `None` when it would pass `limit`.
    pub(crate) fn new(base: u64, local: u64, ranks: u32, limit: u64) -> Option<Self> {
        let stride = local.checked_next_multiple_of(SEGMENT_ALIGN)?;
        let end = base.checked_add(stride.checked_mul(u64::from(ranks))?)?;
        (end <= limit).then_some(Self { base, stride, ranks })
    }

    /// The GVA of rank `rank`'s segment.
    pub(crate) fn segment(&self, rank: u32) -> Option<u64> {
        (self.stride != 0 && rank < self.ranks).then(|| self.base + u64::from(rank) * self.stride)
    }

    /// The rank owning `gva` and the offset inside its segment.
    pub(crate) fn locate(&self, gva: u64) -> Option<(u32, u64)> {
        if self.stride == 0 || gva < self.base {
            return None;
        }
        let rank = (gva - self.base) / self.stride;
        (rank < u64::from(self.ranks)).then(|| (rank as u32, (gva - self.base) % self.stride))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_linear_and_rounded_to_2_mib() {
        let host = Range::new(HOST_BASE, 3 << 20, 4, DEVICE_BASE).unwrap();
        assert_eq!(host.stride, 4 << 20);
        assert_eq!(host.segment(0), Some(HOST_BASE));
        assert_eq!(host.segment(3), Some(HOST_BASE + 12 * (1 << 20)));
        assert_eq!(host.segment(4), None);
        assert_eq!(host.locate(HOST_BASE + (4 << 20) + 5), Some((1, 5)));
        assert_eq!(host.locate(HOST_BASE + (16 << 20)), None);
        assert_eq!(host.locate(HOST_BASE - 1), None);
        assert!(Range::new(HOST_BASE, 1 << 40, 1024, DEVICE_BASE).is_none());
        let none = Range::new(DEVICE_BASE, 0, 2, DEVICE_END).unwrap();
        assert_eq!(none.segment(0), None);
        assert_eq!(none.locate(DEVICE_BASE), None);
    }
}
