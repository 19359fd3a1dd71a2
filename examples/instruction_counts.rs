//! Instruction counts of the codec and assignor hot paths, for before/after comparisons that do
//! not depend on how loaded the machine is (criterion's wall-clock figures do).
//!
//! Each case runs its timed region inside `kcp_measure`, and callgrind counts only that function
//! (`--toggle-collect=*kcp_measure*`), so building the inputs is not counted. The payloads are
//! built with the `kafka-protocol` crate, so this file compiles against older checkouts of ours
//! too (copy it there with the shapes file). `tools/instruction-counts.sh` runs every case.
//!
//! ```text
//! cargo build --release --example instruction_counts
//! tools/instruction-counts.sh target/release/examples/instruction_counts counts.txt
//! ```
//!
//! Cases: `decode_a`/`encode_a` (a typical v3 subscription: 10 topics, 30 owned partitions,
//! userData, rack), `decode_b`/`encode_b` (1,000 topics, 10,000 owned partitions),
//! `decode_c`/`encode_c` (a 10-topic assignment), and `ASSIGNOR:SHAPE[:existing]` with the
//! benchmark shapes A, B, C, franz and R (`java-rack-mixed-halves-20k-250`, inside the sticky
//! assignors' Java floor; members read in place, `assign_views`).
#![allow(missing_docs)]
use bytes::{Bytes, BytesMut};
use kafka_consumer_protocol::assignor::builtin;
use kafka_consumer_protocol::{AssignmentView, SubscriptionView, Version};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as ATp;
use kafka_protocol::messages::consumer_protocol_subscription::TopicPartition as STp;
use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kafka_protocol::protocol::{Encodable, StrBytes};
use kcp_testkit::assignor_shapes::*;
use std::hint::black_box;

#[inline(never)]
fn kcp_measure<F: FnMut()>(iters: u32, mut f: F) {
    for _ in 0..iters {
        f();
    }
}

fn kp<M: Encodable>(m: &M, v: i16) -> Vec<u8> {
    let mut out = BytesMut::new();
    out.extend_from_slice(&v.to_be_bytes());
    m.encode(&mut out, v).unwrap();
    out.to_vec()
}

fn sub_bytes(topics: usize, ppt: i32) -> Vec<u8> {
    let names: Vec<String> = (0..topics).map(|i| format!("orders-{i:04}")).collect();
    let mut s = ConsumerProtocolSubscription::default();
    s.topics = names.iter().map(|n| StrBytes::from_string(n.clone())).collect();
    s.owned_partitions = names
        .iter()
        .map(|n| {
            let mut t = STp::default();
            t.topic = StrBytes::from_string(n.clone()).into();
            t.partitions = (0..ppt).collect();
            t
        })
        .collect();
    s.user_data = Some(Bytes::from_static(&[0, 0, 0, 7]));
    s.generation_id = 7;
    s.rack_id = Some(StrBytes::from_static_str("use1-az1"));
    kp(&s, 3)
}

fn asg_bytes() -> Vec<u8> {
    let mut a = ConsumerProtocolAssignment::default();
    a.assigned_partitions = (0..10)
        .map(|i| {
            let mut t = ATp::default();
            t.topic = StrBytes::from_string(format!("orders-{i:04}")).into();
            t.partitions = vec![i, i + 10, i + 20];
            t
        })
        .collect();
    kp(&a, 3)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(case), Some(iters)) = (args.get(1), args.get(2).and_then(|n| n.parse::<u32>().ok())) else {
        eprintln!("usage: instruction_counts CASE ITERATIONS");
        std::process::exit(2);
    };
    let case = case.as_str();
    match case {
        "decode_a" | "encode_a" | "decode_b" | "encode_b" => {
            let bytes = if case.ends_with('a') { sub_bytes(10, 3) } else { sub_bytes(1000, 10) };
            let owned = SubscriptionView::decode(&bytes).unwrap().to_owned();
            if case.starts_with("decode") {
                kcp_measure(iters, || {
                    black_box(SubscriptionView::decode(black_box(&bytes)).unwrap());
                });
            } else {
                kcp_measure(iters, || {
                    black_box(black_box(&owned).encode(Version::V3).unwrap());
                });
            }
        }
        "decode_c" | "encode_c" => {
            let bytes = asg_bytes();
            let owned = AssignmentView::decode(&bytes).unwrap().to_owned();
            if case.starts_with("decode") {
                kcp_measure(iters, || {
                    black_box(AssignmentView::decode(black_box(&bytes)).unwrap());
                });
            } else {
                kcp_measure(iters, || {
                    black_box(black_box(&owned).encode(Version::V3).unwrap());
                });
            }
        }
        _ => {
            // assignor cases: NAME:SHAPE[:existing]
            let parts: Vec<&str> = case.split(':').collect();
            let Some(assignor) = builtin(parts[0]) else {
                eprintln!("unknown case {case}");
                std::process::exit(2);
            };
            let coop = parts[0] == "cooperative-sticky";
            let mut shape = match parts[1] {
                "A" => uniform(500, 2000, 2000),
                "B" => last_on_first_topic(500, 2000, 2000),
                "C" => halves(100, 200, 500),
                // java-rack-mixed-halves-20k-250: within the sticky assignors' Java floor.
                "R" => with_racks(halves(50, 400, 250), 3, 2),
                "franz" => franz_large(),
                other => {
                    eprintln!("unknown shape {other}");
                    std::process::exit(2);
                }
            };
            if parts.get(2) == Some(&"existing") {
                let first = assignor.assign(&shape.metadata, &shape.members).unwrap();
                shape = with_ownership(&shape, &first, coop);
            }
            let enc = encoded(&shape.members);
            let v = views(&shape.members, &enc);
            kcp_measure(iters, || {
                black_box(assignor.assign_views(&shape.metadata, &v).unwrap());
            });
        }
    }
}
