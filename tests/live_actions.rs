//! The write actions, `kcp group reset-offsets / delete-offsets / delete`, against real brokers
//! (Kafka 3.9.1 and 4.1.1): each as a dry run (nothing changes: Kafka's own tool still reports
//! the old offsets) and with `--execute` (Kafka's tool then reports what kcp said it did), and
//! each refused on a group with an active member, naming the member. Kafka's tool is
//! `tools/live/kafka.sh tool VERSION consumer-groups` (fetched by `kafka.sh fetch`). Without the
//! clusters' env these print SKIP (tools/live/README.md); CI sets KCP_LIVE_REQUIRED=1.

mod live;

use std::collections::BTreeMap;
use std::time::Duration;

use live::kcp::Run;
use live::{Cluster, MemberOptions};
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(60);

/// Runs `kcp group ACTION --bootstrap-server <the cluster's PLAINTEXT listener> ARGS...`, killed
/// after `LIMIT`.
fn kcp(cluster: &Cluster, args: &[&str]) -> Run {
    let mut all = vec!["group", args[0], "--bootstrap-server", &cluster.bootstrap];
    all.extend(&args[1..]);
    live::kcp::run(&all, LIMIT)
}

/// Kafka's tool, once more after a moment when it failed or printed an `Error:` (a 3.9.1
/// admin client on a loaded machine sometimes answers "Failed to find brokers to send
/// ListGroups" and still exits 0).
fn kafka_tool(cluster: &Cluster, tool: &str, args: &[&str]) -> String {
    // ConsumerGroupCommand waits 5 s by default, which a loaded two-core machine can exceed.
    let mut args = args.to_vec();
    if tool == "consumer-groups" {
        args.extend_from_slice(&["--timeout", "30000"]);
    }
    let args = &args[..];
    let mut last = String::new();
    for _ in 0..3 {
        match cluster.kafka_tool(tool, args) {
            Ok(out) if !out.contains("Error:") => return out,
            Ok(out) => last = out,
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    panic!("{}: kafka.sh tool {tool} {}: {last}", cluster.name, args.join(" "));
}

/// Produces `records` records to `topic`, spread over its partitions (Kafka's
/// ProducerPerformance with the round-robin partitioner).
fn produce(cluster: &Cluster, topic: &str, records: u32) {
    let n = records.to_string();
    let props = format!("bootstrap.servers={}", cluster.bootstrap);
    cluster
        .kafka_tool(
            "org.apache.kafka.tools.ProducerPerformance",
            &[
                "--topic",
                topic,
                "--num-records",
                &n,
                "--record-size",
                "16",
                "--throughput",
                "-1",
                "--producer-props",
                &props,
                "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
                "linger.ms=0",
            ],
        )
        .unwrap_or_else(|e| panic!("{}: {e}", cluster.name));
}

/// Each partition's log-end offset, as Kafka's `kafka-get-offsets.sh` reports it.
fn log_end_offsets(cluster: &Cluster, topic: &str) -> BTreeMap<i64, i64> {
    let out = kafka_tool(cluster, "get-offsets", &["--bootstrap-server", &cluster.bootstrap, "--topic", topic]);
    out.lines()
        .filter_map(|l| {
            let mut f = l.trim().rsplitn(3, ':');
            let offset = f.next()?.parse().ok()?;
            let partition = f.next()?.parse().ok()?;
            (f.next()? == topic).then_some((partition, offset))
        })
        .collect()
}

/// The group's committed offsets of `topic` as `kafka-consumer-groups.sh --describe --offsets`
/// prints them (partition -> CURRENT-OFFSET; partitions without one are absent or `-`).
fn kafka_committed(cluster: &Cluster, group: &str, topic: &str) -> BTreeMap<i64, Option<i64>> {
    let out = kafka_tool(
        cluster,
        "consumer-groups",
        &["--bootstrap-server", &cluster.bootstrap, "--describe", "--offsets", "--group", group],
    );
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 4 || f[0] != group || f[1] != topic {
                return None;
            }
            Some((f[2].parse().ok()?, f[3].parse().ok()))
        })
        .collect()
}

/// Kafka's own `--reset-offsets ... --dry-run`: partition -> NEW-OFFSET. Read as a stream of
/// `GROUP TOPIC PARTITION NEW-OFFSET` tokens: 3.9.1 prints the rows without line breaks.
fn kafka_reset_plan(cluster: &Cluster, group: &str, scope: &[&str]) -> BTreeMap<i64, i64> {
    let mut args = vec!["--bootstrap-server", &cluster.bootstrap, "--reset-offsets", "--dry-run", "--group", group];
    args.extend_from_slice(scope);
    let out = kafka_tool(cluster, "consumer-groups", &args);
    let tokens: Vec<&str> = out.split_whitespace().collect();
    tokens.windows(4).filter(|w| w[0] == group).filter_map(|w| Some((w[2].parse().ok()?, w[3].parse().ok()?))).collect()
}

/// kcp's partitions as partition -> `key`.
fn by_partition(v: &Value, key: &str) -> BTreeMap<i64, Value> {
    v["partitions"].as_array().unwrap().iter().map(|p| (p["partition"].as_i64().unwrap(), p[key].clone())).collect()
}

fn reset_offsets_on(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = live::unique_name("actions-reset");
    let group = live::unique_name("actions-reset-g");
    cluster.create_topic(&topic, 3);
    produce(&cluster, &topic, 30);
    let ends = log_end_offsets(&cluster, &topic);
    assert_eq!(ends.len(), 3, "{name}: {ends:?}");
    assert_eq!(ends.values().sum::<i64>(), 30, "{name}: {ends:?}");

    // A group that does not exist yet: --execute creates it with these offsets.
    let v = kcp(&cluster, &["reset-offsets", "--group", &group, "--topic", &topic, "--to-earliest", "--execute"]).ok();
    assert_eq!(
        (v["action"].clone(), v["executed"].clone(), v["type"].clone()),
        (json!("reset_offsets"), json!(true), Value::Null)
    );
    for p in v["partitions"].as_array().unwrap() {
        assert_eq!(
            (p["before"].clone(), p["after"].clone(), p["error"].clone()),
            (Value::Null, json!(0), Value::Null),
            "{p}"
        );
    }
    let zeros: BTreeMap<i64, Option<i64>> = (0..3).map(|p| (p, Some(0))).collect();
    assert_eq!(kafka_committed(&cluster, &group, &topic), zeros, "{name}: Kafka's tool after --to-earliest --execute");

    // Dry run to latest: the plan is Kafka's own plan, and nothing changes.
    let v = kcp(&cluster, &["reset-offsets", "--group", &group, "--topic", &topic, "--to-latest"]).ok();
    assert_eq!(v["executed"], json!(false));
    let after = by_partition(&v, "after");
    let expected: BTreeMap<i64, Value> = ends.iter().map(|(p, o)| (*p, json!(o))).collect();
    assert_eq!(after, expected, "{name}: dry run --to-latest");
    assert!(by_partition(&v, "before").values().all(|b| *b == json!(0)));
    let kafka_plan = kafka_reset_plan(&cluster, &group, &["--topic", &topic, "--to-latest"]);
    assert_eq!(kafka_plan, ends, "{name}: Kafka's own dry run plans the same offsets");
    assert_eq!(kafka_committed(&cluster, &group, &topic), zeros, "{name}: the dry run changed nothing");

    // Execute: Kafka's tool then reports exactly kcp's `after`.
    let v = kcp(&cluster, &["reset-offsets", "--group", &group, "--topic", &topic, "--to-latest", "--execute"]).ok();
    assert_eq!(by_partition(&v, "after"), expected, "{name}: --to-latest --execute");
    let at_end: BTreeMap<i64, Option<i64>> = ends.iter().map(|(p, o)| (*p, Some(*o))).collect();
    assert_eq!(kafka_committed(&cluster, &group, &topic), at_end, "{name}: Kafka's tool after --execute");

    // Shift one partition back by 2; the others are not named and do not move.
    let scope = format!("{topic}:0");
    let v =
        kcp(&cluster, &["reset-offsets", "--group", &group, "--topic", &scope, "--shift-by", "-2", "--execute"]).ok();
    assert_eq!(v["partitions"].as_array().unwrap().len(), 1);
    // Within the log: the round-robin producer may leave a partition with fewer than two
    // records, and a shift below the log start is clamped to it (as Kafka's tool clamps).
    let shifted_0 = (ends[&0] - 2).max(0);
    assert_eq!(v["partitions"][0]["after"], json!(shifted_0));
    let mut shifted = at_end.clone();
    shifted.insert(0, Some(shifted_0));
    assert_eq!(kafka_committed(&cluster, &group, &topic), shifted, "{name}: after --shift-by -2");

    // Beyond the log: clamped with a note, as Kafka's tool clamps.
    let v = kcp(&cluster, &["reset-offsets", "--group", &group, "--topic", &topic, "--to-offset", "1000000"]).ok();
    for p in v["partitions"].as_array().unwrap() {
        assert_eq!(p["after"], json!(ends[&p["partition"].as_i64().unwrap()]), "{p}");
        assert!(p["note"].as_str().unwrap().contains("above the log-end offset"), "{p}");
    }
    assert_eq!(kafka_reset_plan(&cluster, &group, &["--topic", &topic, "--to-offset", "1000000"]), ends);

    // By time: every record is newer than 2000-01-01, so each partition's first offset.
    let v =
        kcp(&cluster, &["reset-offsets", "--group", &group, "--all-topics", "--to-datetime", "2000-01-01T00:00:00Z"])
            .ok();
    assert_eq!(by_partition(&v, "after"), (0..3).map(|p| (p, json!(0))).collect(), "{name}: --to-datetime");

    // From a file, in Kafka's export format; the text form is a table like Kafka's.
    let csv = std::env::temp_dir().join(format!("{group}.csv"));
    // Within each log (the round-robin producer may leave a partition empty, and an offset
    // beyond the log would be clamped).
    let (one, two) = (ends[&1].min(1), ends[&2].min(2));
    std::fs::write(&csv, format!("{topic},1,{one}\n{topic},2,{two}\n")).unwrap();
    let run = kcp(
        &cluster,
        &["reset-offsets", "--group", &group, "--from-file", csv.to_str().unwrap(), "--execute", "--format", "text"],
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("GROUP"), "{}", run.stdout);
    assert!(run.stdout.contains("CURRENT-OFFSET  NEW-OFFSET  STATUS"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("committed").count(), 2, "{}", run.stdout);
    let _ = std::fs::remove_file(&csv);
    let mut from_file = shifted;
    from_file.insert(1, Some(one));
    from_file.insert(2, Some(two));
    assert_eq!(kafka_committed(&cluster, &group, &topic), from_file, "{name}: after --from-file");
}

fn delete_offsets_and_group_on(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = live::unique_name("actions-delete");
    let group = live::unique_name("actions-delete-g");
    cluster.create_topic(&topic, 2);
    produce(&cluster, &topic, 10);
    kcp(&cluster, &["reset-offsets", "--group", &group, "--topic", &topic, "--to-latest", "--execute"]).ok();
    let before = kafka_committed(&cluster, &group, &topic);
    assert_eq!(before.len(), 2, "{name}: {before:?}");

    // delete-offsets: the dry run names the offset it would delete and deletes nothing.
    let scope = format!("{topic}:0");
    let v = kcp(&cluster, &["delete-offsets", "--group", &group, "--topic", &scope]).ok();
    assert_eq!((v["action"].clone(), v["executed"].clone()), (json!("delete_offsets"), json!(false)));
    assert_eq!(
        v["partitions"],
        json!([{"topic": topic, "partition": 0, "before": before[&0], "after": null, "error": null}])
    );
    assert_eq!(kafka_committed(&cluster, &group, &topic), before, "{name}: the dry run changed nothing");
    let v = kcp(&cluster, &["delete-offsets", "--group", &group, "--topic", &scope, "--execute"]).ok();
    assert_eq!(v["partitions"][0]["after"], Value::Null);
    assert_eq!(v["partitions"][0]["error"], Value::Null);
    let now = kafka_committed(&cluster, &group, &topic);
    assert_eq!(now.get(&0).copied().flatten(), None, "{name}: Kafka's tool still sees partition 0: {now:?}");
    assert_eq!(now.get(&1), before.get(&1), "{name}: partition 1 was not named");

    // delete: the dry run names the group and its offsets; --execute deletes it.
    let v = kcp(&cluster, &["delete", "--group", &group]).ok();
    assert_eq!((v["action"].clone(), v["executed"].clone()), (json!("delete"), json!(false)));
    assert_eq!(v["groups"][0]["group_id"], json!(group));
    assert_eq!(v["groups"][0]["committed_offsets"].as_array().unwrap().len(), 1);
    assert_eq!(v["groups"][0]["deleted"], json!(false));
    let listed = kafka_tool(&cluster, "consumer-groups", &["--bootstrap-server", &cluster.bootstrap, "--list"]);
    assert!(listed.lines().any(|l| l.trim() == group), "{name}: the dry run deleted the group: {listed}");
    let v = kcp(&cluster, &["delete", "--group", &group, "--execute"]).ok();
    assert_eq!((v["groups"][0]["deleted"].clone(), v["groups"][0]["error"].clone()), (json!(true), Value::Null));
    let listed = kafka_tool(&cluster, "consumer-groups", &["--bootstrap-server", &cluster.bootstrap, "--list"]);
    assert!(!listed.lines().any(|l| l.trim() == group), "{name}: Kafka's tool still lists the group: {listed}");
    // A group that does not exist: not_found, exit 1.
    let run = kcp(&cluster, &["delete", "--group", &group, "--execute"]);
    assert_eq!(run.status, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["groups"][0]["error"]["kind"], "not_found");
}

fn refused_on_an_active_group(name: &str, protocol: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = live::unique_name("actions-active");
    let group = live::unique_name("actions-active-g");
    cluster.create_topic(&topic, 2);
    produce(&cluster, &topic, 4);
    kcp(&cluster, &["reset-offsets", "--group", &group, "--topic", &topic, "--to-latest", "--execute"]).ok();
    let before = kafka_committed(&cluster, &group, &topic);
    let mut options = MemberOptions::new(&group, [&topic]).client_id("actions-java").duration_s(120);
    if protocol == "consumer" {
        options = options.group_protocol("consumer");
    } else {
        options = options.session_timeout_ms(6000);
    }
    let mut member = cluster.java(&options);
    member
        .wait_event("assigned", Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", member.diagnostics()));
    let member_id = member.member_id().expect("the member reports its id");

    let scope = format!("{topic}:0");
    let attempts: [Vec<&str>; 6] = [
        vec!["reset-offsets", "--group", &group, "--topic", &topic, "--to-earliest"],
        vec!["reset-offsets", "--group", &group, "--topic", &topic, "--to-earliest", "--execute"],
        vec!["delete-offsets", "--group", &group, "--topic", &scope],
        vec!["delete-offsets", "--group", &group, "--topic", &scope, "--execute"],
        vec!["delete", "--group", &group],
        vec!["delete", "--group", &group, "--execute"],
    ];
    for args in &attempts {
        let run = kcp(&cluster, args);
        assert_eq!(run.status, Some(1), "{name} {args:?}:\n{}\n{}", run.stdout, run.stderr);
        let e = &run.json()["error"];
        assert_eq!(e["kind"], "active_group", "{name} {args:?}: {e}");
        assert_eq!(e["members"].as_array().map(Vec::len), Some(1), "{e}");
        assert_eq!(e["members"][0]["member_id"], json!(member_id), "{e}");
        assert!(e["message"].as_str().unwrap().contains(&member_id), "{e}");
    }
    // The text form says the same on stderr.
    let run = kcp(&cluster, &["delete", "--group", &group, "--execute", "--format", "text"]);
    assert_eq!(run.status, Some(1));
    assert!(run.stderr.contains("active_group") && run.stderr.contains(&member_id), "{}", run.stderr);
    assert_eq!(kafka_committed(&cluster, &group, &topic), before, "{name}: a refused action changed the offsets");
    member.terminate(Duration::from_secs(30)).ok();
}

#[test]
fn reset_offsets_k39() {
    reset_offsets_on("k39");
}

#[test]
fn reset_offsets_k41() {
    reset_offsets_on("k41");
}

#[test]
fn delete_offsets_and_group_k39() {
    delete_offsets_and_group_on("k39");
}

#[test]
fn delete_offsets_and_group_k41() {
    delete_offsets_and_group_on("k41");
}

#[test]
fn refused_on_an_active_classic_group_k39() {
    refused_on_an_active_group("k39", "classic");
}

#[test]
fn refused_on_an_active_consumer_group_k41() {
    refused_on_an_active_group("k41", "consumer");
}

/// `watch` of a group that does not exist fails as `describe` does (it used to poll forever and
/// exit 0); `--wait-for-group` watches for it instead.
#[test]
fn watch_of_a_missing_group_is_not_found_k41() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let group = live::unique_name("actions-missing-g");
    let run = kcp(&cluster, &["watch", "--group", &group, "--interval-ms", "200", "--duration-s", "20"]);
    assert_eq!(run.status, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["error"]["kind"], "not_found", "{}", run.stdout);
    let described = kcp(&cluster, &["describe", "--group", &group]);
    assert_eq!((described.status, described.json()["error"]["kind"].clone()), (Some(1), json!("not_found")));
    let run =
        kcp(&cluster, &["watch", "--group", &group, "--interval-ms", "200", "--duration-s", "2", "--wait-for-group"]);
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    let first: Value = serde_json::from_str(run.stdout.lines().next().unwrap_or("")).unwrap_or(Value::Null);
    assert_eq!((first["event"].clone(), first["state"].clone()), (json!("state"), json!("Dead")), "{}", run.stdout);
}
