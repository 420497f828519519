//! Two ranks in two processes: rank 0 (serving the store) writes patterns
//! into its DRAM and HBM segments; rank 1 reads them with G2H and G2L,
//! checks every byte, and writes others back with H2G and L2G, which rank 0
//! then checks. Both children are this test binary re-executed; the parent
//! steps them through stdin lines and kills them on a timeout.

mod soft_common;

use memfabric_sys::*;
use soft_common::{common, config, copy, create, device_alloc, device_read, gva, init, last_error, pattern};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

const ROLE_VAR: &str = "MEMFABRIC_SOFT_RANK";
const DEATH_VAR: &str = "MEMFABRIC_SOFT_DEATH";
const LEAVE_VAR: &str = "MEMFABRIC_SOFT_LEAVE";
const PORT_VAR: &str = "MEMFABRIC_SOFT_PORT";
const SIZE: usize = 256 << 10;
const TEST: &str = "two_processes_read_and_write_each_others_segments";
const DEATH_TEST: &str = "a_rank_that_dies_times_out_copies_into_its_range";
const LEAVE_TEST: &str = "a_rank_that_left_times_out_the_next_copy_and_a_batch_waits_once";
const STEP: Duration = Duration::from_secs(60);

/// Waits for the parent's next line on stdin.
fn wait_for(word: &str) {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).expect("the parent's line");
    assert_eq!(line.trim(), word);
}

fn say(word: &str) {
    println!("\nMARK {word}");
    std::io::stdout().flush().unwrap();
}

fn rank_body(rank: u32, port: u16) {
    assert_eq!(backend().unwrap().backend, Backend::Software);
    assert_eq!(
        init(port, 2, &config(Some(rank), rank == 0)),
        SMEM_OK,
        "{:?}",
        last_error()
    );
    // SAFETY: no arguments.
    assert_eq!(unsafe { smem_bm_get_rank_id() }, rank);
    let bm = create(5, 1 << 20, 1 << 20);
    assert!(!bm.is_null(), "{:?}", last_error());
    let (dram0, hbm0) = (gva(bm, SMEM_MEM_TYPE_HOST, 0), gva(bm, SMEM_MEM_TYPE_DEVICE, 0));
    if rank == 0 {
        let (dram, hbm) = (pattern(SIZE, 1), pattern(SIZE, 2));
        assert_eq!(copy(bm, dram.as_ptr(), dram0, SIZE, SMEMB_COPY_H2GH), SMEM_OK);
        assert_eq!(copy(bm, hbm.as_ptr(), hbm0, SIZE, SMEMB_COPY_H2G), SMEM_OK);
        say("ready");
    }
    // SAFETY: a live handle.
    assert_eq!(unsafe { smem_bm_join(bm, 0) }, SMEM_OK, "{:?}", last_error());
    if rank == 1 {
        // SAFETY: plain values.
        assert_eq!(unsafe { smem_bm_get_rank_id_by_gva(bm, hbm0.cast()) }, 0);
        let mut read = vec![0u8; SIZE];
        assert_eq!(
            copy(bm, dram0, read.as_mut_ptr(), SIZE, SMEMB_COPY_G2H),
            SMEM_OK,
            "{:?}",
            last_error()
        );
        assert!(read == pattern(SIZE, 1), "rank 0's DRAM differs");
        let local = device_alloc(SIZE);
        assert_eq!(
            copy(bm, hbm0, local, SIZE, SMEMB_COPY_G2L),
            SMEM_OK,
            "{:?}",
            last_error()
        );
        assert!(device_read(local, SIZE) == pattern(SIZE, 2), "rank 0's HBM differs");
        // Write back: H2G into rank 0's DRAM, L2G into its HBM.
        let back = pattern(SIZE, 3);
        assert_eq!(copy(bm, back.as_ptr(), dram0, SIZE, SMEMB_COPY_H2G), SMEM_OK);
        // AUTO between two local buffers is refused, as on the real library.
        assert_eq!(
            copy(bm, back.as_ptr(), local, SIZE, SMEMB_COPY_AUTO),
            SMEM_INVALID_PARAM
        );
        // SAFETY: `local` holds SIZE device bytes, `back` SIZE host bytes.
        let code = unsafe {
            ascend_sys::soft::direct::aclrtMemcpy(
                local.cast(),
                SIZE,
                back.as_ptr().cast(),
                SIZE,
                ascend_sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        assert_eq!(code, ascend_sys::ACL_SUCCESS);
        assert_eq!(
            copy(bm, local, hbm0, SIZE, SMEMB_COPY_L2G),
            SMEM_OK,
            "{:?}",
            last_error()
        );
        say("wrote");
    } else {
        wait_for("verify");
        let mut read = vec![0u8; SIZE];
        assert_eq!(copy(bm, dram0, read.as_mut_ptr(), SIZE, SMEMB_COPY_GH2H), SMEM_OK);
        assert!(read == pattern(SIZE, 3), "rank 1's write into DRAM is missing");
        let mut va = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        assert_eq!(
            unsafe { smem_bm_gva_to_va(bm, hbm0.cast(), SMEM_MEM_TYPE_LOCAL_DEVICE, &mut va) },
            SMEM_OK
        );
        assert!(
            device_read(va.cast(), SIZE) == pattern(SIZE, 3),
            "rank 1's write into HBM is missing"
        );
        say("verified");
    }
    wait_for("exit");
    // SAFETY: a live handle.
    unsafe {
        smem_bm_destroy(bm);
        smem_bm_uninit(0);
    }
}

/// The variable that gives a child of `test` its rank.
fn role_var(test: &str) -> &'static str {
    match test {
        TEST => ROLE_VAR,
        DEATH_TEST => DEATH_VAR,
        _ => LEAVE_VAR,
    }
}

/// A child rank: killed when dropped.
struct Rank {
    child: Child,
    stdin: ChildStdin,
    marks: Receiver<String>,
}

impl Rank {
    fn start(rank: u32, port: u16) -> Self {
        Self::start_test(TEST, rank, port)
    }

    fn start_test(test: &str, rank: u32, port: u16) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(role_var(test), rank.to_string())
            .env(PORT_VAR, port.to_string())
            .env(ENV_BACKEND, "software")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start a rank");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, marks) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                println!("rank {rank}: {line}");
                if let Some(mark) = line.strip_prefix("MARK ") {
                    let _ = sender.send(mark.to_string());
                }
            }
        });
        Self { child, stdin, marks }
    }

    fn expect(&self, mark: &str) {
        match self.marks.recv_timeout(STEP) {
            Ok(seen) => assert_eq!(seen, mark),
            Err(error) => panic!("no {mark:?} from the rank within {STEP:?}: {error}"),
        }
    }

    fn send(&mut self, word: &str) {
        writeln!(self.stdin, "{word}").expect("write to the rank");
    }

    fn finish(mut self) {
        self.send("exit");
        for _ in 0..(STEP.as_millis() / 20) {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "a rank failed: {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("a rank did not exit within {STEP:?}");
    }
}

impl Drop for Rank {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn two_processes_read_and_write_each_others_segments() {
    if let (Ok(rank), Ok(port)) = (std::env::var(ROLE_VAR), std::env::var(PORT_VAR)) {
        rank_body(rank.parse().unwrap(), port.parse().unwrap());
        return;
    }
    let port = common::free_port();
    let mut zero = Rank::start(0, port);
    zero.expect("ready");
    let one = Rank::start(1, port);
    one.expect("wrote");
    zero.send("verify");
    zero.expect("verified");
    one.finish();
    zero.finish();
    assert!(common::port_is_free(port), "the store's port is still taken");
}

/// The control timeout of the death scenario, seconds.
const DEATH_TIMEOUT: u32 = 3;

/// Rank `rank` of two with `timeout` seconds of control timeout, in BM
/// `id` of 2 MiB of DRAM each, joined (rank 0 says `ready` before it joins).
fn joined(rank: u32, port: u16, timeout: u32, id: u32) -> smem_bm_t {
    let mut config = config(Some(rank), rank == 0);
    config.controlOperationTimeout = timeout;
    assert_eq!(init(port, 2, &config), SMEM_OK, "{:?}", last_error());
    let bm = create(id, 2 << 20, 0);
    assert!(!bm.is_null(), "{:?}", last_error());
    if rank == 0 {
        say("ready");
    }
    // SAFETY: a live handle.
    assert_eq!(unsafe { smem_bm_join(bm, 0) }, SMEM_OK, "{:?}", last_error());
    bm
}

fn death_body(rank: u32, port: u16) {
    let bm = joined(rank, port, DEATH_TIMEOUT, 9);
    if rank == 1 {
        say("joined");
        wait_for("die");
        // Dies without leaving: the store sees the connection close.
        std::process::exit(0);
    }
    let (own, peer) = (gva(bm, SMEM_MEM_TYPE_HOST, 0), gva(bm, SMEM_MEM_TYPE_HOST, 1));
    let mut buffer = vec![0u8; 4096];
    assert_eq!(
        copy(bm, peer, buffer.as_mut_ptr(), 4096, SMEMB_COPY_G2H),
        SMEM_OK,
        "{:?}",
        last_error()
    );
    say("alive");
    wait_for("check");
    // The store notices the closed connection within its poll interval:
    // until then the copy still works (the mapping outlives the process).
    let mut started = std::time::Instant::now();
    let mut code = SMEM_OK;
    for _ in 0..250 {
        started = std::time::Instant::now();
        code = copy(bm, peer, buffer.as_mut_ptr(), 4096, SMEMB_COPY_G2H);
        if code != SMEM_OK {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(code, -7, "{:?}", last_error());
    assert!(started.elapsed() >= Duration::from_secs(u64::from(DEATH_TIMEOUT)));
    assert!(last_error().1.contains("rank 1 died"), "{:?}", last_error());
    // Its own range goes on.
    assert_eq!(copy(bm, buffer.as_ptr(), own, 4096, SMEMB_COPY_H2G), SMEM_OK);
    say("checked");
    wait_for("exit");
    // SAFETY: a live handle.
    unsafe {
        smem_bm_destroy(bm);
        smem_bm_uninit(0);
    }
}

#[test]
fn a_rank_that_dies_times_out_copies_into_its_range() {
    if let (Ok(rank), Ok(port)) = (std::env::var(DEATH_VAR), std::env::var(PORT_VAR)) {
        death_body(rank.parse().unwrap(), port.parse().unwrap());
        return;
    }
    let port = common::free_port();
    let mut zero = Rank::start_test(DEATH_TEST, 0, port);
    zero.expect("ready");
    let mut one = Rank::start_test(DEATH_TEST, 1, port);
    one.expect("joined");
    zero.expect("alive");
    one.send("die");
    let status = one.child.wait().expect("rank 1 exits");
    assert!(status.success());
    zero.send("check");
    zero.expect("checked");
    zero.finish();
    assert!(common::port_is_free(port), "the store's port is still taken");
}

/// The control timeout of the leave scenario, seconds.
const LEAVE_TIMEOUT: u32 = 1;

fn leave_body(rank: u32, port: u16) {
    let bm = joined(rank, port, LEAVE_TIMEOUT, 11);
    if rank == 1 {
        say("joined");
        wait_for("leave");
        // SAFETY: a live handle, then the world.
        unsafe {
            smem_bm_destroy(bm);
            smem_bm_uninit(0);
        }
        // Still running: it left, it did not die.
        say("left");
        wait_for("exit");
        return;
    }
    let peer = gva(bm, SMEM_MEM_TYPE_HOST, 1);
    let mut buffer = vec![0u8; 8 * 4096];
    assert_eq!(
        copy(bm, peer, buffer.as_mut_ptr(), 4096, SMEMB_COPY_G2H),
        SMEM_OK,
        "{:?}",
        last_error()
    );
    say("alive");
    wait_for("check");
    // The store wrote the state before answering rank 1's LEAVE: the very
    // next copy sees it (no retries), and fails after the timeout.
    let timeout = Duration::from_secs(u64::from(LEAVE_TIMEOUT));
    let started = std::time::Instant::now();
    let code = copy(bm, peer, buffer.as_mut_ptr(), 4096, SMEMB_COPY_G2H);
    assert_eq!(code, -7, "{:?}", last_error());
    assert!(started.elapsed() >= timeout);
    assert!(last_error().1.contains("rank 1 left"), "{:?}", last_error());
    // A batch of eight entries into it waits once, not eight times.
    let mut sources: Vec<*mut std::ffi::c_void> = (0..8).map(|i| (peer as usize + i * 4096) as *mut _).collect();
    let mut destinations: Vec<*mut std::ffi::c_void> = (0..8).map(|i| buffer[i * 4096..].as_mut_ptr().cast()).collect();
    let sizes = [4096u64; 8];
    let mut params = smem_batch_copy_params_t {
        sources: sources.as_mut_ptr(),
        destinations: destinations.as_mut_ptr(),
        dataSizes: sizes.as_ptr(),
        batchSize: 8,
        stream: std::ptr::null_mut(),
    };
    let started = std::time::Instant::now();
    // SAFETY: eight entries in each array; the destinations are `buffer`.
    let code = unsafe { smem_bm_copy_batch(bm, &mut params, SMEMB_COPY_G2H, 0) };
    let took = started.elapsed();
    assert_eq!(code, -7, "{:?}", last_error());
    assert!(took >= timeout && took < 2 * timeout, "the batch took {took:?}");
    say("checked");
    wait_for("exit");
    // SAFETY: a live handle.
    unsafe {
        smem_bm_destroy(bm);
        smem_bm_uninit(0);
    }
}

#[test]
fn a_rank_that_left_times_out_the_next_copy_and_a_batch_waits_once() {
    if let (Ok(rank), Ok(port)) = (std::env::var(LEAVE_VAR), std::env::var(PORT_VAR)) {
        leave_body(rank.parse().unwrap(), port.parse().unwrap());
        return;
    }
    let port = common::free_port();
    let mut zero = Rank::start_test(LEAVE_TEST, 0, port);
    zero.expect("ready");
    let mut one = Rank::start_test(LEAVE_TEST, 1, port);
    one.expect("joined");
    zero.expect("alive");
    one.send("leave");
    one.expect("left");
    zero.send("check");
    zero.expect("checked");
    one.finish();
    zero.finish();
    assert!(common::port_is_free(port), "the store's port is still taken");
}
