//! `kcp group history` on real brokers (Kafka 3.9.1 and 4.1.1, issue 24): a cooperative-sticky
//! group of Java consumers that join one by one, one leaving, committing what they process; then
//! the group's history read live (`--bootstrap-server`: Fetch of its `__consumer_offsets`
//! partition) must show the generations the members reported in their own rebalance callbacks
//! (who was in each generation, what each was assigned), and the same history read offline from a
//! copy of the broker's partition directory (`--log-dir`) must be equal. One record of each kind
//! (an offset commit, a group metadata) is checked field by field against Kafka's
//! `kafka-dump-log.sh --offsets-decoder` on the copied segment.

mod live;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use live::{unique_name, Cluster, Member, MemberOptions, TopicPartition};
use serde_json::Value;

const PARTITIONS: i32 = 6;
const SETTLE: Duration = Duration::from_secs(90);

/// Runs `kcp ARGS...` to completion (killed after `limit`): its stdout, `Err` with stderr when
/// it fails.
fn kcp(args: &[&str], limit: Duration) -> Result<String, String> {
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
        if let Some(status) = child.try_wait().expect("wait for kcp") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("kcp {} still running after {limit:?}; killed", args.join(" ")));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out_reader.join().unwrap(), err_reader.join().unwrap());
    if status.success() {
        Ok(out)
    } else {
        Err(format!("kcp {} failed ({status}): {err}\n{out}", args.join(" ")))
    }
}

/// Produces `count` records to `topic` with Kafka's own ProducerPerformance.
fn produce(cluster: &Cluster, topic: &str, count: u32) {
    let bootstrap = format!("bootstrap.servers={}", cluster.bootstrap);
    cluster
        .kafka_tool(
            "org.apache.kafka.tools.ProducerPerformance",
            &[
                "--topic",
                topic,
                "--num-records",
                &count.to_string(),
                "--record-size",
                "16",
                "--throughput",
                "-1",
                "--producer-props",
                &bootstrap,
            ],
        )
        .unwrap_or_else(|e| panic!("{}: produce: {e}", cluster.name));
}

fn java(cluster: &Cluster, group: &str, topic: &str, client_id: &str) -> Member {
    let mut o = MemberOptions::new(group, [topic])
        .assignors(["cooperative-sticky"])
        .client_id(client_id)
        .session_timeout_ms(10_000)
        .duration_s(240);
    o.heartbeat_interval_ms = Some(1_000);
    let mut cmd = cluster.ctl_command();
    cmd.args(["java", &cluster.name, "LiveConsumer"]).args(o.args(&cluster.bootstrap)).args(["--process", "true"]);
    cluster.spawn(format!("java:{client_id}"), cmd)
}

/// Waits until the running members own these many partitions each (in this order) and every
/// partition once.
fn wait_owned(members: &mut [&mut Member], counts: &[usize]) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let owned: Vec<BTreeSet<TopicPartition>> = members.iter().map(|m| m.owned()).collect();
        let all: BTreeSet<&TopicPartition> = owned.iter().flatten().collect();
        let sizes: Vec<usize> = owned.iter().map(BTreeSet::len).collect();
        if sizes == counts && all.len() == PARTITIONS as usize {
            return;
        }
        if Instant::now() > deadline {
            let diagnostics: Vec<String> = members.iter().map(|m| m.diagnostics()).collect();
            panic!("members own {sizes:?}, expected {counts:?}\n{}", diagnostics.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What the members said: for each generation, each member's (client id) assignment after its
/// `assigned` callback of that generation.
fn reported(members: &[(&str, &Member)]) -> BTreeMap<i32, BTreeMap<String, BTreeSet<TopicPartition>>> {
    let mut out: BTreeMap<i32, BTreeMap<String, BTreeSet<TopicPartition>>> = BTreeMap::new();
    for (client, m) in members {
        for e in m.events() {
            if e.event == "assigned" {
                let generation = e.generation_id.unwrap_or_else(|| panic!("{client}: assigned without generation"));
                let owned = e.owned.clone().unwrap_or_default();
                out.entry(generation).or_default().insert(client.to_string(), owned);
            }
        }
    }
    out
}

/// The history's generations of the group: generation -> client id -> decoded assignment.
fn history_generations(doc: &Value) -> BTreeMap<i32, BTreeMap<String, BTreeSet<TopicPartition>>> {
    let groups = doc["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "one group: {doc}");
    let mut out = BTreeMap::new();
    for g in groups[0]["generations"].as_array().unwrap() {
        let mut members = BTreeMap::new();
        for m in g["members"].as_array().unwrap() {
            let mut owned = BTreeSet::new();
            for tp in m["assignment"]["assigned_partitions"].as_array().expect("a decoded assignment") {
                for p in tp["partitions"].as_array().unwrap() {
                    owned.insert((tp["topic"].as_str().unwrap().to_string(), p.as_i64().unwrap() as i32));
                }
            }
            members.insert(m["client_id"].as_str().unwrap().to_string(), owned);
        }
        out.insert(g["generation"].as_i64().unwrap() as i32, members);
    }
    out
}

/// The record lines of `kafka-dump-log.sh --offsets-decoder`: offset -> (key, payload).
fn dump_records(text: &str) -> BTreeMap<i64, (Value, Option<Value>)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("| offset: ") else { continue };
        let offset: i64 = rest.split(' ').next().unwrap().parse().unwrap();
        let key_at = rest.find(" key: ").unwrap() + 6;
        let payload_at = rest.find(" payload: ").unwrap();
        let mut key: Value = serde_json::from_str(&rest[key_at..payload_at]).unwrap();
        key["type"] = key["type"].as_str().unwrap().parse::<i64>().unwrap().into();
        let payload = &rest[payload_at + 10..];
        let payload = (payload != "<DELETE>").then(|| {
            let mut v: Value = serde_json::from_str(payload).unwrap();
            v["version"] = v["version"].as_str().unwrap().parse::<i64>().unwrap().into();
            v
        });
        out.insert(offset, (key, payload));
    }
    out
}

/// Compares our record line with DumpLogSegments' record: equal keys and values, except that
/// the embedded assignment and subscription are compared by their decoded partitions and topics
/// (Kafka prints them in its own JSON, we in `kcp decode`'s shape).
fn check_against_dump(ours: &Value, dump: &(Value, Option<Value>)) {
    let offset = &ours["offset"];
    assert_eq!(ours["key"], dump.0, "key of the record at offset {offset}");
    let (ours, theirs) = (&ours["value"], dump.1.as_ref().expect("not a tombstone"));
    assert_eq!(ours["version"], theirs["version"], "value version at {offset}");
    let (ours, theirs) = (ours["data"].as_object().unwrap(), theirs["data"].as_object().unwrap());
    assert_eq!(
        ours.keys().collect::<BTreeSet<_>>(),
        theirs.keys().collect::<BTreeSet<_>>(),
        "value fields at {offset}"
    );
    for (name, value) in ours {
        if name != "members" {
            assert_eq!(value, &theirs[name], "{name} at {offset}");
            continue;
        }
        let (a, b) = (value.as_array().unwrap(), theirs[name].as_array().unwrap());
        assert_eq!(a.len(), b.len(), "members at {offset}");
        for (m, k) in a.iter().zip(b) {
            for (field, v) in m.as_object().unwrap() {
                match field.as_str() {
                    "subscription" => assert_eq!(v["topics"], k[field]["topics"], "subscribed topics at {offset}"),
                    "assignment" => {
                        assert_eq!(v["assigned_partitions"], k[field]["assignedPartitions"], "assignment at {offset}")
                    }
                    _ => assert_eq!(v, &k[field], "member {field} at {offset}"),
                }
            }
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

fn scenario(cluster: &Cluster) {
    let topic = unique_name("hist-live-t");
    let group = unique_name("hist-live-g");
    cluster.create_topic(&topic, PARTITIONS);
    produce(cluster, &topic, 60);

    // Join one by one: 6, then 3+3, then 2+2+2; then m2 leaves: 3+3.
    let mut m1 = java(cluster, &group, &topic, "m1");
    wait_owned(&mut [&mut m1], &[6]);
    let mut m2 = java(cluster, &group, &topic, "m2");
    wait_owned(&mut [&mut m1, &mut m2], &[3, 3]);
    let mut m3 = java(cluster, &group, &topic, "m3");
    wait_owned(&mut [&mut m1, &mut m2, &mut m3], &[2, 2, 2]);
    m2.terminate(Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    wait_owned(&mut [&mut m1, &mut m3], &[3, 3]);
    // New records: whoever owns their partition (the producer's sticky partitioner may put them
    // all in one) processes and commits them.
    let committed = |m: &Member| m.events().iter().filter(|e| e.event == "committed").count();
    let before = committed(&m1) + committed(&m3);
    produce(cluster, &topic, 60);
    let deadline = Instant::now() + SETTLE;
    while committed(&m1) + committed(&m3) == before {
        assert!(
            Instant::now() < deadline,
            "no commit after the second batch\n{}\n{}",
            m1.diagnostics(),
            m3.diagnostics()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let said = reported(&[("m1", &m1), ("m2", &m2), ("m3", &m3)]);
    let callbacks: Vec<String> = [&m1, &m2, &m3]
        .iter()
        .flat_map(|m| m.events())
        .filter(|e| matches!(e.event.as_str(), "assigned" | "revoked" | "lost" | "joined"))
        .map(|e| e.raw.to_string())
        .collect();
    let callbacks = callbacks.join("\n");

    // Live.
    let b = cluster.bootstrap.as_str();
    let limit = Duration::from_secs(60);
    let svg_path = std::env::temp_dir().join(format!("{}.svg", unique_name("kcp-live-history")));
    let svg_arg = svg_path.to_str().unwrap();
    let live: Value = serde_json::from_str(
        &kcp(&["group", "history", "--bootstrap-server", b, "--group", &group, "--svg", svg_arg], limit).unwrap(),
    )
    .unwrap();
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let _ = std::fs::remove_file(&svg_path);
    for p in 0..PARTITIONS {
        assert!(svg.contains(&format!(">{topic}-{p}</text>")), "lane {p} in the SVG");
    }
    let generations = history_generations(&live);
    // Every (generation, member) a member reported in its `assigned` callback is in the history,
    // with that assignment. A member may miss a generation in its callbacks (m2 once had no
    // `assigned` line for the round that revoked one of its partitions, in one run of seven;
    // the cause is not established), so the reverse is checked by the member counts below.
    for (generation, members) in &said {
        let history = generations.get(generation).unwrap_or_else(|| panic!("generation {generation}: {live}"));
        for (client, owned) in members {
            assert_eq!(history.get(client), Some(owned), "{client} in generation {generation}\n{callbacks}");
        }
    }
    // The generations with members: m1 alone, m2 joins (two rounds: revoke, then assign), m3
    // joins, m2 leaves; the last is the group's final state, each member's as it reported last.
    let counts: Vec<usize> = generations.values().map(BTreeMap::len).filter(|&n| n > 0).collect();
    let peak = counts.iter().position(|&n| n == 3).unwrap_or_else(|| panic!("member counts {counts:?}"));
    assert_eq!(counts[0], 1, "member counts {counts:?}");
    assert!(counts[..peak].windows(2).all(|w| w[0] <= w[1]) && counts[..peak].contains(&2), "{counts:?}");
    assert!(counts[peak..].iter().all(|&n| n == 3 || n == 2) && counts.last() == Some(&2), "{counts:?}");
    let last = generations.values().last().unwrap();
    assert_eq!(last.keys().collect::<Vec<_>>(), ["m1", "m3"], "final generation: {live}");
    for (client, m) in [("m1", &m1), ("m3", &m3)] {
        assert_eq!(last.get(client), Some(&m.owned()), "{client}'s final assignment");
    }
    assert!(svg.contains(&format!("{} rebalances", counts.len())));
    let gens = live["groups"][0]["generations"].as_array().unwrap();
    let m2_id = gens
        .iter()
        .flat_map(|g| g["members"].as_array().unwrap())
        .find(|m| m["client_id"] == "m2")
        .map(|m| m["member_id"].clone())
        .unwrap();
    assert!(gens.iter().any(|g| g["left"].as_array().unwrap().contains(&m2_id)), "m2 left: {live}");
    let commits = live["groups"][0]["commits"].as_array().unwrap();
    assert!(!commits.is_empty(), "commits: {live}");

    // Offline, from a copy of the broker's partition directory.
    let partition = live["partition"].as_i64().unwrap();
    let dir_name = format!("__consumer_offsets-{partition}");
    let source = cluster.run_dir.join("broker-1/data").join(&dir_name);
    let copy = std::env::temp_dir().join(unique_name("kcp-live-history")).join(&dir_name);
    copy_dir(&source, &copy);
    let copy_arg = copy.to_str().unwrap();
    let offline: Value =
        serde_json::from_str(&kcp(&["group", "history", "--log-dir", copy_arg, "--group", &group], limit).unwrap())
            .unwrap();
    assert_eq!(offline["groups"][0]["generations"], live["groups"][0]["generations"], "offline and live generations");
    assert_eq!(history_generations(&offline), generations);

    // One offset commit and one group metadata record against DumpLogSegments.
    let records = kcp(&["group", "history", "--bootstrap-server", b, "--group", &group, "--records"], limit).unwrap();
    // Small fetches (batches cut at the end of most responses, read whole by the next fetch)
    // give the same records.
    let small =
        ["group", "history", "--bootstrap-server", b, "--group", &group, "--records", "--fetch-max-bytes", "200"];
    let small = kcp(&small, limit).unwrap();
    let upto = |text: &str, n: usize| text.lines().take(n).collect::<Vec<_>>().join("\n");
    let n = records.lines().count();
    assert_eq!(upto(&small, n), upto(&records, n), "--fetch-max-bytes 200 reads the same records");
    let records: Vec<Value> = records.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut segments: Vec<PathBuf> = std::fs::read_dir(&copy)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    segments.sort();
    let mut dumped = BTreeMap::new();
    for seg in &segments {
        let text = cluster
            .kafka_tool("dump-log", &["--offsets-decoder", "--files", seg.to_str().unwrap()])
            .unwrap_or_else(|e| panic!("{}: {e}", cluster.name));
        dumped.extend(dump_records(&text));
    }
    for key_type in [1, 2] {
        let ours = records
            .iter()
            .rev()
            .find(|r| r["key"]["type"] == key_type && !r["value"].is_null())
            .unwrap_or_else(|| panic!("a record of type {key_type}"));
        let offset = ours["offset"].as_i64().unwrap();
        check_against_dump(ours, dumped.get(&offset).unwrap_or_else(|| panic!("offset {offset} in the dump")));
    }
    let _ = std::fs::remove_dir_all(copy.parent().unwrap());
    for m in [&mut m1, &mut m3] {
        m.terminate(Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn history_of_a_cooperative_group_on_3_9() {
    if let Some(cluster) = Cluster::shared("k39") {
        scenario(&cluster);
    }
}

#[test]
fn history_of_a_cooperative_group_on_4_1() {
    if let Some(cluster) = Cluster::shared("k41") {
        scenario(&cluster);
    }
}
