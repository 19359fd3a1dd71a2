//! Rack alignment of the sticky assignors' heuristic general path (groups above the exact
//! polish's member limit), on the bench shape `java-rack-mixed-halves-10k-500`: 50 topics of 200
//! partitions, 500 members, every 4th member subscribed to the first 25 topics and the others to
//! the last 25, member i on rack i % 3, partition p's replicas on racks p % 3 and (p + 1) % 3.
//! Java 3.9.1's sticky and cooperative-sticky put every partition on a replica rack with sizes 40
//! (first half) and 13-14 (second half); so must we, fresh and when every member keeps what it
//! holds (nothing moves).

use std::collections::BTreeMap;

use kafka_consumer_protocol::assignor::{builtin, GroupAssignment};
use kcp_testkit::assignor_shapes as shapes;

/// Owner of each (topic, partition).
type Owners = BTreeMap<(String, i32), String>;

/// (rack mismatches, owner of each partition, sorted sizes of the first-half and the other
/// members).
fn quality(shape: &shapes::Shape, result: &GroupAssignment) -> (usize, Owners, Vec<usize>, Vec<usize>) {
    let first_half = &shape.members[0].subscription.topics;
    let mut mismatches = 0;
    let mut owner = BTreeMap::new();
    let (mut first_sizes, mut other_sizes) = (Vec::new(), Vec::new());
    for m in &shape.members {
        let rack = m.subscription.rack_id.as_deref();
        let mut size = 0;
        for tp in result.partitions_of(&m.member_id) {
            let info = &shape.metadata.topics[&tp.topic];
            for &p in &tp.partitions {
                size += 1;
                owner.insert((tp.topic.clone(), p), m.member_id.clone());
                let replicas = &info.partition_racks[p as usize];
                if rack.is_some_and(|r| !replicas.is_empty() && !replicas.iter().any(|x| x == r)) {
                    mismatches += 1;
                }
            }
        }
        if &m.subscription.topics == first_half {
            first_sizes.push(size);
        } else {
            other_sizes.push(size);
        }
    }
    first_sizes.sort_unstable();
    other_sizes.sort_unstable();
    (mismatches, owner, first_sizes, other_sizes)
}

#[test]
fn mixed_halves_on_three_racks_put_every_partition_on_a_replica_rack_with_javas_balance() {
    let shape = shapes::with_racks(shapes::halves(50, 200, 500), 3, 2);
    for name in ["sticky", "cooperative-sticky"] {
        let assignor = builtin(name).expect("builtin");
        let fresh = assignor.assign(&shape.metadata, &shape.members).expect("fresh");
        let (mismatches, first_owner, first_sizes, other_sizes) = quality(&shape, &fresh);
        assert_eq!(mismatches, 0, "{name} fresh: partitions off their replica racks");
        assert_eq!((first_sizes.len(), first_sizes[0], first_sizes[first_sizes.len() - 1]), (125, 40, 40), "{name}");
        assert_eq!((other_sizes.len(), other_sizes[0], other_sizes[other_sizes.len() - 1]), (375, 13, 14), "{name}");
        assert_eq!(first_owner.len(), 10_000, "{name}: every partition assigned");

        let again = shapes::with_ownership(&shape, &fresh, name == "cooperative-sticky");
        let kept = assignor.assign(&again.metadata, &again.members).expect("existing");
        let (mismatches, owner, first_sizes, other_sizes) = quality(&again, &kept);
        assert_eq!(mismatches, 0, "{name} existing: partitions off their replica racks");
        assert_eq!((first_sizes[0], first_sizes[first_sizes.len() - 1]), (40, 40), "{name}");
        assert_eq!((other_sizes[0], other_sizes[other_sizes.len() - 1]), (13, 14), "{name}");
        assert_eq!(owner, first_owner, "{name} existing: nothing moves");
        assert!(kept.pending.is_empty(), "{name} existing: no hand-over");
    }
}
