//! Group shapes shared by `benches/assignors.rs` and `examples/assignor_memory.rs`: the large
//! shapes of Apache Kafka's `AbstractStickyAssignorTest` and franz-go's sticky benchmarks.
#![allow(dead_code, missing_docs)]

use kafka_consumer_protocol::assignor::{ClusterMetadata, GroupAssignment, GroupMember, PartitionAssignor};
use kafka_consumer_protocol::{CooperativeStickyUserData, StickyUserData, Subscription};

/// A group to assign: metadata and members.
pub struct Shape {
    pub name: String,
    pub metadata: ClusterMetadata,
    pub members: Vec<GroupMember>,
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

/// franz-go's `BenchmarkLarge`: 100 topics with a seeded random 0..500 partitions each, 100 members.
pub fn franz_large() -> Shape {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let names = topic_names(100);
    let metadata = ClusterMetadata::from_counts(names.iter().map(|t| (t.clone(), (next() % 500) as i32)));
    let members = (0..100).map(|i| member(i, 3, names.clone())).collect();
    Shape { name: String::new(), metadata, members }
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
                let owned = first.partitions_of(&m.member_id).to_vec();
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

/// franz-go's imbalanced variant: the existing group plus one member on the first topic only.
pub fn plus_member_on_first_topic(shape: &Shape) -> Shape {
    let mut members = shape.members.clone();
    let first = shape.members[0].subscription.topics[0].clone();
    members.push(GroupMember {
        member_id: "consumer-extra".into(),
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
    let large = franz_large();
    let first = assignor.assign(&large.metadata, &large.members).unwrap();
    let existing = with_ownership(&large, &first, cooperative);
    let imbalanced = plus_member_on_first_topic(&existing);
    out.push(("franz-large/fresh".into(), large));
    out.push(("franz-large/existing".into(), existing));
    out.push(("franz-large/imbalanced".into(), imbalanced));
    out.push(("franz-java-medium-50k-1000/fresh".into(), uniform(50, 1000, 1000)));
    out.push(("franz-java-small-40k-800/fresh".into(), uniform(50, 800, 800)));
    out
}
