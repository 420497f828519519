//! A second process for cross-process tests: the test binary re-runs itself
//! as a child (its `child_peer` test), which executes commands read line by
//! line from stdin and answers each with one line `answer: ...` on stdout.

use ascend_sys::aclError;
use std::io::Read;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};

/// Starts each answer line of the child.
const ANSWER: &str = "answer: ";

/// A child process running the `child_peer` test of this binary.
pub struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Peer {
    /// Starts the child; `child_var` is set in its environment so that its
    /// `child_peer` test knows it is the child.
    pub fn spawn(child_var: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", "child_peer", "--ignored", "--nocapture", "--test-threads=1"])
            .env(child_var, "1")
            .env("ASCEND_BACKEND", "software")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the child");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        Self { child, input, output }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.input, "{command}").expect("write to the child");
        self.input.flush().expect("flush");
    }

    /// Sends one command; the words of its answer.
    pub fn ask(&mut self, command: &str) -> Vec<String> {
        self.send(command);
        loop {
            let mut line = String::new();
            let read = self.output.read_line(&mut line).expect("read from the child");
            assert!(read > 0, "the child exited before answering {command:?}");
            // The harness prints "test child_peer ... " without a newline,
            // so the first answer shares its line.
            if let Some(at) = line.find(ANSWER) {
                return line[at + ANSWER.len()..]
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
            }
        }
    }

    /// The code of a command answering a code alone or a code first.
    pub fn code(&mut self, command: &str) -> aclError {
        self.ask(command)[0].parse().expect("code")
    }

    /// The child's process id.
    pub fn pid(&mut self) -> i32 {
        self.ask("pid")[0].parse().expect("pid")
    }

    /// Sends a last command the child is expected not to survive; returns
    /// the rest of its output and how it ended.
    pub fn send_and_wait(mut self, command: &str) -> (String, ExitStatus) {
        self.send(command);
        let mut rest = String::new();
        let _ = self.output.read_to_string(&mut rest);
        let status = self.child.wait().expect("wait for the child");
        (rest, status)
    }

    /// Ends the child and waits for it (it exits normally).
    pub fn quit(mut self) {
        self.send("quit");
        let status = self.child.wait().expect("wait for the child");
        assert!(status.success(), "child failed: {status:?}");
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // A child still running here means the test failed: do not leave it.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The child's loop: `start` sets the child up and gives the executor, which
/// answers each command from stdin until `quit`. Does nothing unless
/// `child_var` is set (the test run directly).
pub fn serve<F: FnMut(&str) -> String>(child_var: &str, start: impl FnOnce() -> F) {
    if std::env::var_os(child_var).is_none() {
        return;
    }
    let mut execute = start();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("read a command");
        if line.trim() == "quit" {
            break;
        }
        println!("{ANSWER}{}", execute(&line));
    }
}
