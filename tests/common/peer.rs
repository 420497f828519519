//! A child process of the same test binary, driven line by line: the
//! parent writes a command to its standard input, the child prints one
//! answer line starting with [`ANSWER`]. For the cross-process tests.

use ascend::share::Pid;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Starts each answer line of the child.
pub const ANSWER: &str = "answer: ";

/// A running child.
pub struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Peer {
    /// Runs the `#[ignore]`d test `child_test` of this binary in a child
    /// process with `child_var` set, on the backend this process runs on.
    pub fn spawn(child_test: &str, child_var: &str) -> Self {
        let mut command = Command::new(std::env::current_exe().expect("test binary"));
        command
            .args(["--exact", child_test, "--ignored", "--nocapture", "--test-threads=1"])
            .env(child_var, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if super::on_software() {
            command.env("ASCEND_BACKEND", "software");
        }
        let mut child = command.spawn().expect("spawn the child");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        Self { child, input, output }
    }

    /// Writes one command line.
    pub fn send(&mut self, line: &str) {
        writeln!(self.input, "{line}").expect("write to the child");
        self.input.flush().expect("flush");
    }

    /// The next answer, without its marker.
    pub fn answer(&mut self) -> String {
        loop {
            let mut line = String::new();
            let read = self.output.read_line(&mut line).expect("read from the child");
            assert!(read > 0, "the child exited without answering");
            // The harness prints "test NAME ... " without a newline, so the
            // first answer may share its line.
            if let Some(at) = line.find(ANSWER) {
                return line[at + ANSWER.len()..].trim().to_owned();
            }
        }
    }

    /// Sends `line` and returns the answer.
    pub fn ask(&mut self, line: &str) -> String {
        self.send(line);
        self.answer()
    }

    /// The child's pid, as the runtime names it (the child answers `pid`).
    pub fn pid(&mut self) -> Pid {
        self.ask("pid").parse().expect("the child's pid")
    }

    /// Ends the child (it answers `quit` by exiting); it must succeed.
    pub fn quit(mut self) {
        self.send("quit");
        let status = self.child.wait().expect("wait for the child");
        assert!(status.success(), "child failed: {status:?}");
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // Still running here means the test failed: do not leave it behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
