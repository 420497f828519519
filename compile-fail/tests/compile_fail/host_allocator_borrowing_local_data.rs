// A registered allocator must be `'static`: a forgotten registration would
// leave the runtime calling into borrowed data that no longer exists.
use ascend::allocator::{AllocatorRegistration, Block, DeviceAllocator};
use ascend::{Device, stream::Stream};
use std::sync::Arc;

struct Borrowing<'a>(&'a [u8]);

// SAFETY: it never returns a block.
unsafe impl DeviceAllocator for Borrowing<'_> {
    fn alloc(&self, _: usize) -> Option<Block> {
        None
    }
    fn free(&self, _: Block) {}
}

fn main() -> ascend::Result<()> {
    let stream = Stream::new(&Device::new(0)?)?;
    let local = vec![0u8; 16];
    let registration = AllocatorRegistration::register(&stream, Arc::new(Borrowing(&local)))?;
    std::mem::forget(registration);
    Ok(())
}
