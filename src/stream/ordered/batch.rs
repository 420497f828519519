//! Batch copies of [`OrderedView`]s: many host-to-device (or
//! device-to-host) copies queued as one `aclrtMemcpyBatchAsync`, each
//! destination ordered after the conflicting uses of its bytes and each
//! source after the writes of its bytes, as a single copy is.

use super::gate::Entered;
use super::in_flight::InFlight;
use super::lanes::{Lanes, Locked};
use super::view::OrderedView;
use crate::error::{Call, Error, Result, check};
use crate::memory::{DeviceStorage, DeviceStorageMut, PinnedHostBuf};
use crate::stream::Stream;
use crate::stream::lengths::same_bytes;
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;

/// One use of an owner's bytes by the batch.
struct Use<'a> {
    lanes: &'a Lanes,
    range: Range<usize>,
    write: bool,
}

/// The uses of one owner, gathered.
struct Owner<'a> {
    lanes: &'a Lanes,
    uses: Vec<(Range<usize>, bool)>,
}

impl Owner<'_> {
    fn refs(&self) -> Vec<(&Range<usize>, bool)> {
        self.uses.iter().map(|(range, write)| (range, *write)).collect()
    }
}

/// The uses gathered per owner, the owners in address order (so that two
/// threads locking the same owners cannot deadlock). Refuses two writes of
/// overlapping bytes of one owner.
fn gather<'a>(call: Call, uses: Vec<Use<'a>>) -> Result<Vec<Owner<'a>>> {
    let mut owners: Vec<Owner<'a>> = Vec::new();
    for item in uses {
        let index = match owners.iter().position(|owner| std::ptr::eq(owner.lanes, item.lanes)) {
            Some(index) => index,
            None => {
                owners.push(Owner {
                    lanes: item.lanes,
                    uses: Vec::new(),
                });
                owners.len() - 1
            }
        };
        let clash = owners[index].uses.iter().any(|(range, write)| {
            (*write || item.write) && range.start < item.range.end && item.range.start < range.end
        });
        if clash {
            return Err(Error::invalid(
                call,
                format!(
                    "the bytes {:?} are written by one entry and used by another",
                    item.range
                ),
            ));
        }
        owners[index].uses.push((item.range, item.write));
    }
    owners.sort_by_key(|owner| owner.lanes as *const Lanes as usize);
    Ok(owners)
}

/// Locks the lanes of every owner once no use in flight conflicts with
/// the batch; a blocked lane is waited for with every lane unlocked.
fn lock_all<'a>(owners: &[Owner<'a>]) -> Vec<Locked<'a>> {
    'retry: loop {
        let locked: Vec<Locked<'a>> = owners
            .iter()
            .map(|owner| Locked::lock(owner.lanes, &owner.refs()))
            .collect();
        for (owner, held) in owners.iter().zip(&locked) {
            let uses = owner.refs();
            if let Some(index) = held.blocked(&uses) {
                drop(locked);
                owner.lanes.wait_for_lane(index, &uses);
                continue 'retry;
            }
        }
        return locked;
    }
}

/// One copy of the batch: addresses and length.
struct Piece {
    dst: *mut c_void,
    src: *mut c_void,
    bytes: usize,
}

/// One side of a pair: the owner's lanes, the bytes of its memory the
/// view covers, their address, and the use of them under way.
struct Side<'a> {
    lanes: &'a Lanes,
    range: Range<usize>,
    ptr: *mut c_void,
    entered: Entered<'a>,
}

impl<'a> Side<'a> {
    /// The side `view`, whose use starts now.
    ///
    /// # Errors
    ///
    /// [`Error::PoolAsleep`] when the owner is a block of a sleeping pool
    /// tag.
    fn of<S>(view: &OrderedView<'a, S>, ptr: *const c_void) -> Result<Self> {
        Ok(Self {
            lanes: &view.owner().lanes,
            range: view.range(),
            ptr: ptr.cast_mut(),
            entered: view.owner().enter()?,
        })
    }
}

/// The pairs of a batch: the uses of every side, the pieces to copy, and
/// the uses under way (ended when the batch has landed).
#[derive(Default)]
struct Pairs<'a> {
    uses: Vec<Use<'a>>,
    pieces: Vec<Piece>,
    entered: Vec<Entered<'a>>,
}

impl<'a> Pairs<'a> {
    /// Adds the copy of `src` into `dst`; an empty pair is skipped.
    fn add(&mut self, call: Call, dst: Side<'a>, src: Side<'a>) -> Result<()> {
        self.entered.extend([dst.entered, src.entered]);
        let bytes = dst.range.len();
        same_bytes(call, bytes, src.range.len())?;
        if bytes == 0 {
            return Ok(());
        }
        self.pieces.push(Piece {
            dst: dst.ptr,
            src: src.ptr,
            bytes,
        });
        self.uses.push(Use {
            lanes: dst.lanes,
            range: dst.range,
            write: true,
        });
        self.uses.push(Use {
            lanes: src.lanes,
            range: src.range,
            write: false,
        });
        Ok(())
    }
}

/// Orders the batch on `stream` after the conflicting uses of every side,
/// marks every side in flight, queues the batch outside the locks with
/// `aclrtMemcpyBatchAsync` (one attribute: `attr`), and notes it; if the
/// call fails nothing is noted.
fn ordered_batch<'a>(
    call: Call,
    stream: &'a Arc<Stream>,
    // The uses end when this returns, after the flights have landed.
    Pairs {
        uses,
        pieces,
        entered: _entered,
    }: Pairs<'a>,
    attr: sys::aclrtMemcpyBatchAttr,
) -> Result<()> {
    if pieces.is_empty() {
        return Ok(());
    }
    let owners = gather(call, uses)?;
    let flights = {
        let mut locked = lock_all(&owners);
        for (owner, held) in owners.iter().zip(&locked) {
            for (range, write) in &owner.uses {
                held.order(stream, range, *write)?;
            }
        }
        let mut flights = Vec::new();
        for (owner, held) in owners.iter().zip(locked.iter_mut()) {
            for (range, write) in &owner.uses {
                flights.push(InFlight::take_off(held, range.clone(), *write, Some(stream)));
            }
        }
        flights
    };
    let queued = stream.device().make_current().and_then(|()| {
        let count = pieces.len();
        let mut dsts: Vec<*mut c_void> = pieces.iter().map(|piece| piece.dst).collect();
        let mut srcs: Vec<*mut c_void> = pieces.iter().map(|piece| piece.src).collect();
        let mut sizes: Vec<usize> = pieces.iter().map(|piece| piece.bytes).collect();
        let mut maxes = sizes.clone();
        let (mut attrs, mut starts) = ([attr], [0usize]);
        let mut fail_index = usize::MAX;
        // SAFETY: every array holds `count` entries (one attribute from
        // index 0); each entry's memory is `bytes` bytes of a view whose
        // owner is not released or touched by the host before its tracks
        // prove this batch finished, and each destination may be written
        // (`DeviceStorageMut`, or a pinned buffer).
        check("aclrtMemcpyBatchAsync", unsafe {
            sys::aclrtMemcpyBatchAsync(
                dsts.as_mut_ptr(),
                maxes.as_mut_ptr(),
                srcs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                count,
                attrs.as_mut_ptr(),
                starts.as_mut_ptr(),
                1,
                &mut fail_index,
                stream.as_raw(),
            )
        })
    });
    if queued.is_err() {
        for flight in flights {
            flight.not_queued();
        }
    }
    queued
}

fn location(type_: sys::aclrtMemLocationType, id: i32) -> sys::aclrtMemLocation {
    sys::aclrtMemLocation {
        id: u32::try_from(id).unwrap_or(u32::MAX),
        type_,
    }
}

impl<'a, D: DeviceStorageMut> OrderedView<'a, D> {
    /// Queues on `stream` one batch of host-to-device copies
    /// (`aclrtMemcpyBatchAsync`): each pair's pinned source into its device
    /// destination, the destinations on the stream's device. Each
    /// destination waits for the uses of its bytes on other streams, each
    /// source for the writes of its bytes, as
    /// [`OrderedView::copy_from_host`] does; empty pairs are skipped. The
    /// runtime checks every entry before any byte moves.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when a pair's byte lengths differ, or two
    /// destinations of one owner overlap; otherwise the runtime's code (its
    /// message names the failing entry). Nothing is queued then.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, OrderedView, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let weights = Ordered::new(DeviceBuf::<u16>::zeroed(&device, 4)?);
    /// let bias = Ordered::new(DeviceBuf::<u16>::zeroed(&device, 2)?);
    /// let page = Ordered::new(PinnedHostBuf::from_slice(&device, &[1u16, 2, 3, 4, 5, 6])?);
    /// OrderedView::copy_batch_from_host(
    ///     &[(weights.view(), page.slice(..4)?), (bias.view(), page.slice(4..)?)],
    ///     &stream,
    /// )?;
    /// assert_eq!(weights.view().to_vec::<u16>()?, [1, 2, 3, 4]);
    /// assert_eq!(bias.view().to_vec::<u16>()?, [5, 6]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpyBatchAsync")]
    pub fn copy_batch_from_host<T: Pod>(
        pairs: &[(OrderedView<'a, D>, OrderedView<'a, PinnedHostBuf<T>>)],
        stream: &'a Arc<Stream>,
    ) -> Result<()> {
        let call = Call::new("OrderedView::copy_batch_from_host", "aclrtMemcpyBatchAsync");
        let mut batch = Pairs::default();
        for (dst, src) in pairs {
            batch.add(
                call,
                Side::of(dst, dst.device_ptr())?,
                Side::of(src, src.host_ptr().cast())?,
            )?;
        }
        let attr = sys::aclrtMemcpyBatchAttr {
            dstLoc: location(sys::ACL_MEM_LOCATION_TYPE_DEVICE, stream.device().id()),
            srcLoc: location(sys::ACL_MEM_LOCATION_TYPE_HOST, 0),
            rsv: [0; 16],
        };
        ordered_batch(call, stream, batch, attr)
    }
}

impl<'a, T: Pod> OrderedView<'a, PinnedHostBuf<T>> {
    /// Queues on `stream` one batch of device-to-host copies
    /// (`aclrtMemcpyBatchAsync`): each pair's device source (on the
    /// stream's device) into its pinned destination, ordered as
    /// [`OrderedView::copy_batch_from_host`]; empty pairs are skipped.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_batch_from_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, OrderedView, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let a = Ordered::new(DeviceBuf::from_slice(&device, &[1u32, 2])?);
    /// let b = Ordered::new(DeviceBuf::from_slice(&device, &[3u32])?);
    /// let mut page = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 3)?);
    /// OrderedView::copy_batch_from_device(&[(page.slice(..2)?, a.view()), (page.slice(2..)?, b.view())], &stream)?;
    /// assert_eq!(&page.get_mut()?[..], [1, 2, 3]); // `get_mut` waits for the batch
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpyBatchAsync")]
    pub fn copy_batch_from_device<S: DeviceStorage>(
        pairs: &[(OrderedView<'a, PinnedHostBuf<T>>, OrderedView<'a, S>)],
        stream: &'a Arc<Stream>,
    ) -> Result<()> {
        let call = Call::new("OrderedView::copy_batch_from_device", "aclrtMemcpyBatchAsync");
        let mut batch = Pairs::default();
        for (dst, src) in pairs {
            batch.add(
                call,
                Side::of(dst, dst.host_ptr().cast())?,
                Side::of(src, src.device_ptr())?,
            )?;
        }
        let attr = sys::aclrtMemcpyBatchAttr {
            dstLoc: location(sys::ACL_MEM_LOCATION_TYPE_HOST, 0),
            srcLoc: location(sys::ACL_MEM_LOCATION_TYPE_DEVICE, stream.device().id()),
            rsv: [0; 16],
        };
        ordered_batch(call, stream, batch, attr)
    }
}
