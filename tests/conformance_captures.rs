//! Real clients' consumer groups (issue 37's "proof on real clients"): the captures under
//! `testdata/conformance/captures/` (made by `tools/conformance/live.sh` on a real broker) are
//! judged again by `kcp conform` and must give the committed reports, rule for rule, and exactly
//! the failures docs/conformance.md lists (each checked by hand against the client's source).
//! Offline: no client toolchain or broker is needed.
#![cfg(feature = "cli")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/conformance/captures")
}

/// The rules each capture fails (in any member or the group), as docs/conformance.md explains.
fn expected_failures(capture: &str) -> BTreeSet<&'static str> {
    let names: &[&'static str] = match capture {
        // segmentio/kafka-go v0.4.51 writes a v1 header over a v0 body (kafka-go#1156).
        "kafka-go-range" => &["payload.strict"],
        // kafkajs 2.2.4 names its round robin "RoundRobinAssigner" (kafkajs#463).
        "kafkajs-roundrobin" => &["protocol.names"],
        // librdkafka's cooperative-sticky leader puts sticky userData in its assignments (KAFKA-18134).
        "rdkafka-cooperative-sticky" => &["userdata"],
        _ => &[],
    };
    names.iter().copied().collect()
}

fn kcp(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kcp")).args(args).output().expect("kcp runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// (group, client id, rule) -> result, over the group's and the members' rules.
fn results(report: &Value) -> BTreeMap<(String, String, String), String> {
    let mut out = BTreeMap::new();
    for g in report["groups"].as_array().unwrap() {
        let group = g["group_id"].as_str().unwrap().to_owned();
        for r in g["rules"].as_array().unwrap() {
            out.insert((group.clone(), String::new(), r["rule"].as_str().unwrap().to_owned()), r["result"].to_string());
        }
        for m in g["members"].as_array().unwrap() {
            let member = format!("{}/{}", m["client_id"].as_str().unwrap_or("?"), m["member_id"].as_str().unwrap());
            for r in m["rules"].as_array().unwrap() {
                out.insert(
                    (group.clone(), member.clone(), r["rule"].as_str().unwrap().to_owned()),
                    r["result"].to_string(),
                );
            }
        }
    }
    out
}

fn captures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".pcap").map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[test]
fn real_clients_give_the_committed_reports_and_only_the_known_failures() {
    let names = captures();
    for client in ["java-3.9.1", "java-4.1.1", "rdkafka", "kafka-python", "franz-go", "sarama", "kafka-go", "kafkajs"] {
        assert!(names.iter().any(|n| n.starts_with(client)), "no capture of {client}: {names:?}");
    }
    for name in &names {
        let pcap = dir().join(format!("{name}.pcap"));
        assert!(std::fs::metadata(&pcap).unwrap().len() < 250_000, "{name}: keep captures small");
        let (code, stdout) = kcp(&["conform", "--pcap", pcap.to_str().unwrap()]);
        let now: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{name}: {e}: {stdout}"));
        let committed: Value =
            serde_json::from_str(&std::fs::read_to_string(dir().join(format!("{name}.report.json"))).unwrap()).unwrap();
        // Every rule of the committed report gives the same result today (rules added later
        // may appear beside them).
        let now_results = results(&now);
        for (key, result) in results(&committed) {
            assert_eq!(now_results.get(&key), Some(&result), "{name}: {key:?}");
        }
        let failed: BTreeSet<&str> = now_results
            .iter()
            .filter(|(_, r)| r.as_str() == "\"fail\"")
            .map(|((_, _, rule), _)| rule.as_str())
            .collect();
        assert_eq!(failed, expected_failures(name), "{name}");
        assert_eq!(code, if failed.is_empty() { 0 } else { 4 }, "{name}");
        // Two members, and a rebalance for join, scale-out and scale-in (three generations at least).
        let groups = now["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{name}");
        assert!(groups[0]["members"].as_array().unwrap().len() >= 2, "{name}");
        let (_, messages) = kcp(&["pcap", pcap.to_str().unwrap()]);
        let generations: BTreeSet<i64> = messages
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|m| m["api"] == "SyncGroup" && m["direction"] == "response")
            .filter_map(|m| m["generation_id"].as_i64())
            .collect();
        assert!(generations.len() >= 3, "{name}: generations {generations:?}");
    }
}

#[test]
fn the_known_defects_are_named_in_the_evidence() {
    let evidence = |name: &str, rule: &str| -> String {
        let pcap = dir().join(format!("{name}.pcap"));
        let (_, stdout) = kcp(&["conform", "--pcap", pcap.to_str().unwrap()]);
        let report: Value = serde_json::from_str(&stdout).unwrap();
        report["groups"][0]["members"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["rules"].as_array().unwrap().iter())
            .filter(|r| r["rule"] == rule && r["result"] == "fail")
            .map(|r| r["evidence"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let kafka_go = evidence("kafka-go-range", "payload.strict");
    assert!(kafka_go.contains("owned_partitions") && kafka_go.contains("lenient"), "{kafka_go}");
    let kafkajs = evidence("kafkajs-roundrobin", "protocol.names");
    assert!(kafkajs.contains("\"RoundRobinAssigner\"") && kafkajs.contains("\"roundrobin\""), "{kafkajs}");
}
