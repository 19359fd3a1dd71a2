//! The capture decoder's memory is bounded by the frame, not by what the frame claims: a
//! JoinGroup response of a quarter of a million members (4 bytes each on the wire) is read and
//! each member visited while the heap in use stays within a few times the frame. Holding a
//! record per member, as the decoder once did, takes about 80 times the frame and fails here.
//! The figure for the full-size case (16 MiB frame) is measured with `tools/pcap-wide-join.py`.
// Counting the heap in use needs a global allocator, which needs unsafe; the library forbids it.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use kafka_consumer_protocol::pcap::{GroupBody, GroupReader, Payload, ReaderOptions};

/// The system allocator, counting the bytes in use and their peak since the last reset.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = IN_USE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn varint(mut n: usize, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn compact(s: &str, out: &mut Vec<u8>) {
    varint(s.len() + 1, out);
    out.extend_from_slice(s.as_bytes());
}

fn framed(body: Vec<u8>) -> Vec<u8> {
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(&body);
    f
}

/// A JoinGroup v9 request (correlation id 2) of group `g`.
fn join_request() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&11i16.to_be_bytes());
    b.extend_from_slice(&9i16.to_be_bytes());
    b.extend_from_slice(&2i32.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.push(b'c');
    b.push(0);
    compact("g", &mut b);
    b.extend_from_slice(&30_000i32.to_be_bytes());
    b.extend_from_slice(&60_000i32.to_be_bytes());
    compact("m-1", &mut b);
    b.push(0);
    compact("consumer", &mut b);
    varint(2, &mut b);
    compact("range", &mut b);
    varint(1, &mut b);
    b.push(0);
    b.push(0);
    b.push(0);
    framed(b)
}

/// Its response: `members` members with empty ids, no instance id and empty metadata.
fn join_response(members: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + 4 * members);
    b.extend_from_slice(&2i32.to_be_bytes());
    b.push(0);
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&7i32.to_be_bytes());
    compact("consumer", &mut b);
    compact("range", &mut b);
    compact("m-1", &mut b);
    b.push(0);
    compact("m-1", &mut b);
    varint(members + 1, &mut b);
    for _ in 0..members {
        b.extend_from_slice(&[1, 0, 1, 0]);
    }
    b.push(0);
    framed(b)
}

/// An Ethernet/IPv4/TCP packet record of a little-endian classic pcap.
fn record(out: &mut Vec<u8>, from_client: bool, seq: u32, syn: bool, payload: &[u8]) {
    let (client, server) = (([10, 0, 0, 1], 40000u16), ([10, 0, 0, 2], 9092u16));
    let (src, dst) = if from_client { (client, server) } else { (server, client) };
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
    f.extend_from_slice(&((40 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.1.to_be_bytes());
    f.extend_from_slice(&dst.1.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&0u32.to_be_bytes());
    f.extend_from_slice(&[0x50, if syn { 0x02 } else { 0x18 }, 0xff, 0xff, 0, 0, 0, 0]);
    f.extend_from_slice(payload);
    out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(f.len() as u32).to_le_bytes());
    out.extend_from_slice(&(f.len() as u32).to_le_bytes());
    out.extend_from_slice(&f);
}

fn capture(members: usize) -> (Vec<u8>, usize) {
    let mut out = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend_from_slice(&65_535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    record(&mut out, true, 999, true, &[]);
    record(&mut out, false, 4999, true, &[]);
    record(&mut out, true, 1000, false, &join_request());
    let response = join_response(members);
    let mut seq = 5000u32;
    for chunk in response.chunks(60_000) {
        record(&mut out, false, seq, false, chunk);
        seq = seq.wrapping_add(chunk.len() as u32);
    }
    (out, response.len())
}

#[test]
fn a_frame_of_many_members_costs_a_few_frames_of_memory() {
    const MEMBERS: usize = 256 * 1024;
    let (file, frame) = capture(MEMBERS);
    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let mut reader = GroupReader::new(&file[..], ReaderOptions::default()).unwrap();
    let (mut responses, mut visited) = (0, 0);
    for message in &mut reader {
        if let GroupBody::JoinGroupResponse(joined) = &message.frame.body {
            responses += 1;
            assert_eq!(joined.member_count(), MEMBERS);
            for member in joined.members() {
                assert!(member.member_id.is_empty() && member.group_instance_id.is_none());
                assert!(matches!(member.metadata, Payload::Empty));
                visited += 1;
            }
        }
    }
    assert_eq!((responses, visited), (1, MEMBERS));
    assert_eq!(reader.summary().frames.undecodable_frames, 0);
    let used = PEAK.load(Ordering::Relaxed) - before;
    // The reader's buffers hold the frame a few times over (read buffer, stream, the frame);
    // a record per member would be 20 times the frame or more.
    assert!(used < 8 * frame, "peak heap {used} bytes for a frame of {frame} bytes");
}
