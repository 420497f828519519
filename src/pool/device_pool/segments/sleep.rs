//! Sleep and wake of a [`DevicePool`](crate::pool::DevicePool): the physical
//! memory of its tags goes back to the device with every device address
//! kept, and comes back at the same addresses with the offloaded contents.
//!
//! Both are transactional: each runs its calls in an order that can be
//! undone (fence, copies out, unmaps; maps, copies in) and undoes what it
//! did when a call fails. Only the last step of sleep, freeing the
//! physical memory, cannot be undone; it runs after everything else
//! succeeded, and a free the runtime refuses keeps its chunk for the wake.

use super::arena::Arena;
use super::asleep::{Asleep, Saved};
use crate::Call;
use crate::error::{Error, Result};
use crate::pool::device_pool::statistics::stats::PoolStats;
use crate::stream::Settled;
use crate::{Device, PinnedHostBuf};

/// Pinned buffers of earlier offloads, kept for the next sleep: allocating
/// and first touching a fresh buffer costs more than the copy into it
/// (torch's caching host allocator keeps vLLM's CPU backup the same way).
/// [`DevicePool::empty_cache`](crate::pool::DevicePool::empty_cache) frees them.
#[derive(Default)]
pub(in crate::pool) struct Spares(Vec<PinnedHostBuf<u8>>);

impl Spares {
    /// The smallest spare of at least `len` bytes.
    fn take(&mut self, len: usize) -> Option<PinnedHostBuf<u8>> {
        let (index, _) = self
            .0
            .iter()
            .enumerate()
            .filter(|(_, host)| host.len() >= len)
            .min_by_key(|(_, host)| host.len())?;
        Some(self.0.swap_remove(index))
    }

    /// Keeps the buffers of `saved` (a sleep that did not complete, or a
    /// completed wake).
    fn keep(&mut self, saved: impl IntoIterator<Item = Saved>) {
        self.0.extend(saved.into_iter().map(|saved| saved.host));
    }

    /// Bytes kept.
    pub(in crate::pool) fn bytes(&self) -> usize {
        self.0.iter().map(PinnedHostBuf::len).sum()
    }

    /// The host addresses of the spares (for a leak check's list of what
    /// the pool keeps).
    #[cfg(feature = "testing")]
    pub(in crate::pool) fn addresses(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().map(|host| host.as_ptr() as u64)
    }

    /// Frees every spare.
    pub(in crate::pool) fn clear(&mut self) {
        self.0.clear();
    }
}

/// wake, whichever way it ended): the gate of every arena left asleep
/// stays closed.
fn open_awake(arenas: &[Arena]) {
    for arena in arenas.iter().filter(|arena| arena.asleep.is_none()) {
        arena.gate.open();
    }
}

/// Puts every awake arena to sleep, offloading the live blocks of the
/// arenas whose tag is in `offload`.
///
/// The point in time (see `docs/pools.md`): the gates of the arenas are
/// closed first, so no use of their blocks through an `Ordered` starts
/// from then on ([`Error::PoolAsleep`]), and the uses under way (host
/// copies, work being queued) end; then the device is fenced, so the work
/// queued before is finished, and only then are the blocks copied out. A
/// sleep that fails opens the gates of the arenas it leaves awake.
pub(in crate::pool) fn sleep(
    arenas: &mut [Arena],
    device: &Device,
    offload: &[&str],
    stats: &mut PoolStats,
    spares: &mut Spares,
) -> Result<()> {
    const API: &str = "DevicePool::sleep";
    let targets: Vec<usize> = (0..arenas.len()).filter(|&i| arenas[i].asleep.is_none()).collect();
    if targets.is_empty() {
        return Ok(());
    }
    if let Some(&shared) = targets.iter().find(|&&i| arenas[i].is_shared()) {
        return Err(Error::invalid(
            Call::rust(API),
            format!(
                "memory tagged `{}` is shared with another process (a BlockExport lives): drop the exports first",
                arenas[shared].tag
            ),
        ));
    }
    for &i in &targets {
        arenas[i].gate.shut();
    }
    for &i in &targets {
        arenas[i].gate.close();
    }
    let slept = offload_and_unmap(arenas, &targets, device, offload, stats, spares);
    open_awake(arenas);
    slept
}

/// The steps of [`sleep`] once the gates of `targets` are closed.
fn offload_and_unmap(
    arenas: &mut [Arena],
    targets: &[usize],
    device: &Device,
    offload: &[&str],
    stats: &mut PoolStats,
    spares: &mut Spares,
) -> Result<()> {
    const API: &str = "DevicePool::sleep";
    // The fence: every use of the pool's memory queued so far, on any
    // stream of the owning device, is finished (no use of it can start
    // now: the gates are closed).
    device.synchronize()?;
    for &i in targets {
        for class in &mut arenas[i].classes {
            let mut unproven = None;
            for range in class.free.ranges_past_mut(0) {
                if let Settled::Unproven(error) = range.tracks.settle(API) {
                    unproven = Some(error);
                    break;
                }
            }
            class.free.recount();
            if let Some(error) = unproven {
                return Err(error);
            }
        }
    }
    // Copies out; a failure keeps the buffers of the copies made so far as
    // spares.
    let mut saved = Vec::with_capacity(targets.len());
    for &i in targets {
        let arena = &arenas[i];
        if !offload.contains(&arena.tag.as_str()) {
            saved.push(None);
            continue;
        }
        match offload_arena(arena, device, spares) {
            Ok(copied) => saved.push(copied),
            Err(error) => {
                spares.keep(saved.into_iter().flatten());
                return Err(error);
            }
        }
    }
    // Unmaps; the physical memory stays in each segment as spare chunks,
    // so a failure maps the same memory back, with its contents.
    let originals: Vec<[usize; 2]> = targets
        .iter()
        .map(|&i| [0, 1].map(|class| arenas[i].classes[class].segment.size()))
        .collect();
    let mut unmapped: Vec<(usize, usize, usize)> = Vec::new();
    for &i in targets {
        for class in 0..2 {
            match arenas[i].classes[class].segment.suspend() {
                Ok(bytes) => unmapped.push((i, class, bytes)),
                Err(error) => {
                    for &(i, class, size) in unmapped.iter().rev() {
                        if let Err(undo) = arenas[i].classes[class].segment.resume(size) {
                            log::error!(
                                "{API}: mapping tag `{}` again after `{error}` failed ({undo}); it stays asleep \
                                 until a wake maps it",
                                arenas[i].tag
                            );
                        }
                    }
                    keep_unmapped_asleep(arenas, targets, &originals, saved, spares);
                    account(arenas, stats);
                    return Err(error);
                }
            }
        }
    }
    // Commit: the physical memory goes back to the device (with the
    // chunks' cached exports, which no one outside holds).
    for &i in targets {
        for class in &arenas[i].classes {
            if let Err(error) = class.segment.release_spare() {
                log::warn!(
                    "{API}: tag `{}`: {error}; the chunk is kept for the wake to map again",
                    arenas[i].tag
                );
            }
        }
    }
    for ((&i, sizes), saved) in targets.iter().zip(originals).zip(saved) {
        arenas[i].asleep = Some(Asleep { sizes, saved });
    }
    for &(i, class, size) in &unmapped {
        stats.chunks_unmapped += (size / arenas[i].classes[class].segment.chunk_size()) as u64;
    }
    stats.sleeps += 1;
    account(arenas, stats);
    Ok(())
}

/// After a sleep failed and its undo failed too: a target arena whose
/// segments are not all mapped as before is put to sleep as it is (its
/// allocations are refused; a wake maps it and restores its offloaded
/// contents); the offloads of the others go back to the spares.
fn keep_unmapped_asleep(
    arenas: &mut [Arena],
    targets: &[usize],
    originals: &[[usize; 2]],
    saved: Vec<Option<Saved>>,
    spares: &mut Spares,
) {
    for ((&i, &sizes), saved) in targets.iter().zip(originals).zip(saved) {
        let now = [0, 1].map(|class| arenas[i].classes[class].segment.size());
        if now == sizes {
            spares.keep(saved);
        } else {
            arenas[i].asleep = Some(Asleep { sizes, saved });
        }
    }
}

/// The sleeping arenas that a wake of `tags` (all: `None`) wakes.
fn wake_targets(arenas: &[Arena], tags: Option<&[&str]>) -> Vec<usize> {
    (0..arenas.len())
        .filter(|&i| arenas[i].asleep.is_some() && tags.is_none_or(|tags| tags.contains(&arenas[i].tag.as_str())))
        .collect()
}

/// The bytes a wake of `tags` maps again: what the pool's reserved
/// memory grows by.
pub(in crate::pool) fn wake_growth(arenas: &[Arena], tags: Option<&[&str]>) -> usize {
    wake_targets(arenas, tags)
        .into_iter()
        .map(|i| {
            let sizes = arenas[i].asleep.as_ref().map_or([0; 2], |asleep| asleep.sizes);
            let classes = arenas[i].classes.iter();
            classes
                .zip(sizes)
                .map(|(class, size)| size.saturating_sub(class.segment.size()))
                .sum::<usize>()
        })
        .sum()
}

/// Wakes the sleeping arenas whose tag is in `tags` (all with `None`).
pub(in crate::pool) fn wake(
    arenas: &mut [Arena],
    tags: Option<&[&str]>,
    stats: &mut PoolStats,
    spares: &mut Spares,
) -> Result<()> {
    let targets = wake_targets(arenas, tags);
    if targets.is_empty() {
        return Ok(());
    }
    let woken = map_and_restore(arenas, &targets, stats, spares);
    // The blocks of the woken tags may be used again.
    open_awake(arenas);
    woken
}

/// The steps of [`wake`] for the sleeping arenas `targets`.
fn map_and_restore(arenas: &mut [Arena], targets: &[usize], stats: &mut PoolStats, spares: &mut Spares) -> Result<()> {
    let mut mapped: Vec<(usize, usize, usize)> = Vec::new();
    for &i in targets {
        let sizes = arenas[i].asleep.as_ref().map_or([0; 2], |asleep| asleep.sizes);
        for (class, &size) in sizes.iter().enumerate() {
            let segment = &arenas[i].classes[class].segment;
            let before = segment.size();
            if let Err(error) = segment.resume(size) {
                return Err(undo_wake(arenas, &mapped, error));
            }
            mapped.push((i, class, size - before.min(size)));
        }
    }
    for &i in targets {
        if let Err(error) = restore(&arenas[i]) {
            return Err(undo_wake(arenas, &mapped, error));
        }
    }
    // Commit: the offloaded copies' buffers are kept for the next sleep.
    for &i in targets {
        if let Some(asleep) = arenas[i].asleep.take() {
            spares.keep(asleep.saved);
        }
    }
    for &(i, class, size) in &mapped {
        stats.chunks_mapped += (size / arenas[i].classes[class].segment.chunk_size()) as u64;
    }
    stats.wakes += 1;
    account(arenas, stats);
    stats.note_reserved_peak();
    Ok(())
}

/// Unmaps and frees again what a failed wake mapped; returns `error`.
fn undo_wake(arenas: &[Arena], mapped: &[(usize, usize, usize)], error: Error) -> Error {
    for &(i, class, _) in mapped.iter().rev() {
        let segment = &arenas[i].classes[class].segment;
        if let Err(undo) = segment.suspend().and_then(|_| segment.release_spare()) {
            log::error!(
                "DevicePool::wake: giving tag `{}` back after `{error}` failed ({undo}); it stays asleep with that \
                 memory",
                arenas[i].tag
            );
        }
    }
    error
}

/// Copies the live blocks of `arena` to a pinned buffer: a spare, or a new
/// one. A failed copy keeps the buffer as a spare.
fn offload_arena(arena: &Arena, device: &Device, spares: &mut Spares) -> Result<Option<Saved>> {
    let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
    for (class, segment) in arena.classes.iter().map(|class| &class.segment).enumerate() {
        for (offset, len) in segment.live_ranges() {
            match ranges.last_mut() {
                // Neighbouring blocks are copied as one range.
                Some((last_class, last_offset, last_len))
                    if *last_class == class && last_offset.checked_add(*last_len) == Some(offset) =>
                {
                    *last_len += len;
                }
                _ => ranges.push((class, offset, len)),
            }
        }
    }
    // Mapped bytes of one tag: the sum fits (checked all the same).
    let total = ranges
        .iter()
        .try_fold(0usize, |total, &(_, _, len)| total.checked_add(len))
        .ok_or_else(|| {
            Error::invalid(
                Call::rust("DevicePool::sleep"),
                "the live blocks of a tag overflow usize",
            )
        })?;
    if total == 0 {
        return Ok(None);
    }
    let mut host = match spares.take(total) {
        Some(spare) => spare,
        // SAFETY: nothing reads the buffer before the copies below have
        // written its first `total` bytes (the ranges fill them exactly),
        // and only those are read back; on a failure it is kept unread.
        None => unsafe { PinnedHostBuf::<u8>::uninit(device, total) }?,
    };
    let base = host.as_mut_ptr();
    let mut at = 0;
    for &(class, offset, len) in &ranges {
        // A backup, not a use of the values: padding past a block's
        // length, or a block not yet written, is copied as it is.
        let copied = ascend_sys::soft::sanitize_opaque(|| {
            // SAFETY: `at + len <= total <= host.len()`, so the destination
            // lies inside the buffer, which this function owns for the
            // whole call.
            unsafe { arena.classes[class].segment.copy_out(offset, base.add(at).cast(), len) }
        });
        if let Err(error) = copied {
            spares.0.push(host);
            return Err(error);
        }
        at += len;
    }
    Ok(Some(Saved { ranges, host }))
}

/// Copies the offloaded contents of `arena` back to its (mapped) segments.
fn restore(arena: &Arena) -> Result<()> {
    let Some(saved) = arena.asleep.as_ref().and_then(|asleep| asleep.saved.as_ref()) else {
        return Ok(());
    };
    let base = saved.host.as_ptr();
    let mut at = 0;
    for &(class, offset, len) in &saved.ranges {
        // SAFETY: the source lies inside the buffer (as when it was
        // written); the device bytes belong to blocks of a sleeping tag,
        // which nothing may use until this wake completes.
        unsafe { arena.classes[class].segment.copy_in(offset, base.add(at).cast(), len) }?;
        at += len;
    }
    Ok(())
}

/// The statistics that follow from the arenas' state.
fn account(arenas: &[Arena], stats: &mut PoolStats) {
    stats.reserved = arenas.iter().map(Arena::mapped).sum();
    stats.offloaded = arenas
        .iter()
        .filter_map(|arena| arena.asleep.as_ref())
        .map(Asleep::offloaded)
        .sum();
}
