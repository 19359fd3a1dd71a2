//! The rehearsal of a live group's rolling upgrade (issue 25): `sim::rehearsal_scenario`
//! builds a `kcp simulate` scenario from a described classic group, and the simulator runs it.

use std::process::Command;

use bytes::Bytes;
use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::group_api::DescribedGroupMember;
use kafka_consumer_protocol::inspect::upgrade::{
    check_upgrade, BrokerConfigs, BrokerLine, ServerAssignor, UpgradeEnvironment, Verdict,
};
use kafka_consumer_protocol::inspect::ClassicGroup;
use kafka_consumer_protocol::sim::{json, rehearsal_scenario, run, GroupProtocol, Step};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};

fn member(id: &str, rack: &str, owned: &[(&str, Vec<i32>)]) -> DescribedGroupMember {
    let owned: Vec<TopicPartitions> = owned.iter().map(|(t, p)| TopicPartitions::new(*t, p.clone())).collect();
    DescribedGroupMember {
        member_id: id.into(),
        member_metadata: Bytes::from(
            Subscription::new(["orders", "audit"])
                .with_owned_partitions(owned.clone())
                .with_generation_id(4)
                .with_rack_id(rack)
                .encode(Version::V3)
                .unwrap(),
        ),
        member_assignment: Bytes::from(Assignment::new(owned).encode(Version::V3).unwrap()),
        ..DescribedGroupMember::default()
    }
}

/// A Stable cooperative-sticky group of three, as DescribeGroups lists it (not sorted by id).
fn group() -> ClassicGroup {
    ClassicGroup {
        group_id: "billing".into(),
        state: "Stable".into(),
        protocol_type: "consumer".into(),
        protocol: "cooperative-sticky".into(),
        members: vec![
            member("consumer-billing-3-c", "r2", &[("orders", vec![4, 5]), ("audit", vec![2])]),
            member("consumer-billing-1-a", "r1", &[("orders", vec![0, 1]), ("audit", vec![0])]),
            member("consumer-billing-2-b", "r1", &[("orders", vec![2, 3]), ("audit", vec![1])]),
        ],
    }
}

fn metadata() -> ClusterMetadata {
    // `unrelated` is not subscribed: it stays out of the scenario.
    ClusterMetadata::from_counts([("orders", 6), ("audit", 3), ("unrelated", 9)])
}

#[test]
fn a_described_group_rehearses_its_upgrade_and_converts_without_double_ownership() {
    let env = UpgradeEnvironment::defaults(BrokerLine::Kafka4);
    let report = check_upgrade(&group(), &env, &metadata(), None);
    assert_eq!(report.verdict, Verdict::Ready);
    let r = rehearsal_scenario(&group(), &env, &metadata(), None, 45_000).unwrap();
    let s = &r.scenario;
    // Members sorted by id, short names, their subscriptions, racks and the group's assignor.
    let names: Vec<(&str, &str)> = r.names.iter().map(|(n, id)| (n.as_str(), id.as_str())).collect();
    assert_eq!(names, [("m1", "consumer-billing-1-a"), ("m2", "consumer-billing-2-b"), ("m3", "consumer-billing-3-c")]);
    assert_eq!(s.topics.iter().map(|(t, n)| (t.as_str(), *n)).collect::<Vec<_>>(), [("audit", 3), ("orders", 6)]);
    assert_eq!(s.members[2].rack.as_deref(), Some("r2"));
    assert_eq!(s.members[0].assignors, ["cooperative-sticky"]);
    // (The subscription's topics as encoded: sorted.)
    assert_eq!(s.members[0].topics, ["audit", "orders"]);
    assert!(s.members.iter().all(|m| m.protocol == GroupProtocol::Classic));
    assert_eq!(s.config.session_timeout_ms, 45_000);
    assert_eq!(s.config.migration_policy, "bidirectional");
    assert_eq!(s.config.server_assignor, "uniform");
    // One upgrade per member, a session timeout apart.
    let steps: Vec<&Step> = s.steps.iter().map(|st| &st.step).collect();
    assert_eq!(
        steps,
        [
            &Step::Upgrade("m1".into()),
            &Step::Wait(45_000),
            &Step::Upgrade("m2".into()),
            &Step::Wait(45_000),
            &Step::Upgrade("m3".into())
        ]
    );
    // The file form reads back to the same scenario, and runs.
    let file = json::scenario_json(s, Some(&r.description("billing")));
    assert_eq!(&json::scenario_from_value(&file).unwrap(), s);
    let out = run(s).unwrap();
    assert!(out.summary.converged, "{:?}", out.summary.unconverged);
    assert!(out.summary.violations.is_empty(), "{:?}", out.summary.violations);
    assert!(out.summary.fatal.is_empty(), "{:?}", out.summary.fatal);
    assert_eq!(out.summary.group_protocol, GroupProtocol::Consumer);
    assert_eq!(out.summary.conversions.len(), 1, "{:?}", out.summary.conversions);
    assert!(out.summary.conversions[0].contains("converted to a consumer group"));
    // 9 partitions over 3 members: 3 each at the end.
    for m in ["m1", "m2", "m3"] {
        let n = out.final_owned[m].len();
        assert_eq!(n, 3, "{m}: {:?}", out.final_owned);
    }
}

#[test]
fn the_rehearsal_follows_the_brokers_policy_and_assignor() {
    // A 4.x broker with the upgrade disabled and range first: the rehearsal's first consumer
    // member is refused, as check_upgrade says the broker will.
    let env = UpgradeEnvironment {
        configs: Some(BrokerConfigs {
            migration_policy: Some("downgrade".into()),
            consumer_assignors: Some("range,uniform".into()),
            ..BrokerConfigs::default()
        }),
        ..UpgradeEnvironment::defaults(BrokerLine::Kafka4)
    };
    let report = check_upgrade(&group(), &env, &metadata(), None);
    assert_eq!(report.broker_converts, Some(false));
    let r = rehearsal_scenario(&group(), &env, &metadata(), None, 10_000).unwrap();
    assert_eq!(r.scenario.config.migration_policy, "downgrade");
    assert_eq!(r.scenario.config.server_assignor, "range");
    let out = run(&r.scenario).unwrap();
    assert!(out.summary.violations.is_empty(), "{:?}", out.summary.violations);
    // m1 and m2 are refused (fatal GROUP_ID_NOT_FOUND); once m3 has left too, the classic group
    // is empty and m3's heartbeat replaces it: the rolling upgrade fails, not converts.
    let c = &out.summary.conversions;
    assert_eq!(c.len(), 3, "{c:?}");
    assert!(c[0].contains("conversion refused") && c[1].contains("conversion refused"), "{c:?}");
    assert!(c[2].contains("empty classic group replaced"), "{c:?}");
    let fatal: Vec<&str> = out.summary.fatal.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(fatal, ["m1", "m2"]);
    // --assignor wins over the broker's list.
    let r = rehearsal_scenario(&group(), &env, &metadata(), Some(ServerAssignor::Uniform), 10_000).unwrap();
    assert_eq!(r.scenario.config.server_assignor, "uniform");
}

/// Issue 39: the rehearsal takes the broker's line, its group.initial.rebalance.delay.ms when
/// reported, and Java's rebalance timeout (max.poll.interval.ms 300000; DescribeGroups does not
/// report the members' own), not the simulator's 3000 and 30000.
#[test]
fn the_rehearsal_takes_the_brokers_delay_line_and_javas_rebalance_timeout() {
    let env = UpgradeEnvironment {
        configs: Some(BrokerConfigs { initial_rebalance_delay_ms: Some("0".into()), ..BrokerConfigs::default() }),
        ..UpgradeEnvironment::defaults(BrokerLine::Kafka3)
    };
    let r = rehearsal_scenario(&group(), &env, &metadata(), None, 10_000).unwrap();
    let c = &r.scenario.config;
    assert_eq!((c.initial_rebalance_delay_ms, c.rebalance_timeout_ms), (0, 300_000));
    assert_eq!(c.broker_version, "3.x");
    let text = serde_json::to_string(&json::scenario_json(&r.scenario, None)).unwrap();
    assert!(text.contains(r#""broker_version":"3.x""#) && text.contains(r#""initial_rebalance_delay_ms":0"#), "{text}");
    // Not reported: the simulator's (and Kafka's) default.
    let r = rehearsal_scenario(&group(), &UpgradeEnvironment::defaults(BrokerLine::Kafka4), &metadata(), None, 10_000)
        .unwrap();
    assert_eq!(
        (r.scenario.config.initial_rebalance_delay_ms, r.scenario.config.broker_version.as_str()),
        (3_000, "4.x")
    );
}

#[test]
fn groups_the_simulator_cannot_rehearse_are_refused_with_the_reason() {
    let env = UpgradeEnvironment::defaults(BrokerLine::Kafka4);
    let mut custom = group();
    custom.protocol = "my-assignor".into();
    let e = rehearsal_scenario(&custom, &env, &metadata(), None, 10_000).unwrap_err();
    assert!(e.to_string().contains("\"my-assignor\""), "{e}");
    let mut rebalancing = group();
    rebalancing.state = "PreparingRebalance".into();
    let e = rehearsal_scenario(&rebalancing, &env, &metadata(), None, 10_000).unwrap_err();
    assert!(e.to_string().contains("PreparingRebalance"), "{e}");
    let mut connect = group();
    connect.protocol_type = "connect".into();
    assert!(rehearsal_scenario(&connect, &env, &metadata(), None, 10_000).unwrap_err().to_string().contains("connect"));
    let mut broken = group();
    broken.members[1].member_metadata = Bytes::from_static(&[0, 3, 0]);
    let e = rehearsal_scenario(&broken, &env, &metadata(), None, 10_000).unwrap_err();
    assert!(e.to_string().contains("consumer-billing-1-a"), "{e}");
    let custom_server = UpgradeEnvironment {
        configs: Some(BrokerConfigs {
            consumer_assignors: Some("com.example.Mine".into()),
            ..BrokerConfigs::default()
        }),
        ..UpgradeEnvironment::defaults(BrokerLine::Kafka4)
    };
    let e = rehearsal_scenario(&group(), &custom_server, &metadata(), None, 10_000).unwrap_err();
    assert!(e.to_string().contains("com.example.Mine"), "{e}");
}

#[test]
fn kcp_simulate_runs_the_written_scenario() {
    let env = UpgradeEnvironment::defaults(BrokerLine::Kafka4);
    let r = rehearsal_scenario(&group(), &env, &metadata(), None, 45_000).unwrap();
    let text =
        serde_json::to_string_pretty(&json::scenario_json(&r.scenario, Some(&r.description("billing")))).unwrap();
    let path = std::env::temp_dir().join(format!("kcp-rehearse-{}.json", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kcp")).arg("simulate").arg(&path).output().expect("kcp runs");
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let summary = &doc["summary"];
    assert_eq!(summary["converged"], true, "{summary}");
    assert_eq!(summary["violations"], serde_json::json!([]), "{summary}");
    assert_eq!(summary["group_protocol"], "consumer", "{summary}");
}

/// Issue 39: the rehearsal's timeouts are the caller's, else the members' own from the group's
/// metadata record (the largest; a value out of range not used), else Java's defaults; the
/// broker's initial rebalance delay when reported, else Kafka's 3000. Each says where it came from.
#[test]
fn the_rehearsal_timing_says_where_each_value_came_from() {
    use kafka_consumer_protocol::sim::{rehearsal_scenario_with, MemberTimeouts, TimeoutInputs, TimingSource};
    let t = |session, rebalance| MemberTimeouts { session_timeout_ms: session, rebalance_timeout_ms: rebalance };
    let mut env = UpgradeEnvironment::defaults(BrokerLine::Kafka4);

    // Nothing known: Java's and Kafka's defaults.
    let r = rehearsal_scenario_with(&group(), &env, &metadata(), None, &TimeoutInputs::default()).unwrap();
    assert_eq!((r.timing.session_timeout.ms, r.timing.session_timeout.source), (45_000, TimingSource::Default));
    assert_eq!((r.timing.rebalance_timeout.ms, r.timing.rebalance_timeout.source), (300_000, TimingSource::Default));
    assert_eq!(
        (r.timing.initial_rebalance_delay.ms, r.timing.initial_rebalance_delay.source),
        (3_000, TimingSource::Default)
    );
    assert_eq!(r.scenario.config.rebalance_timeout_ms, 300_000);

    // Every member recorded: the largest of each, and the broker's delay.
    env.configs = Some(BrokerConfigs::from_pairs([("group.initial.rebalance.delay.ms", Some("250"))]));
    let all = TimeoutInputs {
        members: [
            ("consumer-billing-1-a".to_string(), t(10_000, 60_000)),
            ("consumer-billing-2-b".to_string(), t(12_000, 90_000)),
            ("consumer-billing-3-c".to_string(), t(10_000, 60_000)),
            ("someone-who-left".to_string(), t(99_000, 999_000)),
        ]
        .into(),
        ..TimeoutInputs::default()
    };
    let r = rehearsal_scenario_with(&group(), &env, &metadata(), None, &all).unwrap();
    assert_eq!(
        (r.scenario.config.session_timeout_ms, r.timing.session_timeout.source),
        (12_000, TimingSource::GroupMetadata)
    );
    assert_eq!(
        (r.scenario.config.rebalance_timeout_ms, r.timing.rebalance_timeout.source),
        (90_000, TimingSource::GroupMetadata)
    );
    assert_eq!(
        (r.scenario.config.initial_rebalance_delay_ms, r.timing.initial_rebalance_delay.source),
        (250, TimingSource::BrokerConfig)
    );
    assert_eq!(r.scenario.steps[1].step, Step::Wait(12_000));
    assert!(r.notes.iter().any(|n| n.contains("rebalance timeouts differ (60000 to 90000 ms)")), "{:?}", r.notes);

    // One member recorded, one value out of range: used where valid, and said.
    let partial = TimeoutInputs {
        members: [("consumer-billing-2-b".to_string(), t(-1, 70_000))].into(),
        ..TimeoutInputs::default()
    };
    let r = rehearsal_scenario_with(&group(), &env, &metadata(), None, &partial).unwrap();
    assert_eq!(
        (r.timing.rebalance_timeout.ms, r.timing.rebalance_timeout.source),
        (70_000, TimingSource::GroupMetadata)
    );
    assert_eq!((r.timing.session_timeout.ms, r.timing.session_timeout.source), (45_000, TimingSource::Default));
    assert!(r.notes.iter().any(|n| n.contains("rebalance timeout of 1 of the 3 members")), "{:?}", r.notes);

    // The caller's values win; an impossible one is refused.
    let given = TimeoutInputs { session_timeout_ms: Some(20_000), rebalance_timeout_ms: Some(40_000), ..all.clone() };
    let r = rehearsal_scenario_with(&group(), &env, &metadata(), None, &given).unwrap();
    assert_eq!((r.timing.session_timeout.ms, r.timing.session_timeout.source), (20_000, TimingSource::Option));
    assert_eq!((r.timing.rebalance_timeout.ms, r.timing.rebalance_timeout.source), (40_000, TimingSource::Option));
    let zero = TimeoutInputs { rebalance_timeout_ms: Some(0), ..TimeoutInputs::default() };
    assert!(rehearsal_scenario_with(&group(), &env, &metadata(), None, &zero).is_err());

    // A delay the broker reports but the simulator cannot take: the default, with a note.
    env.configs = Some(BrokerConfigs::from_pairs([("group.initial.rebalance.delay.ms", Some("soon"))]));
    let r = rehearsal_scenario_with(&group(), &env, &metadata(), None, &all).unwrap();
    assert_eq!(r.timing.initial_rebalance_delay.source, TimingSource::Default);
    assert!(r.notes.iter().any(|n| n.contains("\"soon\"")), "{:?}", r.notes);
}
