use bytes::Bytes;

use super::*;
use crate::group_api::DescribedGroupMember;
use crate::inspect::ConsumerMember;
use crate::{Assignment, Version};

fn member_with(id: &str, subscription: Bytes, assignment: Bytes) -> DescribedGroupMember {
    DescribedGroupMember {
        member_id: id.into(),
        member_metadata: subscription,
        member_assignment: assignment,
        ..DescribedGroupMember::default()
    }
}

fn sub() -> Bytes {
    Bytes::from(Subscription::new(["orders"]).encode(Version::V3).unwrap())
}

fn asg(partitions: &[i32]) -> Bytes {
    Bytes::from(Assignment::new(vec![TopicPartitions::new("orders", partitions.to_vec())]).encode(Version::V3).unwrap())
}

fn member(id: &str, partitions: &[i32]) -> DescribedGroupMember {
    member_with(id, sub(), asg(partitions))
}

fn group(members: Vec<DescribedGroupMember>) -> ClassicGroup {
    ClassicGroup {
        group_id: "g".into(),
        state: "Stable".into(),
        protocol_type: "consumer".into(),
        protocol: "cooperative-sticky".into(),
        members,
    }
}

fn plain() -> ClassicGroup {
    group(vec![member("c1", &[0, 1]), member("c2", &[2, 3])])
}

fn metadata() -> ClusterMetadata {
    ClusterMetadata::from_counts([("orders", 4)])
}

fn env4() -> UpgradeEnvironment {
    UpgradeEnvironment::defaults(BrokerLine::Kafka4)
}

fn env3_enabled() -> UpgradeEnvironment {
    let mut env = UpgradeEnvironment::defaults(BrokerLine::Kafka3);
    env.configs = Some(BrokerConfigs {
        rebalance_protocols: Some("classic,consumer".into()),
        migration_policy: Some("upgrade".into()),
        ..BrokerConfigs::default()
    });
    env
}

fn with_configs(mut env: UpgradeEnvironment, edit: impl FnOnce(&mut BrokerConfigs)) -> UpgradeEnvironment {
    edit(env.configs.get_or_insert_with(BrokerConfigs::default));
    env
}

fn ok_of(report: &UpgradeReport, name: &str) -> Option<bool> {
    report.check(name).unwrap_or_else(|| panic!("no check {name} in {report:?}")).ok
}

fn failed(report: &UpgradeReport) -> Vec<&'static str> {
    report.checks.iter().filter(|c| c.ok == Some(false)).map(|c| c.name).collect()
}

#[test]
fn a_plain_group_on_4x_defaults_is_ready_with_every_check() {
    let report = check_upgrade(&plain(), &env4(), &metadata(), None);
    let names: Vec<&str> = report.checks.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "consumer_protocol_enabled",
            "migration_policy",
            "protocol_type",
            "group_size",
            "payloads_decode",
            "assignment_user_data",
            "partition_ownership",
            "rebalance_state",
            "server_assignor"
        ]
    );
    assert_eq!(report.verdict, Verdict::Ready, "{report:#?}");
    assert_eq!(report.broker_converts, Some(true));
    assert!(report.checks.iter().all(|c| c.advice.is_none()));
    assert!(report.check("migration_policy").unwrap().evidence.contains("bidirectional (default)"));
}

#[test]
fn on_3x_defaults_the_protocol_is_off_and_the_policy_disabled() {
    let report = check_upgrade(&plain(), &UpgradeEnvironment::defaults(BrokerLine::Kafka3), &metadata(), None);
    assert_eq!(failed(&report), ["consumer_protocol_enabled", "migration_policy"]);
    assert_eq!(report.verdict, Verdict::Blocked);
    assert_eq!(report.broker_converts, Some(false));
    assert!(report.check("migration_policy").unwrap().evidence.contains("disabled (default)"));
    assert!(report
        .check("consumer_protocol_enabled")
        .unwrap()
        .advice
        .as_deref()
        .unwrap()
        .contains("UNSUPPORTED_VERSION"));
}

#[test]
fn on_3x_with_the_protocol_and_policy_enabled_it_is_ready_without_group_version() {
    let report = check_upgrade(&plain(), &env3_enabled(), &metadata(), None);
    assert_eq!(report.verdict, Verdict::Ready, "{report:#?}");
}

#[test]
fn on_4x_the_consumer_protocol_needs_the_group_version_feature_and_the_config() {
    let mut env = env4();
    env.group_version = None;
    let report = check_upgrade(&plain(), &env, &metadata(), None);
    assert_eq!(failed(&report), ["consumer_protocol_enabled"]);
    assert!(report.checks[0].advice.as_deref().unwrap().contains("group.version=1"));
    env.group_version = Some(0);
    assert_eq!(ok_of(&check_upgrade(&plain(), &env, &metadata(), None), "consumer_protocol_enabled"), Some(false));

    let env = with_configs(env4(), |c| c.rebalance_protocols = Some("classic".into()));
    let report = check_upgrade(&plain(), &env, &metadata(), None);
    assert_eq!(failed(&report), ["consumer_protocol_enabled"]);
    let env = with_configs(env4(), |c| c.rebalance_protocols = Some("classic, CONSUMER,streams".into()));
    assert_eq!(ok_of(&check_upgrade(&plain(), &env, &metadata(), None), "consumer_protocol_enabled"), Some(true));
}

#[test]
fn unreadable_configs_make_the_verdict_unknown() {
    let mut env = env4();
    env.configs = None;
    let report = check_upgrade(&plain(), &env, &metadata(), None);
    assert_eq!(report.verdict, Verdict::Unknown);
    assert_eq!(report.broker_converts, None);
    for name in ["consumer_protocol_enabled", "migration_policy", "group_size"] {
        assert_eq!(ok_of(&report, name), None, "{name}");
    }
    assert_eq!(ok_of(&report, "payloads_decode"), Some(true));
}

#[test]
fn the_policy_must_allow_an_upgrade() {
    for (policy, ok) in [
        ("disabled", Some(false)),
        ("downgrade", Some(false)),
        ("upgrade", Some(true)),
        ("Bidirectional", Some(true)),
        ("sideways", None),
    ] {
        let env = with_configs(env4(), |c| c.migration_policy = Some(policy.into()));
        let report = check_upgrade(&plain(), &env, &metadata(), None);
        assert_eq!(ok_of(&report, "migration_policy"), ok, "{policy}");
    }
    let env = with_configs(env4(), |c| c.migration_policy = Some("disabled".into()));
    let report = check_upgrade(&plain(), &env, &metadata(), None);
    assert_eq!(report.broker_converts, Some(false));
    assert!(report.check("migration_policy").unwrap().advice.as_deref().unwrap().contains("policy=upgrade"));
}

#[test]
fn other_protocol_types_cannot_convert() {
    let mut g = plain();
    g.protocol_type = "connect".into();
    g.protocol = "sessioned".into();
    for m in &mut g.members {
        m.member_metadata = Bytes::from_static(b"\x00\x01connect-metadata");
        m.member_assignment = Bytes::from_static(b"\x00\x01connect-assignment");
    }
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert_eq!(failed(&report), ["protocol_type"]);
    assert_eq!(report.broker_converts, Some(false));
    assert!(report.check("protocol_type").unwrap().evidence.contains("\"connect\""));
}

#[test]
fn the_member_count_is_held_against_group_consumer_max_size() {
    let g = group(vec![member("c1", &[0]), member("c2", &[1]), member("c3", &[2, 3])]);
    for (limit, ok) in [("2", Some(false)), ("3", Some(true)), ("three", None)] {
        let env = with_configs(env4(), |c| c.consumer_max_size = Some(limit.into()));
        assert_eq!(ok_of(&check_upgrade(&g, &env, &metadata(), None), "group_size"), ok, "{limit}");
    }
    let env = with_configs(env4(), |c| c.consumer_max_size = Some("2".into()));
    let check = check_upgrade(&g, &env, &metadata(), None).check("group_size").unwrap().clone();
    assert_eq!(check.evidence, "3 members, group.consumer.max.size=2");
    assert!(check.advice.unwrap().contains("at least 3"));
}

#[test]
fn a_malformed_subscription_blocks_the_conversion() {
    let g =
        group(vec![member("c1", &[0, 1]), member_with("c2", Bytes::from_static(&[0, 3, 0, 0, 0, 9]), asg(&[2, 3]))]);
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert_eq!(failed(&report), ["payloads_decode"]);
    assert!(report.check("payloads_decode").unwrap().evidence.starts_with("c2: subscription"));
    assert_eq!(report.broker_converts, Some(false));
}

#[test]
fn an_empty_assignment_converts_on_4x_but_not_on_3x() {
    let g = group(vec![member("c1", &[0, 1, 2, 3]), member_with("c2", sub(), Bytes::new())]);
    assert_eq!(ok_of(&check_upgrade(&g, &env4(), &metadata(), None), "payloads_decode"), Some(true));
    let report = check_upgrade(&g, &env3_enabled(), &metadata(), None);
    assert_eq!(failed(&report), ["payloads_decode"]);
    assert!(report.check("payloads_decode").unwrap().evidence.contains("c2: assignment is empty"));
}

#[test]
fn assignment_user_data_is_refused_on_4x_and_dropped_on_3x() {
    let with_state = Bytes::from(
        Assignment::new(vec![TopicPartitions::new("orders", [2, 3])])
            .with_user_data(Bytes::from_static(b"state"))
            .encode(Version::V1)
            .unwrap(),
    );
    let mut g = group(vec![member("c1", &[0, 1]), member_with("c2", sub(), with_state)]);
    g.protocol = "custom".into();
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert_eq!(failed(&report), ["assignment_user_data"]);
    assert_eq!(report.broker_converts, Some(false));
    assert!(report.check("assignment_user_data").unwrap().evidence.contains("c2 (5 bytes)"));

    let report = check_upgrade(&g, &env3_enabled(), &metadata(), None);
    assert_eq!(report.verdict, Verdict::Ready);
    let check = report.check("assignment_user_data").unwrap();
    assert!(check.evidence.contains("lost"), "{check:?}");
    assert!(!check.broker_refuses);
}

#[test]
fn an_empty_user_data_is_not_user_data() {
    let empty = Bytes::from(
        Assignment::new(vec![TopicPartitions::new("orders", [2, 3])])
            .with_user_data(Bytes::new())
            .encode(Version::V1)
            .unwrap(),
    );
    let g = group(vec![member("c1", &[0, 1]), member_with("c2", sub(), empty)]);
    assert_eq!(ok_of(&check_upgrade(&g, &env4(), &metadata(), None), "assignment_user_data"), Some(true));
}

#[test]
fn a_partition_owned_twice_is_refused_and_a_claim_beyond_the_count_blocks() {
    let g = group(vec![member("c1", &[0, 1]), member("c2", &[1, 2, 3])]);
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert_eq!(failed(&report), ["partition_ownership"]);
    let check = report.check("partition_ownership").unwrap();
    assert!(check.broker_refuses && check.evidence.contains("orders-1"), "{check:?}");
    assert_eq!(report.broker_converts, Some(false));

    let g = group(vec![member("c1", &[0, 1]), member("c2", &[2, 3, 7])]);
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert_eq!(failed(&report), ["partition_ownership"]);
    assert!(!report.check("partition_ownership").unwrap().broker_refuses);
    assert_eq!(report.verdict, Verdict::Blocked);
    assert_eq!(report.broker_converts, Some(true));
}

#[test]
fn a_group_in_a_rebalance_is_blocked_and_its_payloads_unknown() {
    let mut g = plain();
    g.state = "PreparingRebalance".into();
    for m in &mut g.members {
        m.member_metadata = Bytes::new();
        m.member_assignment = Bytes::new();
    }
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert_eq!(failed(&report), ["rebalance_state"]);
    assert_eq!(report.verdict, Verdict::Blocked);
    assert_eq!(ok_of(&report, "payloads_decode"), None);
    assert_eq!(report.broker_converts, None);
    assert!(report.check("rebalance_state").unwrap().advice.as_deref().unwrap().contains("Stable"));
}

#[test]
fn an_empty_group_is_replaced_whatever_the_policy() {
    let mut g = group(Vec::new());
    g.state = "Empty".into();
    let env = with_configs(env4(), |c| c.migration_policy = Some("disabled".into()));
    let report = check_upgrade(&g, &env, &metadata(), None);
    assert_eq!(report.verdict, Verdict::Ready);
    // ...but the broker must still run consumer groups.
    let report = check_upgrade(&g, &UpgradeEnvironment::defaults(BrokerLine::Kafka3), &metadata(), None);
    assert_eq!(failed(&report), ["consumer_protocol_enabled"]);
}

fn evidence(report: &UpgradeReport, name: &str) -> String {
    report.check(name).unwrap().evidence.clone()
}

#[test]
fn the_server_assignor_simulation_counts_moves() {
    // Balanced and sticky already: uniform moves nothing.
    let report = check_upgrade(&plain(), &env4(), &metadata(), None);
    assert!(evidence(&report, "server_assignor").ends_with("0 of 4 partitions change owner"), "{report:?}");
    // The figure says what it counts, against a rehearsal's (issue 39).
    assert!(evidence(&report, "server_assignor").contains("from their current assignment"), "{report:?}");
    assert!(evidence(&report, "server_assignor").contains("summary.partitions_moved counts the whole run"));
    // Unbalanced: uniform moves two partitions to c2.
    let g = group(vec![member("c1", &[0, 1, 2, 3]), member("c2", &[])]);
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert!(evidence(&report, "server_assignor").ends_with("2 of 4 partitions change owner"));
    // Interleaved: range gives c1 0-1 and c2 2-3, moving orders-0 and orders-3.
    let g = group(vec![member("c1", &[1, 3]), member("c2", &[0, 2])]);
    let report = check_upgrade(&g, &env4(), &metadata(), Some(ServerAssignor::Range));
    let text = evidence(&report, "server_assignor");
    assert!(text.contains("server-side range (group.remote.assignor)"), "{text}");
    assert!(text.ends_with("2 of 4 partitions change owner"), "{text}");
    let report = check_upgrade(&g, &env4(), &metadata(), None);
    assert!(evidence(&report, "server_assignor").ends_with("0 of 4 partitions change owner"));
}

#[test]
fn the_broker_assignor_is_the_first_configured_one() {
    let g = group(vec![member("c1", &[1, 3]), member("c2", &[0, 2])]);
    let env = with_configs(env4(), |c| {
        c.consumer_assignors = Some(
            "org.apache.kafka.coordinator.group.assignor.RangeAssignor,org.apache.kafka.coordinator.group.assignor.UniformAssignor"
                .into(),
        )
    });
    let text = evidence(&check_upgrade(&g, &env, &metadata(), None), "server_assignor");
    assert!(text.contains("server-side range (first of group.consumer.assignors="), "{text}");
    assert!(text.ends_with("2 of 4 partitions change owner"));
    let env = with_configs(env4(), |c| c.consumer_assignors = Some("com.example.MyAssignor".into()));
    let report = check_upgrade(&g, &env, &metadata(), None);
    assert!(evidence(&report, "server_assignor").ends_with("a custom assignor: not simulated"));
    assert_eq!(report.verdict, Verdict::Ready);
}

#[test]
fn broker_configs_from_pairs_and_line_detection() {
    let configs = BrokerConfigs::from_pairs([
        ("group.consumer.migration.policy", Some("upgrade")),
        ("group.max.size", None),
        ("unrelated", Some("x")),
    ]);
    assert_eq!(configs.migration_policy.as_deref(), Some("upgrade"));
    assert_eq!(configs.classic_max_size, None);
    assert_eq!(BrokerLine::from_fetch_min_version(3), BrokerLine::Kafka3);
    assert_eq!(ServerAssignor::parse(" uniform "), Some(ServerAssignor::Uniform));
    assert_eq!(ServerAssignor::parse("sticky"), None);
}

fn consumer_group(types: &[MemberType], state: &str) -> ConsumerGroup {
    ConsumerGroup {
        group_id: "cg".into(),
        state: state.into(),
        members: types
            .iter()
            .enumerate()
            .map(|(i, t)| ConsumerMember { member_id: format!("m{i}"), member_type: *t, ..ConsumerMember::default() })
            .collect(),
        ..ConsumerGroup::default()
    }
}

#[test]
fn a_downgrade_needs_the_policy_and_room_in_group_max_size() {
    let g = consumer_group(&[MemberType::Consumer, MemberType::Classic, MemberType::Classic], "Stable");
    let report = check_downgrade(&g, &env4());
    assert_eq!(report.direction, Direction::Downgrade);
    assert_eq!(report.verdict, Verdict::Ready, "{report:#?}");
    assert!(evidence(&report, "member_protocols").starts_with("1 consumer-protocol and 2 classic members"));

    let report = check_downgrade(&g, &env3_enabled());
    assert_eq!(failed(&report), ["migration_policy"]);
    assert_eq!(report.broker_converts, Some(false));

    let env = with_configs(env4(), |c| c.classic_max_size = Some("1".into()));
    let report = check_downgrade(&g, &env);
    assert_eq!(failed(&report), ["group_size"]);
    assert!(evidence(&report, "group_size").starts_with("2 members, group.max.size=1"));
    let env = with_configs(env4(), |c| c.classic_max_size = Some("2".into()));
    assert_eq!(check_downgrade(&g, &env).verdict, Verdict::Ready);
}

#[test]
fn a_downgrade_of_a_reconciling_or_undescribed_group() {
    let g = consumer_group(&[MemberType::Consumer, MemberType::Consumer], "Reconciling");
    let report = check_downgrade(&g, &env4());
    assert_eq!(failed(&report), ["rebalance_state"]);
    assert_eq!(report.broker_converts, Some(true));
    let g = consumer_group(&[MemberType::Unknown, MemberType::Consumer], "Stable");
    let report = check_downgrade(&g, &env4());
    assert_eq!(report.verdict, Verdict::Unknown);
    assert_eq!(ok_of(&report, "member_protocols"), None);
}

#[cfg(feature = "json")]
#[test]
fn the_json_shape() {
    let env = with_configs(env4(), |c| c.migration_policy = Some("disabled".into()));
    let value = check_upgrade(&plain(), &env, &metadata(), None).to_json();
    assert_eq!(value["group_id"], "g");
    assert_eq!(value["verdict"], "blocked");
    assert_eq!(value["broker_converts"], false);
    assert_eq!(value["checks"][1]["name"], "migration_policy");
    assert_eq!(value["checks"][1]["ok"], false);
    assert!(value["checks"][1]["advice"].is_string());
    assert!(value["checks"][0]["advice"].is_null());
}

#[test]
fn a_group_of_one_is_counted_in_the_singular() {
    let report = check_upgrade(&group(vec![member("c1", &[0, 1, 2, 3])]), &env4(), &metadata(), None);
    assert_eq!(evidence(&report, "group_size"), "1 member, group.consumer.max.size=2147483647 (default)");
    assert_eq!(evidence(&report, "payloads_decode"), "1 subscription and 1 assignment decode with Java's reader");
}
