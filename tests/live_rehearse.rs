//! `kcp group upgrade-check --scenario` on a live group (issue 25): the scenario it writes of a
//! Stable cooperative-sticky group of Java consumers is run by `kcp simulate`, and the simulated
//! upgrade must agree with the check's verdict (`ready`: the group converts) with no partition
//! owned twice. Cluster: the shared `k41` (Kafka 4.1.1, defaults).

mod live;

use std::process::Command;
use std::time::{Duration, Instant};

use live::{Cluster, Member, MemberOptions};
use serde_json::Value;

const SETTLE: Duration = Duration::from_secs(60);
const EXIT: Duration = Duration::from_secs(45);

/// `kcp group upgrade-check ARGS...` (bounded to 120 s): its JSON report, after checking the
/// exit status: 4 for a `blocked` verdict (while the group still rebalances), else 0.
fn kcp_json(args: &[&str]) -> Value {
    let run = live::kcp::run(args, Duration::from_secs(120));
    let report = run.json();
    let expected = if report["verdict"] == "blocked" { 4 } else { 0 };
    assert_eq!(run.status, Some(expected), "{}\n{}", run.stdout, run.stderr);
    report
}

/// `upgrade-check`'s report once the group has settled: every member assigned and the broker
/// reporting the group Stable with all of them (bounded by SETTLE).
fn settled(check: &[&str], members: &[Member]) -> Value {
    let deadline = Instant::now() + SETTLE;
    let size = format!("{} members", members.len());
    let mut last = Value::Null;
    loop {
        if members.iter().all(|m| m.events().iter().any(|e| e.event == "assigned")) {
            let report = kcp_json(check);
            let checks = report["checks"].as_array().unwrap();
            let stable = checks.iter().any(|c| c["name"] == "rebalance_state" && c["ok"] == Value::Bool(true));
            let all = checks
                .iter()
                .any(|c| c["name"] == "group_size" && c["evidence"].as_str().unwrap_or("").starts_with(&size));
            if stable && all {
                return report;
            }
            last = report;
        }
        if Instant::now() >= deadline {
            let logs: Vec<String> = members.iter().map(Member::diagnostics).collect();
            panic!("the group did not settle: {last:#}\n{}", logs.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The broker's `group.initial.rebalance.delay.ms` as its server.properties sets it (the last
/// line wins, as `kafka.sh start --config` appends), or Kafka's default 3000.
fn configured_initial_delay(cluster: &Cluster) -> u64 {
    let text = std::fs::read_to_string(cluster.run_dir.join("broker-1/server.properties")).expect("server.properties");
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("group.initial.rebalance.delay.ms="))
        .map_or(3000, |v| v.trim().parse().expect("a number"))
}

/// Issue 39: the rehearsal takes the members' own timeouts from the group's GroupMetadata record
/// in `__consumer_offsets` (Java sends `max.poll.interval.ms` as its rebalance timeout) and the
/// broker's `group.initial.rebalance.delay.ms`, says where each came from, and an option still
/// overrides. Two Java members with different non-default timeouts: the largest is used.
fn the_rehearsal_takes_the_members_timeouts_and_the_brokers_delay(cluster_name: &str) {
    let Some(cluster) = Cluster::shared(cluster_name) else { return };
    let topic = live::unique_name("rehearse-timeouts-t");
    let group = live::unique_name("rehearse-timeouts-g");
    cluster.create_topic(&topic, 4);
    // (session.timeout.ms, max.poll.interval.ms) of each member; Java's defaults are 45000 and 300000.
    let timeouts = [(12_000u32, 123_456u32), (11_000, 98_765)];
    let mut members: Vec<Member> = timeouts
        .iter()
        .enumerate()
        .map(|(i, (session, poll))| {
            let options = MemberOptions::new(&group, [&topic])
                .assignors(["range"])
                .client_id(&format!("rehearse-timeouts-{i}"))
                .session_timeout_ms(*session)
                .config("max.poll.interval.ms", &poll.to_string())
                .duration_s(150);
            cluster.java(&options)
        })
        .collect();
    let path = std::env::temp_dir().join(format!("{group}.json"));
    let path_s = path.to_str().unwrap().to_owned();
    let check = ["group", "upgrade-check", "--bootstrap-server", &cluster.bootstrap, "--group", &group];
    settled(&check, &members);
    let delay = configured_initial_delay(&cluster);

    let mut with_scenario = check.to_vec();
    with_scenario.extend(["--scenario", &path_s]);
    let report = kcp_json(&with_scenario);
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the scenario was written"))
        .expect("the scenario is JSON");
    let rehearsal = &report["rehearsal"];
    assert_eq!(rehearsal["file"], path_s.as_str(), "{report:#}");
    assert_eq!(rehearsal["rebalance_timeout_ms"], serde_json::json!({"value": 123_456, "source": "group_metadata"}));
    assert_eq!(rehearsal["session_timeout_ms"], serde_json::json!({"value": 12_000, "source": "group_metadata"}));
    assert_eq!(
        rehearsal["initial_rebalance_delay_ms"],
        serde_json::json!({"value": delay, "source": "broker_config"}),
        "{report:#}"
    );
    assert_eq!(rehearsal["group_metadata"]["members"], 2, "{report:#}");
    assert_eq!(rehearsal["group_metadata"]["error"], Value::Null, "{report:#}");
    assert_eq!(scenario["config"]["rebalance_timeout_ms"], 123_456, "{scenario:#}");
    assert_eq!(scenario["config"]["session_timeout_ms"], 12_000, "{scenario:#}");
    assert_eq!(scenario["config"]["initial_rebalance_delay_ms"], delay, "{scenario:#}");
    // The upgrades are a session timeout apart.
    assert_eq!(scenario["steps"][1]["wait"], 12_000, "{scenario:#}");
    let notes = rehearsal["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("98765 to 123456 ms")), "{report:#}");

    // An option overrides the group's value, and says so; text names the sources.
    let mut overridden = with_scenario.clone();
    overridden.extend(["--rebalance-timeout-ms", "77777", "--format", "text"]);
    let run = live::kcp::run(&overridden, Duration::from_secs(120));
    // 3.9 without the consumer protocol: blocked (exit 4), the rehearsal written all the same.
    let expected = if report["verdict"] == "blocked" { 4 } else { 0 };
    assert_eq!(run.status, Some(expected), "{}\n{}", run.stdout, run.stderr);
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(scenario["config"]["rebalance_timeout_ms"], 77_777, "{scenario:#}");
    assert_eq!(scenario["config"]["session_timeout_ms"], 12_000, "{scenario:#}");
    for line in [
        "rebalance_timeout_ms       77777 (given on the command line)",
        "session_timeout_ms         12000 (the members' own, from the group's metadata in __consumer_offsets)",
        &format!("initial_rebalance_delay_ms {delay} (the broker's group.initial.rebalance.delay.ms)"),
    ] {
        assert!(run.stdout.contains(line), "{line:?} in\n{}", run.stdout);
    }

    for m in &mut members {
        let _ = m.terminate(EXIT);
    }
}

#[test]
fn the_rehearsal_takes_the_members_timeouts_and_the_brokers_delay_on_kafka_4_1() {
    the_rehearsal_takes_the_members_timeouts_and_the_brokers_delay("k41");
}

#[test]
fn the_rehearsal_takes_the_members_timeouts_and_the_brokers_delay_on_kafka_3_9() {
    the_rehearsal_takes_the_members_timeouts_and_the_brokers_delay("k39");
}

#[test]
fn the_rehearsal_of_a_live_cooperative_group_converts_as_upgrade_check_predicts() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let topic = live::unique_name("rehearse-t");
    let other = live::unique_name("rehearse-other");
    let group = live::unique_name("rehearse-g");
    cluster.create_topic(&topic, 6);
    // A topic nobody in the group subscribes to: it must stay out of the scenario.
    cluster.create_topic(&other, 3);
    let mut members: Vec<Member> = (0..3)
        .map(|i| {
            let options = MemberOptions::new(&group, [&topic])
                .assignors(["cooperative-sticky"])
                .client_id(&format!("rehearse-{i}"))
                .duration_s(150);
            cluster.java(&options)
        })
        .collect();
    let path = std::env::temp_dir().join(format!("{group}.json"));
    let path_s = path.to_str().unwrap().to_owned();
    let check = ["group", "upgrade-check", "--bootstrap-server", &cluster.bootstrap, "--group", &group];
    let report = settled(&check, &members);
    assert_eq!(report["verdict"], "ready", "{report:#}");
    // Stable now: the same check, writing the rehearsal (the group is not disturbed by it).
    let mut with_scenario = check.to_vec();
    with_scenario.extend(["--scenario", &path_s, "--session-timeout-ms", "45000"]);
    let report = kcp_json(&with_scenario);
    assert_eq!(report["verdict"], "ready", "{report:#}");
    assert_eq!(report["broker_converts"], true, "{report:#}");

    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the scenario was written"))
        .expect("the scenario is JSON");
    let _ = std::fs::remove_file(&path);
    assert_eq!(scenario["topics"], serde_json::json!({ topic.clone(): 6 }), "{scenario:#}");
    let names: Vec<&str> = scenario["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(names, ["m1", "m2", "m3"], "{scenario:#}");
    for m in scenario["members"].as_array().unwrap() {
        assert_eq!(m["assignors"], serde_json::json!(["cooperative-sticky"]), "{scenario:#}");
        assert_eq!(m["topics"], serde_json::json!([topic.clone()]), "{scenario:#}");
    }
    // Kafka 4.1's defaults.
    assert_eq!(scenario["config"]["migration_policy"], "bidirectional");
    assert_eq!(scenario["config"]["server_assignor"], "uniform");
    assert_eq!(scenario["config"]["session_timeout_ms"], 45000);
    let upgrades: Vec<&str> =
        scenario["steps"].as_array().unwrap().iter().filter_map(|s| s["upgrade"].as_str()).collect();
    assert_eq!(upgrades, ["m1", "m2", "m3"], "{scenario:#}");
    assert!(scenario["description"].as_str().unwrap().contains(&group));

    // The rehearsal: converged, converted once, no partition owned twice.
    let file = std::env::temp_dir().join(format!("{group}-run.json"));
    std::fs::write(&file, serde_json::to_string(&scenario).unwrap()).unwrap();
    let simulated = kcp_json(&["simulate", file.to_str().unwrap()]);
    let _ = std::fs::remove_file(&file);
    let summary = &simulated["summary"];
    // For the record (cargo test -- --nocapture): what the rehearsal measured.
    eprintln!("rehearsal summary: {summary}");
    assert_eq!(summary["converged"], true, "{summary:#}");
    assert_eq!(summary["violations"], serde_json::json!([]), "{summary:#}");
    assert_eq!(summary["fatal"], serde_json::json!([]), "{summary:#}");
    // upgrade-check said ready (the broker converts): so does the rehearsal.
    assert_eq!(summary["group_protocol"], "consumer", "{summary:#}");
    let conversions = summary["conversions"].as_array().unwrap();
    assert_eq!(conversions.len(), 1, "{summary:#}");
    assert!(conversions[0].as_str().unwrap().contains("converted to a consumer group"), "{summary:#}");

    for m in &mut members {
        let _ = m.terminate(EXIT);
    }
}

#[test]
fn scenario_needs_exactly_one_group() {
    // A usage error before any connection: exit 2.
    let out = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(["group", "upgrade-check", "--bootstrap-server", "127.0.0.1:1", "--group", "a", "--group", "b"])
        .args(["--scenario", "/nonexistent/x.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(["group", "upgrade-check", "--bootstrap-server", "127.0.0.1:1", "--all-groups"])
        .args(["--scenario", "/nonexistent/x.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
