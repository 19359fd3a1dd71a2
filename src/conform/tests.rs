//! The checker on the committed captures (Java and librdkafka: no false failure) and on crafted
//! exchanges that break each rule.

use std::path::PathBuf;

use bytes::Bytes;

use super::*;
use crate::group_api::{JoinGroupProtocol, SyncGroupAssignment};
use crate::pcap::{GroupReader, ReaderOptions};
use crate::{Assignment, AssignmentBuf, Subscription, SubscriptionBuf, TopicPartitions, Version};

fn capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/pcap").join(name)
}

fn check_messages(bytes: &[u8], skip: usize) -> Report {
    let mut reader = GroupReader::new(bytes, ReaderOptions::default()).expect("a capture");
    let mut checker = Checker::new();
    for m in (&mut reader).skip(skip) {
        checker.observe(&m);
    }
    checker.finish()
}

fn results<'a>(report: &'a Report, rule: &str) -> Vec<&'a RuleResult> {
    report
        .groups
        .iter()
        .flat_map(|g| g.rules.iter().chain(g.members.iter().flat_map(|m| &m.rules)))
        .filter(|r| r.rule == rule)
        .collect()
}

fn count(report: &Report, rule: &str, outcome: Outcome) -> usize {
    results(report, rule).iter().filter(|r| r.result == outcome).count()
}

#[test]
fn java_and_librdkafka_captures_fail_no_rule() {
    for name in ["java-cooperative-sticky.pcap", "mixed-java-rdkafka.pcap", "rdkafka-range.pcap"] {
        let report = check_messages(&std::fs::read(capture(name)).unwrap(), 0);
        assert!(!report.has_failure(), "{name}: {report:#?}");
        assert!(!report.groups.is_empty(), "{name}");
        assert!(count(&report, "payload.strict", Outcome::Pass) > 0, "{name}");
        assert!(count(&report, "leader.assignment", Outcome::Pass) > 0, "{name}");
    }
    let java = check_messages(&std::fs::read(capture("java-cooperative-sticky.pcap")).unwrap(), 0);
    assert!(count(&java, "cooperative.owned", Outcome::Pass) > 0);
    assert!(count(&java, "cooperative.generation", Outcome::Pass) > 0);
    let range = check_messages(&std::fs::read(capture("rdkafka-range.pcap")).unwrap(), 0);
    assert!(count(&range, "eager.claims", Outcome::Pass) > 0);
    assert!(results(&range, "leader.assignment").iter().any(|r| r.evidence.contains("equal to Java's answer")));
}

/// librdkafka's cooperative-sticky leader puts sticky userData in the assignments it sends
/// (Java's never does): Kafka 4's classic-to-consumer conversion refuses such a group ("an
/// unsupported custom assignor is in use", KAFKA-18134). That is the only rule it fails.
#[test]
fn librdkafka_cooperative_leader_writes_assignment_user_data() {
    let report = check_messages(&std::fs::read(capture("rdkafka-cooperative-sticky.pcap")).unwrap(), 0);
    for rule in RULES {
        let failed: Vec<_> = results(&report, rule).into_iter().filter(|r| r.result == Outcome::Fail).collect();
        if rule == "userdata" {
            assert!(!failed.is_empty());
            assert!(failed.iter().all(|r| r.evidence.contains("carries userData (a KIP-848 upgrade blocker)")));
        } else {
            assert!(failed.is_empty(), "{rule}: {failed:#?}");
        }
    }
}

#[test]
fn a_capture_missing_its_start_is_unknown_not_failed() {
    let bytes = std::fs::read(capture("java-cooperative-sticky.pcap")).unwrap();
    let total = check_messages(&bytes, 0).groups.iter().map(|g| g.members.len()).sum::<usize>();
    assert!(total > 0);
    for skip in 1..12 {
        let report = check_messages(&bytes, skip);
        assert!(!report.has_failure(), "skip {skip}: {report:#?}");
    }
    // Cut short in the middle of a packet.
    for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() * 3 / 4] {
        let report = check_messages(&bytes[..cut], 0);
        assert!(!report.has_failure(), "cut {cut}: {report:#?}");
    }
    let unknown: usize = (1..12)
        .map(|skip| {
            let late = check_messages(&bytes, skip);
            RULES.iter().map(|r| count(&late, r, Outcome::Unknown)).sum::<usize>()
        })
        .sum();
    assert!(unknown > 0);
}

fn seen(t: u64) -> Seen {
    Seen { time: std::time::Duration::from_secs(t), client_id: Some("test-client".into()) }
}

fn sub(s: Subscription) -> Payload {
    Payload::Subscription(SubscriptionBuf::decode(Bytes::from(s.encode(Version::V3).unwrap())).unwrap())
}

fn asg(parts: &[i32]) -> Payload {
    let a = Assignment::new(vec![TopicPartitions::new("t", parts.to_vec())]);
    Payload::Assignment(AssignmentBuf::decode(Bytes::from(a.encode(Version::V3).unwrap())).unwrap())
}

fn join(member: &str, protocol: &str, metadata: Payload) -> JoinGroupRequest<Payload> {
    JoinGroupRequest {
        group_id: "g".into(),
        session_timeout_ms: 45_000,
        rebalance_timeout_ms: 300_000,
        member_id: member.into(),
        group_instance_id: None,
        protocol_type: "consumer".into(),
        protocols: vec![JoinGroupProtocol { name: protocol.into(), metadata }],
        reason: None,
    }
}

fn member_rule(report: &Report, member: &str, rule: &str) -> RuleResult {
    report.groups[0]
        .members
        .iter()
        .find(|m| m.member_id == member)
        .unwrap()
        .rules
        .iter()
        .find(|r| r.rule == rule)
        .unwrap()
        .clone()
}

fn group_rule(report: &Report, rule: &str) -> RuleResult {
    report.groups[0].rules.iter().find(|r| r.rule == rule).unwrap().clone()
}

/// m1 synced generation 3 with t-0,t-1, then rejoins claiming `claims` at `generation`.
fn cooperative_rejoin(claims: &[i32], generation: i32) -> Report {
    let mut c = Checker::new();
    c.sync_response(&seen(1), "g", "m1", 3, ErrorCode::NONE, &asg(&[0, 1]));
    let s = Subscription::new(["t"])
        .with_owned_partitions(vec![TopicPartitions::new("t", claims.to_vec())])
        .with_generation_id(generation);
    c.join_request(&seen(2), &join("m1", "cooperative-sticky", sub(s)));
    c.finish()
}

#[test]
fn cooperative_claims_and_generation() {
    let good = cooperative_rejoin(&[0, 1], 3);
    assert_eq!(member_rule(&good, "m1", "cooperative.owned").result, Outcome::Pass);
    assert_eq!(member_rule(&good, "m1", "cooperative.generation").result, Outcome::Pass);
    let revoked = cooperative_rejoin(&[1], 3);
    assert_eq!(member_rule(&revoked, "m1", "cooperative.owned").result, Outcome::Pass);
    let claims_more = cooperative_rejoin(&[0, 1, 2], 3);
    let r = member_rule(&claims_more, "m1", "cooperative.owned");
    assert_eq!(r.result, Outcome::Fail, "{r:?}");
    assert!(r.evidence.contains("t-2") && r.evidence.contains("test-client"), "{}", r.evidence);
    assert!(!r.consequence.is_empty());
    let stale = cooperative_rejoin(&[0, 1], 2);
    assert_eq!(member_rule(&stale, "m1", "cooperative.generation").result, Outcome::Fail);
    // Without its last sync, claims cannot be judged.
    let mut c = Checker::new();
    let s = Subscription::new(["t"]).with_owned_partitions(vec![TopicPartitions::new("t", [0])]).with_generation_id(3);
    c.join_request(&seen(2), &join("m1", "cooperative-sticky", sub(s)));
    let unknown = c.finish();
    assert_eq!(member_rule(&unknown, "m1", "cooperative.owned").result, Outcome::Unknown);
    assert_eq!(member_rule(&unknown, "m1", "cooperative.generation").result, Outcome::Unknown);
}

#[test]
fn an_eager_member_claiming_fails() {
    let mut c = Checker::new();
    let s = Subscription::new(["t"]).with_owned_partitions(vec![TopicPartitions::new("t", [0])]);
    c.join_request(&seen(1), &join("m1", "range", sub(s)));
    c.join_request(&seen(2), &join("m2", "range", sub(Subscription::new(["t"]))));
    let report = c.finish();
    assert_eq!(member_rule(&report, "m1", "eager.claims").result, Outcome::Fail);
    assert_eq!(member_rule(&report, "m2", "eager.claims").result, Outcome::Pass);
}

#[test]
fn kafka_go_v1_without_owned_partitions_fails_payload_strict() {
    // testdata/vectors/kafka-go-0.4.51/consumergroup-subscription-v1-no-owned.json
    let bytes = [0x00, 0x01, 0, 0, 0, 2, 0, 3, b'f', b'o', b'o', 0, 3, b'b', b'a', b'r', 0xff, 0xff, 0xff, 0xff];
    let r = judge_subscription(&bytes);
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("lenient peer"), "{}", r.evidence);
    assert_eq!(judge_subscription(&Subscription::new(["foo"]).encode(Version::V1).unwrap()).result, Outcome::Pass);
    // In an exchange: the member's payload.strict fails.
    let mut c = Checker::new();
    let invalid = Payload::Invalid {
        bytes: Bytes::copy_from_slice(&bytes),
        error: SubscriptionView::decode(&bytes).unwrap_err(),
    };
    c.join_request(&seen(1), &join("m1", "range", invalid));
    assert_eq!(member_rule(&c.finish(), "m1", "payload.strict").result, Outcome::Fail);
}

#[test]
fn kafkajs_protocol_name_fails() {
    let mut c = Checker::new();
    c.join_request(&seen(1), &join("m1", "RoundRobinAssigner", sub(Subscription::new(["t"]))));
    c.join_request(&seen(1), &join("m2", "roundrobin", sub(Subscription::new(["t"]))));
    c.join_request(&seen(1), &join("m3", "my-custom", sub(Subscription::new(["t"]))));
    let report = c.finish();
    let r = member_rule(&report, "m1", "protocol.names");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("\"roundrobin\""));
    assert_eq!(member_rule(&report, "m2", "protocol.names").result, Outcome::Pass);
    assert_eq!(member_rule(&report, "m3", "protocol.names").result, Outcome::Unknown);
}

fn leader_round(protocol: &str, subs: &[(&str, Subscription)], assignments: &[(&str, &[i32])]) -> Report {
    let mut c = Checker::new();
    for (id, s) in subs {
        c.join_request(&seen(1), &join(id, protocol, sub(s.clone())));
    }
    let members: Vec<JoinGroupMember<Payload>> = subs
        .iter()
        .map(|(id, s)| JoinGroupMember { member_id: (*id).into(), group_instance_id: None, metadata: sub(s.clone()) })
        .collect();
    c.join_response(&seen(2), "g", "m1", ErrorCode::NONE, 5, Some(protocol), "m1", None, &members);
    c.sync_request(
        &seen(3),
        &SyncGroupRequest {
            group_id: "g".into(),
            generation_id: 5,
            member_id: "m1".into(),
            group_instance_id: None,
            protocol_type: Some("consumer".into()),
            protocol_name: Some(protocol.into()),
            assignments: assignments
                .iter()
                .map(|(id, p)| SyncGroupAssignment { member_id: (*id).into(), assignment: asg(p) })
                .collect(),
        },
    );
    c.finish()
}

#[test]
fn leader_assignment_rules() {
    let two = [("m1", Subscription::new(["t"])), ("m2", Subscription::new(["t"]))];
    // Java's range: m1 gets 0,1 and m2 gets 2,3 of four partitions.
    let good = leader_round("range", &two, &[("m1", &[0, 1]), ("m2", &[2, 3])]);
    assert_eq!(group_rule(&good, "leader.assignment").result, Outcome::Pass);
    assert_eq!(group_rule(&good, "protocol.names").result, Outcome::Pass);
    let twice = leader_round("range", &two, &[("m1", &[0, 1]), ("m2", &[1, 2, 3])]);
    let r = group_rule(&twice, "leader.assignment");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("t-1 given to both m1 and m2"), "{}", r.evidence);
    let not_java = leader_round("range", &two, &[("m1", &[0, 2]), ("m2", &[1, 3])]);
    assert!(group_rule(&not_java, "leader.assignment").evidence.contains("Java's range gives"));
    let other = [("m1", Subscription::new(["t"])), ("m2", Subscription::new(["u"]))];
    let r = group_rule(&leader_round("roundrobin", &other, &[("m1", &[0]), ("m2", &[1])]), "leader.assignment");
    assert!(r.evidence.contains("does not subscribe"), "{}", r.evidence);
    // Cooperative: m1 still owns t-0, which the leader gives to m2 in the same round.
    let owned = [
        (
            "m1",
            Subscription::new(["t"])
                .with_owned_partitions(vec![TopicPartitions::new("t", [0, 1])])
                .with_generation_id(4),
        ),
        ("m2", Subscription::new(["t"]).with_generation_id(4)),
    ];
    let r = group_rule(&leader_round("cooperative-sticky", &owned, &[("m1", &[1]), ("m2", &[0])]), "leader.assignment");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("still owns"), "{}", r.evidence);
    let ok = leader_round("cooperative-sticky", &owned, &[("m1", &[1]), ("m2", &[])]);
    assert_eq!(group_rule(&ok, "leader.assignment").result, Outcome::Pass);
}

#[test]
fn statics_rack_and_timeouts() {
    let mut c = Checker::new();
    let mut j = join("m1", "range", sub(Subscription::new(["t"]).with_rack_id("r1")));
    j.group_instance_id = Some("i1".into());
    c.join_request(&seen(1), &j);
    let mut j2 = join("m1", "range", sub(Subscription::new(["t"]).with_rack_id("r2")));
    j2.group_instance_id = Some("i2".into());
    c.join_request(&seen(2), &j2);
    c.join_response(
        &seen(3),
        "g",
        "m1",
        ErrorCode::INVALID_SESSION_TIMEOUT,
        -1,
        None,
        "",
        Some((1, &[], &seen(2))),
        &[],
    );
    let report = c.finish();
    assert_eq!(member_rule(&report, "m1", "static.instance").result, Outcome::Fail);
    assert_eq!(member_rule(&report, "m1", "rack").result, Outcome::Fail);
    assert_eq!(member_rule(&report, "m1", "timeouts").result, Outcome::Fail);
}

#[test]
fn sticky_user_data_layouts() {
    let mut c = Checker::new();
    let java = crate::CooperativeStickyUserData { generation: 3 }.encode();
    c.join_request(&seen(1), &join("m1", "cooperative-sticky", sub(Subscription::new(["t"]).with_user_data(java))));
    c.join_request(
        &seen(1),
        &join("m2", "cooperative-sticky", sub(Subscription::new(["t"]).with_user_data(Bytes::from_static(&[1, 2, 3])))),
    );
    let report = c.finish();
    assert_eq!(member_rule(&report, "m1", "userdata").result, Outcome::Pass);
    assert_eq!(member_rule(&report, "m2", "userdata").result, Outcome::Fail);
}
