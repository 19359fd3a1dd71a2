//! `kcp group describe`'s offsets view against real brokers (Kafka 3.9.1 and 4.1.1), compared
//! with Kafka's own `kafka-consumer-groups.sh --describe` (ConsumerGroupCommand of the broker's
//! version) on the same groups: a classic group with a live Java member, on 4.x a KIP-848 group
//! with a live Java member, and an empty group with commits only. Commits are made with Kafka's
//! own tool (`--reset-offsets --execute` while the group is empty), records with its producer
//! benchmark. Without the clusters' env these print SKIP (tools/live/README.md).

mod live;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use live::kcp::Run;
use live::{unique_name, Cluster, MemberOptions};
use serde_json::Value;

const TOOL: Duration = Duration::from_secs(120);

/// Runs `kcp ARGS...`, killed after `limit`.
fn kcp(args: &[&str], limit: Duration) -> Run {
    live::kcp::run(args, limit)
}

/// `kafka.sh tool NAME ARGS...` (Kafka's own tool of the cluster's version), with this
/// checkout's kafka.sh (the cluster's own may predate `tool`).
fn tool(cluster: &Cluster, args: &[&str]) -> String {
    let mut cmd = Command::new("bash");
    cmd.arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/live/kafka.sh"));
    if let Some(run) = cluster.run_dir.parent() {
        cmd.env("KCP_LIVE_RUN", run);
    }
    cmd.args(["tool", cluster.name.as_str()]).args(args);
    live::member::run_bounded(cmd, TOOL)
        .unwrap_or_else(|e| panic!("{}: kafka.sh tool {}: {e}", cluster.name, args.join(" ")))
}

/// Writes `records` records spread over the topic's partitions (small batches: the sticky
/// partitioner moves on with every batch).
fn produce(cluster: &Cluster, topic: &str, records: u32) {
    let props = format!("bootstrap.servers={}", cluster.bootstrap);
    let n = records.to_string();
    tool(
        cluster,
        &[
            "org.apache.kafka.tools.ProducerPerformance",
            "--topic",
            topic,
            "--num-records",
            &n,
            "--record-size",
            "20",
            "--throughput",
            "-1",
            "--producer-props",
            &props,
            "batch.size=100",
            "linger.ms=0",
        ],
    );
}

/// Commits `offset` for `partitions` of `topic` as an empty group, with Kafka's own tool.
fn commit(cluster: &Cluster, group: &str, topic: &str, partitions: &str, offset: i64) {
    let spec = format!("{topic}:{partitions}");
    let offset = offset.to_string();
    tool(
        cluster,
        &[
            "consumer-groups",
            "--bootstrap-server",
            &cluster.bootstrap,
            "--group",
            group,
            "--topic",
            &spec,
            "--reset-offsets",
            "--to-offset",
            &offset,
            "--execute",
        ],
    );
}

/// One row of `kafka-consumer-groups.sh --describe`: committed, log end, lag, consumer id
/// (`None` for `-`).
type ToolRow = (Option<i64>, Option<i64>, Option<i64>, Option<String>);

/// Kafka's tool's `--describe` rows of `group`, by (topic, partition).
fn kafka_describe(cluster: &Cluster, group: &str) -> BTreeMap<(String, i64), ToolRow> {
    let out =
        tool(cluster, &["consumer-groups", "--bootstrap-server", &cluster.bootstrap, "--describe", "--group", group]);
    let mut rows = BTreeMap::new();
    let dash = |s: &str| (s != "-").then(|| s.to_string());
    let num = |s: &str| (s != "-").then(|| s.parse::<i64>().unwrap_or_else(|e| panic!("{s:?} in {out}: {e}")));
    for line in out.lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if cells.len() < 9 || cells[0] != group {
            continue;
        }
        let key = (cells[1].to_string(), cells[2].parse::<i64>().unwrap());
        rows.insert(key, (num(cells[3]), num(cells[4]), num(cells[5]), dash(cells[6])));
    }
    assert!(!rows.is_empty(), "no rows for {group} in Kafka's tool output:\n{out}");
    rows
}

/// kcp's offsets rows of one group object.
fn kcp_rows(group: &Value) -> BTreeMap<(String, i64), ToolRow> {
    let offsets = group["offsets"].as_array().unwrap_or_else(|| panic!("no offsets in {group}"));
    offsets
        .iter()
        .map(|o| {
            let key = (o["topic"].as_str().unwrap().to_string(), o["partition"].as_i64().unwrap());
            let row = (
                o["committed_offset"].as_i64(),
                o["log_end_offset"].as_i64(),
                o["lag"].as_i64(),
                o["owner"].as_str().map(str::to_string),
            );
            (key, row)
        })
        .collect()
}

/// Waits until Kafka's tool shows every partition of `topic` owned in `group` (the member has
/// its assignment and the broker reports it).
fn wait_owned(cluster: &Cluster, group: &str, partitions: usize) -> BTreeMap<(String, i64), ToolRow> {
    let started = Instant::now();
    loop {
        let rows = kafka_describe(cluster, group);
        if rows.values().filter(|r| r.3.is_some()).count() >= partitions {
            return rows;
        }
        assert!(started.elapsed() < Duration::from_secs(90), "{group} never owned {partitions} partitions: {rows:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn offsets_match_kafkas_tool(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = unique_name("offsets-t");
    cluster.create_topic(&topic, 3);
    produce(&cluster, &topic, 600);

    let classic = unique_name("offsets-classic");
    let consumer = unique_name("offsets-848");
    let empty = unique_name("offsets-empty");
    // Known commits while the groups are still empty: partitions 0 and 1; partition 2 is owned
    // but never committed (no CURRENT-OFFSET, no lag).
    commit(&cluster, &classic, &topic, "0,1", 3);
    commit(&cluster, &empty, &topic, "2", 1);
    let mut groups = vec![classic.clone(), empty.clone()];
    let opts = MemberOptions::new(&classic, [&topic]).assignors(["range"]).session_timeout_ms(10_000);
    let mut members = vec![cluster.java(&opts)];
    if cluster.is_4x() {
        commit(&cluster, &consumer, &topic, "1,2", 2);
        members.push(cluster.java(&MemberOptions::new(&consumer, [&topic]).group_protocol("consumer")));
        groups.push(consumer.clone());
    }

    let mut expected = BTreeMap::new();
    expected.insert(classic.clone(), wait_owned(&cluster, &classic, 3));
    expected.insert(empty.clone(), kafka_describe(&cluster, &empty));
    if cluster.is_4x() {
        expected.insert(consumer.clone(), wait_owned(&cluster, &consumer, 3));
    }

    let mut args = vec!["group", "describe", "--bootstrap-server", cluster.bootstrap.as_str()];
    for g in &groups {
        args.extend(["--group", g.as_str()]);
    }
    let run = kcp(&args, Duration::from_secs(60));
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let described: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    for group in described.as_array().unwrap() {
        let id = group["group_id"].as_str().unwrap();
        let ours = kcp_rows(group);
        assert_eq!(&ours, &expected[id], "{name} {id}: kcp's offsets against kafka-consumer-groups.sh");
        let total: i64 = ours.values().filter_map(|r| r.2).sum();
        assert_eq!(group["lag"]["total"].as_i64(), Some(total), "{id}: {}", group["lag"]);
        let by_topic: i64 = group["lag"]["by_topic"][&topic].as_i64().unwrap_or(0);
        assert_eq!(by_topic, total, "{id}");
        for o in group["offsets"].as_array().unwrap() {
            assert!(o["log_start_offset"].as_i64().is_some_and(|s| s == 0), "{id}: {o}");
            assert!(o.get("metadata").is_some() && o.get("leader_epoch").is_some() && o.get("pending_to").is_some());
        }
    }
    // The commits are where they were put (the tool clamps to the log end, which is above).
    let classic_rows = &expected[&classic];
    assert_eq!(classic_rows[&(topic.clone(), 0)].0, Some(3));
    assert_eq!(classic_rows[&(topic.clone(), 2)].0, None);
    assert_eq!(expected[&empty][&(topic.clone(), 2)].3, None, "no owner in an empty group");

    // The text view: Kafka's columns, then the decoded ones.
    let mut text_args = args.clone();
    text_args.extend(["--format", "text"]);
    let run = kcp(&text_args, Duration::from_secs(60));
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("GROUP") && run.stdout.contains("CURRENT-OFFSET") && run.stdout.contains("LOG-END-OFFSET"),
        "{}",
        run.stdout
    );
    // watch: the lag over time and, for the empty group's lagging partition that nothing
    // commits, STOP once three samples agree.
    let empty_lag = expected[&empty][&(topic.clone(), 2)].2.unwrap_or(0);
    let run = kcp(
        &[
            "group",
            "watch",
            "--bootstrap-server",
            &cluster.bootstrap,
            "--group",
            &empty,
            "--interval-ms",
            "300",
            "--duration-s",
            "3",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let events: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let lag = events.iter().find(|e| e["event"] == "lag").unwrap_or_else(|| panic!("no lag event: {}", run.stdout));
    assert_eq!(lag["total"].as_i64(), Some(empty_lag), "{lag}");
    if empty_lag > 0 {
        assert!(
            events.iter().any(|e| e["event"] == "lag_status" && e["partition"] == 2 && e["status"] == "STOP"),
            "{}",
            run.stdout
        );
    }
    for mut m in members {
        let _ = m.terminate(Duration::from_secs(30));
    }
}

#[test]
fn offsets_match_kafkas_tool_k39() {
    offsets_match_kafkas_tool("k39");
}

#[test]
fn offsets_match_kafkas_tool_k41() {
    offsets_match_kafkas_tool("k41");
}
