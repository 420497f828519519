// A stream cannot be destroyed while a custom allocator is registered on it.
use ascend::allocator::{AllocatorRegistration, Block, DeviceAllocator};
use ascend::{Device, stream::Stream};
use std::sync::Arc;

struct Never;

// SAFETY: it never returns a block.
unsafe impl DeviceAllocator for Never {
    fn alloc(&self, _: usize) -> Option<Block> {
        None
    }
    fn free(&self, _: Block) {}
}

fn main() -> ascend::Result<()> {
    let stream = Stream::new(&Device::new(0)?)?;
    let registration = AllocatorRegistration::register(&stream, Arc::new(Never))?;
    stream.destroy()?;
    registration.unregister()?;
    Ok(())
}
