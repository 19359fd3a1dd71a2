//! The coordinator's side of the conversation: the requests it asks its caller to send, the
//! responses it is handed back, and the id that pairs them. The messages themselves are the
//! [`group_api`](crate::group_api) values.

use crate::group_api::{
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
    OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest,
    SyncGroupResponse,
};

/// A request to send to the group coordinator. `#[non_exhaustive]`: new APIs may join.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Request {
    /// JoinGroup.
    JoinGroup(JoinGroupRequest),
    /// SyncGroup.
    SyncGroup(SyncGroupRequest),
    /// Heartbeat.
    Heartbeat(HeartbeatRequest),
    /// LeaveGroup (no response is awaited).
    LeaveGroup(LeaveGroupRequest),
    /// OffsetCommit ([`Coordinator::commit`](super::Coordinator::commit)).
    OffsetCommit(OffsetCommitRequest),
    /// OffsetFetch of newly assigned partitions.
    OffsetFetch(OffsetFetchRequest),
}

impl Request {
    /// `"JoinGroup"`, `"SyncGroup"`, `"Heartbeat"`, `"LeaveGroup"`, `"OffsetCommit"` or `"OffsetFetch"`.
    pub fn api_name(&self) -> &'static str {
        match self {
            Request::JoinGroup(_) => "JoinGroup",
            Request::SyncGroup(_) => "SyncGroup",
            Request::Heartbeat(_) => "Heartbeat",
            Request::LeaveGroup(_) => "LeaveGroup",
            Request::OffsetCommit(_) => "OffsetCommit",
            Request::OffsetFetch(_) => "OffsetFetch",
        }
    }
}

/// A response from the group coordinator. `#[non_exhaustive]`: new APIs may join.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Response {
    /// JoinGroup.
    JoinGroup(JoinGroupResponse),
    /// SyncGroup.
    SyncGroup(SyncGroupResponse),
    /// Heartbeat.
    Heartbeat(HeartbeatResponse),
    /// LeaveGroup.
    LeaveGroup(LeaveGroupResponse),
    /// OffsetCommit.
    OffsetCommit(OffsetCommitResponse),
    /// OffsetFetch.
    OffsetFetch(OffsetFetchResponse),
}

/// Identifies a request so its response can be matched (the caller's correlation id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// A request to transmit, with the id its response must be handed back with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct Transmit {
    /// Pass this to [`Coordinator::handle_response`](super::Coordinator::handle_response).
    pub id: RequestId,
    /// The request.
    pub request: Request,
}
