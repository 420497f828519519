//! `ascend::fabric` when MemFabric fails, with the software fabric's fault
//! injection, each body in a child process: typed errors from copies and
//! batches; a failed wait retried, and a scope whose copies cannot be
//! proven finished aborting the process; failures while undoing returned
//! by the explicit methods and logged by drop, leaving nothing behind.

mod fabric_common;

use ascend::fabric::sys::{self, soft::Fault, soft::inject_fault};
use ascend::fabric::{BigMemory, BmConfig, FabricError, PoolOptions, StoreUrl, Transport};
use ascend::sys::soft;
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use fabric_common::{in_child, in_child_aborting};

fn world(port: u16, device: &Device) -> BigMemory {
    let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}")).expect("a URL");
    BigMemory::init(&store, 1, device, &BmConfig::default()).expect("a BM world of one")
}

fn options() -> PoolOptions {
    PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20)
}

fn inject(api: &str, nth: u64, fault: Fault) {
    inject_fault(api, nth, fault).expect("a fault armed");
}

#[test]
fn copy_and_batch_failures_are_typed() {
    in_child("copy_and_batch_failures_are_typed", |port| {
        let device = Device::new(0).expect("device 0");
        let bm = world(port, &device);
        let pool = bm.create_pool(1, &options()).expect("a pool");
        let member = pool.join().expect("join");
        let mut host = PinnedHostBuf::from_slice(&device, &[4u8; 8192]).expect("pinned");
        let registered = member.register_host(&mut host).expect("register");
        let dram = member.peer_dram(0).expect("DRAM");

        inject("smem_bm_copy", 1, Fault::Fail(sys::SMEM_TIMEOUT));
        let error = member
            .copy(registered.read(), dram.slice(..8192).expect("8 KiB"))
            .expect_err("the injected failure");
        assert!(
            matches!(
                error,
                FabricError::PeerUnreachable {
                    api: "smem_bm_copy",
                    code: sys::SMEM_TIMEOUT,
                    ..
                }
            ),
            "{error}"
        );

        inject(
            "smem_bm_copy_batch",
            1,
            Fault::BatchEntry {
                entry: 1,
                code: sys::SMEM_ERROR,
            },
        );
        let error = member
            .copy_batch(&[
                (
                    registered.slice(..4096).expect("4 KiB"),
                    dram.slice(..4096).expect("4 KiB"),
                ),
                (
                    registered.slice(4096..).expect("4 KiB"),
                    dram.slice(4096..8192).expect("4 KiB"),
                ),
            ])
            .expect_err("a partial failure");
        assert_eq!(error.code(), Some(sys::SMEM_PARTIAL_FAILED), "{error}");

        // A timeout while creating and joining: typed, and nothing is held.
        inject("smem_bm_create2", 1, Fault::Fail(sys::SMEM_NO_RESOURCES));
        let error = bm.create_pool(2, &options()).expect_err("the injected failure");
        assert_eq!(error.code(), Some(sys::SMEM_NO_RESOURCES), "{error}");
        let second = bm.create_pool(2, &options()).expect("pool 2 after the failure");
        inject("smem_bm_join", 1, Fault::Fail(sys::SMEM_TIMEOUT));
        assert_eq!(
            second.join().expect_err("the injected failure").code(),
            Some(sys::SMEM_TIMEOUT)
        );
        drop(second.join().expect("join after the failure"));
    });
}

#[test]
fn a_failed_wait_is_retried_and_its_error_returned() {
    in_child("a_failed_wait_is_retried_and_its_error_returned", |port| {
        let device = Device::new(0).expect("device 0");
        let bm = world(port, &device);
        let pool = bm.create_pool(1, &options()).expect("a pool");
        let member = pool.join().expect("join");
        let mut source = DeviceBuf::from_slice(&device, &[6u8; 4096]).expect("device");
        let mut back = PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("pinned");
        let source_side = member.register_device(&mut source).expect("register");
        let mut back_side = member.register_host(&mut back).expect("register");
        let hbm = member.peer_hbm(0).expect("HBM").slice(..4096).expect("4 KiB");

        inject("smem_bm_wait", 1, Fault::Fail(sys::SMEM_ERROR));
        let error = member
            .scope(|s| {
                s.copy(source_side.read(), hbm)?;
                s.copy(hbm, back_side.write())
            })
            .expect_err("the first wait's error");
        assert!(
            matches!(
                error,
                FabricError::Call {
                    api: "smem_bm_wait",
                    code: sys::SMEM_ERROR,
                    ..
                }
            ),
            "{error}"
        );
        // The second wait proved the copies finished.
        assert_eq!(back_side.as_slice(), &[6u8; 4096][..]);
        member.scope(|_| Ok(())).expect("the next scope waits normally");
    });
}

#[test]
fn a_scope_whose_copies_cannot_be_proven_finished_aborts() {
    let output = in_child_aborting("a_scope_whose_copies_cannot_be_proven_finished_aborts", |port| {
        let device = Device::new(0).expect("device 0");
        let bm = world(port, &device);
        let pool = bm.create_pool(1, &options()).expect("a pool");
        let member = pool.join().expect("join");
        let mut back = PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("pinned");
        let mut back_side = member.register_host(&mut back).expect("register");
        let dram = member.peer_dram(0).expect("DRAM").slice(..4096).expect("4 KiB");
        inject("smem_bm_wait", 1, Fault::Fail(sys::SMEM_ERROR));
        inject("smem_bm_wait", 2, Fault::Fail(sys::SMEM_TIMEOUT));
        let _ = member.scope(|s| s.copy(dram, back_side.write()));
        unreachable!("the scope returned without proving its copies finished");
    });
    assert!(
        output.contains("aborting: Member::scope on pool 1 (rank 0) cannot prove its asynchronous copies finished"),
        "{output}"
    );
    assert!(
        output.contains("SMEM_ERROR (-1)") && output.contains("SMEM_TIMEOUT (-2004)"),
        "{output}"
    );
}

#[test]
fn failures_while_undoing_are_returned_or_logged_and_nothing_is_left() {
    in_child(
        "failures_while_undoing_are_returned_or_logged_and_nothing_is_left",
        |port| {
            let device = Device::new(0).expect("device 0");
            let before = soft::live();
            {
                let bm = world(port, &device);
                let pool = bm.create_pool(1, &options()).expect("a pool");
                let member = pool.join().expect("join");
                let mut kv = DeviceBuf::<u8>::zeroed(&device, 4096).expect("device");
                let mut host = PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("pinned");
                inject("smem_bm_unregister_user_mem", 1, Fault::Fail(sys::SMEM_ERROR));
                let error = member
                    .register_device(&mut kv)
                    .expect("register")
                    .unregister()
                    .expect_err("the injected failure");
                assert_eq!(error.code(), Some(sys::SMEM_ERROR));
                kv.free().expect("the buffer is free again");
                inject("smem_bm_unregister_user_mem", 1, Fault::Fail(sys::SMEM_ERROR));
                drop(member.register_host(&mut host).expect("register")); // logged
                host.free().expect("the buffer is free again");
                inject("smem_bm_leave", 1, Fault::Fail(sys::SMEM_ERROR));
                assert_eq!(
                    member.leave().expect_err("the injected failure").code(),
                    Some(sys::SMEM_ERROR)
                );
                inject("smem_bm_leave", 1, Fault::Fail(sys::SMEM_ERROR));
                drop(pool.join().expect("join again")); // logged
            }
            assert_eq!(soft::live(), before, "left behind:\n{}", soft::leak_report());
        },
    );
}
