// Host to host is not a MemFabric copy: it does not compile.
use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
use ascend::{Device, PinnedHostBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let store = StoreUrl::parse("tcp://127.0.0.1:8570")?;
    let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    let member = pool.join()?;
    let mut a = PinnedHostBuf::<u8>::zeroed(&device, 64)?;
    let mut b = PinnedHostBuf::<u8>::zeroed(&device, 64)?;
    let a_side = member.register_host(&mut a)?;
    let mut b_side = member.register_host(&mut b)?;
    member.copy(a_side.read(), b_side.write())?;
    Ok(())
}
