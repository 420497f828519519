//! A framework's own block type works wherever a `DeviceBuf` does: a toy
//! caching pool hands out blocks of memory it got from
//! `DeviceBuf::into_raw`, the block type implements `DeviceStorage` /
//! `DeviceStorageMut`, and it is used for synchronous copies (through typed
//! views), scoped copies, owned transfers and IPC export. Length and
//! alignment are checked as for a buffer, blocks go back to the pool when
//! the SDK drops them, and nothing leaks.
//!
//! The tests run inside leak checks on the software device (one at a time,
//! so the pool's counts and the live counts are not disturbed by the
//! others); on hardware the bodies run without the check.

mod common;

use ascend::memory::{DeviceStorage, DeviceStorageMut};
use ascend::share::IpcExport;
use ascend::stream::{Ordered, Stream};
use ascend::testing::on_software_device;
use ascend::{Device, DeviceBuf, DeviceSlice, DeviceSliceMut, Error, PinnedHostBuf};
use common::{device, on_software, software_only};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// Runs `body` inside a leak check on the software device.
fn checked(body: impl FnOnce()) {
    if on_software() {
        on_software_device(body);
    } else {
        body();
    }
}

/// A caching pool of fixed-size blocks. It owns every allocation it made
/// (as raw parts) and frees them when the last handle to it is dropped.
struct Pool {
    device: Device,
    block_bytes: usize,
    /// Addresses of free blocks (stored as integers: never dereferenced).
    free: Mutex<Vec<usize>>,
    /// Addresses of every allocation, to free at the end.
    all: Mutex<Vec<usize>>,
}

impl Pool {
    fn new(device: &Device, block_bytes: usize) -> Arc<Self> {
        Arc::new(Self {
            device: device.clone(),
            block_bytes,
            free: Mutex::new(Vec::new()),
            all: Mutex::new(Vec::new()),
        })
    }

    /// A block: a cached one if any, else a new allocation.
    fn take(self: &Arc<Self>) -> ascend::Result<Block> {
        let cached = self.free.lock().unwrap().pop();
        let address = match cached {
            Some(address) => address,
            None => {
                // SAFETY: every byte is written before it is read (each
                // test fills a block before reading it back).
                let buf = unsafe { DeviceBuf::<u8>::uninit(&self.device, self.block_bytes) }?;
                let (address, _, _) = buf.into_raw();
                self.all.lock().unwrap().push(address as usize);
                address as usize
            }
        };
        Ok(Block {
            address,
            pool: Arc::clone(self),
        })
    }

    fn cached(&self) -> usize {
        self.free.lock().unwrap().len()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for &address in self.all.get_mut().unwrap().iter() {
            // SAFETY: an allocation of `block_bytes` bytes on `device` that
            // `DeviceBuf::into_raw` gave up; no block is left (each holds
            // the pool), so nothing else uses it, and it is freed once.
            drop(unsafe { DeviceBuf::<u8>::from_raw(address as *mut c_void, self.block_bytes, &self.device) });
        }
    }
}

/// A block of the pool; dropping it gives it back.
struct Block {
    address: usize,
    pool: Arc<Pool>,
}

// SAFETY: the block's range is one allocation of the pool on the pool's
// device, handed to one block at a time; the pool frees it only when it is
// dropped, which waits for every block (each holds an `Arc` of it), so a
// leaked block keeps it allocated. Address, size and device never change.
// Its bytes are written only through `&mut Block` or by value.
unsafe impl DeviceStorage for Block {
    fn device(&self) -> &Device {
        &self.pool.device
    }

    fn device_ptr(&self) -> *const c_void {
        self.address as *const c_void
    }

    fn byte_len(&self) -> usize {
        self.pool.block_bytes
    }
}

// SAFETY: a block is the only holder of its range until it is dropped.
unsafe impl DeviceStorageMut for Block {}

impl Drop for Block {
    fn drop(&mut self) {
        self.pool.free.lock().unwrap().push(self.address);
    }
}

/// The reason of an `Error::InvalidArgument`, or a panic naming what came
/// instead.
fn refusal<T: std::fmt::Debug>(result: ascend::Result<T>) -> String {
    match result {
        Err(Error::InvalidArgument { reason, .. }) => reason,
        other => panic!("expected Error::InvalidArgument, got {other:?}"),
    }
}

fn pattern(len: usize, seed: u32) -> Vec<u32> {
    (0..len as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ seed).collect()
}

#[test]
fn a_user_block_takes_part_in_stream_ordered_transfers() {
    checked(|| {
        let device = device();
        let stream = Arc::new(Stream::new(&device).unwrap());
        let pool = Pool::new(&device, 4096);
        let block = Ordered::new(pool.take().unwrap());
        let data = pattern(1024, 7);

        // Upload into the block, queued; the host reads it back after it.
        let host = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
        block.copy_from_host(&host, &stream).unwrap();
        assert_eq!(block.view().to_vec::<u32>().unwrap(), data);

        // Download from it, queued, into other host memory.
        let back = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 1024).unwrap());
        back.copy_from_device(&block, &stream).unwrap();
        assert_eq!(&back.into_inner().unwrap()[..], &data[..]);

        // Same bytes, another element type on the host side.
        let bytes = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 4096).unwrap());
        bytes.copy_from_device(&block, &stream).unwrap();
        assert_eq!(&bytes.into_inner().unwrap()[..], bytemuck::cast_slice::<u32, u8>(&data));

        // A length mismatch is refused before anything is queued.
        let short = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 1023).unwrap());
        let refused = block.copy_from_host(&short, &stream).unwrap_err();
        assert!(
            matches!(&refused, Error::InvalidArgument { reason, .. } if reason.contains("4096 bytes")),
            "{refused}"
        );

        // Taken back (after its queued uses), then dropped: back in the pool.
        let block = block.into_inner().unwrap();
        assert_eq!(pool.cached(), 0);
        drop(block);
        assert_eq!(pool.cached(), 1);

        // The cached block is reused, with its contents.
        let block = pool.take().unwrap();
        assert_eq!(pool.cached(), 0);
        assert_eq!(
            DeviceSlice::<u32>::from_storage(&block).unwrap().to_vec().unwrap(),
            data
        );
        drop(block);
        drop(pool);
    });
}

#[test]
fn a_user_block_takes_part_in_copies() {
    checked(|| {
        let device = device();
        let pool = Pool::new(&device, 64);
        let (mut first, mut second) = (pool.take().unwrap(), pool.take().unwrap());

        // Synchronous copies through typed views.
        let words = pattern(16, 3);
        DeviceSliceMut::<u32>::from_storage(&mut first)
            .unwrap()
            .write_from_host(&words)
            .unwrap();
        DeviceSliceMut::<u64>::from_storage(&mut second)
            .unwrap()
            .copy_from_device(&DeviceSlice::<u64>::from_storage(&first).unwrap())
            .unwrap();
        assert_eq!(
            DeviceSlice::<u32>::from_storage(&second).unwrap().to_vec().unwrap(),
            words
        );

        // Between a block and a DeviceBuf.
        let mut buf = DeviceBuf::<u32>::zeroed(&device, 16).unwrap();
        buf.as_mut_slice()
            .copy_from_device(&DeviceSlice::from_storage(&second).unwrap())
            .unwrap();
        assert_eq!(buf.to_vec().unwrap(), words);

        // Scoped asynchronous copies: the views borrow the blocks until the
        // scope has synchronised.
        let stream = Stream::new(&device).unwrap();
        let mut out = vec![0u32; 16];
        let zeros = [0u8; 64];
        stream
            .scope(|s| {
                let held = s.hold_device(DeviceSliceMut::<u8>::from_storage(&mut first)?);
                s.copy_to_device(&zeros, held)?;
                s.copy_on_device(&buf, DeviceSliceMut::from_storage(&mut second)?)?;
                s.copy_to_host(&buf, &mut out)
            })
            .unwrap();
        assert_eq!(out, words);
        assert_eq!(
            DeviceSlice::<u8>::from_storage(&first).unwrap().to_vec().unwrap(),
            [0; 64]
        );
        assert_eq!(
            DeviceSlice::<u32>::from_storage(&second).unwrap().to_vec().unwrap(),
            words
        );
    });
}

#[test]
fn views_of_storage_check_length_and_alignment() {
    checked(|| {
        let device = device();
        let pool = Pool::new(&device, 6);
        let mut block = pool.take().unwrap();
        assert_eq!(DeviceSlice::<u16>::from_storage(&block).unwrap().len(), 3);
        assert!(refusal(DeviceSlice::<u32>::from_storage(&block)).contains("whole number"));
        assert!(refusal(DeviceSliceMut::<()>::from_storage(&mut block)).contains("zero-sized"));

        // A storage that is a sub-range of a block (as a sub-allocator's
        // piece of a cached allocation would be): `len` bytes at `offset`.
        struct Piece<'a> {
            block: &'a Block,
            offset: usize,
            len: usize,
        }
        // SAFETY: a sub-range of a live block, only read, while the block
        // is borrowed. (A borrowing type is fine for views, which keep the
        // borrow; owned transfers take `'static` storage only.)
        unsafe impl DeviceStorage for Piece<'_> {
            fn device(&self) -> &Device {
                self.block.device()
            }
            fn device_ptr(&self) -> *const c_void {
                (self.block.address + self.offset) as *const c_void
            }
            fn byte_len(&self) -> usize {
                self.len
            }
        }
        let piece = |offset, len| Piece {
            block: &block,
            offset,
            len,
        };
        // Whole u16s at an odd address; whole u32s at an address that is
        // 2 mod 4: both misaligned.
        assert!(refusal(DeviceSlice::<u16>::from_storage(&piece(1, 4))).contains("aligned"));
        assert!(refusal(DeviceSlice::<u32>::from_storage(&piece(2, 4))).contains("aligned"));
        assert_eq!(DeviceSlice::<u16>::from_storage(&piece(2, 4)).unwrap().len(), 2);
        assert_eq!(DeviceSlice::<u8>::from_storage(&piece(1, 5)).unwrap().len(), 5);
        assert!(refusal(DeviceSlice::<u16>::from_storage(&piece(0, 5))).contains("whole number"));
    });
}

#[test]
fn shared_and_boxed_storage() {
    checked(|| {
        let device = device();
        let stream = Stream::new(&device).unwrap();
        let data = pattern(256, 11);

        // A buffer shared by two owners is read by a queued download.
        let stream = Arc::new(stream);
        let shared = Arc::new(DeviceBuf::from_slice(&device, &data).unwrap());
        let other_owner = Arc::clone(&shared);
        let source = Ordered::new(shared);
        let host = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 256).unwrap());
        host.copy_from_device(&source, &stream).unwrap();
        assert_eq!(host.view().with_host(|h| h.to_vec()).unwrap(), data);
        let returned = source.into_inner().unwrap();
        assert!(Arc::ptr_eq(&returned, &other_owner));

        // A boxed trait object of a user block is written by a queued upload.
        let pool = Pool::new(&device, 1024);
        let boxed: Box<dyn DeviceStorageMut> = Box::new(pool.take().unwrap());
        let boxed = Ordered::new(boxed);
        boxed.copy_from_host(&host, &stream).unwrap();
        let boxed = boxed.into_inner().unwrap();
        assert_eq!(
            DeviceSlice::<u32>::from_storage(&boxed).unwrap().to_vec().unwrap(),
            data
        );
    });
}

#[test]
fn a_user_block_is_exported_by_key() {
    checked(|| {
        let device = device();
        let pool = Pool::new(&device, 4096);
        let block = pool.take().unwrap();
        let before = ascend::sys::soft::live().ipc_keys;
        let export = IpcExport::new(&block).unwrap();
        assert!(export.key().to_string().starts_with("ipc:4096:"), "{}", export.key());
        software_only(|| assert_eq!(ascend::sys::soft::live().ipc_keys, before + 1));
        export.close().unwrap();
        software_only(|| assert_eq!(ascend::sys::soft::live().ipc_keys, before));

        // Empty storage is refused before any call.
        let empty = DeviceBuf::<u8>::zeroed(&device, 0).unwrap();
        assert!(matches!(IpcExport::new(&empty), Err(Error::InvalidArgument { .. })));
    });
}
