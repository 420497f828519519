// The member cannot leave while a registration borrows it.
use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
use ascend::{Device, DeviceBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let store = StoreUrl::parse("tcp://127.0.0.1:8570")?;
    let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    let member = pool.join()?;
    let mut kv = DeviceBuf::<u8>::zeroed(&device, 64)?;
    let kv_side = member.register_device(&mut kv)?;
    member.leave()?;
    drop(kv_side);
    Ok(())
}
