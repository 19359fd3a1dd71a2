//! One model of the classic group APIs' messages: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
//! OffsetCommit, OffsetFetch and DescribeGroups requests and responses, as plain values with a typed [`ErrorCode`]. No
//! Kafka framing and no sockets: byte fields carry the embedded consumer-protocol payloads
//! (a [`Subscription`](crate::Subscription) in JoinGroup, an [`Assignment`](crate::Assignment)
//! in SyncGroup) still encoded.
//!
//! The [`coordinator`](crate::coordinator) speaks these values, the `pcap` decoder yields them
//! (with decoded payloads), and the network client puts them on the wire through [`kafka`]
//! (feature `kafka-messages`), which converts them to and from the `kafka-protocol` crate's
//! messages at a given API version. Fields are the union over versions; the field docs say which versions
//! carry a field, and a conversion drops (or, for static membership, refuses) what the chosen
//! version lacks, as Apache Kafka's Java client does.
//!
//! The JoinGroup and SyncGroup messages take the type of their embedded payloads as a parameter,
//! `P`, which is [`Bytes`] unless said otherwise: the coordinator and the network client carry
//! the encoded bytes, and the `pcap` decoder carries them decoded (`pcap::Payload`), with
//! [`JoinGroupRequest::map_payloads`] and its siblings turning one into the other. One set of
//! field names and types serves both.
//!
//! [`ErrorCode`] is a newtype over the wire's `int16` (unknown codes survive a round
//! trip), with Java's names and its fatal/retriable classification in one place.

use bytes::Bytes;

#[cfg(feature = "kafka-messages")]
#[cfg_attr(docsrs, doc(cfg(feature = "kafka-messages")))]
pub mod kafka;

/// A Kafka error code (`Errors.java`), carried as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i16);

impl ErrorCode {
    /// No error.
    pub const NONE: ErrorCode = ErrorCode(0);
    /// An unexpected server error.
    pub const UNKNOWN_SERVER_ERROR: ErrorCode = ErrorCode(-1);
    /// The topic or partition does not exist (on this broker, yet).
    pub const UNKNOWN_TOPIC_OR_PARTITION: ErrorCode = ErrorCode(3);
    /// The request timed out (also used for a response that never arrived).
    pub const REQUEST_TIMED_OUT: ErrorCode = ErrorCode(7);
    /// The commit's metadata string is longer than the broker allows.
    pub const OFFSET_METADATA_TOO_LARGE: ErrorCode = ErrorCode(12);
    /// The coordinator is loading.
    pub const COORDINATOR_LOAD_IN_PROGRESS: ErrorCode = ErrorCode(14);
    /// The coordinator is not available.
    pub const COORDINATOR_NOT_AVAILABLE: ErrorCode = ErrorCode(15);
    /// This broker is not the group's coordinator.
    pub const NOT_COORDINATOR: ErrorCode = ErrorCode(16);
    /// The generation id is not the group's current one.
    pub const ILLEGAL_GENERATION: ErrorCode = ErrorCode(22);
    /// No protocol common to the group (or a protocol type mismatch).
    pub const INCONSISTENT_GROUP_PROTOCOL: ErrorCode = ErrorCode(23);
    /// Invalid group id.
    pub const INVALID_GROUP_ID: ErrorCode = ErrorCode(24);
    /// The member id is not in the group.
    pub const UNKNOWN_MEMBER_ID: ErrorCode = ErrorCode(25);
    /// The session timeout is outside the broker's bounds.
    pub const INVALID_SESSION_TIMEOUT: ErrorCode = ErrorCode(26);
    /// The group is rebalancing.
    pub const REBALANCE_IN_PROGRESS: ErrorCode = ErrorCode(27);
    /// The commit request is larger than the broker allows.
    pub const INVALID_COMMIT_OFFSET_SIZE: ErrorCode = ErrorCode(28);
    /// Not authorized for the topic.
    pub const TOPIC_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(29);
    /// Not authorized for the group.
    pub const GROUP_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(30);
    /// The broker assigned a member id; join again with it (JoinGroup v4+).
    pub const MEMBER_ID_REQUIRED: ErrorCode = ErrorCode(79);
    /// The group is full.
    pub const GROUP_MAX_SIZE_REACHED: ErrorCode = ErrorCode(81);
    /// Another member with the same `group.instance.id` replaced this one.
    pub const FENCED_INSTANCE_ID: ErrorCode = ErrorCode(82);
    /// A transactional commit to the partition is pending (OffsetFetch with `require_stable`).
    pub const UNSTABLE_OFFSET_COMMIT: ErrorCode = ErrorCode(88);

    /// Java's constant name for the known codes, `"UNKNOWN"` otherwise.
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "NONE",
            -1 => "UNKNOWN_SERVER_ERROR",
            3 => "UNKNOWN_TOPIC_OR_PARTITION",
            12 => "OFFSET_METADATA_TOO_LARGE",
            7 => "REQUEST_TIMED_OUT",
            14 => "COORDINATOR_LOAD_IN_PROGRESS",
            15 => "COORDINATOR_NOT_AVAILABLE",
            16 => "NOT_COORDINATOR",
            22 => "ILLEGAL_GENERATION",
            23 => "INCONSISTENT_GROUP_PROTOCOL",
            24 => "INVALID_GROUP_ID",
            25 => "UNKNOWN_MEMBER_ID",
            26 => "INVALID_SESSION_TIMEOUT",
            27 => "REBALANCE_IN_PROGRESS",
            28 => "INVALID_COMMIT_OFFSET_SIZE",
            29 => "TOPIC_AUTHORIZATION_FAILED",
            30 => "GROUP_AUTHORIZATION_FAILED",
            79 => "MEMBER_ID_REQUIRED",
            81 => "GROUP_MAX_SIZE_REACHED",
            82 => "FENCED_INSTANCE_ID",
            88 => "UNSTABLE_OFFSET_COMMIT",
            _ => "UNKNOWN",
        }
    }

    /// Errors after which the member gives up (Java throws them to the application).
    pub fn is_fatal(self) -> bool {
        matches!(self.0, 23 | 24 | 26 | 30 | 81 | 82)
    }

    /// Errors that mean "find the coordinator again and retry after a backoff".
    pub fn is_coordinator_error(self) -> bool {
        matches!(self.0, 7 | 14 | 15 | 16)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

/// One protocol (assignor) a member offers in JoinGroup, with its subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinGroupProtocol<P = Bytes> {
    /// Assignor name.
    pub name: String,
    /// The `ConsumerProtocolSubscription` (for protocol type `consumer`).
    pub metadata: P,
}

/// JoinGroup request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinGroupRequest<P = Bytes> {
    /// Group id.
    pub group_id: String,
    /// Session timeout (ms).
    pub session_timeout_ms: i32,
    /// Rebalance timeout (ms).
    pub rebalance_timeout_ms: i32,
    /// Member id; empty on the first join.
    pub member_id: String,
    /// Static membership id.
    pub group_instance_id: Option<String>,
    /// `"consumer"` for consumer groups (the coordinator always sends that).
    pub protocol_type: String,
    /// Protocols in preference order.
    pub protocols: Vec<JoinGroupProtocol<P>>,
    /// Why the member joins (JoinGroup v8+; `None` on the wire before).
    pub reason: Option<String>,
}

impl<P> JoinGroupRequest<P> {
    /// The same request with each protocol's metadata replaced by `f(metadata)`, in order.
    pub fn map_payloads<Q>(self, mut f: impl FnMut(P) -> Q) -> JoinGroupRequest<Q> {
        JoinGroupRequest {
            group_id: self.group_id,
            session_timeout_ms: self.session_timeout_ms,
            rebalance_timeout_ms: self.rebalance_timeout_ms,
            member_id: self.member_id,
            group_instance_id: self.group_instance_id,
            protocol_type: self.protocol_type,
            protocols: self
                .protocols
                .into_iter()
                .map(|p| JoinGroupProtocol { name: p.name, metadata: f(p.metadata) })
                .collect(),
            reason: self.reason,
        }
    }
}

/// One member in the leader's JoinGroup response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinGroupMember<P = Bytes> {
    /// Member id.
    pub member_id: String,
    /// Static membership id.
    pub group_instance_id: Option<String>,
    /// Its subscription for the selected protocol.
    pub metadata: P,
}

/// JoinGroup response.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct JoinGroupResponse<P = Bytes> {
    /// Error code.
    pub error: ErrorCode,
    /// The new generation.
    pub generation_id: i32,
    /// Protocol type (`"consumer"`), when given.
    pub protocol_type: Option<String>,
    /// The selected protocol (assignor name).
    pub protocol_name: Option<String>,
    /// The leader's member id.
    pub leader: String,
    /// Static leader rejoin: keep the current assignment (JoinGroup v9+).
    pub skip_assignment: bool,
    /// This member's id (also set with `MEMBER_ID_REQUIRED`).
    pub member_id: String,
    /// Every member, for the leader only.
    pub members: Vec<JoinGroupMember<P>>,
}

impl<P> JoinGroupResponse<P> {
    /// The same response with each member's metadata replaced by `f(metadata)`, in order.
    pub fn map_payloads<Q>(self, mut f: impl FnMut(P) -> Q) -> JoinGroupResponse<Q> {
        JoinGroupResponse {
            error: self.error,
            generation_id: self.generation_id,
            protocol_type: self.protocol_type,
            protocol_name: self.protocol_name,
            leader: self.leader,
            skip_assignment: self.skip_assignment,
            member_id: self.member_id,
            members: self
                .members
                .into_iter()
                .map(|m| JoinGroupMember {
                    member_id: m.member_id,
                    group_instance_id: m.group_instance_id,
                    metadata: f(m.metadata),
                })
                .collect(),
        }
    }
}

impl Default for ErrorCode {
    fn default() -> Self {
        ErrorCode::NONE
    }
}

/// One member's assignment in the leader's SyncGroup request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncGroupAssignment<P = Bytes> {
    /// Member id.
    pub member_id: String,
    /// The `ConsumerProtocolAssignment` (for protocol type `consumer`).
    pub assignment: P,
}

/// SyncGroup request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncGroupRequest<P = Bytes> {
    /// Group id.
    pub group_id: String,
    /// Generation.
    pub generation_id: i32,
    /// Member id.
    pub member_id: String,
    /// Static membership id.
    pub group_instance_id: Option<String>,
    /// `"consumer"` (SyncGroup v5+; `None` on the wire before).
    pub protocol_type: Option<String>,
    /// The generation's protocol name (SyncGroup v5+; `None` on the wire before).
    pub protocol_name: Option<String>,
    /// Assignments (leader only; empty for followers).
    pub assignments: Vec<SyncGroupAssignment<P>>,
}

impl<P> SyncGroupRequest<P> {
    /// The same request with each assignment replaced by `f(assignment)`, in order.
    pub fn map_payloads<Q>(self, mut f: impl FnMut(P) -> Q) -> SyncGroupRequest<Q> {
        SyncGroupRequest {
            group_id: self.group_id,
            generation_id: self.generation_id,
            member_id: self.member_id,
            group_instance_id: self.group_instance_id,
            protocol_type: self.protocol_type,
            protocol_name: self.protocol_name,
            assignments: self
                .assignments
                .into_iter()
                .map(|a| SyncGroupAssignment { member_id: a.member_id, assignment: f(a.assignment) })
                .collect(),
        }
    }
}

/// SyncGroup response.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SyncGroupResponse<P = Bytes> {
    /// Error code.
    pub error: ErrorCode,
    /// Protocol type, when given.
    pub protocol_type: Option<String>,
    /// Protocol name, when given.
    pub protocol_name: Option<String>,
    /// This member's assignment.
    pub assignment: P,
}

impl<P> SyncGroupResponse<P> {
    /// The same response with the assignment replaced by `f(assignment)`.
    pub fn map_payloads<Q>(self, f: impl FnOnce(P) -> Q) -> SyncGroupResponse<Q> {
        SyncGroupResponse {
            error: self.error,
            protocol_type: self.protocol_type,
            protocol_name: self.protocol_name,
            assignment: f(self.assignment),
        }
    }
}

/// Heartbeat request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeartbeatRequest {
    /// Group id.
    pub group_id: String,
    /// Generation.
    pub generation_id: i32,
    /// Member id.
    pub member_id: String,
    /// Static membership id.
    pub group_instance_id: Option<String>,
}

/// Heartbeat response.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HeartbeatResponse {
    /// Error code.
    pub error: ErrorCode,
}

/// LeaveGroup request (one member).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaveGroupRequest {
    /// Group id.
    pub group_id: String,
    /// Member id.
    pub member_id: String,
    /// Static membership id.
    pub group_instance_id: Option<String>,
    /// Why it leaves (LeaveGroup v5+; `None` on the wire before).
    pub reason: Option<String>,
}

/// LeaveGroup response.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LeaveGroupResponse {
    /// Error code.
    pub error: ErrorCode,
}

/// DescribeGroups request.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DescribeGroupsRequest {
    /// The groups to describe.
    pub groups: Vec<String>,
    /// Whether to return each group's authorized operations (DescribeGroups v3+).
    pub include_authorized_operations: bool,
}

/// One member of a described group.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DescribedGroupMember {
    /// Member id.
    pub member_id: String,
    /// Static membership id (DescribeGroups v4+).
    pub group_instance_id: Option<String>,
    /// The member's client id.
    pub client_id: String,
    /// The member's client host.
    pub client_host: String,
    /// Its protocol metadata (for a consumer group, the encoded Subscription of the selected protocol).
    pub member_metadata: Bytes,
    /// Its encoded Assignment (for a consumer group, once the group is stable).
    pub member_assignment: Bytes,
}

/// One group in a DescribeGroups response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescribedGroup {
    /// Error code for this group.
    pub error: ErrorCode,
    /// Error message (DescribeGroups v6+).
    pub error_message: Option<String>,
    /// Group id.
    pub group_id: String,
    /// The group's state (`"Stable"`, `"PreparingRebalance"`, `"CompletingRebalance"`, `"Empty"`,
    /// `"Dead"`), as the broker names it.
    pub group_state: String,
    /// Protocol type (`"consumer"` for consumer groups; empty for a group without members).
    pub protocol_type: String,
    /// The selected protocol (for a consumer group, the assignor name).
    pub protocol_data: String,
    /// The members.
    pub members: Vec<DescribedGroupMember>,
    /// The authorized-operations bit field (DescribeGroups v3+; `i32::MIN` when not requested).
    pub authorized_operations: i32,
}

impl Default for DescribedGroup {
    /// An empty group, with `authorized_operations` not requested (`i32::MIN`, as on the wire).
    fn default() -> Self {
        DescribedGroup {
            error: ErrorCode::NONE,
            error_message: None,
            group_id: String::new(),
            group_state: String::new(),
            protocol_type: String::new(),
            protocol_data: String::new(),
            members: Vec::new(),
            authorized_operations: i32::MIN,
        }
    }
}

/// DescribeGroups response.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DescribeGroupsResponse {
    /// Throttle time (ms; DescribeGroups v1+).
    pub throttle_time_ms: i32,
    /// One entry per requested group.
    pub groups: Vec<DescribedGroup>,
}

/// One partition's offset in an [`OffsetCommitRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetCommitPartition {
    /// Partition index.
    pub partition: i32,
    /// The offset to commit: the next record the group should read.
    pub offset: i64,
    /// The leader epoch of the last record consumed (OffsetCommit v6+; `-1` when unknown).
    pub leader_epoch: i32,
    /// Metadata kept with the offset (`None` is stored as empty by the broker).
    pub metadata: Option<String>,
}

/// One topic of an [`OffsetCommitRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetCommitTopic {
    /// Topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<OffsetCommitPartition>,
}

/// OffsetCommit request of a member of a classic group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetCommitRequest {
    /// Group id.
    pub group_id: String,
    /// The member's generation (OffsetCommit v1+; `-1` for a commit from outside the group).
    pub generation_id: i32,
    /// The member id (OffsetCommit v1+; empty for a commit from outside the group).
    pub member_id: String,
    /// Static membership id (OffsetCommit v7+; refused before).
    pub group_instance_id: Option<String>,
    /// The offsets, by topic.
    pub topics: Vec<OffsetCommitTopic>,
}

/// One partition's result in an [`OffsetCommitResponse`].
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OffsetCommitPartitionResult {
    /// Partition index.
    pub partition: i32,
    /// Error code.
    pub error: ErrorCode,
}

/// One topic of an [`OffsetCommitResponse`].
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OffsetCommitTopicResult {
    /// Topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<OffsetCommitPartitionResult>,
}

/// OffsetCommit response (errors are per partition).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OffsetCommitResponse {
    /// Throttle time (ms; OffsetCommit v3+).
    pub throttle_time_ms: i32,
    /// The results, by topic.
    pub topics: Vec<OffsetCommitTopicResult>,
}

impl OffsetCommitResponse {
    /// Every partition's error in response order, as `(topic, partition, error)`.
    pub fn errors(&self) -> impl Iterator<Item = (&str, i32, ErrorCode)> + '_ {
        self.topics.iter().flat_map(|t| t.partitions.iter().map(move |p| (t.name.as_str(), p.partition, p.error)))
    }
}

/// One topic of an [`OffsetFetchRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetFetchTopic {
    /// Topic name.
    pub name: String,
    /// The partitions.
    pub partitions: Vec<i32>,
}

/// OffsetFetch request for one group.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OffsetFetchRequest {
    /// Group id.
    pub group_id: String,
    /// The partitions, by topic; `None` for every partition the group committed (v2+).
    pub topics: Option<Vec<OffsetFetchTopic>>,
    /// Wait for pending transactional commits: the broker answers `UNSTABLE_OFFSET_COMMIT` for such
    /// a partition (OffsetFetch v7+; dropped before, as Java's read-uncommitted consumer does).
    pub require_stable: bool,
}

/// One partition's committed offset in an [`OffsetFetchResponse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetFetchPartition {
    /// Partition index.
    pub partition: i32,
    /// The committed offset; `-1` when the group committed none.
    pub committed_offset: i64,
    /// The committed leader epoch (OffsetFetch v5+; `-1` when unknown).
    pub leader_epoch: i32,
    /// The commit's metadata.
    pub metadata: Option<String>,
    /// Error code.
    pub error: ErrorCode,
}

/// One topic of an [`OffsetFetchResponse`].
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OffsetFetchTopicResult {
    /// Topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<OffsetFetchPartition>,
}

/// OffsetFetch response for one group.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OffsetFetchResponse {
    /// Throttle time (ms; OffsetFetch v3+).
    pub throttle_time_ms: i32,
    /// The group-level error (OffsetFetch v2+).
    pub error: ErrorCode,
    /// The committed offsets, by topic.
    pub topics: Vec<OffsetFetchTopicResult>,
}
