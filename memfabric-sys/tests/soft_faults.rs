//! Fault injection into the software fabric: a failing call, a timeout and
//! a batch that partly fails. In a child process: faults are process-wide.

mod soft_common;

use memfabric_sys::soft::{Fault, armed_faults, clear_faults, inject_fault};
use memfabric_sys::*;
use soft_common::{common, config, copy, create, gva, init, last_error, pattern, scenario};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

#[test]
fn injected_faults_fire_once_with_their_codes() {
    scenario("injected_faults_fire_once_with_their_codes", "faults", || {
        assert!(inject_fault("smem_bm_nope", 1, Fault::Fail(-1)).is_err());
        assert!(inject_fault("smem_bm_copy", 0, Fault::Fail(-1)).is_err());
        assert!(inject_fault("smem_bm_copy", 1, Fault::Fail(0)).is_err());
        assert!(inject_fault("smem_bm_copy", 1, Fault::BatchEntry { entry: 0, code: -1 }).is_err());

        let port = common::free_port();
        let mut config = config(None, true);
        config.controlOperationTimeout = 1;
        assert_eq!(init(port, 1, &config), SMEM_OK);
        let bm = create(2, 2 << 20, 0);
        assert!(!bm.is_null());
        let host = gva(bm, SMEM_MEM_TYPE_HOST, 0);
        let data = pattern(4096, 5);

        // The second copy from now fails with the code, once.
        inject_fault("smem_bm_copy", 2, Fault::Fail(SMEM_ERROR)).unwrap();
        assert_eq!(armed_faults().len(), 1);
        assert_eq!(copy(bm, data.as_ptr(), host, 4096, SMEMB_COPY_H2GH), SMEM_OK);
        assert_eq!(copy(bm, data.as_ptr(), host, 4096, SMEMB_COPY_H2GH), SMEM_ERROR);
        assert_eq!(last_error().0, SMEM_ERROR);
        assert!(last_error().1.contains("injected"), "{:?}", last_error());
        assert_eq!(copy(bm, data.as_ptr(), host, 4096, SMEMB_COPY_H2GH), SMEM_OK);
        assert!(armed_faults().is_empty());

        // A timeout waits the control timeout, then BM_TIMEOUT.
        inject_fault("smem_bm_copy", 1, Fault::Timeout).unwrap();
        let started = Instant::now();
        assert_eq!(copy(bm, data.as_ptr(), host, 4096, SMEMB_COPY_H2GH), -7);
        assert!(started.elapsed() >= Duration::from_secs(1));

        // A batch whose entry 1 fails: the others are moved, -2012.
        let (a, b, c) = (pattern(4096, 1), pattern(4096, 2), pattern(4096, 3));
        let mut sources = [a.as_ptr(), b.as_ptr(), c.as_ptr()].map(|p| p as *mut c_void);
        let mut destinations = [0usize, 4096, 8192].map(|at| unsafe { host.add(at) }.cast::<c_void>());
        let sizes = [4096u64; 3];
        let mut batch = smem_batch_copy_params_t {
            sources: sources.as_mut_ptr(),
            destinations: destinations.as_mut_ptr(),
            dataSizes: sizes.as_ptr(),
            batchSize: 3,
            stream: null_mut(),
        };
        inject_fault(
            "smem_bm_copy_batch",
            1,
            Fault::BatchEntry {
                entry: 1,
                code: SMEM_ERROR,
            },
        )
        .unwrap();
        // SAFETY: three entries of the test's buffers and GVAs.
        assert_eq!(
            unsafe { smem_bm_copy_batch(bm, &mut batch, SMEMB_COPY_H2GH, 0) },
            SMEM_PARTIAL_FAILED
        );
        assert!(last_error().1.contains("entry 1"), "{:?}", last_error());
        let mut back = vec![0u8; 4096];
        assert_eq!(
            copy(bm, unsafe { host.add(8192) }, back.as_mut_ptr(), 4096, SMEMB_COPY_GH2H),
            SMEM_OK
        );
        assert_eq!(back, c);
        // Without a fault the batch succeeds.
        // SAFETY: as above.
        assert_eq!(
            unsafe { smem_bm_copy_batch(bm, &mut batch, SMEMB_COPY_H2GH, 0) },
            SMEM_OK
        );

        inject_fault("smem_bm_join", 5, Fault::Fail(SMEM_ERROR)).unwrap();
        clear_faults();
        assert!(armed_faults().is_empty());
        // SAFETY: a live handle.
        unsafe {
            smem_bm_destroy(bm);
            smem_bm_uninit(0);
        }
        assert!(common::port_is_free(port));
    });
}
