//! `kcp` run as a child process by the live tests, bounded in time: its exit status, its
//! output and how long it took.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// What one `kcp` run did.
pub struct Run {
    /// The exit status; `None` when it was killed at the limit.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    /// Its standard output as one JSON document.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("kcp printed no JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }

    /// Its JSON after asserting it exited 0.
    pub fn ok(self) -> Value {
        assert_eq!(self.status, Some(0), "kcp failed:\n{}\n{}", self.stdout, self.stderr);
        self.json()
    }
}

/// Runs `kcp ARGS...` in its own process group, killed after `limit`; both pipes are drained
/// while it runs, so a large output cannot block it.
pub fn run(args: &[&str], limit: Duration) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcp"));
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn().expect("kcp starts");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status.code();
        }
        if started.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    Run { status, stdout: out_reader.join().unwrap_or_default(), stderr: err_reader.join().unwrap_or_default(), elapsed }
}
