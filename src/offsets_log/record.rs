//! The group coordinator's records: keys and values of every type Kafka 3.9 and 4.x write to
//! `__consumer_offsets`, decoded with borrowed strings and bytes.
//!
//! Schemas: Apache Kafka's `group-coordinator/src/main/resources/common/message/*.json`. A key
//! is an int16 type id followed by the key struct (never flexible); a value is an int16 version
//! followed by the value struct (flexible, with compact strings, arrays and tagged fields, from
//! the version the schema says).

use crate::codec::{AssignmentView, DecodeError, SubscriptionView};

use super::error::{LogError, LogErrorKind};
use super::segment::Cur;

/// A topic id, shown as Kafka shows it (URL-safe base64 without padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl core::fmt::Display for Uuid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::with_capacity(22);
        for chunk in self.0.chunks(3) {
            let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            let chars = chunk.len() + 1;
            for i in 0..chars {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 0x3F) as usize] as char);
            }
        }
        f.write_str(&out)
    }
}

/// The family of a record type this decoder reports by id without decoding its value: the
/// share and streams group type ids that are not in Kafka 4.1.1's schemas (9 and 18 held the 4.0
/// early-access `ShareGroupPartitionMetadata` and `StreamsGroupPartitionMetadata`, which 4.1
/// dropped; 24 is not written by 4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OtherFamily {
    /// Share groups (KIP-932): type 9.
    Share,
    /// Streams groups (KIP-1071): types 18 and 24.
    Streams,
}

/// A record's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordKey<'a> {
    /// Types 0 and 1: a committed offset (`OffsetCommitKey`; type 0 is the legacy form).
    OffsetCommit {
        /// The type id (0 or 1).
        type_id: i16,
        /// `group`.
        group: &'a str,
        /// `topic`.
        topic: &'a str,
        /// `partition`.
        partition: i32,
    },
    /// Type 2: a classic group's metadata (`GroupMetadataKey`).
    GroupMetadata {
        /// `group`.
        group: &'a str,
    },
    /// Type 3: `ConsumerGroupMetadataKey`.
    ConsumerGroupMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 4: `ConsumerGroupPartitionMetadataKey` (no longer written from 4.1).
    ConsumerGroupPartitionMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 5: `ConsumerGroupMemberMetadataKey`.
    ConsumerGroupMemberMetadata {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 6: `ConsumerGroupTargetAssignmentMetadataKey`.
    ConsumerGroupTargetAssignmentMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 7: `ConsumerGroupTargetAssignmentMemberKey`.
    ConsumerGroupTargetAssignmentMember {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 8: `ConsumerGroupCurrentMemberAssignmentKey`.
    ConsumerGroupCurrentMemberAssignment {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 16: `ConsumerGroupRegularExpressionKey`.
    ConsumerGroupRegularExpression {
        /// `GroupId`.
        group_id: &'a str,
        /// `RegularExpression`.
        regular_expression: &'a str,
    },
    /// Type 10: `ShareGroupMemberMetadataKey` (KIP-932).
    ShareGroupMemberMetadata {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 11: `ShareGroupMetadataKey`.
    ShareGroupMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 12: `ShareGroupTargetAssignmentMetadataKey`.
    ShareGroupTargetAssignmentMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 13: `ShareGroupTargetAssignmentMemberKey`.
    ShareGroupTargetAssignmentMember {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 14: `ShareGroupCurrentMemberAssignmentKey`.
    ShareGroupCurrentMemberAssignment {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 15: `ShareGroupStatePartitionMetadataKey`.
    ShareGroupStatePartitionMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 17: `StreamsGroupMetadataKey` (KIP-1071).
    StreamsGroupMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 19: `StreamsGroupMemberMetadataKey`.
    StreamsGroupMemberMetadata {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 20: `StreamsGroupTargetAssignmentMetadataKey`.
    StreamsGroupTargetAssignmentMetadata {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// Type 21: `StreamsGroupTargetAssignmentMemberKey`.
    StreamsGroupTargetAssignmentMember {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 22: `StreamsGroupCurrentMemberAssignmentKey`.
    StreamsGroupCurrentMemberAssignment {
        /// `GroupId`.
        group_id: &'a str,
        /// `MemberId`.
        member_id: &'a str,
    },
    /// Type 23: `StreamsGroupTopologyKey`.
    StreamsGroupTopology {
        /// `GroupId`.
        group_id: &'a str,
    },
    /// A share or streams group record of a type Kafka 4.1 does not write (see [`OtherFamily`]):
    /// reported by type id, its value not decoded.
    Other {
        /// The type id.
        type_id: i16,
        /// Which group family.
        family: OtherFamily,
        /// The group id (every such key starts with it), when it reads.
        group_id: Option<&'a str>,
    },
}

impl<'a> RecordKey<'a> {
    /// The key type id.
    pub fn type_id(&self) -> i16 {
        match *self {
            RecordKey::OffsetCommit { type_id, .. } | RecordKey::Other { type_id, .. } => type_id,
            RecordKey::GroupMetadata { .. } => 2,
            RecordKey::ConsumerGroupMetadata { .. } => 3,
            RecordKey::ConsumerGroupPartitionMetadata { .. } => 4,
            RecordKey::ConsumerGroupMemberMetadata { .. } => 5,
            RecordKey::ConsumerGroupTargetAssignmentMetadata { .. } => 6,
            RecordKey::ConsumerGroupTargetAssignmentMember { .. } => 7,
            RecordKey::ConsumerGroupCurrentMemberAssignment { .. } => 8,
            RecordKey::ConsumerGroupRegularExpression { .. } => 16,
            RecordKey::ShareGroupMemberMetadata { .. } => 10,
            RecordKey::ShareGroupMetadata { .. } => 11,
            RecordKey::ShareGroupTargetAssignmentMetadata { .. } => 12,
            RecordKey::ShareGroupTargetAssignmentMember { .. } => 13,
            RecordKey::ShareGroupCurrentMemberAssignment { .. } => 14,
            RecordKey::ShareGroupStatePartitionMetadata { .. } => 15,
            RecordKey::StreamsGroupMetadata { .. } => 17,
            RecordKey::StreamsGroupMemberMetadata { .. } => 19,
            RecordKey::StreamsGroupTargetAssignmentMetadata { .. } => 20,
            RecordKey::StreamsGroupTargetAssignmentMember { .. } => 21,
            RecordKey::StreamsGroupCurrentMemberAssignment { .. } => 22,
            RecordKey::StreamsGroupTopology { .. } => 23,
        }
    }

    /// The group the record belongs to.
    pub fn group(&self) -> Option<&'a str> {
        match *self {
            RecordKey::OffsetCommit { group, .. } | RecordKey::GroupMetadata { group } => Some(group),
            RecordKey::ConsumerGroupMetadata { group_id }
            | RecordKey::ConsumerGroupPartitionMetadata { group_id }
            | RecordKey::ConsumerGroupMemberMetadata { group_id, .. }
            | RecordKey::ConsumerGroupTargetAssignmentMetadata { group_id }
            | RecordKey::ConsumerGroupTargetAssignmentMember { group_id, .. }
            | RecordKey::ConsumerGroupCurrentMemberAssignment { group_id, .. }
            | RecordKey::ConsumerGroupRegularExpression { group_id, .. }
            | RecordKey::ShareGroupMemberMetadata { group_id, .. }
            | RecordKey::ShareGroupMetadata { group_id }
            | RecordKey::ShareGroupTargetAssignmentMetadata { group_id }
            | RecordKey::ShareGroupTargetAssignmentMember { group_id, .. }
            | RecordKey::ShareGroupCurrentMemberAssignment { group_id, .. }
            | RecordKey::ShareGroupStatePartitionMetadata { group_id }
            | RecordKey::StreamsGroupMetadata { group_id }
            | RecordKey::StreamsGroupMemberMetadata { group_id, .. }
            | RecordKey::StreamsGroupTargetAssignmentMetadata { group_id }
            | RecordKey::StreamsGroupTargetAssignmentMember { group_id, .. }
            | RecordKey::StreamsGroupCurrentMemberAssignment { group_id, .. }
            | RecordKey::StreamsGroupTopology { group_id } => Some(group_id),
            RecordKey::Other { group_id, .. } => group_id,
        }
    }

    /// Decodes a key.
    pub fn decode(key: &'a [u8]) -> Result<Self, LogError> {
        let mut r = Reader { c: Cur { buf: key, pos: 0 } };
        let type_id = r.i16("key.type")?;
        let key = match type_id {
            0 | 1 => RecordKey::OffsetCommit {
                type_id,
                group: r.string("key.group")?,
                topic: r.string("key.topic")?,
                partition: r.i32("key.partition")?,
            },
            2 => RecordKey::GroupMetadata { group: r.string("key.group")? },
            3 => RecordKey::ConsumerGroupMetadata { group_id: r.string("key.GroupId")? },
            4 => RecordKey::ConsumerGroupPartitionMetadata { group_id: r.string("key.GroupId")? },
            5 => RecordKey::ConsumerGroupMemberMetadata {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            6 => RecordKey::ConsumerGroupTargetAssignmentMetadata { group_id: r.string("key.GroupId")? },
            7 => RecordKey::ConsumerGroupTargetAssignmentMember {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            8 => RecordKey::ConsumerGroupCurrentMemberAssignment {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            16 => RecordKey::ConsumerGroupRegularExpression {
                group_id: r.string("key.GroupId")?,
                regular_expression: r.string("key.RegularExpression")?,
            },
            10 => RecordKey::ShareGroupMemberMetadata {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            11 => RecordKey::ShareGroupMetadata { group_id: r.string("key.GroupId")? },
            12 => RecordKey::ShareGroupTargetAssignmentMetadata { group_id: r.string("key.GroupId")? },
            13 => RecordKey::ShareGroupTargetAssignmentMember {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            14 => RecordKey::ShareGroupCurrentMemberAssignment {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            15 => RecordKey::ShareGroupStatePartitionMetadata { group_id: r.string("key.GroupId")? },
            17 => RecordKey::StreamsGroupMetadata { group_id: r.string("key.GroupId")? },
            19 => RecordKey::StreamsGroupMemberMetadata {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            20 => RecordKey::StreamsGroupTargetAssignmentMetadata { group_id: r.string("key.GroupId")? },
            21 => RecordKey::StreamsGroupTargetAssignmentMember {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            22 => RecordKey::StreamsGroupCurrentMemberAssignment {
                group_id: r.string("key.GroupId")?,
                member_id: r.string("key.MemberId")?,
            },
            23 => RecordKey::StreamsGroupTopology { group_id: r.string("key.GroupId")? },
            9 | 18 | 24 => RecordKey::Other {
                type_id,
                family: if type_id == 9 { OtherFamily::Share } else { OtherFamily::Streams },
                group_id: r.string("key.GroupId").ok(),
            },
            other => return Err(LogError::new(LogErrorKind::UnknownRecordType(other), 0, "key.type")),
        };
        Ok(key)
    }
}

/// `OffsetCommitValue` (versions 0-4; v4 is flexible).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetCommitValue<'a> {
    /// `offset`.
    pub offset: i64,
    /// `leaderEpoch` (v3+, else -1).
    pub leader_epoch: i32,
    /// `metadata`.
    pub metadata: &'a str,
    /// `commitTimestamp`.
    pub commit_timestamp: i64,
    /// `expireTimestamp` (v1 only, else -1).
    pub expire_timestamp: i64,
    /// `topicId` (tagged field 0 of v4, written by 4.1+ brokers).
    pub topic_id: Option<Uuid>,
}

/// `GroupMetadataValue` (versions 0-4; v4 is flexible): a classic group after a rebalance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupMetadataValue<'a> {
    /// `protocolType` (`consumer` for consumer groups).
    pub protocol_type: &'a str,
    /// `generation`.
    pub generation: i32,
    /// `protocol`: the chosen assignor.
    pub protocol: Option<&'a str>,
    /// `leader`.
    pub leader: Option<&'a str>,
    /// `currentStateTimestamp` (v2+, else -1).
    pub current_state_timestamp: i64,
    /// `members`.
    pub members: Vec<MemberMetadata<'a>>,
}

/// One member of a [`GroupMetadataValue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberMetadata<'a> {
    /// `memberId`.
    pub member_id: &'a str,
    /// `groupInstanceId` (v3+): a static member's id.
    pub group_instance_id: Option<&'a str>,
    /// `clientId`.
    pub client_id: &'a str,
    /// `clientHost`.
    pub client_host: &'a str,
    /// `rebalanceTimeout` (v1+, else -1).
    pub rebalance_timeout: i32,
    /// `sessionTimeout`.
    pub session_timeout: i32,
    /// `subscription`: the member's protocol metadata for the chosen protocol.
    pub subscription: &'a [u8],
    /// `assignment`.
    pub assignment: &'a [u8],
}

impl<'a> MemberMetadata<'a> {
    /// The subscription decoded by the codec (meaningful when the group's protocol type is
    /// `consumer`).
    pub fn subscription_view(&self) -> Result<SubscriptionView<'a>, DecodeError> {
        SubscriptionView::decode(self.subscription)
    }

    /// The assignment decoded by the codec.
    pub fn assignment_view(&self) -> Result<AssignmentView<'a>, DecodeError> {
        AssignmentView::decode(self.assignment)
    }
}

/// `ConsumerGroupMetadataValue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsumerGroupMetadataValue {
    /// `Epoch`: the group epoch.
    pub epoch: i32,
    /// `MetadataHash` (tagged field 0, 4.1+; 0 when absent).
    pub metadata_hash: i64,
}

/// `ConsumerGroupPartitionMetadataValue` (3.7 to 4.0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerGroupPartitionMetadataValue<'a> {
    /// `Topics`.
    pub topics: Vec<PartitionMetadataTopic<'a>>,
}

/// One topic of a [`ConsumerGroupPartitionMetadataValue`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionMetadataTopic<'a> {
    /// `TopicId`.
    pub topic_id: Uuid,
    /// `TopicName`.
    pub topic_name: &'a str,
    /// `NumPartitions`.
    pub num_partitions: i32,
    /// `PartitionMetadata`: (`Partition`, `Racks`).
    pub partition_metadata: Vec<(i32, Vec<&'a str>)>,
}

/// `ConsumerGroupMemberMetadataValue`: a KIP-848 group member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerGroupMemberMetadataValue<'a> {
    /// `InstanceId`.
    pub instance_id: Option<&'a str>,
    /// `RackId`.
    pub rack_id: Option<&'a str>,
    /// `ClientId`.
    pub client_id: &'a str,
    /// `ClientHost`.
    pub client_host: &'a str,
    /// `SubscribedTopicNames`.
    pub subscribed_topic_names: Vec<&'a str>,
    /// `SubscribedTopicRegex`.
    pub subscribed_topic_regex: Option<&'a str>,
    /// `RebalanceTimeoutMs`.
    pub rebalance_timeout_ms: i32,
    /// `ServerAssignor`.
    pub server_assignor: Option<&'a str>,
    /// `ClassicMemberMetadata` (tagged field 0): set for a classic member of a consumer group.
    pub classic_member_metadata: Option<ClassicMemberMetadata<'a>>,
}

/// A classic member's metadata inside a consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicMemberMetadata<'a> {
    /// `SessionTimeoutMs`.
    pub session_timeout_ms: i32,
    /// `SupportedProtocols`: (`Name`, `Metadata`), the metadata a ConsumerProtocolSubscription.
    pub supported_protocols: Vec<(&'a str, &'a [u8])>,
}

/// A topic id and partitions (`TopicPartitions` of the assignment records).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicIdPartitions {
    /// `TopicId`.
    pub topic_id: Uuid,
    /// `Partitions`.
    pub partitions: Vec<i32>,
}

/// `ConsumerGroupCurrentMemberAssignmentValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerGroupCurrentMemberAssignmentValue {
    /// `MemberEpoch`.
    pub member_epoch: i32,
    /// `PreviousMemberEpoch`.
    pub previous_member_epoch: i32,
    /// `State` (0 stable, 1 unrevoked partitions, 2 unreleased partitions, 3 unknown).
    pub state: i8,
    /// `AssignedPartitions`.
    pub assigned_partitions: Vec<TopicIdPartitions>,
    /// `PartitionsPendingRevocation`.
    pub partitions_pending_revocation: Vec<TopicIdPartitions>,
}

/// `ConsumerGroupRegularExpressionValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerGroupRegularExpressionValue<'a> {
    /// `Topics`.
    pub topics: Vec<&'a str>,
    /// `Version`.
    pub version: i64,
    /// `Timestamp`.
    pub timestamp: i64,
}

/// `ShareGroupMemberMetadataValue` (KIP-932): a share group member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareGroupMemberMetadataValue<'a> {
    /// `RackId`.
    pub rack_id: Option<&'a str>,
    /// `ClientId`.
    pub client_id: &'a str,
    /// `ClientHost`.
    pub client_host: &'a str,
    /// `SubscribedTopicNames`.
    pub subscribed_topic_names: Vec<&'a str>,
}

/// `ShareGroupMetadataValue` and `StreamsGroupMetadataValue`: the group epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupEpochValue {
    /// `Epoch`: the group epoch.
    pub epoch: i32,
    /// `MetadataHash`: the hash of the subscribed topics' metadata (a plain field of these two
    /// schemas, always written).
    pub metadata_hash: i64,
}

/// `ShareGroupCurrentMemberAssignmentValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareGroupCurrentMemberAssignmentValue {
    /// `MemberEpoch`.
    pub member_epoch: i32,
    /// `PreviousMemberEpoch`.
    pub previous_member_epoch: i32,
    /// `State` (0 stable; see Kafka's `MemberState`).
    pub state: i8,
    /// `AssignedPartitions`: a share group's partitions are shared, never revoked first.
    pub assigned_partitions: Vec<TopicIdPartitions>,
}

/// A topic of `ShareGroupStatePartitionMetadataValue` with partitions (`TopicPartitionsInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicPartitionsInfo<'a> {
    /// `TopicId`.
    pub topic_id: Uuid,
    /// `TopicName`.
    pub topic_name: &'a str,
    /// `Partitions`.
    pub partitions: Vec<i32>,
}

/// A topic of `ShareGroupStatePartitionMetadataValue` (`TopicInfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopicInfo<'a> {
    /// `TopicId`.
    pub topic_id: Uuid,
    /// `TopicName`.
    pub topic_name: &'a str,
}

/// `ShareGroupStatePartitionMetadataValue`: which topic partitions have their share-group state
/// (in `__share_group_state`) being initialized, initialized, or being deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareGroupStatePartitionMetadataValue<'a> {
    /// `InitializingTopics`.
    pub initializing_topics: Vec<TopicPartitionsInfo<'a>>,
    /// `InitializedTopics`.
    pub initialized_topics: Vec<TopicPartitionsInfo<'a>>,
    /// `DeletingTopics`.
    pub deleting_topics: Vec<TopicInfo<'a>>,
}

/// A streams member's `UserEndpoint` (`Endpoint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamsEndpoint<'a> {
    /// `Host`.
    pub host: &'a str,
    /// `Port` (uint16).
    pub port: u16,
}

/// `StreamsGroupMemberMetadataValue` (KIP-1071): a streams group member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsGroupMemberMetadataValue<'a> {
    /// `InstanceId`.
    pub instance_id: Option<&'a str>,
    /// `RackId`.
    pub rack_id: Option<&'a str>,
    /// `ClientId`.
    pub client_id: &'a str,
    /// `ClientHost`.
    pub client_host: &'a str,
    /// `RebalanceTimeoutMs`.
    pub rebalance_timeout_ms: i32,
    /// `TopologyEpoch`.
    pub topology_epoch: i32,
    /// `ProcessId`.
    pub process_id: &'a str,
    /// `UserEndpoint`.
    pub user_endpoint: Option<StreamsEndpoint<'a>>,
    /// `ClientTags`: (`Key`, `Value`).
    pub client_tags: Vec<(&'a str, &'a str)>,
}

/// A subtopology's partitions (`TaskIds` of the streams assignment records).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskIds<'a> {
    /// `SubtopologyId`.
    pub subtopology_id: &'a str,
    /// `Partitions`.
    pub partitions: Vec<i32>,
}

/// `StreamsGroupTargetAssignmentMemberValue`: a member's target tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsTasks<'a> {
    /// `ActiveTasks`.
    pub active_tasks: Vec<TaskIds<'a>>,
    /// `StandbyTasks`.
    pub standby_tasks: Vec<TaskIds<'a>>,
    /// `WarmupTasks`.
    pub warmup_tasks: Vec<TaskIds<'a>>,
}

/// `StreamsGroupCurrentMemberAssignmentValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsGroupCurrentMemberAssignmentValue<'a> {
    /// `MemberEpoch`.
    pub member_epoch: i32,
    /// `PreviousMemberEpoch`.
    pub previous_member_epoch: i32,
    /// `State`.
    pub state: i8,
    /// `ActiveTasks`, `StandbyTasks`, `WarmupTasks`.
    pub tasks: StreamsTasks<'a>,
    /// `ActiveTasksPendingRevocation`, `StandbyTasksPendingRevocation`,
    /// `WarmupTasksPendingRevocation`.
    pub tasks_pending_revocation: StreamsTasks<'a>,
}

/// A topic of a streams topology (`TopicInfo` of `StreamsGroupTopologyValue`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsTopicInfo<'a> {
    /// `Name`.
    pub name: &'a str,
    /// `Partitions`.
    pub partitions: i32,
    /// `ReplicationFactor`.
    pub replication_factor: i16,
    /// `TopicConfigs`: (`key`, `value`).
    pub topic_configs: Vec<(&'a str, &'a str)>,
}

/// A co-partition group of a subtopology: indexes into its topic lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopartitionGroup {
    /// `SourceTopics`.
    pub source_topics: Vec<i16>,
    /// `SourceTopicRegex`.
    pub source_topic_regex: Vec<i16>,
    /// `RepartitionSourceTopics`.
    pub repartition_source_topics: Vec<i16>,
}

/// A subtopology of `StreamsGroupTopologyValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subtopology<'a> {
    /// `SubtopologyId`.
    pub subtopology_id: &'a str,
    /// `SourceTopics`.
    pub source_topics: Vec<&'a str>,
    /// `SourceTopicRegex`.
    pub source_topic_regex: Vec<&'a str>,
    /// `StateChangelogTopics`.
    pub state_changelog_topics: Vec<StreamsTopicInfo<'a>>,
    /// `RepartitionSinkTopics`.
    pub repartition_sink_topics: Vec<&'a str>,
    /// `RepartitionSourceTopics`.
    pub repartition_source_topics: Vec<StreamsTopicInfo<'a>>,
    /// `CopartitionGroups`.
    pub copartition_groups: Vec<CopartitionGroup>,
}

/// `StreamsGroupTopologyValue`: the topology a streams group runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsGroupTopologyValue<'a> {
    /// `Epoch`: the topology epoch.
    pub epoch: i32,
    /// `Subtopologies`.
    pub subtopologies: Vec<Subtopology<'a>>,
}

/// A record's value, decoded per its key's type.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordValue<'a> {
    /// Types 0, 1.
    OffsetCommit(OffsetCommitValue<'a>),
    /// Type 2.
    GroupMetadata(GroupMetadataValue<'a>),
    /// Type 3.
    ConsumerGroupMetadata(ConsumerGroupMetadataValue),
    /// Type 4.
    ConsumerGroupPartitionMetadata(ConsumerGroupPartitionMetadataValue<'a>),
    /// Type 5.
    ConsumerGroupMemberMetadata(ConsumerGroupMemberMetadataValue<'a>),
    /// Type 6: `AssignmentEpoch`.
    ConsumerGroupTargetAssignmentMetadata {
        /// `AssignmentEpoch`.
        assignment_epoch: i32,
    },
    /// Type 7: `TopicPartitions`.
    ConsumerGroupTargetAssignmentMember(Vec<TopicIdPartitions>),
    /// Type 8.
    ConsumerGroupCurrentMemberAssignment(ConsumerGroupCurrentMemberAssignmentValue),
    /// Type 16.
    ConsumerGroupRegularExpression(ConsumerGroupRegularExpressionValue<'a>),
    /// Type 10.
    ShareGroupMemberMetadata(ShareGroupMemberMetadataValue<'a>),
    /// Type 11.
    ShareGroupMetadata(GroupEpochValue),
    /// Type 12: `AssignmentEpoch`.
    ShareGroupTargetAssignmentMetadata {
        /// `AssignmentEpoch`.
        assignment_epoch: i32,
    },
    /// Type 13: `TopicPartitions`.
    ShareGroupTargetAssignmentMember(Vec<TopicIdPartitions>),
    /// Type 14.
    ShareGroupCurrentMemberAssignment(ShareGroupCurrentMemberAssignmentValue),
    /// Type 15.
    ShareGroupStatePartitionMetadata(ShareGroupStatePartitionMetadataValue<'a>),
    /// Type 17.
    StreamsGroupMetadata(GroupEpochValue),
    /// Type 19.
    StreamsGroupMemberMetadata(StreamsGroupMemberMetadataValue<'a>),
    /// Type 20: `AssignmentEpoch`.
    StreamsGroupTargetAssignmentMetadata {
        /// `AssignmentEpoch`.
        assignment_epoch: i32,
    },
    /// Type 21.
    StreamsGroupTargetAssignmentMember(StreamsTasks<'a>),
    /// Type 22.
    StreamsGroupCurrentMemberAssignment(StreamsGroupCurrentMemberAssignmentValue<'a>),
    /// Type 23.
    StreamsGroupTopology(StreamsGroupTopologyValue<'a>),
    /// A value of a type Kafka 4.1 does not write (types 9, 18, 24), not decoded.
    Other(&'a [u8]),
}

/// A decoded coordinator record: its key, and its value with the value's version (`None`: a
/// tombstone, the key's entity deleted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoordinatorRecord<'a> {
    /// The key.
    pub key: RecordKey<'a>,
    /// `(version, value)`, `None` for a tombstone.
    pub value: Option<(i16, RecordValue<'a>)>,
}

impl<'a> CoordinatorRecord<'a> {
    /// Decodes a record's key and value.
    ///
    /// ```
    /// use kafka_consumer_protocol::offsets_log::{CoordinatorRecord, RecordKey};
    ///
    /// // GroupMetadataKey (type 2) for group "g", and a tombstone: the group was deleted.
    /// let key = [0, 2, 0, 1, b'g'];
    /// let record = CoordinatorRecord::decode(Some(&key), None).unwrap();
    /// assert_eq!(record.key, RecordKey::GroupMetadata { group: "g" });
    /// assert!(record.value.is_none());
    /// ```
    pub fn decode(key: Option<&'a [u8]>, value: Option<&'a [u8]>) -> Result<Self, LogError> {
        let key = RecordKey::decode(key.ok_or_else(|| LogError::new(LogErrorKind::MissingKey, 0, "key"))?)?;
        let value = match value {
            None => None,
            Some(bytes) => Some(decode_value(key.type_id(), bytes)?),
        };
        Ok(CoordinatorRecord { key, value })
    }
}

fn decode_value(type_id: i16, bytes: &[u8]) -> Result<(i16, RecordValue<'_>), LogError> {
    let mut r = Reader { c: Cur { buf: bytes, pos: 0 } };
    let version = r.i16("value.version")?;
    let max = match type_id {
        0..=2 => 4,
        9 | 18 | 24 => i16::MAX,
        _ => 0,
    };
    if version < 0 || version > max {
        return Err(LogError::new(
            LogErrorKind::UnknownValueVersion { record_type: type_id, version },
            0,
            "value.version",
        ));
    }
    let value = match type_id {
        0 | 1 => RecordValue::OffsetCommit(offset_commit(&mut r, version)?),
        2 => RecordValue::GroupMetadata(group_metadata(&mut r, version)?),
        3 => {
            let epoch = r.i32("value.Epoch")?;
            let mut metadata_hash = 0;
            r.tagged("value._tagged_fields", |r, tag| {
                if tag == 0 {
                    metadata_hash = r.i64("value.MetadataHash")?;
                    Ok(true)
                } else {
                    Ok(false)
                }
            })?;
            RecordValue::ConsumerGroupMetadata(ConsumerGroupMetadataValue { epoch, metadata_hash })
        }
        4 => {
            let topics = r.array(true, "value.Topics", |r| {
                let topic_id = r.uuid("value.Topics[].TopicId")?;
                let topic_name = r.cstring("value.Topics[].TopicName")?;
                let num_partitions = r.i32("value.Topics[].NumPartitions")?;
                let partition_metadata = r.array(true, "value.Topics[].PartitionMetadata", |r| {
                    let partition = r.i32("value.Topics[].PartitionMetadata[].Partition")?;
                    let racks = r.array(true, "value.Topics[].PartitionMetadata[].Racks", |r| {
                        r.cstring("value.Topics[].PartitionMetadata[].Racks[]")
                    })?;
                    r.tagged("value.Topics[].PartitionMetadata[]._tagged_fields", |_, _| Ok(false))?;
                    Ok((partition, racks))
                })?;
                r.tagged("value.Topics[]._tagged_fields", |_, _| Ok(false))?;
                Ok(PartitionMetadataTopic { topic_id, topic_name, num_partitions, partition_metadata })
            })?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ConsumerGroupPartitionMetadata(ConsumerGroupPartitionMetadataValue { topics })
        }
        5 => RecordValue::ConsumerGroupMemberMetadata(member_metadata(&mut r)?),
        6 => {
            let assignment_epoch = r.i32("value.AssignmentEpoch")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ConsumerGroupTargetAssignmentMetadata { assignment_epoch }
        }
        7 => {
            let partitions = topic_partitions(&mut r, "value.TopicPartitions")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ConsumerGroupTargetAssignmentMember(partitions)
        }
        8 => {
            let member_epoch = r.i32("value.MemberEpoch")?;
            let previous_member_epoch = r.i32("value.PreviousMemberEpoch")?;
            let state = r.i8("value.State")?;
            let assigned_partitions = topic_partitions(&mut r, "value.AssignedPartitions")?;
            let partitions_pending_revocation = topic_partitions(&mut r, "value.PartitionsPendingRevocation")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ConsumerGroupCurrentMemberAssignment(ConsumerGroupCurrentMemberAssignmentValue {
                member_epoch,
                previous_member_epoch,
                state,
                assigned_partitions,
                partitions_pending_revocation,
            })
        }
        16 => {
            let topics = r.array(true, "value.Topics", |r| r.cstring("value.Topics[]"))?;
            let version = r.i64("value.Version")?;
            let timestamp = r.i64("value.Timestamp")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ConsumerGroupRegularExpression(ConsumerGroupRegularExpressionValue {
                topics,
                version,
                timestamp,
            })
        }
        10 => {
            let rack_id = r.nullable_cstring("value.RackId")?;
            let client_id = r.cstring("value.ClientId")?;
            let client_host = r.cstring("value.ClientHost")?;
            let subscribed_topic_names =
                r.array(true, "value.SubscribedTopicNames", |r| r.cstring("value.SubscribedTopicNames[]"))?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ShareGroupMemberMetadata(ShareGroupMemberMetadataValue {
                rack_id,
                client_id,
                client_host,
                subscribed_topic_names,
            })
        }
        11 => RecordValue::ShareGroupMetadata(group_epoch(&mut r)?),
        12 => {
            let assignment_epoch = r.i32("value.AssignmentEpoch")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ShareGroupTargetAssignmentMetadata { assignment_epoch }
        }
        13 => {
            let partitions = topic_partitions(&mut r, "value.TopicPartitions")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ShareGroupTargetAssignmentMember(partitions)
        }
        14 => {
            let member_epoch = r.i32("value.MemberEpoch")?;
            let previous_member_epoch = r.i32("value.PreviousMemberEpoch")?;
            let state = r.i8("value.State")?;
            let assigned_partitions = topic_partitions(&mut r, "value.AssignedPartitions")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::ShareGroupCurrentMemberAssignment(ShareGroupCurrentMemberAssignmentValue {
                member_epoch,
                previous_member_epoch,
                state,
                assigned_partitions,
            })
        }
        15 => RecordValue::ShareGroupStatePartitionMetadata(state_partition_metadata(&mut r)?),
        17 => RecordValue::StreamsGroupMetadata(group_epoch(&mut r)?),
        19 => RecordValue::StreamsGroupMemberMetadata(streams_member_metadata(&mut r)?),
        20 => {
            let assignment_epoch = r.i32("value.AssignmentEpoch")?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::StreamsGroupTargetAssignmentMetadata { assignment_epoch }
        }
        21 => {
            let tasks = streams_tasks(&mut r, ["value.ActiveTasks", "value.StandbyTasks", "value.WarmupTasks"])?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::StreamsGroupTargetAssignmentMember(tasks)
        }
        22 => {
            let member_epoch = r.i32("value.MemberEpoch")?;
            let previous_member_epoch = r.i32("value.PreviousMemberEpoch")?;
            let state = r.i8("value.State")?;
            let tasks = streams_tasks(&mut r, ["value.ActiveTasks", "value.StandbyTasks", "value.WarmupTasks"])?;
            let tasks_pending_revocation = streams_tasks(
                &mut r,
                [
                    "value.ActiveTasksPendingRevocation",
                    "value.StandbyTasksPendingRevocation",
                    "value.WarmupTasksPendingRevocation",
                ],
            )?;
            r.tagged("value._tagged_fields", |_, _| Ok(false))?;
            RecordValue::StreamsGroupCurrentMemberAssignment(StreamsGroupCurrentMemberAssignmentValue {
                member_epoch,
                previous_member_epoch,
                state,
                tasks,
                tasks_pending_revocation,
            })
        }
        23 => RecordValue::StreamsGroupTopology(streams_topology(&mut r)?),
        _ => RecordValue::Other(&bytes[2..]),
    };
    Ok((version, value))
}

fn offset_commit<'a>(r: &mut Reader<'a>, version: i16) -> Result<OffsetCommitValue<'a>, LogError> {
    let flexible = version >= 4;
    let offset = r.i64("value.offset")?;
    let leader_epoch = if version >= 3 { r.i32("value.leaderEpoch")? } else { -1 };
    let metadata = r.str_any(flexible, "value.metadata")?;
    let commit_timestamp = r.i64("value.commitTimestamp")?;
    let expire_timestamp = if version == 1 { r.i64("value.expireTimestamp")? } else { -1 };
    let mut topic_id = None;
    if flexible {
        r.tagged("value._tagged_fields", |r, tag| {
            if tag == 0 {
                topic_id = Some(r.uuid("value.topicId")?);
                Ok(true)
            } else {
                Ok(false)
            }
        })?;
    }
    Ok(OffsetCommitValue { offset, leader_epoch, metadata, commit_timestamp, expire_timestamp, topic_id })
}

fn group_metadata<'a>(r: &mut Reader<'a>, version: i16) -> Result<GroupMetadataValue<'a>, LogError> {
    let flexible = version >= 4;
    let protocol_type = r.str_any(flexible, "value.protocolType")?;
    let generation = r.i32("value.generation")?;
    let protocol = r.nullable_str_any(flexible, "value.protocol")?;
    let leader = r.nullable_str_any(flexible, "value.leader")?;
    let current_state_timestamp = if version >= 2 { r.i64("value.currentStateTimestamp")? } else { -1 };
    let members = r.array(flexible, "value.members", |r| {
        let member_id = r.str_any(flexible, "value.members[].memberId")?;
        let group_instance_id =
            if version >= 3 { r.nullable_str_any(flexible, "value.members[].groupInstanceId")? } else { None };
        let client_id = r.str_any(flexible, "value.members[].clientId")?;
        let client_host = r.str_any(flexible, "value.members[].clientHost")?;
        let rebalance_timeout = if version >= 1 { r.i32("value.members[].rebalanceTimeout")? } else { -1 };
        let session_timeout = r.i32("value.members[].sessionTimeout")?;
        let subscription = r.bytes_any(flexible, "value.members[].subscription")?;
        let assignment = r.bytes_any(flexible, "value.members[].assignment")?;
        if flexible {
            r.tagged("value.members[]._tagged_fields", |_, _| Ok(false))?;
        }
        Ok(MemberMetadata {
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout,
            session_timeout,
            subscription,
            assignment,
        })
    })?;
    if flexible {
        r.tagged("value._tagged_fields", |_, _| Ok(false))?;
    }
    Ok(GroupMetadataValue { protocol_type, generation, protocol, leader, current_state_timestamp, members })
}

fn member_metadata<'a>(r: &mut Reader<'a>) -> Result<ConsumerGroupMemberMetadataValue<'a>, LogError> {
    let instance_id = r.nullable_cstring("value.InstanceId")?;
    let rack_id = r.nullable_cstring("value.RackId")?;
    let client_id = r.cstring("value.ClientId")?;
    let client_host = r.cstring("value.ClientHost")?;
    let subscribed_topic_names =
        r.array(true, "value.SubscribedTopicNames", |r| r.cstring("value.SubscribedTopicNames[]"))?;
    let subscribed_topic_regex = r.nullable_cstring("value.SubscribedTopicRegex")?;
    let rebalance_timeout_ms = r.i32("value.RebalanceTimeoutMs")?;
    let server_assignor = r.nullable_cstring("value.ServerAssignor")?;
    let mut classic_member_metadata = None;
    r.tagged("value._tagged_fields", |r, tag| {
        if tag != 0 {
            return Ok(false);
        }
        // A tagged nullable struct starts with an unsigned varint: 0 for null, 1 for present
        // (Kafka's generated readers: `readUnsignedVarint() <= 0` means null).
        if r.wrap("value.ClassicMemberMetadata", |c| c.uvarint())? == 0 {
            return Ok(true);
        }
        let session_timeout_ms = r.i32("value.ClassicMemberMetadata.SessionTimeoutMs")?;
        let supported_protocols = r.array(true, "value.ClassicMemberMetadata.SupportedProtocols", |r| {
            let name = r.cstring("value.ClassicMemberMetadata.SupportedProtocols[].Name")?;
            let metadata = r.cbytes("value.ClassicMemberMetadata.SupportedProtocols[].Metadata")?;
            r.tagged("value.ClassicMemberMetadata.SupportedProtocols[]._tagged_fields", |_, _| Ok(false))?;
            Ok((name, metadata))
        })?;
        r.tagged("value.ClassicMemberMetadata._tagged_fields", |_, _| Ok(false))?;
        classic_member_metadata = Some(ClassicMemberMetadata { session_timeout_ms, supported_protocols });
        Ok(true)
    })?;
    Ok(ConsumerGroupMemberMetadataValue {
        instance_id,
        rack_id,
        client_id,
        client_host,
        subscribed_topic_names,
        subscribed_topic_regex,
        rebalance_timeout_ms,
        server_assignor,
        classic_member_metadata,
    })
}

/// `ShareGroupMetadataValue` and `StreamsGroupMetadataValue` (the same fields).
fn group_epoch(r: &mut Reader<'_>) -> Result<GroupEpochValue, LogError> {
    let epoch = r.i32("value.Epoch")?;
    let metadata_hash = r.i64("value.MetadataHash")?;
    r.tagged("value._tagged_fields", |_, _| Ok(false))?;
    Ok(GroupEpochValue { epoch, metadata_hash })
}

fn state_partition_metadata<'a>(r: &mut Reader<'a>) -> Result<ShareGroupStatePartitionMetadataValue<'a>, LogError> {
    fn with_partitions<'a>(r: &mut Reader<'a>, field: &'static str) -> Result<Vec<TopicPartitionsInfo<'a>>, LogError> {
        r.array(true, field, |r| {
            let topic_id = r.uuid(field)?;
            let topic_name = r.cstring(field)?;
            let partitions = r.array(true, field, |r| r.i32(field))?;
            r.tagged(field, |_, _| Ok(false))?;
            Ok(TopicPartitionsInfo { topic_id, topic_name, partitions })
        })
    }
    let initializing_topics = with_partitions(r, "value.InitializingTopics")?;
    let initialized_topics = with_partitions(r, "value.InitializedTopics")?;
    let deleting_topics = r.array(true, "value.DeletingTopics", |r| {
        let topic_id = r.uuid("value.DeletingTopics[].TopicId")?;
        let topic_name = r.cstring("value.DeletingTopics[].TopicName")?;
        r.tagged("value.DeletingTopics[]._tagged_fields", |_, _| Ok(false))?;
        Ok(TopicInfo { topic_id, topic_name })
    })?;
    r.tagged("value._tagged_fields", |_, _| Ok(false))?;
    Ok(ShareGroupStatePartitionMetadataValue { initializing_topics, initialized_topics, deleting_topics })
}

fn streams_member_metadata<'a>(r: &mut Reader<'a>) -> Result<StreamsGroupMemberMetadataValue<'a>, LogError> {
    let instance_id = r.nullable_cstring("value.InstanceId")?;
    let rack_id = r.nullable_cstring("value.RackId")?;
    let client_id = r.cstring("value.ClientId")?;
    let client_host = r.cstring("value.ClientHost")?;
    let rebalance_timeout_ms = r.i32("value.RebalanceTimeoutMs")?;
    let topology_epoch = r.i32("value.TopologyEpoch")?;
    let process_id = r.cstring("value.ProcessId")?;
    // A nullable struct that is not tagged starts with a byte: negative for null (Kafka's
    // generated reader: `readByte() < 0`).
    let user_endpoint = if r.i8("value.UserEndpoint")? < 0 {
        None
    } else {
        let host = r.cstring("value.UserEndpoint.Host")?;
        let port = r.i16("value.UserEndpoint.Port")? as u16;
        r.tagged("value.UserEndpoint._tagged_fields", |_, _| Ok(false))?;
        Some(StreamsEndpoint { host, port })
    };
    let client_tags = r.array(true, "value.ClientTags", |r| {
        let key = r.cstring("value.ClientTags[].Key")?;
        let value = r.cstring("value.ClientTags[].Value")?;
        r.tagged("value.ClientTags[]._tagged_fields", |_, _| Ok(false))?;
        Ok((key, value))
    })?;
    r.tagged("value._tagged_fields", |_, _| Ok(false))?;
    Ok(StreamsGroupMemberMetadataValue {
        instance_id,
        rack_id,
        client_id,
        client_host,
        rebalance_timeout_ms,
        topology_epoch,
        process_id,
        user_endpoint,
        client_tags,
    })
}

/// Three `[]TaskIds` in a row: active, standby, warm-up.
fn streams_tasks<'a>(r: &mut Reader<'a>, fields: [&'static str; 3]) -> Result<StreamsTasks<'a>, LogError> {
    let [active, standby, warmup] = fields;
    let mut list = |field: &'static str| {
        r.array(true, field, |r| {
            let subtopology_id = r.cstring(field)?;
            let partitions = r.array(true, field, |r| r.i32(field))?;
            r.tagged(field, |_, _| Ok(false))?;
            Ok(TaskIds { subtopology_id, partitions })
        })
    };
    let active_tasks = list(active)?;
    let standby_tasks = list(standby)?;
    let warmup_tasks = list(warmup)?;
    Ok(StreamsTasks { active_tasks, standby_tasks, warmup_tasks })
}

fn streams_topology<'a>(r: &mut Reader<'a>) -> Result<StreamsGroupTopologyValue<'a>, LogError> {
    fn names<'a>(r: &mut Reader<'a>, field: &'static str) -> Result<Vec<&'a str>, LogError> {
        r.array(true, field, |r| r.cstring(field))
    }
    fn topics<'a>(r: &mut Reader<'a>, field: &'static str) -> Result<Vec<StreamsTopicInfo<'a>>, LogError> {
        r.array(true, field, |r| {
            let name = r.cstring(field)?;
            let partitions = r.i32(field)?;
            let replication_factor = r.i16(field)?;
            let topic_configs = r.array(true, field, |r| {
                let key = r.cstring(field)?;
                let value = r.cstring(field)?;
                r.tagged(field, |_, _| Ok(false))?;
                Ok((key, value))
            })?;
            r.tagged(field, |_, _| Ok(false))?;
            Ok(StreamsTopicInfo { name, partitions, replication_factor, topic_configs })
        })
    }
    fn indexes(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<i16>, LogError> {
        r.array(true, field, |r| r.i16(field))
    }
    let epoch = r.i32("value.Epoch")?;
    let subtopologies = r.array(true, "value.Subtopologies", |r| {
        let subtopology_id = r.cstring("value.Subtopologies[].SubtopologyId")?;
        let source_topics = names(r, "value.Subtopologies[].SourceTopics")?;
        let source_topic_regex = names(r, "value.Subtopologies[].SourceTopicRegex")?;
        let state_changelog_topics = topics(r, "value.Subtopologies[].StateChangelogTopics")?;
        let repartition_sink_topics = names(r, "value.Subtopologies[].RepartitionSinkTopics")?;
        let repartition_source_topics = topics(r, "value.Subtopologies[].RepartitionSourceTopics")?;
        let copartition_groups = r.array(true, "value.Subtopologies[].CopartitionGroups", |r| {
            let source_topics = indexes(r, "value.Subtopologies[].CopartitionGroups[].SourceTopics")?;
            let source_topic_regex = indexes(r, "value.Subtopologies[].CopartitionGroups[].SourceTopicRegex")?;
            let repartition_source_topics =
                indexes(r, "value.Subtopologies[].CopartitionGroups[].RepartitionSourceTopics")?;
            r.tagged("value.Subtopologies[].CopartitionGroups[]._tagged_fields", |_, _| Ok(false))?;
            Ok(CopartitionGroup { source_topics, source_topic_regex, repartition_source_topics })
        })?;
        r.tagged("value.Subtopologies[]._tagged_fields", |_, _| Ok(false))?;
        Ok(Subtopology {
            subtopology_id,
            source_topics,
            source_topic_regex,
            state_changelog_topics,
            repartition_sink_topics,
            repartition_source_topics,
            copartition_groups,
        })
    })?;
    r.tagged("value._tagged_fields", |_, _| Ok(false))?;
    Ok(StreamsGroupTopologyValue { epoch, subtopologies })
}

fn topic_partitions(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<TopicIdPartitions>, LogError> {
    r.array(true, field, |r| {
        let topic_id = r.uuid(field)?;
        let partitions = r.array(true, field, |r| r.i32(field))?;
        r.tagged(field, |_, _| Ok(false))?;
        Ok(TopicIdPartitions { topic_id, partitions })
    })
}

/// Schema-level reads over a key's or a value's bytes, errors naming the field.
struct Reader<'a> {
    c: Cur<'a>,
}

impl<'a> Reader<'a> {
    fn err(&self, kind: LogErrorKind, field: &'static str) -> LogError {
        LogError::new(kind, self.c.pos as u64, field)
    }

    fn wrap<T>(
        &mut self,
        field: &'static str,
        f: impl FnOnce(&mut Cur<'a>) -> Result<T, LogErrorKind>,
    ) -> Result<T, LogError> {
        let at = self.c.pos as u64;
        f(&mut self.c).map_err(|k| LogError::new(k, at, field))
    }

    fn i8(&mut self, field: &'static str) -> Result<i8, LogError> {
        self.wrap(field, |c| c.i8())
    }
    fn i16(&mut self, field: &'static str) -> Result<i16, LogError> {
        self.wrap(field, |c| c.i16())
    }
    fn i32(&mut self, field: &'static str) -> Result<i32, LogError> {
        self.wrap(field, |c| c.i32())
    }
    fn i64(&mut self, field: &'static str) -> Result<i64, LogError> {
        self.wrap(field, |c| c.i64())
    }
    fn uuid(&mut self, field: &'static str) -> Result<Uuid, LogError> {
        self.wrap(field, |c| c.uuid()).map(Uuid)
    }

    fn utf8(&self, bytes: &'a [u8], at: u64, field: &'static str) -> Result<&'a str, LogError> {
        core::str::from_utf8(bytes).map_err(|_| LogError::new(LogErrorKind::InvalidUtf8, at, field))
    }

    /// A length: int16 (`Some(-1)` null) for classic strings, read by the caller.
    fn raw_nullable(&mut self, flexible: bool, wide: bool, field: &'static str) -> Result<Option<&'a [u8]>, LogError> {
        let at = self.c.pos as u64;
        let len: i64 = if flexible {
            i64::from(self.wrap(field, |c| c.uvarint())?) - 1
        } else if wide {
            i64::from(self.i32(field)?)
        } else {
            i64::from(self.i16(field)?)
        };
        match len {
            -1 => Ok(None),
            n if n < 0 => Err(LogError::new(LogErrorKind::InvalidLength(n), at, field)),
            n => self.wrap(field, |c| c.take(n as usize)).map(Some),
        }
    }

    fn nullable_str_any(&mut self, flexible: bool, field: &'static str) -> Result<Option<&'a str>, LogError> {
        let at = self.c.pos as u64;
        match self.raw_nullable(flexible, false, field)? {
            None => Ok(None),
            Some(b) => self.utf8(b, at, field).map(Some),
        }
    }

    fn str_any(&mut self, flexible: bool, field: &'static str) -> Result<&'a str, LogError> {
        let at = self.c.pos as u64;
        self.nullable_str_any(flexible, field)?.ok_or_else(|| LogError::new(LogErrorKind::InvalidLength(-1), at, field))
    }

    fn string(&mut self, field: &'static str) -> Result<&'a str, LogError> {
        self.str_any(false, field)
    }
    fn cstring(&mut self, field: &'static str) -> Result<&'a str, LogError> {
        self.str_any(true, field)
    }
    fn nullable_cstring(&mut self, field: &'static str) -> Result<Option<&'a str>, LogError> {
        self.nullable_str_any(true, field)
    }

    fn bytes_any(&mut self, flexible: bool, field: &'static str) -> Result<&'a [u8], LogError> {
        let at = self.c.pos as u64;
        self.raw_nullable(flexible, true, field)?
            .ok_or_else(|| LogError::new(LogErrorKind::InvalidLength(-1), at, field))
    }
    fn cbytes(&mut self, field: &'static str) -> Result<&'a [u8], LogError> {
        self.bytes_any(true, field)
    }

    /// An array; the count is checked against the bytes left (every element takes at least one
    /// byte), and the vector grows with what is read, never by the count.
    fn array<T>(
        &mut self,
        flexible: bool,
        field: &'static str,
        mut element: impl FnMut(&mut Self) -> Result<T, LogError>,
    ) -> Result<Vec<T>, LogError> {
        let at = self.c.pos as u64;
        let count: i64 =
            if flexible { i64::from(self.wrap(field, |c| c.uvarint())?) - 1 } else { i64::from(self.i32(field)?) };
        if count < 0 || count as usize > self.c.remaining() {
            return Err(LogError::new(LogErrorKind::InvalidLength(count), at, field));
        }
        let mut out = Vec::new();
        for _ in 0..count {
            out.push(element(self)?);
        }
        Ok(out)
    }

    /// Tagged fields: `known(reader, tag)` reads a tag it knows and returns true; unknown ones
    /// are skipped by their size.
    fn tagged(
        &mut self,
        field: &'static str,
        mut known: impl FnMut(&mut Self, u32) -> Result<bool, LogError>,
    ) -> Result<(), LogError> {
        let count = self.wrap(field, |c| c.uvarint())?;
        for _ in 0..count {
            let tag = self.wrap(field, |c| c.uvarint())?;
            let size = self.wrap(field, |c| c.uvarint())? as usize;
            let at = self.c.pos;
            if size > self.c.remaining() {
                return Err(self.err(LogErrorKind::Truncated, field));
            }
            // Read a known tag within its size; skip anything it did not consume.
            let saved = self.c.buf;
            self.c.buf = &saved[..at + size];
            let read = known(self, tag);
            self.c.buf = saved;
            read?;
            self.c.pos = at + size;
        }
        Ok(())
    }
}
