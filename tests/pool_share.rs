//! Sharing pool blocks and whole segments with other processes: a block
//! spanning chunks is
//! exported (one handle per chunk, the pid whitelist on), a child process
//! imports it from the descriptor, reads the exporter's bytes and writes
//! its own, which the exporter then reads; a child off the whitelist is
//! refused; blocks in one chunk share its export; a tag with a live
//! export refuses to sleep; a whole segment goes the same way. Runs on
//! every backend; leak counts on the software device.

mod common;

use ascend::pool::{BlockExport, DevicePool};
use ascend::share::{ImportedChunks, Pid, ShareKind};
use ascend::stream::Stream;
use ascend::sys::soft;
use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
use ascend::{Device, Error};
use common::peer::{ANSWER, Peer};
use common::software_only;
use std::io::BufRead;
use std::sync::Arc;

const CHILD_VAR: &str = "ASCEND_POOL_SHARE_CHILD";

// ---- the child ----------------------------------------------------------------

/// Imports the block `descriptor` names, checks that every byte is
/// `expected`, and writes `!expected` into it.
fn import_and_answer(expected: u8, descriptor: &str) -> Result<String, String> {
    let device = Device::new(0).map_err(|error| error.to_string())?;
    let mut block = ImportedChunks::import(descriptor, &device).map_err(|error| match error {
        Error::Acl { api, code, .. } => format!("refused {api} {code}"),
        other => other.to_string(),
    })?;
    let mut bytes = vec![0u8; block.len()];
    block
        .as_slice::<u8>()
        .and_then(|view| view.read_to_host(&mut bytes))
        .map_err(|error| error.to_string())?;
    if let Some(at) = bytes.iter().position(|&b| b != expected) {
        return Err(format!("byte {at} is {}, not {expected}", bytes[at]));
    }
    bytes.fill(!expected);
    block
        .as_mut_slice::<u8>()
        .and_then(|mut view| view.write_from_host(&bytes))
        .map_err(|error| error.to_string())?;
    Ok(format!("ok {} {}", block.len(), block.chunks()))
}

/// The child half of the cross-process tests. Run directly (without its
/// parent), it does nothing.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_importer() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let answer = match line.split_once(' ') {
            None if line == "pid" => Pid::current().map(|pid| pid.to_string()).map_err(|e| e.to_string()),
            None if line == "quit" => break,
            Some(("import", rest)) => match rest.split_once(' ') {
                Some((byte, descriptor)) => match byte.parse() {
                    Ok(byte) => import_and_answer(byte, descriptor),
                    Err(_) => Err(format!("bad byte {byte}")),
                },
                None => Err("no descriptor".to_owned()),
            },
            _ => Err(format!("unknown command {line}")),
        };
        match answer {
            Ok(answer) => println!("{ANSWER}{answer}"),
            Err(problem) => println!("{ANSWER}error {problem}"),
        }
    }
}

// ---- the parent ---------------------------------------------------------------

/// A block of 2.5 chunks starting half a chunk in (so it covers three
/// chunks), filled with `byte`, exported.
fn exported(device: &Device, pool: &DevicePool, granule: usize, byte: u8, stream: &Arc<Stream>) -> BlockExport {
    let _padding = pool.alloc(granule / 2).unwrap();
    let block = Arc::new(pool.alloc(2 * granule + granule / 2).unwrap());
    block.fill_bytes(byte, stream).unwrap();
    let export = pool.export_block(&block, ShareKind::V2Default).unwrap();
    assert_eq!(
        export.chunk_exports().len(),
        3,
        "a block over three chunks has three handles"
    );
    assert!(
        common::pool::read_block(device, &block, stream)
            .iter()
            .all(|&b| b == byte)
    );
    export
}

#[test]
fn a_child_process_maps_a_block_reads_it_and_writes_it() {
    let (_serial, device, granule) = common::pool::start();
    let since = soft::sequence_now();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    let export = exported(&device, &pool, granule, 0x5a, &stream);
    let mut peer = Peer::spawn("child_importer", CHILD_VAR);
    let pid = peer.pid();
    export.allow_pids(&[pid]).unwrap();
    let answer = peer.ask(&format!("import {} {}", 0x5a, export.descriptor()));
    assert_eq!(answer, format!("ok {} 3", 2 * granule + granule / 2));
    peer.quit();
    assert!(
        common::pool::read_block(&device, export.block(), &stream)
            .iter()
            .all(|&b| b == !0x5a),
        "the child's bytes are the exporter's"
    );
    drop(export);
    drop(pool);
    drop(stream);
    software_only(|| assert_eq!(soft::live_since(since), [], "nothing is left"));
}

#[test]
fn a_process_off_the_whitelist_is_refused() {
    let (_serial, device, granule) = common::pool::start();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    let export = exported(&device, &pool, granule, 1, &stream);
    let mut peer = Peer::spawn("child_importer", CHILD_VAR);
    let answer = peer.ask(&format!("import 1 {}", export.descriptor()));
    assert!(answer.starts_with("error refused"), "{answer}");
    peer.quit();
}

#[test]
fn blocks_in_one_chunk_share_its_export_and_a_shared_tag_does_not_sleep() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    let first = Arc::new(pool.alloc_tagged(4096, "kv").unwrap());
    let second = Arc::new(pool.alloc_tagged(4096, "kv").unwrap());
    let a = pool.export_block(&first, ShareKind::V2Default).unwrap();
    let b = pool.export_block(&second, ShareKind::V2Default).unwrap();
    assert!(
        Arc::ptr_eq(&a.chunk_exports()[0], &b.chunk_exports()[0]),
        "one export per chunk"
    );
    // Another kind for an exported chunk is refused, before any call.
    assert!(matches!(
        pool.export_block(&first, ShareKind::V1),
        Err(Error::InvalidArgument { .. })
    ));
    {
        // A block over two chunks, the second already exported as another
        // kind: refused before the first is exported (an export cannot be
        // taken back). Another tag, so that its segment starts empty: fillers
        // take the first chunk up to 64 KiB before its end.
        let fillers: Vec<_> = (0..granule / (64 << 10) - 1)
            .map(|_| Arc::new(pool.alloc_tagged(64 << 10, "wide").unwrap()))
            .collect();
        let base = fillers[0].device_ptr() as usize;
        let _last = pool.alloc_tagged(32 << 10, "wide").unwrap(); // 32 KiB left
        let wide = Arc::new(pool.alloc_tagged(64 << 10, "wide").unwrap());
        let start = wide.device_ptr() as usize - base;
        assert!(
            start < granule && start + (64 << 10) > granule,
            "the block straddles two chunks"
        );
        let next = Arc::new(pool.alloc_tagged(4096, "wide").unwrap());
        assert!(next.device_ptr() as usize - base >= granule);
        let second_chunk = pool.export_block(&next, ShareKind::V2Default).unwrap();
        assert!(matches!(
            pool.export_block(&wide, ShareKind::V1),
            Err(Error::InvalidArgument { .. })
        ));
        drop(
            pool.export_block(&fillers[0], ShareKind::V2Default)
                .expect("the first chunk was not exported as the refused kind"),
        );
        drop(second_chunk);
    }
    // Another pool's block is refused.
    let other = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    assert!(matches!(
        other.export_block(&first, ShareKind::V2Default),
        Err(Error::InvalidArgument { .. })
    ));
    // The export holds the block: sleeping would strand the importers.
    match pool.sleep(&["kv"]) {
        Err(Error::InvalidArgument { reason, .. }) => assert!(reason.contains("shared"), "{reason}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(!pool.is_asleep("kv"));
    drop((a, b));
    pool.sleep(&["kv"]).unwrap();
    pool.wake().unwrap();
    // After the wake the chunk is new memory, and can be shared again.
    let again = pool.export_block(&first, ShareKind::V2Default).unwrap();
    assert_eq!(again.chunk_exports().len(), 1);
}

#[test]
fn importing_in_the_exporting_process_or_a_bad_descriptor_is_refused() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    let block = Arc::new(pool.alloc(4096).unwrap());
    let export = pool.export_block(&block, ShareKind::V2Default).unwrap();
    export.allow_pids(&[Pid::current().unwrap()]).unwrap();
    assert!(matches!(
        ImportedChunks::import(&export.descriptor(), &device),
        Err(Error::Acl { .. })
    ));
    for bad in [
        "",
        "something-else 1 2 3",
        "ascend-chunks-v1 0 0 4096",
        "ascend-chunks-v1 2097152 0 4096",
        "ascend-chunks-v1 2097152 2097150 4096 v2:2097152:1",
        // Chunks that do not fit in the address space together.
        "ascend-chunks-v1 9223372036854775808 0 9223372036854775809 v2:9223372036854775808:0000000000000000 \
         v2:9223372036854775808:0000000000000000",
    ] {
        assert!(
            matches!(ImportedChunks::import(bad, &device), Err(Error::InvalidArgument { .. })),
            "{bad:?}"
        );
    }
}

#[test]
fn a_child_process_maps_a_whole_segment() {
    let (_serial, device, granule) = common::pool::start();
    let since = soft::sequence_now();
    let prop = PhysicalMemProp::device(&device);
    let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * granule, granule).unwrap());
    segment.grow(2 * granule).unwrap();
    let mut block = segment.block(0, 2 * granule).unwrap();
    block.as_mut_slice::<u8>().unwrap().fill_bytes(0x21).unwrap();
    let export = segment.export(ShareKind::V2Default).unwrap();
    assert_eq!((export.len(), export.chunk_exports().len()), (2 * granule, 2));
    assert!(segment.is_shared());
    let mut peer = Peer::spawn("child_importer", CHILD_VAR);
    export.allow_pids(&[peer.pid()]).unwrap();
    let answer = peer.ask(&format!("import {} {}", 0x21, export.descriptor()));
    assert_eq!(answer, format!("ok {} 2", 2 * granule));
    peer.quit();
    assert!(
        block
            .as_slice::<u8>()
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .all(|&b| b == !0x21)
    );
    drop(block);
    // Shared chunks stay mapped; once the export is gone the segment
    // shrinks and frees them.
    assert!(matches!(segment.shrink(granule), Err(Error::InvalidArgument { .. })));
    segment.grow(granule).unwrap(); // growing is fine
    drop(export);
    assert!(!segment.is_shared());
    segment.shrink(3 * granule).unwrap();
    segment.release_spare().unwrap();
    drop(segment);
    software_only(|| assert_eq!(soft::live_since(since), [], "nothing is left"));
}

#[test]
fn a_failed_export_can_be_tried_again_and_leaves_nothing() {
    let (_serial, device, granule) = common::pool::start();
    if !common::on_software() {
        return; // fault injection
    }
    let since = soft::sequence_now();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    let block = Arc::new(pool.alloc(3 * granule).unwrap());
    // The second chunk's export fails.
    soft::inject_fault(
        "aclrtMemExportToShareableHandleV2",
        2,
        ascend::sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR,
    )
    .unwrap();
    assert!(matches!(
        pool.export_block(&block, ShareKind::V2Default),
        Err(Error::Acl { .. })
    ));
    soft::clear_faults();
    let export = pool.export_block(&block, ShareKind::V2Default).unwrap();
    assert_eq!(export.chunk_exports().len(), 3);
    drop((export, block));
    pool.empty_cache().unwrap();
    drop(pool);
    assert_eq!(soft::live_since(since), [], "nothing is left");
}

#[test]
fn memory_whose_free_is_refused_keeps_its_export_for_the_next_one() {
    let (_serial, device, granule) = common::pool::start();
    if !common::on_software() {
        return; // fault injection
    }
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    let block = Arc::new(pool.alloc(4096).unwrap());
    let token = pool.export_block(&block, ShareKind::V2Default).unwrap().chunk_exports()[0].token();
    drop(block);
    // The chunk is unmapped, but the runtime refuses to free it: it stays
    // spare, exported.
    soft::inject_fault("aclrtFreePhysical", 1, ascend::sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR).unwrap();
    let emptied = pool.empty_cache();
    soft::clear_faults();
    assert!(emptied.is_err());
    // Mapped again, it is shared with the export it already has (the
    // runtime exports a handle once).
    let again = Arc::new(pool.alloc(4096).unwrap());
    let export = pool
        .export_block(&again, ShareKind::V2Default)
        .expect("the kept export is used again");
    assert_eq!(export.chunk_exports()[0].token(), token);
}
