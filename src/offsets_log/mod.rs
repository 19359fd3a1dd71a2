//! The `__consumer_offsets` log (feature `offsets-log`): segment files read batch by batch and
//! the group coordinator's records decoded, for reconstructing what happened to a group.
//!
//! Two layers:
//! - [`SegmentReader`] frames a segment: record batches (magic 2) and the message sets of old
//!   segments (magic 0 and 1), gzip, snappy (xerial-framed or raw), lz4 (frame format) and zstd,
//!   checksums verified (CRC-32C for magic 2, CRC-32 for 0 and 1) and reported, never fatal.
//!   It holds one batch at a time, within [`Limits`], whatever the file's size.
//! - [`CoordinatorRecord::decode`] decodes a record's key and value: offset commits, classic
//!   group metadata (with each member's subscription and assignment bytes, for the codec), the
//!   KIP-848 consumer group records, the share group (KIP-932) and streams group (KIP-1071)
//!   records of Kafka 4.1, tombstones.
//!
//! ```
//! use kafka_consumer_protocol::offsets_log::{CoordinatorRecord, Limits, RecordKey, SegmentReader};
//!
//! # fn segment() -> Vec<u8> {
//! #     // One magic 0 message: the GroupMetadataKey of "g" and a null value.
//! #     let key = [0u8, 2, 0, 1, b'g'];
//! #     let mut body = vec![0u8, 0]; // magic 0, attributes
//! #     body.extend_from_slice(&(key.len() as i32).to_be_bytes());
//! #     body.extend_from_slice(&key);
//! #     body.extend_from_slice(&(-1i32).to_be_bytes());
//! #     let mut out = 7i64.to_be_bytes().to_vec();
//! #     out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
//! #     out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
//! #     out.extend_from_slice(&body);
//! #     out
//! # }
//! let bytes = segment();
//! let mut reader = SegmentReader::new(&bytes[..], Limits::default());
//! while let Some(batch) = reader.next_batch() {
//!     let batch = batch?;
//!     assert!(batch.header.crc_valid());
//!     for record in batch.records() {
//!         let record = record?;
//!         let decoded = CoordinatorRecord::decode(record.key, record.value)?;
//!         assert_eq!(record.offset, 7);
//!         assert_eq!(decoded.key, RecordKey::GroupMetadata { group: "g" });
//!         assert!(decoded.value.is_none(), "a tombstone: the group was deleted");
//!     }
//! }
//! # Ok::<(), kafka_consumer_protocol::offsets_log::LogError>(())
//! ```

mod error;
pub mod history;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub mod json;
mod record;
mod segment;
#[cfg(test)]
mod tests;

pub use error::{LogError, LogErrorKind};
pub use history::{GroupHistory, HistoryBuilder};
pub use record::{
    ClassicMemberMetadata, ConsumerGroupCurrentMemberAssignmentValue, ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataValue, ConsumerGroupPartitionMetadataValue, ConsumerGroupRegularExpressionValue,
    CoordinatorRecord, CopartitionGroup, GroupEpochValue, GroupMetadataValue, MemberMetadata, OffsetCommitValue,
    OtherFamily, PartitionMetadataTopic, RecordKey, RecordValue, ShareGroupCurrentMemberAssignmentValue,
    ShareGroupMemberMetadataValue, ShareGroupStatePartitionMetadataValue, StreamsEndpoint,
    StreamsGroupCurrentMemberAssignmentValue, StreamsGroupMemberMetadataValue, StreamsGroupTopologyValue, StreamsTasks,
    StreamsTopicInfo, Subtopology, TaskIds, TopicIdPartitions, TopicInfo, TopicPartitionsInfo, Uuid,
};
pub use segment::{Batch, BatchHeader, Compression, Limits, LogRecord, Records, SegmentReader};

/// The partition of `__consumer_offsets` that holds a group's records: Java's
/// `Utils.abs(groupId.hashCode()) % partitionCount`.
///
/// ```
/// use kafka_consumer_protocol::offsets_log::partition_for_group;
/// assert_eq!(partition_for_group("", 50), 0);
/// assert_eq!(partition_for_group("a", 50), 97 % 50);
/// ```
pub fn partition_for_group(group_id: &str, partition_count: u32) -> u32 {
    let mut hash: i32 = 0;
    for unit in group_id.encode_utf16() {
        hash = hash.wrapping_mul(31).wrapping_add(i32::from(unit));
    }
    // Kafka's Utils.abs: Integer.MIN_VALUE maps to 0, not to itself.
    let abs = if hash == i32::MIN { 0 } else { hash.unsigned_abs() };
    if partition_count == 0 {
        0
    } else {
        abs % partition_count
    }
}
