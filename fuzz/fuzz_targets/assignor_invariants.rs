//! The built-in assignors on arbitrary groups: never panic, and every result is valid (only
//! subscribed, existing partitions; none twice), complete (everything assigned or pending),
//! deterministic, balanced (sticky assignors) and cooperatively valid (nothing revoked from one
//! member is given to another in the same round); and reading the members in place from their
//! encoded subscriptions (`assign_views`) gives the same result.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use arbitrary::Arbitrary;
use kafka_consumer_protocol::assignor::{
    builtin, ClusterMetadata, GroupAssignment, GroupMember, GroupMemberView, TopicInfo,
};
use kafka_consumer_protocol::{Subscription, SubscriptionView, TopicPartitions, Version};

#[derive(Arbitrary, Debug)]
struct Input {
    topics: Vec<(u8, Vec<u8>)>,
    members: Vec<Member>,
}

#[derive(Arbitrary, Debug)]
struct Member {
    id: u8,
    instance: Option<u8>,
    topics: Vec<u8>,
    owned: Vec<(u8, Vec<i32>)>,
    generation: i32,
    user_data: Option<Vec<u8>>,
    rack: Option<u8>,
}

type Sets = BTreeMap<String, BTreeSet<(String, i32)>>;

fn sets(a: &GroupAssignment) -> Sets {
    a.to_map()
        .iter()
        .map(|(m, x)| {
            let s = x
                .assigned_partitions
                .iter()
                .flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.clone(), p)))
                .collect();
            (m.clone(), s)
        })
        .collect()
}

fn build(input: &Input) -> (ClusterMetadata, Vec<GroupMember>) {
    let mut metadata = ClusterMetadata::default();
    for (count, racks) in input.topics.iter().take(8) {
        let n = i32::from(*count % 40);
        let name = format!("t{}", metadata.topics.len());
        let partition_racks =
            (0..n as usize).map(|p| racks.get(p).map(|r| vec![format!("r{}", r % 3)]).unwrap_or_default()).collect();
        metadata.topics.insert(name, TopicInfo { partitions: n, partition_racks });
    }
    let mut seen = BTreeSet::new();
    let members = input
        .members
        .iter()
        .take(12)
        .filter(|m| seen.insert(m.id))
        .map(|m| GroupMember {
            member_id: format!("m{}", m.id),
            group_instance_id: m.instance.map(|i| format!("i{}", i % 4)),
            subscription: {
                // Topic 8 and 9 do not exist.
                let mut s = Subscription::new(m.topics.iter().take(10).map(|t| format!("t{}", t % 10)))
                    .with_user_data(m.user_data.clone().map(Into::into))
                    .with_owned_partitions(
                        m.owned
                            .iter()
                            .take(10)
                            .map(|(t, ps)| {
                                TopicPartitions::new(
                                    format!("t{}", t % 10),
                                    ps.iter().take(50).map(|p| p % 64).collect::<Vec<_>>(),
                                )
                            })
                            .collect(),
                    )
                    .with_generation_id(m.generation % 8);
                s.rack_id = m.rack.map(|r| format!("r{}", r % 4));
                s
            },
        })
        .collect();
    (metadata, members)
}

fn check(metadata: &ClusterMetadata, members: &[GroupMember], strategy: &str, out: &GroupAssignment) {
    let subs: BTreeMap<&str, BTreeSet<&str>> = members
        .iter()
        .map(|m| {
            let s = m
                .subscription
                .topics
                .iter()
                .filter(|t| metadata.topics.get(*t).is_some_and(|i| i.partitions > 0))
                .map(String::as_str)
                .collect();
            (m.member_id.as_str(), s)
        })
        .collect();
    let map = out.to_map();
    assert_eq!(map.len(), members.len());
    let mut seen = BTreeSet::new();
    for (m, a) in &map {
        for g in &a.assigned_partitions {
            if !metadata.topics.contains_key(&g.topic) {
                // KIP-429 step 2.6: a claimed partition of an unknown topic goes back to its claimer.
                assert_eq!(strategy, "cooperative-sticky", "{m} got unknown {}", g.topic);
                let me = members.iter().find(|x| x.member_id == *m).unwrap();
                assert!(me.subscription.topics.contains(&g.topic), "{m} got unsubscribed unknown {}", g.topic);
                for &p in &g.partitions {
                    let claimed = me
                        .subscription
                        .owned_partitions
                        .iter()
                        .any(|o| o.topic == g.topic && o.partitions.contains(&p));
                    assert!(claimed, "{m} got unclaimed unknown {}-{p}", g.topic);
                    assert!(seen.insert((g.topic.clone(), p)), "{}-{p} twice", g.topic);
                }
                continue;
            }
            assert!(subs[m.as_str()].contains(g.topic.as_str()), "{m} got unsubscribed {}", g.topic);
            for &p in &g.partitions {
                assert!(p >= 0 && p < metadata.topics[&g.topic].partitions, "nonexistent {}-{p}", g.topic);
                assert!(seen.insert((g.topic.clone(), p)), "{}-{p} twice", g.topic);
            }
        }
    }
    // A partition claimed at the same generation by several members is pending once per member
    // that must revoke it, always towards the same member.
    let mut pending: BTreeMap<(String, i32), (&Option<String>, BTreeSet<&str>)> = BTreeMap::new();
    for pp in &out.pending {
        assert!(strategy == "cooperative-sticky", "pending from {strategy}");
        let tp = (pp.topic.clone(), pp.partition);
        assert!(!seen.contains(&tp), "{}-{} pending and assigned", pp.topic, pp.partition);
        let (to, from) = pending.entry(tp).or_insert((&pp.to, BTreeSet::new()));
        assert_eq!(*to, &pp.to, "{}-{} pending towards two members", pp.topic, pp.partition);
        assert!(from.insert(&pp.from), "{}-{} pending twice from {}", pp.topic, pp.partition, pp.from);
        assert_ne!(pp.to.as_deref(), Some(pp.from.as_str()), "{}-{} pending from its own target", pp.topic, pp.partition);
    }
    seen.extend(pending.into_keys());
    for t in subs.values().flatten() {
        for p in 0..metadata.topics[*t].partitions {
            assert!(seen.contains(&(t.to_string(), p)), "{t}-{p} neither assigned nor pending");
        }
    }
    if strategy.contains("sticky") {
        // Balance of the target (hand-overs counted at their destination).
        let mut target = sets(out);
        // Returned partitions of unknown topics are outside the balance.
        for set in target.values_mut() {
            set.retain(|(t, _)| metadata.topics.contains_key(t));
        }
        for pp in &out.pending {
            target.get_mut(pp.to.as_deref().unwrap()).unwrap().insert((pp.topic.clone(), pp.partition));
        }
        for (a, sa) in &target {
            for (b, sb) in &target {
                if sb.len() + 2 <= sa.len() {
                    assert!(
                        !sa.iter().any(|(t, _)| subs[b.as_str()].contains(t.as_str())),
                        "unbalanced: {b} could take from {a}"
                    );
                }
            }
        }
    }
    if strategy == "cooperative-sticky" {
        let s = sets(out);
        let owned: BTreeMap<&str, BTreeSet<(String, i32)>> = members
            .iter()
            .map(|m| {
                let set = m
                    .subscription
                    .owned_partitions
                    .iter()
                    .flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.clone(), p)))
                    .collect();
                (m.member_id.as_str(), set)
            })
            .collect();
        let revoked: BTreeSet<&(String, i32)> =
            members.iter().flat_map(|m| owned[m.member_id.as_str()].difference(&s[&m.member_id])).collect();
        for m in members {
            for tp in s[&m.member_id].difference(&owned[m.member_id.as_str()]) {
                assert!(!revoked.contains(tp), "{tp:?} revoked and given to {} in one round", m.member_id);
            }
        }
    }
}

libfuzzer_sys::fuzz_target!(|input: Input| {
    let (metadata, members) = build(&input);
    let encoded: Vec<Vec<u8>> = members.iter().map(|m| m.subscription.encode(Version::V3).unwrap()).collect();
    let views: Vec<GroupMemberView<'_>> = members
        .iter()
        .zip(&encoded)
        .map(|(m, bytes)| GroupMemberView {
            member_id: &m.member_id,
            group_instance_id: m.group_instance_id.as_deref(),
            subscription: SubscriptionView::decode(bytes).unwrap(),
        })
        .collect();
    for strategy in ["range", "roundrobin", "sticky", "cooperative-sticky"] {
        let assignor = builtin(strategy).unwrap();
        let out = assignor.assign(&metadata, &members).expect("unique member ids are valid input");
        check(&metadata, &members, strategy, &out);
        assert_eq!(assignor.assign(&metadata, &members).unwrap(), out, "{strategy} not deterministic");
        assert_eq!(assignor.assign_views(&metadata, &views).unwrap(), out, "{strategy}: assign_views differs");
    }
});
