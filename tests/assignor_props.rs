//! Property tests of the built-in assignors over random groups: validity, completeness,
//! balance, cooperative validity, minimal movement and convergence (uniform groups),
//! determinism and independence from the input order of members; the same with KIP-881 racks
//! (minimal movement excepted: rack alignment may move owned partitions, as Java).

mod assignor_common;

use std::collections::BTreeMap;

use assignor_common::*;
use kafka_consumer_protocol::assignor::{
    builtin, AssignError, ClusterMetadata, GroupAssignment, GroupMember, PartitionAssignor, RangeAssignor,
};
use kafka_consumer_protocol::{CooperativeStickyUserData, StickyUserData, Subscription, TopicPartitions};
use kcp_testkit::assignor_shapes;
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Group {
    metadata: ClusterMetadata,
    members: Vec<GroupMember>,
    uniform: bool,
    /// Members and partitions carry racks (KIP-881): rack alignment may move owned partitions.
    racks: bool,
}

/// Random claims: each member may claim a random set of (topic, partition) pairs, including
/// partitions that no longer exist, with a generation in -1..=3.
fn group(uniform: bool) -> impl Strategy<Value = Group> {
    let topics = prop::collection::vec(0i32..12, 1..6);
    (topics, 1usize..8, any::<u64>()).prop_map(move |(counts, nm, seed)| {
        let mut x = seed | 1;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        };
        let names: Vec<String> = (0..counts.len()).map(|i| format!("t{i}")).collect();
        let metadata = ClusterMetadata::from_counts(names.iter().cloned().zip(counts.iter().copied()));
        let members = (0..nm)
            .map(|i| {
                let topics: Vec<String> =
                    if uniform { names.clone() } else { names.iter().filter(|_| rnd(3) > 0).cloned().collect() };
                let mut owned: Vec<TopicPartitions> = Vec::new();
                for (t, &c) in names.iter().zip(&counts) {
                    let ps: Vec<i32> = (0..c + 2).filter(|_| rnd(u64::from(nm as u32) + 1) == 0).collect();
                    if !ps.is_empty() {
                        owned.push(TopicPartitions::new(t.clone(), ps));
                    }
                }
                let generation = rnd(5) as i32 - 1;
                GroupMember {
                    member_id: format!("m{}", rnd(1000) * 10 + i as u64),
                    group_instance_id: (rnd(4) == 0).then(|| format!("i{}", rnd(100))),
                    subscription: Subscription::new(topics).with_owned_partitions(owned).with_generation_id(generation),
                }
            })
            .collect();
        Group { metadata, members, uniform, racks: false }
    })
}

/// `group`, with replica racks (1-2 of r0..r2, sometimes none) on every partition and a rack
/// (r0..r3, empty, or none) on every member.
fn racked_group(uniform: bool) -> impl Strategy<Value = Group> {
    (group(uniform), any::<u64>()).prop_map(|(mut g, seed)| {
        let mut x = seed | 1;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        };
        for info in g.metadata.topics.values_mut() {
            info.partition_racks = (0..info.partitions)
                .map(|_| match rnd(6) {
                    0 => Vec::new(),
                    1 | 2 => {
                        let a = rnd(3);
                        vec![format!("r{a}"), format!("r{}", (a + 1 + rnd(2)) % 3)]
                    }
                    _ => vec![format!("r{}", rnd(3))],
                })
                .collect();
        }
        for m in &mut g.members {
            m.subscription.rack_id = match rnd(7) {
                0 => None,
                1 => Some(String::new()),
                r => Some(format!("r{}", (r - 2) % 4)),
            };
        }
        g.racks = true;
        g
    })
}

/// The same claims as the eager sticky assignor reads them (userData).
fn as_sticky(members: &[GroupMember]) -> Vec<GroupMember> {
    members
        .iter()
        .map(|m| {
            let mut m = m.clone();
            let data = StickyUserData {
                previous_assignment: std::mem::take(&mut m.subscription.owned_partitions),
                generation: Some(m.subscription.generation_id),
            };
            m.subscription.user_data = Some(data.encode().unwrap().into());
            m.subscription.generation_id = -1;
            m
        })
        .collect()
}

fn members_for(strategy: &str, members: &[GroupMember]) -> Vec<GroupMember> {
    if strategy == "sticky" {
        as_sticky(members)
    } else {
        members.to_vec()
    }
}

/// The fewest partitions a balanced uniform assignment must take from their valid owners.
fn minimal_moves(valid: &BTreeMap<(String, i32), String>, members: &[GroupMember], total: usize) -> usize {
    let n = members.len();
    let (min_q, rem) = (total / n, total % n);
    let mut owned: Vec<usize> = members.iter().map(|m| valid.values().filter(|o| **o == m.member_id).count()).collect();
    owned.sort_unstable_by(|a, b| b.cmp(a));
    owned.iter().enumerate().map(|(i, &c)| c.saturating_sub(min_q + usize::from(i < rem))).sum()
}

fn check_all(g: &Group) -> Result<(), TestCaseError> {
    for strategy in ["range", "roundrobin", "sticky", "cooperative-sticky"] {
        let assignor = builtin(strategy).unwrap();
        let members = members_for(strategy, &g.members);
        let out = assignor.assign(&g.metadata, &members).unwrap();
        // Read in place from the wire form: the same assignment.
        let bytes = assignor_shapes::encoded(&members);
        prop_assert_eq!(&assignor.assign_views(&g.metadata, &assignor_shapes::views(&members, &bytes)).unwrap(), &out);
        check_valid(&g.metadata, &members, &out).map_err(TestCaseError::fail)?;
        check_complete(&g.metadata, &members, &out).map_err(TestCaseError::fail)?;
        // Deterministic, and independent of the order members are listed in.
        prop_assert_eq!(&assignor.assign(&g.metadata, &members).unwrap(), &out);
        let mut reversed = members.clone();
        reversed.reverse();
        prop_assert_eq!(
            &assignor.assign(&g.metadata, &reversed).unwrap(),
            &out,
            "{} depends on member order",
            strategy
        );
        if strategy == "range" || strategy == "roundrobin" {
            prop_assert!(out.pending.is_empty());
            continue;
        }
        let cooperative = strategy == "cooperative-sticky";
        let subs = subscribed_sets(&g.metadata, &members);
        // Balance and minimal stickiness of the round's target: what it assigns, and (cooperative)
        // what it withholds, checked where the rebalance ends below (`to` names that end).
        let target = sets(&out);
        if !cooperative {
            check_balanced(&subs, &target).map_err(TestCaseError::fail)?;
            prop_assert!(out.pending.is_empty());
        }
        if g.uniform && !g.racks && out.pending.is_empty() {
            let valid = valid_claims(&g.metadata, &members, cooperative);
            let total = g.metadata.topics.values().map(|t| t.partitions as usize).sum::<usize>();
            let s = &target;
            let moved = valid.iter().filter(|(tp, o)| !s[*o].contains(*tp)).count();
            prop_assert_eq!(moved, minimal_moves(&valid, &members, total), "{} is not minimally sticky", strategy);
        }
        if cooperative {
            check_cooperative(&members, &out).map_err(TestCaseError::fail)?;
            // Follow-up rounds until nothing is pending.
            let first = out.pending.clone();
            let mut round = out;
            let mut current = members;
            let mut follow_ups = 0;
            while !round.pending.is_empty() {
                follow_ups += 1;
                prop_assert!(follow_ups <= 4, "no convergence after 4 follow-up rounds");
                current = next_round(&current, &round, 100 + follow_ups);
                round = assignor.assign(&g.metadata, &current).unwrap();
                check_valid(&g.metadata, &current, &round).map_err(TestCaseError::fail)?;
                check_complete(&g.metadata, &current, &round).map_err(TestCaseError::fail)?;
                check_cooperative(&current, &round).map_err(TestCaseError::fail)?;
            }
            // Uniform groups settle within two follow-ups, with racks too (these groups are small
            // enough for the sticky assignors' exact polish).
            if g.uniform {
                prop_assert!(follow_ups <= 2, "uniform group needed {} follow-up rounds", follow_ups);
            }
            let end = sets(&round);
            check_balanced(&subscribed_sets(&g.metadata, &current), &end).map_err(TestCaseError::fail)?;
            // `to` is where the withheld partition is once the rebalance is over: the leader's
            // look-ahead plays each follow-up round on exactly the state the members rejoin with
            // (what they were given, at one next generation), as this replay does (issue 27).
            for pp in &first {
                let to = pp.to.as_ref().expect("these groups end within the leader's look-ahead");
                prop_assert!(
                    end[to].contains(&(pp.topic.clone(), pp.partition)),
                    "{}-{} pending to {} ends elsewhere",
                    pp.topic,
                    pp.partition,
                    to
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn uniform_groups(g in group(true)) {
        check_all(&g)?;
    }

    #[test]
    fn mixed_groups(g in group(false)) {
        check_all(&g)?;
    }

    #[test]
    fn uniform_groups_with_racks(g in racked_group(true)) {
        check_all(&g)?;
    }

    #[test]
    fn mixed_groups_with_racks(g in racked_group(false)) {
        check_all(&g)?;
    }
}

/// A custom assignor that implements only `assign`: the trait's `assign_views` copies the views
/// into owned members and calls it.
struct OnlyAssign;

impl PartitionAssignor for OnlyAssign {
    fn name(&self) -> &str {
        "only-assign"
    }

    fn assign(&self, metadata: &ClusterMetadata, members: &[GroupMember]) -> Result<GroupAssignment, AssignError> {
        RangeAssignor.assign(metadata, members)
    }
}

#[test]
fn default_assign_views_decodes_and_assigns() {
    let metadata = ClusterMetadata::from_counts([("a", 3), ("b", 2)]);
    let members: Vec<GroupMember> = [("m1", vec!["a", "b"]), ("m2", vec!["a"]), ("m3", vec!["b", "a"])]
        .into_iter()
        .map(|(id, topics)| GroupMember {
            member_id: id.into(),
            group_instance_id: (id == "m3").then(|| "static".into()),
            subscription: Subscription::new(topics),
        })
        .collect();
    let bytes = assignor_shapes::encoded(&members);
    let out = OnlyAssign.assign_views(&metadata, &assignor_shapes::views(&members, &bytes)).unwrap();
    assert_eq!(out, RangeAssignor.assign(&metadata, &members).unwrap());
    // The static member sorts first in range's member order: partition 0 of each topic.
    assert_eq!(out.partitions_of("m3"), [TopicPartitions::new("a", [0]), TopicPartitions::new("b", [0])]);
}

#[test]
fn cooperative_user_data_generation_is_used_without_the_field() {
    // v1-style member: owned partitions in the field, generation only in userData.
    let metadata = ClusterMetadata::from_counts([("t", 2)]);
    let old = GroupMember {
        member_id: "old".into(),
        group_instance_id: None,
        subscription: Subscription::new(["t"])
            .with_owned_partitions(vec![TopicPartitions::new("t", [0, 1])])
            .with_user_data(Some(CooperativeStickyUserData { generation: 5 }.encode())),
    };
    let stale = claimer("stale", &["t"], vec![TopicPartitions::new("t", [0, 1])], 4);
    let out = builtin("cooperative-sticky").unwrap().assign(&metadata, &[old, stale]).unwrap();
    // Generation 5 (userData) beats 4: "old" owns both, keeps one, hands the other over.
    assert_eq!(out.partitions_of("old"), [TopicPartitions::new("t", [0])]);
    assert_eq!(out.pending.len(), 1);
    assert_eq!((out.pending[0].from.as_str(), out.pending[0].to.as_deref()), ("old", Some("stale")));
}

/// A member subscribed to `topics` claiming `owned` at `generation`.
fn claimer(id: &str, topics: &[&str], owned: Vec<TopicPartitions>, generation: i32) -> GroupMember {
    GroupMember {
        member_id: id.into(),
        group_instance_id: None,
        subscription: Subscription::new(topics.to_vec()).with_owned_partitions(owned).with_generation_id(generation),
    }
}

#[test]
fn cooperative_gives_unknown_but_owned_partitions_back_to_their_claimer() {
    // KIP-429 leader step 2.6: "gone" is missing from the metadata (deleted, or the leader's
    // metadata is stale). Highest generation wins; a tie at the highest returns it to nobody;
    // a member no longer subscribed gets nothing back; a known topic's missing partition id is
    // not returned (KAFKA-21674).
    let metadata = ClusterMetadata::from_counts([("t", 2)]);
    let members = [
        claimer("a", &["t", "gone"], vec![TopicPartitions::new("gone", [0, 1, 2]), TopicPartitions::new("t", [5])], 3),
        claimer("b", &["t", "gone"], vec![TopicPartitions::new("gone", [1, 2])], 4),
        claimer("c", &["t", "gone"], vec![TopicPartitions::new("gone", [2, 3])], 4),
        claimer("d", &["t"], vec![TopicPartitions::new("gone", [4])], 9),
    ];
    let out = builtin("cooperative-sticky").unwrap().assign(&metadata, &members).unwrap();
    let gone = |m: &str| -> Vec<i32> {
        out.partitions_of(m).into_iter().filter(|g| g.topic == "gone").flat_map(|g| g.partitions).collect()
    };
    assert_eq!(gone("a"), [0]);
    assert_eq!(gone("b"), [1]);
    assert_eq!(gone("c"), [3], "gone-2 is tied between b and c at generation 4");
    assert!(gone("d").is_empty(), "d no longer subscribes to gone");
    // The known topic is still assigned completely and once, and t-5 went nowhere.
    check_valid(&metadata, &members, &out).unwrap();
    check_complete(&metadata, &members, &out).unwrap();
    let t: usize = out.members().flat_map(|m| m.topics().filter(|(t, _)| *t == "t").map(|(_, p)| p.len())).sum();
    assert_eq!(t, 2);
    // The eager assignors never hand back what the metadata does not have (sticky reads the
    // same claims from its userData).
    let eager: Vec<GroupMember> = members
        .iter()
        .cloned()
        .map(|mut m| {
            let data = StickyUserData {
                previous_assignment: std::mem::take(&mut m.subscription.owned_partitions),
                generation: Some(m.subscription.generation_id),
            };
            m.subscription.user_data = Some(data.encode().unwrap().into());
            m
        })
        .collect();
    for name in ["sticky", "range", "roundrobin"] {
        let out = builtin(name).unwrap().assign(&metadata, &eager).unwrap();
        assert!(out.members().all(|m| m.topics().all(|(t, _)| t == "t")), "{name}: {out:?}");
    }
}
