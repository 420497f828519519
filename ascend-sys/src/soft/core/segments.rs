//! The leaf types of address translation: a run of bytes to touch
//! ([`Segment`]), the runs of one range ([`Segments`]) and where an address
//! lives ([`Side`]). The families build segments for their own memory; the
//! translator above them (`compose/translate.rs`) picks the family.

use std::sync::Arc;

/// A run of bytes to touch: `len` bytes at `pointer`.
#[derive(Clone)]
pub(crate) struct Segment {
    pub(crate) pointer: *mut u8,
    pub(crate) len: usize,
    /// The mapping the bytes are in, held while the segment lives (VMM
    /// physical memory, an IPC import's view): an `aclrtFreePhysical` or
    /// `aclrtIpcMemClose` meanwhile (a caller's error) then neither unmaps
    /// the bytes under the copy nor hands them to another allocation.
    /// `None` for memory that outlives the operation (the device's arena,
    /// the caller's host memory).
    _hold: Option<Arc<dyn Send + Sync>>,
}

impl Segment {
    /// `len` bytes at `pointer` inside `mapping`, which is held.
    pub(crate) fn held(pointer: *mut u8, len: usize, mapping: Arc<dyn Send + Sync>) -> Self {
        Self {
            pointer,
            len,
            _hold: Some(mapping),
        }
    }
}

/// The segments of one range, in address order.
#[derive(Clone)]
pub(crate) struct Segments {
    first: Segment,
    rest: Vec<Segment>,
    /// The device whose memory this is (`None`: host memory, or not known).
    pub(crate) device: Option<i32>,
}

impl Segments {
    /// `len` bytes at `pointer`, in memory that outlives the operation.
    pub(crate) fn one(pointer: *mut u8, len: usize) -> Self {
        Self::starting(Segment {
            pointer,
            len,
            _hold: None,
        })
    }

    /// Segments starting with `first`.
    pub(crate) fn starting(first: Segment) -> Self {
        Self {
            first,
            rest: Vec::new(),
            device: None,
        }
    }

    /// The same segments, marked as memory of `device`.
    pub(crate) fn on_device(mut self, device: i32) -> Self {
        self.device = Some(device);
        self
    }

    pub(crate) fn push(&mut self, segment: Segment) {
        self.rest.push(segment);
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Segment> {
        std::iter::once(&self.first).chain(self.rest.iter())
    }

    /// The segments as `(pointer, len, offset into the range)` runs (for
    /// the sanitizer's shadow).
    pub(crate) fn runs(&self) -> Vec<(usize, usize, usize)> {
        let mut offset = 0;
        self.iter()
            .map(|segment| {
                let run = (segment.pointer as usize, segment.len, offset);
                offset += segment.len;
                run
            })
            .collect()
    }
}

// SAFETY: segments are addresses of device views (live for the process, or
// held by the segment) or host memory owned by the caller of the
// operation; they are plain data.
unsafe impl Send for Segments {}

/// Where an address lives ([`crate::soft::compose::translate::Translator::side_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Device memory: `aclrtMalloc` memory, a registration's device
    /// pointer, a reserved range (its device; `None` until something is
    /// mapped in it) or an IPC import.
    Device(Option<i32>),
    /// `aclrtMallocHost` memory or registered host memory.
    PinnedHost,
    /// Any other host memory.
    Pageable,
}
