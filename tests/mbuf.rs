//! Message buffers ([`ascend::mbuf::Mbuf`]): sharing, `data_mut` only while
//! unshared, data length, user data, chains, and a proptest model of
//! reference counts and chains. Runs on hardware too; live-resource counts
//! are software-device-only (through `software_only`).

mod common;

use ascend::mbuf::{Mbuf, USER_DATA_SIZE};
use ascend::sys::soft;
use ascend::{Error, ErrorCode, Runtime};
use common::software_only;
use proptest::prelude::*;

/// Keeps the tests that count live resources from running at once (the
/// counts are process-wide).
static COUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn counting() -> std::sync::MutexGuard<'static, ()> {
    COUNTING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn runtime() -> Runtime {
    Runtime::init().expect("aclInit")
}

#[test]
fn a_new_mbuf_is_zeroed_empty_and_writable() {
    let _counting = counting();
    let rt = runtime();
    let mut buf = Mbuf::new(&rt, 100).expect("mbuf");
    assert_eq!(buf.capacity(), 100);
    assert_eq!(buf.len().expect("len"), 0);
    assert!(buf.is_empty().expect("len"));
    assert!(buf.data().iter().all(|&b| b == 0));
    assert!(!buf.is_shared());
    buf.data_mut().expect("unshared")[..3].copy_from_slice(b"abc");
    buf.set_len(3).expect("len");
    assert_eq!(buf.len().expect("len"), 3);
    assert_eq!(&buf.data()[..3], b"abc");
    assert_eq!(buf.user_data().expect("user data"), [0; USER_DATA_SIZE]);
}

#[test]
fn zero_capacity_is_the_runtimes_invalid_param() {
    let _counting = counting();
    let error = Mbuf::new(&runtime(), 0).unwrap_err();
    assert_eq!(error.code(), Some(ErrorCode::INVALID_PARAM), "{error}");
}

#[test]
fn rust_side_checks_refuse_before_the_call() {
    let _counting = counting();
    let mut buf = Mbuf::new(&runtime(), 8).expect("mbuf");
    assert!(matches!(buf.set_len(9), Err(Error::InvalidArgument { .. })));
    assert!(matches!(
        buf.set_user_data(95, &[1, 2]),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        buf.set_user_data(usize::MAX, &[1]),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        buf.chain_get(1usize << 40),
        Err(Error::InvalidArgument { .. })
    ));
    buf.set_user_data(96, &[])
        .expect("an empty write at the end is nothing");
    let past = buf.chain_get(1).unwrap_err();
    assert_eq!(
        past.code(),
        Some(ErrorCode(ascend::sys::ACL_ERROR_RT_PARAM_INVALID)),
        "{past}"
    );
}

#[test]
fn a_share_sees_the_same_bytes_and_blocks_data_mut() {
    let _counting = counting();
    let rt = runtime();
    let mut buf = Mbuf::new(&rt, 16).expect("mbuf");
    buf.data_mut().expect("unshared")[0] = 42;
    buf.set_len(1).expect("len");
    buf.set_user_data(4, &[9, 9]).expect("user data");
    let shared = buf.share().expect("share");
    assert_ne!(shared.as_raw(), buf.as_raw());
    assert_eq!(shared.data().as_ptr(), buf.data().as_ptr());
    assert_eq!(shared.data()[0], 42);
    assert_eq!(shared.len().expect("len"), 1, "a share starts with the data length");
    assert_eq!(shared.user_data().expect("user")[4..6], [9, 9]);
    assert!(buf.is_shared() && shared.is_shared());
    assert!(buf.data_mut().is_none());
    drop(shared);
    assert!(buf.data_mut().is_some(), "writable again once the share is gone");
}

#[test]
fn chains_own_their_members_and_free_with_the_head() {
    let _counting = counting();
    let rt = runtime();
    let since = soft::sequence_now();
    let mut head = Mbuf::new(&rt, 8).expect("mbuf");
    let mut second = Mbuf::new(&rt, 16).expect("mbuf");
    second.append(Mbuf::new(&rt, 32).expect("mbuf")).expect("append");
    head.append(second).expect("append");
    assert_eq!(head.chain_len().expect("len"), 3);
    let capacities: Vec<_> = (0..3).map(|i| head.chain_get(i).expect("member").capacity()).collect();
    assert_eq!(capacities, [8, 16, 32]);
    assert_eq!(head.chain_get(0).expect("head").as_raw(), head.as_raw());
    // A share appended to its own origin's chain keeps both read-only.
    let shared = head.share().expect("share");
    head.append(shared).expect("append");
    assert!(head.data_mut().is_none());
    assert_eq!(head.chain_get(3).expect("member").data().as_ptr(), head.data().as_ptr());
    software_only(|| assert_eq!(soft::live_since(since).len(), 4));
    drop(head);
    software_only(|| assert!(soft::live_since(since).is_empty(), "{:?}", soft::live_since(since)));
}

/// One step of the model.
#[derive(Debug, Clone)]
enum Op {
    New(usize),
    Share(usize),
    Drop(usize),
    Append(usize, usize),
    Write(usize, u8),
    SetLen(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1usize..64).prop_map(Op::New),
        any::<usize>().prop_map(Op::Share),
        any::<usize>().prop_map(Op::Drop),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Append(a, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Op::Write(a, b)),
        (any::<usize>(), 0usize..64).prop_map(|(a, b)| Op::SetLen(a, b)),
    ]
}

/// The model of one owned `Mbuf`: the data area of each chain member (the
/// head first) and the head's data length.
#[derive(Debug, Clone)]
struct Model {
    chain: Vec<usize>,
    len: usize,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn refcounts_and_chains_follow_the_model(ops in proptest::collection::vec(op(), 1..40)) {
        let _counting = counting();
        let rt = runtime();
        let since = soft::sequence_now();
        let mut bufs: Vec<(Mbuf, Model)> = Vec::new();
        // Per data area: capacity and the first byte written.
        let mut areas: Vec<(usize, u8)> = Vec::new();
        for op in ops {
            let n = bufs.len();
            match op {
                Op::New(capacity) => {
                    areas.push((capacity, 0));
                    bufs.push((Mbuf::new(&rt, capacity).expect("mbuf"), Model { chain: vec![areas.len() - 1], len: 0 }));
                }
                Op::Share(i) if n > 0 => {
                    let (buf, model) = &bufs[i % n];
                    let copy = buf.share().expect("share");
                    let copy_model = Model { chain: vec![model.chain[0]], len: model.len };
                    bufs.push((copy, copy_model));
                }
                Op::Drop(i) if n > 0 => {
                    bufs.remove(i % n);
                }
                Op::Append(a, b) if n > 1 && a % n != b % n => {
                    let (other, other_model) = bufs.remove(b % n);
                    let head = &mut bufs[if a % n > b % n { a % n - 1 } else { a % n }];
                    head.0.append(other).expect("append");
                    head.1.chain.extend(other_model.chain);
                }
                Op::Write(i, byte) if n > 0 => {
                    // References to each area: every chain member of every Mbuf.
                    let refs = |area: usize, bufs: &[(Mbuf, Model)]| bufs.iter().flat_map(|(_, m)| &m.chain).filter(|&&a| a == area).count();
                    let area = bufs[i % n].1.chain[0];
                    let expect_writable = refs(area, &bufs) == 1;
                    let buf = &mut bufs[i % n].0;
                    prop_assert_eq!(buf.data_mut().is_some(), expect_writable);
                    if let Some(bytes) = buf.data_mut() {
                        bytes[0] = byte;
                        areas[area].1 = byte;
                    }
                }
                Op::SetLen(i, len) if n > 0 => {
                    let (buf, model) = &mut bufs[i % n];
                    let result = buf.set_len(len);
                    if len <= areas[model.chain[0]].0 {
                        prop_assert!(result.is_ok());
                        model.len = len;
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                _ => {}
            }
            for (buf, model) in &bufs {
                prop_assert_eq!(buf.chain_len().expect("chain"), model.chain.len());
                prop_assert_eq!(buf.len().expect("len"), model.len);
                for (index, &area) in model.chain.iter().enumerate() {
                    let member = buf.chain_get(index).expect("member");
                    prop_assert_eq!(member.capacity(), areas[area].0);
                    prop_assert_eq!(member.data()[0], areas[area].1);
                }
            }
            let headers: usize = bufs.iter().map(|(_, m)| m.chain.len()).sum();
            // Software device only: every header of the model is live, no more.
            if common::on_software() {
                prop_assert_eq!(soft::live_since(since).len(), headers);
            }
        }
        drop(bufs);
        if common::on_software() {
            prop_assert!(soft::live_since(since).is_empty());
        }
    }
}
