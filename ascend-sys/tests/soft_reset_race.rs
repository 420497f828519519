//! A last `aclrtResetDevice` racing a new `aclrtSetDevice` of the same
//! device: what is made under the new retain (device memory, memory pools)
//! is the new retain's, and the teardown of the old one must not take it.
//! Retains are process-wide, so the file needs its process to itself.
//! Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::software;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the threads race.
const RACE: Duration = Duration::from_secs(3);

/// Threads that hold device 0 in turns (more make a loss likelier
/// without the fix: each teardown has more threads to race it).
const HOLDERS: usize = 6;

/// One thread sets and resets device 0 over and over: its reset is the
/// last whenever no other thread holds the device. The others each set
/// device 0, make a pool and take memory, then give both back, which must
/// succeed: their own retain keeps the device's primary context, so a
/// teardown that decided on no retain before it cannot free or release
/// what they made after it.
#[test]
fn a_last_reset_spares_what_a_new_retain_made() {
    software();
    let stop = AtomicBool::new(false);
    let rounds = AtomicUsize::new(0);
    let lost = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let resetter = scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                // SAFETY: no pointer arguments; balanced.
                unsafe {
                    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
                    assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
                }
            }
        });
        let holders: Vec<_> = (0..HOLDERS)
            .map(|_| {
                scope.spawn(|| {
                    let end = Instant::now() + RACE;
                    while Instant::now() < end {
                        round(&lost);
                        rounds.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for holder in holders {
            holder.join().expect("a holder thread panicked");
        }
        stop.store(true, Ordering::Relaxed);
        resetter.join().expect("the resetting thread panicked");
    });
    let lost = lost.into_inner().unwrap();
    assert!(
        lost.is_empty(),
        "{} of {} rounds lost what they made to another thread's reset: {lost:#?}",
        lost.len(),
        rounds.load(Ordering::Relaxed)
    );
    assert!(soft::live().is_empty(), "{}", soft::leak_report());
}

/// One holder's round: set device 0, create a pool, allocate, free both,
/// reset. A failed free or destroy is recorded in `lost`.
fn round(lost: &std::sync::Mutex<Vec<String>>) {
    // SAFETY: a plain C struct; all zeros is a valid value.
    let mut props: aclrtMemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type_ = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = 2 << 20;
    let (mut pool, mut plain) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers; each resource is given back once.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut plain, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        std::thread::yield_now();
        let code = aclrtFree(plain);
        if code != ACL_SUCCESS {
            lost.lock()
                .unwrap()
                .push(format!("aclrtFree: {code}: {}", soft_common::recent()));
        }
        let code = aclrtMemPoolDestroy(pool);
        if code != ACL_SUCCESS {
            lost.lock()
                .unwrap()
                .push(format!("aclrtMemPoolDestroy: {code}: {}", soft_common::recent()));
        }
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
}
