//! Hand-built segments and records: every layout, codec and hostile case the decoder handles.

use std::io::Write;

use super::*;
use crate::codec::{Subscription, TopicPartitions, Version};

/// A writer of Kafka's primitive types.
#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn i8(mut self, v: i8) -> Self {
        self.0.push(v as u8);
        self
    }
    fn i16(mut self, v: i16) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i64(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn uv(mut self, mut v: u64) -> Self {
        loop {
            if v < 0x80 {
                self.0.push(v as u8);
                return self;
            }
            self.0.push((v as u8 & 0x7F) | 0x80);
            v >>= 7;
        }
    }
    fn zz(self, v: i64) -> Self {
        self.uv(((v << 1) ^ (v >> 63)) as u64)
    }
    fn raw(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
    fn s(self, v: &str) -> Self {
        self.i16(v.len() as i16).raw(v.as_bytes())
    }
    fn ns(self, v: Option<&str>) -> Self {
        match v {
            None => self.i16(-1),
            Some(v) => self.s(v),
        }
    }
    fn b32(self, v: &[u8]) -> Self {
        self.i32(v.len() as i32).raw(v)
    }
    fn cs(self, v: &str) -> Self {
        self.uv(v.len() as u64 + 1).raw(v.as_bytes())
    }
    fn cns(self, v: Option<&str>) -> Self {
        match v {
            None => self.uv(0),
            Some(v) => self.cs(v),
        }
    }
    fn cb(self, v: &[u8]) -> Self {
        self.uv(v.len() as u64 + 1).raw(v)
    }
    fn no_tags(self) -> Self {
        self.uv(0)
    }
}

fn offset_commit_key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    W::default().i16(1).s(group).s(topic).i32(partition).0
}

fn offset_commit_v3(offset: i64) -> Vec<u8> {
    W::default().i16(3).i64(offset).i32(5).s("meta").i64(1_700_000_000_000).0
}

fn subscription_bytes() -> Vec<u8> {
    Subscription::new(["orders"])
        .with_owned_partitions(vec![TopicPartitions::new("orders", [0, 1])])
        .with_generation_id(4)
        .encode(Version::V3)
        .unwrap()
}

fn group_metadata_v3() -> Vec<u8> {
    W::default()
        .i16(3)
        .s("consumer")
        .i32(4)
        .ns(Some("range"))
        .ns(Some("m1"))
        .i64(1_700_000_000_001)
        .i32(1)
        .s("m1")
        .ns(Some("static-1"))
        .s("client")
        .s("/127.0.0.1")
        .i32(300_000)
        .i32(45_000)
        .b32(&subscription_bytes())
        .b32(&[0, 3, 0, 0, 0, 0, 255, 255, 255, 255])
        .0
}

fn record_v2(offset_delta: i64, ts_delta: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Vec<u8> {
    let mut body = W::default().i8(0).zz(ts_delta).zz(offset_delta);
    body = match key {
        None => body.zz(-1),
        Some(k) => body.zz(k.len() as i64).raw(k),
    };
    body = match value {
        None => body.zz(-1),
        Some(v) => body.zz(v.len() as i64).raw(v),
    };
    body = body.zz(0); // headers
    W::default().zz(body.0.len() as i64).raw(&body.0).0
}

fn compress(codec: Compression, data: &[u8]) -> Vec<u8> {
    match codec {
        Compression::None => data.to_vec(),
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Snappy => xerial(data),
        Compression::Lz4 => lz4_frame(data),
        Compression::Zstd => zstd::stream::encode_all(data, 3).unwrap(),
    }
}

/// Kafka's Java snappy framing: the xerial header, then length-prefixed raw blocks.
fn xerial(data: &[u8]) -> Vec<u8> {
    let mut out = W::default().raw(&[0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0]).i32(1).i32(1);
    for chunk in data.chunks(32 << 10) {
        let block = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
        out = out.i32(block.len() as i32).raw(&block);
    }
    out.0
}

/// The LZ4 frame format: independent 64 KiB blocks, no checksums.
fn lz4_frame(data: &[u8]) -> Vec<u8> {
    let mut out = W::default().raw(&[0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82]);
    for chunk in data.chunks(64 << 10) {
        let block = lz4_flex::block::compress(chunk);
        out.0.extend_from_slice(&(block.len() as u32).to_le_bytes());
        out = out.raw(&block);
    }
    out.raw(&[0, 0, 0, 0]).0
}

fn batch_v2_with(base_offset: i64, records: &[Vec<u8>], codec: Compression, count: i32) -> Vec<u8> {
    let payload: Vec<u8> = records.concat();
    let codec_bits = match codec {
        Compression::None => 0,
        Compression::Gzip => 1,
        Compression::Snappy => 2,
        Compression::Lz4 => 3,
        Compression::Zstd => 4,
    };
    let after_crc = W::default()
        .i16(codec_bits)
        .i32(records.len() as i32 - 1)
        .i64(1_000)
        .i64(1_000 + records.len() as i64)
        .i64(-1)
        .i16(-1)
        .i32(-1)
        .i32(count)
        .raw(&compress(codec, &payload))
        .0;
    let crc = crc32c::crc32c(&after_crc);
    let tail = W::default().i32(0).i8(2).i32(crc as i32).raw(&after_crc).0;
    W::default().i64(base_offset).i32(tail.len() as i32).raw(&tail).0
}

fn batch_v2(base_offset: i64, records: &[Vec<u8>], codec: Compression) -> Vec<u8> {
    batch_v2_with(base_offset, records, codec, records.len() as i32)
}

fn message(magic: i8, offset: i64, attributes: i8, key: Option<&[u8]>, value: Option<&[u8]>) -> Vec<u8> {
    let mut body = W::default().i8(magic).i8(attributes);
    if magic == 1 {
        body = body.i64(2_000);
    }
    for part in [key, value] {
        body = match part {
            None => body.i32(-1),
            Some(b) => body.b32(b),
        };
    }
    let crc = crc32fast::hash(&body.0);
    let tail = W::default().i32(crc as i32).raw(&body.0).0;
    W::default().i64(offset).i32(tail.len() as i32).raw(&tail).0
}

/// A record's offset, timestamp and decoding, or the error.
type DecodedRecord = Result<(i64, i64, CoordinatorRecord<'static>), LogError>;

/// Every batch of `bytes`: per batch, its header and its decoded records, or the error.
fn read_all(bytes: &[u8], limits: Limits) -> Vec<Result<(BatchHeader, Vec<DecodedRecord>), LogError>> {
    let leaked: &'static [u8] = Box::leak(bytes.to_vec().into_boxed_slice());
    let mut reader = SegmentReader::new(leaked, limits);
    let mut out = Vec::new();
    while let Some(batch) = reader.next_batch() {
        out.push(batch.map(|b| {
            let records = b
                .records()
                .map(|r| {
                    r.and_then(|r| {
                        let key: Option<&'static [u8]> = r.key.map(|k| &*Box::leak(k.to_vec().into_boxed_slice()));
                        let value: Option<&'static [u8]> = r.value.map(|v| &*Box::leak(v.to_vec().into_boxed_slice()));
                        CoordinatorRecord::decode(key, value).map(|d| (r.offset, r.timestamp, d))
                    })
                })
                .collect();
            (b.header.clone(), records)
        }));
    }
    out
}

fn commit_and_group(codec: Compression) -> Vec<u8> {
    let k1 = offset_commit_key("g", "orders", 1);
    let v1 = offset_commit_v3(42);
    let k2 = W::default().i16(2).s("g").0;
    let v2 = group_metadata_v3();
    batch_v2(100, &[record_v2(0, 0, Some(&k1), Some(&v1)), record_v2(1, 1, Some(&k2), Some(&v2))], codec)
}

fn check_commit_and_group(records: &[DecodedRecord]) {
    assert_eq!(records.len(), 2);
    let (offset, ts, commit) = records[0].as_ref().unwrap();
    assert_eq!((*offset, *ts), (100, 1_000));
    assert_eq!(commit.key, RecordKey::OffsetCommit { type_id: 1, group: "g", topic: "orders", partition: 1 });
    assert_eq!(
        commit.value,
        Some((
            3,
            RecordValue::OffsetCommit(OffsetCommitValue {
                offset: 42,
                leader_epoch: 5,
                metadata: "meta",
                commit_timestamp: 1_700_000_000_000,
                expire_timestamp: -1,
                topic_id: None,
            })
        ))
    );
    let (offset, _, group) = records[1].as_ref().unwrap();
    assert_eq!(*offset, 101);
    let Some((3, RecordValue::GroupMetadata(g))) = &group.value else { panic!("{group:?}") };
    assert_eq!((g.protocol_type, g.generation, g.protocol, g.leader), ("consumer", 4, Some("range"), Some("m1")));
    assert_eq!(g.current_state_timestamp, 1_700_000_000_001);
    let m = &g.members[0];
    assert_eq!(
        (m.member_id, m.group_instance_id, m.rebalance_timeout, m.session_timeout),
        ("m1", Some("static-1"), 300_000, 45_000)
    );
    let sub = m.subscription_view().unwrap();
    assert_eq!(sub.generation_id(), 4);
    assert_eq!(sub.to_owned().topics, vec!["orders".to_string()]);
    assert!(m.assignment_view().is_ok());
}

#[test]
fn every_codec_decodes_the_same_records() {
    for codec in [Compression::None, Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
        let batches = read_all(&commit_and_group(codec), Limits::default());
        assert_eq!(batches.len(), 1, "{codec:?}");
        let (header, records) = batches[0].as_ref().unwrap();
        assert_eq!(header.compression, codec);
        assert!(header.crc_valid(), "{codec:?}");
        check_commit_and_group(records);
    }
}

#[test]
fn raw_snappy_without_xerial_framing_decodes() {
    let payload = record_v2(0, 0, Some(&W::default().i16(2).s("g").0), None);
    let raw = snap::raw::Encoder::new().compress_vec(&payload).unwrap();
    let mut inflated = Vec::new();
    segment::inflate(Compression::Snappy, &raw, &mut inflated, 1 << 20, 0).unwrap();
    assert_eq!(inflated, payload);
}

#[test]
fn lz4_dependent_blocks_use_the_previous_output_as_dictionary() {
    // Two blocks, the second compressed against the first (block independence flag clear).
    let first = vec![b'a'; 1000];
    let second = vec![b'a'; 1000];
    let b1 = lz4_flex::block::compress(&first);
    let b2 = lz4_flex::block::compress_with_dict(&second, &first);
    let mut frame = vec![0x04, 0x22, 0x4D, 0x18, 0x40, 0x40, 0x00];
    for b in [&b1, &b2] {
        frame.extend_from_slice(&(b.len() as u32).to_le_bytes());
        frame.extend_from_slice(b);
    }
    frame.extend_from_slice(&[0; 4]);
    let mut out = Vec::new();
    segment::inflate(Compression::Lz4, &frame, &mut out, 1 << 20, 0).unwrap();
    assert_eq!(out, [first, second].concat());
}

#[test]
fn legacy_message_sets_magic_0_and_1() {
    let key = W::default().i16(2).s("old").0;
    let value = W::default().i16(0).s("consumer").i32(1).ns(Some("range")).ns(Some("m")).i32(0).0;
    let mut seg = message(0, 5, 0, Some(&key), Some(&value));
    // A gzip wrapper of magic 1 holding two messages with relative offsets 0 and 1; the wrapper
    // carries the last one's absolute offset, 11.
    let commit_key = offset_commit_key("old", "t", 0);
    let v1 = W::default().i16(1).i64(9).s("").i64(10).i64(20).0;
    let inner = [message(1, 0, 0, Some(&commit_key), Some(&v1)), message(1, 1, 0, Some(&key), None)].concat();
    seg.extend(message(1, 11, 1, None, Some(&compress(Compression::Gzip, &inner))));
    let batches = read_all(&seg, Limits::default());
    assert_eq!(batches.len(), 2);
    let (h0, r0) = batches[0].as_ref().unwrap();
    assert_eq!((h0.magic, h0.crc_valid()), (0, true));
    let (offset, ts, rec) = r0[0].as_ref().unwrap();
    assert_eq!((*offset, *ts), (5, -1));
    let Some((0, RecordValue::GroupMetadata(g))) = &rec.value else { panic!("{rec:?}") };
    assert_eq!((g.generation, g.current_state_timestamp, g.members.len()), (1, -1, 0));
    let (h1, r1) = batches[1].as_ref().unwrap();
    assert_eq!((h1.magic, h1.compression, h1.crc_valid()), (1, Compression::Gzip, true));
    let offsets: Vec<i64> = r1.iter().map(|r| r.as_ref().unwrap().0).collect();
    assert_eq!(offsets, [10, 11]);
    let Some((1, RecordValue::OffsetCommit(c))) = &r1[0].as_ref().unwrap().2.value else { panic!() };
    assert_eq!((c.offset, c.expire_timestamp, c.leader_epoch), (9, 20, -1));
    assert!(r1[1].as_ref().unwrap().2.value.is_none());
}

#[test]
fn a_bad_crc_is_reported_and_the_records_still_read() {
    let mut seg = commit_and_group(Compression::None);
    let last = seg.len() - 1;
    seg[last] ^= 0xFF; // inside the last record's assignment bytes
    seg.extend(message(1, 200, 0, Some(&W::default().i16(2).s("g").0), None));
    let n = seg.len() - 1;
    seg[n - 1] ^= 0x01; // a magic 1 message's value length: its CRC-32 no longer matches
    let batches = read_all(&seg, Limits::default());
    let (h, records) = batches[0].as_ref().unwrap();
    assert!(!h.crc_valid());
    assert_eq!(records.len(), 2);
    assert!(records[0].is_ok());
    let h1 = &batches[1].as_ref().map(|b| b.0.clone());
    match h1 {
        Ok(h1) => assert!(!h1.crc_valid()),
        Err(e) => assert_eq!(e.field(), "message.value", "{e}"),
    }
}

#[test]
fn a_truncated_segment_reads_what_is_whole_then_says_where_it_ends() {
    let one = commit_and_group(Compression::None);
    let mut seg = [one.clone(), one.clone()].concat();
    seg.truncate(one.len() + 30);
    let batches = read_all(&seg, Limits::default());
    assert_eq!(batches.len(), 2);
    assert!(batches[0].is_ok());
    let e = batches[1].as_ref().unwrap_err();
    assert!(matches!(e.kind(), LogErrorKind::BatchBeyondFile { available: 18, .. }), "{e}");
    assert_eq!(e.position(), one.len() as u64 + 8);

    let batches = read_all(&one[..7], Limits::default());
    assert_eq!(batches[0].as_ref().unwrap_err().kind(), &LogErrorKind::Truncated);
}

#[test]
fn an_invalid_batch_length_stops_the_file() {
    let mut seg = commit_and_group(Compression::None);
    seg[8..12].copy_from_slice(&(-5i32).to_be_bytes());
    let batches = read_all(&seg, Limits::default());
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].as_ref().unwrap_err().kind(), &LogErrorKind::InvalidBatchLength(-5));
}

#[test]
fn a_batch_above_the_limit_is_skipped_and_the_next_one_read() {
    let big = commit_and_group(Compression::None);
    let small = batch_v2(300, &[record_v2(0, 0, Some(&W::default().i16(2).s("g").0), None)], Compression::None);
    let seg = [big.clone(), small].concat();
    let limits = Limits { max_batch_bytes: big.len() - 13, ..Limits::default() };
    let batches = read_all(&seg, limits);
    assert_eq!(batches.len(), 2);
    assert!(matches!(batches[0].as_ref().unwrap_err().kind(), LogErrorKind::BatchTooLarge { .. }));
    assert_eq!(batches[1].as_ref().unwrap().0.base_offset, 300);
}

#[test]
fn a_record_count_beyond_the_batch_is_an_error_and_the_next_batch_is_read() {
    let key = W::default().i16(2).s("g").0;
    let lying = batch_v2_with(0, &[record_v2(0, 0, Some(&key), None)], Compression::None, 3);
    let next = batch_v2(1, &[record_v2(0, 0, Some(&key), None)], Compression::None);
    let batches = read_all(&[lying, next].concat(), Limits::default());
    let (_, records) = batches[0].as_ref().unwrap();
    assert_eq!(records.len(), 2);
    assert!(records[0].is_ok());
    assert_eq!(records[1].as_ref().unwrap_err().kind(), &LogErrorKind::RecordCountBeyondBatch { declared: 3, read: 1 });
    assert_eq!(batches[1].as_ref().unwrap().1.len(), 1);
}

#[test]
fn a_batch_that_inflates_past_the_limit_is_an_error_for_every_codec() {
    let key = W::default().i16(2).s("g").0;
    let zeros = vec![0u8; 200_000];
    let limits = Limits { max_inflated_bytes: 64 << 10, ..Limits::default() };
    for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
        let bomb = batch_v2(0, &[record_v2(0, 0, Some(&key), Some(&zeros))], codec);
        let next = batch_v2(1, &[record_v2(0, 0, Some(&key), None)], codec);
        let batches = read_all(&[bomb, next].concat(), limits);
        let e = batches[0].as_ref().unwrap_err();
        assert_eq!(e.kind(), &LogErrorKind::InflatedTooLarge { limit: 64 << 10 }, "{codec:?}: {e}");
        assert_eq!(batches[1].as_ref().unwrap().1.len(), 1, "{codec:?}");
    }
}

#[test]
fn garbage_compressed_bytes_are_a_decompression_error() {
    for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
        let mut out = Vec::new();
        let e = segment::inflate(codec, &[1, 2, 3, 4, 5, 6, 7, 8], &mut out, 1 << 20, 9).unwrap_err();
        assert_eq!(e.kind(), &LogErrorKind::Decompression(codec.name()), "{codec:?}");
        assert_eq!(e.position(), 9);
    }
}

#[test]
fn unknown_types_and_versions_are_typed_errors_and_share_streams_types_are_reported() {
    let e = RecordKey::decode(&W::default().i16(99).s("g").0).unwrap_err();
    assert_eq!(e.kind(), &LogErrorKind::UnknownRecordType(99));
    // The ids not in Kafka 4.1.1's schemas (4.0's early-access formats, later ones).
    for (type_id, family) in [(9, OtherFamily::Share), (18, OtherFamily::Streams), (24, OtherFamily::Streams)] {
        let key = W::default().i16(type_id).s("sg").0;
        let rec = CoordinatorRecord::decode(Some(&key), Some(&[0, 0, 1, 2])).unwrap();
        assert_eq!(rec.key, RecordKey::Other { type_id, family, group_id: Some("sg") });
        assert_eq!(rec.value, Some((0, RecordValue::Other(&[1, 2]))));
    }
    let key = offset_commit_key("g", "t", 0);
    let e = CoordinatorRecord::decode(Some(&key), Some(&W::default().i16(5).0)).unwrap_err();
    assert_eq!(e.kind(), &LogErrorKind::UnknownValueVersion { record_type: 1, version: 5 });
    let e = CoordinatorRecord::decode(Some(&W::default().i16(3).s("g").0), Some(&W::default().i16(1).0)).unwrap_err();
    assert_eq!(e.kind(), &LogErrorKind::UnknownValueVersion { record_type: 3, version: 1 });
    // Share and streams values have version 0 only in 4.1.1.
    for type_id in [10, 11, 12, 13, 14, 15, 17, 19, 20, 21, 22, 23] {
        let key = W::default().i16(type_id).s("g").s("m").0;
        let e = CoordinatorRecord::decode(Some(&key), Some(&W::default().i16(1).0)).unwrap_err();
        assert_eq!(e.kind(), &LogErrorKind::UnknownValueVersion { record_type: type_id, version: 1 }, "{type_id}");
    }
    assert_eq!(CoordinatorRecord::decode(None, None).unwrap_err().kind(), &LogErrorKind::MissingKey);
}

#[test]
fn offset_commit_value_versions_0_to_4() {
    let key = offset_commit_key("g", "t", 0);
    let v0 = W::default().i16(0).i64(1).s("m").i64(2).0;
    let v1 = W::default().i16(1).i64(1).s("m").i64(2).i64(3).0;
    let v2 = W::default().i16(2).i64(1).s("m").i64(2).0;
    let v4 = W::default()
        .i16(4)
        .i64(1)
        .i32(7)
        .cs("m")
        .i64(2)
        .uv(2) // two tagged fields: topicId and one unknown
        .uv(0)
        .uv(16)
        .raw(&[1; 16])
        .uv(9)
        .uv(2)
        .raw(&[0, 0])
        .0;
    let decode = |v: &[u8]| match CoordinatorRecord::decode(Some(&key), Some(v)).unwrap().value {
        Some((_, RecordValue::OffsetCommit(c))) => {
            (c.offset, c.leader_epoch, c.commit_timestamp, c.expire_timestamp, c.topic_id)
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(decode(&v0), (1, -1, 2, -1, None));
    assert_eq!(decode(&v1), (1, -1, 2, 3, None));
    assert_eq!(decode(&v2), (1, -1, 2, -1, None));
    assert_eq!(decode(&v4), (1, 7, 2, -1, Some(Uuid([1; 16]))));
}

#[test]
fn group_metadata_value_v4_is_flexible() {
    let sub = subscription_bytes();
    let v4 = W::default()
        .i16(4)
        .cs("consumer")
        .i32(9)
        .cns(Some("cooperative-sticky"))
        .cns(None)
        .i64(5)
        .uv(2)
        .cs("m")
        .cns(None)
        .cs("c")
        .cs("h")
        .i32(1)
        .i32(2)
        .cb(&sub)
        .cb(&[])
        .no_tags()
        .no_tags()
        .0;
    let key = W::default().i16(2).s("g").0;
    let rec = CoordinatorRecord::decode(Some(&key), Some(&v4)).unwrap();
    let Some((4, RecordValue::GroupMetadata(g))) = rec.value else { panic!() };
    assert_eq!((g.generation, g.protocol, g.leader), (9, Some("cooperative-sticky"), None));
    assert_eq!(g.members[0].subscription, &sub[..]);
    assert!(g.members[0].assignment.is_empty());
}

#[test]
fn an_array_count_beyond_the_bytes_is_refused_before_allocating() {
    let v = W::default().i16(3).s("consumer").i32(1).ns(None).ns(None).i64(0).i32(i32::MAX).0;
    let e = CoordinatorRecord::decode(Some(&W::default().i16(2).s("g").0), Some(&v)).unwrap_err();
    assert_eq!(e.kind(), &LogErrorKind::InvalidLength(i64::from(i32::MAX)));
    assert_eq!(e.field(), "value.members");
}

#[test]
fn consumer_group_records_kip_848() {
    let g = |t: i16| W::default().i16(t).s("cg");
    let gm = |t: i16| W::default().i16(t).s("cg").s("mem");
    let tid = [7u8; 16];
    let decode = |k: Vec<u8>, v: Vec<u8>| {
        let k: &'static [u8] = Box::leak(k.into_boxed_slice());
        let v: &'static [u8] = Box::leak(v.into_boxed_slice());
        CoordinatorRecord::decode(Some(k), Some(v)).unwrap()
    };

    let r = decode(g(3).0, W::default().i16(0).i32(12).uv(1).uv(0).uv(8).i64(99).0);
    assert_eq!(
        r.value,
        Some((0, RecordValue::ConsumerGroupMetadata(ConsumerGroupMetadataValue { epoch: 12, metadata_hash: 99 })))
    );
    assert_eq!(r.key.group(), Some("cg"));

    let r = decode(
        g(4).0,
        W::default()
            .i16(0)
            .uv(2)
            .raw(&tid)
            .cs("orders")
            .i32(2)
            .uv(2)
            .i32(0)
            .uv(2)
            .cs("r1")
            .no_tags()
            .no_tags()
            .no_tags()
            .0,
    );
    let Some((0, RecordValue::ConsumerGroupPartitionMetadata(p))) = r.value else { panic!() };
    assert_eq!(p.topics[0].topic_name, "orders");
    assert_eq!(p.topics[0].partition_metadata, vec![(0, vec!["r1"])]);

    let classic = W::default().uv(1).i32(45_000).uv(2).cs("range").cb(&subscription_bytes()).no_tags().no_tags().0;
    let r = decode(
        gm(5).0,
        W::default()
            .i16(0)
            .cns(Some("inst"))
            .cns(None)
            .cs("client")
            .cs("/127.0.0.1")
            .uv(2)
            .cs("orders")
            .cns(None)
            .i32(60_000)
            .cns(Some("uniform"))
            .uv(1)
            .uv(0)
            .uv(classic.len() as u64)
            .raw(&classic)
            .0,
    );
    assert_eq!(r.key, RecordKey::ConsumerGroupMemberMetadata { group_id: "cg", member_id: "mem" });
    let Some((0, RecordValue::ConsumerGroupMemberMetadata(m))) = r.value else { panic!() };
    assert_eq!((m.instance_id, m.server_assignor, m.rebalance_timeout_ms), (Some("inst"), Some("uniform"), 60_000));
    assert_eq!(m.subscribed_topic_names, vec!["orders"]);
    let classic = m.classic_member_metadata.unwrap();
    assert_eq!(classic.session_timeout_ms, 45_000);
    assert_eq!(classic.supported_protocols[0].0, "range");
    assert_eq!(crate::SubscriptionView::decode(classic.supported_protocols[0].1).unwrap().generation_id(), 4);

    // A null ClassicMemberMetadata as 4.1 writes it: tag 0, size 1, a 0 varint.
    let r = decode(
        gm(5).0,
        W::default()
            .i16(0)
            .cns(None)
            .cns(None)
            .cs("c")
            .cs("h")
            .uv(1)
            .cns(Some(""))
            .i32(1)
            .cns(None)
            .uv(1)
            .uv(0)
            .uv(1)
            .uv(0)
            .0,
    );
    let Some((0, RecordValue::ConsumerGroupMemberMetadata(m))) = r.value else { panic!() };
    assert_eq!((m.classic_member_metadata, m.subscribed_topic_regex), (None, Some("")));

    let r = decode(g(6).0, W::default().i16(0).i32(3).no_tags().0);
    assert_eq!(r.value, Some((0, RecordValue::ConsumerGroupTargetAssignmentMetadata { assignment_epoch: 3 })));

    let tp = |w: W| w.uv(2).raw(&tid).uv(3).i32(0).i32(1).no_tags();
    let r = decode(gm(7).0, tp(W::default().i16(0)).no_tags().0);
    let want = vec![TopicIdPartitions { topic_id: Uuid(tid), partitions: vec![0, 1] }];
    assert_eq!(r.value, Some((0, RecordValue::ConsumerGroupTargetAssignmentMember(want.clone()))));

    let r = decode(gm(8).0, W::default().i16(0).i32(5).i32(4).i8(1).uv(1).apply(tp).no_tags().0);
    let Some((0, RecordValue::ConsumerGroupCurrentMemberAssignment(c))) = r.value else { panic!() };
    assert_eq!((c.member_epoch, c.previous_member_epoch, c.state), (5, 4, 1));
    assert!(c.assigned_partitions.is_empty());
    assert_eq!(c.partitions_pending_revocation, want);

    let r = decode(
        W::default().i16(16).s("cg").s("orders.*").0,
        W::default().i16(0).uv(2).cs("orders").i64(8).i64(9).no_tags().0,
    );
    assert_eq!(r.key, RecordKey::ConsumerGroupRegularExpression { group_id: "cg", regular_expression: "orders.*" });
    assert_eq!(
        r.value,
        Some((
            0,
            RecordValue::ConsumerGroupRegularExpression(ConsumerGroupRegularExpressionValue {
                topics: vec!["orders"],
                version: 8,
                timestamp: 9
            })
        ))
    );
}

impl W {
    fn apply(self, f: impl FnOnce(W) -> W) -> W {
        f(self)
    }
}

#[test]
fn uuids_print_as_kafka_prints_them() {
    assert_eq!(Uuid([0; 16]).to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
    // Uuid.fromString("vDAdHzbnS5GBCl9h_hBWJg") in Java has these bytes.
    let bytes = [0xbc, 0x30, 0x1d, 0x1f, 0x36, 0xe7, 0x4b, 0x91, 0x81, 0x0a, 0x5f, 0x61, 0xfe, 0x10, 0x56, 0x26];
    assert_eq!(Uuid(bytes).to_string(), "vDAdHzbnS5GBCl9h_hBWJg");
}

/// Kafka 4.x converts a classic group to a consumer group (an online upgrade) by a
/// `GroupMetadata` tombstone followed in the same batch by the consumer group's records, and
/// back by a `ConsumerGroupMetadata` tombstone followed by a `GroupMetadata` record; seen live on
/// 4.1.1 (tests/live_history.rs), the history called the upgraded group deleted. A conversion is
/// an event, a deletion only a tombstone nothing of the other kind follows; a KIP-848 group's
/// own deletion is a deletion; the converted group's first epoch (its last generation carried
/// over) is not compaction.
#[test]
fn a_conversion_is_not_a_deletion() {
    use super::history::ConsumerGroupEvent as E;
    let decode = |k: Vec<u8>, v: Option<Vec<u8>>| {
        let k: &'static [u8] = Box::leak(k.into_boxed_slice());
        let v: Option<&'static [u8]> = v.map(|v| &*Box::leak(v.into_boxed_slice()));
        CoordinatorRecord::decode(Some(k), v).unwrap()
    };
    let group_key = |g: &str| W::default().i16(2).s(g).0;
    let epoch_key = |g: &str| W::default().i16(3).s(g).0;
    let epoch = |n: i32| Some(W::default().i16(0).i32(n).uv(1).uv(0).uv(8).i64(99).0);
    let mut b = HistoryBuilder::new();
    let records = [
        (1, group_key("g"), Some(group_metadata_v3())),
        (2, group_key("g"), None),
        (3, epoch_key("g"), epoch(5)),
        (4, epoch_key("g"), None),
        (5, group_key("g"), Some(group_metadata_v3())),
        (6, group_key("g"), None),
        (7, offset_commit_key("g", "orders", 0), None),
        (8, epoch_key("k"), epoch(1)),
        (9, epoch_key("k"), None),
    ];
    for (offset, key, value) in records {
        b.add(offset, 1_000 + offset, &decode(key, value));
    }
    let groups = b.finish();
    let (g, k) = (&groups[0], &groups[1]);
    let events: Vec<(i64, &E)> = g.consumer_group_events.iter().map(|(at, e)| (at.offset, e)).collect();
    assert_eq!(events, [(2, &E::ConvertedFromClassic), (3, &E::GroupEpoch(5)), (4, &E::ConvertedToClassic)]);
    assert_eq!(g.generations.len(), 2);
    assert_eq!(g.deleted.map(|at| at.offset), Some(6), "the last tombstone is a deletion");
    // Generation 4 first: compaction, said once, not again for epoch 5.
    assert!(g.compacted_before.as_deref().unwrap().contains("generation 4"));
    assert_eq!(k.deleted.map(|at| at.offset), Some(9), "a consumer group's own deletion");
    assert_eq!(k.compacted_before, None);
}

/// Commits of one partition at (offset, commitTimestamp): the rate over the span, and every pause
/// longer than the builder's gap counted, the longest kept longest first and bounded.
#[test]
fn commit_rate_and_gaps() {
    use super::history::MAX_GAPS_KEPT;
    let commit = |offset: i64, ts: i64| {
        let mut v = vec![0, 3];
        v.extend_from_slice(&offset.to_be_bytes());
        v.extend_from_slice(&[255, 255, 255, 255, 0, 0]);
        v.extend_from_slice(&ts.to_be_bytes());
        v
    };
    let key = offset_commit_key("g", "orders", 0);
    let mut b = HistoryBuilder::new().with_commit_gap_ms(10_000);
    // Every 5 s from 0 to 60 s (offsets 0..=1,200), then pauses of 20 s, 90 s and 11 s, then
    // twelve pauses of 15 s to push past the kept bound.
    let mut times: Vec<i64> = (0..=12).map(|i| i * 5_000).collect();
    for pause in [20_000, 90_000, 11_000] {
        times.push(times.last().unwrap() + pause);
    }
    for _ in 0..12 {
        times.push(times.last().unwrap() + 15_000);
    }
    for (i, &ts) in times.iter().enumerate() {
        let value = commit(i as i64 * 100, ts);
        b.add(i as i64, ts, &CoordinatorRecord::decode(Some(&key), Some(&value)).unwrap());
    }
    let groups = b.finish();
    let c = &groups[0].commits[&("orders".to_string(), 0)];
    let span = times.last().unwrap() - times[0];
    assert_eq!(c.span_ms(), span);
    let per_minute = c.commits_per_minute().unwrap();
    assert!((per_minute - (times.len() - 1) as f64 * 60_000.0 / span as f64).abs() < 1e-9);
    let per_second = c.offsets_per_second().unwrap();
    assert!((per_second - ((times.len() - 1) * 100) as f64 * 1_000.0 / span as f64).abs() < 1e-9);
    assert_eq!(c.gap_count, 15, "20 s, 90 s, 11 s and twelve of 15 s; the 5 s steps are not gaps");
    assert_eq!(c.largest_gaps.len(), MAX_GAPS_KEPT);
    let lengths: Vec<i64> = c.largest_gaps.iter().map(|g| g.length_ms()).collect();
    assert_eq!(&lengths[..3], [90_000, 20_000, 15_000]);
    assert!(lengths[2..].iter().all(|&l| l == 15_000));
    // The 90 s pause starts after the commit at 80 s (offset 1,300) and ends at 170 s.
    let longest = c.largest_gaps[0];
    assert_eq!((longest.before.commit_timestamp, longest.before.offset), (80_000, 1_300));
    assert_eq!(longest.after.commit_timestamp, 170_000);
    // Equal pauses keep the earlier ones.
    assert_eq!(c.largest_gaps[2].before.commit_timestamp, 181_000);
}

fn leak(v: Vec<u8>) -> &'static [u8] {
    Box::leak(v.into_boxed_slice())
}

#[test]
fn share_group_records_kip_932() {
    let tid = [9u8; 16];
    let decode = |k: Vec<u8>, v: Vec<u8>| CoordinatorRecord::decode(Some(leak(k)), Some(leak(v))).unwrap();
    let g = |t: i16| W::default().i16(t).s("sg").0;
    let gm = |t: i16| W::default().i16(t).s("sg").s("mem").0;

    let r = decode(gm(10), W::default().i16(0).cns(Some("r1")).cs("c").cs("/h").uv(2).cs("t").no_tags().0);
    assert_eq!(r.key, RecordKey::ShareGroupMemberMetadata { group_id: "sg", member_id: "mem" });
    assert_eq!(
        r.value,
        Some((
            0,
            RecordValue::ShareGroupMemberMetadata(ShareGroupMemberMetadataValue {
                rack_id: Some("r1"),
                client_id: "c",
                client_host: "/h",
                subscribed_topic_names: vec!["t"],
            })
        ))
    );
    let r = decode(g(11), W::default().i16(0).i32(4).i64(-7).no_tags().0);
    assert_eq!(r.key, RecordKey::ShareGroupMetadata { group_id: "sg" });
    assert_eq!(r.value, Some((0, RecordValue::ShareGroupMetadata(GroupEpochValue { epoch: 4, metadata_hash: -7 }))));
    let r = decode(g(12), W::default().i16(0).i32(5).no_tags().0);
    assert_eq!(r.value, Some((0, RecordValue::ShareGroupTargetAssignmentMetadata { assignment_epoch: 5 })));
    let parts = |w: W| w.uv(2).raw(&tid).uv(3).i32(0).i32(2).no_tags();
    let r = decode(gm(13), parts(W::default().i16(0)).no_tags().0);
    let expected = vec![TopicIdPartitions { topic_id: Uuid(tid), partitions: vec![0, 2] }];
    assert_eq!(r.value, Some((0, RecordValue::ShareGroupTargetAssignmentMember(expected.clone()))));
    let r = decode(gm(14), parts(W::default().i16(0).i32(6).i32(5).i8(0)).no_tags().0);
    assert_eq!(
        r.value,
        Some((
            0,
            RecordValue::ShareGroupCurrentMemberAssignment(ShareGroupCurrentMemberAssignmentValue {
                member_epoch: 6,
                previous_member_epoch: 5,
                state: 0,
                assigned_partitions: expected,
            })
        ))
    );
    let info = |w: W| w.uv(2).raw(&tid).cs("t").uv(2).i32(1).no_tags();
    // An unknown tagged field of the value is skipped.
    let v = info(info(W::default().i16(0))).uv(2).raw(&tid).cs("gone").no_tags().uv(1).uv(5).uv(1).raw(&[0]).0;
    let r = decode(g(15), v);
    let Some((0, RecordValue::ShareGroupStatePartitionMetadata(p))) = r.value else { panic!("{r:?}") };
    assert_eq!(
        p.initializing_topics,
        vec![TopicPartitionsInfo { topic_id: Uuid(tid), topic_name: "t", partitions: vec![1] }]
    );
    assert_eq!(p.initialized_topics, p.initializing_topics);
    assert_eq!(p.deleting_topics, vec![TopicInfo { topic_id: Uuid(tid), topic_name: "gone" }]);
}

/// Streams group values built field by field from Kafka 4.1.1's `StreamsGroup*Value.json`, with
/// what the real capture (testdata/offsets-log-streams) does not hold: a null endpoint, warm-up
/// tasks, a copartition group.
#[test]
fn streams_group_records_kip_1071() {
    use super::json::{value_json, Embedded};
    let decode = |k: Vec<u8>, v: Vec<u8>| CoordinatorRecord::decode(Some(leak(k)), Some(leak(v))).unwrap();
    let g = |t: i16| W::default().i16(t).s("app").0;
    let gm = |t: i16| W::default().i16(t).s("app").s("mem").0;
    let json = |r: &CoordinatorRecord<'_>| {
        let (version, value) = r.value.as_ref().unwrap();
        value_json(*version, value, &|_: Embedded, _: &[u8]| serde_json::Value::Null)
    };

    let r = decode(g(17), W::default().i16(0).i32(3).i64(11).no_tags().0);
    assert_eq!(r.key, RecordKey::StreamsGroupMetadata { group_id: "app" });
    assert_eq!(json(&r).to_string(), r#"{"version":0,"data":{"epoch":3,"metadataHash":11}}"#);

    // A member with an endpoint and a client tag, then one without an endpoint (a -1 byte).
    let member = |endpoint: Option<(&str, u16)>| {
        let w = W::default().i16(0).cns(None).cns(Some("rack")).cs("c").cs("/h").i32(300).i32(2).cs("p1");
        let w = match endpoint {
            Some((host, port)) => w.i8(1).cs(host).i16(port as i16).no_tags(),
            None => w.i8(-1),
        };
        w.uv(2).cs("k").cs("v").no_tags().no_tags().0
    };
    let r = decode(gm(19), member(Some(("h1", 65000))));
    assert_eq!(r.key, RecordKey::StreamsGroupMemberMetadata { group_id: "app", member_id: "mem" });
    assert_eq!(
        json(&r).to_string(),
        r#"{"version":0,"data":{"instanceId":null,"rackId":"rack","clientId":"c","clientHost":"/h","rebalanceTimeoutMs":300,"topologyEpoch":2,"processId":"p1","userEndpoint":{"host":"h1","port":65000},"clientTags":[{"key":"k","value":"v"}]}}"#
    );
    let r = decode(gm(19), member(None));
    assert_eq!(json(&r)["data"]["userEndpoint"], serde_json::Value::Null);

    let r = decode(g(20), W::default().i16(0).i32(8).no_tags().0);
    assert_eq!(json(&r).to_string(), r#"{"version":0,"data":{"assignmentEpoch":8}}"#);

    let tasks = |w: W| w.uv(2).cs("0").uv(3).i32(0).i32(1).no_tags().uv(1).uv(2).cs("1").uv(1).no_tags();
    let r = decode(gm(21), tasks(W::default().i16(0)).no_tags().0);
    assert_eq!(
        json(&r).to_string(),
        r#"{"version":0,"data":{"activeTasks":[{"subtopologyId":"0","partitions":[0,1]}],"standbyTasks":[],"warmupTasks":[{"subtopologyId":"1","partitions":[]}]}}"#
    );
    let r = decode(gm(22), tasks(tasks(W::default().i16(0).i32(4).i32(3).i8(1))).no_tags().0);
    let v = json(&r);
    assert_eq!((v["data"]["memberEpoch"].as_i64(), v["data"]["state"].as_i64()), (Some(4), Some(1)));
    assert_eq!(v["data"]["activeTasksPendingRevocation"], v["data"]["activeTasks"]);
    assert_eq!(v["data"]["warmupTasksPendingRevocation"][0]["subtopologyId"], "1");

    let topic =
        |w: W, name: &str| w.cs(name).i32(4).i16(3).uv(2).cs("cleanup.policy").cs("compact").no_tags().no_tags();
    let sub = W::default().i16(0).i32(1).uv(2).cs("0").uv(2).cs("in").uv(1).uv(2);
    let sub = topic(sub, "app-store-changelog").uv(2).cs("app-rep").uv(2);
    let sub = topic(sub, "app-rep").uv(2).uv(2).i16(0).uv(1).uv(2).i16(0).no_tags().no_tags().no_tags();
    let r = decode(g(23), sub.0);
    assert_eq!(r.key, RecordKey::StreamsGroupTopology { group_id: "app" });
    assert_eq!(
        json(&r).to_string(),
        concat!(
            r#"{"version":0,"data":{"epoch":1,"subtopologies":[{"subtopologyId":"0","sourceTopics":["in"],"sourceTopicRegex":[],"#,
            r#""stateChangelogTopics":[{"name":"app-store-changelog","partitions":4,"replicationFactor":3,"topicConfigs":[{"key":"cleanup.policy","value":"compact"}]}],"#,
            r#""repartitionSinkTopics":["app-rep"],"#,
            r#""repartitionSourceTopics":[{"name":"app-rep","partitions":4,"replicationFactor":3,"topicConfigs":[{"key":"cleanup.policy","value":"compact"}]}],"#,
            r#""copartitionGroups":[{"sourceTopics":[0],"sourceTopicRegex":[],"repartitionSourceTopics":[0]}]}]}}"#
        )
    );
}

/// Every share and streams value cut short at each byte is a typed error, never a panic, and an
/// array count beyond the bytes left is refused before anything is allocated for it.
#[test]
fn share_and_streams_values_cut_short_or_lying_are_typed_errors() {
    let tid = [1u8; 16];
    let values: Vec<(i16, Vec<u8>)> = vec![
        (10, W::default().i16(0).cns(None).cs("c").cs("/h").uv(2).cs("t").no_tags().0),
        (11, W::default().i16(0).i32(1).i64(2).no_tags().0),
        (14, W::default().i16(0).i32(1).i32(0).i8(0).uv(2).raw(&tid).uv(2).i32(0).no_tags().no_tags().0),
        (15, W::default().i16(0).uv(1).uv(1).uv(2).raw(&tid).cs("t").no_tags().no_tags().0),
        (
            19,
            W::default()
                .i16(0)
                .cns(None)
                .cns(None)
                .cs("c")
                .cs("h")
                .i32(1)
                .i32(1)
                .cs("p")
                .i8(1)
                .cs("e")
                .i16(1)
                .no_tags()
                .uv(1)
                .no_tags()
                .0,
        ),
        (
            22,
            W::default()
                .i16(0)
                .i32(1)
                .i32(0)
                .i8(0)
                .uv(2)
                .cs("0")
                .uv(2)
                .i32(3)
                .no_tags()
                .uv(1)
                .uv(1)
                .uv(1)
                .uv(1)
                .uv(1)
                .no_tags()
                .0,
        ),
        (
            23,
            W::default()
                .i16(0)
                .i32(1)
                .uv(2)
                .cs("0")
                .uv(1)
                .uv(1)
                .uv(1)
                .uv(1)
                .uv(1)
                .uv(2)
                .uv(1)
                .uv(1)
                .uv(1)
                .no_tags()
                .no_tags()
                .no_tags()
                .0,
        ),
    ];
    for (type_id, whole) in &values {
        let key = W::default().i16(*type_id).s("g").s("m").0;
        CoordinatorRecord::decode(Some(&key), Some(whole)).unwrap_or_else(|e| panic!("type {type_id}: {e}"));
        for cut in 2..whole.len() {
            let e = CoordinatorRecord::decode(Some(&key), Some(&whole[..cut]));
            assert!(e.is_err(), "type {type_id} cut at {cut} decoded");
        }
    }
    // SubscribedTopicNames claiming 2^31 names in a few bytes.
    let lying = W::default().i16(0).cns(None).cs("c").cs("/h").uv(1 << 31).0;
    let e = CoordinatorRecord::decode(Some(&W::default().i16(10).s("g").s("m").0), Some(&lying)).unwrap_err();
    assert_eq!(e.kind(), &LogErrorKind::InvalidLength((1i64 << 31) - 1));
    assert_eq!(e.field(), "value.SubscribedTopicNames");
    // Share and streams keys cut short.
    for type_id in [10, 11, 17, 19, 23] {
        let key = W::default().i16(type_id).s("group").s("member").0;
        let needs_member = matches!(type_id, 10 | 19);
        let cut = if needs_member { key.len() - 1 } else { 5 };
        assert!(RecordKey::decode(&key[..cut]).is_err(), "key type {type_id}");
    }
}

#[test]
fn a_share_group_history_tells_members_epochs_assignments_and_its_deletion() {
    use super::history::ShareGroupEvent as E;
    let tid = [4u8; 16];
    let mut h = HistoryBuilder::new();
    let mut at = 0;
    let mut add = |k: Vec<u8>, v: Option<Vec<u8>>| {
        at += 1;
        let (k, v) = (leak(k), v.map(leak));
        h.add(at, 1000 + at, &CoordinatorRecord::decode(Some(k), v).unwrap());
    };
    let g = |t: i16| W::default().i16(t).s("sg").0;
    let gm = |t: i16| W::default().i16(t).s("sg").s("m1").0;
    add(gm(10), Some(W::default().i16(0).cns(None).cs("c1").cs("/h").uv(2).cs("t").no_tags().0));
    add(g(11), Some(W::default().i16(0).i32(1).i64(5).no_tags().0));
    add(g(15), Some(W::default().i16(0).uv(2).raw(&tid).cs("t").uv(2).i32(0).no_tags().uv(1).uv(1).no_tags().0));
    add(g(12), Some(W::default().i16(0).i32(1).no_tags().0));
    add(gm(13), Some(W::default().i16(0).uv(2).raw(&tid).uv(2).i32(0).no_tags().no_tags().0));
    add(gm(14), Some(W::default().i16(0).i32(1).i32(0).i8(0).uv(2).raw(&tid).uv(2).i32(0).no_tags().no_tags().0));
    // The member metadata again (a heartbeat that changed nothing of interest): not a second join.
    add(gm(10), Some(W::default().i16(0).cns(None).cs("c1").cs("/h").uv(2).cs("t").no_tags().0));
    add(gm(14), None);
    add(gm(13), None);
    add(gm(10), None);
    add(g(11), Some(W::default().i16(0).i32(2).i64(0).no_tags().0));
    add(g(12), None);
    add(g(15), None);
    add(g(11), None);
    let groups = h.finish();
    let sg = &groups[0];
    assert_eq!(sg.group, "sg");
    let events: Vec<(i64, &E)> = sg.share_group_events.iter().map(|(at, e)| (at.offset, e)).collect();
    assert_eq!(
        events,
        vec![
            (
                1,
                &E::MemberJoined {
                    member_id: "m1".into(),
                    client_id: "c1".into(),
                    client_host: "/h".into(),
                    rack_id: None,
                    topics: vec!["t".into()]
                }
            ),
            (2, &E::GroupEpoch { epoch: 1, metadata_hash: 5 }),
            (
                3,
                &E::StatePartitions {
                    initializing: vec![history::ShareStateTopic {
                        topic_id: Uuid(tid),
                        topic_name: "t".into(),
                        partitions: vec![0]
                    }],
                    initialized: vec![],
                    deleting: vec![]
                }
            ),
            (4, &E::AssignmentEpoch(1)),
            (
                6,
                &E::MemberAssignment {
                    member_id: "m1".into(),
                    member_epoch: 1,
                    previous_member_epoch: 0,
                    assigned: vec![TopicIdPartitions { topic_id: Uuid(tid), partitions: vec![0] }]
                }
            ),
            (10, &E::MemberLeft("m1".into())),
            (11, &E::GroupEpoch { epoch: 2, metadata_hash: 0 }),
        ]
    );
    assert_eq!(sg.topic_names.get(&Uuid(tid)).map(String::as_str), Some("t"));
    assert_eq!(sg.deleted.map(|a| a.offset), Some(14));
    assert!(sg.compacted_before.is_none());
    assert_eq!(sg.other_records.values().sum::<u64>(), 14);

    // A share group whose first epoch in the log is 3: its beginning was compacted away.
    let mut h = HistoryBuilder::new();
    let (k, v) = (leak(g(11)), leak(W::default().i16(0).i32(3).i64(0).no_tags().0));
    h.add(0, 0, &CoordinatorRecord::decode(Some(k), Some(v)).unwrap());
    assert!(h.finish()[0].compacted_before.as_deref().unwrap().contains("first share group epoch in the log is 3"));
}
