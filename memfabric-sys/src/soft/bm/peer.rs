//! A rank's segment info as published in the store, and this process's
//! view of a peer's segments (its DRAM mapped, its HBM imported).
//!
//! The value under `bm/<id>/<rank>` is `<pid> <dram fd> <dram stride>
//! <hbm stride> <hbm key or ->`, or `-` once the rank has left the BM.

use crate::soft::core::result::{SoftResult, fail};
use crate::soft::memory::dram::DramMapping;
use crate::soft::memory::hbm::HbmImport;
use crate::types::{SMEM_ERROR, SMEM_NOT_CONNECTED};

/// The store key of rank `rank`'s segments of BM `id`.
pub(crate) fn key(id: u32, rank: u32) -> String {
    format!("bm/{id}/{rank}")
}

/// What a rank publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegmentInfo {
    /// The process.
    pub(crate) pid: u32,
    /// Its DRAM `memfd` descriptor (unused when the stride is 0).
    pub(crate) dram_fd: u32,
    /// Bytes of DRAM per rank.
    pub(crate) dram_stride: u64,
    /// Bytes of HBM per rank.
    pub(crate) hbm_stride: u64,
    /// The IPC key of its HBM, if any.
    pub(crate) hbm_key: Option<String>,
}

impl SegmentInfo {
    /// The store value.
    pub(crate) fn value(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.pid,
            self.dram_fd,
            self.dram_stride,
            self.hbm_stride,
            self.hbm_key.as_deref().unwrap_or("-")
        )
    }

    /// Parses a store value; `None` for `-` (the rank left).
    pub(crate) fn parse(value: &str) -> SoftResult<Option<Self>> {
        if value == "-" {
            return Ok(None);
        }
        let words: Vec<&str> = value.split(' ').collect();
        let parsed = match words[..] {
            [pid, fd, dram, hbm, key] => (|| {
                Some(Self {
                    pid: pid.parse().ok()?,
                    dram_fd: fd.parse().ok()?,
                    dram_stride: dram.parse().ok()?,
                    hbm_stride: hbm.parse().ok()?,
                    hbm_key: (key != "-").then(|| key.to_string()),
                })
            })(),
            _ => None,
        };
        match parsed {
            Some(info) => Ok(Some(info)),
            None => fail(SMEM_ERROR, format!("a peer published malformed segment info {value:?}")),
        }
    }
}

/// A peer's segments, reachable from this process.
#[derive(Debug)]
pub(crate) struct Peer {
    /// Its DRAM, mapped here.
    pub(crate) dram: Option<DramMapping>,
    /// Its HBM, imported here.
    pub(crate) hbm: Option<HbmImport>,
}

impl Peer {
    /// Opens what `info` describes, checking that its strides match this
    /// rank's (every rank of a BM contributes the same sizes).
    pub(crate) fn open(info: &SegmentInfo, device: i32, dram_stride: u64, hbm_stride: u64) -> SoftResult<Self> {
        if info.dram_stride != dram_stride || info.hbm_stride != hbm_stride {
            return fail(
                SMEM_NOT_CONNECTED,
                format!(
                    "process {} contributes {} bytes of DRAM and {} of HBM per rank, this rank {dram_stride} and \
                     {hbm_stride}; every rank of a BM must contribute the same sizes",
                    info.pid, info.dram_stride, info.hbm_stride
                ),
            );
        }
        let dram = match dram_stride {
            0 => None,
            stride => Some(DramMapping::open(info.pid, info.dram_fd, stride as usize)?),
        };
        let hbm = match &info.hbm_key {
            Some(key) if hbm_stride != 0 => Some(HbmImport::open(device, key)?),
            _ => None,
        };
        Ok(Self { dram, hbm })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_info_round_trips() {
        let info = SegmentInfo {
            pid: 12,
            dram_fd: 7,
            dram_stride: 2 << 20,
            hbm_stride: 0,
            hbm_key: None,
        };
        assert_eq!(SegmentInfo::parse(&info.value()).unwrap(), Some(info));
        assert_eq!(SegmentInfo::parse("-").unwrap(), None);
        assert!(SegmentInfo::parse("1 2").is_err());
    }
}
