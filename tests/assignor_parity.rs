//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the hand-built scenario
//! families in `testdata/assignor/java-parity/` (produced by `tools/java-assignors`; the seeded
//! rack-aware set is `assignor_parity_racks.rs`).
//!
//! - `range` and `roundrobin`: exactly Java's assignment (partition order within a member is
//!   not compared: Java's depends on `HashMap` order and ours is canonical).
//! - `sticky` and `cooperative-sticky`: everything assigned or pending, valid, balanced; whole rebalances (cooperative: every follow-up round played, ours and Java's) compared by the
//!   objective's order (`assignor_common::divergences`): where Java ends better on some criterion,
//!   ours must be better on an earlier one (follow-up rounds: never more than Java's), or the
//!   group is listed with its reason in `testdata/assignor/known-divergences.tsv`.
//! - Scenarios where Java fails (claims on partitions that no longer exist, KAFKA-21674) assert
//!   our behaviour: such claims are dropped.
//!
//! `cargo test --test assignor_parity -- --nocapture` prints the tally against Java.

mod assignor_common;

use assignor_common::parity::run_set;

/// The set's tally against Java (better minus worse over the metrics) may not fall below this
/// (issue 27: the tallies must not get worse). 45 since the follow-up rounds are compared whole;
/// 43 with issue 38's order (rack mismatches before every move): two rack-aware groups end with
/// fewer mismatches than Java's for moves and a follow-up round (listed in the known divergences).
const TALLY_FLOOR: i64 = 43;

#[test]
fn java_parity() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/assignor/java-parity");
    let (mut failures, tally) = run_set(std::path::Path::new(dir));
    eprintln!("{}", tally.table("java-parity"));
    assert!(tally.checked.values().sum::<usize>() >= 800, "expected >= 800 comparisons, checked {:?}", tally.checked);
    failures.extend(tally.net_at_least(TALLY_FLOOR).err());
    // Issue 38: no group ends with more rack mismatches than Java's at equal balance.
    failures.extend(tally.mismatches_at_most_javas(0).err());
    // Ours move more partitions than Java's in all here (615 against 611 with `sticky`, 612
    // against 608 with `cooperative-sticky`): groups 213 and 220 remove 6 rack mismatches Java
    // keeps, and two members (one of them without a rack) can only swap, 2 moves per mismatch
    // (12 in all; the objective puts mismatches before every move), while ours moves 9 (8) fewer
    // than Java on the others. Over the groups where ours is no better on balance or mismatches,
    // ours move no more than Java's.
    failures.extend(tally.moves_at_most_javas_without_trade().err());
    assert!(failures.is_empty(), "{} parity failures:\n{}", failures.len(), failures.join("\n"));
}
