//! `client::PartitionFetcher` against a fake broker: whole batches and the next offset, a batch
//! cut at the end of a response left for the next fetch, records beyond `max_bytes` refused
//! unless they are one batch, the answer checked against what was asked, a moved leader looked up
//! again; and the records read by `offsets_log::SegmentReader` (issue 24).

mod client_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use client_support::*;
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::*;
use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, ErrorKind, FetchOptions, PartitionFetcher};
use kafka_consumer_protocol::offsets_log::{CoordinatorRecord, Limits, RecordKey, SegmentReader};
use kafka_protocol::protocol::StrBytes;

const TOPIC: &str = "__consumer_offsets";

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(20))
}

/// A magic 2 batch of `length` bytes after its length field, `last_delta` its last offset delta
/// (content zeros: framing only).
fn batch(base: i64, last_delta: i32, length: usize) -> Vec<u8> {
    let mut b = base.to_be_bytes().to_vec();
    b.extend_from_slice(&(length as i32).to_be_bytes());
    b.resize(12 + length, 0);
    b[16] = 2;
    b[23..27].copy_from_slice(&last_delta.to_be_bytes());
    b
}

/// A real magic 2 batch (no compression) of one GroupMetadata tombstone of `group` at `offset`.
fn tombstone_batch(offset: i64, group: &str) -> Vec<u8> {
    let mut key = vec![0u8, 2];
    key.extend_from_slice(&(group.len() as i16).to_be_bytes());
    key.extend_from_slice(group.as_bytes());
    let zigzag = |v: i64| -> Vec<u8> {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            if n < 0x80 {
                out.push(n as u8);
                return out;
            }
            out.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
    };
    let mut record = vec![0u8]; // attributes
    record.extend(zigzag(0)); // timestamp delta
    record.extend(zigzag(0)); // offset delta
    record.extend(zigzag(key.len() as i64));
    record.extend_from_slice(&key);
    record.extend(zigzag(-1)); // null value
    record.extend(zigzag(0)); // no headers
    let mut records = zigzag(record.len() as i64);
    records.extend(record);
    // From attributes on: what CRC-32C covers.
    let mut body = Vec::new();
    body.extend_from_slice(&0i16.to_be_bytes()); // attributes
    body.extend_from_slice(&0i32.to_be_bytes()); // last offset delta
    body.extend_from_slice(&1_000i64.to_be_bytes()); // base timestamp
    body.extend_from_slice(&1_000i64.to_be_bytes()); // max timestamp
    body.extend_from_slice(&(-1i64).to_be_bytes()); // producer id
    body.extend_from_slice(&(-1i16).to_be_bytes()); // producer epoch
    body.extend_from_slice(&(-1i32).to_be_bytes()); // base sequence
    body.extend_from_slice(&1i32.to_be_bytes()); // record count
    body.extend(records);
    let crc = crc32c::crc32c(&body);
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&((body.len() + 9) as i32).to_be_bytes()); // epoch, magic, crc
    out.extend_from_slice(&0i32.to_be_bytes()); // partition leader epoch
    out.push(2);
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend(body);
    out
}

/// What the fake leader answers for a fetch offset: (error, records, topics answered,
/// partitions answered).
type Answer = (i16, Vec<u8>, usize, usize);

/// A one-broker cluster whose `__consumer_offsets` has one partition led by node 1, answering
/// Fetch with `answer(fetch offset, fetch number)`.
async fn leader(answer: impl Fn(i64, usize) -> Answer + Send + Sync + 'static) -> (FakeBroker, Arc<AtomicUsize>) {
    let port = Arc::new(AtomicUsize::new(0));
    let metadata_calls = Arc::new(AtomicUsize::new(0));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (p, m) = (port.clone(), metadata_calls.clone());
    let broker = start(move |r| {
        let v = r.version;
        match r.api_key {
            18 => {
                let mut apis = all_api_versions();
                apis.push(ApiVersion::default().with_api_key(1).with_min_version(4).with_max_version(17));
                api_versions(r, apis)
            }
            3 => {
                m.fetch_add(1, Ordering::SeqCst);
                body(
                    &MetadataResponse::default()
                        .with_brokers(vec![MetadataResponseBroker::default()
                            .with_node_id(1.into())
                            .with_host(s("127.0.0.1"))
                            .with_port(p.load(Ordering::SeqCst) as i32)])
                        .with_topics(vec![MetadataResponseTopic::default()
                            .with_name(Some(TopicName(s(TOPIC))))
                            .with_partitions(vec![MetadataResponsePartition::default()
                                .with_partition_index(0)
                                .with_leader_id(1.into())])]),
                    v,
                )
            }
            1 => {
                let request: FetchRequest = r.decode();
                assert_eq!(v, 12, "Fetch v12 at most: topics by name");
                let asked = &request.topics[0].partitions[0];
                assert_eq!(request.max_bytes, asked.partition_max_bytes);
                let n = fetches.fetch_add(1, Ordering::SeqCst);
                let (error, records, topics, partitions) = answer(asked.fetch_offset, n);
                let partition = PartitionData::default()
                    .with_partition_index(0)
                    .with_error_code(error)
                    .with_high_watermark(100)
                    .with_log_start_offset(0)
                    .with_records(Some(Bytes::from(records)));
                let topic = FetchableTopicResponse::default()
                    .with_topic(TopicName(s(TOPIC)))
                    .with_partitions(vec![partition; partitions]);
                body(&FetchResponse::default().with_responses(vec![topic; topics]), v)
            }
            key => panic!("unexpected api {key}"),
        }
    })
    .await;
    port.store(broker.port as usize, Ordering::SeqCst);
    (broker, metadata_calls)
}

fn fetcher(broker: &FakeBroker, max_bytes: i32) -> PartitionFetcher {
    let mut config = ClientConfig::new([broker.address()]).unwrap();
    config.retry_backoff = Duration::from_millis(5);
    let client = Client::new(config).unwrap();
    PartitionFetcher::new(client, TOPIC, 0, FetchOptions::default().max_bytes(max_bytes))
}

#[tokio::test]
async fn whole_batches_and_a_cut_one_left_for_the_next_fetch() {
    let (broker, _) = leader(|offset, _| {
        let mut records = batch(offset, 2, 70);
        records.extend(&batch(offset + 3, 0, 70)[..30]);
        (0, records, 1, 1)
    })
    .await;
    let mut f = fetcher(&broker, 200);
    let fetched = f.fetch(0, deadline()).await.unwrap();
    assert_eq!(fetched.records.len(), 82, "the whole batch only");
    assert_eq!(fetched.partial_bytes, 30);
    assert_eq!(fetched.next_offset, 3);
    assert_eq!((fetched.high_watermark, fetched.log_start_offset, fetched.leader), (100, Some(0), 1));
    let fetched = f.fetch(3, deadline()).await.unwrap();
    assert_eq!(fetched.fetch_offset, 3);
    assert_eq!(fetched.next_offset, 6);
}

#[tokio::test]
async fn records_beyond_max_bytes_only_as_one_batch() {
    let (broker, _) = leader(|offset, _| match offset {
        // One batch larger than asked: a broker returns the first batch whole (KIP-74).
        0 => (0, batch(0, 4, 500), 1, 1),
        // Two batches beyond what was asked: refused.
        _ => {
            let mut records = batch(offset, 0, 100);
            records.extend(batch(offset + 1, 0, 100));
            (0, records, 1, 1)
        }
    })
    .await;
    let mut f = fetcher(&broker, 150);
    assert_eq!(f.fetch(0, deadline()).await.unwrap().next_offset, 5);
    let e = f.fetch(5, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.message().contains("more than the 150 asked"), "{e}");
}

#[tokio::test]
async fn the_answer_must_be_what_was_asked() {
    let (broker, _) = leader(|_, n| match n {
        0 => (0, Vec::new(), 2, 1),
        1 => (0, Vec::new(), 1, 0),
        _ => {
            // A batch length no batch can have.
            let mut b = batch(0, 0, 70);
            b[8..12].copy_from_slice(&5i32.to_be_bytes());
            (0, b, 1, 1)
        }
    })
    .await;
    let mut f = fetcher(&broker, 1000);
    for expected in ["2 topics answered", "0 partitions answered", "has length 5"] {
        let e = f.fetch(0, deadline()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        assert!(e.message().contains(expected), "{expected}: {e}");
    }
}

#[tokio::test]
async fn a_moved_leader_is_looked_up_again_once() {
    // NOT_LEADER_OR_FOLLOWER (6) on the first fetch, then records.
    let (broker, metadata_calls) =
        leader(|offset, n| if n == 0 { (6, Vec::new(), 1, 1) } else { (0, tombstone_batch(offset, "g"), 1, 1) }).await;
    let mut f = fetcher(&broker, 1000);
    let fetched = f.fetch(7, deadline()).await.unwrap();
    assert_eq!(metadata_calls.load(Ordering::SeqCst), 2, "the leader looked up again");
    assert_eq!(fetched.next_offset, 8);
    // The bytes are a segment's: the decoder reads them.
    let mut reader = SegmentReader::new(&fetched.records[..], Limits::default());
    let batch = reader.next_batch().unwrap().unwrap();
    assert!(batch.header.crc_valid());
    let record = batch.records().next().unwrap().unwrap();
    assert_eq!(record.offset, 7);
    let decoded = CoordinatorRecord::decode(record.key, record.value).unwrap();
    assert_eq!(decoded.key, RecordKey::GroupMetadata { group: "g" });
    // OFFSET_OUT_OF_RANGE is the caller's, with its code.
    let (broker, _) = leader(|_, _| (1, Vec::new(), 1, 1)).await;
    let e = fetcher(&broker, 1000).fetch(0, deadline()).await.unwrap_err();
    assert_eq!(e.error_code(), Some(1), "{e}");
}
