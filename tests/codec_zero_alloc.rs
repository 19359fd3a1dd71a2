//! Proves that borrowed decoding (and Bytes-backed decoding) performs zero heap allocations,
//! with a counting global allocator. Counts are per thread so parallel tests do not interfere.
// The counting allocator needs unsafe; the library itself forbids it.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bytes::Bytes;
use kafka_consumer_protocol::{
    Assignment, AssignmentBuf, AssignmentView, Subscription, SubscriptionBuf, SubscriptionView, TopicPartitions,
    Version,
};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: delegates every call to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_in<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (out, ALLOCATIONS.with(Cell::get) - before)
}

fn large_subscription() -> Subscription {
    let topics: Vec<String> = (0..1000).map(|i| format!("topic-{i:04}")).collect();
    let owned = topics.iter().map(|t| TopicPartitions::new(t.clone(), (0..10).collect::<Vec<_>>())).collect();
    Subscription::new(topics)
        .with_owned_partitions(owned)
        .with_user_data(Some(Bytes::from_static(&[0, 0, 0, 4])))
        .with_generation_id(12)
        .with_rack_id("use1-az1")
}

#[test]
fn borrowed_decode_and_iteration_allocate_nothing() {
    let bytes = large_subscription().encode(Version::V3).unwrap();
    let (checksum, allocations) = allocations_in(|| {
        let sub = SubscriptionView::decode(&bytes).unwrap();
        let names: usize = sub.topics().iter().map(str::len).sum();
        let partitions: i64 = sub.owned_partitions().pairs().map(|(_, p)| i64::from(p)).sum();
        (sub.topics().len(), names, partitions, sub.generation_id(), sub.rack_id().map(str::len))
    });
    assert_eq!(checksum, (1000, 10_000, 45_000, 12, Some(8)));
    assert_eq!(allocations, 0, "borrowed subscription decode allocated");

    let assignment = Assignment::new(vec![TopicPartitions::new("orders", (0..64).collect::<Vec<_>>())]);
    let bytes = assignment.encode(Version::V3).unwrap();
    let (count, allocations) =
        allocations_in(|| AssignmentView::decode(&bytes).unwrap().assigned_partitions().partition_count());
    assert_eq!((count, allocations), (64, 0));
}

#[test]
fn bytes_backed_decode_allocates_nothing() {
    let sub_bytes = Bytes::from(large_subscription().encode(Version::V3).unwrap());
    let asg_bytes = Bytes::from(Assignment::new(vec![TopicPartitions::new("t", [1, 2])]).encode(Version::V0).unwrap());
    let ((sub, asg), allocations) =
        allocations_in(|| (SubscriptionBuf::decode(sub_bytes).unwrap(), AssignmentBuf::decode(asg_bytes).unwrap()));
    assert_eq!(allocations, 0, "Bytes-backed decode allocated");
    assert_eq!(sub.view().topics().len(), 1000);
    assert_eq!(asg.view().assigned_partitions().partition_count(), 2);
}

#[test]
fn encoding_allocates_exactly_once() {
    let sub = large_subscription();
    let (bytes, allocations) = allocations_in(|| sub.encode(Version::V3).unwrap());
    assert_eq!(allocations, 1, "canonical input encodes with one allocation");
    assert_eq!(bytes.len(), sub.encoded_len(Version::V3));
    let assignment = Assignment::new(vec![TopicPartitions::new("b", [1]), TopicPartitions::new("a", [0])]);
    let (_, allocations) = allocations_in(|| assignment.encode(Version::V3).unwrap());
    assert_eq!(allocations, 1);
}
