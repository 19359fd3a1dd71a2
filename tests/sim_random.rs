//! Property test: random small groups with every kind of step and fault never break the
//! ownership invariants and always converge.

use kafka_consumer_protocol::sim::{gen::random_scenario, run};

fn check(range: std::ops::Range<u64>) {
    let mut failures = Vec::new();
    for seed in range {
        let s = random_scenario(seed);
        let out = run(&s).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if !out.summary.violations.is_empty() || !out.summary.converged {
            failures.push(format!("seed {seed}: {:?} {:?}", out.summary.violations, out.summary.unconverged));
        }
    }
    assert!(failures.is_empty(), "{} failing seeds:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn ten_thousand_random_scenarios_without_violations() {
    check(0..10_000);
}

#[test]
#[ignore = "larger run: cargo test --release --test sim_random -- --ignored"]
fn hundred_thousand_random_scenarios_without_violations() {
    check(10_000..110_000);
}

/// Prints one seed's scenario and timeline: `SEED=484 cargo test --test sim_random dump -- --ignored --nocapture`.
#[test]
#[ignore = "debugging aid"]
fn dump() {
    let seed: u64 = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let s = random_scenario(seed);
    println!("{s:#?}");
    let out = run(&s).unwrap();
    for e in &out.timeline {
        let owned: Vec<(String, usize)> =
            e.owned.iter().map(|(k, v)| (k.clone(), v.iter().map(|g| g.partitions.len()).sum())).collect();
        println!(
            "{} {} g{} {} {:?} {:?} {:?} {:?} {:?}",
            e.seq, e.t_ms, e.generation, e.event, e.member, e.partitions, owned, e.generations, e.detail
        );
    }
    println!("{:#?}", out.summary);
}

/// Mixed groups (classic and consumer-protocol members, rolling upgrades, the broker's
/// reconciliation): no partition owned twice at any instant, across both protocols, and every
/// run converges.
#[test]
fn mixed_group_random_scenarios_without_violations() {
    let converted = check_mixed(0..2_000);
    // The family exercises the conversion, not only classic groups.
    assert!(converted > 1_000, "only {converted} of 2000 runs converted the group");
}

#[test]
#[ignore = "larger run: cargo test --test sim_random mixed -- --ignored"]
fn mixed_group_twenty_thousand_random_scenarios_without_violations() {
    check_mixed(2_000..22_000);
}

/// Runs the mixed family over `range`; returns how many runs converted the group.
fn check_mixed(range: std::ops::Range<u64>) -> usize {
    use kafka_consumer_protocol::sim::gen::random_mixed_scenario;
    let mut failures = Vec::new();
    let mut converted = 0;
    for seed in range {
        let s = random_mixed_scenario(seed);
        let out = run(&s).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        converted += usize::from(!out.summary.conversions.is_empty());
        if !out.summary.violations.is_empty() || !out.summary.converged {
            failures.push(format!("seed {seed}: {:?} {:?}", out.summary.violations, out.summary.unconverged));
        }
    }
    assert!(failures.is_empty(), "{} failing seeds:\n{}", failures.len(), failures.join("\n"));
    converted
}

/// Prints one mixed seed: `SEED=5 cargo test --test sim_random dump_mixed -- --ignored --nocapture`.
#[test]
#[ignore = "debugging aid"]
fn dump_mixed() {
    let seed: u64 = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let s = kafka_consumer_protocol::sim::gen::random_mixed_scenario(seed);
    println!("{s:#?}");
    let out = run(&s).unwrap();
    for e in &out.timeline {
        println!(
            "{} {} g{} {} {:?} {:?} {:?} rev={:?} wait={:?} {:?}",
            e.seq,
            e.t_ms,
            e.generation,
            e.event,
            e.member,
            e.partitions,
            e.owned,
            e.pending_revocation,
            e.awaiting,
            e.detail
        );
    }
    println!("{:#?}", out.summary);
}
