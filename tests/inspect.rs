//! `inspect`: the diagnostics of described groups, one test per finding, over groups built with
//! the crate's own encoder and from the golden / cross-implementation vectors.

use bytes::Bytes;
use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::group_api::DescribedGroupMember;
use kafka_consumer_protocol::inspect::{
    inspect_classic, inspect_consumer, ClassicGroup, ConsumerGroup, ConsumerMember, Diagnostic, DiagnosticKind,
    MemberType, PayloadKind, ReportedPayload, UserDataReading,
};
use kafka_consumer_protocol::{
    Assignment, CooperativeStickyUserData, StickyUserData, StickyUserDataFormat, Subscription, TopicPartitions, Version,
};

fn vector(path: &str) -> Bytes {
    let text = std::fs::read_to_string(format!("{}/testdata/vectors/{path}.json", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let hex = value["hex"].as_str().unwrap();
    Bytes::from((0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect::<Vec<_>>())
}

fn subscription(topics: &[&str], owned: &[(&str, &[i32])], generation: i32) -> Subscription {
    Subscription::new(topics.iter().map(|t| t.to_string()))
        .with_owned_partitions(owned.iter().map(|(t, p)| TopicPartitions::new(*t, p.to_vec())).collect())
        .with_generation_id(generation)
}

fn assignment(assigned: &[(&str, &[i32])]) -> Bytes {
    let a = Assignment::new(assigned.iter().map(|(t, p)| TopicPartitions::new(*t, p.to_vec())).collect());
    Bytes::from(a.encode(Version::V3).unwrap())
}

fn member(id: &str, metadata: Bytes, assignment: Bytes) -> DescribedGroupMember {
    DescribedGroupMember {
        member_id: id.into(),
        client_id: id.split('-').next().unwrap().into(),
        client_host: "/127.0.0.1".into(),
        member_metadata: metadata,
        member_assignment: assignment,
        ..DescribedGroupMember::default()
    }
}

fn v3(s: Subscription) -> Bytes {
    Bytes::from(s.encode(Version::V3).unwrap())
}

fn group(protocol: &str, members: Vec<DescribedGroupMember>) -> ClassicGroup {
    ClassicGroup {
        group_id: "g".into(),
        state: "Stable".into(),
        protocol_type: "consumer".into(),
        protocol: protocol.into(),
        members,
    }
}

fn orders(n: i32) -> ClusterMetadata {
    ClusterMetadata::from_counts([("orders", n)])
}

fn kinds(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().map(|d| d.kind.code()).collect()
}

#[test]
fn a_healthy_range_group_has_no_findings() {
    let g = group(
        "range",
        vec![
            member("c1-a", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[0, 1])])),
            member("c2-b", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[2])])),
        ],
    );
    let report = inspect_classic(&g, &orders(3));
    assert_eq!(report.diagnostics, []);
    assert_eq!(report.members.len(), 2);
    let sub = report.members[0].subscription.decoded().expect("decoded");
    assert_eq!(sub.view().topics().iter().collect::<Vec<_>>(), ["orders"]);
    let asg = report.members[1].assignment.decoded().expect("decoded");
    assert_eq!(asg.view().assigned_partitions().to_owned(), [TopicPartitions::new("orders", [2])]);
}

#[test]
fn double_assignment_names_the_partition_and_both_members_and_blocks_the_upgrade() {
    let g = group(
        "range",
        vec![
            member("c1-a", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[0, 1])])),
            member("c2-b", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[1])])),
        ],
    );
    let report = inspect_classic(&g, &orders(2));
    assert_eq!(kinds(&report.diagnostics), ["double_assignment"]);
    let d = &report.diagnostics[0];
    assert_eq!((d.topic.as_deref(), d.partition), (Some("orders"), Some(1)));
    assert_eq!(d.members, ["c1-a", "c2-b"]);
    assert!(d.blocks_online_upgrade);
    assert_eq!(d.message, "orders-1 is assigned to 2 members: c1-a, c2-b");
}

#[test]
fn a_partition_listed_twice_in_one_assignment_is_a_double_assignment() {
    let asg = assignment(&[("orders", &[0, 0])]);
    let g = group("range", vec![member("c1-a", v3(subscription(&["orders"], &[], -1)), asg)]);
    let report = inspect_classic(&g, &orders(1));
    assert_eq!(kinds(&report.diagnostics), ["double_assignment"]);
    assert_eq!(report.diagnostics[0].members, ["c1-a"]);
    assert_eq!(report.diagnostics[0].message, "orders-0 is listed 2 times in c1-a's assignment");
}

#[test]
fn pending_revocation_claimant_first() {
    let g = group(
        "cooperative-sticky",
        vec![
            member("c1-a", v3(subscription(&["orders"], &[("orders", &[0, 1])], 4)), assignment(&[("orders", &[0])])),
            member("c2-b", v3(subscription(&["orders"], &[], 4)), assignment(&[("orders", &[1])])),
        ],
    );
    let report = inspect_classic(&g, &orders(2));
    assert_eq!(kinds(&report.diagnostics), ["pending_revocation"]);
    let d = &report.diagnostics[0];
    assert_eq!((d.topic.as_deref(), d.partition), (Some("orders"), Some(1)));
    assert_eq!(d.members, ["c1-a", "c2-b"]);
    assert_eq!(d.message, "orders-1 is owned by c1-a, assigned to c2-b");
    assert!(!d.blocks_online_upgrade);
}

#[test]
fn unassigned_partitions_only_in_a_stable_group() {
    let members = vec![member("c1-a", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[0])]))];
    let mut g = group("range", members);
    let report = inspect_classic(&g, &orders(4));
    assert_eq!(kinds(&report.diagnostics), ["unassigned_partition"]);
    let d = &report.diagnostics[0];
    assert_eq!(d.partitions, [TopicPartitions::new("orders", [1, 2, 3])]);
    assert_eq!(d.partition, None, "more than one partition");
    assert_eq!(d.message, "3 of 4 partitions of orders are assigned to nobody (orders 1,2,3); subscribed by c1-a");
    // The same payloads in another state (a library caller may pass them): no verdict.
    g.state = "CompletingRebalance".into();
    assert_eq!(inspect_classic(&g, &orders(4)).diagnostics, []);
}

#[test]
fn unassigned_partitions_are_not_claimed_when_an_assignment_is_unreadable() {
    let g = group(
        "range",
        vec![
            member("c1-a", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[0])])),
            member("c2-b", v3(subscription(&["orders"], &[], -1)), Bytes::from_static(&[0, 0, 0, 0, 0, 9])),
        ],
    );
    let report = inspect_classic(&g, &orders(2));
    assert_eq!(kinds(&report.diagnostics), ["undecodable_payload"]);
}

#[test]
fn the_java_cooperative_sticky_capture_shows_the_hand_over_in_progress() {
    // Generation 2 of the captured Java group (testdata/pcap/java-cooperative-sticky.pcap): c1 and
    // c2 still own what the leader withholds from everyone until they revoke it.
    let dir = "java-client-capture-3.9.1/java-cooperative-sticky";
    let m = |c: &str| {
        member(
            &format!("java-{c}"),
            vector(&format!("{dir}-java-{c}-subscription-cooperative-sticky-g2")),
            vector(&format!("{dir}-g2-assignment-java-{c}")),
        )
    };
    let g = group("cooperative-sticky", vec![m("c1"), m("c2"), m("c3")]);
    let metadata = ClusterMetadata::from_counts([("kcp-orders", 6), ("kcp-audit", 3)]);
    let report = inspect_classic(&g, &metadata);
    assert_eq!(kinds(&report.diagnostics), ["unassigned_partition"]);
    let d = &report.diagnostics[0];
    assert_eq!(d.partitions, [TopicPartitions::new("kcp-orders", [0, 1, 3])]);
    assert!(d
        .message
        .contains("still claimed: kcp-orders-0 by java-c2, kcp-orders-1 by java-c1, kcp-orders-3 by java-c1"));
    assert_eq!(
        report.members[0].user_data,
        Some(UserDataReading::CooperativeSticky(CooperativeStickyUserData { generation: 1 }))
    );
    assert_eq!(report.members[0].generation(), Some(1));
    assert_eq!(report.members[2].generation(), None, "a new member: generation -1");
    assert_eq!(report.members[1].subscription.decoded().unwrap().view().rack_id(), Some("rack-b"));
}

#[test]
fn claims_beyond_the_partition_count() {
    let g = group(
        "cooperative-sticky",
        vec![member(
            "c1-a",
            v3(subscription(&["orders"], &[("orders", &[1, 6, 7])], 3)),
            assignment(&[("orders", &[0, 1, 2, 3, 4, 5])]),
        )],
    );
    let report = inspect_classic(&g, &orders(6));
    assert_eq!(kinds(&report.diagnostics), ["claim_beyond_partition_count"]);
    let d = &report.diagnostics[0];
    assert_eq!(d.partitions, [TopicPartitions::new("orders", [6, 7])]);
    assert!(d.message.contains("KAFKA-21674"), "{}", d.message);
}

#[test]
fn assignments_beyond_the_partition_count() {
    let g = group(
        "range",
        vec![member("c1-a", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[0, 1, 2])]))],
    );
    let report = inspect_classic(&g, &orders(2));
    assert_eq!(kinds(&report.diagnostics), ["assignment_beyond_partition_count"]);
    assert_eq!(report.diagnostics[0].partition, Some(2));
}

#[test]
fn unknown_subscribed_topics() {
    let g = group(
        "range",
        vec![member("c1-a", v3(subscription(&["orders", "gone"], &[], -1)), assignment(&[("orders", &[0])]))],
    );
    let report = inspect_classic(&g, &orders(1));
    assert_eq!(kinds(&report.diagnostics), ["unknown_topic"]);
    assert_eq!(report.diagnostics[0].topic.as_deref(), Some("gone"));
}

#[test]
fn stale_generation_claims() {
    let g = group(
        "cooperative-sticky",
        vec![
            member("c1-a", v3(subscription(&["orders"], &[("orders", &[0])], 5)), assignment(&[("orders", &[0])])),
            member("c2-b", v3(subscription(&["orders"], &[("orders", &[1])], 3)), assignment(&[("orders", &[1])])),
            // A fresh member claims nothing: not stale.
            member("c3-c", v3(subscription(&["orders"], &[], -1)), assignment(&[])),
        ],
    );
    let report = inspect_classic(&g, &orders(2));
    assert_eq!(kinds(&report.diagnostics), ["stale_generation"]);
    let d = &report.diagnostics[0];
    assert_eq!(d.members, ["c2-b"]);
    assert_eq!(d.partitions, [TopicPartitions::new("orders", [1])]);
    assert!(d.message.contains("generation 3, other members from generation 5"), "{}", d.message);
}

#[test]
fn sticky_v0_subscriptions_take_generation_and_claims_from_user_data() {
    // Eager sticky members on subscription v0 (aiokafka, kafka-python): the KIP-341 userData holds both.
    let sticky = |previous: &[i32], generation: i32| {
        let data = StickyUserData {
            previous_assignment: vec![TopicPartitions::new("orders", previous.to_vec())],
            generation: Some(generation),
        };
        let s = Subscription::new(["orders"]).with_user_data(Some(data.encode().unwrap().into()));
        Bytes::from(s.encode(Version::V0).unwrap())
    };
    let g = group(
        "sticky",
        vec![
            member("c1-a", sticky(&[0], 7), assignment(&[("orders", &[0])])),
            member("c2-b", sticky(&[1], 6), assignment(&[("orders", &[1])])),
        ],
    );
    let report = inspect_classic(&g, &orders(2));
    assert_eq!(report.members[0].generation(), Some(7));
    assert_eq!(report.members[1].claims(), [TopicPartitions::new("orders", [1])]);
    assert!(matches!(
        report.members[0].user_data,
        Some(UserDataReading::Sticky { format: StickyUserDataFormat::V1, .. })
    ));
    assert_eq!(kinds(&report.diagnostics), ["stale_generation"]);
    assert_eq!(report.diagnostics[0].members, ["c2-b"]);
}

#[test]
fn an_undecodable_subscription_keeps_the_rest_of_the_group() {
    let g = group(
        "range",
        vec![
            member("c1-a", Bytes::from_static(&[0, 0, 0, 0, 0, 1, 0]), assignment(&[("orders", &[0])])),
            member("c2-b", v3(subscription(&["orders"], &[], -1)), assignment(&[("orders", &[1])])),
        ],
    );
    let report = inspect_classic(&g, &orders(2));
    assert_eq!(kinds(&report.diagnostics), ["undecodable_payload"]);
    let d = &report.diagnostics[0];
    assert_eq!(d.payload, Some(PayloadKind::Subscription));
    assert_eq!(d.members, ["c1-a"]);
    assert!(d.blocks_online_upgrade);
    assert!(d.message.contains("KIP-848 online upgrade"), "{}", d.message);
    match &report.members[0].subscription {
        ReportedPayload::Undecodable { error, bytes } => {
            assert_eq!(error.kind().code(), "truncated");
            assert_eq!(bytes.len(), 7);
        }
        other => panic!("{other:?}"),
    }
    assert!(report.members[0].assignment.decoded().is_some());
    assert!(report.members[1].subscription.decoded().is_some());
}

#[test]
fn an_empty_assignment_in_a_stable_group_is_undecodable() {
    let g = group("range", vec![member("c1-a", v3(subscription(&["orders"], &[], -1)), Bytes::new())]);
    let report = inspect_classic(&g, &orders(1));
    assert_eq!(kinds(&report.diagnostics), ["undecodable_payload"]);
    assert_eq!(report.diagnostics[0].message.split(';').next(), Some("c1-a's assignment is empty"));
}

#[test]
fn payloads_are_not_reported_during_a_rebalance() {
    let mut g = group("", vec![member("c1-a", Bytes::new(), Bytes::new())]);
    g.state = "PreparingRebalance".into();
    let report = inspect_classic(&g, &orders(1));
    assert_eq!(report.members[0].subscription, ReportedPayload::NotReported);
    assert_eq!(report.members[0].assignment, ReportedPayload::NotReported);
    assert_eq!(report.diagnostics, []);
}

#[test]
fn kafka_go_v1_without_owned_partitions_is_a_named_third_party_defect() {
    let g = group(
        "range",
        vec![member(
            "kafka-go-a",
            vector("kafka-go-0.4.51/consumergroup-subscription-v1-no-owned"),
            vector("kafka-go-0.4.51/consumergroup-assignment-v1-map-foo-first"),
        )],
    );
    let metadata = ClusterMetadata::from_counts([("foo", 3), ("bar", 3)]);
    let report = inspect_classic(&g, &metadata);
    let defects: Vec<&Diagnostic> =
        report.diagnostics.iter().filter(|d| d.kind == DiagnosticKind::ThirdPartyDefect).collect();
    assert_eq!(defects.len(), 1, "{:?}", report.diagnostics);
    let d = defects[0];
    assert_eq!(d.payload, Some(PayloadKind::Subscription));
    assert!(d.blocks_online_upgrade);
    let repair = d.repair.as_deref().unwrap();
    assert!(repair.contains("kafka-go"), "{repair}");
    assert!(repair.contains("read with the v0 layout"), "{repair}");
    // Decoded all the same, with the repair.
    let sub = report.members[0].subscription.decoded().unwrap();
    assert_eq!(sub.view().version(), 1);
    assert!(sub.view().repair().is_some());
}

#[test]
fn kafka_python_sticky_user_data_is_repaired_and_named() {
    let user_data = vector("kafka-python-3.0.12/sticky-user-data");
    let s = Subscription::new(["foo"]).with_user_data(Some(user_data));
    let g = group(
        "sticky",
        vec![member("kp-a", Bytes::from(s.encode(Version::V0).unwrap()), assignment(&[("foo", &[0, 1])]))],
    );
    let report = inspect_classic(&g, &ClusterMetadata::from_counts([("foo", 2)]));
    assert_eq!(kinds(&report.diagnostics), ["third_party_defect"]);
    let d = &report.diagnostics[0];
    assert_eq!(d.payload, Some(PayloadKind::UserData));
    assert!(d.message.contains("kafka-python"), "{}", d.message);
    assert!(!d.blocks_online_upgrade, "the broker never reads userData");
    let expected =
        StickyUserData { previous_assignment: vec![TopicPartitions::new("foo", [0, 1])], generation: Some(3) };
    assert_eq!(report.members[0].user_data, Some(UserDataReading::KafkaPythonSticky(expected)));
    assert_eq!(report.members[0].generation(), Some(3));
}

#[test]
fn cooperative_sticky_user_data_in_the_kip_341_layout_is_read_as_sticky() {
    // franz-go's (and librdkafka's) cooperative-sticky balancer sends KIP-341 sticky data.
    let s = Subscription::new(["foo"])
        .with_user_data(Some(vector("franz-go-1.22.3/kgo-cooperative-sticky-user-data")))
        .with_generation_id(5);
    let g = group("cooperative-sticky", vec![member("kgo-a", v3(s), assignment(&[("foo", &[0])]))]);
    let report = inspect_classic(&g, &ClusterMetadata::from_counts([("foo", 1), ("bar", 2)]));
    assert!(
        matches!(&report.members[0].user_data, Some(UserDataReading::Sticky { format: StickyUserDataFormat::V1, data }) if data.generation == Some(5)),
        "{:?}",
        report.members[0].user_data
    );
    assert!(!kinds(&report.diagnostics).contains(&"custom_user_data"));
}

#[test]
fn custom_user_data_blocks_the_upgrade() {
    let with_user_data = |bytes: &'static [u8]| {
        let s = Subscription::new(["orders"]).with_user_data(Some(Bytes::from_static(bytes)));
        v3(s)
    };
    // range carries no userData; a custom assignor's state is custom whatever its bytes.
    for (protocol, bytes) in
        [("range", &[1u8, 2, 3][..]), ("my-assignor", &[0, 0, 0, 1][..]), ("cooperative-sticky", &[9][..])]
    {
        let g = group(protocol, vec![member("c1-a", with_user_data(bytes), assignment(&[("orders", &[0])]))]);
        let report = inspect_classic(&g, &orders(1));
        assert_eq!(kinds(&report.diagnostics), ["custom_user_data"], "{protocol}");
        let d = &report.diagnostics[0];
        assert!(d.blocks_online_upgrade);
        assert!(d.message.contains("KIP-848 online upgrade"), "{}", d.message);
        assert_eq!(report.members[0].user_data, Some(UserDataReading::Custom));
    }
    // Empty userData (kafkajs, kafka-python, librdkafka) is no userData.
    let g = group("range", vec![member("c1-a", with_user_data(&[]), assignment(&[("orders", &[0])]))]);
    let report = inspect_classic(&g, &orders(1));
    assert_eq!(report.diagnostics, []);
    assert_eq!(report.members[0].user_data, None);
}

#[test]
fn other_protocol_types_are_not_decoded() {
    let mut g = group("sessioned", vec![member("connect-1", Bytes::from_static(b"{}"), Bytes::from_static(b"x"))]);
    g.protocol_type = "connect".into();
    let report = inspect_classic(&g, &orders(1));
    assert_eq!(report.members[0].subscription, ReportedPayload::Opaque(Bytes::from_static(b"{}")));
    assert_eq!(report.diagnostics, []);
}

#[test]
fn the_report_does_not_depend_on_member_order() {
    let members = vec![
        member("c1-a", v3(subscription(&["orders"], &[("orders", &[0, 1])], 4)), assignment(&[("orders", &[1])])),
        member("c2-b", v3(subscription(&["orders"], &[("orders", &[2])], 2)), assignment(&[("orders", &[1, 2])])),
        member("c3-c", Bytes::from_static(&[0xff]), assignment(&[("orders", &[9])])),
    ];
    let forward = inspect_classic(&group("cooperative-sticky", members.clone()), &orders(4));
    let mut reversed = members;
    reversed.reverse();
    let backward = inspect_classic(&group("cooperative-sticky", reversed), &orders(4));
    assert_eq!(forward.diagnostics, backward.diagnostics);
    assert_eq!(
        kinds(&forward.diagnostics),
        [
            "double_assignment",
            "pending_revocation",
            "unassigned_partition",
            "assignment_beyond_partition_count",
            "stale_generation",
            "undecodable_payload"
        ]
    );
}

#[test]
fn every_capture_vector_inspects_without_a_finding_about_payloads() {
    // Each real Java subscription and assignment of the captures, as a one-member group.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/vectors/java-client-capture-3.9.1");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".json") else { continue };
        if !stem.contains("-subscription-") || stem.ends_with("-user-data") {
            continue;
        }
        let protocol = if stem.contains("cooperative-sticky") { "cooperative-sticky" } else { "range" };
        let g =
            group(protocol, vec![member("m", vector(&format!("java-client-capture-3.9.1/{stem}")), assignment(&[]))]);
        let report = inspect_classic(&g, &ClusterMetadata::from_counts([("kcp-orders", 6), ("kcp-audit", 3)]));
        let payload_findings: Vec<&Diagnostic> = report.diagnostics.iter().filter(|d| d.payload.is_some()).collect();
        assert!(payload_findings.is_empty(), "{stem}: {payload_findings:?}");
        seen += 1;
    }
    assert!(seen >= 15, "{seen}");
}

fn consumer_member(id: &str, epoch: i32, owns: &[i32], target: &[i32]) -> ConsumerMember {
    ConsumerMember {
        member_id: id.into(),
        member_epoch: epoch,
        client_id: id.into(),
        subscribed_topics: vec!["orders".into()],
        assignment: vec![TopicPartitions::new("orders", owns.to_vec())],
        target_assignment: vec![TopicPartitions::new("orders", target.to_vec())],
        member_type: MemberType::Consumer,
        ..ConsumerMember::default()
    }
}

fn consumer_group(state: &str, members: Vec<ConsumerMember>) -> ConsumerGroup {
    ConsumerGroup {
        group_id: "g".into(),
        state: state.into(),
        group_epoch: 5,
        assignment_epoch: 5,
        assignor: "uniform".into(),
        members,
    }
}

#[test]
fn a_reconciled_consumer_group_has_no_findings() {
    let g = consumer_group("Stable", vec![consumer_member("a", 5, &[0], &[0]), consumer_member("b", 5, &[1], &[1])]);
    assert_eq!(inspect_consumer(&g, &orders(2)).diagnostics, []);
}

#[test]
fn consumer_group_findings() {
    let g = consumer_group(
        "Stable",
        vec![
            consumer_member("a", 5, &[0, 1], &[0]),
            consumer_member("b", 5, &[1], &[1]),
            consumer_member("c", 4, &[], &[4]),
        ],
    );
    let report = inspect_consumer(&g, &orders(4));
    assert_eq!(
        kinds(&report.diagnostics),
        ["double_assignment", "unassigned_partition", "assignment_beyond_partition_count", "stale_generation"]
    );
    assert_eq!(report.diagnostics[1].partitions, [TopicPartitions::new("orders", [2, 3])]);
    assert_eq!(report.diagnostics[3].members, ["c"]);
    assert!(report.diagnostics[3].message.contains("member epoch 4, behind the assignment epoch 5"));
}

#[test]
fn consumer_group_hand_over_and_unassigned_only_when_stable() {
    let g =
        consumer_group("Reconciling", vec![consumer_member("a", 5, &[0, 1], &[0]), consumer_member("b", 5, &[], &[])]);
    let report = inspect_consumer(&g, &orders(3));
    assert_eq!(kinds(&report.diagnostics), [] as [&str; 0], "b targets nothing, orders-1 and 2 are not yet targeted");
    let g =
        consumer_group("Reconciling", vec![consumer_member("a", 5, &[0, 1], &[0]), consumer_member("b", 5, &[], &[1])]);
    let report = inspect_consumer(&g, &orders(2));
    assert_eq!(kinds(&report.diagnostics), ["pending_revocation"]);
    assert_eq!(report.diagnostics[0].members, ["a", "b"]);
}
