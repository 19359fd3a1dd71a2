//! Assignor speed on Apache Kafka's large test shapes and franz-go's benchmark shapes.
//!
//! `cargo bench --bench assignors` (all four assignors), or e.g.
//! `cargo bench --bench assignors -- cooperative-sticky` for one. Each case is a first
//! assignment (`fresh`) or a re-assignment where every member but the first owns its previous
//! assignment at generation 1 (`existing`); see `testkit/src/assignor_shapes.rs`.

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kafka_consumer_protocol::assignor::builtin;
use kcp_testkit::assignor_shapes;

fn assignors(c: &mut Criterion) {
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    for name in ["cooperative-sticky", "sticky", "range", "roundrobin"] {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str()) || f.contains(name)) {
            continue;
        }
        let assignor = builtin(name).unwrap();
        let mut group = c.benchmark_group(name);
        group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
        for (case, shape) in assignor_shapes::cases(assignor.as_ref()) {
            group.bench_function(&case, |b| {
                // The result is dropped outside the timed region (as Java's and Go's garbage is
                // collected outside theirs): for 1M partitions freeing ~2M allocations costs
                // tens of milliseconds on its own.
                b.iter_with_large_drop(|| {
                    assignor.assign(black_box(&shape.metadata), black_box(&shape.members)).unwrap()
                })
            });
            let encoded = assignor_shapes::encoded(&shape.members);
            let views = assignor_shapes::views(&shape.members, &encoded);
            group.bench_function(format!("{case}-views"), |b| {
                b.iter_with_large_drop(|| assignor.assign_views(black_box(&shape.metadata), black_box(&views)).unwrap())
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = assignors
}
criterion_main!(benches);
