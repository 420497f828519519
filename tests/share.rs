//! Sharing memory across real processes: shareable handles (V1, V2 DEFAULT,
//! V2 FABRIC) and IPC keys, through the safe API.
//!
//! A test that needs a second process re-runs this test binary as a child
//! (`child_peer`, ignored unless its parent starts it). The child reads one
//! command a line from its stdin and answers each with one line
//! `answer: ...` on its stdout; some commands ("serve") wait for a second
//! line before they finish. Data is checked as a pattern (`seed ^ index`),
//! so a wrong offset or a stale page fails as surely as a wrong value.

mod common;

use ascend::share::{
    ExportedHandle, ImportedAlloc, IpcImport, IpcKey, OwnedExport, OwnedIpcExport, Pid, PidValidation, ShareKind,
    ShareableHandle,
};
use ascend::stream::Ordered;
use ascend::vmm::{OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use ascend::{Device, DeviceBuf, Error, ErrorCode};
use common::peer::{ANSWER, Peer};
use common::{device, software_only};
use std::io::BufRead;
use std::sync::Arc;

/// Set in the child's environment; without it `child_peer` does nothing.
const CHILD_VAR: &str = "ASCEND_SHARE_TEST_CHILD";

/// The codes the software device documents (`docs/runtime-choices.md`).
const NO_PERMISSION: i32 = ascend::sys::ACL_ERROR_RT_NO_PERMISSION;
const PARAM_INVALID: i32 = ascend::sys::ACL_ERROR_RT_PARAM_INVALID;

const KINDS: [ShareKind; 3] = [ShareKind::V1, ShareKind::V2Default, ShareKind::V2Fabric];

/// Words of u32 in the IPC buffers (16 KiB).
const IPC_WORDS: usize = 4096;

fn pattern(seed: u32, words: usize) -> Vec<u32> {
    (0..words as u32).map(|index| seed ^ index).collect()
}

fn granule(device: &Device) -> (PhysicalMemProp, usize) {
    let prop = PhysicalMemProp::device(device);
    let granule = prop.round_up(1).expect("granularity");
    (prop, granule)
}

fn kind_name(kind: ShareKind) -> &'static str {
    match kind {
        ShareKind::V1 => "v1",
        ShareKind::V2Default => "v2",
        ShareKind::V2Fabric => "fabric",
        other => panic!("a share kind this test does not know: {other:?}"),
    }
}

fn kind_named(name: &str) -> Result<ShareKind, String> {
    KINDS
        .into_iter()
        .find(|&kind| kind_name(kind) == name)
        .ok_or_else(|| format!("unknown kind {name}"))
}

/// An error as one line of words: `acl <api> <code>`, `invalid <api>` or
/// `other <text>`.
fn describe(error: &Error) -> String {
    match error {
        Error::Acl { api, code, .. } => format!("acl {api} {}", code.0),
        Error::InvalidArgument { api, .. } => format!("invalid {api}"),
        other => format!("other {}", other.to_string().replace(char::is_whitespace, "_")),
    }
}

// ---- the child ----------------------------------------------------------------

type Answer = Result<String, String>;

fn fail(error: Error) -> String {
    describe(&error)
}

fn number<T: std::str::FromStr>(words: &[&str], at: usize) -> Result<T, String> {
    words
        .get(at)
        .and_then(|word| word.parse().ok())
        .ok_or_else(|| format!("argument {at} missing or malformed"))
}

/// Checks that `words` hold `pattern(seed)`.
fn verify(words: &[u32], seed: u32) -> Answer {
    match words.iter().zip(pattern(seed, words.len())).position(|(a, b)| *a != b) {
        None => Ok("ok".to_owned()),
        Some(at) => Err(format!("mismatch at {at}: {:#x}", words[at])),
    }
}

/// Maps `imported` in a fresh range, checks `pattern(seed)`, then writes
/// `pattern(reply)` when asked.
fn read_write_imported(imported: &ImportedAlloc, seed: u32, reply: Option<u32>) -> Answer {
    let range = VirtualRange::reserve(imported.size()).map_err(fail)?;
    let mut region = range.map(0, imported).map_err(fail)?;
    let words = region.as_slice::<u32>().map_err(fail)?.to_vec().map_err(fail)?;
    verify(&words, seed)?;
    if let Some(reply) = reply {
        let mut view = region.as_mut_slice::<u32>().map_err(fail)?;
        view.write_from_host(&pattern(reply, words.len())).map_err(fail)?;
    }
    region.unmap().map_err(fail)?;
    Ok("ok".to_owned())
}

/// The child's state between commands.
#[derive(Default)]
struct ChildState {
    held: Vec<ImportedAlloc>,
}

impl ChildState {
    fn execute(&mut self, words: &[&str], input: &mut impl Iterator<Item = String>) -> Answer {
        let device = Device::new(0).map_err(fail)?;
        match words.first().copied().unwrap_or_default() {
            "pid" => Ok(Pid::current().map_err(fail)?.to_string()),
            // import-rw <token> <seed> <reply>
            "import-rw" => {
                let token: ShareableHandle = number(words, 1)?;
                let imported = ImportedAlloc::import(&token, &device).map_err(fail)?;
                read_write_imported(&imported, number(words, 2)?, Some(number(words, 3)?))?;
                imported.free().map_err(fail)?;
                Ok("ok".to_owned())
            }
            // import-owned <token> <seed> <reply>: through the owned forms
            "import-owned" => {
                let token: ShareableHandle = number(words, 1)?;
                let imported = Arc::new(ImportedAlloc::import(&token, &device).map_err(fail)?);
                let range = Arc::new(VirtualRange::reserve(imported.size()).map_err(fail)?);
                let mut mapping = OwnedMapping::new(range, 0, imported).map_err(fail)?;
                // The mapping owns everything: it works on another thread.
                let (seed, reply): (u32, u32) = (number(words, 2)?, number(words, 3)?);
                std::thread::spawn(move || {
                    let words = mapping.as_slice::<u32>().map_err(fail)?.to_vec().map_err(fail)?;
                    verify(&words, seed)?;
                    let mut view = mapping.as_mut_slice::<u32>().map_err(fail)?;
                    view.write_from_host(&pattern(reply, words.len())).map_err(fail)?;
                    Ok::<_, String>("ok".to_owned())
                })
                .join()
                .map_err(|_| "the mapping's thread panicked".to_owned())?
            }
            // hold <token>: import and keep it
            "hold" => {
                let token: ShareableHandle = number(words, 1)?;
                self.held.push(ImportedAlloc::import(&token, &device).map_err(fail)?);
                Ok((self.held.len() - 1).to_string())
            }
            // read-held <index> <seed>
            "read-held" => {
                let index: usize = number(words, 1)?;
                let held = self.held.get(index).ok_or("no such import")?;
                read_write_imported(held, number(words, 2)?, None)
            }
            // import-twice <token>: two imports of one export are one memory
            "import-twice" => {
                let token: ShareableHandle = number(words, 1)?;
                let first = ImportedAlloc::import(&token, &device).map_err(fail)?;
                let second = ImportedAlloc::import(&token, &device).map_err(fail)?;
                let size = first.size();
                let range = VirtualRange::reserve(2 * size).map_err(fail)?;
                let region = range.map(0, &first).map_err(fail)?;
                let refusals = [range.map(size, &first).map(drop), range.map(size, &second).map(drop)];
                region.unmap().map_err(fail)?;
                range.map(size, &second).map_err(fail)?.unmap().map_err(fail)?;
                first.free().map_err(fail)?;
                second.free().map_err(fail)?;
                let described: Vec<String> = refusals
                    .iter()
                    .map(|refusal| refusal.as_ref().map_or_else(describe, |()| "accepted".to_owned()))
                    .collect();
                Ok(described.join(" "))
            }
            // export-serve <kind> <seed> <pid> <expect>, then "check"
            "export-serve" => {
                let (prop, size) = granule(&device);
                let physical = PhysicalAlloc::new(&prop, size).map_err(fail)?;
                let range = VirtualRange::reserve(size).map_err(fail)?;
                let mut region = range.map(0, &physical).map_err(fail)?;
                let words_len = size / 4;
                region
                    .as_mut_slice::<u32>()
                    .map_err(fail)?
                    .write_from_host(&pattern(number(words, 2)?, words_len))
                    .map_err(fail)?;
                let export = physical
                    .export(kind_named(words.get(1).unwrap_or(&""))?)
                    .map_err(fail)?;
                export.allow_pids(&[number(words, 3)?]).map_err(fail)?;
                println!("{ANSWER}token {}", export.token());
                wait_for_check(input)?;
                let back = region.as_slice::<u32>().map_err(fail)?.to_vec().map_err(fail)?;
                verify(&back, number(words, 4)?)
            }
            // ipc-rw <key> <seed> <reply>
            "ipc-rw" => {
                let key: IpcKey = number(words, 1)?;
                let mut import = IpcImport::open(&key, &device).map_err(fail)?;
                let words_now = import.as_slice::<u32>().map_err(fail)?.to_vec().map_err(fail)?;
                verify(&words_now, number(words, 2)?)?;
                let reply = pattern(number(words, 3)?, words_now.len());
                import
                    .as_mut_slice::<u32>()
                    .map_err(fail)?
                    .write_from_host(&reply)
                    .map_err(fail)?;
                import.close().map_err(fail)?;
                Ok("ok".to_owned())
            }
            // ipc-twice <key>: a second open of an open key is refused
            "ipc-twice" => {
                let key: IpcKey = number(words, 1)?;
                let first = IpcImport::open(&key, &device).map_err(fail)?;
                let second = IpcImport::open(&key, &device).map(drop).map_err(fail);
                first.close().map_err(fail)?;
                let third = IpcImport::open(&key, &device).map_err(fail)?;
                third.close().map_err(fail)?;
                second.map(|()| "second open accepted".to_owned())
            }
            // ipc-serve <seed> <pid> <expect>, then "check"
            "ipc-serve" => {
                let buf = DeviceBuf::from_slice(&device, &pattern(number(words, 1)?, IPC_WORDS)).map_err(fail)?;
                let export = buf.ipc_export().map_err(fail)?;
                export.allow_pids(&[number(words, 2)?]).map_err(fail)?;
                println!("{ANSWER}key {}", export.key());
                wait_for_check(input)?;
                export.close().map_err(fail)?;
                verify(&buf.to_vec().map_err(fail)?, number(words, 3)?)
            }
            other => Err(format!("unknown command {other:?}")),
        }
    }
}

fn wait_for_check(input: &mut impl Iterator<Item = String>) -> Result<(), String> {
    match input.next().as_deref() {
        Some("check") => Ok(()),
        other => Err(format!("expected check, got {other:?}")),
    }
}

/// The child half of the cross-process tests. Run directly (without its
/// parent), it does nothing.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_peer() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    let mut peer = ChildState::default();
    let mut input = std::io::stdin().lock().lines().map_while(Result::ok);
    while let Some(line) = input.next() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words == ["quit"] {
            break;
        }
        match peer.execute(&words, &mut input) {
            Ok(answer) => println!("{ANSWER}{answer}"),
            Err(problem) => println!("{ANSWER}error {problem}"),
        }
    }
}

// ---- the parent ---------------------------------------------------------------

/// Asserts that the child's answer reports an `Error::Acl` from `api`, with
/// `code` on the software device (the code hardware uses is not public).
fn assert_refused(answer: &str, api: &str, code: i32) {
    let prefix = format!("error acl {api} ");
    assert!(answer.starts_with(&prefix), "expected a refusal by {api}: {answer}");
    software_only(|| assert_eq!(answer, format!("{prefix}{code}")));
}

fn assert_acl<T: std::fmt::Debug>(result: ascend::Result<T>, api: &str, code: i32) {
    match result {
        Err(Error::Acl {
            api: got,
            code: got_code,
            ..
        }) => {
            assert_eq!(got, api);
            software_only(|| assert_eq!(got_code, ErrorCode(code)));
        }
        other => panic!("expected a refusal by {api}, got {other:?}"),
    }
}

fn import_api(kind: ShareKind) -> &'static str {
    match kind {
        ShareKind::V1 => "aclrtMemImportFromShareableHandle",
        _ => "aclrtMemImportFromShareableHandleV2",
    }
}

/// Data crosses processes both ways through `kind` handles.
fn round_trip(kind: ShareKind) {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let child_pid = child.pid();
    let (prop, size) = granule(&device);
    let words = size / 4;

    // The parent writes and exports; the child reads and replies.
    let physical = PhysicalAlloc::new(&prop, size).unwrap();
    let range = VirtualRange::reserve(size).unwrap();
    let mut region = range.map(0, &physical).unwrap();
    region
        .as_mut_slice::<u32>()
        .unwrap()
        .write_from_host(&pattern(0x1111_0000u32, words))
        .unwrap();
    let export = physical.export(kind).unwrap();
    assert_eq!(export.token().kind(), kind);
    assert_eq!(export.token().size(), size);
    export.allow_pids(&[child_pid]).unwrap();
    let token = export.token();
    assert_eq!(
        child.ask(&format!("import-rw {token} {} {}", 0x1111_0000u32, 0x2222_0000u32)),
        "ok"
    );
    let back = region.as_slice::<u32>().unwrap().to_vec().unwrap();
    assert_eq!(back, pattern(0x2222_0000u32, words), "the child's reply");

    // The child writes and exports; the parent reads and replies.
    let own = Pid::current().unwrap();
    let answer = child.ask(&format!(
        "export-serve {} {} {own} {}",
        kind_name(kind),
        0x3333_0000u32,
        0x4444_0000
    ));
    let theirs: ShareableHandle = answer.strip_prefix("token ").expect(&answer).parse().unwrap();
    assert_eq!(theirs.kind(), kind);
    let imported = ImportedAlloc::import(&theirs, &device).unwrap();
    assert_eq!(imported.size(), size);
    assert_eq!(imported.kind(), kind);
    let other_range = VirtualRange::reserve(size).unwrap();
    let mut mapped = other_range.map(0, &imported).unwrap();
    assert_eq!(
        mapped.as_slice::<u32>().unwrap().to_vec().unwrap(),
        pattern(0x3333_0000u32, words)
    );
    mapped
        .as_mut_slice::<u32>()
        .unwrap()
        .write_from_host(&pattern(0x4444_0000u32, words))
        .unwrap();
    mapped.unmap().unwrap();
    imported.free().unwrap();
    assert_eq!(child.ask("check"), "ok", "the child saw the parent's reply");
    child.quit();
    region.unmap().unwrap();
    physical.free().unwrap();
}

#[test]
fn v1_handles_move_data_both_ways() {
    round_trip(ShareKind::V1);
}

#[test]
fn v2_default_handles_move_data_both_ways() {
    round_trip(ShareKind::V2Default);
}

#[test]
fn v2_fabric_handles_move_data_both_ways() {
    round_trip(ShareKind::V2Fabric);
}

#[test]
fn ipc_keys_move_data_both_ways() {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let child_pid = child.pid();
    let buf = DeviceBuf::from_slice(&device, &pattern(0x5555_0000u32, IPC_WORDS)).unwrap();
    let export = buf.ipc_export().unwrap();
    assert_eq!(export.key().size(), IPC_WORDS * 4);
    export.allow_pids(&[child_pid]).unwrap();
    let answer = child.ask(&format!(
        "ipc-rw {} {} {}",
        export.key(),
        0x5555_0000u32,
        0x6666_0000u32
    ));
    assert_eq!(answer, "ok");
    // One import of a key at a time in a process.
    assert_eq!(
        child.ask(&format!("ipc-twice {}", export.key())),
        "error invalid aclrtIpcMemImportByKey"
    );
    export.close().unwrap();
    assert_eq!(
        buf.to_vec().unwrap(),
        pattern(0x6666_0000u32, IPC_WORDS),
        "the child's reply"
    );

    let own = Pid::current().unwrap();
    let answer = child.ask(&format!("ipc-serve {} {own} {}", 0x7777_0000u32, 0x8888_0000u32));
    let key: IpcKey = answer.strip_prefix("key ").expect(&answer).parse().unwrap();
    let mut import = IpcImport::open(&key, &device).unwrap();
    assert_eq!(import.size(), IPC_WORDS * 4);
    assert_eq!(
        import.as_slice::<u32>().unwrap().to_vec().unwrap(),
        pattern(0x7777_0000u32, IPC_WORDS)
    );
    assert!(matches!(
        import.as_slice::<[u8; 3]>(),
        Err(Error::InvalidArgument { .. })
    ));
    import
        .as_mut_slice::<u32>()
        .unwrap()
        .write_from_host(&pattern(0x8888_0000u32, IPC_WORDS))
        .unwrap();
    import.close().unwrap();
    assert_eq!(child.ask("check"), "ok", "the child saw the parent's reply");
    child.quit();
}

/// Issue 10, finding 3: an export imported twice in one process is one
/// memory there, so only one of the imports can be mapped at a time (and
/// each import once).
#[test]
fn an_export_imported_twice_maps_once() {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let (prop, size) = granule(&device);
    for kind in KINDS {
        // A handle is exported once per process: one allocation per kind.
        let physical = PhysicalAlloc::new(&prop, size).unwrap();
        let export = physical.export(kind).unwrap();
        export.allow_pids(&[child.pid()]).unwrap();
        let refused = "invalid aclrtMapMem invalid aclrtMapMem";
        assert_eq!(
            child.ask(&format!("import-twice {}", export.token())),
            refused,
            "{kind:?}"
        );
        drop(export);
    }
    child.quit();
}

/// The owned forms on both sides: the exporter keeps an `OwnedExport` in a
/// structure shared through an `Arc` (whitelisting from another thread),
/// the importer maps through an `OwnedMapping<ImportedAlloc>` that it moves
/// to another thread.
#[test]
fn owned_exports_and_imports_move_data_both_ways() {
    struct Shared {
        export: OwnedExport,
    }
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let child_pid = child.pid();
    let (prop, size) = granule(&device);
    let physical = Arc::new(PhysicalAlloc::new(&prop, size).unwrap());
    let range = Arc::new(VirtualRange::reserve(size).unwrap());
    let mut mapping = OwnedMapping::new(range, 0, Arc::clone(&physical)).unwrap();
    mapping
        .as_mut_slice::<u32>()
        .unwrap()
        .write_from_host(&pattern(0x7777_0000, size / 4))
        .unwrap();
    let shared = Arc::new(Shared {
        export: OwnedExport::new(physical, ShareKind::V2Default).unwrap(),
    });
    let token = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            shared.export.allow_pids(&[child_pid]).unwrap();
            shared.export.token()
        })
        .join()
        .unwrap()
    };
    assert_eq!(
        child.ask(&format!("import-owned {token} {} {}", 0x7777_0000u32, 0x8888_0000u32)),
        "ok"
    );
    assert_eq!(
        mapping.as_slice::<u32>().unwrap().to_vec().unwrap(),
        pattern(0x8888_0000, size / 4)
    );
    child.quit();
}

/// An IPC key for a tensor kept as `Arc<Ordered<DeviceBuf>>`: the export
/// holds a share, so the tensor's other owners may go; the child writes
/// through the key, and the data is read back after the key is closed.
#[test]
fn an_owned_ipc_export_keeps_its_memory_and_key() {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let child_pid = child.pid();
    let tensor = Arc::new(Ordered::new(
        DeviceBuf::from_slice(&device, &pattern(0x9999_0000u32, IPC_WORDS)).unwrap(),
    ));
    let export = OwnedIpcExport::of_ordered(Arc::clone(&tensor), PidValidation::Enforced).unwrap();
    drop(tensor);
    let export = std::thread::spawn(move || {
        export.allow_pids(&[child_pid]).unwrap();
        export
    })
    .join()
    .unwrap();
    let answer = child.ask(&format!(
        "ipc-rw {} {} {}",
        export.key(),
        0x9999_0000u32,
        0xAAAA_0000u32
    ));
    assert_eq!(answer, "ok");
    let tensor = Arc::clone(export.holder());
    export.close().unwrap();
    let tensor = Arc::into_inner(tensor).expect("the last owner").into_inner().unwrap();
    assert_eq!(tensor.to_vec().unwrap(), pattern(0xAAAA_0000u32, IPC_WORDS));
    child.quit();
}

#[test]
fn a_process_off_the_whitelist_is_refused() {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let child_pid = child.pid();
    let own = Pid::current().unwrap();
    let (prop, size) = granule(&device);
    for kind in KINDS {
        let physical = PhysicalAlloc::new(&prop, size).unwrap();
        let range = VirtualRange::reserve(size).unwrap();
        let mut region = range.map(0, &physical).unwrap();
        region
            .as_mut_slice::<u32>()
            .unwrap()
            .write_from_host(&pattern(9, size / 4))
            .unwrap();
        let export = physical.export(kind).unwrap();
        let token = export.token();
        // No whitelist yet, then one without the child: refused.
        assert_refused(
            &child.ask(&format!("import-rw {token} 9 10")),
            import_api(kind),
            NO_PERMISSION,
        );
        export.allow_pids(&[own]).unwrap();
        assert_refused(
            &child.ask(&format!("import-rw {token} 9 10")),
            import_api(kind),
            NO_PERMISSION,
        );
        // Whitelisted: accepted.
        export.allow_pids(&[child_pid]).unwrap();
        assert_eq!(child.ask(&format!("import-rw {token} 9 10")), "ok", "{kind:?}");
        assert_eq!(
            region.as_slice::<u32>().unwrap().to_vec().unwrap(),
            pattern(10, size / 4)
        );
    }
    let buf = DeviceBuf::from_slice(&device, &pattern(1, IPC_WORDS)).unwrap();
    let export = buf.ipc_export().unwrap();
    let ask = format!("ipc-rw {} 1 2", export.key());
    assert_refused(&child.ask(&ask), "aclrtIpcMemImportByKey", NO_PERMISSION);
    export.allow_pids(&[own]).unwrap();
    assert_refused(&child.ask(&ask), "aclrtIpcMemImportByKey", NO_PERMISSION);
    export.allow_pids(&[child_pid]).unwrap();
    assert_eq!(child.ask(&ask), "ok");
    drop(export);
    assert_eq!(buf.to_vec().unwrap(), pattern(2, IPC_WORDS));
    child.quit();
}

#[test]
fn disabled_pid_validation_needs_no_whitelist_and_takes_none() {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let (prop, size) = granule(&device);
    let physical = PhysicalAlloc::new(&prop, size).unwrap();
    let range = VirtualRange::reserve(size).unwrap();
    let mut region = range.map(0, &physical).unwrap();
    region
        .as_mut_slice::<u32>()
        .unwrap()
        .write_from_host(&pattern(3, size / 4))
        .unwrap();
    let export = physical
        .export_with(ShareKind::V2Default, PidValidation::Disabled)
        .unwrap();
    assert_eq!(export.validation(), PidValidation::Disabled);
    let refused = export.allow_pids(&[Pid::current().unwrap()]);
    assert!(matches!(refused, Err(Error::InvalidArgument { .. })), "{refused:?}");
    assert_eq!(child.ask(&format!("import-rw {} 3 4", export.token())), "ok");
    assert_eq!(
        region.as_slice::<u32>().unwrap().to_vec().unwrap(),
        pattern(4, size / 4)
    );

    let buf = DeviceBuf::from_slice(&device, &pattern(5, IPC_WORDS)).unwrap();
    let export = buf.ipc_export_with(PidValidation::Disabled).unwrap();
    let refused = export.allow_pids(&[Pid::current().unwrap()]);
    assert!(matches!(refused, Err(Error::InvalidArgument { .. })), "{refused:?}");
    assert_eq!(child.ask(&format!("ipc-rw {} 5 6", export.key())), "ok");
    export.close().unwrap();
    assert_eq!(buf.to_vec().unwrap(), pattern(6, IPC_WORDS));
    child.quit();
}

#[test]
fn importing_in_the_exporting_process_is_refused() {
    let device = device();
    let (prop, size) = granule(&device);
    for kind in KINDS {
        let physical = PhysicalAlloc::new(&prop, size).unwrap();
        // Validation disabled: the whitelist is not the reason.
        let export = physical.export_with(kind, PidValidation::Disabled).unwrap();
        assert_acl(
            ImportedAlloc::import(&export.token(), &device),
            import_api(kind),
            PARAM_INVALID,
        );
    }
    let buf = DeviceBuf::from_slice(&device, &[1u32; 64]).unwrap();
    let export = buf.ipc_export_with(PidValidation::Disabled).unwrap();
    // Twice: a refused open does not leave the key marked open.
    for _ in 0..2 {
        assert_acl(
            IpcImport::open(export.key(), &device),
            "aclrtIpcMemImportByKey",
            PARAM_INVALID,
        );
    }
}

#[test]
fn an_import_outlives_the_exporters_free() {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let child_pid = child.pid();
    let (prop, size) = granule(&device);
    let physical = PhysicalAlloc::new(&prop, size).unwrap();
    let range = VirtualRange::reserve(size).unwrap();
    let mut region = range.map(0, &physical).unwrap();
    region
        .as_mut_slice::<u32>()
        .unwrap()
        .write_from_host(&pattern(0xabcu32, size / 4))
        .unwrap();
    let export = physical.export(ShareKind::V1).unwrap();
    export.allow_pids(&[child_pid]).unwrap();
    let token = export.token();
    assert_eq!(child.ask(&format!("hold {token}")), "0");
    // The exporter unmaps and frees its only reference.
    region.unmap().unwrap();
    physical.free().unwrap();
    range.release().unwrap();
    // The child's import still reads the data; a new import is refused.
    assert_eq!(child.ask(&format!("read-held 0 {}", 0xabcu32)), "ok");
    assert_refused(
        &child.ask(&format!("hold {token}")),
        "aclrtMemImportFromShareableHandle",
        PARAM_INVALID,
    );
    child.quit();
}

#[test]
fn a_size_that_is_not_the_allocations_is_refused() {
    let device = device();
    let mut child = Peer::spawn("child_peer", CHILD_VAR);
    let child_pid = child.pid();
    let (prop, size) = granule(&device);
    let physical = PhysicalAlloc::new(&prop, size).unwrap();
    let export = physical.export(ShareKind::V1).unwrap();
    export.allow_pids(&[child_pid]).unwrap();
    let value = export.token().as_u64().unwrap();
    // Not a whole number of granules: refused in Rust after the import.
    let odd = ShareableHandle::from_u64(ShareKind::V1, value, size + 4096).unwrap();
    assert_eq!(child.ask(&format!("hold {odd}")), "error invalid ImportedAlloc::import");
    // Whole granules, but not the allocation's size: the runtime refuses
    // the mapping.
    let double = ShareableHandle::from_u64(ShareKind::V1, value, 2 * size).unwrap();
    assert_eq!(child.ask(&format!("hold {double}")), "0");
    let answer = child.ask("read-held 0 0");
    assert!(answer.starts_with("error acl aclrtMapMem "), "{answer}");
    software_only(|| assert_eq!(answer, format!("error acl aclrtMapMem {PARAM_INVALID}")));
    child.quit();
}

#[test]
fn handles_and_keys_survive_text_and_bytes() {
    let device = device();
    let (prop, size) = granule(&device);
    for kind in KINDS {
        let physical = PhysicalAlloc::new(&prop, size).unwrap();
        let export: ExportedHandle<'_> = physical.export(kind).unwrap();
        let token = export.token();
        let text = token.to_string();
        assert!(!text.contains(char::is_whitespace), "{text}");
        assert!(text.starts_with(&format!("{}:{size}:", kind_name(kind))), "{text}");
        assert_eq!(text.parse::<ShareableHandle>().unwrap(), token);
        assert_eq!(ShareableHandle::from_bytes(&token.to_bytes()).unwrap(), token);
        assert_eq!(token.as_u64().is_some(), kind != ShareKind::V2Fabric);
        assert_eq!(token.as_fabric().is_some(), kind == ShareKind::V2Fabric);
        // One export per handle per process.
        assert!(matches!(physical.export(kind), Err(Error::Acl { .. })));
        assert!(matches!(export.allow_pids(&[]), Err(Error::InvalidArgument { .. })));
    }
    for bad in [
        "",
        "v1",
        "v1:0:0000000000000000",
        "v1:8:00",
        "v3:8:0000000000000000",
        "fabric:8:00",
        "v1:x:00",
    ] {
        assert!(bad.parse::<ShareableHandle>().is_err(), "{bad:?}");
    }
    assert!(ShareableHandle::from_bytes(&[1, 0, 0]).is_err());
    assert!(ShareableHandle::from_u64(ShareKind::V2Fabric, 1, size).is_err());

    let buf = DeviceBuf::from_slice(&device, &[0u8; 512]).unwrap();
    let export = buf.ipc_export().unwrap();
    let text = export.key().to_string();
    assert!(!text.contains(char::is_whitespace), "{text}");
    assert_eq!(&text.parse::<IpcKey>().unwrap(), export.key());
    for bad in ["", "ipc", "ipc:0:41", "ipc:8:", "key:8:41", "ipc:8:4"] {
        assert!(bad.parse::<IpcKey>().is_err(), "{bad:?}");
    }
    let empty = DeviceBuf::<u8>::zeroed(&device, 0).unwrap();
    assert!(matches!(empty.ipc_export(), Err(Error::InvalidArgument { .. })));
}

#[test]
fn pid_is_the_runtimes_id_of_this_process() {
    let pid = Pid::current().unwrap();
    assert_eq!(pid.to_string().parse::<Pid>().unwrap(), pid);
    software_only(|| assert_eq!(pid.raw(), std::process::id() as i32));
    assert!("-4".parse::<Pid>().is_err());
    assert!("pid".parse::<Pid>().is_err());
}

#[test]
fn shared_values_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<ShareableHandle>();
    send_sync::<IpcKey>();
    send_sync::<ImportedAlloc>();
    send_sync::<IpcImport>();
    send_sync::<ExportedHandle<'static>>();
}
