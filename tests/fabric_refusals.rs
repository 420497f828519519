//! `ascend::fabric` refuses what it can before any MemFabric call: a store
//! on another host without TLS, a world size or rank MemFabric does not
//! take, a zero timeout, a TLS path longer than its field. These hold with
//! or without a library (nothing is loaded before the refusal), on every
//! backend.

use ascend::Device;
use ascend::fabric::{BigMemory, BmConfig, FabricError, StoreSecurity, StoreTls, StoreUrl};
use std::time::Duration;

fn refused_with(result: Result<BigMemory, FabricError>, says: &str) {
    match result {
        Err(FabricError::InvalidArgument { method, reason, .. }) => {
            assert_eq!(method, "BigMemory::init");
            assert!(reason.contains(says), "{reason}");
        }
        Err(other) => panic!("expected a refused argument ({says}), got {other}"),
        Ok(_) => panic!("expected a refused argument ({says}), got a BM world"),
    }
}

#[test]
fn a_store_on_another_host_needs_tls_or_an_explicit_opt_out() {
    let device = Device::new(0).expect("device 0");
    let remote = StoreUrl::parse("tcp://192.0.2.10:8570").expect("a URL");
    let error = BigMemory::init(&remote, 2, &device, &BmConfig::default()).expect_err("plaintext across hosts");
    assert!(matches!(&error, FabricError::PlaintextStore { url, .. } if url == "tcp://192.0.2.10:8570"));
    let text = error.to_string();
    assert!(
        text.contains("TLS is off") && text.contains("plaintext_across_hosts"),
        "{text}"
    );
    // The opt-out and TLS get past the check (to the argument checks below,
    // which refuse the world size: still no call).
    for security in [
        StoreSecurity::plaintext_across_hosts(),
        StoreSecurity::Tls(StoreTls::new("ca.pem", "node.pem", "node.key")),
    ] {
        let config = BmConfig::default().with_store_security(security);
        refused_with(BigMemory::init(&remote, 0, &device, &config), "a world of 0 ranks");
    }
}

#[test]
fn arguments_memfabric_does_not_take_are_refused_first() {
    let device = Device::new(0).expect("device 0");
    let store = StoreUrl::parse("tcp://127.0.0.1:8570").expect("a URL");
    let config = BmConfig::default();
    refused_with(BigMemory::init(&store, 0, &device, &config), "a world of 0 ranks");
    refused_with(BigMemory::init(&store, 1025, &device, &config), "1 to 1024");
    refused_with(
        BigMemory::init(&store, 2, &device, &BmConfig::default().with_rank(2)),
        "rank 2 in a world of 2",
    );
    refused_with(
        BigMemory::init(
            &store,
            1,
            &device,
            &BmConfig::default().with_control_timeout(Duration::from_millis(500)),
        ),
        "the control timeout is 500ms",
    );
    let long = StoreTls::new("d/".repeat(200), "node.pem", "node.key");
    match BigMemory::init(
        &store,
        1,
        &device,
        &BmConfig::default().with_store_security(StoreSecurity::Tls(long)),
    ) {
        Err(FabricError::InvalidArgument { reason, .. }) => assert!(reason.contains("at most 255"), "{reason}"),
        other => panic!("expected a refused TLS path, got {:?}", other.map(|_| ())),
    }
}
