//! The KIP-429 hand-over (`apply_cooperative_handover`) on members' claims, which are untrusted
//! input, under a 512 MB cap on single allocations (`capped_alloc`): a table sized by a claimed
//! or assigned partition id fails these tests at once instead of passing slowly on a machine
//! with memory to spare.

mod capped_alloc;

use kafka_consumer_protocol::assignor::leader::apply_cooperative_handover;
use kafka_consumer_protocol::assignor::{GroupAssignment, GroupMember, PendingPartition};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions};

fn subscribed_owning(id: &str, topic: &str, owned: Vec<TopicPartitions>) -> GroupMember {
    GroupMember {
        member_id: id.into(),
        group_instance_id: None,
        subscription: Subscription::new([topic]).with_owned_partitions(owned),
    }
}

fn pending(topic: &str, partition: i32, from: &str, to: &str) -> PendingPartition {
    PendingPartition { topic: topic.into(), partition, from: from.into(), to: Some(to.into()) }
}

/// A claim on partition 2^31 - 1 must not size the hand-over's tables (it once made the leader
/// allocate ~50 GB), and the hand-over still withholds the claimed partitions the result moves.
#[test]
fn handover_ignores_claims_beyond_what_is_assigned() {
    let member = |id: &str, owned: Vec<TopicPartitions>| subscribed_owning(id, "orders", owned);
    let members = [
        member("a", vec![TopicPartitions::new("orders", [0, 1, i32::MAX])]),
        member("b", vec![TopicPartitions::new("ghost", [i32::MAX - 1])]),
    ];
    let mut result = GroupAssignment::from_assignments([
        ("a", Assignment::new(vec![TopicPartitions::new("orders", [1])])),
        ("b", Assignment::new(vec![TopicPartitions::new("orders", [0])])),
    ]);
    apply_cooperative_handover(&members, &mut result);
    assert!(result.partitions_of("b").is_empty());
    assert_eq!(result.partitions_of("a"), [TopicPartitions::new("orders", [1])]);
    assert_eq!(result.pending, [pending("orders", 0, "a", "b")]);
}

/// KIP-429 step 2.6 gives a claimed partition of a topic the leader does not know back to its
/// claimer, whatever its id: such an assigned id (2^31 - 2 here) must not size the hand-over's
/// tables either (the fuzz target `coordinator_leader` found a 6 GB allocation there), and the
/// hand-over still withholds it when another member claims it too.
#[test]
fn handover_stays_small_for_huge_ids_given_back_under_step_2_6() {
    let member = |id: &str, owned: Vec<TopicPartitions>| subscribed_owning(id, "ghost", owned);
    let members = [
        member("a", vec![TopicPartitions::new("ghost", [i32::MAX - 2, i32::MAX - 1])]),
        member("b", vec![TopicPartitions::new("ghost", [i32::MAX - 1])]),
    ];
    let mut result = GroupAssignment::from_assignments([(
        "a",
        Assignment::new(vec![TopicPartitions::new("ghost", [i32::MAX - 2, i32::MAX - 1])]),
    )]);
    apply_cooperative_handover(&members, &mut result);
    assert_eq!(result.partitions_of("a"), [TopicPartitions::new("ghost", [i32::MAX - 2])]);
    assert_eq!(result.pending, [pending("ghost", i32::MAX - 1, "b", "a")]);
}
