//! Reading a partition's records (Fetch) from its leader, as raw record-batch bytes: what
//! `kcp group history` reads `__consumer_offsets` with, through the same decoder as segment
//! files (`offsets_log::SegmentReader`, feature `offsets-log`).
//!
//! A Fetch response's records are the log's bytes: whole batches, then possibly a partial one
//! cut at the size limit. [`FetchedRecords::records`] holds the whole batches only, and
//! [`FetchedRecords::next_offset`] says where the next fetch starts (after the last whole batch),
//! so a partial batch is simply read again by the next fetch. The response is checked before
//! `kafka-protocol` decodes it (`guard`), and its records against what was asked: one topic, one
//! partition, at most `max_bytes` of records unless they are one single batch (a broker returns
//! the first batch whole even when it is larger, KIP-74).

use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{BrokerId, FetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::offsets::{is_stale_leader_code, IsolationLevel};
use super::text;
use crate::client::send::is_connection_error;
use crate::client::{Client, ClientError, Deadline, SendOptions, Target};

/// The highest Fetch version sent: v13+ names topics by id only, v12 by name, and every broker
/// since Kafka 2.7 serves it (Kafka 4 serves v4 and up).
const FETCH_MAX_VERSION: i16 = 12;

/// The smallest batch Kafka frames: offset (8) and length (4), then at least a legacy message's
/// 14 bytes.
const MIN_BATCH: usize = 12 + 14;

/// What one Fetch of a partition asks for ([`PartitionFetcher`]).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchOptions {
    /// The most bytes of records asked for (the request's `max_bytes` and `partition_max_bytes`).
    pub max_bytes: i32,
    /// How long the leader may wait for new records when there are none (`max_wait_ms`): the
    /// broker answers at once when it has records.
    pub max_wait: Duration,
    /// Read up to the high watermark, or (read-committed) the last stable offset.
    pub isolation: IsolationLevel,
}

impl Default for FetchOptions {
    /// 1 MiB, 500 ms, read-uncommitted.
    fn default() -> Self {
        FetchOptions { max_bytes: 1 << 20, max_wait: Duration::from_millis(500), isolation: IsolationLevel::default() }
    }
}

impl FetchOptions {
    /// Options asking for at most `max_bytes` of records.
    pub fn max_bytes(mut self, max_bytes: i32) -> Self {
        self.max_bytes = max_bytes.max(1);
        self
    }

    /// Options letting the leader wait `max_wait` for new records.
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait;
        self
    }
}

/// One Fetch's answer for a partition.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedRecords {
    /// The offset asked for.
    pub fetch_offset: i64,
    /// Whole record batches in the log's framing (the first may start before `fetch_offset`:
    /// a batch is returned whole). Empty when there was nothing new.
    pub records: Bytes,
    /// Where the next fetch starts: after the last whole batch (`fetch_offset` when none).
    pub next_offset: i64,
    /// Bytes of a batch cut off at the end of the response, dropped here (the next fetch, from
    /// `next_offset`, reads that batch whole).
    pub partial_bytes: usize,
    /// The partition's high watermark when the leader answered.
    pub high_watermark: i64,
    /// Its last stable offset (-1 when unknown).
    pub last_stable_offset: i64,
    /// Its log-start offset (`None` when the broker did not say).
    pub log_start_offset: Option<i64>,
    /// The leader that answered.
    pub leader: i32,
    /// The Fetch version used.
    pub version: i16,
}

/// Reads one partition with Fetch, from its leader: the leader is looked up once (Metadata) and
/// again after an error saying it moved (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
/// LEADER_NOT_AVAILABLE, FENCED/UNKNOWN_LEADER_EPOCH, a lost connection), once per fetch.
/// OFFSET_OUT_OF_RANGE (the log start moved past the offset, or an offset beyond the end) is the
/// caller's: an `Err` with its code.
///
/// ```no_run
/// use std::time::Duration;
/// use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, FetchOptions, PartitionFetcher};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = Client::new(ClientConfig::new(["127.0.0.1:9092"])?)?;
/// let mut fetcher = PartitionFetcher::new(client, "__consumer_offsets", 12, FetchOptions::default());
/// let mut offset = 0;
/// loop {
///     let fetched = fetcher.fetch(offset, Deadline::after(Duration::from_secs(30))).await?;
///     // fetched.records: whole batches, for offsets_log::SegmentReader.
///     println!("{} bytes up to offset {}", fetched.records.len(), fetched.next_offset);
///     if fetched.next_offset >= fetched.high_watermark {
///         break;
///     }
///     offset = fetched.next_offset;
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PartitionFetcher {
    client: Client,
    topic: String,
    partition: i32,
    options: FetchOptions,
    leader: Option<i32>,
}

impl PartitionFetcher {
    /// A fetcher of `topic`'s `partition` through `client`.
    pub fn new(client: Client, topic: impl Into<String>, partition: i32, options: FetchOptions) -> Self {
        PartitionFetcher { client, topic: topic.into(), partition, options, leader: None }
    }

    /// The options in force.
    pub fn options(&self) -> FetchOptions {
        self.options
    }

    /// Changes the options of the next fetches.
    pub fn set_options(&mut self, options: FetchOptions) {
        self.options = options;
    }

    /// Fetches the records from `offset`: whole batches up to `max_bytes` (or the one first
    /// batch when it is larger), or none after `max_wait` when there is nothing new.
    pub async fn fetch(&mut self, offset: i64, deadline: Deadline) -> Result<FetchedRecords, ClientError> {
        let mut retried = false;
        loop {
            let leader = match self.leader {
                Some(l) => l,
                None => {
                    let l = self.find_leader(deadline).await?;
                    self.leader = Some(l);
                    l
                }
            };
            match self.fetch_on(leader, offset, deadline).await {
                Err(e) if !retried && !deadline.is_expired() && leader_moved(&e) => {
                    retried = true;
                    self.leader = None;
                }
                other => return other,
            }
        }
    }

    async fn find_leader(&self, deadline: Deadline) -> Result<i32, ClientError> {
        let metadata = self.client.metadata(Some(&[self.topic.as_str()]), deadline).await?;
        let context = format!("Metadata for {}-{}", self.topic, self.partition);
        let topic = metadata.topic(&self.topic).ok_or_else(|| ClientError::from_code(3, &context, None))?;
        if topic.error_code != 0 {
            return Err(ClientError::from_code(topic.error_code, &context, None));
        }
        let partition = topic
            .partitions
            .iter()
            .find(|p| p.partition == self.partition)
            .ok_or_else(|| ClientError::from_code(3, &context, None))?;
        if partition.leader < 0 {
            return Err(ClientError::from_code(5, format!("{context}: no leader"), None));
        }
        Ok(partition.leader)
    }

    async fn fetch_on(&self, leader: i32, offset: i64, deadline: Deadline) -> Result<FetchedRecords, ClientError> {
        let options = self.options;
        let max_wait_ms = i32::try_from(options.max_wait.as_millis()).unwrap_or(i32::MAX);
        // The leader holds the request up to max_wait before answering: give it that on top.
        let timeout = self.client.config().request_timeout + options.max_wait;
        let send_options = SendOptions::new(deadline).max_version(FETCH_MAX_VERSION).request_timeout(timeout);
        let topic = self.topic.clone();
        let partition = self.partition;
        let sent = self
            .client
            .send(&Target::Node(leader), send_options, |_| {
                let wanted = FetchPartition::default()
                    .with_partition(partition)
                    .with_current_leader_epoch(-1)
                    .with_fetch_offset(offset)
                    .with_last_fetched_epoch(-1)
                    .with_log_start_offset(-1)
                    .with_partition_max_bytes(options.max_bytes);
                FetchRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_max_wait_ms(max_wait_ms)
                    .with_min_bytes(1)
                    .with_max_bytes(options.max_bytes)
                    .with_isolation_level(options.isolation.wire())
                    // No fetch session (KIP-227): session 0, epoch -1 is a full, sessionless fetch.
                    .with_session_id(0)
                    .with_session_epoch(-1)
                    .with_topics(vec![FetchTopic::default()
                        .with_topic(TopicName(StrBytes::from_string(topic.clone())))
                        .with_partitions(vec![wanted])])
            })
            .await?;
        let version = sent.version;
        let label = sent.broker.label();
        let context = format!("Fetch v{version} of {}-{partition} on {label}", self.topic);
        let response = sent.response;
        if response.error_code != 0 {
            return Err(ClientError::from_code(response.error_code, &context, None));
        }
        // Exactly what was asked: one topic, one partition.
        let [answer] = response.responses.as_slice() else {
            return Err(ClientError::protocol(format!(
                "{context}: {} topics answered, 1 asked",
                response.responses.len()
            )));
        };
        if text(&answer.topic.0) != self.topic {
            return Err(ClientError::protocol(format!("{context}: answered for topic {:?}", text(&answer.topic.0))));
        }
        let [data] = answer.partitions.as_slice() else {
            return Err(ClientError::protocol(format!(
                "{context}: {} partitions answered, 1 asked",
                answer.partitions.len()
            )));
        };
        if data.partition_index != partition {
            return Err(ClientError::protocol(format!("{context}: answered for partition {}", data.partition_index)));
        }
        if data.error_code != 0 {
            return Err(ClientError::from_code(data.error_code, &context, None));
        }
        let records = data.records.clone().unwrap_or_default();
        let framed = frame_batches(&records, offset).map_err(|e| ClientError::protocol(format!("{context}: {e}")))?;
        let asked = usize::try_from(options.max_bytes).unwrap_or(0);
        if records.len() > asked && !(framed.batches == 1 && framed.whole == records.len()) {
            return Err(ClientError::protocol(format!(
                "{context}: {} bytes of records, more than the {asked} asked and not one single batch",
                records.len()
            )));
        }
        if data.high_watermark < -1 || data.log_start_offset < -1 {
            return Err(ClientError::protocol(format!(
                "{context}: high watermark {} or log start {} is not an offset",
                data.high_watermark, data.log_start_offset
            )));
        }
        Ok(FetchedRecords {
            fetch_offset: offset,
            partial_bytes: records.len() - framed.whole,
            records: records.slice(..framed.whole),
            next_offset: framed.next_offset,
            high_watermark: data.high_watermark,
            last_stable_offset: data.last_stable_offset,
            log_start_offset: (data.log_start_offset >= 0).then_some(data.log_start_offset),
            leader,
            version,
        })
    }
}

/// Whether a failed fetch should look the leader up again.
fn leader_moved(e: &ClientError) -> bool {
    e.error_code().is_some_and(is_stale_leader_code) || is_connection_error(e)
}

/// The framing of a Fetch response's records.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Framed {
    /// Bytes of whole batches.
    pub(super) whole: usize,
    /// How many whole batches.
    batches: usize,
    /// After the last whole batch's last offset (`from` when none).
    next_offset: i64,
}

/// Frames record bytes batch by batch (offset, length, and for magic 2 the last offset delta),
/// without decoding them: where the whole batches end, and the offset after them. A batch
/// cut at the end is not an error; a length no batch can have is.
pub(super) fn frame_batches(records: &[u8], from: i64) -> Result<Framed, String> {
    let mut at = 0usize;
    let mut framed = Framed { whole: 0, batches: 0, next_offset: from };
    while records.len() - at >= 12 {
        let base = i64::from_be_bytes(records[at..at + 8].try_into().unwrap_or([0; 8]));
        let length = i32::from_be_bytes(records[at + 8..at + 12].try_into().unwrap_or([0; 4]));
        if length < (MIN_BATCH - 12) as i32 {
            return Err(format!("record batch at byte {at} has length {length}"));
        }
        let end = match at.checked_add(12 + length as usize) {
            Some(end) if end <= records.len() => end,
            _ => break,
        };
        // Magic 2 (byte 16): the last offset is base + lastOffsetDelta (bytes 23..27); a legacy
        // message (or compressed wrapper) carries its last offset as its own.
        let last = if records[at + 16] == 2 && length >= 49 {
            let delta = i32::from_be_bytes(records[at + 23..at + 27].try_into().unwrap_or([0; 4]));
            base.saturating_add(i64::from(delta.max(0)))
        } else {
            base
        };
        if base < 0 {
            return Err(format!("record batch at byte {at} has base offset {base}"));
        }
        framed.next_offset = framed.next_offset.max(last.saturating_add(1));
        framed.whole = end;
        framed.batches += 1;
        at = end;
    }
    Ok(framed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A magic 2 batch header of `length` bytes after the length field (content zeros).
    fn batch(base: i64, last_delta: i32, length: usize) -> Vec<u8> {
        let mut b = base.to_be_bytes().to_vec();
        b.extend_from_slice(&(length as i32).to_be_bytes());
        b.resize(12 + length, 0);
        b[16] = 2;
        b[23..27].copy_from_slice(&last_delta.to_be_bytes());
        b
    }

    #[test]
    fn whole_batches_and_the_next_offset() {
        let mut bytes = batch(10, 4, 70);
        bytes.extend(batch(15, 0, 61));
        let f = frame_batches(&bytes, 12).unwrap();
        assert_eq!(f, Framed { whole: bytes.len(), batches: 2, next_offset: 16 });
    }

    #[test]
    fn a_partial_batch_at_the_end_is_left_for_the_next_fetch() {
        let mut bytes = batch(10, 4, 70);
        let whole = bytes.len();
        bytes.extend(&batch(15, 0, 61)[..40]);
        assert_eq!(frame_batches(&bytes, 10).unwrap(), Framed { whole, batches: 1, next_offset: 15 });
        // Fewer than 12 bytes: not even a length.
        assert_eq!(frame_batches(&bytes[..whole + 5], 10).unwrap().whole, whole);
        // Nothing whole: the fetch offset stays.
        assert_eq!(frame_batches(&bytes[whole..], 15).unwrap(), Framed { whole: 0, batches: 0, next_offset: 15 });
    }

    #[test]
    fn impossible_lengths_are_errors() {
        let mut bytes = batch(10, 0, 70);
        bytes[8..12].copy_from_slice(&3i32.to_be_bytes());
        assert!(frame_batches(&bytes, 0).unwrap_err().contains("length 3"));
        bytes[8..12].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(frame_batches(&bytes, 0).is_err());
        // A huge length is a cut batch, not an allocation.
        bytes[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(frame_batches(&bytes, 0).unwrap().whole, 0);
    }

    #[test]
    fn legacy_messages_end_at_their_own_offset() {
        let mut bytes = batch(41, 0, 30);
        bytes[16] = 1;
        assert_eq!(frame_batches(&bytes, 0).unwrap().next_offset, 42);
    }
}
