//! Codec speed, side by side with the `kafka-protocol` crate doing the same work in the same run.
//!
//! `cargo bench --bench codec`. Shapes: (a) a typical subscription (v3, 10 topics, 30 owned
//! partitions, 4-byte userData, rack), (b) a large one (1,000 topics, 10,000 owned partitions),
//! (c) a typical assignment (10 topics, 30 partitions). Encoding is measured twice: into a new
//! buffer per call, and appended to a buffer kept from one call to the next (`encode_into`; for
//! kafka-protocol the same `BytesMut`, cleared).
#![allow(missing_docs)] // criterion_group! generates undocumented items

use std::hint::black_box;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafka_consumer_protocol::{
    Assignment, AssignmentBuf, AssignmentView, Subscription, SubscriptionBuf, SubscriptionView, TopicPartitions,
    Version,
};
use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kafka_protocol::protocol::{Decodable, Encodable};

fn subscription(topics: usize, partitions_per_topic: i32) -> Subscription {
    let names: Vec<String> = (0..topics).map(|i| format!("orders-{i:04}")).collect();
    let owned =
        names.iter().map(|t| TopicPartitions::new(t.clone(), (0..partitions_per_topic).collect::<Vec<_>>())).collect();
    Subscription::new(names)
        .with_owned_partitions(owned)
        .with_user_data(Bytes::from_static(&[0, 0, 0, 7]))
        .with_generation_id(7)
        .with_rack_id("use1-az1")
}

fn assignment() -> Assignment {
    Assignment::new((0..10).map(|i| TopicPartitions::new(format!("orders-{i:04}"), [i, i + 10, i + 20])).collect())
}

/// kafka-protocol has no version prefix: read it, then decode the body at that version.
fn kp_decode_subscription(mut bytes: Bytes) -> ConsumerProtocolSubscription {
    let version = i16::from_be_bytes([bytes[0], bytes[1]]);
    let _ = bytes.split_to(2);
    ConsumerProtocolSubscription::decode(&mut bytes, version).unwrap()
}

fn kp_decode_assignment(mut bytes: Bytes) -> ConsumerProtocolAssignment {
    let version = i16::from_be_bytes([bytes[0], bytes[1]]);
    let _ = bytes.split_to(2);
    ConsumerProtocolAssignment::decode(&mut bytes, version).unwrap()
}

fn kp_encode<M: Encodable>(message: &M, version: i16) -> BytesMut {
    let mut out = BytesMut::with_capacity(2 + message.compute_size(version).unwrap());
    out.extend_from_slice(&version.to_be_bytes());
    message.encode(&mut out, version).unwrap();
    out
}

/// kafka-protocol encoding into a buffer kept from one call to the next, as `encode_into` does.
fn kp_encode_into<M: Encodable>(message: &M, version: i16, out: &mut BytesMut) {
    out.clear();
    out.reserve(2 + message.compute_size(version).unwrap());
    out.extend_from_slice(&version.to_be_bytes());
    message.encode(out, version).unwrap();
}

fn bench_subscription(c: &mut Criterion, label: &str, sub: &Subscription) {
    let encoded = Bytes::from(sub.encode(Version::V3).unwrap());
    let kp = kp_decode_subscription(encoded.clone());
    let mut group = c.benchmark_group(format!("subscription/{label}"));
    group.throughput(Throughput::Bytes(encoded.len() as u64));
    group.bench_function(BenchmarkId::new("decode", "ours-borrowed"), |b| {
        b.iter(|| SubscriptionView::decode(black_box(&encoded)).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode", "ours-borrowed+read-all"), |b| {
        b.iter(|| {
            let s = SubscriptionView::decode(black_box(&encoded)).unwrap();
            let names: usize = s.topics().iter().map(str::len).sum();
            let parts: i64 = s.owned_partitions().pairs().map(|(_, p)| i64::from(p)).sum();
            (names, parts, s.generation_id(), s.rack_id(), s.user_data())
        })
    });
    group.bench_function(BenchmarkId::new("decode", "ours-bytes"), |b| {
        b.iter(|| SubscriptionBuf::decode(black_box(encoded.clone())).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode", "ours-owned"), |b| {
        b.iter(|| Subscription::decode(black_box(&encoded)).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode", "kafka-protocol"), |b| {
        b.iter(|| kp_decode_subscription(black_box(encoded.clone())))
    });
    group
        .bench_function(BenchmarkId::new("encode", "ours"), |b| b.iter(|| black_box(sub).encode(Version::V3).unwrap()));
    group.bench_function(BenchmarkId::new("encode", "kafka-protocol"), |b| b.iter(|| kp_encode(black_box(&kp), 3)));
    let mut out = Vec::new();
    group.bench_function(BenchmarkId::new("encode-reused-buffer", "ours"), |b| {
        b.iter(|| {
            out.clear();
            black_box(sub).encode_into(Version::V3, &mut out).unwrap();
        })
    });
    let mut kp_out = BytesMut::new();
    group.bench_function(BenchmarkId::new("encode-reused-buffer", "kafka-protocol"), |b| {
        b.iter(|| kp_encode_into(black_box(&kp), 3, &mut kp_out))
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    bench_subscription(c, "typical", &subscription(10, 3));
    bench_subscription(c, "large", &subscription(1000, 10));

    let asg = assignment();
    let encoded = Bytes::from(asg.encode(Version::V3).unwrap());
    let kp = kp_decode_assignment(encoded.clone());
    let mut group = c.benchmark_group("assignment/typical");
    group.throughput(Throughput::Bytes(encoded.len() as u64));
    group.bench_function(BenchmarkId::new("decode", "ours-borrowed"), |b| {
        b.iter(|| AssignmentView::decode(black_box(&encoded)).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode", "ours-bytes"), |b| {
        b.iter(|| AssignmentBuf::decode(black_box(encoded.clone())).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode", "ours-owned"), |b| {
        b.iter(|| Assignment::decode(black_box(&encoded)).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode", "kafka-protocol"), |b| {
        b.iter(|| kp_decode_assignment(black_box(encoded.clone())))
    });
    group.bench_function(BenchmarkId::new("encode", "ours"), |b| {
        b.iter(|| black_box(&asg).encode(Version::V3).unwrap())
    });
    group.bench_function(BenchmarkId::new("encode", "kafka-protocol"), |b| b.iter(|| kp_encode(black_box(&kp), 3)));
    let mut out = Vec::new();
    group.bench_function(BenchmarkId::new("encode-reused-buffer", "ours"), |b| {
        b.iter(|| {
            out.clear();
            black_box(&asg).encode_into(Version::V3, &mut out).unwrap();
        })
    });
    let mut kp_out = BytesMut::new();
    group.bench_function(BenchmarkId::new("encode-reused-buffer", "kafka-protocol"), |b| {
        b.iter(|| kp_encode_into(black_box(&kp), 3, &mut kp_out))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)).sample_size(50);
    targets = codec
}
criterion_main!(benches);
