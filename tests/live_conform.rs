//! `kcp conform --bootstrap-server --group` on live groups (issue 37): a group of Java consumers
//! (cooperative-sticky) passes every rule a description can judge, on Kafka 3.9.1 and 4.1.1, and
//! a hand-driven member with a misspelt protocol name and a leader's assignment that leaves
//! partitions unassigned fails `protocol.names` and `leader.assignment` (exit 4). A KIP-848 group
//! of Java members (`group.protocol=consumer`, Kafka 4.1.1) is judged from ConsumerGroupDescribe:
//! it passes, and fails `leader.assignment` when told the topic has one partition more.
//!
//! Clusters (tools/live/kafka.sh; CI starts them): `k39` (Kafka 3.9.1) and `k41` (4.1.1), shared.

mod live;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, SendOptions, Target};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{GroupId, JoinGroupRequest, SyncGroupRequest};
use kafka_protocol::protocol::StrBytes;
use live::{Cluster, MemberOptions};
use serde_json::Value;

/// `kcp conform --bootstrap-server B --group G`: exit status and JSON report.
fn conform(cluster: &Cluster, group: &str) -> (i32, Value) {
    conform_with(cluster, group, &[])
}

/// `kcp conform --bootstrap-server B --group G EXTRA...`: exit status and JSON report.
fn conform_with(cluster: &Cluster, group: &str, extra: &[&str]) -> (i32, Value) {
    // kcp's own deadline bounds the run (--timeout-ms).
    let output = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(["conform", "--bootstrap-server", &cluster.bootstrap, "--group", group, "--timeout-ms", "30000"])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("kcp runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}\n{}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code().unwrap_or(-1), value)
}

fn group_rule<'a>(report: &'a Value, rule: &str) -> &'a Value {
    report["groups"][0]["rules"].as_array().unwrap().iter().find(|r| r["rule"] == rule).unwrap()
}

fn member_rules<'a>(report: &'a Value, rule: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    report["groups"][0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(move |m| m["rules"].as_array().unwrap().iter().filter(move |r| r["rule"] == rule))
}

fn java_group_passes(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = live::unique_name("conform-t");
    let group = live::unique_name("conform-g");
    cluster.create_topic(&topic, 6);
    let options =
        |id: &str| MemberOptions::new(&group, [&topic]).assignors(["cooperative-sticky"]).client_id(id).duration_s(120);
    let mut members = [cluster.java(&options("conform-j1")), cluster.java(&options("conform-j2"))];
    // Wait for the group to settle: both members own three partitions.
    for m in members.iter_mut() {
        m.wait_for("three partitions", Duration::from_secs(90), |events| {
            events.iter().rev().find_map(|e| e.owned.as_ref()).is_some_and(|o| o.len() == 3)
        })
        .unwrap();
    }
    let started = Instant::now();
    let report = loop {
        let (code, report) = conform(&cluster, &group);
        let settled = members.iter().all(|m| m.owned().len() == 3)
            && group_rule(&report, "leader.assignment")["result"] == "pass";
        if settled {
            assert_eq!(code, 0, "{report:#}");
            break report;
        }
        assert!(started.elapsed() < Duration::from_secs(90), "never settled: {report:#}");
        std::thread::sleep(Duration::from_millis(500));
    };
    let leader = group_rule(&report, "leader.assignment");
    let evidence = leader["evidence"].as_str().unwrap();
    assert!(evidence.contains("every subscribed partition given") && evidence.contains("balanced"), "{leader}");
    assert_eq!(group_rule(&report, "protocol.names")["result"], "pass");
    let members_json = report["groups"][0]["members"].as_array().unwrap();
    assert_eq!(members_json.len(), 2);
    for rule in ["payload.strict", "protocol.names"] {
        assert!(member_rules(&report, rule).all(|r| r["result"] == "pass"), "{rule}: {report:#}");
    }
    // What needs the sequence of requests is unknown, never a guess.
    for rule in ["cooperative.owned", "cooperative.generation", "cooperative.revoke", "rack", "timeouts"] {
        assert!(member_rules(&report, rule).all(|r| r["result"] == "unknown"), "{rule}: {report:#}");
    }
    for m in members.iter_mut() {
        m.terminate(Duration::from_secs(30)).unwrap();
    }
}

#[test]
fn a_java_cooperative_group_passes_on_3_9() {
    java_group_passes("k39");
}

#[test]
fn a_java_cooperative_group_passes_on_4_1() {
    java_group_passes("k41");
}

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_owned())
}

/// A member driven by hand offering `protocol`, joined alone (so leader), which gives itself
/// `assigned` of `topic` in SyncGroup and then stays (no heartbeats within the session timeout).
async fn hand_member(client: &Client, group: &str, topic: &str, protocol: &str, assigned: Vec<i32>) {
    let target = Target::Coordinator(group.to_owned());
    let metadata = Subscription::new([topic]).encode(Version::V1).unwrap();
    let build = |member_id: String| {
        let metadata = metadata.clone();
        move |version: i16| {
            let mut request = JoinGroupRequest::default()
                .with_group_id(GroupId(s(group)))
                .with_session_timeout_ms(60_000)
                .with_member_id(s(&member_id))
                .with_protocol_type(s("consumer"))
                .with_protocols(vec![JoinGroupRequestProtocol::default()
                    .with_name(s(protocol))
                    .with_metadata(metadata.clone().into())]);
            if version >= 1 {
                request.rebalance_timeout_ms = 60_000;
            }
            request
        }
    };
    let options = SendOptions::new(Deadline::after(Duration::from_secs(60))).request_timeout(Duration::from_secs(55));
    let first = client.send(&target, options, build(String::new())).await.unwrap().response;
    // MEMBER_ID_REQUIRED (79, JoinGroup v4+): join again with the id given.
    let joined = if first.error_code == 79 {
        client.send(&target, options, build(first.member_id.to_string())).await.unwrap().response
    } else {
        first
    };
    assert_eq!(joined.error_code, 0, "JoinGroup of {group}");
    let member_id = joined.member_id.to_string();
    let assignment = Assignment::new(vec![TopicPartitions::new(topic, assigned)]).encode(Version::V1).unwrap();
    let synced = client
        .send(&target, options, |version| {
            let mut request = SyncGroupRequest::default()
                .with_group_id(GroupId(s(group)))
                .with_generation_id(joined.generation_id)
                .with_member_id(s(&member_id))
                .with_assignments(vec![SyncGroupRequestAssignment::default()
                    .with_member_id(s(&member_id))
                    .with_assignment(assignment.clone().into())]);
            if version >= 5 {
                request.protocol_type = Some(s("consumer"));
                request.protocol_name = Some(s(protocol));
            }
            request
        })
        .await
        .unwrap();
    assert_eq!(synced.response.error_code, 0, "SyncGroup of {group}");
}

#[test]
fn a_misnamed_protocol_and_an_incomplete_assignment_fail() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("conform-bad-t");
    let group = live::unique_name("conform-bad-g");
    cluster.create_topic(&topic, 4);
    let client = Client::new(ClientConfig::new([cluster.bootstrap.as_str()]).unwrap()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // kafkajs' name for roundrobin; t-2 and t-3 given to nobody.
    rt.block_on(hand_member(&client, &group, &topic, "RoundRobinAssigner", vec![0, 1]));
    let (code, report) = conform(&cluster, &group);
    assert_eq!(code, 4, "{report:#}");
    let leader = group_rule(&report, "leader.assignment");
    assert_eq!(leader["result"], "fail", "{leader}");
    assert!(leader["evidence"].as_str().unwrap().contains(&format!("{topic}-2, subscribed by")), "{leader}");
    let names: Vec<&Value> = member_rules(&report, "protocol.names").collect();
    assert_eq!(names.len(), 1);
    assert_eq!(names[0]["result"], "fail", "{report:#}");
    assert!(names[0]["evidence"].as_str().unwrap().contains("\"roundrobin\""), "{report:#}");
}

/// A KIP-848 group of two Java 4.1.1 members (`group.protocol=consumer`): judged from
/// ConsumerGroupDescribe (it was `not_found` before), every check a description allows passes
/// once the group is Stable; told the topic has a partition more than it has (`--partitions`),
/// the coordinator's assignment leaves it to nobody and `leader.assignment` fails (exit 4).
#[test]
fn a_kip848_group_is_judged_from_consumer_group_describe() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let topic = live::unique_name("conform-848-t");
    let group = live::unique_name("conform-848-g");
    cluster.create_topic(&topic, 4);
    let options =
        |id: &str| MemberOptions::new(&group, [&topic]).group_protocol("consumer").client_id(id).duration_s(60);
    let mut a = cluster.java(&options("conform-848-a"));
    let mut b = cluster.java(&options("conform-848-b"));
    live::wait_settled(
        &mut [&mut a, &mut b],
        &live::partitions(&topic, 0..4),
        Duration::from_secs(40),
        Duration::from_secs(1),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let report = loop {
        let (code, report) = conform(&cluster, &group);
        if code == 0 && member_rules(&report, "consumer.epoch").all(|r| r["result"] == "pass") {
            break report;
        }
        // Reconciling for a moment after the members settle is unknown, never a failure.
        assert_ne!(code, 4, "{report:#}");
        assert!(started.elapsed() < Duration::from_secs(20), "never converged: {report:#}");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(report["groups"][0]["group_protocol"], "consumer", "{report:#}");
    let names = group_rule(&report, "protocol.names");
    assert_eq!(names["result"], "pass", "{names}");
    assert!(names["evidence"].as_str().unwrap().contains("\"uniform\""), "{names}");
    let leader = group_rule(&report, "leader.assignment");
    assert_eq!(leader["result"], "pass", "{leader}");
    let evidence = leader["evidence"].as_str().unwrap();
    assert!(
        evidence.contains("4 partitions owned, none by two members; 4 targeted, none twice")
            && evidence.contains("every subscribed partition targeted"),
        "{leader}"
    );
    assert_eq!(report["groups"][0]["members"].as_array().unwrap().len(), 2, "{report:#}");
    for rule in ["consumer.assignment", "consumer.epoch"] {
        assert!(member_rules(&report, rule).all(|r| r["result"] == "pass"), "{rule}: {report:#}");
    }
    assert!(member_rules(&report, "payload.strict").all(|r| r["result"] == "unknown"), "{report:#}");
    // One partition more than the topic has: the coordinator targeted it at nobody.
    let (code, report) = conform_with(&cluster, &group, &["--partitions", &format!("{topic}=5")]);
    assert_eq!(code, 4, "{report:#}");
    let leader = group_rule(&report, "leader.assignment");
    assert!(leader["evidence"].as_str().unwrap().contains(&format!("targeted at nobody: {topic}-4")), "{leader}");
    for m in [&mut a, &mut b] {
        m.terminate(Duration::from_secs(20)).unwrap();
    }
}
