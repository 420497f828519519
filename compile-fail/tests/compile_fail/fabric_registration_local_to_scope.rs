// A registration made inside the scope ends before the scope waits: its
// sides cannot be given to the scope.
use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
use ascend::{Device, DeviceBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let store = StoreUrl::parse("tcp://127.0.0.1:8570")?;
    let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    let member = pool.join()?;
    let hbm = member.peer_hbm(0)?.slice(..64)?;
    member.scope(|s| {
        let mut kv = DeviceBuf::<u8>::zeroed(&device, 64).unwrap();
        let kv_side = member.register_device(&mut kv)?;
        s.copy(kv_side.read(), hbm)?;
        Ok(())
    })?;
    Ok(())
}
