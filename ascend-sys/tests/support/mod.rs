//! Test harness for `tests/hardware_path.rs`: builds the fake AscendCL library
//! (`tests/fake_acl/fake_acl.c`) with the system C compiler, and runs one
//! scenario per child process (the backend is chosen once per process).

use std::ffi::OsStr;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Set in a child's environment to the name of the child test it must run;
/// a child test run any other way (`cargo test -- --ignored`) does nothing.
const CHILD_VAR: &str = "ASCEND_SYS_HARDWARE_PATH_CHILD";

/// Environment variable naming the fake library's call log.
pub const LOG_VAR: &str = "FAKE_ACL_LOG";

/// Every variable that steers backend selection; cleared in each child so the
/// developer's own environment cannot leak into a scenario.
const STEERING_VARS: [&str; 5] = [
    "ASCEND_BACKEND",
    "ASCEND_ACL_LIB",
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    LOG_VAR,
];

/// Prefix of the lines a child prints to tell its parent an address that the
/// fake library will log (out-parameters live on the child's stack).
const ADDRESS_PREFIX: &str = "FAKE_ACL_ADDRESS ";

fn work_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("hardware_path")
}

/// The fake `libascendcl.so`, compiled once per test process.
///
/// # Panics
///
/// When there is no C compiler or it fails: these tests must not pass
/// silently on a machine that cannot build the library.
pub fn fake_library() -> &'static Path {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BUILT.get_or_init(|| build_fake_library("libfake_acl.so", &[])) {
        Ok(path) => path,
        Err(why) => panic!("{why}"),
    }
}

/// The fake library built with the marker symbol of ascend-rs's own
/// software-device library (`ascend_sys::SOFTWARE_LIBRARY_MARKER`), which the
/// loader must refuse.
///
/// # Panics
///
/// As [`fake_library`].
pub fn marked_fake_library() -> &'static Path {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BUILT.get_or_init(|| build_fake_library("libmarked_acl.so", &["-DFAKE_ACL_SOFTWARE_MARKER"])) {
        Ok(path) => path,
        Err(why) => panic!("{why}"),
    }
}

fn build_fake_library(name: &str, defines: &[&str]) -> Result<PathBuf, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = manifest.join("tests/fake_acl/fake_acl.c");
    let include = manifest.join("include");
    let dir = work_dir();
    fs::create_dir_all(&dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let output = dir.join(name);
    // Build under a per-process name and rename, so that concurrent test
    // processes never dlopen a half-written file.
    let partial = dir.join(format!("{name}.{}.partial", std::process::id()));

    let compiler = std::env::var("CC")
        .ok()
        .filter(|cc| !cc.trim().is_empty())
        .unwrap_or_else(|| "cc".to_string());
    let mut words = compiler.split_whitespace();
    let program = words.next().unwrap_or("cc");
    let result = Command::new(program)
        .args(words)
        .args(["-shared", "-fPIC", "-O0"])
        .args(defines)
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&partial)
        .arg(&source)
        .output();
    let result = match result {
        Ok(result) => result,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Err(format!(
                "no C compiler: `{program}` was not found ({error}). The hardware-path tests build a fake \
                 libascendcl.so from {} and need one: install gcc or clang, or set CC.",
                source.display()
            ));
        }
        Err(error) => return Err(format!("cannot run the C compiler `{compiler}`: {error}")),
    };
    if !result.status.success() {
        return Err(format!(
            "the C compiler `{compiler}` failed to build {} ({}):\n{}{}",
            source.display(),
            result.status,
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        ));
    }
    fs::rename(&partial, &output).map_err(|error| format!("cannot move {} into place: {error}", partial.display()))?;
    Ok(output)
}

/// True when this process is the child started for `name`. Otherwise says
/// why the test does nothing, and returns false.
pub fn is_child(name: &str) -> bool {
    let chosen = std::env::var_os(CHILD_VAR).is_some_and(|value| value == name);
    if !chosen {
        eprintln!("{name}: the child half of a parent test; it only runs in the child process its parent starts");
    }
    chosen
}

/// Prints an address for the parent (see [`ChildRun::address`]).
pub fn report_address<T: ?Sized>(name: &str, pointer: *const T) {
    println!("{ADDRESS_PREFIX}{name}={:#x}", pointer.cast::<()>().addr());
}

/// One child process about to run one child test.
pub struct Child {
    name: &'static str,
    command: Command,
    log: PathBuf,
}

impl Child {
    /// A child that will run the test `name` of this test binary, with every
    /// backend-steering variable cleared and `FAKE_ACL_LOG` pointing at a
    /// fresh log file.
    pub fn new(name: &'static str) -> Self {
        let exe = std::env::current_exe().expect("the path of this test binary");
        let logs = work_dir().join("logs");
        fs::create_dir_all(&logs).expect("a directory for the fake library's logs");
        let log = logs.join(format!("{name}.{}.log", std::process::id()));
        match fs::remove_file(&log) {
            Ok(()) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => panic!("cannot remove the stale log {}: {error}", log.display()),
        }
        let mut command = Command::new(exe);
        command.args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"]);
        for var in STEERING_VARS {
            command.env_remove(var);
        }
        command.env(CHILD_VAR, name).env(LOG_VAR, &log);
        Self { name, command, log }
    }

    /// Sets one environment variable of the child.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Sets `ASCEND_ACL_LIB` to the fake library.
    pub fn fake_lib(self) -> Self {
        self.env("ASCEND_ACL_LIB", fake_library())
    }

    /// Runs the child and asserts that its one test ran and passed.
    pub fn run(mut self) -> ChildRun {
        let output = self
            .command
            .output()
            .expect("to start this test binary again as a child");
        let run = ChildRun {
            name: self.name,
            status: output.status.to_string(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            log: self.log,
        };
        assert!(
            output.status.success(),
            "child test `{}` failed\n{}",
            run.name,
            run.describe()
        );
        // `--exact` with a misspelt name runs nothing and still succeeds.
        assert!(
            run.stdout.contains("test result: ok. 1 passed;"),
            "child test `{}` did not run exactly one test\n{}",
            run.name,
            run.describe()
        );
        run
    }
}

/// What a child did.
pub struct ChildRun {
    name: &'static str,
    status: String,
    stdout: String,
    stderr: String,
    log: PathBuf,
}

impl ChildRun {
    /// Status, output and call log, for failure messages.
    pub fn describe(&self) -> String {
        let log = match fs::read_to_string(&self.log) {
            Ok(text) => text,
            Err(error) => format!("({error})\n"),
        };
        format!(
            "--- child `{}`: {} ---\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- {} ---\n{log}",
            self.name,
            self.status,
            self.stdout,
            self.stderr,
            self.log.display()
        )
    }

    /// The fake library's call log, one entry per call (empty when the
    /// library was never called, or never loaded).
    pub fn log_lines(&self) -> Vec<String> {
        match fs::read_to_string(&self.log) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(error) if error.kind() == ErrorKind::NotFound => Vec::new(),
            Err(error) => panic!("cannot read {}: {error}", self.log.display()),
        }
    }

    /// The address the child reported under `name` with [`report_address`].
    pub fn address(&self, name: &str) -> String {
        let prefix = format!("{ADDRESS_PREFIX}{name}=");
        self.stdout
            .lines()
            // libtest prints "test NAME ... " before the first line of output.
            .find_map(|line| line.split_once(&prefix).map(|(_, rest)| rest.trim_end()))
            .unwrap_or_else(|| panic!("the child did not report the address `{name}`\n{}", self.describe()))
            .to_string()
    }

    /// Asserts that the call log is exactly `expected`, in order.
    pub fn assert_log(&self, expected: &[String]) {
        let actual = self.log_lines();
        assert_eq!(
            actual,
            expected,
            "unexpected fake library call log\n{}",
            self.describe()
        );
    }
}
