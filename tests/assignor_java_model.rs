//! The model of Java's sticky assignor (`kcp_testkit::java_sticky_model`, the oracle of the parity
//! tests on groups without a recorded Java run) against Apache Kafka's own results
//! on every committed parity scenario (the three sets): the same assignment in every round,
//! partition for partition.

mod assignor_common;

use std::collections::BTreeSet;

use assignor_common::parity::java_sets;
use assignor_common::{hex_decode, parse_group, Sets};
use kcp_testkit::java_sticky_model::java_sticky_model;
use serde_json::Value;

/// Some member claims a partition id its topic does not have.
fn claims_a_missing_partition(
    metadata: &kafka_consumer_protocol::assignor::ClusterMetadata,
    members: &[kafka_consumer_protocol::assignor::GroupMember],
    cooperative: bool,
) -> bool {
    members.iter().any(|m| {
        let (owned, _) = kafka_consumer_protocol::internal::member_claim(&m.subscription, cooperative);
        owned.iter().any(|g| {
            metadata.topics.get(&g.topic).is_some_and(|i| g.partitions.iter().any(|&p| p < 0 || p >= i.partitions))
        })
    })
}

fn model_sets(lists: &[(String, Vec<(String, i32)>)]) -> Sets {
    lists.iter().map(|(m, l)| (m.clone(), l.iter().cloned().collect::<BTreeSet<_>>())).collect()
}

/// (scenarios, model equal to Java, model refused, differences).
fn run(dir: &str) -> (usize, usize, usize, Vec<String>) {
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    let (mut n, mut equal, mut refused, mut diffs) = (0, 0, 0, Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (metadata, members) = parse_group(&doc["input"]);
        for strategy in ["sticky", "cooperative-sticky"] {
            let jv = &doc["java"][strategy];
            if jv.get("error").is_some() {
                continue;
            }
            let cooperative = strategy == "cooperative-sticky";
            let mut input = members.clone();
            if let Some(ud) = jv.get("user_data").and_then(Value::as_object) {
                for m in &mut input {
                    if let Some(v) = ud.get(&m.member_id) {
                        m.subscription.user_data = v.as_str().map(|h| hex_decode(h).into());
                    }
                }
            }
            n += 1;
            let Some(model) = java_sticky_model(&metadata, &input, cooperative) else {
                // Only where Java keeps claims on partitions that no longer exist (KAFKA-21674),
                // or where Java's cooperative rounds do not converge within the harness's 30.
                refused += 1;
                let unconverged = cooperative && jv["converged"].as_bool() == Some(false);
                if !unconverged && !claims_a_missing_partition(&metadata, &input, cooperative) {
                    diffs.push(format!("{name} {strategy}: refused"));
                }
                continue;
            };
            let java_rounds: Vec<Sets> = if cooperative {
                jv["rounds"].as_array().unwrap().iter().map(|r| java_sets(&r["assignments"])).collect()
            } else {
                vec![java_sets(&jv["assignments"])]
            };
            let rounds: Vec<Sets> = model.iter().map(|r| model_sets(r)).collect();
            // Every round the same sets (members Java left out hold nothing).
            let same = rounds.len() == java_rounds.len()
                && rounds.iter().zip(&java_rounds).all(|(ours, java)| {
                    ours.iter().all(|(m, set)| java.get(m).cloned().unwrap_or_default() == *set)
                        && java.keys().all(|m| ours.contains_key(m))
                });
            let ours = &rounds;
            let java = &java_rounds;
            if same {
                equal += 1;
            } else {
                diffs.push(format!("{name} {strategy}:\n  model {ours:?}\n  java  {java:?}"));
            }
        }
    }
    (n, equal, refused, diffs)
}

#[test]
fn the_model_of_java_gives_javas_answers() {
    for dir in ["java-parity", "java-parity-racks", "java-parity-racks-large"] {
        let path = format!("{}/testdata/assignor/{dir}", env!("CARGO_MANIFEST_DIR"));
        let (n, equal, refused, diffs) = run(&path);
        eprintln!("{dir}: {equal} of {n} equal to Java, {refused} refused");
        for d in diffs.iter().take(6) {
            eprintln!("{d}");
        }
        assert!(diffs.is_empty(), "{dir}: {} differences", diffs.len());
    }
}
