//! The properties the `kafka_framing` fuzz target checks: the pcap reader, TCP reassembly and the
//! Kafka framing/response matching never panic on arbitrary bytes, account for every message,
//! and give the same result however a byte stream is cut. Shared with `tests/fuzz_pcap_corpus.rs`.
#![allow(dead_code)]

use kafka_consumer_protocol::pcap::{ConnectionDecoder, GroupFrame, GroupReader, ReaderOptions};
use kafka_consumer_protocol::DecodeOptions;

/// Small limits so that the fuzzer reaches the overflow and memory-budget paths.
fn small_options() -> ReaderOptions {
    ReaderOptions {
        max_out_of_order: 512,
        max_group_frame: 4096,
        max_total_buffered: 8192,
        max_connections: 8,
        read_buffer: 4096,
        ..ReaderOptions::default()
    }
}

fn read_capture(file: &[u8], options: ReaderOptions) {
    if let Ok(mut reader) = GroupReader::new(file, options) {
        let n = reader.by_ref().count() as u64;
        let summary = reader.summary();
        assert_eq!(summary.messages, n);
        assert!(summary.frames.group_messages >= n);
        assert!(summary.tcp_segments <= summary.packets);
    }
}

/// Wraps `data` as a classic pcap of Ethernet/IPv4/TCP segments between 10.0.0.1:40000 and
/// 10.0.0.2:9092: each record is `[flags][seq delta: 2][len][payload: len]`; flags bit 0:
/// from the broker, bit 1: SYN, bit 2: FIN, bit 3: RST, bit 4: snap-length cut.
pub fn synthetic_pcap(mut data: &[u8]) -> Vec<u8> {
    let mut out = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    let mut seq = [1000u32, 5000u32];
    while data.len() >= 4 {
        let flags = data[0];
        let delta = u16::from_be_bytes([data[1], data[2]]);
        let len = usize::from(data[3]).min(data.len() - 4);
        let payload = &data[4..4 + len];
        data = &data[4 + len..];
        let side = usize::from(flags & 1);
        // Mostly in order; the delta moves the sequence number (gaps, overlaps).
        let this = seq[side].wrapping_add(u32::from(delta)).wrapping_sub(8);
        seq[side] = this.wrapping_add(len as u32).wrapping_add(u32::from((flags >> 1) & 1));
        let (src, dst) = if side == 0 {
            (([10, 0, 0, 1], 40000u16), ([10, 0, 0, 2], 9092u16))
        } else {
            (([10, 0, 0, 2], 9092), ([10, 0, 0, 1], 40000))
        };
        let mut tcp = Vec::new();
        tcp.extend_from_slice(&src.1.to_be_bytes());
        tcp.extend_from_slice(&dst.1.to_be_bytes());
        tcp.extend_from_slice(&this.to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 0, 0x50]);
        tcp.push(0x10 | ((flags >> 1) & 1) << 1 | ((flags >> 2) & 1) | ((flags >> 3) & 1) << 2);
        tcp.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
        tcp.extend_from_slice(payload);
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        frame.extend_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
        frame.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
        frame.extend_from_slice(&[src.0[0], src.0[1], src.0[2], src.0[3], dst.0[0], dst.0[1], dst.0[2], dst.0[3]]);
        frame.extend_from_slice(&tcp);
        let orig = frame.len();
        if flags & 0x10 != 0 {
            frame.truncate(orig - len / 2);
        }
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&(orig as u32).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    out
}

fn frames_debug(frames: &[GroupFrame]) -> Vec<String> {
    frames.iter().map(|f| format!("{f:?}")).collect()
}

/// Feeds `requests` then `responses` to a decoder, whole or cut at the positions `cuts` gives.
fn decode_streams(requests: &[u8], responses: &[u8], from_start: bool, cuts: Option<&[u8]>) -> Vec<String> {
    let mut decoder = ConnectionDecoder::with_limit(DecodeOptions::new(), from_start, 1 << 16);
    let mut out = Vec::new();
    let feed = |bytes: &[u8], f: &mut dyn FnMut(&[u8])| match cuts {
        None => f(bytes),
        Some(cuts) => {
            let mut rest = bytes;
            let mut i = 0;
            while !rest.is_empty() {
                let n = (usize::from(cuts.get(i % cuts.len().max(1)).copied().unwrap_or(1)) % 17 + 1).min(rest.len());
                f(&rest[..n]);
                rest = &rest[n..];
                i += 1;
            }
        }
    };
    feed(requests, &mut |b| decoder.request_bytes(b, &mut out));
    feed(responses, &mut |b| decoder.response_bytes(b, &mut out));
    assert_eq!(decoder.counts().group_messages as usize, out.len());
    decoder.finish();
    frames_debug(&out)
}

/// The fuzz target's check. The first byte selects what the rest is.
pub fn kafka_framing(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 4 {
        // A capture file as is.
        0 => {
            read_capture(rest, ReaderOptions { read_buffer: 16 * 1024, ..ReaderOptions::default() });
            read_capture(rest, small_options());
        }
        // Segments of one connection, wrapped in a valid pcap.
        1 => {
            let file = synthetic_pcap(rest);
            read_capture(&file, ReaderOptions { read_buffer: 16 * 1024, ..ReaderOptions::default() });
            read_capture(&file, small_options());
            read_capture(&file, ReaderOptions { ports: vec![9092], ..small_options() });
        }
        // Two byte streams of one connection: the result does not depend on how they are cut.
        _ => {
            if rest.len() < 3 {
                return;
            }
            let split = usize::from(u16::from_be_bytes([rest[0], rest[1]])) % rest.len();
            let (requests, responses) = rest[2..].split_at(split.min(rest.len() - 2));
            let from_start = mode % 4 == 2;
            let whole = decode_streams(requests, responses, from_start, None);
            let cut = decode_streams(requests, responses, from_start, Some(rest));
            assert_eq!(whole, cut);
        }
    }
}
