//! Replays the committed `client_response` fuzz corpus (`fuzz/corpus/client_response/`) through
//! the check the fuzz target runs, under a 512 MB cap on single allocations (so a count that
//! reached `kafka-protocol`'s pre-allocation unchecked would fail here).
//!
//! The seeds are encodings of every decoded response at several versions and a few hostile
//! frames; `KCP_WRITE_CORPUS=1 cargo test --test client_corpus` writes them again.

use kcp_testkit::client_checks;

mod capped_alloc;

use std::path::{Path, PathBuf};

use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::consumer_group_describe_response as cgd;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, HeaderVersion, Message, StrBytes};

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// A response frame (after its size): header for `version`, then the body.
fn frame<M: Encodable + HeaderVersion>(message: &M, version: i16) -> Vec<u8> {
    let mut out = BytesMut::new();
    ResponseHeader::default().with_correlation_id(7).encode(&mut out, M::header_version(version)).unwrap();
    message.encode(&mut out, version).unwrap();
    out.to_vec()
}

/// Versions min, middle and max of a message.
fn versions<M: Message>() -> [i16; 3] {
    [M::VERSIONS.min, (M::VERSIONS.min + M::VERSIONS.max) / 2, M::VERSIONS.max]
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add = |name: String, api: i16, version: i16, bytes: Vec<u8>| {
        out.push((name, client_checks::input(api, version, &bytes)));
    };
    for v in versions::<ApiVersionsResponse>() {
        let r = ApiVersionsResponse::default()
            .with_api_keys(vec![ApiVersion::default().with_api_key(3).with_max_version(12)]);
        add(format!("api-versions-v{v}"), 18, v, frame(&r, v));
    }
    for v in versions::<MetadataResponse>() {
        let r = MetadataResponse::default()
            .with_brokers(vec![MetadataResponseBroker::default().with_host(s("h")).with_port(9092)])
            .with_topics(vec![MetadataResponseTopic::default()
                .with_name(Some(TopicName(s("t"))))
                .with_partitions(vec![MetadataResponsePartition::default().with_replica_nodes(vec![1.into()])])]);
        add(format!("metadata-v{v}"), 3, v, frame(&r, v));
    }
    for v in versions::<FindCoordinatorResponse>() {
        let r = if v >= 4 {
            FindCoordinatorResponse::default()
                .with_coordinators(vec![Coordinator::default().with_key(s("g")).with_host(s("h"))])
        } else {
            FindCoordinatorResponse::default().with_host(s("h"))
        };
        add(format!("find-coordinator-v{v}"), 10, v, frame(&r, v));
    }
    for v in versions::<ListGroupsResponse>() {
        let r = ListGroupsResponse::default()
            .with_groups(vec![ListedGroup::default().with_group_id(GroupId(s("g"))).with_protocol_type(s("consumer"))]);
        add(format!("list-groups-v{v}"), 16, v, frame(&r, v));
    }
    for v in versions::<DescribeGroupsResponse>() {
        let r = DescribeGroupsResponse::default().with_groups(vec![DescribedGroup::default()
            .with_group_id(GroupId(s("g")))
            .with_members(vec![DescribedGroupMember::default()
                .with_member_id(s("m"))
                .with_member_metadata(vec![0, 3, 0, 0, 0, 0].into())])]);
        add(format!("describe-groups-v{v}"), 15, v, frame(&r, v));
    }
    for v in versions::<ConsumerGroupDescribeResponse>() {
        let tp = cgd::TopicPartitions::default().with_topic_name(TopicName(s("t"))).with_partitions(vec![0]);
        let r = ConsumerGroupDescribeResponse::default().with_groups(vec![cgd::DescribedGroup::default()
            .with_group_id(GroupId(s("g")))
            .with_members(vec![
                cgd::Member::default().with_assignment(cgd::Assignment::default().with_topic_partitions(vec![tp]))
            ])]);
        add(format!("consumer-group-describe-v{v}"), 69, v, frame(&r, v));
    }
    for v in versions::<JoinGroupResponse>() {
        let r = JoinGroupResponse::default().with_members(vec![JoinGroupResponseMember::default()
            .with_member_id(s("m"))
            .with_metadata(vec![1].into())]);
        add(format!("join-group-v{v}"), 11, v, frame(&r, v));
    }
    for v in versions::<SyncGroupResponse>() {
        add(
            format!("sync-group-v{v}"),
            14,
            v,
            frame(&SyncGroupResponse::default().with_assignment(vec![0, 3].into()), v),
        );
    }
    for v in versions::<HeartbeatResponse>() {
        add(format!("heartbeat-v{v}"), 12, v, frame(&HeartbeatResponse::default(), v));
    }
    for v in versions::<LeaveGroupResponse>() {
        add(format!("leave-group-v{v}"), 13, v, frame(&LeaveGroupResponse::default(), v));
    }
    for v in versions::<SaslHandshakeResponse>() {
        add(
            format!("sasl-handshake-v{v}"),
            17,
            v,
            frame(&SaslHandshakeResponse::default().with_mechanisms(vec![s("PLAIN")]), v),
        );
    }
    for v in versions::<SaslAuthenticateResponse>() {
        add(format!("sasl-authenticate-v{v}"), 36, v, frame(&SaslAuthenticateResponse::default(), v));
    }
    // Hostile: counts of 2^31 - 1 and 2^32 - 2 elements in a few bytes.
    let mut huge = BytesMut::new();
    huge.put_i32(7);
    huge.put_i16(0);
    huge.put_i32(i32::MAX);
    add("hostile-list-groups-v0-count".into(), 16, 0, huge.to_vec());
    add(
        "hostile-list-groups-v3-count".into(),
        16,
        3,
        vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f],
    );
    add("hostile-metadata-v0-replicas".into(), 3, 0, {
        let mut b = BytesMut::new();
        b.put_i32(7);
        b.put_i32(0); // no brokers
        b.put_i32(1); // one topic
        b.put_i16(0);
        b.put_i16(1);
        b.put_u8(b't');
        b.put_i32(1); // one partition
        b.put_i16(0);
        b.put_i32(0);
        b.put_i32(1);
        b.put_i32(0x3fff_ffff); // replicas
        b.to_vec()
    });
    out
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/client_response")
}

#[test]
fn client_response_corpus() {
    let dir = corpus_dir();
    if std::env::var_os("KCP_WRITE_CORPUS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, data) in seeds() {
            std::fs::write(dir.join(name), data).unwrap();
        }
    }
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in &entries {
        let data = std::fs::read(path).unwrap();
        let result = std::panic::catch_unwind(|| client_checks::client_response(&data));
        assert!(result.is_ok(), "{} fails its check", path.display());
    }
    assert!(entries.len() >= 35, "{} corpus files", entries.len());
}

#[test]
fn seeds_decode_and_hostile_seeds_do_not() {
    use kafka_consumer_protocol::client::{decode_response_frame, DECODED_API_KEYS};
    for (name, data) in seeds() {
        let api = DECODED_API_KEYS[usize::from(data[0])];
        let result = decode_response_frame(api, i16::from(data[1]), bytes::Bytes::copy_from_slice(&data[2..]));
        assert_eq!(result.is_ok(), !name.starts_with("hostile"), "{name}: {result:?}");
    }
}
