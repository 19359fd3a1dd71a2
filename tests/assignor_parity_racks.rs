//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the seeded rack-aware
//! groups in `testdata/assignor/java-parity-racks/` (`tools/java-assignors`, `RackGenerator`):
//! 2-4 racks, replication 1-3, balanced and unbalanced placements, all replicas on one rack set,
//! members without racks or on racks no replica uses, uniform and mixed subscriptions, first
//! assignments and reassignments after joins, leaves, rack changes, added partitions and
//! subscription changes.
//!
//! - `range` and `roundrobin`: exactly Java's assignment.
//! - `sticky` and `cooperative-sticky`, on every scenario and without exceptions: no more rack
//!   mismatches than Java, no more partitions moved away from their valid owners, a sum of
//!   squared member sizes no higher, no more cooperative follow-up rounds.
//!
//! `cargo test --test assignor_parity_racks -- --nocapture` prints the tally against Java.

mod assignor_common;

use assignor_common::parity::run_set;

/// Our exact polish optimises a fixed order of priorities, which Java does not follow; on 15 of
/// these groups that optimum was better than Java on one metric and worse on another. Java's own
/// answer (`java_sticky`, checked against Java round for round in `assignor_java_model.rs`) is
/// the floor: where ours is worse on any metric, the leader gives Java's. So this test allows no
/// exception.
#[test]
fn java_parity_racks() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/assignor/java-parity-racks");
    let (failures, tally) = run_set(std::path::Path::new(dir));
    eprintln!("{}", tally.table("java-parity-racks"));
    assert!(tally.checked["sticky"] >= 400, "expected >= 400 rack scenarios, checked {:?}", tally.checked);
    assert!(failures.is_empty(), "{} parity failures:\n{}", failures.len(), failures.join("\n"));
}
