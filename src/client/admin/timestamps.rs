//! The timestamp of the record at an offset, for many partitions at once: what `kcp serve`'s lag
//! in seconds is measured with (the age of the oldest record a group has not consumed yet).
//!
//! One Fetch per partition leader asks for every wanted partition from its offset with a small
//! per-partition size ([`TIMESTAMP_FETCH_PARTITION_BYTES`]). A batch larger than that comes back
//! cut (only the first batch of a response is returned whole, KIP-74), and that partition is
//! fetched again alone, which returns its first batch whole. The batches are read with the
//! `__consumer_offsets` reader (`offsets_log::SegmentReader`: every codec, bounded), and the first
//! record at or after the offset gives the time: its own timestamp (CreateTime), or the batch's
//! (LogAppendTime, which the reader applies to each record).

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{BrokerId, FetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::fetch::{frame_batches, FetchOptions};
use super::text;
use crate::client::{Client, ClientError, Deadline, IsolationLevel, PartitionFetcher, SendOptions, Target};
use crate::offsets_log::{Limits, SegmentReader};

/// Bytes asked per partition in the batched Fetch: enough for a few small batches' headers and
/// records, small enough that a fetch of thousands of lagging partitions stays small.
pub const TIMESTAMP_FETCH_PARTITION_BYTES: i32 = 16 * 1024;

/// The most bytes of records one batched Fetch asks for, whatever the number of partitions.
const TIMESTAMP_FETCH_MAX_BYTES: i32 = 32 << 20;

/// The highest Fetch version sent (v13+ names topics by id only).
const FETCH_MAX_VERSION: i16 = 12;

/// Limits for reading a fetched batch: one batch of a user topic, inflated at most this much
/// (a batch beyond is an error for that partition, not an allocation).
const READ_LIMITS: Limits = Limits { max_batch_bytes: 64 << 20, max_inflated_bytes: 32 << 20 };

/// One partition whose record time is wanted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimestampQuery {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The offset: the time of the first record at or after it is returned.
    pub offset: i64,
    /// The partition's leader, as the last metadata said (the query is sent there).
    pub leader: i32,
}

/// The record found for a [`TimestampQuery`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordTime {
    /// The record's offset: the query's, or the next one the log still has (compaction, aborted
    /// transactions).
    pub offset: i64,
    /// Its timestamp in milliseconds since the epoch.
    pub timestamp_ms: i64,
    /// Whether the broker stamped it (LogAppendTime) rather than the producer (CreateTime).
    pub log_append_time: bool,
}

/// One partition's answer: the record's time, `None` when the log had no record at or after the
/// offset in what was fetched, or the error (OFFSET_OUT_OF_RANGE when the offset is before the
/// log start: the record is gone to retention).
pub type TimestampAnswer = Result<Option<RecordTime>, ClientError>;

impl Client {
    /// The time of the record at each query's offset, one answer per query in its order: one
    /// Fetch per leader for all its partitions (a partition asked at several offsets takes one
    /// Fetch round per offset), then one more Fetch for each partition whose first batch did not
    /// fit in [`TIMESTAMP_FETCH_PARTITION_BYTES`].
    pub async fn record_timestamps(&self, queries: &[TimestampQuery], deadline: Deadline) -> Vec<TimestampAnswer> {
        // Each distinct (topic, partition, offset) once; round k asks each partition's k-th offset.
        let mut offsets: BTreeMap<(String, i32), (i32, Vec<i64>)> = BTreeMap::new();
        for q in queries {
            let entry = offsets.entry((q.topic.clone(), q.partition)).or_insert((q.leader, Vec::new()));
            if !entry.1.contains(&q.offset) {
                entry.1.push(q.offset);
            }
        }
        let mut answers: BTreeMap<(String, i32, i64), TimestampAnswer> = BTreeMap::new();
        let rounds = offsets.values().map(|(_, o)| o.len()).max().unwrap_or(0);
        for round in 0..rounds {
            let mut by_leader: BTreeMap<i32, BTreeMap<(String, i32), i64>> = BTreeMap::new();
            for (key, (leader, list)) in &offsets {
                if let Some(&offset) = list.get(round) {
                    by_leader.entry(*leader).or_default().insert(key.clone(), offset);
                }
            }
            for ((topic, partition), offset, answer) in self.timestamps_round(by_leader, deadline).await {
                answers.insert((topic, partition, offset), answer);
            }
        }
        queries
            .iter()
            .map(|q| {
                answers.get(&(q.topic.clone(), q.partition, q.offset)).cloned().unwrap_or_else(|| {
                    Err(ClientError::protocol(format!("no Fetch answer for {}-{}", q.topic, q.partition)))
                })
            })
            .collect()
    }

    /// One round: one Fetch per leader, each partition at one offset, then the cut ones alone.
    async fn timestamps_round(
        &self,
        by_leader: BTreeMap<i32, BTreeMap<(String, i32), i64>>,
        deadline: Deadline,
    ) -> Vec<((String, i32), i64, TimestampAnswer)> {
        // Every leader in parallel, as the other admin calls do.
        let mut tasks = tokio::task::JoinSet::new();
        for (leader, wanted) in by_leader {
            let client = self.clone();
            tasks.spawn(async move {
                let answers = client.fetch_first_batches(leader, &wanted, deadline).await;
                (wanted, answers)
            });
        }
        let mut out = Vec::new();
        let mut refetch = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            // A task that panicked has no wanted partitions to answer for: they get no answer
            // and `record_timestamps` says so for each.
            let Ok((wanted, answers)) = joined else { continue };
            match answers {
                Ok(mut answers) => {
                    for (key, offset) in wanted {
                        match answers.remove(&key) {
                            Some(Ok(Fetched::Whole(records))) => {
                                let answer = first_record_time(&records, offset);
                                out.push((key, offset, answer));
                            }
                            Some(Ok(Fetched::Cut)) => refetch.push((key, offset)),
                            Some(Err(e)) => out.push((key, offset, Err(e))),
                            None => {
                                let e = ClientError::protocol(format!("no Fetch answer for {}-{}", key.0, key.1));
                                out.push((key, offset, Err(e)));
                            }
                        }
                    }
                }
                Err(e) => out.extend(wanted.into_iter().map(|(key, offset)| (key, offset, Err(e.clone())))),
            }
        }
        // Batches larger than the per-partition size: fetched alone, the first batch comes whole.
        for ((topic, partition), offset) in refetch {
            let options =
                FetchOptions::default().max_bytes(TIMESTAMP_FETCH_PARTITION_BYTES).max_wait(std::time::Duration::ZERO);
            let mut fetcher = PartitionFetcher::new(self.clone(), topic.clone(), partition, options);
            let answer = match fetcher.fetch(offset, deadline).await {
                Ok(fetched) => first_record_time(&fetched.records, offset),
                Err(e) => Err(e),
            };
            out.push(((topic, partition), offset, answer));
        }
        out
    }

    /// One Fetch on `leader` for every partition of `wanted` from its offset.
    async fn fetch_first_batches(
        &self,
        leader: i32,
        wanted: &BTreeMap<(String, i32), i64>,
        deadline: Deadline,
    ) -> Result<BTreeMap<(String, i32), Result<Fetched, ClientError>>, ClientError> {
        let mut topics: BTreeMap<&str, Vec<(i32, i64)>> = BTreeMap::new();
        for ((topic, partition), offset) in wanted {
            topics.entry(topic.as_str()).or_default().push((*partition, *offset));
        }
        let partitions = i32::try_from(wanted.len()).unwrap_or(i32::MAX);
        let max_bytes = TIMESTAMP_FETCH_PARTITION_BYTES.saturating_mul(partitions).min(TIMESTAMP_FETCH_MAX_BYTES);
        let send_options = SendOptions::new(deadline).max_version(FETCH_MAX_VERSION);
        let sent = self
            .send(&Target::Node(leader), send_options, |_| {
                let topics = topics
                    .iter()
                    .map(|(topic, partitions)| {
                        FetchTopic::default()
                            .with_topic(TopicName(StrBytes::from_string((*topic).to_owned())))
                            .with_partitions(
                                partitions
                                    .iter()
                                    .map(|&(partition, offset)| {
                                        FetchPartition::default()
                                            .with_partition(partition)
                                            .with_current_leader_epoch(-1)
                                            .with_fetch_offset(offset)
                                            .with_last_fetched_epoch(-1)
                                            .with_log_start_offset(-1)
                                            .with_partition_max_bytes(TIMESTAMP_FETCH_PARTITION_BYTES)
                                    })
                                    .collect(),
                            )
                    })
                    .collect();
                FetchRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_max_wait_ms(0)
                    .with_min_bytes(0)
                    .with_max_bytes(max_bytes)
                    .with_isolation_level(IsolationLevel::ReadUncommitted.wire())
                    .with_session_id(0)
                    .with_session_epoch(-1)
                    .with_topics(topics)
            })
            .await?;
        let context = format!("Fetch v{} on {}", sent.version, sent.broker.label());
        let response = sent.response;
        if response.error_code != 0 {
            return Err(ClientError::from_code(response.error_code, &context, None));
        }
        let mut out = BTreeMap::new();
        for answer in &response.responses {
            let topic = text(&answer.topic.0);
            for data in &answer.partitions {
                let key = (topic.clone(), data.partition_index);
                // Only what was asked, once.
                if !wanted.contains_key(&key) || out.contains_key(&key) {
                    continue;
                }
                let fetched = if data.error_code != 0 {
                    Err(ClientError::from_code(data.error_code, format!("{context}: {}-{}", key.0, key.1), None))
                } else {
                    let records = data.records.clone().unwrap_or_default();
                    let offset = wanted.get(&key).copied().unwrap_or(0);
                    frame_batches(&records, offset)
                        .map(|framed| whole_or_cut(records, framed.whole))
                        .map_err(|e| ClientError::protocol(format!("{context}: {}-{}: {e}", key.0, key.1)))
                };
                out.insert(key, fetched);
            }
        }
        Ok(out)
    }
}

/// What one partition of a batched Fetch returned.
enum Fetched {
    /// Whole batches (possibly none: nothing at or after the offset).
    Whole(Bytes),
    /// Only a cut batch: the partition's first batch is larger than the size asked.
    Cut,
}

/// The whole batches of a partition's records (`whole` bytes of them, as `fetch::frame_batches`
/// framed them), or [`Fetched::Cut`] when not even the first one is whole.
fn whole_or_cut(records: Bytes, whole: usize) -> Fetched {
    if whole == 0 && !records.is_empty() {
        Fetched::Cut
    } else {
        Fetched::Whole(records.slice(..whole))
    }
}

/// The first record at or after `offset` in whole batches (control batches skipped).
fn first_record_time(records: &[u8], offset: i64) -> TimestampAnswer {
    let mut reader = SegmentReader::new(records, READ_LIMITS);
    while let Some(batch) = reader.next_batch() {
        let batch = batch.map_err(|e| ClientError::protocol(format!("a fetched record batch: {e}")))?;
        if batch.header.is_control {
            continue;
        }
        let log_append_time = batch.header.log_append_time;
        for record in batch.records() {
            let record = record.map_err(|e| ClientError::protocol(format!("a fetched record: {e}")))?;
            if record.offset >= offset && record.timestamp >= 0 {
                return Ok(Some(RecordTime { offset: record.offset, timestamp_ms: record.timestamp, log_append_time }));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A magic 2 batch of uncompressed records (offset deltas 0.., timestamps base + 10 * i),
    /// with a valid CRC-32C.
    fn batch(base_offset: i64, base_ts: i64, count: i32, attributes: i16) -> Vec<u8> {
        let mut records = Vec::new();
        for i in 0..count {
            let mut body = vec![0u8]; // attributes
            varint(&mut body, i64::from(i) * 10); // timestamp delta
            varint(&mut body, i64::from(i)); // offset delta
            varint(&mut body, -1); // key: null
            varint(&mut body, 1); // value: one byte
            body.push(b'v');
            varint(&mut body, 0); // headers
            varint(&mut records, body.len() as i64);
            records.extend_from_slice(&body);
        }
        let mut after_crc = Vec::new();
        after_crc.extend_from_slice(&attributes.to_be_bytes());
        after_crc.extend_from_slice(&(count - 1).to_be_bytes());
        after_crc.extend_from_slice(&base_ts.to_be_bytes());
        after_crc.extend_from_slice(&(base_ts + 10 * i64::from(count - 1)).to_be_bytes());
        after_crc.extend_from_slice(&(-1i64).to_be_bytes()); // producer id
        after_crc.extend_from_slice(&(-1i16).to_be_bytes()); // producer epoch
        after_crc.extend_from_slice(&(-1i32).to_be_bytes()); // base sequence
        after_crc.extend_from_slice(&count.to_be_bytes());
        after_crc.extend_from_slice(&records);
        let crc = crc32c::crc32c(&after_crc);
        let mut out = base_offset.to_be_bytes().to_vec();
        let length = 4 + 1 + 4 + after_crc.len();
        out.extend_from_slice(&(length as i32).to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes()); // partition leader epoch
        out.push(2);
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&after_crc);
        out
    }

    fn varint(out: &mut Vec<u8>, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        loop {
            let byte = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }

    #[test]
    fn the_record_at_the_offset_gives_the_time() {
        let mut bytes = batch(100, 1_000, 5, 0);
        bytes.extend(batch(105, 2_000, 3, 0));
        let t = first_record_time(&bytes, 103).unwrap().unwrap();
        assert_eq!(t, RecordTime { offset: 103, timestamp_ms: 1_030, log_append_time: false });
        let t = first_record_time(&bytes, 106).unwrap().unwrap();
        assert_eq!((t.offset, t.timestamp_ms), (106, 2_010));
        // Past every record fetched: none.
        assert_eq!(first_record_time(&bytes, 200).unwrap(), None);
    }

    #[test]
    fn control_batches_are_skipped_and_log_append_time_is_the_batchs() {
        let mut bytes = batch(10, 5_000, 1, 0x20 | 0x10); // a transaction marker
        bytes.extend(batch(11, 7_000, 3, 0x08)); // LogAppendTime: every record gets maxTimestamp
        let t = first_record_time(&bytes, 10).unwrap().unwrap();
        assert_eq!(t, RecordTime { offset: 11, timestamp_ms: 7_020, log_append_time: true });
    }

    #[test]
    fn a_cut_first_batch_is_refetched_and_garbage_is_an_error() {
        let whole = batch(0, 1, 4, 0);
        let split = |bytes: &[u8]| whole_or_cut(Bytes::from(bytes.to_vec()), frame_batches(bytes, 0).unwrap().whole);
        assert!(matches!(split(&whole[..whole.len() - 3]), Fetched::Cut));
        let Fetched::Whole(w) = split(&whole) else { panic!("whole") };
        assert_eq!(w.len(), whole.len());
        let Fetched::Whole(none) = split(&[]) else { panic!("empty is whole") };
        assert!(none.is_empty());
        let mut bad = whole.clone();
        bad[16] = 7; // magic 7
        assert!(first_record_time(&bad, 0).is_err());
    }
}
