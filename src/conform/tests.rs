//! The checker on the committed captures (Java and librdkafka: no false failure) and on crafted
//! exchanges that break each rule.

use std::net::SocketAddr;
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
    if skip == 0 {
        return Checker::new().check_capture(&mut reader);
    }
    // As `check_capture`, without the first `skip` messages (and the counts learned by then).
    let mut checker = Checker::new();
    let mut index = 0;
    while let Some(m) = reader.next() {
        index += 1;
        if index > skip {
            for (topic, &n) in reader.partition_counts() {
                checker.learn_partition_count(topic, n);
            }
            checker.observe(&m);
        }
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
    leader_round_of(Checker::new(), protocol, subs, assignments)
}

/// The round with topic `t`'s partition count known.
fn counted_round(
    partitions: i32,
    protocol: &str,
    subs: &[(&str, Subscription)],
    assignments: &[(&str, &[i32])],
) -> RuleResult {
    let checker = Checker::with_metadata(ClusterMetadata::from_counts([("t", partitions)]));
    group_rule(&leader_round_of(checker, protocol, subs, assignments), "leader.assignment")
}

fn leader_round_of(
    mut c: Checker,
    protocol: &str,
    subs: &[(&str, Subscription)],
    assignments: &[(&str, &[i32])],
) -> Report {
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
    let good = counted_round(4, "range", &two, &[("m1", &[0, 1]), ("m2", &[2, 3])]);
    assert_eq!(good.result, Outcome::Pass, "{}", good.evidence);
    assert!(good.evidence.contains("equal to Java's answer"), "{}", good.evidence);
    // Without the partition counts, completeness and Java's answer are not judged.
    let uncounted = leader_round("range", &two, &[("m1", &[0, 1]), ("m2", &[2, 3])]);
    let r = group_rule(&uncounted, "leader.assignment");
    assert_eq!(r.result, Outcome::Unknown);
    assert!(r.evidence.contains("need the partition counts of t"), "{}", r.evidence);
    assert_eq!(group_rule(&uncounted, "protocol.names").result, Outcome::Pass);
    let missing = counted_round(5, "range", &two, &[("m1", &[0, 1]), ("m2", &[2, 3])]);
    assert_eq!(missing.result, Outcome::Fail);
    assert!(missing.evidence.contains("t-4, subscribed by m1,m2, given to nobody"), "{}", missing.evidence);
    // A whole topic given to nobody: the leader's metadata may not have known it (Java skips such
    // a topic and rejoins): unknown, not a failure.
    let skipped = counted_round(4, "range", &two, &[("m1", &[]), ("m2", &[])]);
    assert_eq!(skipped.result, Outcome::Unknown, "{}", skipped.evidence);
    assert!(skipped.evidence.contains("no partition of t was given"), "{}", skipped.evidence);
    let twice = leader_round("range", &two, &[("m1", &[0, 1]), ("m2", &[1, 2, 3])]);
    let r = group_rule(&twice, "leader.assignment");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("t-1 given to both m1 and m2"), "{}", r.evidence);
    let not_java = counted_round(4, "range", &two, &[("m1", &[0, 2]), ("m2", &[1, 3])]);
    assert_eq!(not_java.result, Outcome::Fail);
    assert!(not_java.evidence.contains("Java's range gives"));
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
    // m1 revokes t-0 (given to nobody this round): complete and balanced once it is placed.
    let ok = counted_round(2, "cooperative-sticky", &owned, &[("m1", &[1]), ("m2", &[])]);
    assert_eq!(ok.result, Outcome::Pass, "{}", ok.evidence);
    assert!(ok.evidence.contains("(1 being revoked)") && ok.evidence.contains("balanced"), "{}", ok.evidence);
}

fn owning(generation: i32, parts: &[i32]) -> Subscription {
    Subscription::new(["t"])
        .with_owned_partitions(vec![TopicPartitions::new("t", parts.to_vec())])
        .with_generation_id(generation)
}

fn sticky_owning(generation: i32, parts: &[i32]) -> Subscription {
    let data = StickyUserData {
        previous_assignment: vec![TopicPartitions::new("t", parts.to_vec())],
        generation: Some(generation),
    };
    Subscription::new(["t"]).with_user_data(Bytes::from(data.encode().unwrap()))
}

/// Sticky and cooperative-sticky: Java's answers are not unique, so properties are judged.
#[test]
fn sticky_assignments_are_judged_by_properties() {
    let three = [("m1", Subscription::new(["t"])), ("m2", Subscription::new(["t"])), ("m3", Subscription::new(["t"]))];
    let even = counted_round(6, "sticky", &three, &[("m1", &[0, 1]), ("m2", &[2, 3]), ("m3", &[4, 5])]);
    assert_eq!(even.result, Outcome::Pass, "{}", even.evidence);
    // Any balanced answer passes, not only ours.
    let other = counted_round(7, "sticky", &three, &[("m1", &[6, 1]), ("m2", &[2, 3, 0]), ("m3", &[4, 5])]);
    assert_eq!(other.result, Outcome::Pass, "{}", other.evidence);
    let uneven = counted_round(6, "sticky", &three, &[("m1", &[0, 1, 2]), ("m2", &[3, 4]), ("m3", &[5])]);
    assert_eq!(uneven.result, Outcome::Fail);
    assert!(uneven.evidence.contains("unbalanced") && uneven.evidence.contains("m1:3"), "{}", uneven.evidence);
    // Unequal subscriptions: balance is not a property Java keeps, so it is not judged.
    let unequal = [("m1", Subscription::new(["t", "u"])), ("m2", Subscription::new(["t"]))];
    let checker = Checker::with_metadata(ClusterMetadata::from_counts([("t", 2), ("u", 0)]));
    let r =
        group_rule(&leader_round_of(checker, "sticky", &unequal, &[("m1", &[0, 1]), ("m2", &[])]), "leader.assignment");
    assert_ne!(r.result, Outcome::Fail, "{}", r.evidence);

    // Stickiness (sticky: ownership from userData). m1 owned 0,1 and m2 owned 2,3: trading
    // t-1 for t-2 moves partitions balance did not ask to move.
    let owners = [("m1", sticky_owning(4, &[0, 1])), ("m2", sticky_owning(4, &[2, 3]))];
    let kept = counted_round(4, "sticky", &owners, &[("m1", &[0, 1]), ("m2", &[2, 3])]);
    assert_eq!(kept.result, Outcome::Pass, "{}", kept.evidence);
    assert!(kept.evidence.contains("no owned partition traded"), "{}", kept.evidence);
    let traded = counted_round(4, "sticky", &owners, &[("m1", &[0, 2]), ("m2", &[1, 3])]);
    assert_eq!(traded.result, Outcome::Fail);
    assert!(traded.evidence.contains("t-1 moved away from m1"), "{}", traded.evidence);
    // An older generation's claim is no ownership (Java discards it): moving it is fine.
    let stale = [("m1", sticky_owning(3, &[0, 1])), ("m2", sticky_owning(4, &[2, 3]))];
    let r = counted_round(4, "sticky", &stale, &[("m1", &[2, 0]), ("m2", &[1, 3])]);
    assert!(!r.evidence.contains("moved away from m1"), "{}", r.evidence);

    // Cooperative-sticky: m1 owns all four, m2 joins. Java revokes two (given to nobody).
    let joining = [("m1", owning(4, &[0, 1, 2, 3])), ("m2", Subscription::new(["t"]).with_generation_id(-1))];
    let first = counted_round(4, "cooperative-sticky", &joining, &[("m1", &[0, 1]), ("m2", &[])]);
    assert_eq!(first.result, Outcome::Pass, "{}", first.evidence);
    let kept_all = counted_round(4, "cooperative-sticky", &joining, &[("m1", &[0, 1, 2, 3]), ("m2", &[])]);
    assert_eq!(kept_all.result, Outcome::Fail);
    assert!(kept_all.evidence.contains("unbalanced"), "{}", kept_all.evidence);
    let lopsided = counted_round(4, "cooperative-sticky", &joining, &[("m1", &[0]), ("m2", &[])]);
    assert_eq!(lopsided.result, Outcome::Pass, "three withheld can still balance: {}", lopsided.evidence);
    // m1 revokes t-3 but is given t-4, which nobody owned: a trade.
    let trade = [("m1", owning(4, &[2, 3])), ("m2", owning(4, &[0, 1]))];
    let r = counted_round(5, "cooperative-sticky", &trade, &[("m1", &[2, 4]), ("m2", &[0, 1])]);
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("t-3 moved away from m1"), "{}", r.evidence);
}

fn at_ms(ms: u64, client: &str) -> Seen {
    Seen { time: std::time::Duration::from_millis(ms), client_id: Some(client.into()) }
}

fn cooperative_join(member: &str, claims: &[i32], generation: i32) -> JoinGroupRequest<Payload> {
    join(member, "cooperative-sticky", sub(owning(generation, claims)))
}

/// m1 (cooperative, rebalance timeout 300 s) owns t-0,t-1 at generation 3; generation 4's
/// SyncGroup (at 10 s) gives it t-0 only: it revoked t-1.
fn revoked_t1() -> Checker {
    let mut c = Checker::new();
    c.join_request(&at_ms(1_000, "c1"), &cooperative_join("m1", &[], -1));
    c.sync_response(&at_ms(1_100, "c1"), "g", "m1", 3, ErrorCode::NONE, &asg(&[0, 1]));
    c.join_request(&at_ms(9_000, "c1"), &cooperative_join("m1", &[0, 1], 3));
    c.sync_response(&at_ms(10_000, "c1"), "g", "m1", 4, ErrorCode::NONE, &asg(&[0]));
    c
}

#[test]
fn cooperative_revoke_rule() {
    // Java: onPartitionsRevoked, then a JoinGroup on the next poll, claiming what is left.
    let mut good = revoked_t1();
    good.join_request(&at_ms(10_030, "c1"), &cooperative_join("m1", &[0], 4));
    let r = member_rule(&good.finish(), "m1", "cooperative.revoke");
    assert_eq!(r.result, Outcome::Pass, "{}", r.evidence);
    assert!(r.evidence.contains("revoked t-1") && r.evidence.contains("30 ms later"), "{}", r.evidence);
    assert!(r.evidence.contains("client c1") && r.evidence.contains("generation 4"), "{}", r.evidence);

    let mut claims_again = revoked_t1();
    claims_again.join_request(&at_ms(10_030, "c1"), &cooperative_join("m1", &[0, 1], 4));
    let r = member_rule(&claims_again.finish(), "m1", "cooperative.revoke");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("still claiming t-1"), "{}", r.evidence);
    assert!(!r.consequence.is_empty());

    let mut late = revoked_t1();
    late.join_request(&at_ms(400_000, "c1"), &cooperative_join("m1", &[0], 4));
    let r = member_rule(&late.finish(), "m1", "cooperative.revoke");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("beyond its rebalance timeout of 300000 ms"), "{}", r.evidence);

    // No rejoin while the capture goes on past the bound (another group's traffic).
    let mut never = revoked_t1();
    never.sync_response(&at_ms(500_000, "x"), "other", "x1", 1, ErrorCode::NONE, &asg(&[]));
    let r = member_rule(&never.finish(), "m1", "cooperative.revoke");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("sent no JoinGroup"), "{}", r.evidence);

    // The capture ends within the bound: it cannot tell.
    let r = member_rule(&revoked_t1().finish(), "m1", "cooperative.revoke");
    assert_eq!(r.result, Outcome::Unknown, "{}", r.evidence);
    assert!(r.evidence.contains("the capture ends"), "{}", r.evidence);

    // A later round without it: it left (LeaveGroup is not judged), unknown.
    let mut left = revoked_t1();
    let members = [JoinGroupMember { member_id: "m2".into(), group_instance_id: None, metadata: sub(owning(4, &[])) }];
    left.join_response(
        &at_ms(20_000, "c2"),
        "g",
        "m2",
        ErrorCode::NONE,
        5,
        Some("cooperative-sticky"),
        "m2",
        None,
        &members,
    );
    left.sync_response(&at_ms(900_000, "c2"), "g", "m2", 5, ErrorCode::NONE, &asg(&[0, 1]));
    let r = member_rule(&left.finish(), "m1", "cooperative.revoke");
    assert_eq!(r.result, Outcome::Unknown, "{}", r.evidence);
    assert!(r.evidence.contains("not in this round"), "{}", r.evidence);

    // A round that includes it (its own JoinGroup lost): its claims there are judged.
    let mut in_round = revoked_t1();
    let members =
        [JoinGroupMember { member_id: "m1".into(), group_instance_id: None, metadata: sub(owning(4, &[0, 1])) }];
    in_round.join_response(
        &at_ms(10_500, "c1"),
        "g",
        "m1",
        ErrorCode::NONE,
        5,
        Some("cooperative-sticky"),
        "m1",
        None,
        &members,
    );
    let r = member_rule(&in_round.finish(), "m1", "cooperative.revoke");
    assert_eq!(r.result, Outcome::Fail);
    assert!(
        r.evidence.contains("is in the leader's next round") && r.evidence.contains("still claiming t-1"),
        "{}",
        r.evidence
    );

    // Nothing revoked: nothing to judge.
    let mut kept = Checker::new();
    kept.join_request(&at_ms(1_000, "c1"), &cooperative_join("m1", &[], -1));
    kept.sync_response(&at_ms(1_100, "c1"), "g", "m1", 3, ErrorCode::NONE, &asg(&[0, 1]));
    kept.join_request(&at_ms(9_000, "c1"), &cooperative_join("m1", &[0, 1], 3));
    kept.sync_response(&at_ms(10_000, "c1"), "g", "m1", 4, ErrorCode::NONE, &asg(&[0, 1, 2]));
    kept.sync_response(&at_ms(900_000, "x"), "other", "x1", 1, ErrorCode::NONE, &asg(&[]));
    assert_eq!(member_rule(&kept.finish(), "m1", "cooperative.revoke").result, Outcome::Unknown);
}

#[test]
fn committed_cooperative_captures_pass_revoke() {
    for name in ["java-cooperative-sticky.pcap", "rdkafka-cooperative-sticky.pcap"] {
        let report = check_messages(&std::fs::read(capture(name)).unwrap(), 0);
        assert_eq!(count(&report, "cooperative.revoke", Outcome::Fail), 0, "{name}");
        let passes: Vec<_> =
            results(&report, "cooperative.revoke").into_iter().filter(|r| r.result == Outcome::Pass).collect();
        assert!(passes.len() >= 2, "{name}: {passes:#?}");
        assert!(passes.iter().all(|r| r.evidence.contains("claiming none of them")), "{name}");
    }
}

fn static_join(instance: &str) -> JoinGroupRequest<Payload> {
    let mut j = join("", "range", sub(Subscription::new(["t"])));
    j.group_instance_id = Some(instance.into());
    j
}

#[test]
fn static_instance_across_restarts_and_fencing() {
    let a: SocketAddr = "10.0.0.1:40001".parse().unwrap();
    let a_restarted: SocketAddr = "10.0.0.1:40777".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:40002".parse().unwrap();
    let respond = |c: &mut Checker, t: u64, member: &str, request_seen: &Seen| {
        c.join_response(
            &at_ms(t, "c1"),
            "g",
            member,
            ErrorCode::NONE,
            1,
            Some("range"),
            "x",
            Some((45_000, &["range".to_owned()], request_seen)),
            &[],
        );
    };
    // A restart (new connection, same host and client id) keeps its instance id.
    let mut c = Checker::new();
    c.join_request_from(&at_ms(1_000, "c1"), Some(a), &static_join("i1"));
    respond(&mut c, 1_001, "m1", &at_ms(1_000, "c1"));
    c.join_request_from(&at_ms(60_000, "c1"), Some(a_restarted), &static_join("i1"));
    respond(&mut c, 60_001, "m2", &at_ms(60_000, "c1"));
    let report = c.finish();
    let r = member_rule(&report, "m2", "static.instance");
    assert_eq!(r.result, Outcome::Pass, "{}", r.evidence);
    assert!(r.evidence.contains("keeps instance"), "{}", r.evidence);

    // Two live processes take turns with one instance id: a, b, a.
    let mut c = Checker::new();
    for (t, from, member) in [(1_000, a, "m1"), (2_000, b, "m2"), (3_000, a, "m3")] {
        c.join_request_from(&at_ms(t, "c1"), Some(from), &static_join("i1"));
        respond(&mut c, t + 1, member, &at_ms(t, "c1"));
    }
    let report = c.finish();
    let r = member_rule(&report, "m3", "static.instance");
    assert_eq!(r.result, Outcome::Fail);
    assert!(r.evidence.contains("two live processes share the instance id"), "{}", r.evidence);
    assert_ne!(member_rule(&report, "m2", "static.instance").result, Outcome::Fail);

    // The broker's verdict: FENCED_INSTANCE_ID.
    let mut c = Checker::new();
    c.sync_response(&at_ms(1_000, "c1"), "g", "m1", 3, ErrorCode::FENCED_INSTANCE_ID, &Payload::Empty);
    assert_eq!(member_rule(&c.finish(), "m1", "static.instance").result, Outcome::Fail);
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

fn described_member(id: &str, protocol_sub: Subscription, parts: &[i32]) -> crate::group_api::DescribedGroupMember {
    crate::group_api::DescribedGroupMember {
        member_id: id.into(),
        group_instance_id: None,
        client_id: format!("client-{id}"),
        client_host: "/127.0.0.1".into(),
        member_metadata: Bytes::from(protocol_sub.encode(Version::V3).unwrap()),
        member_assignment: Bytes::from(
            Assignment::new(vec![TopicPartitions::new("t", parts.to_vec())]).encode(Version::V3).unwrap(),
        ),
    }
}

#[test]
fn a_described_live_group_is_one_round() {
    let group = |state: &str, members| crate::inspect::ClassicGroup {
        group_id: "g".into(),
        state: state.into(),
        protocol_type: "consumer".into(),
        protocol: "cooperative-sticky".into(),
        members,
    };
    let stable =
        vec![described_member("m1", owning(4, &[0, 1]), &[0, 1]), described_member("m2", owning(4, &[2]), &[2, 3])];
    let mut c = Checker::with_metadata(ClusterMetadata::from_counts([("t", 4)]));
    c.described_group(&seen(1), &group("Stable", stable.clone()));
    let report = c.finish();
    assert!(!report.has_failure(), "{report:#?}");
    let leader = group_rule(&report, "leader.assignment");
    assert_eq!(leader.result, Outcome::Pass, "{}", leader.evidence);
    assert_eq!(member_rule(&report, "m1", "payload.strict").result, Outcome::Pass);
    assert_eq!(member_rule(&report, "m1", "cooperative.revoke").result, Outcome::Unknown);
    assert!(member_rule(&report, "m1", "cooperative.revoke").evidence.contains("needs the sequence"));
    // m1 still claims t-1, given to m2: the description is a round, judged as one.
    let stolen =
        vec![described_member("m1", owning(4, &[0, 1]), &[0]), described_member("m2", owning(4, &[2, 3]), &[1, 2, 3])];
    let mut c = Checker::with_metadata(ClusterMetadata::from_counts([("t", 4)]));
    c.described_group(&seen(1), &group("Stable", stable.clone()));
    c.described_group(&seen(2), &group("Stable", stolen));
    assert_eq!(group_rule(&c.finish(), "leader.assignment").result, Outcome::Fail);
    // Rebalancing: the broker sends no payloads; nothing is judged.
    let mut rebalancing = stable;
    for m in &mut rebalancing {
        m.member_metadata = Bytes::new();
        m.member_assignment = Bytes::new();
    }
    let mut c = Checker::new();
    c.described_group(&seen(1), &group("PreparingRebalance", rebalancing));
    let report = c.finish();
    assert!(!report.has_failure());
    assert_eq!(group_rule(&report, "leader.assignment").result, Outcome::Unknown);
    assert_eq!(member_rule(&report, "m1", "payload.strict").result, Outcome::Unknown);
}

fn consumer_member(
    id: &str,
    epoch: i32,
    topics: &[&str],
    owns: &[i32],
    target: &[i32],
) -> crate::inspect::ConsumerMember {
    crate::inspect::ConsumerMember {
        member_id: id.into(),
        member_epoch: epoch,
        client_id: format!("client-{id}"),
        subscribed_topics: topics.iter().map(|t| (*t).to_owned()).collect(),
        assignment: vec![TopicPartitions::new("t", owns.to_vec())],
        target_assignment: vec![TopicPartitions::new("t", target.to_vec())],
        member_type: crate::inspect::MemberType::Consumer,
        ..crate::inspect::ConsumerMember::default()
    }
}

fn consumer_group(
    state: &str,
    epochs: (i32, i32),
    members: Vec<crate::inspect::ConsumerMember>,
) -> crate::inspect::ConsumerGroup {
    crate::inspect::ConsumerGroup {
        group_id: "g".into(),
        state: state.into(),
        group_epoch: epochs.0,
        assignment_epoch: epochs.1,
        assignor: "uniform".into(),
        members,
    }
}

fn judge_consumer(group: &crate::inspect::ConsumerGroup, partitions: Option<i32>) -> Report {
    let mut c = Checker::new();
    if let Some(n) = partitions {
        c.learn_partition_count("t", n);
    }
    c.described_consumer_group(&seen(1), group);
    c.finish()
}

#[test]
fn a_described_kip848_group_is_judged_on_its_assignment_and_epochs() {
    // Stable, converged, complete: passes; the classic rules are unknown, the member carries the
    // consumer rules after them.
    let stable = consumer_group(
        "Stable",
        (5, 5),
        vec![consumer_member("a", 5, &["t"], &[0, 1], &[0, 1]), consumer_member("b", 5, &["t"], &[2, 3], &[2, 3])],
    );
    let report = judge_consumer(&stable, Some(4));
    assert!(!report.has_failure(), "{report:#?}");
    assert_eq!(report.groups[0].group_protocol, "consumer");
    let leader = group_rule(&report, "leader.assignment");
    assert_eq!(leader.result, Outcome::Pass, "{}", leader.evidence);
    assert!(leader.evidence.contains("every subscribed partition targeted"), "{}", leader.evidence);
    assert_eq!(group_rule(&report, "protocol.names").result, Outcome::Pass);
    assert_eq!(member_rule(&report, "a", "consumer.assignment").result, Outcome::Pass);
    assert_eq!(member_rule(&report, "a", "consumer.epoch").result, Outcome::Pass);
    assert_eq!(member_rule(&report, "a", "payload.strict").result, Outcome::Unknown);
    let names: Vec<&str> = report.groups[0].members[0].rules.iter().map(|r| r.rule).collect();
    assert_eq!(names, MEMBER_RULES.iter().chain(&CONSUMER_MEMBER_RULES).copied().collect::<Vec<_>>());
    // Without the partition counts completeness is unknown, the rest still judged.
    let report = judge_consumer(&stable, None);
    assert_eq!(group_rule(&report, "leader.assignment").result, Outcome::Unknown);
    assert_eq!(member_rule(&report, "a", "consumer.epoch").result, Outcome::Pass);
    // A partition nobody is targeted with, once the target is current.
    let report = judge_consumer(&stable, Some(5));
    let leader = group_rule(&report, "leader.assignment");
    assert_eq!(leader.result, Outcome::Fail);
    assert!(leader.evidence.contains("targeted at nobody: t-4"), "{}", leader.evidence);
    // Owned by two members at once; targeted at two.
    let double = consumer_group(
        "Stable",
        (5, 5),
        vec![
            consumer_member("a", 5, &["t"], &[0, 1], &[0, 1]),
            consumer_member("b", 5, &["t"], &[1, 2, 3], &[1, 2, 3]),
        ],
    );
    let leader = group_rule(&judge_consumer(&double, Some(4)), "leader.assignment");
    assert_eq!(leader.result, Outcome::Fail);
    assert!(
        leader.evidence.contains("t-1 owned by both a and b")
            && leader.evidence.contains("t-1 targeted at both a and b"),
        "{}",
        leader.evidence
    );
    // Targeted with a topic it does not subscribe to.
    let outside = consumer_group("Stable", (5, 5), vec![consumer_member("a", 5, &["u"], &[0, 1, 2, 3], &[0, 1, 2, 3])]);
    let report = judge_consumer(&outside, None);
    let rule = member_rule(&report, "a", "consumer.assignment");
    assert_eq!(rule.result, Outcome::Fail);
    assert!(rule.evidence.contains("target gives it t-0,t-1,t-2,t-3"), "{}", rule.evidence);
    assert!(!rule.consequence.is_empty());
    // Reconciling: a member behind its target is unknown (it may yet converge), not failed; the
    // same while the group says Stable fails.
    let reconciling = vec![
        consumer_member("a", 5, &["t"], &[0, 1], &[0, 1]),
        consumer_member("b", 4, &["t"], &[2, 3], &[2]),
        consumer_member("c", 5, &["t"], &[], &[3]),
    ];
    let report = judge_consumer(&consumer_group("Reconciling", (5, 5), reconciling.clone()), Some(4));
    assert!(!report.has_failure(), "{report:#?}");
    let rule = member_rule(&report, "b", "consumer.epoch");
    assert_eq!(rule.result, Outcome::Unknown);
    assert!(rule.evidence.contains("to revoke t-3"), "{}", rule.evidence);
    assert_eq!(member_rule(&report, "c", "consumer.epoch").result, Outcome::Unknown);
    assert_eq!(group_rule(&report, "leader.assignment").result, Outcome::Pass);
    let report = judge_consumer(&consumer_group("Stable", (5, 5), reconciling), Some(4));
    assert_eq!(member_rule(&report, "b", "consumer.epoch").result, Outcome::Fail);
    // An epoch ahead of the group's fails; a target behind the group epoch is not judged whole.
    let ahead = consumer_group("Reconciling", (5, 4), vec![consumer_member("a", 5, &["t"], &[0], &[0])]);
    let report = judge_consumer(&ahead, Some(4));
    assert_eq!(member_rule(&report, "a", "consumer.epoch").result, Outcome::Fail);
    let leader = group_rule(&report, "leader.assignment");
    assert_eq!(leader.result, Outcome::Unknown);
    assert!(leader.evidence.contains("being recomputed"), "{}", leader.evidence);
    // A custom server-side assignor cannot be compared with Kafka's.
    let mut custom = stable.clone();
    custom.assignor = "my-assignor".into();
    assert_eq!(group_rule(&judge_consumer(&custom, Some(4)), "protocol.names").result, Outcome::Unknown);
}
