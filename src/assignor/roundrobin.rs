//! The `roundrobin` assignor (Java `RoundRobinAssignor`).
//!
//! All partitions of all subscribed topics (topics in name order, partitions ascending) are
//! dealt to the members in Java `MemberInfo` order (static members by instance id first, then
//! dynamic ones by member id), circularly, skipping members not subscribed to the partition's
//! topic. Not rack-aware. With heterogeneous subscriptions the result can be unbalanced, exactly
//! as Java's.
//!
//! Differences from Java (deliberate): members with equal instance ids are ordered by member id
//! (Java keeps its `HashMap` order).

use super::common::{build_group_assignment, check_members, member_info_order, Member, Topics, NONE};
use super::{AssignError, ClusterMetadata, GroupAssignment, GroupMember, GroupMemberView, PartitionAssignor};

/// The `roundrobin` assignor.
///
/// ```
/// use kafka_consumer_protocol::assignor::{ClusterMetadata, GroupMember, PartitionAssignor, RoundRobinAssignor};
/// use kafka_consumer_protocol::{Subscription, TopicPartitions};
/// let metadata = ClusterMetadata::from_counts([("t1", 3), ("t2", 3)]);
/// let member = |id: &str| GroupMember {
///     member_id: id.into(),
///     group_instance_id: None,
///     subscription: Subscription::new(["t1", "t2"]),
/// };
/// let out = RoundRobinAssignor.assign(&metadata, &[member("c1"), member("c2")]).unwrap();
/// assert_eq!(out.partitions_of("c1"), [TopicPartitions::new("t1", [0, 2]), TopicPartitions::new("t2", [1])]);
/// assert_eq!(out.partitions_of("c2"), [TopicPartitions::new("t1", [1]), TopicPartitions::new("t2", [0, 2])]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundRobinAssignor;

impl PartitionAssignor for RoundRobinAssignor {
    fn name(&self) -> &str {
        "roundrobin"
    }

    fn assign(&self, metadata: &ClusterMetadata, members: &[GroupMember]) -> Result<GroupAssignment, AssignError> {
        assign_round_robin(metadata, &Member::all_owned(members))
    }

    fn assign_views(
        &self,
        metadata: &ClusterMetadata,
        members: &[GroupMemberView<'_>],
    ) -> Result<GroupAssignment, AssignError> {
        assign_round_robin(metadata, &Member::all_views(members))
    }
}

fn assign_round_robin(metadata: &ClusterMetadata, members: &[Member<'_>]) -> Result<GroupAssignment, AssignError> {
    check_members(members)?;
    let topics = Topics::new(metadata, members)?;
    let subs = topics.subscriptions(members);
    let order = member_info_order(members);
    let nt = topics.len();
    // Subscription bitmap, row = position in `order`.
    let words = nt.div_ceil(64).max(1);
    let mut bits = vec![0u64; words * order.len()];
    for (pos, &m) in order.iter().enumerate() {
        for &t in &subs[m as usize] {
            bits[pos * words + t as usize / 64] |= 1 << (t % 64);
        }
    }
    let subscribed = |pos: usize, t: usize| bits[pos * words + t / 64] & (1 << (t % 64)) != 0;
    let mut owner = vec![NONE; topics.total()];
    let mut pos = 0usize;
    for t in 0..nt {
        // Every topic in `topics` has at least one subscriber, so the scan terminates.
        for p in topics.base[t]..topics.base[t + 1] {
            while !subscribed(pos, t) {
                pos = (pos + 1) % order.len();
            }
            owner[p as usize] = order[pos];
            pos = (pos + 1) % order.len();
        }
    }
    Ok(build_group_assignment(&topics, members, &owner, Vec::new(), &[]))
}
