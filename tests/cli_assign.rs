//! `kcp assign` end to end: the JSON contract of spec/cli.md.

mod common;

use kafka_consumer_protocol::{Subscription, TopicPartitions, Version};
use serde_json::{json, Value};

fn kcp(args: &[&str], stdin: &str) -> (i32, String) {
    let out = common::run_kcp(args, Some(stdin.as_bytes()));
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn range_by_fields() {
    let group = json!({"topics": {"t1": 3, "t2": 3},
        "members": [{"member_id": "c1", "topics": ["t1", "t2"]}, {"member_id": "c2", "topics": ["t1", "t2"]}]});
    let (code, out) = kcp(&["assign", "--strategy", "range", "-"], &group.to_string());
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({"strategy": "range", "protocol": "eager",
            "assignments": {"c1": [{"topic": "t1", "partitions": [0, 1]}, {"topic": "t2", "partitions": [0, 1]}],
                            "c2": [{"topic": "t1", "partitions": [2]}, {"topic": "t2", "partitions": [2]}]},
            "pending": []})
    );
}

#[test]
fn cooperative_pending_with_hex_subscription() {
    // m2 owns all of orders at generation 2 (given as an encoded v3 subscription); m1 joins.
    let sub = Subscription::new(["orders"])
        .with_owned_partitions(vec![TopicPartitions::new("orders", [0, 1, 2, 3])])
        .with_generation_id(2);
    let group = json!({"topics": {"orders": 4},
        "members": [
            {"member_id": "m1", "group_instance_id": null, "topics": ["orders"], "owned_partitions": [],
             "generation_id": -1, "rack_id": null, "user_data": null},
            {"member_id": "m2", "subscription": hex(&sub.encode(Version::V3).unwrap())}]});
    let (code, out) = kcp(&["assign", "--strategy", "cooperative-sticky"], &group.to_string());
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["protocol"], "cooperative");
    assert_eq!(v["assignments"]["m1"], json!([]));
    assert_eq!(v["assignments"]["m2"], json!([{"topic": "orders", "partitions": [0, 1]}]));
    assert_eq!(
        v["pending"],
        json!([{"topic": "orders", "partition": 2, "from": "m2", "to": "m1"},
               {"topic": "orders", "partition": 3, "from": "m2", "to": "m1"}])
    );
    // The eager sticky assignor reads ownership from userData only (here there is none), so it
    // gives m1 half. An eager-only assignor under the eager protocol gets no hand-over (Java's
    // leader validates and withholds nothing then; every member revoked all it owned before
    // rejoining, and no follow-up round would come for a withheld partition): `pending` is
    // empty and the partitions m2's subscription still lists go to m1 at once.
    let (code, out) = kcp(&["assign", "--strategy", "sticky"], &group.to_string());
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["protocol"], "eager");
    assert_eq!(v["pending"], json!([]), "{v}");
    let ids = |m: &str| -> Vec<i64> {
        v["assignments"][m]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["partitions"].as_array().unwrap().clone())
            .map(|p| p.as_i64().unwrap())
            .collect()
    };
    let (m1, m2) = (ids("m1"), ids("m2"));
    assert_eq!(m1.len(), 2, "{v}");
    let mut all: Vec<i64> = m1.iter().chain(&m2).copied().collect();
    all.sort();
    assert_eq!(all, [0, 1, 2, 3], "every partition is assigned: {v}");
}

#[test]
fn roundrobin_and_racks_accepted() {
    let group = json!({"topics": {"orders": 2}, "partition_racks": {"orders": [["r1"], ["r2"]]},
        "members": [{"member_id": "a", "topics": ["orders"], "rack_id": "r2"},
                    {"member_id": "b", "topics": ["orders"], "rack_id": "r1"}]});
    let (code, out) = kcp(&["assign", "--strategy", "range"], &group.to_string());
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    // Rack-aware range: each member gets the partition on its rack.
    assert_eq!(
        v["assignments"],
        json!({"a": [{"topic": "orders", "partitions": [1]}], "b": [{"topic": "orders", "partitions": [0]}]})
    );
    let (code, out) = kcp(&["assign", "--strategy", "roundrobin"], &group.to_string());
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["assignments"],
        json!({"a": [{"topic": "orders", "partitions": [0]}], "b": [{"topic": "orders", "partitions": [1]}]})
    );
}

#[test]
fn errors_and_usage() {
    let (code, out) = kcp(&["assign", "--strategy", "range"], "{not json");
    assert_eq!(code, 1);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["error"]["kind"], "invalid_input");
    let dup = json!({"topics": {"t": 1}, "members": [{"member_id": "a", "topics": ["t"]}, {"member_id": "a", "topics": ["t"]}]});
    let (code, _) = kcp(&["assign", "--strategy", "range"], &dup.to_string());
    assert_eq!(code, 1);
    let bad_sub = json!({"topics": {"t": 1}, "members": [{"member_id": "a", "subscription": "0003"}]});
    let (code, out) = kcp(&["assign", "--strategy", "range"], &bad_sub.to_string());
    assert_eq!(code, 1);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["error"]["kind"], "truncated");
    let (code, _) = kcp(&["assign", "--strategy", "fastest"], "{}");
    assert_eq!(code, 2);
}
