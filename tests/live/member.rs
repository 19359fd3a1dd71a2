//! Group members as child processes: spawned in their own process group, their JSON lines read
//! as they come, waits bounded, and the whole group killed on drop.

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `(topic, partition)`.
pub type TopicPartition = (String, i32);

/// One line a member printed (the `kcp group join` shape; see ../shared/spec/cli.md).
#[derive(Clone, Debug)]
pub struct Event {
    /// Wall-clock milliseconds when the member printed it.
    pub ts_ms: u64,
    /// `config`, `joined`, `assigned`, `revoked`, `lost`, `reported`, `warning`, `error`, `left`, ...
    pub event: String,
    /// The generation (classic) or member epoch (consumer protocol), when the client tells it.
    pub generation_id: Option<i32>,
    /// The partitions the callback is about (`assigned`, `revoked`, `lost`).
    pub partitions: BTreeSet<TopicPartition>,
    /// What the member owns after the callback; `None` for lines that say nothing about it.
    pub owned: Option<BTreeSet<TopicPartition>>,
    /// The whole line.
    pub raw: Value,
}

/// `[{"topic": T, "partitions": [..]}]` to a set of pairs; `None` if the value has another shape.
pub fn parse_partitions(v: &Value) -> Option<BTreeSet<TopicPartition>> {
    let mut out = BTreeSet::new();
    for group in v.as_array()? {
        let topic = group["topic"].as_str()?;
        for p in group["partitions"].as_array()? {
            out.insert((topic.to_string(), i32::try_from(p.as_i64()?).ok()?));
        }
    }
    Some(out)
}

impl Event {
    /// Parses one output line; `Err` for a line that is not a JSON object with `ts_ms` and `event`.
    pub fn parse(line: &str) -> Result<Event, String> {
        let raw: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
        let ts_ms = raw["ts_ms"].as_u64().ok_or_else(|| format!("no ts_ms: {line}"))?;
        let event = raw["event"].as_str().ok_or_else(|| format!("no event: {line}"))?.to_string();
        let generation_id = raw["generation_id"].as_i64().and_then(|g| i32::try_from(g).ok());
        let partitions = parse_partitions(&raw["partitions"]).unwrap_or_default();
        let owned = match event.as_str() {
            "left" => Some(BTreeSet::new()),
            _ => parse_partitions(&raw["owned"]),
        };
        Ok(Event { ts_ms, event, generation_id, partitions, owned, raw })
    }
}

#[derive(Default)]
struct Output {
    events: Vec<Event>,
    /// Lines that were not events (kept for the failure messages).
    other: Vec<String>,
    closed: bool,
}

/// The options of a reference member (`LiveConsumer` / `rdkafka_consumer.py`), which take the
/// same flags as `kcp group join`.
#[derive(Clone, Debug, Default)]
pub struct MemberOptions {
    pub group: String,
    pub topics: Vec<String>,
    /// Classic assignors, preferred first: `range`, `roundrobin`, `sticky` (Java only),
    /// `cooperative-sticky`. Empty: the client's default.
    pub assignors: Vec<String>,
    /// `classic` (default) or `consumer` (KIP-848, Kafka 4.x).
    pub group_protocol: Option<String>,
    /// The server-side assignor of a consumer-protocol member (`uniform`, `range`).
    pub remote_assignor: Option<String>,
    pub instance_id: Option<String>,
    pub rack: Option<String>,
    pub client_id: Option<String>,
    pub session_timeout_ms: Option<u32>,
    pub heartbeat_interval_ms: Option<u32>,
    /// The member leaves by itself after this long (default 300 s: a bound, not a schedule).
    pub duration_s: Option<u64>,
    /// A bootstrap other than the cluster's PLAINTEXT one (e.g. the SASL_SSL listener).
    pub bootstrap: Option<String>,
    /// A client properties file (security settings) for the member.
    pub command_config: Option<PathBuf>,
    /// Extra client settings.
    pub config: Vec<(String, String)>,
}

impl MemberOptions {
    /// A member of `group` subscribed to `topics`.
    pub fn new<T: AsRef<str>>(group: &str, topics: impl IntoIterator<Item = T>) -> Self {
        MemberOptions {
            group: group.to_string(),
            topics: topics.into_iter().map(|t| t.as_ref().to_string()).collect(),
            ..Self::default()
        }
    }

    pub fn assignors<T: AsRef<str>>(mut self, assignors: impl IntoIterator<Item = T>) -> Self {
        self.assignors = assignors.into_iter().map(|a| a.as_ref().to_string()).collect();
        self
    }

    pub fn group_protocol(mut self, protocol: &str) -> Self {
        self.group_protocol = Some(protocol.to_string());
        self
    }

    pub fn client_id(mut self, id: &str) -> Self {
        self.client_id = Some(id.to_string());
        self
    }

    pub fn instance_id(mut self, id: &str) -> Self {
        self.instance_id = Some(id.to_string());
        self
    }

    pub fn rack(mut self, rack: &str) -> Self {
        self.rack = Some(rack.to_string());
        self
    }

    pub fn session_timeout_ms(mut self, ms: u32) -> Self {
        self.session_timeout_ms = Some(ms);
        self
    }

    pub fn duration_s(mut self, s: u64) -> Self {
        self.duration_s = Some(s);
        self
    }

    pub fn config(mut self, key: &str, value: &str) -> Self {
        self.config.push((key.to_string(), value.to_string()));
        self
    }

    /// A name for messages: the client id if set, else `KIND`.
    pub fn label(&self, kind: &str) -> String {
        match &self.client_id {
            Some(id) => format!("{kind}:{id}"),
            None => kind.to_string(),
        }
    }

    /// The flags of `kcp group join` (../shared/spec/cli.md). Panics when a field it has no flag
    /// for is set (client id, group protocol, remote assignor, heartbeat, extra config): put
    /// client settings in `command_config` instead.
    pub fn kcp_args(&self, default_bootstrap: &str) -> Vec<String> {
        assert!(
            self.client_id.is_none()
                && self.group_protocol.is_none()
                && self.remote_assignor.is_none()
                && self.heartbeat_interval_ms.is_none()
                && self.config.is_empty(),
            "kcp group join has no flag for one of the options set: {self:?}"
        );
        self.args(default_bootstrap)
    }

    /// The command-line flags of LiveConsumer and rdkafka_consumer.py. `kcp group join` shares
    /// `--bootstrap-server`, `--command-config`, `--group`, `--topics`, `--assignors`,
    /// `--instance-id`, `--rack`, `--session-timeout-ms` and `--duration-s`; leave the other
    /// fields unset for it.
    pub fn args(&self, default_bootstrap: &str) -> Vec<String> {
        let mut a = vec![
            "--bootstrap-server".to_string(),
            self.bootstrap.clone().unwrap_or_else(|| default_bootstrap.to_string()),
            "--group".into(),
            self.group.clone(),
            "--topics".into(),
            self.topics.join(","),
        ];
        let mut opt = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(flag.to_string());
                a.push(v);
            }
        };
        opt("--assignors", (!self.assignors.is_empty()).then(|| self.assignors.join(",")));
        opt("--group-protocol", self.group_protocol.clone());
        opt("--remote-assignor", self.remote_assignor.clone());
        opt("--instance-id", self.instance_id.clone());
        opt("--rack", self.rack.clone());
        opt("--client-id", self.client_id.clone());
        opt("--session-timeout-ms", self.session_timeout_ms.map(|v| v.to_string()));
        opt("--heartbeat-interval-ms", self.heartbeat_interval_ms.map(|v| v.to_string()));
        opt("--duration-s", Some(self.duration_s.unwrap_or(300).to_string()));
        opt("--command-config", self.command_config.as_ref().map(|p| p.display().to_string()));
        for (k, v) in &self.config {
            a.push("--config".into());
            a.push(format!("{k}={v}"));
        }
        a
    }
}

/// A running member process. Dropping it SIGKILLs its process group.
pub struct Member {
    /// A name for messages (`java:j1`).
    pub label: String,
    child: Child,
    output: Arc<Mutex<Output>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    exit: Option<(ExitStatus, u64)>,
}

fn signal_group(pid: u32, signal: &str) {
    // The child leads its own process group (process_group(0)): signal the whole group.
    let _ = Command::new("kill")
        .args([signal, "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

const STDERR_KEEP: usize = 64 * 1024;

impl Member {
    /// Starts `cmd` (stdin closed, stdout read as JSON lines, stderr kept for messages) in a
    /// process group of its own.
    pub fn spawn(label: String, mut cmd: Command) -> Result<Member, String> {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let mut child = cmd.spawn().map_err(|e| format!("{label}: cannot start {cmd:?}: {e}"))?;
        let output = Arc::new(Mutex::new(Output::default()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let out = child.stdout.take().expect("piped stdout");
        let err = child.stderr.take().expect("piped stderr");
        let o = Arc::clone(&output);
        let stdout_reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let mut o = o.lock().unwrap_or_else(|e| e.into_inner());
                match Event::parse(&line) {
                    Ok(e) => o.events.push(e),
                    Err(_) => o.other.push(line),
                }
            }
            o.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        });
        let s = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            let mut err = err;
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
                if s.len() > 2 * STDERR_KEEP {
                    // keep the tail: the end says why a member died
                    let cut = s.len() - STDERR_KEEP;
                    let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
                    s.replace_range(..cut, "[...]");
                }
            }
        });
        Ok(Member { label, child, output, stderr, readers: vec![stdout_reader, stderr_reader], exit: None })
    }

    /// The process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every event printed so far.
    pub fn events(&self) -> Vec<Event> {
        self.output.lock().unwrap_or_else(|e| e.into_inner()).events.clone()
    }

    /// What the member owns after its latest ownership event (empty before the first).
    pub fn owned(&self) -> BTreeSet<TopicPartition> {
        let o = self.output.lock().unwrap_or_else(|e| e.into_inner());
        o.events.iter().rev().find_map(|e| e.owned.clone()).unwrap_or_default()
    }

    /// The latest `reported` line (the client's own view of its assignment), if any.
    pub fn last_reported(&self) -> Option<Event> {
        let o = self.output.lock().unwrap_or_else(|e| e.into_inner());
        o.events.iter().rev().find(|e| e.event == "reported").cloned()
    }

    /// The member id from the latest `joined` or `reported` line.
    pub fn member_id(&self) -> Option<String> {
        let o = self.output.lock().unwrap_or_else(|e| e.into_inner());
        o.events
            .iter()
            .rev()
            .filter(|e| e.event == "joined" || e.event == "reported")
            .find_map(|e| e.raw["member_id"].as_str().map(str::to_string))
    }

    /// When the process ended (wall-clock ms), if it has and this handle noticed.
    pub fn ended_at_ms(&mut self) -> Option<u64> {
        self.poll_exit();
        self.exit.map(|(_, ts)| ts)
    }

    /// The exit status, if the process has ended.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.poll_exit();
        self.exit.map(|(s, _)| s)
    }

    fn poll_exit(&mut self) {
        if self.exit.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exit = Some((status, super::now_ms()));
            }
        }
    }

    /// The log for the ownership checks.
    pub fn log(&mut self) -> super::MemberLog {
        let ended_at_ms = self.ended_at_ms();
        super::MemberLog { member: self.label.clone(), events: self.events(), ended_at_ms }
    }

    /// Stderr (its tail) and the non-event stdout lines, for failure messages.
    pub fn diagnostics(&self) -> String {
        let o = self.output.lock().unwrap_or_else(|e| e.into_inner());
        let events: Vec<String> = o.events.iter().rev().take(12).rev().map(|e| e.raw.to_string()).collect();
        let stderr = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let tail: String = {
            let lines: Vec<&str> = stderr.lines().collect();
            lines[lines.len().saturating_sub(30)..].join("\n")
        };
        format!(
            "--- {}: last events:\n{}\n--- other stdout:\n{}\n--- stderr tail:\n{}",
            self.label,
            events.join("\n"),
            o.other.join("\n"),
            tail
        )
    }

    /// Waits (at most `timeout`) until `pred` holds for the events so far. `Err` names `what` and
    /// carries the member's diagnostics. Also `Err` if the process ends first.
    pub fn wait_for(&mut self, what: &str, timeout: Duration, pred: impl Fn(&[Event]) -> bool) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let (ok, closed) = {
                let o = self.output.lock().unwrap_or_else(|e| e.into_inner());
                (pred(&o.events), o.closed)
            };
            if ok {
                return Ok(());
            }
            if closed && self.exit_status().is_some() {
                return Err(format!("{}: ended before {what}\n{}", self.label, self.diagnostics()));
            }
            if Instant::now() >= deadline {
                return Err(format!("{}: no {what} within {timeout:?}\n{}", self.label, self.diagnostics()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the first event named `event`; returns it.
    pub fn wait_event(&mut self, event: &str, timeout: Duration) -> Result<Event, String> {
        self.wait_for(&format!("'{event}' event"), timeout, |es| es.iter().any(|e| e.event == event))?;
        Ok(self.events().into_iter().find(|e| e.event == event).expect("just seen"))
    }

    /// Waits for the process to end (at most `timeout`; then SIGKILL and `Err`).
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<ExitStatus, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exit_status() {
                self.join_readers();
                return Ok(status);
            }
            if Instant::now() >= deadline {
                self.kill();
                return Err(format!("{}: still running after {timeout:?}; killed\n{}", self.label, self.diagnostics()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM (the member leaves the group and exits), then waits at most `timeout`.
    pub fn terminate(&mut self, timeout: Duration) -> Result<ExitStatus, String> {
        if self.exit_status().is_none() {
            // the leader only: its exit is the member's clean leave
            let _ = Command::new("kill").args(["-TERM", &self.pid().to_string()]).status();
        }
        self.wait_exit(timeout)
    }

    /// SIGKILLs the process group (no LeaveGroup) and reaps the process.
    pub fn kill(&mut self) {
        if self.exit.is_none() {
            signal_group(self.pid(), "-KILL");
            if let Ok(status) = self.child.wait() {
                self.exit = Some((status, super::now_ms()));
            }
        }
        self.join_readers();
    }

    fn join_readers(&mut self) {
        // The readers end when the group's last holder of the pipes is gone.
        signal_group(self.pid(), "-KILL");
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        // Once the readers are joined the group was already killed after the exit; signalling
        // again could reach a recycled process group id.
        if self.exit.is_none() || !self.readers.is_empty() {
            signal_group(self.pid(), "-KILL");
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `cmd` to completion within `timeout` (its own process group, killed on timeout) and
/// returns its stdout; `Err` with its stderr when it fails.
pub fn run_bounded(mut cmd: Command, timeout: Duration) -> Result<String, String> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start: {e}"))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
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
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        if Instant::now() >= deadline {
            signal_group(child.id(), "-KILL");
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(stdout),
        Some(s) => Err(format!("exit {s}\nstdout:\n{stdout}\nstderr:\n{stderr}")),
        None => Err(format!("did not finish in {timeout:?}; killed\nstdout:\n{stdout}\nstderr:\n{stderr}")),
    }
}
