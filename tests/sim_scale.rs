//! A larger group, run in release only: `cargo test --release --test sim_scale -- --ignored --nocapture`.

use std::time::Instant;

use kcp_testkit::sim_shapes::rolling_bounce;

#[test]
#[ignore = "large; release mode"]
fn rolling_bounce_at_scale() {
    let members: usize = std::env::var("MEMBERS").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let partitions: i32 = std::env::var("PARTITIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let wave: usize = std::env::var("WAVE").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let t = Instant::now();
    let out = kafka_consumer_protocol::sim::run(&rolling_bounce(members, partitions, wave, false)).unwrap();
    println!("{:.2?} {:?}", t.elapsed(), out.summary);
    assert!(out.summary.converged && out.summary.violations.is_empty());
}
