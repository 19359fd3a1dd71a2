//! The [`group_api`](super) values converted to and from the `kafka-protocol` crate's messages
//! (feature `kafka-messages`): the one place that knows how each field sits in each version of
//! JoinGroup (v0-v9), SyncGroup (v0-v5), Heartbeat (v0-v4), LeaveGroup (v0-v5), OffsetCommit
//! (v2-v9, the versions `kafka-protocol` and Kafka 4 still have), OffsetFetch (v1-v9, one group)
//! and DescribeGroups (v0-v6).
//!
//! Naming: `join_group_request(&value, version)` turns this crate's value into
//! `kafka_protocol`'s message for that API version (ready for its `Encodable::encode` at the same
//! version); `from_join_group_request(message)` turns a decoded message back into the value. Every
//! request and response has both.
//!
//! Towards the wire, a field the version does not carry is dropped, as Apache Kafka's Java client
//! does (a JoinGroup reason before v8, the protocol name and type before SyncGroup v5, a
//! response's throttle time before its version has one), except where dropping it would change
//! what the broker does: a static member (`group_instance_id`) before JoinGroup v5, SyncGroup,
//! Heartbeat or LeaveGroup v3 or OffsetCommit v7, a fetch of every committed partition
//! (`topics: None`) before OffsetFetch v2, and `include_authorized_operations` before DescribeGroups v3, are
//! a [`ConversionError::FieldNeedsVersion`], like Java's `UnsupportedVersionException`. A
//! version outside the API's range is a [`ConversionError::UnsupportedVersion`].
//!
//! ```
//! use bytes::{Bytes, BytesMut};
//! use kafka_consumer_protocol::group_api::{kafka, HeartbeatRequest};
//! use kafka_protocol::protocol::{Decodable, Encodable};
//!
//! let heartbeat = HeartbeatRequest {
//!     group_id: "orders".into(),
//!     generation_id: 3,
//!     member_id: "m-1".into(),
//!     group_instance_id: None,
//! };
//! let message = kafka::heartbeat_request(&heartbeat, 4)?;
//! let mut body = BytesMut::new();
//! message.encode(&mut body, 4)?;
//! // ... and back, as a broker or a capture reader would see it.
//! let decoded = kafka_protocol::messages::HeartbeatRequest::decode(&mut Bytes::from(body), 4)?;
//! assert_eq!(kafka::from_heartbeat_request(decoded), heartbeat);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use kafka_protocol::messages as km;
use kafka_protocol::messages::describe_groups_response::{
    DescribedGroup as KDescribedGroup, DescribedGroupMember as KMember,
};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
use kafka_protocol::messages::offset_commit_response::{OffsetCommitResponsePartition, OffsetCommitResponseTopic};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions, OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::protocol::{Message, StrBytes};

use super::{
    DescribeGroupsRequest, DescribeGroupsResponse, DescribedGroup, DescribedGroupMember, ErrorCode, HeartbeatRequest,
    HeartbeatResponse, JoinGroupMember, JoinGroupProtocol, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    LeaveGroupResponse, SyncGroupAssignment, SyncGroupRequest, SyncGroupResponse,
};
use super::{
    OffsetCommitPartition, OffsetCommitPartitionResult, OffsetCommitRequest, OffsetCommitResponse, OffsetCommitTopic,
    OffsetCommitTopicResult, OffsetFetchPartition, OffsetFetchRequest, OffsetFetchResponse, OffsetFetchTopic,
    OffsetFetchTopicResult,
};

/// Why a value cannot be put into a `kafka-protocol` message at the asked version.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConversionError {
    /// The API has no such version.
    UnsupportedVersion {
        /// The API (`"JoinGroup"`, ...).
        api: &'static str,
        /// The version asked for.
        version: i16,
        /// The newest version of the API.
        max: i16,
    },
    /// The value sets a field that only a newer version of the API can carry, and dropping it
    /// would change what the broker does.
    FieldNeedsVersion {
        /// The API.
        api: &'static str,
        /// The field (`"group_instance_id"`, ...).
        field: &'static str,
        /// The version asked for.
        version: i16,
        /// The first version that carries the field.
        since: i16,
    },
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConversionError::UnsupportedVersion { api, version, max } => {
                write!(f, "{api} v{version} is not a version of the API (0..={max})")
            }
            ConversionError::FieldNeedsVersion { api, field, version, since } => {
                write!(f, "{api} v{version} cannot carry {field} (needs v{since}+)")
            }
        }
    }
}

impl std::error::Error for ConversionError {}

fn check_version<M: Message>(api: &'static str, version: i16) -> Result<(), ConversionError> {
    if version < M::VERSIONS.min || version > M::VERSIONS.max {
        return Err(ConversionError::UnsupportedVersion { api, version, max: M::VERSIONS.max });
    }
    Ok(())
}

fn needs(api: &'static str, field: &'static str, set: bool, version: i16, since: i16) -> Result<(), ConversionError> {
    if set && version < since {
        return Err(ConversionError::FieldNeedsVersion { api, field, version, since });
    }
    Ok(())
}

fn s(value: &str) -> StrBytes {
    StrBytes::from_string(value.to_owned())
}

fn opt_s(value: &Option<String>) -> Option<StrBytes> {
    value.as_deref().map(s)
}

/// `value` when `version` carries it, else `None` (the field is dropped).
fn since<T>(version: i16, first: i16, value: Option<T>) -> Option<T> {
    if version >= first {
        value
    } else {
        None
    }
}

fn string(value: StrBytes) -> String {
    value.as_str().to_owned()
}

fn opt_string(value: Option<StrBytes>) -> Option<String> {
    value.map(string)
}

/// JoinGroup request to `kafka-protocol`'s message at `version` (0..=9).
pub fn join_group_request(value: &JoinGroupRequest, version: i16) -> Result<km::JoinGroupRequest, ConversionError> {
    const API: &str = "JoinGroup";
    check_version::<km::JoinGroupRequest>(API, version)?;
    needs(API, "group_instance_id", value.group_instance_id.is_some(), version, 5)?;
    let mut m = km::JoinGroupRequest::default();
    m.group_id = km::GroupId(s(&value.group_id));
    m.session_timeout_ms = value.session_timeout_ms;
    if version >= 1 {
        m.rebalance_timeout_ms = value.rebalance_timeout_ms;
    }
    m.member_id = s(&value.member_id);
    m.group_instance_id = opt_s(&value.group_instance_id);
    m.protocol_type = s(&value.protocol_type);
    m.protocols = value
        .protocols
        .iter()
        .map(|p| {
            let mut kp = JoinGroupRequestProtocol::default();
            kp.name = s(&p.name);
            kp.metadata = p.metadata.clone();
            kp
        })
        .collect();
    m.reason = since(version, 8, opt_s(&value.reason));
    Ok(m)
}

/// JoinGroup request from `kafka-protocol`'s message (as decoded at any version).
pub fn from_join_group_request(message: km::JoinGroupRequest) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: string(message.group_id.0),
        session_timeout_ms: message.session_timeout_ms,
        rebalance_timeout_ms: message.rebalance_timeout_ms,
        member_id: string(message.member_id),
        group_instance_id: opt_string(message.group_instance_id),
        protocol_type: string(message.protocol_type),
        protocols: message
            .protocols
            .into_iter()
            .map(|p| JoinGroupProtocol { name: string(p.name), metadata: p.metadata })
            .collect(),
        reason: opt_string(message.reason),
    }
}

/// JoinGroup response to `kafka-protocol`'s message at `version` (0..=9), as a broker answers.
pub fn join_group_response(value: &JoinGroupResponse, version: i16) -> Result<km::JoinGroupResponse, ConversionError> {
    const API: &str = "JoinGroup";
    check_version::<km::JoinGroupResponse>(API, version)?;
    let mut m = km::JoinGroupResponse::default();
    m.error_code = value.error.0;
    m.generation_id = value.generation_id;
    m.protocol_type = since(version, 7, opt_s(&value.protocol_type));
    m.protocol_name = opt_s(&value.protocol_name);
    m.leader = s(&value.leader);
    m.skip_assignment = version >= 9 && value.skip_assignment;
    m.member_id = s(&value.member_id);
    m.members = value
        .members
        .iter()
        .map(|member| {
            let mut km = JoinGroupResponseMember::default();
            km.member_id = s(&member.member_id);
            km.group_instance_id = since(version, 5, opt_s(&member.group_instance_id));
            km.metadata = member.metadata.clone();
            km
        })
        .collect();
    Ok(m)
}

/// JoinGroup response from `kafka-protocol`'s message (as decoded at any version).
pub fn from_join_group_response(message: km::JoinGroupResponse) -> JoinGroupResponse {
    JoinGroupResponse {
        error: ErrorCode(message.error_code),
        generation_id: message.generation_id,
        protocol_type: opt_string(message.protocol_type),
        protocol_name: opt_string(message.protocol_name),
        leader: string(message.leader),
        skip_assignment: message.skip_assignment,
        member_id: string(message.member_id),
        members: message
            .members
            .into_iter()
            .map(|m| JoinGroupMember {
                member_id: string(m.member_id),
                group_instance_id: opt_string(m.group_instance_id),
                metadata: m.metadata,
            })
            .collect(),
    }
}

/// SyncGroup request to `kafka-protocol`'s message at `version` (0..=5).
pub fn sync_group_request(value: &SyncGroupRequest, version: i16) -> Result<km::SyncGroupRequest, ConversionError> {
    const API: &str = "SyncGroup";
    check_version::<km::SyncGroupRequest>(API, version)?;
    needs(API, "group_instance_id", value.group_instance_id.is_some(), version, 3)?;
    let mut m = km::SyncGroupRequest::default();
    m.group_id = km::GroupId(s(&value.group_id));
    m.generation_id = value.generation_id;
    m.member_id = s(&value.member_id);
    m.group_instance_id = opt_s(&value.group_instance_id);
    m.protocol_type = since(version, 5, opt_s(&value.protocol_type));
    m.protocol_name = since(version, 5, opt_s(&value.protocol_name));
    m.assignments = value
        .assignments
        .iter()
        .map(|a| {
            let mut ka = SyncGroupRequestAssignment::default();
            ka.member_id = s(&a.member_id);
            ka.assignment = a.assignment.clone();
            ka
        })
        .collect();
    Ok(m)
}

/// SyncGroup request from `kafka-protocol`'s message (as decoded at any version).
pub fn from_sync_group_request(message: km::SyncGroupRequest) -> SyncGroupRequest {
    SyncGroupRequest {
        group_id: string(message.group_id.0),
        generation_id: message.generation_id,
        member_id: string(message.member_id),
        group_instance_id: opt_string(message.group_instance_id),
        protocol_type: opt_string(message.protocol_type),
        protocol_name: opt_string(message.protocol_name),
        assignments: message
            .assignments
            .into_iter()
            .map(|a| SyncGroupAssignment { member_id: string(a.member_id), assignment: a.assignment })
            .collect(),
    }
}

/// SyncGroup response to `kafka-protocol`'s message at `version` (0..=5), as a broker answers.
pub fn sync_group_response(value: &SyncGroupResponse, version: i16) -> Result<km::SyncGroupResponse, ConversionError> {
    check_version::<km::SyncGroupResponse>("SyncGroup", version)?;
    let mut m = km::SyncGroupResponse::default();
    m.error_code = value.error.0;
    m.protocol_type = since(version, 5, opt_s(&value.protocol_type));
    m.protocol_name = since(version, 5, opt_s(&value.protocol_name));
    m.assignment = value.assignment.clone();
    Ok(m)
}

/// SyncGroup response from `kafka-protocol`'s message (as decoded at any version).
pub fn from_sync_group_response(message: km::SyncGroupResponse) -> SyncGroupResponse {
    SyncGroupResponse {
        error: ErrorCode(message.error_code),
        protocol_type: opt_string(message.protocol_type),
        protocol_name: opt_string(message.protocol_name),
        assignment: message.assignment,
    }
}

/// Heartbeat request to `kafka-protocol`'s message at `version` (0..=4).
pub fn heartbeat_request(value: &HeartbeatRequest, version: i16) -> Result<km::HeartbeatRequest, ConversionError> {
    const API: &str = "Heartbeat";
    check_version::<km::HeartbeatRequest>(API, version)?;
    needs(API, "group_instance_id", value.group_instance_id.is_some(), version, 3)?;
    let mut m = km::HeartbeatRequest::default();
    m.group_id = km::GroupId(s(&value.group_id));
    m.generation_id = value.generation_id;
    m.member_id = s(&value.member_id);
    m.group_instance_id = opt_s(&value.group_instance_id);
    Ok(m)
}

/// Heartbeat request from `kafka-protocol`'s message (as decoded at any version).
pub fn from_heartbeat_request(message: km::HeartbeatRequest) -> HeartbeatRequest {
    HeartbeatRequest {
        group_id: string(message.group_id.0),
        generation_id: message.generation_id,
        member_id: string(message.member_id),
        group_instance_id: opt_string(message.group_instance_id),
    }
}

/// Heartbeat response to `kafka-protocol`'s message at `version` (0..=4), as a broker answers.
pub fn heartbeat_response(value: &HeartbeatResponse, version: i16) -> Result<km::HeartbeatResponse, ConversionError> {
    check_version::<km::HeartbeatResponse>("Heartbeat", version)?;
    let mut m = km::HeartbeatResponse::default();
    m.error_code = value.error.0;
    Ok(m)
}

/// Heartbeat response from `kafka-protocol`'s message (as decoded at any version).
pub fn from_heartbeat_response(message: km::HeartbeatResponse) -> HeartbeatResponse {
    HeartbeatResponse { error: ErrorCode(message.error_code) }
}

/// LeaveGroup request to `kafka-protocol`'s message at `version` (0..=5): the member id at the
/// top level before v3, a batch of one member identity from v3 on.
pub fn leave_group_request(value: &LeaveGroupRequest, version: i16) -> Result<km::LeaveGroupRequest, ConversionError> {
    const API: &str = "LeaveGroup";
    check_version::<km::LeaveGroupRequest>(API, version)?;
    needs(API, "group_instance_id", value.group_instance_id.is_some(), version, 3)?;
    let mut m = km::LeaveGroupRequest::default();
    m.group_id = km::GroupId(s(&value.group_id));
    if version < 3 {
        m.member_id = s(&value.member_id);
    } else {
        let mut identity = MemberIdentity::default();
        identity.member_id = s(&value.member_id);
        identity.group_instance_id = opt_s(&value.group_instance_id);
        identity.reason = since(version, 5, opt_s(&value.reason));
        m.members = vec![identity];
    }
    Ok(m)
}

/// LeaveGroup request from `kafka-protocol`'s message (as decoded at any version). From v3 on
/// the request is a batch; this model is one member (what a consumer sends), so it takes the
/// first member identity (an empty member id when there is none).
pub fn from_leave_group_request(message: km::LeaveGroupRequest) -> LeaveGroupRequest {
    let group_id = string(message.group_id.0);
    match message.members.into_iter().next() {
        Some(identity) => LeaveGroupRequest {
            group_id,
            member_id: string(identity.member_id),
            group_instance_id: opt_string(identity.group_instance_id),
            reason: opt_string(identity.reason),
        },
        None => {
            LeaveGroupRequest { group_id, member_id: string(message.member_id), group_instance_id: None, reason: None }
        }
    }
}

/// LeaveGroup response to `kafka-protocol`'s message at `version` (0..=5), as a broker answers:
/// the error at the top level (no per-member responses).
pub fn leave_group_response(
    value: &LeaveGroupResponse,
    version: i16,
) -> Result<km::LeaveGroupResponse, ConversionError> {
    check_version::<km::LeaveGroupResponse>("LeaveGroup", version)?;
    let mut m = km::LeaveGroupResponse::default();
    m.error_code = value.error.0;
    Ok(m)
}

/// LeaveGroup response from `kafka-protocol`'s message (as decoded at any version): the
/// top-level error, or when that is `NONE` the first member's error, as Java's
/// `LeaveGroupResponse.error()` reads it.
pub fn from_leave_group_response(message: km::LeaveGroupResponse) -> LeaveGroupResponse {
    let member_error = |members: &[MemberResponse]| members.iter().map(|m| m.error_code).find(|&c| c != 0);
    let error = match message.error_code {
        0 => member_error(&message.members).unwrap_or(0),
        code => code,
    };
    LeaveGroupResponse { error: ErrorCode(error) }
}

/// DescribeGroups request to `kafka-protocol`'s message at `version` (0..=6).
pub fn describe_groups_request(
    value: &DescribeGroupsRequest,
    version: i16,
) -> Result<km::DescribeGroupsRequest, ConversionError> {
    const API: &str = "DescribeGroups";
    check_version::<km::DescribeGroupsRequest>(API, version)?;
    needs(API, "include_authorized_operations", value.include_authorized_operations, version, 3)?;
    let mut m = km::DescribeGroupsRequest::default();
    m.groups = value.groups.iter().map(|g| km::GroupId(s(g))).collect();
    m.include_authorized_operations = value.include_authorized_operations;
    Ok(m)
}

/// DescribeGroups request from `kafka-protocol`'s message (as decoded at any version).
pub fn from_describe_groups_request(message: km::DescribeGroupsRequest) -> DescribeGroupsRequest {
    DescribeGroupsRequest {
        groups: message.groups.into_iter().map(|g| string(g.0)).collect(),
        include_authorized_operations: message.include_authorized_operations,
    }
}

/// DescribeGroups response to `kafka-protocol`'s message at `version` (0..=6), as a broker answers.
pub fn describe_groups_response(
    value: &DescribeGroupsResponse,
    version: i16,
) -> Result<km::DescribeGroupsResponse, ConversionError> {
    check_version::<km::DescribeGroupsResponse>("DescribeGroups", version)?;
    let mut m = km::DescribeGroupsResponse::default();
    if version >= 1 {
        m.throttle_time_ms = value.throttle_time_ms;
    }
    m.groups = value
        .groups
        .iter()
        .map(|g| {
            let mut kg = KDescribedGroup::default();
            kg.error_code = g.error.0;
            kg.error_message = since(version, 6, opt_s(&g.error_message));
            kg.group_id = km::GroupId(s(&g.group_id));
            kg.group_state = s(&g.group_state);
            kg.protocol_type = s(&g.protocol_type);
            kg.protocol_data = s(&g.protocol_data);
            kg.members = g
                .members
                .iter()
                .map(|member| {
                    let mut kmember = KMember::default();
                    kmember.member_id = s(&member.member_id);
                    kmember.group_instance_id = since(version, 4, opt_s(&member.group_instance_id));
                    kmember.client_id = s(&member.client_id);
                    kmember.client_host = s(&member.client_host);
                    kmember.member_metadata = member.member_metadata.clone();
                    kmember.member_assignment = member.member_assignment.clone();
                    kmember
                })
                .collect();
            if version >= 3 {
                kg.authorized_operations = g.authorized_operations;
            }
            kg
        })
        .collect();
    Ok(m)
}

/// DescribeGroups response from `kafka-protocol`'s message (as decoded at any version).
pub fn from_describe_groups_response(message: km::DescribeGroupsResponse) -> DescribeGroupsResponse {
    DescribeGroupsResponse {
        throttle_time_ms: message.throttle_time_ms,
        groups: message
            .groups
            .into_iter()
            .map(|g| DescribedGroup {
                error: ErrorCode(g.error_code),
                error_message: opt_string(g.error_message),
                group_id: string(g.group_id.0),
                group_state: string(g.group_state),
                protocol_type: string(g.protocol_type),
                protocol_data: string(g.protocol_data),
                members: g
                    .members
                    .into_iter()
                    .map(|m| DescribedGroupMember {
                        member_id: string(m.member_id),
                        group_instance_id: opt_string(m.group_instance_id),
                        client_id: string(m.client_id),
                        client_host: string(m.client_host),
                        member_metadata: m.member_metadata,
                        member_assignment: m.member_assignment,
                    })
                    .collect(),
                authorized_operations: g.authorized_operations,
            })
            .collect(),
    }
}

/// OffsetCommit request to `kafka-protocol`'s message at `version` (2..=9): generation and member
/// id at every version, the group instance id from v7 (refused before, as Java refuses it), the
/// leader epoch from v6 (dropped before), the retention time left to the broker (`-1`).
pub fn offset_commit_request(
    value: &OffsetCommitRequest,
    version: i16,
) -> Result<km::OffsetCommitRequest, ConversionError> {
    const API: &str = "OffsetCommit";
    check_version::<km::OffsetCommitRequest>(API, version)?;
    needs(API, "group_instance_id", value.group_instance_id.is_some(), version, 7)?;
    let mut m = km::OffsetCommitRequest::default();
    m.group_id = km::GroupId(s(&value.group_id));
    m.generation_id_or_member_epoch = value.generation_id;
    m.member_id = s(&value.member_id);
    m.group_instance_id = opt_s(&value.group_instance_id);
    m.topics = value
        .topics
        .iter()
        .map(|t| {
            let mut kt = OffsetCommitRequestTopic::default();
            kt.name = km::TopicName(s(&t.name));
            kt.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut kp = OffsetCommitRequestPartition::default();
                    kp.partition_index = p.partition;
                    kp.committed_offset = p.offset;
                    kp.committed_leader_epoch = if version >= 6 { p.leader_epoch } else { -1 };
                    kp.committed_metadata = opt_s(&p.metadata);
                    kp
                })
                .collect();
            kt
        })
        .collect();
    Ok(m)
}

/// OffsetCommit request from `kafka-protocol`'s message (as decoded at any version).
pub fn from_offset_commit_request(message: km::OffsetCommitRequest) -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: string(message.group_id.0),
        generation_id: message.generation_id_or_member_epoch,
        member_id: string(message.member_id),
        group_instance_id: opt_string(message.group_instance_id),
        topics: message
            .topics
            .into_iter()
            .map(|t| OffsetCommitTopic {
                name: string(t.name.0),
                partitions: t
                    .partitions
                    .into_iter()
                    .map(|p| OffsetCommitPartition {
                        partition: p.partition_index,
                        offset: p.committed_offset,
                        leader_epoch: p.committed_leader_epoch,
                        metadata: opt_string(p.committed_metadata),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// OffsetCommit response to `kafka-protocol`'s message at `version` (2..=9), as a broker answers.
pub fn offset_commit_response(
    value: &OffsetCommitResponse,
    version: i16,
) -> Result<km::OffsetCommitResponse, ConversionError> {
    // The request's range: v10 of the response names topics by id, which this model does not.
    check_version::<km::OffsetCommitRequest>("OffsetCommit", version)?;
    let mut m = km::OffsetCommitResponse::default();
    if version >= 3 {
        m.throttle_time_ms = value.throttle_time_ms;
    }
    m.topics = value
        .topics
        .iter()
        .map(|t| {
            let mut kt = OffsetCommitResponseTopic::default();
            kt.name = km::TopicName(s(&t.name));
            kt.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut kp = OffsetCommitResponsePartition::default();
                    kp.partition_index = p.partition;
                    kp.error_code = p.error.0;
                    kp
                })
                .collect();
            kt
        })
        .collect();
    Ok(m)
}

/// OffsetCommit response from `kafka-protocol`'s message (as decoded at any version).
pub fn from_offset_commit_response(message: km::OffsetCommitResponse) -> OffsetCommitResponse {
    OffsetCommitResponse {
        throttle_time_ms: message.throttle_time_ms,
        topics: message
            .topics
            .into_iter()
            .map(|t| OffsetCommitTopicResult {
                name: string(t.name.0),
                partitions: t
                    .partitions
                    .into_iter()
                    .map(|p| OffsetCommitPartitionResult {
                        partition: p.partition_index,
                        error: ErrorCode(p.error_code),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// OffsetFetch request to `kafka-protocol`'s message at `version` (1..=9): the group at the top
/// level before v8, a batch of this one group from v8 on (without the KIP-848 member id and
/// epoch of v9). `require_stable` is dropped before v7, as Java's read-uncommitted consumer drops it.
pub fn offset_fetch_request(
    value: &OffsetFetchRequest,
    version: i16,
) -> Result<km::OffsetFetchRequest, ConversionError> {
    const API: &str = "OffsetFetch";
    check_version::<km::OffsetFetchRequest>(API, version)?;
    needs(API, "topics: None (every committed partition)", value.topics.is_none(), version, 2)?;
    let mut m = km::OffsetFetchRequest::default();
    m.require_stable = version >= 7 && value.require_stable;
    if version < 8 {
        m.group_id = km::GroupId(s(&value.group_id));
        m.topics = value.topics.as_ref().map(|topics| {
            topics
                .iter()
                .map(|t| {
                    let mut kt = OffsetFetchRequestTopic::default();
                    kt.name = km::TopicName(s(&t.name));
                    kt.partition_indexes = t.partitions.clone();
                    kt
                })
                .collect()
        });
    } else {
        let mut group = OffsetFetchRequestGroup::default();
        group.group_id = km::GroupId(s(&value.group_id));
        group.topics = value.topics.as_ref().map(|topics| {
            topics
                .iter()
                .map(|t| {
                    let mut kt = OffsetFetchRequestTopics::default();
                    kt.name = km::TopicName(s(&t.name));
                    kt.partition_indexes = t.partitions.clone();
                    kt
                })
                .collect()
        });
        m.groups = vec![group];
    }
    Ok(m)
}

/// OffsetFetch request from `kafka-protocol`'s message (as decoded at any version); from v8 on,
/// the first group of the batch (an empty group id when there is none).
pub fn from_offset_fetch_request(message: km::OffsetFetchRequest) -> OffsetFetchRequest {
    let require_stable = message.require_stable;
    if let Some(group) = message.groups.into_iter().next() {
        return OffsetFetchRequest {
            group_id: string(group.group_id.0),
            topics: group.topics.map(|topics| {
                topics
                    .into_iter()
                    .map(|t| OffsetFetchTopic { name: string(t.name.0), partitions: t.partition_indexes })
                    .collect()
            }),
            require_stable,
        };
    }
    OffsetFetchRequest {
        group_id: string(message.group_id.0),
        topics: message.topics.map(|topics| {
            topics
                .into_iter()
                .map(|t| OffsetFetchTopic { name: string(t.name.0), partitions: t.partition_indexes })
                .collect()
        }),
        require_stable,
    }
}

/// OffsetFetch response to `kafka-protocol`'s message at `version` (1..=9), as a broker answers:
/// top level before v8, one group from v8 on.
pub fn offset_fetch_response(
    value: &OffsetFetchResponse,
    version: i16,
) -> Result<km::OffsetFetchResponse, ConversionError> {
    // The request's range: v10 of the response names topics by id, which this model does not.
    check_version::<km::OffsetFetchRequest>("OffsetFetch", version)?;
    let mut m = km::OffsetFetchResponse::default();
    if version >= 3 {
        m.throttle_time_ms = value.throttle_time_ms;
    }
    if version < 8 {
        if version >= 2 {
            m.error_code = value.error.0;
        }
        m.topics = value
            .topics
            .iter()
            .map(|t| {
                let mut kt = OffsetFetchResponseTopic::default();
                kt.name = km::TopicName(s(&t.name));
                kt.partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let mut kp = OffsetFetchResponsePartition::default();
                        kp.partition_index = p.partition;
                        kp.committed_offset = p.committed_offset;
                        kp.committed_leader_epoch = if version >= 5 { p.leader_epoch } else { -1 };
                        kp.metadata = opt_s(&p.metadata);
                        kp.error_code = p.error.0;
                        kp
                    })
                    .collect();
                kt
            })
            .collect();
    } else {
        let mut group = OffsetFetchResponseGroup::default();
        group.error_code = value.error.0;
        group.topics = value
            .topics
            .iter()
            .map(|t| {
                let mut kt = OffsetFetchResponseTopics::default();
                kt.name = km::TopicName(s(&t.name));
                kt.partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let mut kp = OffsetFetchResponsePartitions::default();
                        kp.partition_index = p.partition;
                        kp.committed_offset = p.committed_offset;
                        kp.committed_leader_epoch = p.leader_epoch;
                        kp.metadata = opt_s(&p.metadata);
                        kp.error_code = p.error.0;
                        kp
                    })
                    .collect();
                kt
            })
            .collect();
        m.groups = vec![group];
    }
    Ok(m)
}

/// OffsetFetch response from `kafka-protocol`'s message (as decoded at any version); from v8 on,
/// the first group of the batch.
pub fn from_offset_fetch_response(message: km::OffsetFetchResponse) -> OffsetFetchResponse {
    let throttle_time_ms = message.throttle_time_ms;
    if let Some(group) = message.groups.into_iter().next() {
        return OffsetFetchResponse {
            throttle_time_ms,
            error: ErrorCode(group.error_code),
            topics: group
                .topics
                .into_iter()
                .map(|t| OffsetFetchTopicResult {
                    name: string(t.name.0),
                    partitions: t
                        .partitions
                        .into_iter()
                        .map(|p| OffsetFetchPartition {
                            partition: p.partition_index,
                            committed_offset: p.committed_offset,
                            leader_epoch: p.committed_leader_epoch,
                            metadata: opt_string(p.metadata),
                            error: ErrorCode(p.error_code),
                        })
                        .collect(),
                })
                .collect(),
        };
    }
    OffsetFetchResponse {
        throttle_time_ms,
        error: ErrorCode(message.error_code),
        topics: message
            .topics
            .into_iter()
            .map(|t| OffsetFetchTopicResult {
                name: string(t.name.0),
                partitions: t
                    .partitions
                    .into_iter()
                    .map(|p| OffsetFetchPartition {
                        partition: p.partition_index,
                        committed_offset: p.committed_offset,
                        leader_epoch: p.committed_leader_epoch,
                        metadata: opt_string(p.metadata),
                        error: ErrorCode(p.error_code),
                    })
                    .collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
