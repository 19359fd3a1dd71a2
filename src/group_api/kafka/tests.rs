//! Every conversion at every version of its API: value -> `kafka-protocol` message -> bytes
//! (kafka-protocol's encoder) -> message (its decoder) -> value gives back the value, less the
//! fields that version does not carry.

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::{Decodable, Encodable, Message};

use super::*;

fn through_bytes<M: Encodable + Decodable>(message: &M, version: i16) -> M {
    let mut buf = BytesMut::new();
    message.encode(&mut buf, version).unwrap_or_else(|e| panic!("encode v{version}: {e}"));
    let mut bytes = Bytes::from(buf);
    let decoded = M::decode(&mut bytes, version).unwrap_or_else(|e| panic!("decode v{version}: {e}"));
    assert!(bytes.is_empty(), "v{version}: {} bytes left", bytes.len());
    decoded
}

fn versions<M: Message>() -> core::ops::RangeInclusive<i16> {
    M::VERSIONS.min..=M::VERSIONS.max
}

fn join_request(static_member: bool) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: "orders".into(),
        session_timeout_ms: 45_000,
        rebalance_timeout_ms: 300_000,
        member_id: "m-1".into(),
        group_instance_id: static_member.then(|| "host-a".into()),
        protocol_type: "consumer".into(),
        protocols: vec![
            JoinGroupProtocol { name: "cooperative-sticky".into(), metadata: Bytes::from_static(b"\0\x03sub") },
            JoinGroupProtocol { name: "range".into(), metadata: Bytes::new() },
        ],
        reason: Some("initial join".into()),
    }
}

#[test]
fn join_group_request_round_trips_at_every_version() {
    for version in versions::<km::JoinGroupRequest>() {
        let value = join_request(version >= 5);
        let back = from_join_group_request(through_bytes(&join_group_request(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 1 {
            expected.rebalance_timeout_ms = -1; // v0 has none; the decoder's default
        }
        if version < 8 {
            expected.reason = None;
        }
        assert_eq!(back, expected, "v{version}");
    }
}

#[test]
fn static_membership_before_its_version_is_refused() {
    let needs =
        |api, version, since| ConversionError::FieldNeedsVersion { api, field: "group_instance_id", version, since };
    assert_eq!(join_group_request(&join_request(true), 4), Err(needs("JoinGroup", 4, 5)));
    let sync = SyncGroupRequest { group_instance_id: Some("host-a".into()), ..sync_request() };
    assert_eq!(sync_group_request(&sync, 2).unwrap_err(), needs("SyncGroup", 2, 3));
    let heartbeat = HeartbeatRequest { group_instance_id: Some("host-a".into()), ..heartbeat_request_value() };
    assert_eq!(heartbeat_request(&heartbeat, 2).unwrap_err(), needs("Heartbeat", 2, 3));
    let leave = LeaveGroupRequest { group_instance_id: Some("host-a".into()), ..leave_request() };
    assert_eq!(leave_group_request(&leave, 2).unwrap_err(), needs("LeaveGroup", 2, 3));
    let describe = DescribeGroupsRequest { groups: vec!["g".into()], include_authorized_operations: true };
    assert_eq!(
        describe_groups_request(&describe, 2).unwrap_err(),
        ConversionError::FieldNeedsVersion {
            api: "DescribeGroups",
            field: "include_authorized_operations",
            version: 2,
            since: 3
        }
    );
}

#[test]
fn versions_outside_the_api_are_refused() {
    let err = join_group_request(&join_request(false), 10).unwrap_err();
    assert_eq!(err, ConversionError::UnsupportedVersion { api: "JoinGroup", version: 10, max: 9 });
    assert_eq!(err.to_string(), "JoinGroup v10 is not a version of the API (0..=9)");
    assert!(sync_group_response(&SyncGroupResponse::default(), -1).is_err());
    assert!(heartbeat_request(&heartbeat_request_value(), 5).is_err());
    assert!(leave_group_response(&LeaveGroupResponse::default(), 6).is_err());
    assert!(describe_groups_response(&DescribeGroupsResponse::default(), 7).is_err());
}

#[test]
fn join_group_response_round_trips_at_every_version() {
    for version in versions::<km::JoinGroupResponse>() {
        let value = JoinGroupResponse {
            error: ErrorCode::MEMBER_ID_REQUIRED,
            generation_id: 7,
            protocol_type: Some("consumer".into()),
            protocol_name: Some("cooperative-sticky".into()),
            leader: "m-1".into(),
            skip_assignment: true,
            member_id: "m-2".into(),
            members: vec![
                JoinGroupMember {
                    member_id: "m-1".into(),
                    group_instance_id: Some("host-a".into()),
                    metadata: Bytes::from_static(b"\0\x01x"),
                },
                JoinGroupMember { member_id: "m-2".into(), group_instance_id: None, metadata: Bytes::new() },
            ],
        };
        let back = from_join_group_response(through_bytes(&join_group_response(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 7 {
            expected.protocol_type = None;
        }
        if version < 9 {
            expected.skip_assignment = false;
        }
        if version < 5 {
            expected.members[0].group_instance_id = None;
        }
        assert_eq!(back, expected, "v{version}");
    }
}

fn sync_request() -> SyncGroupRequest {
    SyncGroupRequest {
        group_id: "orders".into(),
        generation_id: 7,
        member_id: "m-1".into(),
        group_instance_id: None,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignments: vec![
            SyncGroupAssignment { member_id: "m-1".into(), assignment: Bytes::from_static(b"\0\x03a") },
            SyncGroupAssignment { member_id: "m-2".into(), assignment: Bytes::new() },
        ],
    }
}

#[test]
fn sync_group_request_round_trips_at_every_version() {
    for version in versions::<km::SyncGroupRequest>() {
        let value = SyncGroupRequest { group_instance_id: (version >= 3).then(|| "host-a".into()), ..sync_request() };
        let back = from_sync_group_request(through_bytes(&sync_group_request(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 5 {
            expected.protocol_type = None;
            expected.protocol_name = None;
        }
        assert_eq!(back, expected, "v{version}");
    }
}

#[test]
fn sync_group_response_round_trips_at_every_version() {
    for version in versions::<km::SyncGroupResponse>() {
        let value = SyncGroupResponse {
            error: ErrorCode::REBALANCE_IN_PROGRESS,
            protocol_type: Some("consumer".into()),
            protocol_name: Some("range".into()),
            assignment: Bytes::from_static(b"\0\x03assignment"),
        };
        let back = from_sync_group_response(through_bytes(&sync_group_response(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 5 {
            expected.protocol_type = None;
            expected.protocol_name = None;
        }
        assert_eq!(back, expected, "v{version}");
    }
}

fn heartbeat_request_value() -> HeartbeatRequest {
    HeartbeatRequest { group_id: "orders".into(), generation_id: 7, member_id: "m-1".into(), group_instance_id: None }
}

#[test]
fn heartbeat_round_trips_at_every_version() {
    for version in versions::<km::HeartbeatRequest>() {
        let value = HeartbeatRequest {
            group_instance_id: (version >= 3).then(|| "host-a".into()),
            ..heartbeat_request_value()
        };
        let back = from_heartbeat_request(through_bytes(&heartbeat_request(&value, version).unwrap(), version));
        assert_eq!(back, value, "v{version}");
    }
    for version in versions::<km::HeartbeatResponse>() {
        let value = HeartbeatResponse { error: ErrorCode::ILLEGAL_GENERATION };
        let back = from_heartbeat_response(through_bytes(&heartbeat_response(&value, version).unwrap(), version));
        assert_eq!(back, value, "v{version}");
    }
}

fn leave_request() -> LeaveGroupRequest {
    LeaveGroupRequest {
        group_id: "orders".into(),
        member_id: "m-1".into(),
        group_instance_id: None,
        reason: Some("the consumer is being closed".into()),
    }
}

#[test]
fn leave_group_round_trips_at_every_version() {
    for version in versions::<km::LeaveGroupRequest>() {
        let value = LeaveGroupRequest { group_instance_id: (version >= 3).then(|| "host-a".into()), ..leave_request() };
        let message = leave_group_request(&value, version).unwrap();
        assert_eq!(message.members.len(), usize::from(version >= 3), "v{version}: a batch of one from v3");
        let back = from_leave_group_request(through_bytes(&message, version));
        let mut expected = value.clone();
        if version < 5 {
            expected.reason = None;
        }
        assert_eq!(back, expected, "v{version}");
    }
    for version in versions::<km::LeaveGroupResponse>() {
        let value = LeaveGroupResponse { error: ErrorCode::UNKNOWN_MEMBER_ID };
        let back = from_leave_group_response(through_bytes(&leave_group_response(&value, version).unwrap(), version));
        assert_eq!(back, value, "v{version}");
    }
}

#[test]
fn a_leave_group_member_error_is_the_response_error_when_the_top_level_has_none() {
    let mut message = km::LeaveGroupResponse::default();
    let mut ok = MemberResponse::default();
    ok.member_id = "m-1".into();
    let mut fenced = MemberResponse::default();
    fenced.member_id = "m-2".into();
    fenced.error_code = ErrorCode::FENCED_INSTANCE_ID.0;
    message.members = vec![ok, fenced];
    assert_eq!(from_leave_group_response(message.clone()).error, ErrorCode::FENCED_INSTANCE_ID);
    message.error_code = ErrorCode::GROUP_AUTHORIZATION_FAILED.0;
    assert_eq!(from_leave_group_response(message).error, ErrorCode::GROUP_AUTHORIZATION_FAILED);
}

#[test]
fn describe_groups_round_trips_at_every_version() {
    for version in versions::<km::DescribeGroupsRequest>() {
        let value = DescribeGroupsRequest {
            groups: vec!["orders".into(), "audit".into()],
            include_authorized_operations: version >= 3,
        };
        let back =
            from_describe_groups_request(through_bytes(&describe_groups_request(&value, version).unwrap(), version));
        assert_eq!(back, value, "v{version}");
    }
    for version in versions::<km::DescribeGroupsResponse>() {
        let value = DescribeGroupsResponse {
            throttle_time_ms: 12,
            groups: vec![
                DescribedGroup {
                    error: ErrorCode::NONE,
                    error_message: Some("fine".into()),
                    group_id: "orders".into(),
                    group_state: "Stable".into(),
                    protocol_type: "consumer".into(),
                    protocol_data: "cooperative-sticky".into(),
                    members: vec![DescribedGroupMember {
                        member_id: "m-1".into(),
                        group_instance_id: Some("host-a".into()),
                        client_id: "c-1".into(),
                        client_host: "/127.0.0.1".into(),
                        member_metadata: Bytes::from_static(b"\0\x03sub"),
                        member_assignment: Bytes::from_static(b"\0\x03asg"),
                    }],
                    authorized_operations: 0b1010,
                },
                DescribedGroup {
                    error: ErrorCode::GROUP_AUTHORIZATION_FAILED,
                    group_id: "audit".into(),
                    ..DescribedGroup::default()
                },
            ],
        };
        let back =
            from_describe_groups_response(through_bytes(&describe_groups_response(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 1 {
            expected.throttle_time_ms = 0;
        }
        if version < 3 {
            expected.groups[0].authorized_operations = i32::MIN;
        }
        if version < 4 {
            expected.groups[0].members[0].group_instance_id = None;
        }
        if version < 6 {
            expected.groups[0].error_message = None;
        }
        assert_eq!(back, expected, "v{version}");
    }
}

fn commit_request(static_member: bool) -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: "orders".into(),
        generation_id: 7,
        member_id: "m-1".into(),
        group_instance_id: static_member.then(|| "host-a".into()),
        topics: vec![OffsetCommitTopic {
            name: "t".into(),
            partitions: vec![
                OffsetCommitPartition { partition: 0, offset: 42, leader_epoch: 3, metadata: Some("m".into()) },
                OffsetCommitPartition { partition: 5, offset: 0, leader_epoch: -1, metadata: None },
            ],
        }],
    }
}

#[test]
fn offset_commit_request_round_trips_at_every_version() {
    for version in versions::<km::OffsetCommitRequest>() {
        let value = commit_request(version >= 7);
        let back = from_offset_commit_request(through_bytes(&offset_commit_request(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 6 {
            expected.topics[0].partitions[0].leader_epoch = -1;
        }
        assert_eq!(back, expected, "v{version}");
    }
}

#[test]
fn offset_commit_carries_the_instance_id_only_from_v7() {
    assert_eq!(
        offset_commit_request(&commit_request(true), 6),
        Err(ConversionError::FieldNeedsVersion {
            api: "OffsetCommit",
            field: "group_instance_id",
            version: 6,
            since: 7
        })
    );
    // Generation and member id travel at the oldest version kafka-protocol writes (v2; Kafka
    // carries them from v1).
    let m = offset_commit_request(&commit_request(false), 2).unwrap();
    assert_eq!((m.generation_id_or_member_epoch, m.member_id.as_str()), (7, "m-1"));
    assert_eq!(m.retention_time_ms, -1);
}

#[test]
fn offset_commit_response_round_trips_at_every_version() {
    let value = OffsetCommitResponse {
        throttle_time_ms: 9,
        topics: vec![OffsetCommitTopicResult {
            name: "t".into(),
            partitions: vec![
                OffsetCommitPartitionResult { partition: 0, error: ErrorCode::NONE },
                OffsetCommitPartitionResult { partition: 1, error: ErrorCode::ILLEGAL_GENERATION },
            ],
        }],
    };
    for version in versions::<km::OffsetCommitRequest>() {
        let back =
            from_offset_commit_response(through_bytes(&offset_commit_response(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 3 {
            expected.throttle_time_ms = 0;
        }
        assert_eq!(back, expected, "v{version}");
        assert_eq!(back.errors().nth(1), Some(("t", 1, ErrorCode::ILLEGAL_GENERATION)));
    }
}

#[test]
fn offset_fetch_request_round_trips_at_every_version() {
    let value = OffsetFetchRequest {
        group_id: "orders".into(),
        topics: Some(vec![OffsetFetchTopic { name: "t".into(), partitions: vec![0, 3] }]),
        require_stable: true,
    };
    for version in versions::<km::OffsetFetchRequest>() {
        let message = offset_fetch_request(&value, version).unwrap();
        assert_eq!(message.groups.len(), usize::from(version >= 8), "v{version}: one group in the batch from v8");
        let back = from_offset_fetch_request(through_bytes(&message, version));
        let expected = OffsetFetchRequest { require_stable: version >= 7, ..value.clone() };
        assert_eq!(back, expected, "v{version}");
    }
    let all = OffsetFetchRequest { group_id: "g".into(), topics: None, require_stable: false };
    assert!(matches!(offset_fetch_request(&all, 1), Err(ConversionError::FieldNeedsVersion { since: 2, .. })));
    assert_eq!(from_offset_fetch_request(through_bytes(&offset_fetch_request(&all, 8).unwrap(), 8)), all);
}

#[test]
fn offset_fetch_response_round_trips_at_every_version() {
    let value = OffsetFetchResponse {
        throttle_time_ms: 4,
        error: ErrorCode::NONE,
        topics: vec![OffsetFetchTopicResult {
            name: "t".into(),
            partitions: vec![
                OffsetFetchPartition {
                    partition: 0,
                    committed_offset: 17,
                    leader_epoch: 2,
                    metadata: Some("x".into()),
                    error: ErrorCode::NONE,
                },
                OffsetFetchPartition {
                    partition: 3,
                    committed_offset: -1,
                    leader_epoch: -1,
                    metadata: Some(String::new()),
                    error: ErrorCode::UNSTABLE_OFFSET_COMMIT,
                },
            ],
        }],
    };
    for version in versions::<km::OffsetFetchRequest>() {
        let back = from_offset_fetch_response(through_bytes(&offset_fetch_response(&value, version).unwrap(), version));
        let mut expected = value.clone();
        if version < 3 {
            expected.throttle_time_ms = 0;
        }
        if version < 5 {
            expected.topics[0].partitions[0].leader_epoch = -1;
        }
        assert_eq!(back, expected, "v{version}");
    }
    let group_error = OffsetFetchResponse { error: ErrorCode::GROUP_AUTHORIZATION_FAILED, ..Default::default() };
    for version in [2, 7, 8] {
        let back =
            from_offset_fetch_response(through_bytes(&offset_fetch_response(&group_error, version).unwrap(), version));
        assert_eq!(back.error, ErrorCode::GROUP_AUTHORIZATION_FAILED, "v{version}");
    }
}
