//! Support for the live tests: real Kafka clusters started by `tools/live/kafka.sh` (in CI by
//! `.ci/run`), reference members (Java, librdkafka) as child processes, and the checks on their
//! merged logs. Used as `mod live;` from `tests/live_*.rs`; see `tools/live/README.md`.
//!
//! A test names the cluster it needs (`k39`, `k41`, `k39x3` in CI):
//!
//! ```ignore
//! let Some(cluster) = live::Cluster::shared("k39") else { return };    // SKIP when not configured
//! let Some(cluster) = live::Cluster::exclusive("k39x3") else { return }; // kills/restarts brokers
//! ```
//!
//! When the cluster's `KCP_LIVE_<NAME>_BOOTSTRAP` is not set the test prints a `SKIP` line and
//! returns, unless `KCP_LIVE_REQUIRED=1` (set in CI), where it fails.
#![allow(dead_code, unused_imports)]

pub mod kcp;
pub mod member;
pub mod ownership;

pub use member::{Event, Member, MemberOptions, TopicPartition};
pub use ownership::{
    check_generations, check_no_double_ownership, check_settled, final_ownership, generations, merged_lines,
    partitions, wait_settled, MemberLog,
};

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long one `LiveAdmin` call (a JVM start plus a few requests) may take.
pub const ADMIN_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether a test shares its cluster with the other tests of its binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Other shared tests run alongside (the cluster is not disturbed).
    Shared,
    /// No other test of this binary uses the cluster meanwhile.
    Exclusive,
}

enum Guard {
    Shared(RwLockReadGuard<'static, ()>),
    Exclusive(RwLockWriteGuard<'static, ()>),
}

fn cluster_lock(name: &str) -> &'static RwLock<()> {
    static LOCKS: OnceLock<Mutex<HashMap<String, &'static RwLock<()>>>> = OnceLock::new();
    let mut locks = LOCKS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    locks.entry(name.to_string()).or_insert_with(|| Box::leak(Box::new(RwLock::new(()))))
}

/// The secured listeners of a cluster started with `--sasl-ssl`.
#[derive(Clone, Debug)]
pub struct SaslSsl {
    /// SASL_SSL listener (SCRAM-SHA-256, SCRAM-SHA-512, PLAIN).
    pub bootstrap: String,
    /// SSL listener that requires a client certificate signed by `ca_pem`.
    pub mtls_bootstrap: String,
    /// The CA that signed the server certificate (SAN IP:127.0.0.1, DNS:localhost).
    pub ca_pem: PathBuf,
    /// A CA that signed nothing the cluster uses (for the wrong-CA tests).
    pub other_ca_pem: PathBuf,
    /// Client certificate and key (PKCS#8 PEM) for the mTLS listener.
    pub client_cert_pem: PathBuf,
    pub client_key_pem: PathBuf,
    pub scram_user: String,
    pub scram_password: String,
    pub plain_user: String,
    pub plain_password: String,
}

/// One running cluster, as its env file describes it.
pub struct Cluster {
    /// The cluster's name (`k39`): its env vars are `KCP_LIVE_K39_*`.
    pub name: String,
    /// The Kafka version (`3.9.1`, `4.1.1`).
    pub version: String,
    /// PLAINTEXT bootstrap list of every broker.
    pub bootstrap: String,
    /// PLAINTEXT address of each broker, by broker id - 1.
    pub broker_bootstraps: Vec<String>,
    /// The secured listeners, when the cluster has them.
    pub sasl_ssl: Option<SaslSsl>,
    /// `$KCP_LIVE_RUN/NAME`: broker logs, TLS material, client properties files.
    pub run_dir: PathBuf,
    ctl: PathBuf,
    _guard: Guard,
}

fn env_var(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// Whether the live tests must run (CI): a missing cluster is then a failure, not a SKIP.
pub fn required() -> bool {
    env_var("KCP_LIVE_REQUIRED").as_deref() == Some("1")
}

impl Cluster {
    /// The cluster `name`, shared with the other tests of this binary that do not disturb it.
    pub fn shared(name: &str) -> Option<Cluster> {
        Self::from_env(name, Access::Shared)
    }

    /// The cluster `name` to this test alone among the tests of this binary: for tests that kill,
    /// restart or otherwise disturb brokers. (Do not hold two `Cluster`s of one name in one test.)
    pub fn exclusive(name: &str) -> Option<Cluster> {
        Self::from_env(name, Access::Exclusive)
    }

    /// The cluster `name` from the environment; `None` after printing a SKIP line when it is not
    /// configured. Panics instead when `KCP_LIVE_REQUIRED=1`.
    pub fn from_env(name: &str, access: Access) -> Option<Cluster> {
        let prefix = format!("KCP_LIVE_{}_", name.to_ascii_uppercase());
        let get = |key: &str| env_var(&format!("{prefix}{key}"));
        let Some(bootstrap) = get("BOOTSTRAP") else {
            let test = std::thread::current().name().unwrap_or("?").to_string();
            let why = format!(
                "live test {test} needs cluster {name}: {prefix}BOOTSTRAP is not set \
                 (start it with tools/live/kafka.sh and export its env file; see tools/live/README.md)"
            );
            if required() {
                panic!("KCP_LIVE_REQUIRED=1 but {why}");
            }
            println!("SKIP: {why}");
            return None;
        };
        let must = |key: &str| get(key).unwrap_or_else(|| panic!("{prefix}{key} is not set but {prefix}BOOTSTRAP is"));
        let brokers: usize = must("BROKERS").parse().expect("KCP_LIVE_*_BROKERS is a number");
        let broker_bootstraps = (1..=brokers).map(|id| must(&format!("BROKER_{id}_BOOTSTRAP"))).collect();
        let sasl_ssl = get("SASL_SSL_BOOTSTRAP").map(|bootstrap| SaslSsl {
            bootstrap,
            mtls_bootstrap: must("MTLS_BOOTSTRAP"),
            ca_pem: must("CA_PEM").into(),
            other_ca_pem: must("OTHER_CA_PEM").into(),
            client_cert_pem: must("CLIENT_CERT_PEM").into(),
            client_key_pem: must("CLIENT_KEY_PEM").into(),
            scram_user: must("SCRAM_USER"),
            scram_password: must("SCRAM_PASSWORD"),
            plain_user: must("PLAIN_USER"),
            plain_password: must("PLAIN_PASSWORD"),
        });
        let ctl = get("CTL")
            .or_else(|| env_var("KCP_LIVE_CTL"))
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/live/kafka.sh"));
        let lock = cluster_lock(name);
        let guard = match access {
            Access::Shared => Guard::Shared(lock.read().unwrap_or_else(|e| e.into_inner())),
            Access::Exclusive => Guard::Exclusive(lock.write().unwrap_or_else(|e| e.into_inner())),
        };
        Some(Cluster {
            name: name.to_string(),
            version: must("VERSION"),
            bootstrap,
            broker_bootstraps,
            sasl_ssl,
            run_dir: must("RUN_DIR").into(),
            ctl,
            _guard: guard,
        })
    }

    /// Kafka 4.x (KIP-848 consumer groups served).
    pub fn is_4x(&self) -> bool {
        self.version.split('.').next().and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| m >= 4)
    }

    /// A Java-client properties file for a secured listener: `scram-sha-256`, `scram-sha-512`,
    /// `plain` (SASL_SSL) or `mtls` (SSL with the client certificate). Passwords are inside.
    pub fn client_properties(&self, kind: &str) -> PathBuf {
        let path = self.run_dir.join(format!("client-{kind}.properties"));
        assert!(path.is_file(), "{}: no {} (is this a --sasl-ssl cluster?)", self.name, path.display());
        path
    }

    /// The same settings as [`Cluster::client_properties`] in librdkafka's key names, for
    /// `rdkafka_consumer.py --command-config`.
    pub fn rdkafka_properties(&self, kind: &str) -> PathBuf {
        let path = self.run_dir.join(format!("rdkafka-{kind}.properties"));
        assert!(path.is_file(), "{}: no {} (is this a --sasl-ssl cluster?)", self.name, path.display());
        path
    }

    /// `kafka.sh SUBCOMMAND ARGS...` for this cluster, with the run dir the cluster lives in.
    pub fn ctl_command(&self) -> Command {
        let mut cmd = Command::new("bash");
        cmd.arg(&self.ctl);
        if let Some(run) = self.run_dir.parent() {
            cmd.env("KCP_LIVE_RUN", run);
        }
        cmd
    }

    /// Runs `kafka.sh ARGS...` to completion within `timeout`; its stdout on success.
    pub fn ctl(&self, args: &[&str], timeout: Duration) -> Result<String, String> {
        let mut cmd = self.ctl_command();
        cmd.args(args);
        member::run_bounded(cmd, timeout).map_err(|e| format!("kafka.sh {}: {e}", args.join(" ")))
    }

    /// Runs one of Kafka's own command-line tools of this cluster's version (`kafka.sh tool`,
    /// this checkout's script: the shared clusters' `CTL` may be an older one) to completion;
    /// its stdout. `tool` is `consumer-groups`, `get-offsets`, a class name, ...
    pub fn kafka_tool(&self, tool: &str, args: &[&str]) -> Result<String, String> {
        let mut cmd = Command::new("bash");
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/live/kafka.sh")).args(["tool", &self.version, tool]);
        cmd.args(args);
        member::run_bounded(cmd, ADMIN_TIMEOUT).map_err(|e| format!("kafka.sh tool {tool} {}: {e}", args.join(" ")))
    }

    /// Commits `offset` for `partitions` (`0,2`) of `topic` as the empty group `group`, with
    /// Kafka's own tool (`kafka-consumer-groups.sh --reset-offsets --to-offset --execute`).
    pub fn commit_offsets(&self, group: &str, topic: &str, partitions: &str, offset: i64) {
        let spec = format!("{topic}:{partitions}");
        let offset = offset.to_string();
        let args = [
            "--bootstrap-server",
            &self.bootstrap,
            "--group",
            group,
            "--topic",
            &spec,
            "--reset-offsets",
            "--to-offset",
            &offset,
            "--execute",
        ];
        self.kafka_tool("consumer-groups", &args).unwrap_or_else(|e| panic!("{}: {e}", self.name));
    }

    /// Runs `LiveAdmin --bootstrap <PLAINTEXT> ARGS...` and parses its JSON lines.
    pub fn admin(&self, args: &[&str]) -> Result<Vec<Value>, String> {
        let mut full = vec!["java", &self.name, "LiveAdmin", "--bootstrap", &self.bootstrap];
        full.extend_from_slice(args);
        let out = self.ctl(&full, ADMIN_TIMEOUT)?;
        out.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).map_err(|e| format!("LiveAdmin printed a non-JSON line {l:?}: {e}")))
            .collect()
    }

    /// Creates `topic` with `partitions` partitions (replication factor 1) and waits for leaders.
    pub fn create_topic(&self, topic: &str, partitions: i32) {
        self.create_topic_rf(topic, partitions, 1);
    }

    /// Creates `topic` with the given replication factor and waits until every partition has a leader.
    pub fn create_topic_rf(&self, topic: &str, partitions: i32, replication_factor: i16) {
        let (p, rf) = (partitions.to_string(), replication_factor.to_string());
        self.admin(&["create-topic", topic, &p, &rf]).unwrap_or_else(|e| panic!("{}: {e}", self.name));
    }

    /// Raises `topic`'s partition count to `total`.
    pub fn create_partitions(&self, topic: &str, total: i32) {
        self.admin(&["create-partitions", topic, &total.to_string()]).unwrap_or_else(|e| panic!("{}: {e}", self.name));
    }

    /// Java's `Admin.describeConsumerGroups` view of `group` (see LiveAdmin.java for the shape).
    pub fn describe_group(&self, group: &str) -> Value {
        let mut lines = self.admin(&["describe-group", group]).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        assert_eq!(lines.len(), 1, "describe-group {group}: {lines:?}");
        lines.remove(0)
    }

    /// Java's `Admin.listConsumerGroups`: `[{"group_id", "state", "type"}]`.
    pub fn list_groups(&self) -> Vec<Value> {
        let lines = self.admin(&["list-groups"]).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        lines[0]["groups"].as_array().cloned().unwrap_or_default()
    }

    /// Sets group configs (Kafka 4.x, KIP-848), e.g. `[("consumer.session.timeout.ms", "3000")]`
    /// for a test that waits on a consumer-protocol session expiring.
    pub fn set_group_config(&self, group: &str, configs: &[(&str, &str)]) {
        let kvs: Vec<String> = configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut args = vec!["alter-group-config", group];
        args.extend(kvs.iter().map(String::as_str));
        self.admin(&args).unwrap_or_else(|e| panic!("{}: {e}", self.name));
    }

    /// The broker id of `group`'s coordinator, as the Java admin client finds it.
    pub fn coordinator_id(&self, group: &str) -> i32 {
        let d = self.describe_group(group);
        d["coordinator"]["id"].as_i64().unwrap_or_else(|| panic!("no coordinator in {d}")) as i32
    }

    /// Waits (at most `timeout`) until `group`'s coordinator is a broker other than `old` (after
    /// `kill_broker(old)`: the controller fences the dead broker after 3 s, then the offsets
    /// partition gets a new leader) and returns it. Describe calls that fail meanwhile (the admin
    /// client still asks the dead broker) are retried.
    pub fn wait_coordinator_moved(&self, group: &str, old: i32, timeout: Duration) -> Result<i32, String> {
        let deadline = std::time::Instant::now() + timeout;
        let mut last = String::new();
        while std::time::Instant::now() < deadline {
            match self.admin(&["describe-group", group]) {
                Ok(lines) => match lines.first().and_then(|d| d["coordinator"]["id"].as_i64()) {
                    Some(id) if id as i32 != old => return Ok(id as i32),
                    other => last = format!("coordinator still {other:?}"),
                },
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        Err(format!("{group}'s coordinator did not move from broker {old} within {timeout:?}: {last}"))
    }

    /// SIGKILLs broker `id` (1-based).
    pub fn kill_broker(&self, id: i32) {
        self.ctl(&["kill-broker", &self.name, &id.to_string()], Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Stops broker `id` if it runs, starts it again and waits until it is ready.
    pub fn restart_broker(&self, id: i32) {
        self.ctl(&["restart-broker", &self.name, &id.to_string()], Duration::from_secs(180))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// A Java consumer (`tools/live/java/LiveConsumer.java`, kafka-clients of this cluster's
    /// version) on the PLAINTEXT listener unless `options` names another bootstrap.
    pub fn java(&self, options: &MemberOptions) -> Member {
        let mut cmd = self.ctl_command();
        cmd.args(["java", &self.name, "LiveConsumer"]).args(options.args(&self.bootstrap));
        self.spawn(options.label("java"), cmd)
    }

    /// A librdkafka consumer (`tools/live/rdkafka_consumer.py`, confluent-kafka 2.16.1).
    pub fn rdkafka(&self, options: &MemberOptions) -> Member {
        let mut cmd = self.ctl_command();
        cmd.args(["rdkafka", &self.name]).args(options.args(&self.bootstrap));
        self.spawn(options.label("rdkafka"), cmd)
    }

    /// A `kcp group join` member: the `kcp` binary cargo built for this test, labelled `label`.
    pub fn kcp(&self, label: &str, options: &MemberOptions) -> Member {
        let bin = env!("CARGO_BIN_EXE_kcp");
        let mut cmd = Command::new(bin);
        cmd.args(["group", "join"]).args(options.kcp_args(&self.bootstrap));
        self.spawn(format!("kcp:{label}"), cmd)
    }

    /// Any member process that prints `kcp group join` JSON lines (e.g. `kcp group join` itself),
    /// in its own process group, registered with kafka.sh so `stop` kills it if the test does not.
    pub fn spawn(&self, label: String, cmd: Command) -> Member {
        let member = Member::spawn(label, cmd).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(self.run_dir.join("clients.pids"))
        {
            let _ = writeln!(f, "{}", member.pid());
        }
        member
    }
}

/// A topic or group name no other test (or earlier run on the same cluster) uses:
/// `PREFIX-<pid>-<ms>-<n>`.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("{prefix}-{}-{}-{n}", std::process::id(), ms % 100_000_000)
}

/// Wall-clock milliseconds, the clock of the members' `ts_ms`.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
