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
use kafka_consumer_protocol::sim::{run, MemberSpec, Scenario, SimConfig, Step, StepSpec};

/// The rolling-bounce scenario: `members` cooperative-sticky members over `partitions`
/// partitions, restarted in waves of `wave` members.
pub fn rolling_bounce(members: usize, partitions: i32, wave: usize, static_members: bool) -> Scenario {
    let topics: Vec<String> = (0..10).map(|i| format!("topic-{i}")).collect();
    let mut s = Scenario {
        seed: 7,
        topics: topics.iter().map(|t| (t.clone(), partitions / 10)).collect(),
        members: Vec::new(),
        steps: Vec::new(),
        config: SimConfig { record_timeline: false, ..SimConfig::default() },
    };
    for i in 0..members {
        let mut m = MemberSpec::new(&format!("m{i:04}"), ["cooperative-sticky"], topics.iter().cloned());
        if static_members {
            m.static_id = Some(format!("host-{i:04}"));
        }
        s.members.push(m);
    }
    for (i, m) in s.members.clone().iter().enumerate() {
        let last_of_wave = (i + 1) % wave == 0 || i + 1 == members;
        s.steps.push(StepSpec {
            step: Step::Restart { id: m.id.clone(), assignors: None, topics: None },
            settle: last_of_wave,
        });
    }
    s
}

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
