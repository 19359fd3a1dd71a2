//! A real consumer on our member (`examples/rskafka_consumer.rs`: rskafka fetches, our member
//! owns the partitions and commits) in one group with Java consumers (`LiveConsumer --process
//! true`, committing after each poll and on revocation), on Kafka 3.9.1 and 4.1.1, through
//! scale-out, scale-in and a SIGKILL while records keep coming, and on the three-broker 3.9.1
//! cluster through a broker restart too.
//!
//! Checks: every record produced is processed at least once; a member processes a partition only
//! while it owns it, and no partition is owned by two members at once; within one ownership of a
//! partition a member's committed offsets never go back; at the end the group's committed offsets
//! (what a new member of the group is told when assigned) equal the log-end offsets: lag 0; and
//! `kcp group describe` reports that lag, partition by partition, as Kafka's own
//! `kafka-consumer-groups.sh --describe` does. The broker restart runs on `k39x3` (3.9.1, three
//! brokers: leaders and the coordinator move) and on `k41` (4.1.1, one broker: the cluster goes
//! away and comes back), each held exclusively while it runs.

mod live;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use live::{Cluster, Member, MemberLog, MemberOptions, TopicPartition};

const PARTITIONS: i32 = 6;
/// Records per partition per batch; five batches.
const BATCH: u32 = 200;
const SESSION_MS: u32 = 10_000;
const DRAIN: Duration = Duration::from_secs(60);

/// The example's binary, brought up to date by cargo once per test process (integration tests
/// get no `CARGO_BIN_EXE_` for examples; a no-op when `cargo test` built it already).
fn example() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("test binary");
            let dir = exe.parent().and_then(|p| p.parent()).expect("target/<profile>");
            let status = Command::new(env!("CARGO"))
                .args(["build", "--example", "rskafka_consumer", "--features", "client"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo build --example rskafka_consumer");
            assert!(status.success(), "building the example failed");
            dir.join("examples").join("rskafka_consumer")
        })
        .clone()
}

fn rskafka(cluster: &Cluster, label: &str, group: &str, topic: &str) -> Member {
    let mut cmd = Command::new(example());
    cmd.args(["--bootstrap", &cluster.bootstrap, "--group", group, "--topic", topic, "--duration-s", "300"]);
    cmd.args(["--session-timeout-ms", &SESSION_MS.to_string()]);
    cluster.spawn(format!("rskafka:{label}"), cmd)
}

fn java(cluster: &Cluster, label: &str, group: &str, topic: &str) -> Member {
    let mut o = MemberOptions::new(group, [topic]).session_timeout_ms(SESSION_MS).duration_s(300);
    o.heartbeat_interval_ms = Some(1_000);
    o.client_id = Some(label.to_string());
    o.config.push(("max.poll.records".into(), "50".into()));
    let mut cmd = cluster.ctl_command();
    cmd.args(["java", &cluster.name, "LiveConsumer"]).args(o.args(&cluster.bootstrap)).args(["--process", "true"]);
    cluster.spawn(format!("java:{label}"), cmd)
}

fn produce(cluster: &Cluster, topic: &str) {
    let mut cmd = Command::new(example());
    cmd.args(["--bootstrap", &cluster.bootstrap, "--produce", topic, "--count", &BATCH.to_string()]);
    live::member::run_bounded(cmd, Duration::from_secs(60)).unwrap_or_else(|e| panic!("produce: {e}"));
}

fn processed(members: &[&Member]) -> BTreeSet<(i32, i64)> {
    members
        .iter()
        .flat_map(|m| m.events())
        .filter(|e| e.event == "processed")
        .filter_map(|e| Some((e.raw["partition"].as_i64()? as i32, e.raw["offset"].as_i64()?)))
        .collect()
}

/// Every `processed` line falls in an ownership of its partition by that member; committed
/// offsets of one ownership never go back.
fn check_member(log: &MemberLog, topic: &str) -> Result<(), String> {
    let mut owned: BTreeSet<TopicPartition> = BTreeSet::new();
    let mut last_commit: BTreeMap<i32, i64> = BTreeMap::new();
    for e in &log.events {
        if let Some(o) = &e.owned {
            for (t, p) in o.difference(&owned) {
                if t == topic {
                    // A new ownership starts: its commits start afresh.
                    last_commit.remove(p);
                }
            }
            owned = o.clone();
        }
        match e.event.as_str() {
            "processed" => {
                let p = e.raw["partition"].as_i64().unwrap_or(-1) as i32;
                if !owned.contains(&(topic.to_string(), p)) {
                    return Err(format!("{} processed {topic}-{p} without owning it: {}", log.member, e.raw));
                }
            }
            "committed" => {
                for c in e.raw["offsets"].as_array().into_iter().flatten() {
                    let (p, o) = (c["partition"].as_i64().unwrap_or(-1) as i32, c["offset"].as_i64().unwrap_or(-1));
                    if let Some(&before) = last_commit.get(&p) {
                        if o < before {
                            return Err(format!(
                                "{}: commit of {topic}-{p} went back from {before} to {o}",
                                log.member
                            ));
                        }
                    }
                    last_commit.insert(p, o);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The group's committed offsets, as a new member of the group is told them on `assigned`.
fn committed_offsets(cluster: &Cluster, group: &str, topic: &str) -> BTreeMap<i32, i64> {
    let mut probe = rskafka(cluster, "probe", group, topic);
    probe.wait_event("assigned", Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}\n{}", probe.diagnostics()));
    let assigned = probe.events().into_iter().find(|e| e.event == "assigned").expect("assigned");
    let _ = probe.terminate(Duration::from_secs(30));
    assigned.raw["committed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| Some((c["partition"].as_i64()? as i32, c["offset"].as_i64()?)))
        .collect()
}

/// `kafka-consumer-groups.sh --describe --group G`'s rows of `topic`: partition -> (current
/// offset, log-end offset, lag), `None` for a `-`.
type ToolRow = (Option<i64>, Option<i64>, Option<i64>);

fn kafka_tool_offsets(cluster: &Cluster, group: &str, topic: &str) -> BTreeMap<i32, ToolRow> {
    let out = cluster
        .kafka_tool("consumer-groups", &["--bootstrap-server", &cluster.bootstrap, "--describe", "--group", group])
        .unwrap_or_else(|e| panic!("{e}"));
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() >= 6 && w[0] == group && w[1] == topic)
        .map(|w| (w[2].parse().expect("a partition"), (w[3].parse().ok(), w[4].parse().ok(), w[5].parse().ok())))
        .collect()
}

/// `kcp group describe --group G`'s offsets rows of `topic`, in the same shape, and the group's
/// lag total.
fn kcp_offsets(cluster: &Cluster, group: &str, topic: &str) -> (BTreeMap<i32, ToolRow>, Option<i64>) {
    let v = live::kcp::run(
        &["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--group", group],
        Duration::from_secs(60),
    )
    .ok();
    let rows = v["offsets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["topic"] == topic)
        .map(|o| {
            let n = |k: &str| o[k].as_i64();
            (n("partition").expect("a partition") as i32, (n("committed_offset"), n("log_end_offset"), n("lag")))
        })
        .collect();
    (rows, v["lag"]["total"].as_i64())
}

fn run(cluster: Cluster, restart_a_broker: bool) {
    let topic = live::unique_name("commit-consumer");
    let group = format!("{topic}-g");
    if restart_a_broker {
        // Every partition on every broker (of three), so the restart moves leaders and the
        // coordinator; on one broker the whole cluster goes away and comes back.
        let replicas = cluster.broker_bootstraps.len().min(3) as i16;
        cluster.create_topic_rf(&topic, PARTITIONS, replicas);
    } else {
        cluster.create_topic(&topic, PARTITIONS);
    }
    let started = Instant::now();
    let mut batches = 0u32;
    let mut produce_batch = || {
        produce(&cluster, &topic);
        batches += 1;
        batches
    };
    let wait_all = |members: &[&Member], batches: u32, what: &str| {
        let want = i64::from(PARTITIONS) * i64::from(BATCH * batches);
        let deadline = Instant::now() + DRAIN;
        while (processed(members).len() as i64) < want {
            if Instant::now() >= deadline {
                let diagnostics: Vec<String> = members
                    .iter()
                    .map(|m| {
                        let membership: Vec<String> = m
                            .events()
                            .iter()
                            .filter(|e| !matches!(e.event.as_str(), "processed" | "committed"))
                            .map(|e| e.raw.to_string())
                            .collect();
                        format!("{}\n--- membership events:\n{}", m.diagnostics(), membership.join("\n"))
                    })
                    .collect();
                panic!(
                    "{what}: {} of {want} records processed after {DRAIN:?}\n{}",
                    processed(members).len(),
                    diagnostics.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };

    let n = produce_batch();
    let mut r1 = rskafka(&cluster, "r1", &group, &topic);
    let mut j1 = java(&cluster, "j1", &group, &topic);
    wait_all(&[&r1, &j1], n, "two members");

    // Scale out: a second consumer on our member joins.
    produce_batch();
    let mut r2 = rskafka(&cluster, "r2", &group, &topic);
    r2.wait_event("assigned", Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}\n{}", r2.diagnostics()));
    let n = produce_batch();
    wait_all(&[&r1, &j1, &r2], n, "scale-out");

    if restart_a_broker {
        // A broker goes down and comes back while the group runs; records keep coming after.
        cluster.restart_broker(1);
        let n = produce_batch();
        wait_all(&[&r1, &j1, &r2], n, "after a broker restart");
    }

    // SIGKILL one of ours: its partitions move after its session expires.
    r1.kill();
    let n = produce_batch();
    wait_all(&[&r1, &j1, &r2], n, "after the SIGKILL");

    // Scale in: the Java member leaves (committing in its revocation).
    j1.terminate(Duration::from_secs(40)).unwrap_or_else(|e| panic!("{e}"));
    let n = produce_batch();
    wait_all(&[&r1, &j1, &r2], n, "scale-in");
    // Let r2 commit what it processed, then leave.
    std::thread::sleep(Duration::from_secs(1));
    r2.terminate(Duration::from_secs(40)).unwrap_or_else(|e| panic!("{e}"));

    let logs = [r1.log(), j1.log(), r2.log()];
    live::check_no_double_ownership(&logs).unwrap_or_else(|e| panic!("{e}\n{}", live::merged_lines(&logs)));
    for log in &logs {
        check_member(log, &topic).unwrap_or_else(|e| panic!("{e}"));
    }
    let end = i64::from(BATCH * batches);
    let committed = committed_offsets(&cluster, &group, &topic);
    let expected: BTreeMap<i32, i64> = (0..PARTITIONS).map(|p| (p, end)).collect();
    assert_eq!(committed, expected, "{}: the group's committed offsets are the log-end offsets (lag 0)", cluster.name);

    // The same lag as kcp reports it and as Kafka's tool reports it, partition by partition.
    let (ours, total) = kcp_offsets(&cluster, &group, &topic);
    let want: BTreeMap<i32, ToolRow> = (0..PARTITIONS).map(|p| (p, (Some(end), Some(end), Some(0)))).collect();
    assert_eq!((&ours, total), (&want, Some(0)), "{}: kcp group describe's offsets", cluster.name);
    assert_eq!(kafka_tool_offsets(&cluster, &group, &topic), ours, "{}: Kafka's tool and kcp", cluster.name);
    // The rskafka members' fetch errors they recovered from (a partition client or fetch that
    // did not answer, replaced from a fresh client), so a run shows whether that path ran.
    let recovered: Vec<String> = [&logs[0], &logs[2]]
        .iter()
        .map(|log| {
            let fetch_errors =
                log.events.iter().filter(|e| e.event == "error" && e.raw["error"]["kind"] == "fetch").count();
            format!("{} {fetch_errors}", log.member)
        })
        .collect();
    eprintln!(
        "{}: {} records through scale-out,{} SIGKILL, scale-in in {:?} (rskafka fetch errors recovered: {})",
        cluster.name,
        end * i64::from(PARTITIONS),
        if restart_a_broker { " a broker restart," } else { "" },
        started.elapsed(),
        recovered.join(", ")
    );
}

#[test]
fn rskafka_and_java_consumers_share_a_group_and_commit_to_lag_zero_on_3_9() {
    if let Some(cluster) = Cluster::shared("k39") {
        run(cluster, false);
    }
}

#[test]
fn rskafka_and_java_consumers_share_a_group_and_commit_to_lag_zero_on_4_1() {
    if let Some(cluster) = Cluster::shared("k41") {
        run(cluster, false);
    }
}

#[test]
fn rskafka_and_java_consumers_commit_to_lag_zero_through_a_broker_restart() {
    if let Some(cluster) = Cluster::exclusive("k39x3") {
        run(cluster, true);
    }
}

#[test]
fn rskafka_and_java_consumers_commit_to_lag_zero_through_a_broker_restart_on_4_1() {
    if let Some(cluster) = Cluster::exclusive("k41") {
        run(cluster, true);
    }
}
