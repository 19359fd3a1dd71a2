//! `kcp group list / describe / watch` against real brokers (Kafka 3.9.1 and 4.1.1) with groups
//! made by real clients: Java eager range, Java cooperative-sticky with a static member and
//! racks, librdkafka, and on 4.x Java `group.protocol=consumer`. `describe` must agree with what
//! every client reports of its own assignment and subscription. Without the clusters' env these
//! print SKIP (tools/live/README.md); CI starts them and sets KCP_LIVE_REQUIRED=1.

mod live;

use live::member::parse_partitions;
use live::kcp::Run;
use live::{Cluster, Member, MemberOptions, TopicPartition};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

const SETTLE: Duration = Duration::from_secs(90);
const QUIET: Duration = Duration::from_secs(3);
const EXIT: Duration = Duration::from_secs(45);

/// Runs `kcp ARGS...`, killed after `limit`.
fn kcp(args: &[&str], limit: Duration) -> Run {
    live::kcp::run(args, limit)
}

fn groups_set(v: &Value) -> BTreeSet<TopicPartition> {
    parse_partitions(v).unwrap_or_else(|| panic!("not partition groups: {v}"))
}

/// Describes `group` until it is Stable with every one of `members` as it reports itself (the
/// broker's view catches up with the clients' callbacks within a moment), then returns it.
fn describe_matching(cluster: &Cluster, group: &str, members: &[&Member]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let run = kcp(
            &["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--group", group],
            Duration::from_secs(40),
        );
        assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
        let described = run.json();
        match agrees(&described, members) {
            Ok(()) => return described,
            Err(why) if Instant::now() >= deadline => panic!("{why}\ndescribe: {described:#}"),
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

/// `describe` says of every member what the member reports of itself: member id, assignment,
/// subscription; and the group is stable without findings.
fn agrees(described: &Value, members: &[&Member]) -> Result<(), String> {
    let listed = described["members"].as_array().cloned().unwrap_or_default();
    if described["state"] != "Stable" || listed.len() != members.len() {
        return Err(format!("state {}, {} members described, {} run", described["state"], listed.len(), members.len()));
    }
    let consumer = described["type"] == "consumer";
    for m in members {
        let reported = m.last_reported().ok_or_else(|| format!("{} reported nothing", m.label))?;
        let id = reported.raw["member_id"].as_str().ok_or_else(|| format!("{}: no member_id", m.label))?;
        let entry = listed
            .iter()
            .find(|e| e["member_id"].as_str() == Some(id))
            .ok_or_else(|| format!("{} ({id}) is not described", m.label))?;
        let by_client = parse_partitions(&reported.raw["assignment"]).unwrap_or_default();
        let topics_by_client: BTreeSet<String> = reported.raw["subscription"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect();
        let (assigned, topics) = if consumer {
            (groups_set(&entry["assignment"]), &entry["subscribed_topics"])
        } else {
            let a = &entry["assignment"];
            if a["kind"] != "assignment" {
                return Err(format!("{}: assignment not decoded: {a}", m.label));
            }
            (groups_set(&a["assigned_partitions"]), &entry["subscription"]["topics"])
        };
        let topics: BTreeSet<String> =
            topics.as_array().into_iter().flatten().filter_map(|t| t.as_str().map(str::to_owned)).collect();
        if assigned != by_client || by_client != m.owned() {
            return Err(format!(
                "{}: kcp says {assigned:?}, the client reports {by_client:?}, owns {:?}",
                m.label,
                m.owned()
            ));
        }
        if topics != topics_by_client {
            return Err(format!("{}: kcp says subscribed to {topics:?}, the client {topics_by_client:?}", m.label));
        }
        let instance = reported.raw["group_instance_id"].as_str();
        if entry["group_instance_id"].as_str() != instance {
            return Err(format!("{}: instance id {} vs reported {instance:?}", m.label, entry["group_instance_id"]));
        }
        if consumer && entry["target_assignment"] != entry["assignment"] {
            return Err(format!("{}: still reconciling: {entry}", m.label));
        }
    }
    if described["diagnostics"].as_array().is_some_and(|d| !d.is_empty()) {
        return Err(format!("a settled group has findings: {}", described["diagnostics"]));
    }
    Ok(())
}

fn leave_all(members: &mut [&mut Member]) {
    for m in members.iter_mut() {
        let status = m.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "{} exited with {status}\n{}", m.label, m.diagnostics());
    }
}

fn member_of<'a>(described: &'a Value, m: &Member) -> &'a Value {
    let id = m.member_id().unwrap_or_else(|| panic!("{} has no member id", m.label));
    described["members"].as_array().unwrap().iter().find(|e| e["member_id"] == id.as_str()).unwrap()
}

/// Java eager range + librdkafka range in one group, Java cooperative-sticky (a static member,
/// racks) + librdkafka cooperative-sticky in another; `describe` of both agrees with every member.
fn classic_groups_agree(cluster: &Cluster) {
    let topic = live::unique_name("gd-orders");
    let audit = live::unique_name("gd-audit");
    cluster.create_topic(&topic, 6);
    cluster.create_topic(&audit, 3);
    let range_group = live::unique_name("gd-range");
    let coop_group = live::unique_name("gd-coop");

    let range = MemberOptions::new(&range_group, [&topic, &audit]).assignors(["range"]).session_timeout_ms(6000);
    let mut j1 = cluster.java(&range.clone().client_id("j1"));
    let mut r1 = cluster.rdkafka(&range.clone().client_id("r1"));
    let coop = MemberOptions::new(&coop_group, [&topic]).assignors(["cooperative-sticky"]).session_timeout_ms(6000);
    let mut c1 = cluster.java(&coop.clone().client_id("c1").instance_id("c1-static").rack("rack-a"));
    let mut c2 = cluster.java(&coop.clone().client_id("c2").rack("rack-b"));
    let mut rc = cluster.rdkafka(&coop.clone().client_id("rc"));

    let mut both = live::partitions(&topic, 0..6);
    both.extend(live::partitions(&audit, 0..3));
    live::wait_settled(&mut [&mut j1, &mut r1], &both, SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));
    live::wait_settled(&mut [&mut c1, &mut c2, &mut rc], &live::partitions(&topic, 0..6), SETTLE, QUIET)
        .unwrap_or_else(|e| panic!("{e}"));

    let described = describe_matching(cluster, &range_group, &[&j1, &r1]);
    assert_eq!(described["protocol"], "range");
    assert_eq!(described["type"], "classic");
    let j1_sub = &member_of(&described, &j1)["subscription"];
    assert_eq!(j1_sub["version"], 3, "Java writes subscription v3: {j1_sub}");
    assert_eq!(j1_sub["user_data"], Value::Null, "range sends no userData");
    assert_eq!(member_of(&described, &r1)["client_id"], "r1");

    let described = describe_matching(cluster, &coop_group, &[&c1, &c2, &rc]);
    assert_eq!(described["protocol"], "cooperative-sticky");
    let c1_entry = member_of(&described, &c1);
    assert_eq!(c1_entry["group_instance_id"], "c1-static");
    assert_eq!(c1_entry["subscription"]["rack_id"], "rack-a");
    assert_eq!(member_of(&described, &c2)["subscription"]["rack_id"], "rack-b");
    // Java's cooperative-sticky userData is its 4-byte generation; librdkafka's the KIP-341 layout.
    assert_eq!(c1_entry["subscription"]["user_data_decoded"]["format"], "cooperative_sticky");
    let rc_user_data = &member_of(&described, &rc)["subscription"]["user_data_decoded"];
    assert!(rc_user_data.is_null() || rc_user_data["format"] == "sticky_v1", "{rc_user_data}");

    // The text table shows every member with its rack.
    let text = kcp(
        &["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--group", &coop_group, "--format", "text"],
        Duration::from_secs(40),
    );
    assert_eq!(text.status, Some(0), "{}", text.stderr);
    assert!(
        text.stdout.starts_with(&format!("group {coop_group} (classic, Stable, protocol cooperative-sticky")),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("(static c1-static)") && text.stdout.contains("rack-b"), "{}", text.stdout);
    assert!(text.stdout.contains("no findings"), "{}", text.stdout);

    // `list` shows both, classic; `--all-groups` describes them among the others.
    let listed = kcp(&["group", "list", "--bootstrap-server", &cluster.bootstrap], Duration::from_secs(40)).json();
    for g in [&range_group, &coop_group] {
        let entry = listed["groups"].as_array().unwrap().iter().find(|e| e["group_id"] == g.as_str());
        let entry = entry.unwrap_or_else(|| panic!("{g} not listed: {listed}"));
        assert_eq!((&entry["type"], &entry["protocol_type"]), (&Value::from("classic"), &Value::from("consumer")));
    }
    let all =
        kcp(&["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--all-groups"], Duration::from_secs(60));
    let all = all.json();
    let ids: Vec<&str> = all.as_array().unwrap().iter().filter_map(|g| g["group_id"].as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "--all-groups writes groups by id");
    assert!(ids.contains(&range_group.as_str()) && ids.contains(&coop_group.as_str()), "{ids:?}");

    leave_all(&mut [&mut rc, &mut c2, &mut c1, &mut r1, &mut j1]);
}

#[test]
fn classic_groups_of_java_and_librdkafka_on_kafka_3_9() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    classic_groups_agree(&cluster);
}

#[test]
fn classic_groups_of_java_and_librdkafka_on_kafka_4_1() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    classic_groups_agree(&cluster);
}

#[test]
fn consumer_protocol_groups_on_kafka_4_1() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let topic = live::unique_name("gd-kip848");
    cluster.create_topic(&topic, 6);
    let group = live::unique_name("gd-kip848-g");
    let opts = MemberOptions::new(&group, [&topic]).group_protocol("consumer");
    let mut n1 = cluster.java(&opts.clone().client_id("n1"));
    let mut n2 = cluster.java(&opts.clone().client_id("n2").rack("rack-b"));
    live::wait_settled(&mut [&mut n1, &mut n2], &live::partitions(&topic, 0..6), SETTLE, QUIET)
        .unwrap_or_else(|e| panic!("{e}"));
    let described = describe_matching(&cluster, &group, &[&n1, &n2]);
    assert_eq!(described["type"], "consumer");
    assert!(
        described["group_epoch"].as_i64().unwrap() >= 1 && described["assignment_epoch"] == described["group_epoch"]
    );
    assert!(described["assignor"].as_str().is_some_and(|a| !a.is_empty()), "{described}");
    for m in [&n1, &n2] {
        let entry = member_of(&described, m);
        assert_eq!(entry["member_type"], "consumer", "{entry}");
        assert!(entry["member_epoch"].as_i64().unwrap() >= 1, "{entry}");
    }
    assert_eq!(member_of(&described, &n2)["rack_id"], "rack-b");
    let listed = kcp(&["group", "list", "--bootstrap-server", &cluster.bootstrap], Duration::from_secs(40)).json();
    let entry = listed["groups"].as_array().unwrap().iter().find(|e| e["group_id"] == group.as_str()).cloned();
    assert_eq!(entry.map(|e| e["type"].clone()), Some(Value::from("consumer")), "{listed}");

    // An unknown group on 4.x: DescribeGroups v6 says GROUP_ID_NOT_FOUND, then ConsumerGroupDescribe.
    let unknown = kcp(
        &["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--group", &live::unique_name("nope")],
        Duration::from_secs(40),
    );
    assert_eq!(unknown.status, Some(1), "{}", unknown.stdout);
    assert_eq!(unknown.json()["error"]["kind"], "not_found");
    leave_all(&mut [&mut n2, &mut n1]);
}

/// Secured listener: describe works over SASL_SSL with SCRAM; a wrong password, a wrong CA, an
/// unreachable port, an unknown group and a setting kcp cannot honour each give the contract's
/// exit status and kind, within the deadline, and no output carries the password.
#[test]
fn sasl_ssl_and_the_error_kinds_on_kafka_3_9() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let Some(sasl) = cluster.sasl_ssl.clone() else {
        panic!("k39 has no SASL_SSL listener (start it with --sasl-ssl)")
    };
    let topic = live::unique_name("gd-sasl");
    cluster.create_topic(&topic, 2);
    let group = live::unique_name("gd-sasl-g");
    let mut m = cluster
        .java(&MemberOptions::new(&group, [&topic]).assignors(["range"]).session_timeout_ms(6000).client_id("s1"));
    live::wait_settled(&mut [&mut m], &live::partitions(&topic, 0..2), SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));

    let dir = std::env::temp_dir().join(live::unique_name("kcp-gd-props"));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read_to_string(cluster.client_properties("scram-sha-512")).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let good_file = write("good.properties", &good);
    let wrong_password = "wrong-password-kcp-test";
    let bad_password = write("bad-password.properties", &good.replace(&sasl.scram_password, wrong_password));
    let ca = sasl.ca_pem.to_string_lossy().into_owned();
    let other_ca = sasl.other_ca_pem.to_string_lossy().into_owned();
    let bad_ca = write("bad-ca.properties", &good.replace(&ca, &other_ca));
    let jks = write("jks.properties", &format!("{good}\nssl.truststore.type=JKS\n"));
    let secrets = [sasl.scram_password.as_str(), wrong_password];
    let no_secret = |run: &Run, what: &str| {
        for s in secrets {
            assert!(
                !run.stdout.contains(s) && !run.stderr.contains(s),
                "{what}: a password in the output:\n{}\n{}",
                run.stdout,
                run.stderr
            );
        }
    };
    let timeout_ms = "8000";
    let limit = Duration::from_secs(20);

    let ok = kcp(
        &[
            "group",
            "describe",
            "--bootstrap-server",
            &sasl.bootstrap,
            "--command-config",
            &good_file,
            "--group",
            &group,
        ],
        limit,
    );
    assert_eq!(ok.status, Some(0), "{}\n{}", ok.stdout, ok.stderr);
    no_secret(&ok, "describe");
    let described = ok.json();
    assert_eq!(described["state"], "Stable");
    assert_eq!(described["members"][0]["member_id"], m.member_id().unwrap().as_str());

    let cases: [(&str, Vec<&str>, i32, &str); 4] = [
        (
            "wrong password",
            vec!["--bootstrap-server", &sasl.bootstrap, "--command-config", &bad_password],
            1,
            "authentication",
        ),
        ("wrong CA", vec!["--bootstrap-server", &sasl.bootstrap, "--command-config", &bad_ca], 1, "tls"),
        ("unreachable port", vec!["--bootstrap-server", "127.0.0.1:1"], 1, "unreachable"),
        ("unknown group", vec!["--bootstrap-server", &sasl.bootstrap, "--command-config", &good_file], 1, "not_found"),
    ];
    for (what, connection, status, kind) in cases {
        let unknown = live::unique_name("nope");
        let group_arg = if kind == "not_found" { unknown.as_str() } else { group.as_str() };
        let mut args = vec!["group", "describe", "--timeout-ms", timeout_ms, "--group", group_arg];
        args.extend(connection);
        let run = kcp(&args, limit);
        assert_eq!(run.status, Some(status), "{what}: {}\n{}", run.stdout, run.stderr);
        assert_eq!(run.json()["error"]["kind"], kind, "{what}: {}", run.stdout);
        assert!(run.elapsed < Duration::from_millis(8000 + 2000), "{what}: took {:?}", run.elapsed);
        no_secret(&run, what);
    }
    // A PEM file declared a JKS truststore: a usage error naming the key, the type and the file.
    let run = kcp(&["group", "list", "--bootstrap-server", &sasl.bootstrap, "--command-config", &jks], limit);
    assert_eq!(run.status, Some(2), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("ssl.truststore.type"), "{}", run.stderr);
    no_secret(&run, "JKS");
    // `list` over SASL_SSL too.
    let run = kcp(
        &["group", "list", "--bootstrap-server", &sasl.bootstrap, "--command-config", &good_file, "--format", "text"],
        limit,
    );
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains(&group), "{}", run.stdout);
    no_secret(&run, "list");
    let _ = std::fs::remove_dir_all(&dir);
    leave_all(&mut [&mut m]);
}

/// `watch` sees a member join and the group rebalance, then the member leave.
#[test]
fn watch_sees_members_join_and_leave_on_kafka_3_9() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("gd-watch");
    cluster.create_topic(&topic, 4);
    let group = live::unique_name("gd-watch-g");
    let mut watch = Command::new(env!("CARGO_BIN_EXE_kcp"));
    watch.args(["group", "watch", "--bootstrap-server", &cluster.bootstrap, "--group", &group]).args([
        "--interval-ms",
        "200",
        "--duration-s",
        "120",
        "--storm",
        "1/60",
        "--wait-for-group",
    ]);
    // The watcher's JSON lines carry `ts`, not `ts_ms`: they are read as non-event lines.
    let watcher = cluster.spawn("kcp-watch".into(), watch);
    let opts = MemberOptions::new(&group, [&topic]).assignors(["cooperative-sticky"]).session_timeout_ms(6000);
    let mut a = cluster.java(&opts.clone().client_id("wa"));
    live::wait_settled(&mut [&mut a], &live::partitions(&topic, 0..4), SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));
    let mut b = cluster.rdkafka(&opts.clone().client_id("wb"));
    live::wait_settled(&mut [&mut a, &mut b], &live::partitions(&topic, 0..4), SETTLE, QUIET)
        .unwrap_or_else(|e| panic!("{e}"));
    let b_id = b.member_id().expect("b has a member id");
    leave_all(&mut [&mut b]);
    live::wait_settled(&mut [&mut a], &live::partitions(&topic, 0..4), SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));
    // Give the watcher a few polls, then stop it and read everything it printed.
    std::thread::sleep(Duration::from_secs(2));
    let mut watcher = watcher;
    let _ = watcher.terminate(EXIT);
    let text = watcher.diagnostics();
    drop(watcher);
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| l.find('{').map(|i| &l[i..]))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["group_id"] == group.as_str())
        .collect();
    let events: Vec<(&str, &str)> =
        lines.iter().map(|v| (v["event"].as_str().unwrap_or(""), v["member_id"].as_str().unwrap_or(""))).collect();
    let a_id = a.member_id().unwrap();
    for v in &lines {
        let ts = v["ts"].as_str().unwrap_or_default();
        assert!(ts.len() == 24 && ts.ends_with('Z'), "every line has a millisecond ts: {v}");
    }
    assert!(events.contains(&("member_joined", a_id.as_str())), "{text}");
    assert!(events.contains(&("member_joined", b_id.as_str())), "{text}");
    assert!(events.contains(&("member_left", b_id.as_str())), "{text}");
    assert!(events.iter().any(|(e, _)| *e == "rebalance"), "{text}");
    assert!(events.iter().any(|(e, m)| *e == "assignment_changed" && *m == a_id.as_str()), "{text}");
    assert!(events.iter().any(|(e, _)| *e == "storm"), "more than 1 rebalance in 60 s: {text}");
    leave_all(&mut [&mut a]);
}
