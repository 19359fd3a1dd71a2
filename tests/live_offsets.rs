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
    cluster.commit_offsets(group, topic, partitions, offset);
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
        if id == empty {
            // Kafka's tool lists an empty group's committed partitions only; kcp lists every
            // partition of a topic with a commit (issue 38): the others have no commit and no lag.
            let (tools, extra): (BTreeMap<_, _>, BTreeMap<_, _>) =
                ours.clone().into_iter().partition(|(k, _)| expected[id].contains_key(k));
            assert_eq!(&tools, &expected[id], "{name} {id}: kcp's offsets against kafka-consumer-groups.sh");
            let extra: Vec<_> = extra.into_iter().map(|((_, p), r)| (p, r.0, r.2, r.3)).collect();
            assert_eq!(extra, [(0, None, None, None), (1, None, None, None)], "{name} {id}");
        } else {
            assert_eq!(&ours, &expected[id], "{name} {id}: kcp's offsets against kafka-consumer-groups.sh");
        }
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

/// One partition's row: partition, committed offset, lag, owner.
type PartitionRow = (i64, Option<i64>, Option<i64>, Option<String>);

/// kcp's offsets rows of `group` (one `--group`), by partition.
fn kcp_partitions(cluster: &Cluster, group: &str) -> Vec<PartitionRow> {
    let run = kcp(
        &["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--group", group],
        Duration::from_secs(60),
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let described: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    kcp_rows(&described).into_iter().map(|((_, p), r)| (p, r.0, r.2, r.3)).collect()
}

/// Issue 38: every partition of every topic a group subscribes to or has committed offsets
/// for is listed, also those never committed (a partition added while the group was down, or
/// one that never had a consumer), with a null committed offset: for a group without members
/// that committed on partitions 0-2 of a 4-partition topic, for the same group once a partition
/// is added after its last commit, and for a group with a member.
fn idle_group_lists_every_partition(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = unique_name("offsets-idle");
    cluster.create_topic(&topic, 4);
    produce(&cluster, &topic, 400);
    let idle = unique_name("offsets-idle-g");
    commit(&cluster, &idle, &topic, "0,1,2", 1);

    let rows = kcp_partitions(&cluster, &idle);
    let partitions: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(partitions, [0, 1, 2, 3], "{name}: {rows:?}");
    assert!(rows[..3].iter().all(|r| r.1.is_some() && r.2.is_some() && r.3.is_none()), "{name}: {rows:?}");
    assert_eq!(rows[3], (3, None, None, None), "{name}: partition 3, never committed");

    // A partition added after the last commit.
    cluster.create_partitions(&topic, 5);
    let rows = kcp_partitions(&cluster, &idle);
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4], "{name}: {rows:?}");
    assert_eq!(rows[4], (4, None, None, None), "{name}: the partition added after the last commit");

    // A group with a member: its commits on 0-2, the member owns all five.
    let active = unique_name("offsets-idle-active");
    commit(&cluster, &active, &topic, "0,1,2", 1);
    let opts = MemberOptions::new(&active, [&topic]).assignors(["range"]).session_timeout_ms(10_000);
    let mut member = cluster.java(&opts);
    wait_owned(&cluster, &active, 5);
    let rows = kcp_partitions(&cluster, &active);
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4], "{name}: {rows:?}");
    assert!(rows.iter().all(|r| r.3.is_some()), "{name}: every partition owned: {rows:?}");
    assert!(rows[3..].iter().all(|r| r.1.is_none() && r.2.is_none()), "{name}: {rows:?}");
    let _ = member.terminate(Duration::from_secs(30));
}

#[test]
fn idle_group_lists_every_partition_k39() {
    idle_group_lists_every_partition("k39");
}

#[test]
fn idle_group_lists_every_partition_k41() {
    idle_group_lists_every_partition("k41");
}

/// Spawns `kcp ARGS...` with its stdout piped to the test, stderr to a file-less null.
fn spawn_kcp(args: &[&str]) -> std::process::Child {
    use std::process::Stdio;
    Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kcp starts")
}

/// Waits up to `limit` for `child` to end; its exit status, `None` (and killed) at the limit.
fn wait_exit(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return status.code();
        }
        if started.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 39: `kcp group watch ... | head -1` ends once `head` has gone, also while the group is
/// quiet and watch has nothing to write (a group whose lag is 0 and stays so); and SIGINT ends
/// the watch with exit status 0, as --duration-s does.
#[test]
fn watch_ends_when_its_reader_goes_away_k39() {
    use std::io::{BufRead, BufReader};
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = unique_name("watch-quiet");
    cluster.create_topic(&topic, 1);
    let group = unique_name("watch-quiet-g");
    commit(&cluster, &group, &topic, "0", 0);
    let args = ["group", "watch", "--bootstrap-server", &cluster.bootstrap, "--group", &group, "--interval-ms", "200"];

    let mut child = spawn_kcp(&args);
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    assert!(first.contains(&group), "{first}");
    drop(lines); // `head -1` exits
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0), "watch went on after its reader left");

    let mut child = spawn_kcp(&args);
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    let interrupt = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(interrupt.success());
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0), "watch's Ctrl-C");

    // --format text: a line per event, for a person.
    let mut text_args = args.to_vec();
    text_args.extend(["--duration-s", "2", "--format", "text"]);
    let run = kcp(&text_args, Duration::from_secs(60));
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.lines().all(|l| l.len() > 25 && l.as_bytes()[10] == b'T' && !l.starts_with('{')),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(" lag_status ") && run.stdout.contains("status=OK"), "{}", run.stdout);
}

/// Issue 39: a member that owns partitions holding records and never commits (a `kcp group
/// join` member: it fetches and commits nothing) is named UNCOMMITTED by `watch`, partition by
/// partition and for the group, where it said OK with no status for those partitions.
#[test]
fn watch_names_an_owner_that_never_commits_k39() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = unique_name("watch-uncommitted");
    cluster.create_topic(&topic, 2);
    produce(&cluster, &topic, 200);
    let group = unique_name("watch-uncommitted-g");
    let mut member = cluster.kcp("idle", &MemberOptions::new(&group, [&topic]).duration_s(60));
    wait_owned(&cluster, &group, 2);
    let run = kcp(
        &[
            "group",
            "watch",
            "--bootstrap-server",
            &cluster.bootstrap,
            "--group",
            &group,
            "--interval-ms",
            "300",
            "--duration-s",
            "3",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let events: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let uncommitted = |partition: Value| {
        events.iter().any(|e| e["event"] == "lag_status" && e["partition"] == partition && e["status"] == "UNCOMMITTED")
    };
    assert!(uncommitted(0.into()) && uncommitted(1.into()), "{}", run.stdout);
    assert!(uncommitted(Value::Null), "the group's status: {}", run.stdout);
    let _ = member.terminate(Duration::from_secs(30));
}

/// Issue 39: `history --follow --format text` shows new records as they come (it printed
/// nothing until it ended), then the history when SIGINT ends it, with exit status 0.
#[test]
fn history_follow_text_streams_k39() {
    use std::io::{BufRead, BufReader};
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = unique_name("follow-text");
    cluster.create_topic(&topic, 1);
    produce(&cluster, &topic, 20);
    let group = unique_name("follow-text-g");
    commit(&cluster, &group, &topic, "0", 1);
    let args = [
        "group",
        "history",
        "--bootstrap-server",
        &cluster.bootstrap,
        "--group",
        &group,
        "--follow",
        "--format",
        "text",
    ];
    let mut child = spawn_kcp(&args);
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    lines.read_line(&mut line).unwrap();
    assert!(line.starts_with("following __consumer_offsets-"), "{line}");
    commit(&cluster, &group, &topic, "0", 7);
    line.clear();
    lines.read_line(&mut line).unwrap();
    assert!(line.contains(&format!("commit {topic}-0 offset 7")), "{line}");
    let interrupt = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(interrupt.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut lines, &mut rest).unwrap();
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0), "history --follow's Ctrl-C");
    assert!(rest.contains(&format!("group {group} ")) && rest.contains(&format!("commits {topic}-0: 2")), "{rest}");
}
