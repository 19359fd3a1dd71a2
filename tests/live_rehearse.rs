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
    // Settled: every member assigned and the broker reporting the group Stable with 3 members.
    let deadline = Instant::now() + SETTLE;
    let mut last = Value::Null;
    let report = loop {
        if members.iter().all(|m| m.events().iter().any(|e| e.event == "assigned")) {
            let report = kcp_json(&check);
            let stable = report["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == "rebalance_state" && c["ok"] == Value::Bool(true));
            let three =
                report["checks"].as_array().unwrap().iter().any(|c| {
                    c["name"] == "group_size" && c["evidence"].as_str().unwrap_or("").starts_with("3 members")
                });
            if stable && three {
                break report;
            }
            last = report;
        }
        if Instant::now() >= deadline {
            let logs: Vec<String> = members.iter().map(Member::diagnostics).collect();
            panic!("the group did not settle: {last:#}\n{}", logs.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(500));
    };
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
