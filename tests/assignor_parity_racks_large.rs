//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the large seeded
//! rack-aware groups in `testdata/assignor/java-parity-racks-large/` (`tools/java-assignors`,
//! `RackGenerator.largeSet`): 257-1000 members over 2-4 racks, replication 1-3, 1,000-20,000
//! partitions, uniform and mixed subscriptions, first assignments and reassignments after joins,
//! leaves and rack changes.
//!
//! These groups are beyond the 256 members up to which the leader always computes Java's own
//! answer as a floor under ours, but within the floor's other limit (members x partitions up to
//! 4,000,000), so the floor runs on them too: `sticky` is no worse than Java on any of them.
//! What remains is one `cooperative-sticky` group whose outcome is decided over several rounds;
//! the test pins the exact list (it fails when any loss appears, disappears or changes its
//! figures). On 3 groups Java never stops withholding partitions within the tool's 30 rounds
//! (018, 019, 020; the model of Java plays 200 and they do not stop either): Java has no final
//! assignment there, and only the rounds compare (ours need one follow-up on each).
//!
//! `cargo test --release --test assignor_parity_racks_large -- --nocapture` prints the tally.

mod assignor_common;

use assignor_common::parity::run_set;

/// A loss against Java: (file, strategy, metric, ours, Java), lower is better for every metric.
type Loss = (&'static str, &'static str, &'static str, usize, usize);

/// Losses against Java: none. (Until the leader looked ahead over the cooperative rounds,
/// `cooperative-sticky` 039 ended at 786 partitions moved against Java's 777: its first round took
/// Java's final assignment as the target, and from the state that left the follow-up round took
/// Java's answer there, which moved 9 more. It now plays Java's own first round and completes it
/// in one follow-up: 762 moved, 55 mismatches as Java, 1 follow-up against Java's 3.)
const LOSSES: &[Loss] = &[];

/// Failures other than a metric loss: none now (before the floor covered these groups, three
/// cooperative reassignments still revoked after 5 follow-up rounds).
const OTHER_FAILURES: &[&str] = &[];

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
