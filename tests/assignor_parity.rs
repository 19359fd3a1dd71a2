//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the hand-built scenario
//! families in `testdata/assignor/java-parity/` (produced by `tools/java-assignors`; the seeded
//! rack-aware set is `assignor_parity_racks.rs`).
//!
//! - `range` and `roundrobin`: exactly Java's assignment (partition order within a member is
//!   not compared: Java's depends on `HashMap` order and ours is canonical).
//! - `sticky` and `cooperative-sticky`: at least as good as Java on every scenario: everything
//!   assigned or pending, valid, balanced (sum of squared member sizes) at least as well, no more
//!   partitions moved away from their valid owners (except the trades in `TRADES`), no more
//!   partitions off their consumer's rack (KIP-881), no more follow-up rounds.
//! - Scenarios where Java fails (claims on partitions that no longer exist, KAFKA-21674) assert
//!   our behaviour: such claims are dropped.
//!
//! `cargo test --test assignor_parity -- --nocapture` prints the tally against Java.

mod assignor_common;

use assignor_common::parity::{run_set, Trade};

/// Scenarios where we are worse than Java on one metric and better on another (see
/// [`Trade`]). In 105 (eager, heterogeneous subscriptions) the extra move buys a sum of squared
/// member sizes of 72 against Java's 74; our polish minimises the moves exactly among the
/// assignments with the minimum sum of squares, so none as balanced as ours does with 3: Java
/// stops at its own balance rule (no member could take a partition from one holding two more),
/// and matching its 3 moves would mean giving up balance, our first priority.
const TRADES: &[Trade] = &[("105-mixed-rebalance-reshuffle-subscriptions-14.json", "sticky", "moves", 4, 3)];

#[test]
fn java_parity() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/assignor/java-parity");
    let (failures, tally) = run_set(std::path::Path::new(dir), TRADES);
    eprintln!("{}", tally.table("java-parity"));
    assert!(tally.checked.values().sum::<usize>() >= 800, "expected >= 200 parity scenarios");
    assert!(failures.is_empty(), "{} parity failures:\n{}", failures.len(), failures.join("\n"));
}
