//! Peak heap of one assignment versus the size of its output, with a counting allocator.
//!
//! `cargo run --release --example assignor_memory` prints, per shape: time, peak heap bytes
//! allocated during `assign` (above what was live before), and the heap bytes the output holds;
//! then the same for `assign_views` on the members' encoded subscriptions (`-views`).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use kafka_consumer_protocol::assignor::{builtin, GroupAssignment};
use kcp_testkit::assignor_shapes;

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicBool = AtomicBool::new(false);

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() && COUNT.load(Relaxed) {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        if COUNT.load(Relaxed) {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A timed run without counting, then a counted run for the peak.
fn measure(name: &str, case: &str, assign: &dyn Fn() -> GroupAssignment) {
    let t = Instant::now();
    let first = assign();
    let dt = t.elapsed();
    let t = Instant::now();
    drop(first);
    let drop_time = t.elapsed();
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    COUNT.store(true, Relaxed);
    let out = assign();
    COUNT.store(false, Relaxed);
    let peak = PEAK.load(Relaxed);
    let size = out.heap_bytes();
    println!(
        "{name:<19} {case:<46} {:>9.2} ms (drop {:>7.2} ms)  peak {:>11} B  output {:>11} B  ratio {:.2}",
        dt.as_secs_f64() * 1e3,
        drop_time.as_secs_f64() * 1e3,
        peak,
        size,
        peak as f64 / size as f64
    );
}

fn main() {
    let only: Vec<String> = std::env::args().skip(1).collect();
    for name in ["cooperative-sticky", "sticky", "range", "roundrobin"] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let assignor = builtin(name).unwrap();
        for (case, shape) in assignor_shapes::cases(assignor.as_ref()) {
            let encoded = assignor_shapes::encoded(&shape.members);
            let views = assignor_shapes::views(&shape.members, &encoded);
            let owned = || assignor.assign(&shape.metadata, &shape.members).unwrap();
            let in_place = || assignor.assign_views(&shape.metadata, &views).unwrap();
            measure(name, &case, &owned);
            measure(name, &format!("{case}-views"), &in_place);
        }
    }
}
