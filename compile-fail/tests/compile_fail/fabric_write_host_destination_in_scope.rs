// The host destination of a queued copy cannot be touched inside the scope:
// the copy may still be writing it.
use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
use ascend::{Device, PinnedHostBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let store = StoreUrl::parse("tcp://127.0.0.1:8570")?;
    let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    let member = pool.join()?;
    let mut host = PinnedHostBuf::<u8>::zeroed(&device, 64)?;
    let mut host_side = member.register_host(&mut host)?;
    let dram = member.peer_dram(0)?.slice(..64)?;
    member.scope(|s| {
        s.copy(dram, host_side.write())?;
        host_side.as_mut_slice()[0] = 1;
        Ok(())
    })?;
    Ok(())
}
