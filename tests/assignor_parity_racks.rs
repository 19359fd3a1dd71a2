//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the seeded rack-aware
//! groups in `testdata/assignor/java-parity-racks/` (`tools/java-assignors`, `RackGenerator`):
//! 2-4 racks, replication 1-3, balanced and unbalanced placements, all replicas on one rack set,
//! members without racks or on racks no replica uses, uniform and mixed subscriptions, first
//! assignments and reassignments after joins, leaves, rack changes, added partitions and
//! subscription changes.
//!
//! - `range` and `roundrobin`: exactly Java's assignment.
//! - `sticky` and `cooperative-sticky`: whole rebalances (cooperative: every follow-up round played, ours and Java's) compared by the
//!   objective's order (`assignor_common::divergences`): where Java ends better on some criterion,
//!   ours must be better on an earlier one (follow-up rounds: never more than Java's), or the
//!   group is listed with its reason in `testdata/assignor/known-divergences.tsv`.
//!
//! `cargo test --test assignor_parity_racks -- --nocapture` prints the tally against Java.

mod assignor_common;

use assignor_common::parity::run_set;

/// The set's tally against Java (better minus worse over the metrics) may not fall below this
/// (issue 27: the tallies must not get worse). It was 300 when the leader computed Java's answer
/// at run time, 299 with the stated order alone (the exact polish trades an earlier criterion
/// for a later one where Java does not), 301 since the rack passes swap partitions back to
/// their owners; 295 with issue 38's order (rack mismatches before every move), which ends 6
/// `sticky` and 8 `cooperative-sticky` rebalances with fewer mismatches than before, no longer
/// more than Java's, for more moves (981 -> 1,074 in all per strategy, Java 1,350 and 1,355).
const TALLY_FLOOR: i64 = 295;

/// Our exact polish optimises a fixed order of priorities, which Java does not follow: on some
/// groups Java is better on a later criterion and worse on an earlier one (by our order), on nine
/// `cooperative-sticky` groups it is listed: on eight ours ends with fewer rack mismatches and on
/// one with a lower sum of squares, at the cost of moves and a follow-up round Java does not take.
#[test]
fn java_parity_racks() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/assignor/java-parity-racks");
    let (mut failures, tally) = run_set(std::path::Path::new(dir));
    eprintln!("{}", tally.table("java-parity-racks"));
    assert!(tally.checked["sticky"] >= 400, "expected >= 400 rack scenarios, checked {:?}", tally.checked);
    failures.extend(tally.net_at_least(TALLY_FLOOR).err());
    // Issue 38: no group ends with more rack mismatches than Java's at equal balance, and ours
    // move fewer partitions in all.
    failures.extend(tally.mismatches_and_moves_at_most_javas(0).err());
    assert!(failures.is_empty(), "{} parity failures:\n{}", failures.len(), failures.join("\n"));
}
