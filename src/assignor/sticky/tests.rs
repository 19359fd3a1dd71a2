//! The sticky assignors' unit tests that reach into the round (the candidates, the previous
//! owner, the fast path against the general path).

use bytes::Bytes;

use super::claims::resolve_claims;
use super::exact::keep_and_place;
use super::heuristics::SubBits;
use super::racks::OffRack;
use super::round::fresh_uniform;
use super::target::balanced;
use super::{assign_sticky, assign_sticky_with, CooperativeStickyAssignor};
use crate::assignor::common::{member_id_order, Member, Topics};
use crate::assignor::{ClusterMetadata, GroupMember, PartitionAssignor, PendingPartition};
use crate::{CooperativeStickyUserData, StickyUserData, Subscription, TopicPartitions};

fn rack_member(id: &str, rack: &str, topics: &[&str]) -> GroupMember {
    let mut sub = Subscription::new(topics.iter().map(|t| t.to_string()));
    sub.rack_id = Some(rack.into());
    GroupMember { member_id: id.into(), group_instance_id: None, subscription: sub }
}

fn racked(partitions: &[&[&str]]) -> ClusterMetadata {
    let mut metadata = ClusterMetadata::from_counts([("t", partitions.len() as i32)]);
    let info = metadata.topics.get_mut("t").unwrap();
    info.partition_racks = partitions.iter().map(|r| r.iter().map(|x| x.to_string()).collect()).collect();
    metadata
}

/// A member on a rack that holds no replica counts every partition as off its rack (Java's
/// `racksMismatch`), so it gets the smaller share: with Java's rack logic on (replica racks
/// differ) and off (every partition on rack "a").
#[test]
fn a_member_on_a_rack_without_replicas_gets_the_smaller_share() {
    for metadata in [racked(&[&["a"], &["b"], &["a"]]), racked(&[&["a"], &["a"], &["a"]])] {
        // "m1" ranks first: rack-blind, it would get the extra partition.
        let members = [rack_member("m1", "elsewhere", &["t"]), rack_member("m2", "a", &["t"])];
        for cooperative in [false, true] {
            let out = assign_sticky(&metadata, &Member::all_owned(&members), cooperative).unwrap();
            let sizes: Vec<usize> =
                ["m1", "m2"].iter().map(|m| out.partitions_of(m).iter().map(|g| g.partitions.len()).sum()).collect();
            assert_eq!(sizes, [1, 2], "{metadata:?} cooperative {cooperative}");
        }
    }
}

fn claiming(id: &str, topics: &[&str], owned: &[i32], generation: i32, cooperative: bool) -> GroupMember {
    let mut sub = Subscription::new(topics.iter().map(|t| t.to_string()));
    let owned = vec![TopicPartitions::new("t", owned)];
    if cooperative {
        sub = sub.with_owned_partitions(owned).with_generation_id(generation);
    } else {
        let data = StickyUserData { previous_assignment: owned, generation: Some(generation) };
        sub = sub.with_user_data(Bytes::from(data.encode().unwrap()));
    }
    GroupMember { member_id: id.into(), group_instance_id: None, subscription: sub }
}

/// The candidate that keeps every claim places the rest for the lowest sum of squared
/// sizes, and that alone is not balance: here (t0-0 free, the state a cooperative follow-up
/// round of `sim_random`'s seed 5217 reached) t0-0 on m5 or on m4 give the same sum, but on
/// m5 it leaves m4 (t0 and t1) empty while m0 holds two partitions of t1. Such a candidate
/// is never taken.
#[test]
fn a_candidate_that_is_not_balanced_is_never_taken() {
    let metadata = ClusterMetadata::from_counts([("t0", 2), ("t1", 4)]);
    let member = |id: &str, topics: &[&str], owned: &[(&str, &[i32])]| {
        let owned = owned.iter().map(|(t, p)| TopicPartitions::new(*t, p.to_vec())).collect();
        let sub =
            Subscription::new(topics.iter().map(|t| t.to_string())).with_owned_partitions(owned).with_generation_id(4);
        GroupMember { member_id: id.into(), group_instance_id: None, subscription: sub }
    };
    // The ids the simulated broker gave (Java's order depends on them).
    let members = [
        member("m0-4", &["t1"], &[("t1", &[0, 1])]),
        member("m1-1", &["t0"], &[("t0", &[1])]),
        member("m2-3", &["t1"], &[("t1", &[3])]),
        member("m3-2", &["t0", "t1"], &[("t1", &[2])]),
        member("m4-6", &["t0", "t1"], &[]),
        member("m5-5", &["t0"], &[]),
    ];
    let owned = Member::all_owned(&members);
    let topics = Topics::new(&metadata, &owned).unwrap();
    let subs_by_member = topics.subscriptions(&owned);
    let rank_to_member = member_id_order(&owned);
    let subs: Vec<&Vec<u32>> = rank_to_member.iter().map(|&m| &subs_by_member[m as usize]).collect();
    let claims = resolve_claims(&topics, &owned, &rank_to_member, true);
    let off_rack = OffRack::new(None, &topics, &owned, &rank_to_member);
    let bits = SubBits::new(&subs, topics.len());
    let kept = keep_and_place(&topics, &subs, &bits, &claims, &off_rack, false).unwrap();
    let rank = |id: &str| rank_to_member.iter().position(|&m| members[m as usize].member_id == id).unwrap() as u32;
    // Flat partition 0 is t0-0.
    assert_eq!(kept.ranks()[0], rank("m5-5"));
    assert!(!balanced(kept.ranks(), &topics, &subs));
    // Ours goes further than balance by that rule: the lowest sum of squares (criterion 1)
    // gives every member one partition: t0-0 to m5, and one of m0's two to m4, which m0
    // revokes first (Java stops at sizes 2, 1, 1, 1, 1, 0, moving nothing).
    let out = CooperativeStickyAssignor::new().assign(&metadata, &members).unwrap();
    assert_eq!(out.partitions_of("m5-5"), [TopicPartitions::new("t0", vec![0])]);
    assert_eq!(out.pending.len(), 1, "{out:?}");
    let pending = &out.pending[0];
    assert_eq!((pending.topic.as_str(), pending.from.as_str(), pending.to.as_deref()), ("t1", "m0-4", Some("m4-6")));
}

/// A claim at the last generation: the follow-up round's generation would overflow, so the
/// look-ahead stops there (no `to`) rather than wrap; the round itself stands.
#[test]
fn a_claim_at_the_last_generation_still_assigns() {
    let metadata = racked(&[&["a"], &["b"], &["a"], &["b"]]);
    let mut a = claiming("a", &["t"], &[0, 1, 2, 3], i32::MAX, true);
    a.subscription.rack_id = Some("a".into());
    let mut b = claiming("b", &["t"], &[], i32::MAX, true);
    b.subscription.rack_id = Some("b".into());
    let out = CooperativeStickyAssignor::new().assign(&metadata, &[a, b]).unwrap();
    // "a" keeps its on-rack partitions, hands "b" the others.
    assert_eq!(out.partitions_of("a"), [TopicPartitions::new("t", [0, 2])]);
    assert_eq!(out.pending.len(), 2);
}

/// The runner-up claim (Java's `prevAssignment`): the claimer at the highest generation below
/// the winner's, none when two members share that generation, and none without a conflict.
#[test]
fn previous_owner_is_the_highest_lower_generation_claimer() {
    let metadata = ClusterMetadata::from_counts([("t", 4)]);
    let members = [
        claiming("a", &["t"], &[0, 1, 2, 3], 5, true),
        claiming("b", &["t"], &[0, 1], 3, true),
        claiming("c", &["t"], &[0, 2], 4, true),
        claiming("d", &["t"], &[1, 2], 3, true),
    ];
    let members = Member::all_owned(&members);
    let topics = Topics::new(&metadata, &members).unwrap();
    let rank_to_member = member_id_order(&members);
    let claims = resolve_claims(&topics, &members, &rank_to_member, true);
    assert_eq!(claims.owner, [0, 0, 0, 0]);
    // t-0: c (4) over b (3); t-1: b and d tie at 3; t-2: c (4) over d (3); t-3: a alone.
    let prev: Vec<Option<u32>> = (0..4).map(|p| claims.prev_of(p)).collect();
    assert_eq!(prev, [Some(2), None, Some(2), None]);
}

/// Java's general path gives a partition that must leave its owner back to its previous
/// owner (a lower-generation claimer) rather than to another member: here "a" (generation 2)
/// must give up two of its four partitions, and "b" claimed t-0 at generation 1. Rank order
/// alone would keep t-0 on "a" (lowest partitions stay).
#[test]
fn a_moved_partition_goes_back_to_its_previous_owner() {
    let metadata = ClusterMetadata::from_counts([("t", 4), ("u", 1)]);
    for cooperative in [false, true] {
        let members = [
            claiming("a", &["t"], &[0, 1, 2, 3], 2, cooperative),
            claiming("b", &["t"], &[0], 1, cooperative),
            GroupMember { member_id: "c".into(), group_instance_id: None, subscription: Subscription::new(["t", "u"]) },
        ];
        let out = assign_sticky(&metadata, &Member::all_owned(&members), cooperative).unwrap();
        let sizes: Vec<usize> = ["a", "b", "c"]
            .iter()
            .map(|m| {
                let held: usize = out.partitions_of(m).iter().map(|g| g.partitions.len()).sum();
                held + out.pending.iter().filter(|x| x.to.as_deref() == Some(*m)).count()
            })
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), 5, "cooperative {cooperative}: {out:?}");
        assert_eq!(sizes[0], 2, "a keeps two, cooperative {cooperative}: {out:?}");
        if cooperative {
            let to_b = out.pending.iter().find(|x| x.topic == "t" && x.partition == 0);
            assert_eq!(to_b.and_then(|x| x.to.as_deref()), Some("b"), "{out:?}");
            assert_eq!(to_b.map(|x| x.from.as_str()), Some("a"));
        } else {
            assert!(out.partitions_of("b").iter().any(|g| g.topic == "t" && g.partitions.contains(&0)), "{out:?}");
        }
    }
}

/// Beyond the exact polish's size limit (130 members), the heuristics' hand-back gives a
/// partition without a valid owner to its previous owner: t-129's winning claimer "x" (3) no
/// longer subscribes to `t`, "m128" claimed it at generation 2. Otherwise the water-fill's
/// least-loaded member of lowest rank ("m000") would keep it.
#[test]
fn a_partition_without_a_valid_owner_goes_back_to_its_previous_owner_in_large_groups() {
    let metadata = ClusterMetadata::from_counts([("t", 130), ("u", 1)]);
    for cooperative in [false, true] {
        let mut members: Vec<GroupMember> =
            (0..128).map(|i| claiming(&format!("m{i:03}"), &["t"], &[i], 3, cooperative)).collect();
        members.push(claiming("m128", &["t"], &[128, 129], 2, cooperative));
        members.push(claiming("x", &["u"], &[129], 3, cooperative));
        let out = assign_sticky(&metadata, &Member::all_owned(&members), cooperative).unwrap();
        if cooperative {
            // "x" still owns it: withheld until it revokes. `to` is where the follow-up round
            // puts it: there m128's older claim on 129 is gone (it rejoins owning [128]), so
            // the spare partition goes by the tie-break, to m000.
            assert_eq!(out.partitions_of("m128"), [TopicPartitions::new("t", [128])]);
            let pending =
                PendingPartition { topic: "t".into(), partition: 129, from: "x".into(), to: Some("m000".into()) };
            assert_eq!(out.pending, [pending]);
        } else {
            assert_eq!(out.partitions_of("m128"), [TopicPartitions::new("t", [128, 129])]);
        }
        assert_eq!(out.partitions_of("m000"), [TopicPartitions::new("t", [0])]);
        assert_eq!(out.partitions_of("x"), [TopicPartitions::new("u", [0])]);
    }
}

/// The fresh-uniform fast path gives exactly what the general path gives, on groups chosen to
/// reach every branch of its topic walk: fewer partitions than members, many one-partition
/// topics (the binary search), topics missing from the metadata or empty, member ids in
/// random order and non-ASCII ones (byte order and Java order differ for U+10000 and up).
#[test]
fn fresh_uniform_equals_the_general_path() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    };
    for case in 0..400 {
        let nt = 1 + rnd(if case % 4 == 0 { 60 } else { 6 }) as usize;
        let counts: Vec<i32> = (0..nt).map(|_| if case % 4 == 0 { rnd(3) as i32 } else { rnd(40) as i32 }).collect();
        // Distinct names in a shuffled order (a stride coprime to their number).
        let stride = if nt.is_multiple_of(7) { 1 } else { 7 };
        let names: Vec<String> = (0..nt).map(|i| format!("t{:02}", (i * stride) % nt)).collect();
        // One subscribed topic is not in the metadata at all.
        let metadata = ClusterMetadata::from_counts(names.iter().skip(1).cloned().zip(counts.iter().copied()));
        let nm = 1 + rnd(12) as usize;
        let members: Vec<GroupMember> = (0..nm)
            .map(|i| {
                let id = match rnd(4) {
                    0 => format!("\u{1F600}{i}"),
                    1 => format!("\u{FF5E}{i}"),
                    _ => format!("m{}-{i}", rnd(1000)),
                };
                let mut sub = Subscription::new(names.iter().rev().cloned());
                sub.user_data = Some(CooperativeStickyUserData { generation: 2 }.encode());
                if rnd(2) == 0 {
                    sub.user_data = None;
                }
                GroupMember { member_id: id, group_instance_id: None, subscription: sub }
            })
            .collect();
        let members = Member::all_owned(&members);
        let topics = Topics::new(&metadata, &members).unwrap();
        let rank_to_member = member_id_order(&members);
        let fast = fresh_uniform(&topics, &members, &rank_to_member);
        for cooperative in [false, true] {
            if !cooperative && members.iter().any(|m| m.user_data().is_some()) {
                continue; // userData the eager assignor would read as a (failed) claim
            }
            let general = assign_sticky_with(&metadata, &members, cooperative, false).unwrap();
            assert_eq!(fast, general, "case {case}, cooperative {cooperative}");
            assert_eq!(assign_sticky_with(&metadata, &members, cooperative, true).unwrap(), general);
        }
    }
}
