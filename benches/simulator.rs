//! Simulator speed: a rolling bounce of a 1,000-member cooperative-sticky group over 100,000
//! partitions (10 topics x 10,000), the whole group in virtual time: broker, 1,000 member
//! coordinators, the leader's assignor on every rebalance, encode/decode of every
//! subscription and assignment.
//!
//! `cargo bench --bench simulator`. The bounce restarts members in 10 waves of 100 (a
//! Kubernetes-style rolling update with 10% unavailable), waiting for the group to settle
//! between waves.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use kafka_consumer_protocol::sim::run;
use kcp_testkit::sim_shapes::rolling_bounce;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulator");
    g.sample_size(10).measurement_time(Duration::from_secs(30)).warm_up_time(Duration::from_secs(1));
    let name = "rolling_bounce_1000_members_100k_partitions";
    let scenario = rolling_bounce(1000, 100_000, 100, false);
    {
        // One run outside criterion, to print what the bounce did.
        let t = Instant::now();
        let out = run(&scenario).expect("valid scenario");
        let s = &out.summary;
        eprintln!(
            "{name}: {:.2?} wall, {} rebalances, {} partitions moved, {} events, {} ms virtual, converged {}, violations {}",
            t.elapsed(),
            s.rebalances,
            s.partitions_moved,
            s.events,
            s.duration_ms,
            s.converged,
            s.violations.len()
        );
        assert!(s.converged && s.violations.is_empty(), "{:?} {:?}", s.unconverged, s.violations);
        g.bench_function(name, |b| b.iter(|| run(&scenario).expect("valid scenario")));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
