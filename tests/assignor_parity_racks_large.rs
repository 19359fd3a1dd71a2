//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the large seeded
//! rack-aware groups in `testdata/assignor/java-parity-racks-large/` (`tools/java-assignors`,
//! `RackGenerator.largeSet`): 257-1000 members over 2-4 racks, replication 1-3, 1,000-20,000
//! partitions, uniform and mixed subscriptions, first assignments and reassignments after joins,
//! leaves and rack changes.
//!
//! These groups are beyond the exact polish (128 members): ours comes from the documented
//! heuristics (and the placement that keeps every valid claim, up to 256 members or 4,000,000
//! members x partitions). Where Java's end is better on some criterion and ours is not better on
//! an earlier one, the group is listed in `testdata/assignor/known-divergences.tsv` with the
//! reason; the test fails on any other (see `assignor_common::divergences`). On 3 groups Java never stops withholding partitions within the tool's 30 rounds
//! (018, 019, 020; the model of Java plays 200 and they do not stop either): Java has no final
//! assignment there, and only the rounds compare (ours need one follow-up on each).
//!
//! `cargo test --release --test assignor_parity_racks_large -- --nocapture` prints the tally.

mod assignor_common;

use assignor_common::parity::run_set;

/// The set's tally against Java (better minus worse over the metrics) may not fall below this
/// (issue 27: the tallies must not get worse). It was 59 when the leader computed Java's answer at
/// run time, 57 with the rack chains' first budget (64 examined pairs per partition), where 6 more
/// rebalances here ended with more rack mismatches than Java's, 69 with 1,024, and 79 since the
/// rack passes swap partitions back to their owners; 77 with issue 38's order (rack mismatches
/// before every move: fewer mismatches, more moves); 83 since a chain search with other
/// subscriptions offers each (rack, topic) list of members once and `cooperative-sticky` runs the
/// chains' last stage too (030 and 039 no longer end with more mismatches than Java's).
const TALLY_FLOOR: i64 = 83;

#[test]
fn java_parity_racks_large() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/assignor/java-parity-racks-large");
    let (mut failures, tally) = run_set(std::path::Path::new(dir));
    eprintln!("{}", tally.table("java-parity-racks-large"));
    assert!(tally.checked["sticky"] >= 40, "expected >= 40 large rack scenarios, checked {:?}", tally.checked);
    failures.extend(tally.net_at_least(TALLY_FLOOR).err());
    // Issue 38: no group ends with more rack mismatches than Java's at equal balance, and ours
    // move fewer partitions in all.
    failures.extend(tally.mismatches_and_moves_at_most_javas(0).err());
    assert!(failures.is_empty(), "{} parity failures:\n{}", failures.len(), failures.join("\n"));
}
