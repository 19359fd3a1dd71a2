//! Group shapes shared by `benches/assignors.rs` and `examples/assignor_memory.rs`: the large
//! shapes of Apache Kafka's `AbstractStickyAssignorTest` and franz-go's sticky benchmarks.
#![allow(dead_code, missing_docs)]

use kafka_consumer_protocol::assignor::{
    ClusterMetadata, GroupAssignment, GroupMember, GroupMemberView, PartitionAssignor,
};
use kafka_consumer_protocol::{CooperativeStickyUserData, StickyUserData, Subscription, SubscriptionView, Version};

/// A group to assign: metadata and members.
pub struct Shape {
    pub name: String,
    pub metadata: ClusterMetadata,
    pub members: Vec<GroupMember>,
}

/// Each member's subscription encoded (v3), as the leader receives it.
pub fn encoded(members: &[GroupMember]) -> Vec<Vec<u8>> {
    members.iter().map(|m| m.subscription.encode(Version::V3).unwrap()).collect()
}

/// The members read in place from their `encoded` subscriptions.
pub fn views<'a>(members: &'a [GroupMember], encoded: &'a [Vec<u8>]) -> Vec<GroupMemberView<'a>> {
    members
        .iter()
        .zip(encoded)
        .map(|(m, bytes)| GroupMemberView {
            member_id: &m.member_id,
            group_instance_id: m.group_instance_id.as_deref(),
            subscription: SubscriptionView::decode(bytes).unwrap(),
        })
        .collect()
}

fn topic_names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("topic{i}")).collect()
}

fn member(i: usize, width: usize, topics: Vec<String>) -> GroupMember {
    GroupMember {
        member_id: format!("consumer{i:0width$}"),
        group_instance_id: None,
        subscription: Subscription::new(topics),
    }
}

/// `topics` x `partitions`, `members` all subscribed to everything.
pub fn uniform(topics: usize, partitions: i32, members: usize) -> Shape {
    let names = topic_names(topics);
    let metadata = ClusterMetadata::from_counts(names.iter().map(|t| (t.clone(), partitions)));
    let w = members.to_string().len();
    let members = (0..members).map(|i| member(i, w, names.clone())).collect();
    Shape { name: format!("uniform {topics}x{partitions} / {}", w), metadata, members }
}

/// `shape` with KIP-881 racks: member `i` on `rack{i % racks}`, partition `p` of every topic with
/// `rf` replicas on racks `p, p + 1, ...` (mod `racks`), so Java's rack logic applies (`rf <
/// racks`). Java's rack tests use 3 racks.
pub fn with_racks(mut shape: Shape, racks: usize, rf: usize) -> Shape {
    for (i, m) in shape.members.iter_mut().enumerate() {
        m.subscription.rack_id = Some(format!("rack{}", i % racks));
    }
    for info in shape.metadata.topics.values_mut() {
        info.partition_racks = (0..info.partitions as usize)
            .map(|p| (0..rf).map(|j| format!("rack{}", (p + j) % racks)).collect())
            .collect();
    }
    shape
}

/// Java's non-equal shape: as `uniform`, but the last member subscribes to the first topic only.
pub fn last_on_first_topic(topics: usize, partitions: i32, members: usize) -> Shape {
    let mut s = uniform(topics, partitions, members);
    let first = s.members[0].subscription.topics[0].clone();
    s.members.last_mut().unwrap().subscription.topics = vec![first];
    s
}

/// Java's `testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout`: every 4th member on the
/// first half of the topics, the others on the second half.
pub fn halves(topics: usize, partitions: i32, members: usize) -> Shape {
    let names = topic_names(topics);
    let metadata = ClusterMetadata::from_counts(names.iter().map(|t| (t.clone(), partitions)));
    let w = members.to_string().len();
    let (first, second) = names.split_at(topics / 2);
    let members =
        (0..members).map(|i| member(i, w, if i % 4 == 0 { first.to_vec() } else { second.to_vec() })).collect();
    Shape { name: String::new(), metadata, members }
}

/// Partition counts of franz-go's `BenchmarkLarge`: Go's `rand.New(rand.NewSource(0)).Intn(500)`,
/// 100 draws (printed once with Go 1.26 and recorded here, so both sides assign the same group).
const FRANZ_LARGE_COUNTS: [i32; 100] = [
    274, 14, 353, 6, 15, 496, 267, 77, 288, 428, 468, 147, 259, 48, 252, 126, 311, 150, 450, 394, 15, 468, 66, 80, 101,
    86, 152, 120, 491, 12, 157, 188, 45, 264, 78, 393, 200, 110, 149, 14, 487, 44, 376, 478, 419, 87, 68, 300, 422,
    377, 250, 488, 174, 452, 419, 400, 377, 194, 456, 304, 330, 7, 397, 478, 194, 223, 119, 180, 169, 381, 203, 66,
    264, 147, 178, 93, 289, 284, 363, 223, 194, 478, 172, 331, 472, 213, 222, 26, 412, 390, 276, 392, 240, 468, 28, 38,
    29, 120, 390, 41,
];

/// franz-go's `BenchmarkLarge`: 100 topics (`topic0..`) with the counts above, 100 members on all.
pub fn franz_large() -> Shape {
    let names = topic_names(100);
    let metadata = ClusterMetadata::from_counts(names.iter().cloned().zip(FRANZ_LARGE_COUNTS));
    let members = (0..100)
        .map(|i| GroupMember {
            member_id: format!("consumer{i}"),
            group_instance_id: None,
            subscription: Subscription::new(names.clone()),
        })
        .collect();
    Shape { name: String::new(), metadata, members }
}

/// franz-go's `BenchmarkJava` shapes: topics `t0..`, members `c0..` on all of them.
pub fn franz_java(topics: usize, partitions: i32, members: usize) -> Shape {
    let names: Vec<String> = (0..topics).map(|i| format!("t{i}")).collect();
    let metadata = ClusterMetadata::from_counts(names.iter().map(|t| (t.clone(), partitions)));
    let members = (0..members)
        .map(|i| GroupMember {
            member_id: format!("c{i}"),
            group_instance_id: None,
            subscription: Subscription::new(names.clone()),
        })
        .collect();
    Shape { name: String::new(), metadata, members }
}

/// franz-go's "existing": the first member leaves (and any `extra` one); the others own their
/// previous plan at generation 1.
pub fn franz_existing(shape: &Shape, first: &GroupAssignment, cooperative: bool, drop_last: bool) -> Shape {
    let mut s = with_ownership(shape, first, cooperative);
    s.members.remove(0);
    if drop_last {
        s.members.pop();
    }
    s
}

/// Second round: every member but the first owns what `first` gave it, at generation 1, in
/// the form `assignor` reads (owned partitions + generation for cooperative-sticky, userData for
/// sticky); the first member is new.
pub fn with_ownership(shape: &Shape, first: &GroupAssignment, cooperative: bool) -> Shape {
    let members = shape
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut m = m.clone();
            if i > 0 {
                let owned = first.partitions_of(&m.member_id);
                if cooperative {
                    m.subscription.owned_partitions = owned;
                    m.subscription.generation_id = 1;
                    m.subscription.user_data = Some(CooperativeStickyUserData { generation: 1 }.encode());
                } else {
                    let data = StickyUserData { previous_assignment: owned, generation: Some(1) };
                    m.subscription.user_data = Some(data.encode().unwrap().into());
                }
            }
            m
        })
        .collect();
    Shape { name: String::new(), metadata: shape.metadata.clone(), members }
}

/// franz-go's imbalanced variants: one more member, subscribed to the first topic only.
pub fn plus_member_on_first_topic(shape: &Shape, id: &str) -> Shape {
    let mut members = shape.members.clone();
    let first = shape.members[0].subscription.topics[0].clone();
    members.push(GroupMember {
        member_id: id.into(),
        group_instance_id: None,
        subscription: Subscription::new([first]),
    });
    Shape { name: String::new(), metadata: shape.metadata.clone(), members }
}

/// All benchmark cases: (name, group) pairs, for `assignor` (its name picks how ownership is
/// expressed for the re-assignment cases).
pub fn cases(assignor: &dyn PartitionAssignor) -> Vec<(String, Shape)> {
    let cooperative = assignor.name() == "cooperative-sticky";
    let mut out = Vec::new();
    let mut both = |name: &str, shape: Shape| {
        let first = assignor.assign(&shape.metadata, &shape.members).unwrap();
        let again = with_ownership(&shape, &first, cooperative);
        out.push((format!("{name}/fresh"), shape));
        out.push((format!("{name}/existing"), again));
    };
    both("java-large-uniform-1M-2000", uniform(500, 2000, 2000));
    both("java-large-nonequal-1M-2000", last_on_first_topic(500, 2000, 2000));
    both("java-mixed-halves-20k-500", halves(100, 200, 500));
    // The rack variants of Java's large tests (50 topics, as its `hasRack` cases), 3 racks, RF 2:
    // the constrained path's and the general path's rack passes.
    both("java-rack-uniform-100k-2000", with_racks(uniform(50, 2000, 2000), 3, 2));
    both("java-rack-nonequal-100k-2000", with_racks(last_on_first_topic(50, 2000, 2000), 3, 2));
    both("java-rack-mixed-halves-10k-500", with_racks(halves(50, 200, 500), 3, 2));
    // Within the sticky assignors' Java floor (at most 256 members): what the model costs.
    both("java-rack-mixed-halves-20k-250", with_racks(halves(50, 400, 250), 3, 2));
    let large = franz_large();
    let imbalanced = plus_member_on_first_topic(&large, "imbalance");
    let first = assignor.assign(&large.metadata, &large.members).unwrap();
    let first_imb = assignor.assign(&imbalanced.metadata, &imbalanced.members).unwrap();
    out.push(("franz-large/existing".into(), franz_existing(&large, &first, cooperative, false)));
    out.push(("franz-large/existing_imbalanced".into(), franz_existing(&imbalanced, &first_imb, cooperative, true)));
    out.push(("franz-large/fresh".into(), large));
    out.push(("franz-large/imbalanced".into(), imbalanced));
    for (name, t, p, m) in [("large", 500, 2000, 2000), ("medium", 50, 1000, 1000), ("small", 50, 800, 800)] {
        let shape = franz_java(t, p, m);
        let imb = plus_member_on_first_topic(&shape, &format!("c{m}"));
        out.push((format!("franz-java-{name}/fresh"), shape));
        out.push((format!("franz-java-{name}_imbalance/fresh"), imb));
    }
    out
}
