// The BM cannot be uninitialised while a pool of it lives.
use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
use ascend::Device;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let store = StoreUrl::parse("tcp://127.0.0.1:8570")?;
    let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    let member = pool.join()?;
    drop(member);
    drop(bm);
    drop(pool);
    Ok(())
}
