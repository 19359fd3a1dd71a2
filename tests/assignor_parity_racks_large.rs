//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the large seeded
//! rack-aware groups in `testdata/assignor/java-parity-racks-large/` (`tools/java-assignors`,
//! `RackGenerator.largeSet`): 257-1000 members over 2-4 racks, replication 1-3, 1,000-20,000
//! partitions, uniform and mixed subscriptions, first assignments and reassignments after joins,
//! leaves and rack changes.
//!
//! These groups are beyond the 256 members up to which the leader also computes Java's own
//! answer as a floor under ours: only our heuristics run here, so this set measures them alone.
//! They are worse than Java on some groups; the test pins the exact list (it fails when any
//! loss appears, disappears or changes its figures), so a change to the heuristics shows here.
//!
//! `cargo test --release --test assignor_parity_racks_large -- --nocapture` prints the tally.

mod assignor_common;

use assignor_common::parity::run_set;

/// A loss against Java: (file, strategy, metric, ours, Java), lower is better for every metric.
type Loss = (&'static str, &'static str, &'static str, usize, usize);

/// Losses of the heuristic path beyond the Java floor's 256-member limit: where ours is worse
/// than Java's on rack mismatches, partitions moved off valid owners, the sum of squared member
/// sizes or cooperative follow-up rounds. Mostly rack mismatches (mixed subscriptions, rack
/// changes) and extra cooperative rounds; the `rounds` losses of 009 and 029 are groups where
/// ours does not converge in the 5 rounds the harness allows (see [`OTHER_FAILURES`]). The
/// cooperative `balance` losses (007, 010, 018, 019, 020) are groups where Java itself does not
/// converge in 10 rounds (`converged: false`): its 10th round, still revoking, is more even than
/// our converged one. Issue 13 wants this list empty.
const LOSSES: &[Loss] = &[
    ("004-rack-change-rotate-some-without-uniform-3.json", "sticky", "mismatches", 4, 0),
    ("004-rack-change-rotate-some-without-uniform-3.json", "cooperative-sticky", "mismatches", 4, 0),
    ("007-join-mixed-rf-some-foreign-mixed-6.json", "cooperative-sticky", "mismatches", 272, 245),
    ("007-join-mixed-rf-some-foreign-mixed-6.json", "cooperative-sticky", "balance", 4425, 4216),
    ("009-rack-change-random-some-without-mixed-8.json", "sticky", "mismatches", 58, 32),
    ("009-rack-change-random-some-without-mixed-8.json", "cooperative-sticky", "mismatches", 59, 12),
    ("009-rack-change-random-some-without-mixed-8.json", "cooperative-sticky", "rounds", 5, 1),
    ("010-join-and-leave-unbalanced-round-robin-mixed-9.json", "cooperative-sticky", "mismatches", 336, 333),
    ("010-join-and-leave-unbalanced-round-robin-mixed-9.json", "cooperative-sticky", "balance", 3796, 3772),
    ("017-join-mixed-rf-some-without-mixed-16.json", "sticky", "mismatches", 56, 34),
    ("017-join-mixed-rf-some-without-mixed-16.json", "cooperative-sticky", "mismatches", 50, 8),
    ("017-join-mixed-rf-some-without-mixed-16.json", "cooperative-sticky", "rounds", 3, 1),
    ("018-leave-mixed-rf-unbalanced-mixed-17.json", "sticky", "mismatches", 248, 181),
    ("018-leave-mixed-rf-unbalanced-mixed-17.json", "cooperative-sticky", "mismatches", 246, 135),
    ("018-leave-mixed-rf-unbalanced-mixed-17.json", "cooperative-sticky", "balance", 3385, 3205),
    ("019-rack-change-random-unbalanced-mixed-18.json", "sticky", "mismatches", 435, 402),
    ("019-rack-change-random-unbalanced-mixed-18.json", "cooperative-sticky", "mismatches", 448, 398),
    ("019-rack-change-random-unbalanced-mixed-18.json", "cooperative-sticky", "balance", 2140, 2116),
    ("020-join-and-leave-unbalanced-round-robin-mixed-19.json", "cooperative-sticky", "balance", 8098, 8076),
    ("022-join-rotate-round-robin-uniform-21.json", "sticky", "moves", 42, 21),
    ("022-join-rotate-round-robin-uniform-21.json", "cooperative-sticky", "moves", 42, 21),
    ("023-leave-unbalanced-some-foreign-uniform-22.json", "cooperative-sticky", "rounds", 2, 1),
    ("026-fresh-mixed-rf-unbalanced-mixed-25.json", "sticky", "mismatches", 692, 685),
    ("026-fresh-mixed-rf-unbalanced-mixed-25.json", "cooperative-sticky", "mismatches", 692, 685),
    ("027-join-rotate-round-robin-mixed-26.json", "sticky", "mismatches", 4, 0),
    ("027-join-rotate-round-robin-mixed-26.json", "cooperative-sticky", "mismatches", 4, 0),
    ("028-leave-mixed-rf-some-without-mixed-27.json", "sticky", "mismatches", 6, 1),
    ("028-leave-mixed-rf-some-without-mixed-27.json", "cooperative-sticky", "mismatches", 7, 1),
    ("029-rack-change-random-unbalanced-mixed-28.json", "cooperative-sticky", "mismatches", 181, 116),
    ("029-rack-change-random-unbalanced-mixed-28.json", "cooperative-sticky", "rounds", 5, 1),
    ("030-join-and-leave-rotate-unbalanced-mixed-29.json", "sticky", "mismatches", 603, 487),
    ("030-join-and-leave-rotate-unbalanced-mixed-29.json", "cooperative-sticky", "mismatches", 614, 460),
    ("036-fresh-unbalanced-unbalanced-mixed-35.json", "sticky", "mismatches", 97, 71),
    ("036-fresh-unbalanced-unbalanced-mixed-35.json", "cooperative-sticky", "mismatches", 97, 71),
    ("037-join-mixed-rf-round-robin-mixed-36.json", "cooperative-sticky", "rounds", 3, 1),
    ("038-leave-mixed-rf-unbalanced-mixed-37.json", "sticky", "mismatches", 305, 303),
    ("038-leave-mixed-rf-unbalanced-mixed-37.json", "cooperative-sticky", "mismatches", 305, 303),
    ("039-rack-change-unbalanced-unbalanced-mixed-38.json", "cooperative-sticky", "mismatches", 80, 55),
    ("040-join-and-leave-mixed-rf-some-without-mixed-39.json", "cooperative-sticky", "mismatches", 6, 0),
    ("040-join-and-leave-mixed-rf-some-without-mixed-39.json", "cooperative-sticky", "rounds", 2, 1),
];

/// Failures other than a metric loss, on the same path: three mixed-subscription cooperative
/// reassignments that still revoke after 5 follow-up rounds, so the 5th round's assignment is
/// not yet balanced (Java converges there, in 1, 1 and 7 rounds).
const OTHER_FAILURES: &[&str] = &[
    "009-rack-change-random-some-without-mixed-8.json cooperative-sticky: no convergence in 5 rounds",
    "009-rack-change-random-some-without-mixed-8.json cooperative-sticky: unbalanced: consumer-402 (3) could take topic1-82 from consumer-01 (5)",
    "009-rack-change-random-some-without-mixed-8.json cooperative-sticky: size spread 2 > Java's 1",
    "029-rack-change-random-unbalanced-mixed-28.json cooperative-sticky: no convergence in 5 rounds",
    "029-rack-change-random-unbalanced-mixed-28.json cooperative-sticky: unbalanced: mf33f186 (1) could take topic1-2 from m00d3253 (3)",
    "030-join-and-leave-rotate-unbalanced-mixed-29.json cooperative-sticky: no convergence in 5 rounds",
    "030-join-and-leave-rotate-unbalanced-mixed-29.json cooperative-sticky: unbalanced: m2676225 (0) could take topic2-188 from m0068494 (2)",
    "030-join-and-leave-rotate-unbalanced-mixed-29.json cooperative-sticky: size spread 2 > Java's 1",
];

#[test]
fn java_parity_racks_large() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/assignor/java-parity-racks-large");
    let (failures, tally) = run_set(std::path::Path::new(dir));
    eprintln!("{}", tally.table("java-parity-racks-large"));
    assert!(tally.checked["sticky"] >= 40, "expected >= 40 large rack scenarios, checked {:?}", tally.checked);
    let mut losses = Vec::new();
    let mut others = Vec::new();
    for failure in &failures {
        match parse_loss(failure) {
            Some(loss) => losses.push(loss),
            None => others.push(failure.as_str()),
        }
    }
    let expected: Vec<(String, String, String, usize, usize)> =
        LOSSES.iter().map(|&(f, s, m, o, j)| (f.to_string(), s.to_string(), m.to_string(), o, j)).collect();
    assert_eq!(losses, expected, "the losses against Java changed:\n{}", failures.join("\n"));
    assert_eq!(others, OTHER_FAILURES, "the other parity failures changed");
}

/// Reads `run_set`'s "<file> <strategy>: <metric>: ours <n>, Java <n> (all ...)" failure.
fn parse_loss(failure: &str) -> Option<(String, String, String, usize, usize)> {
    let (head, rest) = failure.split_once(": ")?;
    let (file, strategy) = head.split_once(' ')?;
    let (metric, rest) = rest.split_once(": ours ")?;
    if !["mismatches", "moves", "balance", "rounds"].contains(&metric) {
        return None;
    }
    let (ours, rest) = rest.split_once(", Java ")?;
    let (java, _) = rest.split_once(" (all ")?;
    Some((file.to_string(), strategy.to_string(), metric.to_string(), ours.parse().ok()?, java.parse().ok()?))
}
