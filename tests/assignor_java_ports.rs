//! Apache Kafka's assignor tests (RangeAssignorTest, RoundRobinAssignorTest,
//! AbstractStickyAssignorTest, StickyAssignorTest, CooperativeStickyAssignorTest,
//! AbstractPartitionAssignorTest), ported as behaviour: the same scenarios and, where Java's
//! expectation does not depend on its `HashMap` iteration order, the same exact result. Where our
//! deterministic order gives a different but equally good list, the test asserts sizes and the
//! invariants instead and says so.

use kafka_consumer_protocol::assignor::{
    builtin, ClusterMetadata, CooperativeStickyAssignor, GroupAssignment, GroupMember, PartitionAssignor,
    RangeAssignor, RebalanceProtocol, RoundRobinAssignor, StickyAssignor, TopicInfo,
};
use kafka_consumer_protocol::{Assignment, CooperativeStickyUserData, StickyUserData, Subscription, TopicPartitions};

type Tp = (&'static str, i32);

fn md(counts: &[(&str, i32)]) -> ClusterMetadata {
    ClusterMetadata::from_counts(counts.iter().map(|(t, n)| (t.to_string(), *n)))
}

fn member(id: &str, topics: &[&str]) -> GroupMember {
    GroupMember {
        member_id: id.into(),
        group_instance_id: None,
        subscription: Subscription::new(topics.iter().copied()),
    }
}

fn static_member(id: &str, instance: &str, topics: &[&str]) -> GroupMember {
    GroupMember { group_instance_id: Some(instance.into()), ..member(id, topics) }
}

fn group(tps: &[Tp]) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = Vec::new();
    for &(t, p) in tps {
        match out.iter_mut().find(|g| g.topic == t) {
            Some(g) => g.partitions.push(p),
            None => out.push(TopicPartitions::new(t, [p])),
        }
    }
    out
}

/// A cooperative member (subscription v2+): owned partitions and generation in the fields.
fn coop(id: &str, topics: &[&str], owned: &[Tp], generation: i32) -> GroupMember {
    let mut m = member(id, topics);
    m.subscription.owned_partitions = group(owned);
    m.subscription.generation_id = generation;
    m
}

/// An eager sticky member: previous assignment and generation in StickyUserData (V1).
fn eager(id: &str, topics: &[&str], owned: &[Tp], generation: i32) -> GroupMember {
    let mut m = member(id, topics);
    let data = StickyUserData { previous_assignment: group(owned), generation: Some(generation) };
    m.subscription.user_data = Some(data.encode().unwrap().into());
    m
}

/// The same claim for either sticky assignor.
fn claim(cooperative: bool, id: &str, topics: &[&str], owned: &[Tp], generation: i32) -> GroupMember {
    if cooperative {
        coop(id, topics, owned, generation)
    } else {
        eager(id, topics, owned, generation)
    }
}

fn of(out: &GroupAssignment, id: &str) -> Vec<(String, i32)> {
    let mut v: Vec<(String, i32)> =
        out.partitions_of(id).iter().flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.clone(), p))).collect();
    v.sort();
    v
}

fn tps(list: &[Tp]) -> Vec<(String, i32)> {
    let mut v: Vec<(String, i32)> = list.iter().map(|(t, p)| (t.to_string(), *p)).collect();
    v.sort();
    v
}

fn assign(a: &dyn PartitionAssignor, metadata: &ClusterMetadata, members: &[GroupMember]) -> GroupAssignment {
    a.assign(metadata, members).unwrap()
}

fn sizes(out: &GroupAssignment) -> Vec<usize> {
    let mut s: Vec<usize> = out.members().map(|a| a.partition_count()).collect();
    s.sort();
    s
}

fn sticky_both() -> [(bool, Box<dyn PartitionAssignor>); 2] {
    [(false, Box::new(StickyAssignor::new())), (true, Box::new(CooperativeStickyAssignor::new()))]
}

// ---------------------------------------------------------------- common to all four

#[test]
fn one_consumer_no_topic_and_nonexistent_topic() {
    for name in ["range", "roundrobin", "sticky", "cooperative-sticky"] {
        let a = builtin(name).unwrap();
        let out = assign(a.as_ref(), &md(&[]), &[member("c", &[])]);
        assert_eq!(out.partitions_of("c"), [] as [TopicPartitions; 0], "{name}");
        // testOneConsumerNonexistentTopic: 0 partitions, and absent from metadata.
        let out = assign(a.as_ref(), &md(&[("topic", 0)]), &[member("c", &["topic", "gone"])]);
        assert!(out.partitions_of("c").is_empty(), "{name}");
        assert!(out.member("c").is_some());
    }
}

#[test]
fn one_consumer_one_topic_and_only_subscribed_topics() {
    for name in ["range", "roundrobin", "sticky", "cooperative-sticky"] {
        let a = builtin(name).unwrap();
        let metadata = md(&[("topic", 3), ("other", 3)]);
        let out = assign(a.as_ref(), &metadata, &[member("c", &["topic"])]);
        assert_eq!(of(&out, "c"), tps(&[("topic", 0), ("topic", 1), ("topic", 2)]), "{name}");
        // testOneConsumerMultipleTopics
        let out = assign(a.as_ref(), &md(&[("topic1", 1), ("topic2", 2)]), &[member("c", &["topic1", "topic2"])]);
        assert_eq!(of(&out, "c"), tps(&[("topic1", 0), ("topic2", 0), ("topic2", 1)]), "{name}");
    }
}

#[test]
fn two_consumers_one_topic() {
    for name in ["range", "roundrobin", "sticky", "cooperative-sticky"] {
        let a = builtin(name).unwrap();
        let two = [member("consumer1", &["topic"]), member("consumer2", &["topic"])];
        // testTwoConsumersOneTopicOnePartition
        let out = assign(a.as_ref(), &md(&[("topic", 1)]), &two);
        assert_eq!(sizes(&out), [0, 1], "{name}");
        // testTwoConsumersOneTopicTwoPartitions
        let out = assign(a.as_ref(), &md(&[("topic", 2)]), &two);
        assert_eq!(of(&out, "consumer1"), tps(&[("topic", 0)]), "{name}");
        assert_eq!(of(&out, "consumer2"), tps(&[("topic", 1)]), "{name}");
    }
}

#[test]
fn builtin_names_and_protocols() {
    assert_eq!(RangeAssignor.supported_protocols(), [RebalanceProtocol::Eager]);
    assert_eq!(RoundRobinAssignor.supported_protocols(), [RebalanceProtocol::Eager]);
    assert_eq!(StickyAssignor::new().supported_protocols(), [RebalanceProtocol::Eager]);
    assert_eq!(
        CooperativeStickyAssignor::new().supported_protocols(),
        [RebalanceProtocol::Cooperative, RebalanceProtocol::Eager]
    );
    for (a, name) in [
        (builtin("range").unwrap(), "range"),
        (builtin("roundrobin").unwrap(), "roundrobin"),
        (builtin("sticky").unwrap(), "sticky"),
        (builtin("cooperative-sticky").unwrap(), "cooperative-sticky"),
    ] {
        assert_eq!(a.name(), name);
    }
}

#[test]
fn duplicate_member_ids_are_refused() {
    for name in ["range", "roundrobin", "sticky", "cooperative-sticky"] {
        let a = builtin(name).unwrap();
        assert!(a.assign(&md(&[("t", 1)]), &[member("a", &["t"]), member("a", &["t"])]).is_err(), "{name}");
    }
}

// ---------------------------------------------------------------- RangeAssignorTest

#[test]
fn range_multiple_consumers_mixed_topics() {
    let metadata = md(&[("topic1", 3), ("topic2", 2)]);
    let members = [
        member("consumer1", &["topic1"]),
        member("consumer2", &["topic1", "topic2"]),
        member("consumer3", &["topic1"]),
    ];
    let out = assign(&RangeAssignor, &metadata, &members);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic1", 0)]));
    assert_eq!(of(&out, "consumer2"), tps(&[("topic1", 1), ("topic2", 0), ("topic2", 1)]));
    assert_eq!(of(&out, "consumer3"), tps(&[("topic1", 2)]));
}

#[test]
fn range_two_consumers_two_topics_six_partitions() {
    let metadata = md(&[("topic1", 3), ("topic2", 3)]);
    let members = [member("consumer1", &["topic1", "topic2"]), member("consumer2", &["topic1", "topic2"])];
    let out = assign(&RangeAssignor, &metadata, &members);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)]));
    assert_eq!(of(&out, "consumer2"), tps(&[("topic1", 2), ("topic2", 2)]));
}

#[test]
fn range_static_members_order_by_instance_id() {
    let metadata = md(&[("topic1", 3), ("topic2", 3)]);
    // testTwoStaticConsumersTwoTopicsSixPartitions: the instance id decides, not the member id.
    let members = [
        static_member("consumer-b", "instance1", &["topic1", "topic2"]),
        static_member("consumer-a", "instance2", &["topic1", "topic2"]),
    ];
    let out = assign(&RangeAssignor, &metadata, &members);
    assert_eq!(of(&out, "consumer-b"), tps(&[("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)]));
    // testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions: static sorts first.
    let members =
        [member("consumer-a", &["topic1", "topic2"]), static_member("consumer-z", "instance1", &["topic1", "topic2"])];
    let out = assign(&RangeAssignor, &metadata, &members);
    assert_eq!(of(&out, "consumer-z"), tps(&[("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)]));
    assert_eq!(of(&out, "consumer-a"), tps(&[("topic1", 2), ("topic2", 2)]));
}

#[test]
fn range_static_assignment_persistent_after_member_id_changes() {
    let metadata = md(&[("topic1", 5), ("topic2", 5)]);
    let topics = ["topic1", "topic2"];
    let first = assign(
        &RangeAssignor,
        &metadata,
        &[
            static_member("m1", "instance1", &topics),
            static_member("m2", "instance2", &topics),
            static_member("m3", "instance3", &topics),
        ],
    );
    let second = assign(
        &RangeAssignor,
        &metadata,
        &[
            static_member("x9", "instance1", &topics),
            static_member("x1", "instance2", &topics),
            static_member("x5", "instance3", &topics),
        ],
    );
    for (a, b) in [("m1", "x9"), ("m2", "x1"), ("m3", "x5")] {
        assert_eq!(of(&first, a), of(&second, b));
    }
    // A dynamic member replaced by another keeps the static members' ranges.
    let with = |dynamic: &str| {
        assign(
            &RangeAssignor,
            &metadata,
            &[
                static_member("m1", "instance1", &topics),
                static_member("m2", "instance2", &topics),
                member(dynamic, &topics),
            ],
        )
    };
    let (a, b) = (with("dyn-1"), with("dyn-0"));
    assert_eq!(of(&a, "m1"), of(&b, "m1"));
    assert_eq!(of(&a, "m2"), of(&b, "m2"));
    assert_eq!(of(&a, "dyn-1"), of(&b, "dyn-0"));
}

fn racked(counts: &[(&str, i32)], racks: impl Fn(i32) -> Vec<String>) -> ClusterMetadata {
    let mut m = ClusterMetadata::default();
    for &(t, n) in counts {
        m.topics.insert(t.into(), TopicInfo { partitions: n, partition_racks: (0..n).map(&racks).collect() });
    }
    m
}

fn with_rack(mut m: GroupMember, rack: &str) -> GroupMember {
    m.subscription.rack_id = Some(rack.into());
    m
}

#[test]
fn range_rack_aware_and_co_partitioned() {
    // Partition p of each topic is on rack r(p % 2): each member gets partitions on its rack,
    // and both topics are co-partitioned (same partition numbers to the same member).
    let metadata = racked(&[("t1", 4), ("t2", 4)], |p| vec![format!("r{}", p % 2)]);
    let members = [with_rack(member("c1", &["t1", "t2"]), "r1"), with_rack(member("c2", &["t1", "t2"]), "r0")];
    let out = assign(&RangeAssignor, &metadata, &members);
    assert_eq!(of(&out, "c1"), tps(&[("t1", 1), ("t1", 3), ("t2", 1), ("t2", 3)]));
    assert_eq!(of(&out, "c2"), tps(&[("t1", 0), ("t1", 2), ("t2", 0), ("t2", 2)]));
    // All partitions on every rack: rack logic off, plain ranges.
    let metadata = racked(&[("t1", 4)], |_| vec!["r0".into(), "r1".into()]);
    let out = assign(&RangeAssignor, &metadata, &members[..]);
    assert_eq!(of(&out, "c1"), tps(&[("t1", 0), ("t1", 1)]));
    // Balance beats rack alignment: all partitions on r0, one member on r1.
    let metadata = racked(&[("t1", 4)], |p| vec![if p == 0 { "r1".into() } else { "r0".into() }]);
    let out = assign(&RangeAssignor, &metadata, &members[..]);
    assert_eq!(sizes(&out), [2, 2]);
    assert!(of(&out, "c1").contains(&("t1".into(), 0)));
    // An empty rack id counts as no rack (matches everything); as a real rack "" c1 would get
    // nothing in the rack pass and c2 would take t1-0 (on r1).
    let members = [with_rack(member("c1", &["t1"]), ""), with_rack(member("c2", &["t1"]), "r1")];
    let out = assign(&RangeAssignor, &metadata, &members);
    assert_eq!(of(&out, "c1"), tps(&[("t1", 0), ("t1", 1)]));
    assert_eq!(of(&out, "c2"), tps(&[("t1", 2), ("t1", 3)]));
}

// ---------------------------------------------------------------- RoundRobinAssignorTest

#[test]
fn roundrobin_mixed_topics_and_two_consumers() {
    let metadata = md(&[("topic1", 3), ("topic2", 2)]);
    let members = [
        member("consumer1", &["topic1"]),
        member("consumer2", &["topic1", "topic2"]),
        member("consumer3", &["topic1"]),
    ];
    let out = assign(&RoundRobinAssignor, &metadata, &members);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic1", 0)]));
    assert_eq!(of(&out, "consumer2"), tps(&[("topic1", 1), ("topic2", 0), ("topic2", 1)]));
    assert_eq!(of(&out, "consumer3"), tps(&[("topic1", 2)]));
    // testTwoDynamicConsumersTwoTopicsSixPartitions
    let metadata = md(&[("topic1", 3), ("topic2", 3)]);
    let members = [member("consumer1", &["topic1", "topic2"]), member("consumer2", &["topic1", "topic2"])];
    let out = assign(&RoundRobinAssignor, &metadata, &members);
    assert_eq!(out.partitions_of("consumer1"), group(&[("topic1", 0), ("topic1", 2), ("topic2", 1)]));
    assert_eq!(out.partitions_of("consumer2"), group(&[("topic1", 1), ("topic2", 0), ("topic2", 2)]));
}

#[test]
fn roundrobin_static_member_assignment_persistent() {
    let metadata = md(&[("topic1", 3), ("topic2", 3)]);
    let topics = ["topic1", "topic2"];
    let statics = || {
        vec![
            static_member("consumer1", "instance1", &topics),
            static_member("consumer2", "instance2", &topics),
            static_member("consumer3", "instance3", &topics),
        ]
    };
    let mut members = statics();
    members.push(member("consumer4", &topics));
    let out = assign(&RoundRobinAssignor, &metadata, &members);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic1", 0), ("topic2", 1)]));
    assert_eq!(of(&out, "consumer2"), tps(&[("topic1", 1), ("topic2", 2)]));
    assert_eq!(of(&out, "consumer3"), tps(&[("topic1", 2)]));
    assert_eq!(of(&out, "consumer4"), tps(&[("topic2", 0)]));
    let mut members = statics();
    members.push(member("consumer5", &topics));
    let out2 = assign(&RoundRobinAssignor, &metadata, &members);
    assert_eq!(of(&out2, "consumer5"), tps(&[("topic2", 0)]));
    assert_eq!(of(&out2, "consumer1"), of(&out, "consumer1"));
}

#[test]
fn roundrobin_static_after_member_id_changes_and_instance_order() {
    let metadata = md(&[("topic1", 5), ("topic2", 5)]);
    let topics = ["topic1", "topic2"];
    let run = |ids: [&str; 3]| {
        let members: Vec<GroupMember> =
            ids.iter().enumerate().map(|(i, id)| static_member(id, &format!("instance{}", i + 1), &topics)).collect();
        assign(&RoundRobinAssignor, &metadata, &members)
    };
    let out = run(["consumer1", "consumer2", "consumer3"]);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic1", 0), ("topic1", 3), ("topic2", 1), ("topic2", 4)]));
    assert_eq!(of(&out, "consumer2"), tps(&[("topic1", 1), ("topic1", 4), ("topic2", 2)]));
    assert_eq!(of(&out, "consumer3"), tps(&[("topic1", 2), ("topic2", 0), ("topic2", 3)]));
    let swapped = run(["consumer3", "consumer1", "consumer2"]);
    assert_eq!(of(&swapped, "consumer3"), of(&out, "consumer1"));
    assert_eq!(of(&swapped, "consumer1"), of(&out, "consumer2"));
    // AbstractPartitionAssignorTest: instance ids x < y < z decide the order.
    let metadata = md(&[("t", 3)]);
    let members = [static_member("a", "z", &["t"]), static_member("b", "x", &["t"]), static_member("c", "y", &["t"])];
    let out = assign(&RoundRobinAssignor, &metadata, &members);
    assert_eq!((of(&out, "b"), of(&out, "c"), of(&out, "a")), (tps(&[("t", 0)]), tps(&[("t", 1)]), tps(&[("t", 2)])));
}

// ---------------------------------------------------------------- AbstractStickyAssignorTest (both)

#[test]
fn sticky_two_consumers_two_topics_six_partitions() {
    for (_, a) in sticky_both() {
        let metadata = md(&[("topic1", 3), ("topic2", 3)]);
        let members = [member("consumer1", &["topic1", "topic2"]), member("consumer2", &["topic1", "topic2"])];
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(of(&out, "consumer1"), tps(&[("topic1", 0), ("topic1", 2), ("topic2", 1)]));
        assert_eq!(of(&out, "consumer2"), tps(&[("topic1", 1), ("topic2", 0), ("topic2", 2)]));
    }
}

#[test]
fn sticky_multiple_consumers_mixed_topic_subscriptions() {
    // Java: c1=[t1-0,t1-2], c2=[t2-0,t2-1], c3=[t1-1]; ours gives c1 two of topic1 and c3 one
    // (which two is an iteration-order detail).
    for (_, a) in sticky_both() {
        let metadata = md(&[("topic1", 3), ("topic2", 2)]);
        let members = [
            member("consumer1", &["topic1"]),
            member("consumer2", &["topic1", "topic2"]),
            member("consumer3", &["topic1"]),
        ];
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(of(&out, "consumer2"), tps(&[("topic2", 0), ("topic2", 1)]));
        assert_eq!((of(&out, "consumer1").len(), of(&out, "consumer3").len()), (2, 1));
        assert!(out.pending.is_empty());
    }
}

#[test]
fn sticky_add_remove_consumer_one_topic() {
    for (cooperative, a) in sticky_both() {
        let metadata = md(&[("topic", 3)]);
        let out = assign(a.as_ref(), &metadata, &[member("consumer1", &["topic"])]);
        assert_eq!(of(&out, "consumer1").len(), 3);
        let members = [
            claim(cooperative, "consumer1", &["topic"], &[("topic", 0), ("topic", 1), ("topic", 2)], 1),
            member("consumer2", &["topic"]),
        ];
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(of(&out, "consumer1"), tps(&[("topic", 0), ("topic", 1)]));
        if cooperative {
            // topic-2 moves: withheld until consumer1 has revoked it.
            assert!(of(&out, "consumer2").is_empty());
            assert_eq!(out.pending.len(), 1);
            assert_eq!((out.pending[0].partition, out.pending[0].to.as_deref()), (2, Some("consumer2")));
        } else {
            assert_eq!(of(&out, "consumer2"), tps(&[("topic", 2)]));
        }
        // consumer1 leaves: consumer2 gets everything.
        let members = [claim(cooperative, "consumer2", &["topic"], &[("topic", 2)], 2)];
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(of(&out, "consumer2").len(), 3);
    }
}

/// Runs rounds (follow-ups included for cooperative) and returns the settled assignment.
fn settle(
    cooperative: bool,
    a: &dyn PartitionAssignor,
    metadata: &ClusterMetadata,
    mut members: Vec<GroupMember>,
    mut generation: i32,
) -> (Vec<GroupMember>, GroupAssignment) {
    loop {
        let out = assign(a, metadata, &members);
        generation += 1;
        members = members
            .iter()
            .map(|m| {
                let owned: Vec<(String, i32)> = of(&out, &m.member_id);
                let owned: Vec<Tp> = owned.iter().map(|(t, p)| (&*Box::leak(t.clone().into_boxed_str()), *p)).collect();
                claim(
                    cooperative,
                    &m.member_id,
                    &m.subscription.topics.iter().map(String::as_str).collect::<Vec<_>>(),
                    &owned,
                    generation,
                )
            })
            .collect();
        if out.pending.is_empty() {
            return (members, out);
        }
    }
}

#[test]
fn sticky_topic_balance_after_reassignment() {
    // 2 topics x 12 partitions; 1 -> 2 -> 4 -> 2 members: each member holds the same number of
    // partitions of each topic (12/6/3/6).
    for (cooperative, a) in sticky_both() {
        let metadata = md(&[("topic1", 12), ("topic2", 12)]);
        let topics = ["topic1", "topic2"];
        let per_topic = |out: &GroupAssignment, id: &str, t: &str| of(out, id).iter().filter(|(x, _)| x == t).count();
        let (mut members, out) = settle(cooperative, a.as_ref(), &metadata, vec![member("c1", &topics)], 0);
        assert_eq!(per_topic(&out, "c1", "topic1"), 12);
        for (n, expect) in [(2usize, 6usize), (4, 3), (2, 6)] {
            members.truncate(n.min(members.len()));
            while members.len() < n {
                members.push(member(&format!("c{}", members.len() + 1), &topics));
            }
            let (m, out) = settle(cooperative, a.as_ref(), &metadata, members, 10 + n as i32);
            members = m;
            for mm in &members {
                for t in topics {
                    assert_eq!(per_topic(&out, &mm.member_id, t), expect, "{} {t} with {n} members", mm.member_id);
                }
            }
        }
    }
}

#[test]
fn sticky_all_consumers_reach_expected_quota() {
    for (cooperative, a) in sticky_both() {
        let metadata = md(&[("topic", 4)]);
        let members = [
            claim(cooperative, "consumer1", &["topic"], &[("topic", 0), ("topic", 1)], 1),
            claim(cooperative, "consumer2", &["topic"], &[("topic", 2)], 1),
            claim(cooperative, "consumer3", &["topic"], &[], 1),
        ];
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(of(&out, "consumer1"), tps(&[("topic", 0), ("topic", 1)]));
        assert_eq!(of(&out, "consumer2"), tps(&[("topic", 2)]));
        assert_eq!(of(&out, "consumer3"), tps(&[("topic", 3)]));
        assert!(out.pending.is_empty());
    }
}

#[test]
fn sticky_stale_and_missing_generations_lose() {
    // testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration / ...WithNoGeneration
    for (cooperative, a) in sticky_both() {
        for stale in [9, -1] {
            let metadata = md(&[("topic", 3)]);
            let owned = [("topic", 0), ("topic", 1)];
            let members = [
                claim(cooperative, "consumer1", &["topic"], &owned, 10),
                claim(cooperative, "consumer2", &["topic"], &owned, stale),
            ];
            let out = assign(a.as_ref(), &metadata, &members);
            assert_eq!(of(&out, "consumer1"), tps(&owned), "stale generation {stale}");
            assert_eq!(of(&out, "consumer2"), tps(&[("topic", 2)]));
            assert!(out.pending.is_empty());
        }
    }
}

#[test]
fn sticky_same_generation_double_claims() {
    // ...ClaimedByMultipleConsumersInSameGeneration (equal and unequal partitions per consumer)
    for (cooperative, a) in sticky_both() {
        for (n, c1, c2, keep1) in [
            (3, vec![("topic", 0), ("topic", 1)], vec![("topic", 0), ("topic", 2)], vec![("topic", 1)]),
            (
                4,
                vec![("topic", 0), ("topic", 1), ("topic", 3)],
                vec![("topic", 0), ("topic", 2)],
                vec![("topic", 1), ("topic", 3)],
            ),
        ] {
            let metadata = md(&[("topic", n)]);
            let members = [
                claim(cooperative, "consumer1", &["topic"], &c1, 1),
                claim(cooperative, "consumer2", &["topic"], &c2, 1),
                member("consumer3", &["topic"]),
            ];
            let out = assign(a.as_ref(), &metadata, &members);
            assert_eq!(of(&out, "consumer1"), tps(&keep1));
            assert_eq!(of(&out, "consumer2"), tps(&[("topic", 2)]));
            if cooperative {
                // Nobody keeps topic-0 this round; it goes to consumer3 in the follow-up, once
                // both claimers have revoked it: each is named.
                assert!(of(&out, "consumer3").is_empty());
                let pending: Vec<(i32, &str, Option<&str>)> =
                    out.pending.iter().map(|p| (p.partition, p.from.as_str(), p.to.as_deref())).collect();
                assert_eq!(pending, [(0, "consumer1", Some("consumer3")), (0, "consumer2", Some("consumer3"))]);
                let (_, settled) = settle(true, a.as_ref(), &metadata, members.to_vec(), 1);
                assert_eq!(of(&settled, "consumer3"), tps(&[("topic", 0)]));
            } else {
                assert_eq!(of(&out, "consumer3"), tps(&[("topic", 0)]));
            }
        }
    }
}

#[test]
fn sticky_partitions_go_to_the_highest_generation() {
    // testEnsurePartitionsAssignedToHighestGeneration, with overlapping stale claims.
    for (cooperative, a) in sticky_both() {
        let metadata = md(&[("topic", 3), ("topic2", 3), ("topic3", 3)]);
        let all = ["topic", "topic2", "topic3"];
        let members = [
            claim(cooperative, "consumer1", &all, &[("topic", 0), ("topic2", 0), ("topic3", 0)], 10),
            claim(cooperative, "consumer2", &all, &[("topic", 1), ("topic2", 1), ("topic3", 1), ("topic", 0)], 9),
            claim(
                cooperative,
                "consumer3",
                &all,
                &[("topic", 2), ("topic2", 2), ("topic3", 2), ("topic2", 0), ("topic3", 1)],
                8,
            ),
        ];
        let out = assign(a.as_ref(), &metadata, &members);
        for (i, id) in ["consumer1", "consumer2", "consumer3"].iter().enumerate() {
            let i = i as i32;
            assert_eq!(of(&out, id), tps(&[("topic", i), ("topic2", i), ("topic3", i)]), "{id}");
        }
        assert!(out.pending.is_empty());
    }
}

#[test]
fn sticky_same_partition_claimed_with_three_generations() {
    // testSubscriptionNotEqualAndAssignSamePartitionWith3Generation: all permutations.
    for (cooperative, a) in sticky_both() {
        for gens in [[1, 2, 3], [1, 3, 2], [2, 1, 3], [2, 3, 1], [3, 1, 2], [3, 2, 1]] {
            let metadata = md(&[("topic", 6), ("topic1", 1)]);
            let members = [
                claim(cooperative, "c1", &["topic"], &[("topic", 0), ("topic", 2)], gens[0]),
                claim(cooperative, "c2", &["topic"], &[("topic", 1), ("topic", 2)], gens[1]),
                claim(cooperative, "c3", &["topic"], &[("topic", 2), ("topic", 3)], gens[2]),
                member("c4", &["topic1"]),
            ];
            let out = assign(a.as_ref(), &metadata, &members);
            let winner = ["c1", "c2", "c3"][gens.iter().position(|&g| g == 3).unwrap()];
            assert!(of(&out, winner).contains(&("topic".into(), 2)), "{gens:?}");
            for id in ["c1", "c2", "c3"] {
                let n = of(&out, id).len() + out.pending.iter().filter(|p| p.to.as_deref() == Some(id)).count();
                assert!((1..=2).contains(&n), "{id} {n}");
            }
        }
    }
}

#[test]
fn sticky_stickiness_when_a_consumer_leaves() {
    // testStickiness: 4 consumers, 3 partitions; the survivors keep theirs.
    for (cooperative, a) in sticky_both() {
        let metadata = md(&[("topic01", 3)]);
        let members: Vec<GroupMember> = (1..=4).map(|i| member(&format!("consumer0{i}"), &["topic01"])).collect();
        let (members, before) = settle(cooperative, a.as_ref(), &metadata, members, 0);
        let survivors: Vec<GroupMember> = members.into_iter().filter(|m| m.member_id != "consumer01").collect();
        let after = assign(a.as_ref(), &metadata, &survivors);
        for m in &survivors {
            let had = of(&before, &m.member_id);
            assert!(had.iter().all(|tp| of(&after, &m.member_id).contains(tp)), "{} lost a partition", m.member_id);
        }
    }
}

#[test]
fn sticky_deleted_topics() {
    for (_, a) in sticky_both() {
        // testAssignmentUpdatedForDeletedTopic
        let metadata = md(&[("topic01", 1), ("topic03", 100)]);
        let out = assign(a.as_ref(), &metadata, &[member("consumer", &["topic01", "topic02", "topic03"])]);
        assert_eq!(of(&out, "consumer").len(), 101);
        // testNoExceptionThrownWhenOnlySubscribedTopicDeleted
        let out = assign(a.as_ref(), &md(&[]), &[member("consumer", &["topic"])]);
        assert_eq!(out.len(), 1);
        assert!(of(&out, "consumer").is_empty());
    }
}

#[test]
fn sticky_claims_on_partitions_that_no_longer_exist_are_dropped() {
    // KAFKA-21674: topic re-created with fewer partitions. Java double-assigns; we drop the claims.
    for (cooperative, a) in sticky_both() {
        let metadata = md(&[("topic", 2)]);
        let members = [
            claim(cooperative, "c1", &["topic"], &[("topic", 0), ("topic", 2), ("topic", 4)], 3),
            claim(cooperative, "c2", &["topic"], &[("topic", 1), ("topic", 3), ("topic", 5)], 3),
        ];
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(of(&out, "c1"), tps(&[("topic", 0)]));
        assert_eq!(of(&out, "c2"), tps(&[("topic", 1)]));
        assert!(out.pending.is_empty());
    }
}

#[test]
fn sticky_large_uniform_group_two_rounds() {
    // A scaled-down testLargeAssignmentAndGroupWithUniformSubscription (debug build).
    for (cooperative, a) in sticky_both() {
        let topics: Vec<String> = (0..20).map(|i| format!("topic{i}")).collect();
        let metadata = ClusterMetadata::from_counts(topics.iter().map(|t| (t.clone(), 200)));
        let refs: Vec<&str> = topics.iter().map(String::as_str).collect();
        let members: Vec<GroupMember> = (0..100).map(|i| member(&format!("consumer{i:03}"), &refs)).collect();
        let first = assign(a.as_ref(), &metadata, &members);
        assert_eq!(sizes(&first).first(), Some(&40));
        let again: Vec<GroupMember> = members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if i == 0 {
                    return m.clone();
                }
                let mut m = m.clone();
                let owned = first.partitions_of(&m.member_id).to_vec();
                if cooperative {
                    m.subscription.owned_partitions = owned;
                    m.subscription.generation_id = 1;
                } else {
                    let d = StickyUserData { previous_assignment: owned, generation: Some(1) };
                    m.subscription.user_data = Some(d.encode().unwrap().into());
                }
                m
            })
            .collect();
        let second = assign(a.as_ref(), &metadata, &again);
        // Nothing moves: everyone keeps exactly what it had.
        assert_eq!(second.to_map(), first.to_map());
        assert!(second.pending.is_empty());
    }
}

// ---------------------------------------------------------------- StickyAssignorTest

#[test]
fn sticky_schema_backward_compatibility_v0_user_data() {
    let metadata = md(&[("topic", 3)]);
    let v0 = StickyUserData { previous_assignment: group(&[("topic", 0)]), generation: None };
    let mut c1 = member("consumer1", &["topic"]);
    c1.subscription.user_data = Some(v0.encode().unwrap().into());
    let members =
        [c1, eager("consumer2", &["topic"], &[("topic", 1)], 1), eager("consumer3", &["topic"], &[("topic", 2)], 1)];
    let out = assign(&StickyAssignor::new(), &metadata, &members);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic", 0)]));
    assert_eq!(of(&out, "consumer2"), tps(&[("topic", 1)]));
    assert_eq!(of(&out, "consumer3"), tps(&[("topic", 2)]));
}

#[test]
fn sticky_honours_user_data_over_the_owned_field() {
    // testMemberDataWillHonorUserData / testMemberDataWithInconsistentData
    let metadata = md(&[("topic", 2)]);
    let mut c1 = eager("consumer1", &["topic"], &[("topic", 1)], 0);
    c1.subscription.owned_partitions = group(&[("topic", 0)]);
    c1.subscription.generation_id = 1;
    let out = assign(&StickyAssignor::new(), &metadata, &[c1, member("consumer2", &["topic"])]);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic", 1)]));
}

#[test]
fn sticky_user_data_round_trip() {
    let mut a = StickyAssignor::new();
    assert_eq!(a.subscription_user_data(&[]), None);
    a.on_assignment(&Assignment::new(group(&[("t", 0), ("t", 1)])), 7);
    let data = a.subscription_user_data(&[]).unwrap();
    assert_eq!(
        StickyUserData::decode_v1(&data).unwrap(),
        StickyUserData { previous_assignment: group(&[("t", 0), ("t", 1)]), generation: Some(7) }
    );
}

#[test]
fn sticky_multiple_generations() {
    // testAssignmentWithMultipleGenerations2: 3 x 4 -> only c2 (12, gen 2) -> all back with
    // gens 1/2/1: 4/4/4 and c2 keeps 4 of its 12.
    let metadata = md(&[("t", 12)]);
    let c1_old: Vec<Tp> = (0..4).map(|p| ("t", p)).collect();
    let c2_all: Vec<Tp> = (0..12).map(|p| ("t", p)).collect();
    let c3_old: Vec<Tp> = (8..12).map(|p| ("t", p)).collect();
    let members = [eager("c1", &["t"], &c1_old, 1), eager("c2", &["t"], &c2_all, 2), eager("c3", &["t"], &c3_old, 1)];
    let out = assign(&StickyAssignor::new(), &metadata, &members);
    assert_eq!(sizes(&out), [4, 4, 4]);
    assert_eq!(of(&out, "c2").len(), 4);
}

// ---------------------------------------------------------------- CooperativeStickyAssignorTest

#[test]
fn cooperative_generation_user_data() {
    // testEncodeAndDecodeGeneration / testDecodeGeneration
    let mut a = CooperativeStickyAssignor::new();
    let before = a.subscription_user_data(&[]).unwrap();
    assert_eq!(CooperativeStickyUserData::decode(&before).unwrap().generation, -1);
    a.on_assignment(&Assignment::default(), 10);
    assert_eq!(CooperativeStickyUserData::decode(&a.subscription_user_data(&[]).unwrap()).unwrap().generation, 10);
    assert_eq!(CooperativeStickyUserData::java_generation(None), None);
}

#[test]
fn cooperative_old_and_new_subscription_versions() {
    // testAssignorWithOldVersionSubscriptions: a v1 member (generation in userData) with v2 ones.
    let metadata = md(&[("topic", 3)]);
    let mut v1 = member("consumer1", &["topic"]);
    v1.subscription.owned_partitions = group(&[("topic", 0)]);
    v1.subscription.user_data = Some(CooperativeStickyUserData { generation: 1 }.encode());
    let members = [v1, coop("consumer2", &["topic"], &[("topic", 1)], 1), member("consumer3", &["topic"])];
    let out = assign(&CooperativeStickyAssignor::new(), &metadata, &members);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic", 0)]));
    assert_eq!(of(&out, "consumer2"), tps(&[("topic", 1)]));
    assert_eq!(of(&out, "consumer3"), tps(&[("topic", 2)]));
}

#[test]
fn cooperative_field_generation_wins_over_user_data() {
    // testMemberDataWithEmptyPartitionsAndHigherGeneration: the v2+ field is used.
    let metadata = md(&[("topic", 2)]);
    let mut c1 = coop("consumer1", &["topic"], &[("topic", 0), ("topic", 1)], 5);
    c1.subscription.user_data = Some(CooperativeStickyUserData { generation: 1 }.encode());
    let c2 = coop("consumer2", &["topic"], &[("topic", 0), ("topic", 1)], 3);
    let out = assign(&CooperativeStickyAssignor::new(), &metadata, &[c1, c2]);
    assert_eq!(of(&out, "consumer1"), tps(&[("topic", 0)]));
    assert_eq!(out.pending.len(), 1);
    assert_eq!(out.pending[0].from, "consumer1");
}

/// Java `testRackAwareAssignmentWithUniformSubscription` / `...NonEqualSubscription` idea:
/// t1:6, t2:7, t3:2, replication factor 1, partition `p` of each topic on rack `r{p % 3}`,
/// consumers c1/c2/c3 on r0/r1/r2. Counts a partition held off its consumer's rack.
fn rack_mismatches(metadata: &ClusterMetadata, members: &[GroupMember], out: &GroupAssignment) -> usize {
    members
        .iter()
        .map(|m| {
            let rack = m.subscription.rack_id.clone().unwrap_or_default();
            of(out, &m.member_id)
                .iter()
                .filter(|(t, p)| !metadata.topics[t].partition_racks[*p as usize].contains(&rack))
                .count()
        })
        .sum()
}

fn rack_case(c3_topics: &[&str]) -> (ClusterMetadata, Vec<GroupMember>) {
    let metadata = racked(&[("t1", 6), ("t2", 7), ("t3", 2)], |p| vec![format!("r{}", p % 3)]);
    let all = ["t1", "t2", "t3"];
    let members = vec![
        with_rack(member("c1", &all), "r0"),
        with_rack(member("c2", &all), "r1"),
        with_rack(member("c3", c3_topics), "r2"),
    ];
    (metadata, members)
}

#[test]
fn sticky_rack_aware_uniform_subscription() {
    // Racks hold r0: 6 partitions, r1: 5, r2: 4; quotas 5/5/5. At best one r0 partition goes to
    // c3, every other partition stays on its rack: exactly 1 mismatch.
    let (metadata, members) = rack_case(&["t1", "t2", "t3"]);
    for (_, a) in sticky_both() {
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(sizes(&out), [5, 5, 5], "{}", a.name());
        assert_eq!(rack_mismatches(&metadata, &members, &out), 1, "{}", a.name());
        // Without racks the same group has more: rack awareness is what removes them.
        let blind: Vec<GroupMember> = members.iter().map(|m| member(&m.member_id, &["t1", "t2", "t3"])).collect();
        let plain = assign(a.as_ref(), &metadata, &blind);
        assert!(rack_mismatches(&metadata, &members, &plain) > 1);
    }
}

#[test]
fn sticky_rack_aware_moves_owned_partitions_for_locality() {
    // c1 (r0) owned everything on r1 and r2 and c2 (r1) everything on r0, at generation 1:
    // balance allows all to be swapped onto their racks, so rack alignment beats stickiness.
    let metadata = racked(&[("t", 4)], |p| vec![format!("r{}", p % 2)]);
    let owned_c1: [Tp; 2] = [("t", 1), ("t", 3)];
    let owned_c2: [Tp; 2] = [("t", 0), ("t", 2)];
    for (cooperative, a) in sticky_both() {
        let members = [
            with_rack(claim(cooperative, "c1", &["t"], &owned_c1, 1), "r0"),
            with_rack(claim(cooperative, "c2", &["t"], &owned_c2, 1), "r1"),
        ];
        let out = assign(a.as_ref(), &metadata, &members);
        if cooperative {
            // Every partition changes owner: all four withheld for one round.
            assert!(of(&out, "c1").is_empty() && of(&out, "c2").is_empty());
            assert_eq!(out.pending.len(), 4);
        } else {
            assert_eq!(of(&out, "c1"), tps(&[("t", 0), ("t", 2)]));
            assert_eq!(of(&out, "c2"), tps(&[("t", 1), ("t", 3)]));
        }
    }
}

#[test]
fn sticky_rack_aware_non_equal_subscription() {
    // c3 (r2) takes only t1 and t3: it must hold 5 (15 partitions, 3 members) of those 8, and
    // only t1-2 and t1-5 are on r2: 3 mismatches at c3. t2-2 and t2-5 (r2) must go to c1 or
    // c2: 2 more. Minimum 5.
    let (metadata, members) = rack_case(&["t1", "t3"]);
    for (_, a) in sticky_both() {
        let out = assign(a.as_ref(), &metadata, &members);
        assert_eq!(sizes(&out), [5, 5, 5], "{}", a.name());
        assert_eq!(rack_mismatches(&metadata, &members, &out), 5, "{}", a.name());
    }
}

#[test]
fn sticky_racks_ignored_when_no_rack_matches_or_all_partitions_share_racks() {
    // Consumer racks that match no replica rack, and replicas everywhere: same as no racks.
    for metadata in [
        racked(&[("t1", 6), ("t2", 7)], |p| vec![format!("x{}", p % 3)]),
        racked(&[("t1", 6), ("t2", 7)], |_| vec!["r0".into(), "r1".into(), "r2".into()]),
    ] {
        let plain: Vec<GroupMember> = ["c1", "c2", "c3"].iter().map(|c| member(c, &["t1", "t2"])).collect();
        let racked_members: Vec<GroupMember> =
            plain.iter().zip(["r0", "r1", "r2"]).map(|(m, r)| with_rack(m.clone(), r)).collect();
        for (_, a) in sticky_both() {
            assert_eq!(assign(a.as_ref(), &metadata, &racked_members), assign(a.as_ref(), &metadata, &plain));
        }
    }
}
