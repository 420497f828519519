//! A framework's tensor layer on the owned forms, in safe code only:
//!
//! - `Tensor<T>` is `'static + Send + Sync`: its storage is a block of an
//!   expandable segment, kept in an `Arc` and ordered across streams
//!   (`Ordered<SegmentBlock>`), for f32, i32, u8, f16 and bf16;
//! - a caching sub-allocator places tensors in the segment (best fit over
//!   the gaps, growing the segment a chunk at a time, and keeping the
//!   chunks mapped for the next tensors);
//! - a two-stream pipeline uploads batches through two pinned staging
//!   buffers: the host refills one while the other is in flight, and the
//!   "compute" stream is ordered after each upload by the tensors alone;
//! - a tensor is a view of its storage: copies move its own elements
//!   only, and two threads write two halves of one storage at once;
//! - a tensor is used from two threads, and one allocated for sharing (in
//!   `aclrtMalloc` memory, which IPC keys name) is shared with a child
//!   process through a key that holds its share of the tensor.
//!
//! Every byte is checked; the example prints what it checked.
//!
//! f16 and bf16 are `half`'s, with its feature `bytemuck` (which makes them
//! `Pod`): `half = { version = "2", features = ["bytemuck"] }`, as in
//! `examples/Cargo.toml`. The SDK itself does not depend on `half`.
//!
//! Run: `cargo run --example tensor_layer`

use ascend::memory::DeviceStorageMut;
use ascend::share::{IpcImport, IpcKey, OwnedIpcExport, Pid, PidValidation};
use ascend::stream::{Ordered, OrderedView, Stream};
use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SegmentBlock, SharedSegment};
use ascend::{Device, DeviceBuf, Error, PinnedHostBuf, Result};
use bytemuck::Pod;
use half::{bf16, f16};
use std::io::{BufRead, BufReader, Write};
use std::marker::PhantomData;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// Offsets and sizes of tensors are multiples of this.
const ALIGN: usize = 512;

// ---- the allocator ------------------------------------------------------

/// Places blocks in one shared expandable segment: best fit over the gaps
/// between live blocks, growing the segment when none fits. Chunks stay
/// mapped after their tensors are gone (the cache) until `empty_cache`.
struct CachingAllocator {
    segment: Arc<SharedSegment>,
    /// Serialises placement (drops elsewhere only free space).
    placing: Mutex<()>,
}

impl CachingAllocator {
    fn new(device: &Device, capacity_chunks: usize) -> Result<Self> {
        let prop = PhysicalMemProp::device(device);
        let chunk = prop.round_up(1)?;
        let segment = ExpandableSegment::new(&prop, capacity_chunks * chunk, chunk)?;
        Ok(Self {
            segment: SharedSegment::new(segment),
            placing: Mutex::new(()),
        })
    }

    /// The smallest gap of at least `len` bytes in the mapped part.
    fn best_fit(&self, len: usize) -> Option<usize> {
        let mapped = self.segment.size();
        let mut best: Option<(usize, usize)> = None; // (gap, offset)
        let mut free_from = 0;
        for (offset, block_len) in self.segment.live_ranges().into_iter().chain([(mapped, 0)]) {
            let gap = offset.saturating_sub(free_from);
            if gap >= len && best.is_none_or(|(smallest, _)| gap < smallest) {
                best = Some((gap, free_from));
            }
            free_from = (offset + block_len).next_multiple_of(ALIGN);
        }
        best.map(|(_, offset)| offset)
    }

    fn block(&self, bytes: usize) -> Result<SegmentBlock> {
        let len = bytes.max(1).next_multiple_of(ALIGN);
        let _placing = self.placing.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            if let Some(offset) = self.best_fit(len) {
                return self.segment.block(offset, len);
            }
            // Grow by the chunks the tensor needs past the last live block.
            let chunk = self.segment.chunk_size();
            let wanted = (self.segment.high_water() + len).next_multiple_of(chunk);
            let more = wanted.saturating_sub(self.segment.size()).max(chunk);
            if self.segment.size() + more > self.segment.capacity() {
                return Err(Error::external(
                    "CachingAllocator::block",
                    format!("{len} bytes do not fit the segment"),
                ));
            }
            self.segment.grow(more)?;
        }
    }

    /// Unmaps the chunks past the last live tensor.
    fn empty_cache(&self) -> Result<()> {
        let _placing = self.placing.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let keep = self.segment.high_water().next_multiple_of(self.segment.chunk_size());
        self.segment.shrink(self.segment.size() - keep)?;
        self.segment.release_spare()
    }
}

// ---- the tensor ---------------------------------------------------------

/// A typed tensor whose storage (a block of the allocator's segment by
/// default) is shared through an `Arc` and ordered across streams. A
/// tensor is a range of its storage: narrowing one shares the storage,
/// and every copy moves the tensor's own elements only (a view), never
/// the whole block.
struct Tensor<T, S = SegmentBlock> {
    storage: Arc<Ordered<S>>,
    /// First element, within the storage.
    offset: usize,
    /// Elements.
    len: usize,
    _elements: PhantomData<fn() -> T>,
}

impl<T, S> Clone for Tensor<T, S> {
    fn clone(&self) -> Self {
        Self {
            storage: Arc::clone(&self.storage),
            offset: self.offset,
            len: self.len,
            _elements: PhantomData,
        }
    }
}

impl<T: Pod> Tensor<T> {
    fn new(allocator: &CachingAllocator, len: usize) -> Result<Self> {
        let block = allocator.block(len * size_of::<T>())?;
        Ok(Self::on(block, len))
    }
}

impl<T: Pod> Tensor<T, DeviceBuf<u8>> {
    /// A tensor outside the cache, in `aclrtMalloc` memory, which IPC keys
    /// can share with other processes (segment memory is shared per chunk,
    /// by shareable handles).
    fn shareable(device: &Device, len: usize) -> Result<Self> {
        let bytes = (len * size_of::<T>()).max(1).next_multiple_of(ALIGN);
        Ok(Self::on(DeviceBuf::zeroed(device, bytes)?, len))
    }
}

impl<T: Pod, S: DeviceStorageMut> Tensor<T, S> {
    fn on(storage: S, len: usize) -> Self {
        Self {
            storage: Arc::new(Ordered::new(storage)),
            offset: 0,
            len,
            _elements: PhantomData,
        }
    }

    /// Elements `start..start + len` of this tensor, sharing its storage.
    fn narrow(&self, start: usize, len: usize) -> Result<Self> {
        if start.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(Error::external(
                "Tensor::narrow",
                format!("{start}+{len} is outside the tensor's {} elements", self.len),
            ));
        }
        Ok(Self {
            offset: self.offset + start,
            len,
            ..self.clone()
        })
    }

    /// The tensor's elements in its storage.
    fn view(&self) -> Result<OrderedView<'_, S>> {
        self.storage.elements::<T>(self.offset..self.offset + self.len)
    }

    /// A pinned buffer of the tensor's length.
    fn staging(&self, device: &Device) -> Result<Ordered<PinnedHostBuf<T>>> {
        Ok(Ordered::new(PinnedHostBuf::zeroed(device, self.len)?))
    }

    fn upload(&self, staging: &Ordered<PinnedHostBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        self.view()?.copy_from_host(staging, stream)
    }

    fn download(&self, out: &Ordered<PinnedHostBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        out.copy_from_device(self.view()?, stream)
    }

    fn copy_from<O: DeviceStorageMut>(&self, other: &Tensor<T, O>, stream: &Arc<Stream>) -> Result<()> {
        self.view()?.copy_from_device(other.view()?, stream)
    }
}

fn assert_tensor_is_shareable<T: Send + Sync + 'static>() {}

// ---- the checks ---------------------------------------------------------

/// A round trip through a tensor of `T`, byte for byte.
fn round_trip<T: Pod + PartialEq + std::fmt::Debug>(
    device: &Device,
    allocator: &CachingAllocator,
    stream: &Arc<Stream>,
    make: impl Fn(usize) -> T,
) -> Result<usize> {
    let len = 3000;
    let tensor = Tensor::<T>::new(allocator, len)?;
    let mut staging = tensor.staging(device)?;
    let data: Vec<T> = (0..staging.get_mut()?.len()).map(&make).collect();
    staging.get_mut()?.copy_from_slice(&data);
    tensor.upload(&staging, stream)?;
    let mut back = tensor.staging(device)?;
    tensor.download(&back, stream)?;
    assert_eq!(back.get_mut()?[..], data[..], "{}", std::any::type_name::<T>());
    Ok(len * size_of::<T>())
}

/// Batches through two staging buffers on an upload stream, each copied
/// on a compute stream into an output tensor; returns the bytes checked.
fn pipeline(device: &Device, allocator: &CachingAllocator) -> Result<usize> {
    const BATCHES: usize = 8;
    const LEN: usize = 64 * 1024;
    let (upload, compute) = (Arc::new(Stream::new(device)?), Arc::new(Stream::new(device)?));
    let inputs: Vec<Tensor<f32>> = (0..2).map(|_| Tensor::new(allocator, LEN)).collect::<Result<_>>()?;
    let outputs: Vec<Tensor<f32>> = (0..BATCHES)
        .map(|_| Tensor::new(allocator, LEN))
        .collect::<Result<_>>()?;
    let mut staging = [inputs[0].staging(device)?, inputs[1].staging(device)?];
    let batch = |index: usize, at: usize| (index * LEN + at) as f32 * 0.5;
    for (index, output) in outputs.iter().enumerate() {
        let slot = index % 2;
        // Waits only for this staging buffer's previous upload; the other
        // one may still be in flight.
        let host = staging[slot].get_mut()?;
        host.iter_mut()
            .enumerate()
            .for_each(|(at, value)| *value = batch(index, at));
        inputs[slot].upload(&staging[slot], &upload)?;
        // Ordered after the upload (another stream) by the tensor alone.
        output.copy_from(&inputs[slot], &compute)?;
    }
    let mut checked = 0;
    for (index, output) in outputs.iter().enumerate() {
        let mut out = output.staging(device)?;
        output.download(&out, &compute)?;
        let values = out.get_mut()?;
        for (at, value) in values.iter().enumerate() {
            assert_eq!(*value, batch(index, at), "batch {index}, element {at}");
        }
        checked += LEN * size_of::<f32>();
    }
    Ok(checked)
}

/// One tensor read by two threads, each on its own stream.
fn two_threads(device: &Device, allocator: &CachingAllocator, stream: &Arc<Stream>) -> Result<usize> {
    let tensor = Tensor::<i32>::new(allocator, 10_000)?;
    let mut staging = tensor.staging(device)?;
    let data: Vec<i32> = (0..staging.get_mut()?.len() as i32).map(|v| v * 7 - 3).collect();
    staging.get_mut()?.copy_from_slice(&data);
    tensor.upload(&staging, stream)?;
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (tensor, device) = (tensor.clone(), device.clone());
            std::thread::spawn(move || -> Result<Vec<i32>> {
                let own = Arc::new(Stream::new(&device)?);
                let mut out = tensor.staging(&device)?;
                tensor.download(&out, &own)?;
                Ok(out.get_mut()?.to_vec())
            })
        })
        .collect();
    for reader in readers {
        let read = reader
            .join()
            .map_err(|_| Error::external("two_threads", "a reader panicked"))??;
        assert_eq!(read, data);
    }
    Ok(2 * data.len() * size_of::<i32>())
}

/// Two threads write the two halves of one tensor (narrow views of one
/// storage) at once, each on its own stream: neither waits for the other,
/// and neither update is lost.
fn narrow_writers(device: &Device, allocator: &CachingAllocator) -> Result<usize> {
    const HALF: usize = 20_000;
    let tensor = Tensor::<u32>::new(allocator, 2 * HALF)?;
    let writers: Vec<std::thread::JoinHandle<Result<()>>> = (0..2)
        .map(|half| {
            let (part, device) = (tensor.narrow(half * HALF, HALF)?, device.clone());
            Ok(std::thread::spawn(move || -> Result<()> {
                let own = Arc::new(Stream::new(&device)?);
                let mut staging = part.staging(&device)?;
                for round in 0..4u32 {
                    let host = staging.get_mut()?;
                    host.iter_mut()
                        .enumerate()
                        .for_each(|(at, v)| *v = (round << 24) | ((half as u32) << 20) | at as u32);
                    part.upload(&staging, &own)?;
                }
                Ok(())
            }))
        })
        .collect::<Result<_>>()?;
    for writer in writers {
        writer
            .join()
            .map_err(|_| Error::external("narrow_writers", "a writer panicked"))??;
    }
    let mut out = tensor.staging(device)?;
    tensor.download(&out, &Arc::new(Stream::new(device)?))?;
    for (at, value) in out.get_mut()?.iter().enumerate() {
        let (half, index) = (at / HALF, at % HALF);
        assert_eq!(*value, (3 << 24) | ((half as u32) << 20) | index as u32, "element {at}");
    }
    Ok(2 * HALF * size_of::<u32>())
}

/// Shares a tensor with a child process (this example, re-run with
/// `--child`): the child checks the pattern and writes its reply.
fn child_process(device: &Device, stream: &Arc<Stream>) -> Result<usize> {
    let tensor = Tensor::<u32, _>::shareable(device, 4096)?;
    let mut staging = tensor.staging(device)?;
    staging
        .get_mut()?
        .iter_mut()
        .enumerate()
        .for_each(|(at, v)| *v = 0x1234_0000 ^ at as u32);
    tensor.upload(&staging, stream)?;
    let export = OwnedIpcExport::of_ordered(Arc::clone(&tensor.storage), PidValidation::Enforced)?;
    let mut child = Command::new(std::env::current_exe().map_err(io)?)
        .arg("--child")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(io)?;
    let (Some(mut to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(io(std::io::Error::other("no pipes to the child")));
    };
    let mut lines = BufReader::new(from_child).lines();
    let mut next = || {
        lines
            .next()
            .transpose()
            .map_err(io)?
            .ok_or_else(|| io(std::io::Error::other("child ended")))
    };
    let pid: Pid = next()?.parse()?;
    export.allow_pids(&[pid])?;
    writeln!(to_child, "{}", export.key()).map_err(io)?;
    assert_eq!(next()?, "ok", "the child's check");
    export.close()?;
    let status = child.wait().map_err(io)?;
    assert!(status.success(), "child {status}");
    let mut back = tensor.staging(device)?;
    tensor.download(&back, stream)?;
    let words = back.get_mut()?;
    for (at, word) in words.iter().enumerate() {
        assert_eq!(*word, 0x5678_0000 ^ at as u32, "word {at} of the child's reply");
    }
    Ok(words.len() * 4 * 2)
}

fn io(error: std::io::Error) -> Error {
    Error::external("tensor_layer", error)
}

/// The child: reports its pid, imports the key it is sent, checks the
/// parent's pattern and writes its reply.
fn child() -> Result<()> {
    let device = Device::new(0)?;
    println!("{}", Pid::current()?);
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).map_err(io)?;
    let key: IpcKey = line.trim().parse()?;
    let mut import = IpcImport::open(&key, &device)?;
    let words = import.as_slice::<u32>()?.to_vec()?;
    for (at, word) in words.iter().enumerate() {
        assert_eq!(*word, 0x1234_0000 ^ at as u32, "word {at} in the child");
    }
    let reply: Vec<u32> = (0..words.len() as u32).map(|at| 0x5678_0000 ^ at).collect();
    import.as_mut_slice::<u32>()?.write_from_host(&reply)?;
    import.close()?;
    println!("ok");
    Ok(())
}

/// Logs go to standard error through `env_logger`: `RUST_LOG=ascend=trace`
/// shows every allocation, free, map and unmap; `RUST_LOG=info` the backend
/// choice.
fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    if std::env::args().any(|arg| arg == "--child") {
        return child();
    }
    println!("backend: {:?}", ascend::backend()?.backend);
    assert_tensor_is_shareable::<Tensor<f32>>();
    let device = Device::new(0)?;
    let allocator = CachingAllocator::new(&device, 64)?;
    let stream = Arc::new(Stream::new(&device)?);

    let mut checked = 0;
    checked += round_trip(&device, &allocator, &stream, |i| i as f32 * 0.25)?;
    checked += round_trip(&device, &allocator, &stream, |i| i as i32 - 1000)?;
    checked += round_trip(&device, &allocator, &stream, |i| i as u8)?;
    checked += round_trip(&device, &allocator, &stream, |i| f16::from_f32(i as f32 / 8.0))?;
    checked += round_trip(&device, &allocator, &stream, |i| bf16::from_f32(i as f32 * 3.0))?;
    println!("round trips of f32, i32, u8, f16 and bf16 tensors: {checked} bytes checked");

    let piped = pipeline(&device, &allocator)?;
    println!("two-stream pipeline, 8 batches through 2 pinned staging buffers: {piped} bytes checked");
    let threads = two_threads(&device, &allocator, &stream)?;
    println!("one tensor read from two threads on their own streams: {threads} bytes checked");
    let narrow = narrow_writers(&device, &allocator)?;
    println!("two halves of one tensor written from two threads at once (views): {narrow} bytes checked");
    let shared = child_process(&device, &stream)?;
    println!("a tensor shared with a child process and written back: {shared} bytes checked");

    let mapped = allocator.segment.size();
    allocator.empty_cache()?;
    println!(
        "segment: {} chunk(s) kept mapped by the cache, {} after empty_cache",
        mapped / allocator.segment.chunk_size(),
        allocator.segment.size() / allocator.segment.chunk_size()
    );
    assert_eq!(allocator.segment.live_blocks(), 0, "every tensor is gone");
    assert_eq!(allocator.segment.size(), 0, "empty_cache unmapped every chunk");
    println!("all checks passed");
    Ok(())
}
