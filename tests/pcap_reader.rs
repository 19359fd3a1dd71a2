//! `kafka_consumer_protocol::pcap` against the real captures in testdata/pcap (checked against
//! their `.expect.json` sidecars) and against small synthetic captures written here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::{BufMut, BytesMut};
use kafka_consumer_protocol::group_api::{self, ErrorCode};
use kafka_consumer_protocol::pcap::{
    CaptureSummary, GroupBody, GroupMessage, GroupReader, MessageDirection, Payload, ReaderOptions,
};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    ApiKey, JoinGroupRequest, JoinGroupResponse, RequestHeader, ResponseHeader, SyncGroupRequest, SyncGroupResponse,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use serde_json::Value;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn read_all(path: &Path, options: ReaderOptions) -> (Vec<GroupMessage>, CaptureSummary) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = GroupReader::new(std::io::BufReader::new(file), options).unwrap();
    let messages: Vec<_> = reader.by_ref().collect();
    (messages, reader.summary().clone())
}

fn partitions_json(list: kafka_consumer_protocol::codec::TopicPartitionsList<'_>) -> Value {
    Value::Array(
        list.iter().map(|g| serde_json::json!({"topic": g.topic, "partitions": g.partitions.to_vec()})).collect(),
    )
}

/// Compares our decode with the Java reader's decode in the sidecar.
fn check_subscription(p: &Payload, want: &Value, what: &str) {
    let s = p.subscription().unwrap_or_else(|| panic!("{what}: not a subscription: {p:?}"));
    let v = s.view();
    assert_eq!(v.version(), want["version"].as_i64().unwrap() as i16, "{what}");
    assert_eq!(v.read_as().as_i16(), want["read_as_version"].as_i64().unwrap() as i16, "{what}");
    let topics: Vec<&str> = v.topics().iter().collect();
    let want_topics: Vec<&str> = want["topics"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(topics, want_topics, "{what}");
    assert_eq!(v.user_data().map(hex), want["user_data"].as_str().map(str::to_owned), "{what}");
    assert_eq!(partitions_json(v.owned_partitions()), want["owned_partitions"], "{what}");
    assert_eq!(i64::from(v.generation_id()), want["generation_id"].as_i64().unwrap(), "{what}");
    assert_eq!(v.rack_id(), want["rack_id"].as_str(), "{what}");
    assert_eq!(v.trailing_bytes() as u64, want["trailing_bytes"].as_u64().unwrap(), "{what}");
}

fn check_assignment(p: &Payload, want: &Value, want_hex: &str, what: &str) {
    assert_eq!(hex(&p.bytes()), want_hex, "{what}");
    let a = p.assignment().unwrap_or_else(|| panic!("{what}: not an assignment: {p:?}"));
    let v = a.view();
    assert_eq!(v.version(), want["version"].as_i64().unwrap() as i16, "{what}");
    assert_eq!(partitions_json(v.assigned_partitions()), want["assigned_partitions"], "{what}");
    assert_eq!(v.user_data().map(hex), want["user_data"].as_str().map(str::to_owned), "{what}");
}

/// Checks a capture's decode against its sidecar; `expect` is the sidecar's path.
fn check_capture(capture: &Path, expect: &Path) -> usize {
    let expect: Value = serde_json::from_str(&std::fs::read_to_string(expect).unwrap()).unwrap();
    let (messages, summary) = read_all(capture, ReaderOptions::default());
    assert_eq!(summary.frames.undecodable_frames, 0);
    assert_eq!(summary.frames.payload_errors, 0);
    assert!(!summary.truncated_capture && summary.capture_error.is_none());
    // JoinGroup requests by (client address, correlation id), to pair with responses.
    let mut requests: HashMap<(String, i32), &GroupMessage> = HashMap::new();
    for m in &messages {
        if m.frame.direction == MessageDirection::Request {
            requests.insert((m.src.to_string(), m.frame.correlation_id), m);
        }
    }
    let mut checked = 0;
    for group in expect["groups"].as_array().unwrap() {
        let group_id = group["group_id"].as_str().unwrap();
        let of_group: Vec<&GroupMessage> = messages.iter().filter(|m| m.frame.body.group_id() == group_id).collect();
        assert!(!of_group.is_empty(), "{group_id}");
        // Generations = successful JoinGroup responses.
        let mut generations: Vec<i32> = of_group
            .iter()
            .filter_map(|m| match &m.frame.body {
                GroupBody::JoinGroupResponse(r) if r.error == ErrorCode::NONE => Some(r.generation_id),
                _ => None,
            })
            .collect();
        generations.dedup();
        let want: Vec<i32> =
            group["generation_ids"].as_array().unwrap().iter().map(|g| g.as_i64().unwrap() as i32).collect();
        assert_eq!(generations, want, "{group_id}: generations");
        for gen in group["generations"].as_array().unwrap() {
            let id = gen["generation_id"].as_i64().unwrap() as i32;
            let responses: Vec<(&GroupMessage, group_api::JoinGroupResponse<Payload>)> = of_group
                .iter()
                .filter_map(|m| match &m.frame.body {
                    GroupBody::JoinGroupResponse(r) if r.error == ErrorCode::NONE && r.generation_id == id => {
                        Some((*m, r.to_response()))
                    }
                    _ => None,
                })
                .collect();
            let members = gen["members"].as_array().unwrap();
            assert_eq!(responses.len(), gen["member_count"].as_u64().unwrap() as usize, "gen {id}: members");
            assert_eq!(members.len(), responses.len());
            for (_, r) in &responses {
                assert_eq!(r.protocol_name.as_deref(), gen["protocol"].as_str(), "gen {id}: protocol");
                assert_eq!(r.leader, gen["leader"].as_str().unwrap(), "gen {id}: leader");
                assert_eq!(r.skip_assignment, gen["skip_assignment"].as_bool().unwrap_or(false));
            }
            let leader = &responses.iter().find(|(_, r)| r.member_id == r.leader).expect("leader's response").1;
            assert_eq!(leader.members.len(), members.len(), "gen {id}: leader's member list");
            for member in members {
                let member_id = member["member_id"].as_str().unwrap();
                let what = format!("{group_id} gen {id} {member_id}");
                let (m, _) = responses.iter().find(|(_, r)| r.member_id == member_id).expect(&what);
                assert_eq!(m.frame.client_id.as_deref(), member["client_id"].as_str(), "{what}");
                assert_eq!(i64::from(m.frame.api_version), member["join_group_version"].as_i64().unwrap(), "{what}");
                // The request this response answers: offered protocols and their metadata.
                let request = requests[&(m.dst.to_string(), m.frame.correlation_id)];
                let GroupBody::JoinGroupRequest(join) = &request.frame.body else { panic!("{what}") };
                assert_eq!(join.group_instance_id.as_deref(), member["group_instance_id"].as_str(), "{what}");
                let offered = member["protocols_offered"].as_array().unwrap();
                assert_eq!(join.protocols.len(), offered.len(), "{what}");
                for (p, want) in join.protocols.iter().zip(offered) {
                    assert_eq!(p.name, want["name"].as_str().unwrap(), "{what}");
                    assert_eq!(hex(&p.metadata.bytes()), want["metadata_hex"].as_str().unwrap(), "{what}");
                    check_subscription(&p.metadata, &want["subscription"], &what);
                }
                // The leader's view of this member.
                let entry = leader.members.iter().find(|e| e.member_id == member_id).expect(&what);
                assert_eq!(entry.group_instance_id.as_deref(), member["group_instance_id"].as_str(), "{what}");
                check_subscription(&entry.metadata, &member["subscription"], &what);
                // Its SyncGroup response in this generation.
                let sync = of_group
                    .iter()
                    .find_map(|m| match &m.frame.body {
                        GroupBody::SyncGroupResponse(s)
                            if s.member_id == member_id
                                && s.generation_id == id
                                && s.response.error == ErrorCode::NONE =>
                        {
                            Some((*m, s))
                        }
                        _ => None,
                    })
                    .expect(&what);
                assert_eq!(i64::from(sync.0.frame.api_version), member["sync_group_version"].as_i64().unwrap());
                check_assignment(
                    &sync.1.response.assignment,
                    &member["assignment"],
                    member["assignment_hex"].as_str().unwrap(),
                    &what,
                );
                // And the leader's SyncGroup request carried the same bytes.
                let sent = of_group
                    .iter()
                    .find_map(|m| match &m.frame.body {
                        GroupBody::SyncGroupRequest(s) if s.generation_id == id && !s.assignments.is_empty() => {
                            s.assignments.iter().find(|a| a.member_id == member_id)
                        }
                        _ => None,
                    })
                    .expect(&what);
                assert_eq!(hex(&sent.assignment.bytes()), member["assignment_hex"].as_str().unwrap(), "{what}");
                checked += 1;
            }
        }
    }
    checked
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pcap")
}

#[test]
fn every_capture_matches_its_sidecar() {
    let mut captures: Vec<PathBuf> = std::fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    captures.sort();
    assert_eq!(captures.len(), 4);
    for capture in captures {
        let n = check_capture(&capture, &capture.with_extension("expect.json"));
        assert!(n >= 5, "{}: {n} members checked", capture.display());
    }
}

#[test]
fn pcapng_conversion_decodes_the_same() {
    let n =
        check_capture(&testdata().join("pcapng/rdkafka-range.pcapng"), &testdata().join("rdkafka-range.expect.json"));
    assert_eq!(n, 8);
    let (_, summary) = read_all(&testdata().join("pcapng/rdkafka-range.pcapng"), ReaderOptions::default());
    assert_eq!(summary.format, "pcapng");
}

#[test]
fn retransmissions_in_the_java_captures_are_counted() {
    let (_, summary) = read_all(&testdata().join("java-cooperative-sticky.pcap"), ReaderOptions::default());
    assert_eq!(summary.retransmitted_segments, 2);
    assert_eq!(summary.kafka_connections, 9);
    assert_eq!(summary.frames.unmatched_responses, 0);
}

#[test]
fn port_filter() {
    let path = testdata().join("rdkafka-range.pcap");
    let (all, _) = read_all(&path, ReaderOptions::default());
    let (with_port, _) = read_all(&path, ReaderOptions { ports: vec![9092], ..ReaderOptions::default() });
    assert_eq!(all.len(), with_port.len());
    let (none, summary) = read_all(&path, ReaderOptions { ports: vec![9093], ..ReaderOptions::default() });
    assert!(none.is_empty());
    assert_eq!(summary.other_connections, summary.tcp_connections);
}

// ---------------------------------------------------------------------------------------------
// Synthetic captures.

const CLIENT: ([u8; 4], u16) = ([10, 0, 0, 1], 40000);
const SERVER: ([u8; 4], u16) = ([10, 0, 0, 2], 9092);

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_owned())
}

fn request<T: Encodable>(key: ApiKey, version: i16, correlation: i32, body: &T) -> Vec<u8> {
    let mut buf = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation)
        .with_client_id(Some(s("synthetic")))
        .encode(&mut buf, key.request_header_version(version))
        .unwrap();
    body.encode(&mut buf, version).unwrap();
    let mut frame = (buf.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&buf);
    frame
}

fn response<T: Encodable>(key: ApiKey, version: i16, correlation: i32, body: &T) -> Vec<u8> {
    let mut buf = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(correlation)
        .encode(&mut buf, key.response_header_version(version))
        .unwrap();
    body.encode(&mut buf, version).unwrap();
    let mut frame = (buf.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&buf);
    frame
}

/// A Metadata v1 request (not a group API) with an empty topic list.
fn metadata_request(correlation: i32) -> Vec<u8> {
    let mut body = BytesMut::new();
    body.put_i16(3);
    body.put_i16(1);
    body.put_i32(correlation);
    body.put_i16(1);
    body.put_u8(b'x');
    body.put_i32(0);
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

/// The two streams of one group round (JoinGroup + SyncGroup at `join_version`/`sync_version`),
/// preceded by a Metadata exchange; returns (client bytes, server bytes, frame sizes).
fn group_round(join_version: i16, sync_version: i16) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let sub = Subscription::new(["orders"]).encode(Version::V1).unwrap();
    let asg = Assignment::new(vec![TopicPartitions::new("orders", vec![0, 2])]).encode(Version::V0).unwrap();
    let join = JoinGroupRequest::default()
        .with_group_id(s("g1").into())
        .with_session_timeout_ms(30000)
        .with_rebalance_timeout_ms(60000)
        .with_member_id(s("m-1"))
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name(s("range"))
            .with_metadata(sub.clone().into())]);
    let joined = JoinGroupResponse::default()
        .with_generation_id(3)
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_leader(s("m-1"))
        .with_member_id(s("m-1"))
        .with_members(vec![JoinGroupResponseMember::default().with_member_id(s("m-1")).with_metadata(sub.into())]);
    let sync = SyncGroupRequest::default()
        .with_group_id(s("g1").into())
        .with_generation_id(3)
        .with_member_id(s("m-1"))
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_assignments(vec![SyncGroupRequestAssignment::default()
            .with_member_id(s("m-1"))
            .with_assignment(asg.clone().into())]);
    let synced = SyncGroupResponse::default()
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_assignment(asg.into());
    let metadata_response = {
        let mut f = 8i32.to_be_bytes().to_vec();
        f.extend_from_slice(&1i32.to_be_bytes());
        f.extend_from_slice(&[0, 0, 0, 0]);
        f
    };
    (
        vec![
            metadata_request(1),
            request(ApiKey::JoinGroup, join_version, 2, &join),
            request(ApiKey::SyncGroup, sync_version, 3, &sync),
        ],
        vec![
            metadata_response,
            response(ApiKey::JoinGroup, join_version, 2, &joined),
            response(ApiKey::SyncGroup, sync_version, 3, &synced),
        ],
    )
}

struct Packet {
    from_client: bool,
    seq: u32,
    syn: bool,
    payload: Vec<u8>,
}

fn checksum_free_tcp(from_client: bool, seq: u32, syn: bool, payload: &[u8], linktype: u32) -> Vec<u8> {
    let (src, dst) = if from_client { (CLIENT, SERVER) } else { (SERVER, CLIENT) };
    let mut tcp = Vec::new();
    tcp.extend_from_slice(&src.1.to_be_bytes());
    tcp.extend_from_slice(&dst.1.to_be_bytes());
    tcp.extend_from_slice(&seq.to_be_bytes());
    tcp.extend_from_slice(&0u32.to_be_bytes());
    tcp.extend_from_slice(&[0x50, if syn { 0x02 } else { 0x18 }, 0xff, 0xff, 0, 0, 0, 0]);
    tcp.extend_from_slice(payload);
    let ip = if linktype == 229 || linktype == 2290 {
        let mut ip = vec![0x60, 0, 0, 0];
        ip.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
        ip.extend_from_slice(&[6, 64]);
        let v6 = |a: [u8; 4]| {
            let mut x = [0u8; 16];
            x[12..].copy_from_slice(&a);
            x
        };
        ip.extend_from_slice(&v6(src.0));
        ip.extend_from_slice(&v6(dst.0));
        ip.extend_from_slice(&tcp);
        ip
    } else {
        let mut ip = vec![0x45, 0];
        ip.extend_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
        ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
        ip.extend_from_slice(&src.0);
        ip.extend_from_slice(&dst.0);
        ip.extend_from_slice(&tcp);
        ip
    };
    match linktype {
        1 => {
            let mut f = vec![0u8; 12];
            f.extend_from_slice(&[0x08, 0x00]);
            f.extend_from_slice(&ip);
            f
        }
        113 => {
            let mut f = vec![0u8; 14];
            f.extend_from_slice(&[0x08, 0x00]);
            f.extend_from_slice(&ip);
            f
        }
        276 => {
            let mut f = vec![0x08, 0x00];
            f.extend_from_slice(&[0u8; 18]);
            f.extend_from_slice(&ip);
            f
        }
        0 => {
            let mut f = 2u32.to_le_bytes().to_vec();
            f.extend_from_slice(&ip);
            f
        }
        _ => ip,
    }
}

/// A classic pcap file (microseconds, little-endian) of `packets`.
fn pcap_file(packets: &[Packet], linktype: u32) -> Vec<u8> {
    let mut out = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&linktype.to_le_bytes());
    for (i, p) in packets.iter().enumerate() {
        let frame = checksum_free_tcp(p.from_client, p.seq, p.syn, &p.payload, linktype);
        out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        out.extend_from_slice(&(i as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    out
}

/// Cuts each stream into segments of at most `mss` bytes, client and server interleaved
/// frame by frame; `syn` adds the handshake.
fn segments(client: &[Vec<u8>], server: &[Vec<u8>], mss: usize, syn: bool) -> Vec<Packet> {
    let (mut cseq, mut sseq) = (1000u32, 5000u32);
    let mut out = Vec::new();
    if syn {
        out.push(Packet { from_client: true, seq: cseq - 1, syn: true, payload: vec![] });
        out.push(Packet { from_client: false, seq: sseq - 1, syn: true, payload: vec![] });
    }
    for (c, s) in client.iter().zip(server) {
        for chunk in c.chunks(mss) {
            out.push(Packet { from_client: true, seq: cseq, syn: false, payload: chunk.to_vec() });
            cseq = cseq.wrapping_add(chunk.len() as u32);
        }
        for chunk in s.chunks(mss) {
            out.push(Packet { from_client: false, seq: sseq, syn: false, payload: chunk.to_vec() });
            sseq = sseq.wrapping_add(chunk.len() as u32);
        }
    }
    out
}

fn decode(file: &[u8]) -> (Vec<GroupMessage>, CaptureSummary) {
    let mut reader = GroupReader::new(file, ReaderOptions::default()).unwrap();
    let messages: Vec<_> = reader.by_ref().collect();
    (messages, reader.summary().clone())
}

/// The four messages of a round, checked in full.
fn assert_round(messages: &[GroupMessage]) {
    // In stream order per direction; across directions the capture order may differ.
    let mut messages = messages.to_vec();
    messages.sort_by_key(|m| (m.frame.correlation_id, m.frame.direction == MessageDirection::Response));
    let kinds: Vec<(&str, MessageDirection)> =
        messages.iter().map(|m| (m.frame.body.api(), m.frame.direction)).collect();
    assert_eq!(
        kinds,
        [
            ("JoinGroup", MessageDirection::Request),
            ("JoinGroup", MessageDirection::Response),
            ("SyncGroup", MessageDirection::Request),
            ("SyncGroup", MessageDirection::Response),
        ]
    );
    let GroupBody::JoinGroupRequest(join) = &messages[0].body_ref() else { panic!() };
    assert_eq!(join.protocols[0].name, "range");
    let sub = join.protocols[0].metadata.subscription().unwrap().view();
    assert_eq!(sub.topics().iter().collect::<Vec<_>>(), ["orders"]);
    assert_eq!(sub.version(), 1);
    assert_eq!((messages[0].src.port(), messages[0].dst.port()), (40000, 9092));
    assert_eq!((messages[1].src.port(), messages[1].dst.port()), (9092, 40000));
    let GroupBody::JoinGroupResponse(joined) = &messages[1].body_ref() else { panic!() };
    assert_eq!((joined.generation_id, joined.leader.as_str(), joined.member_count()), (3, "m-1", 1));
    let members: Vec<_> = joined.members().collect();
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].member_id, "m-1");
    assert!(members[0].metadata.subscription().is_some());
    assert_eq!(joined.to_response().members.len(), 1);
    let GroupBody::SyncGroupResponse(synced) = &messages[3].body_ref() else { panic!() };
    let asg = synced.response.assignment.assignment().unwrap().view();
    assert_eq!(asg.assigned_partitions().iter().map(|g| g.partitions.to_vec()).collect::<Vec<_>>(), [vec![0, 2]]);
    assert_eq!((synced.member_id.as_str(), synced.generation_id, synced.group_id.as_str()), ("m-1", 3, "g1"));
}

trait BodyRef {
    fn body_ref(&self) -> &GroupBody;
}

impl BodyRef for GroupMessage {
    fn body_ref(&self) -> &GroupBody {
        &self.frame.body
    }
}

#[test]
fn every_join_and_sync_version_with_each_link_type() {
    for (join, sync) in [(0, 0), (1, 1), (5, 3), (6, 4), (7, 4), (9, 5)] {
        for linktype in [1, 113, 276, 0, 101, 229] {
            let (c, s) = group_round(join, sync);
            let (messages, summary) = decode(&pcap_file(&segments(&c, &s, 1500, true), linktype));
            assert_round(&messages);
            assert_eq!(messages.iter().map(|m| m.frame.api_version).collect::<Vec<_>>(), [join, join, sync, sync]);
            assert_eq!(summary.kafka_connections, 1, "{join}/{sync} link {linktype}");
            assert_eq!(summary.frames.requests, 3);
            assert_eq!(summary.frames.responses, 3);
        }
    }
}

#[test]
fn frames_split_over_many_segments() {
    let (c, s) = group_round(9, 5);
    let (messages, summary) = decode(&pcap_file(&segments(&c, &s, 7, true), 1));
    assert_round(&messages);
    assert!(summary.tcp_segments > 50);
}

#[test]
fn several_frames_in_one_segment() {
    let (c, s) = group_round(5, 3);
    let (messages, _) = decode(&pcap_file(&segments(&[c.concat()], &[s.concat()], 100_000, true), 1));
    assert_round(&messages);
}

#[test]
fn out_of_order_segments() {
    let (c, s) = group_round(9, 5);
    let mut packets = segments(&c, &s, 10, true);
    // Reverse each run of up to 5 segments of one direction after the handshake (a response
    // cannot be captured before its request is complete, so directions keep their order).
    let tail = packets.split_off(2);
    let mut run: Vec<Packet> = Vec::new();
    for p in tail {
        if run.len() == 5 || run.last().is_some_and(|r| r.from_client != p.from_client) {
            packets.extend(run.drain(..).rev());
        }
        run.push(p);
    }
    packets.extend(run.drain(..).rev());
    let (messages, summary) = decode(&pcap_file(&packets, 1));
    assert_round(&messages);
    assert!(summary.out_of_order_segments > 0);
}

#[test]
fn retransmitted_and_overlapping_segments() {
    let (c, s) = group_round(9, 5);
    let packets = segments(&c, &s, 20, true);
    let mut with_dups = Vec::new();
    for p in packets {
        let again = Packet { from_client: p.from_client, seq: p.seq, syn: p.syn, payload: p.payload.clone() };
        // Also an overlapping segment: the last 5 bytes of this one plus nothing new.
        let overlap = (p.payload.len() > 5).then(|| Packet {
            from_client: p.from_client,
            seq: p.seq.wrapping_add(p.payload.len() as u32 - 5),
            syn: false,
            payload: p.payload[p.payload.len() - 5..].to_vec(),
        });
        with_dups.push(p);
        with_dups.push(again);
        with_dups.extend(overlap);
    }
    let (messages, summary) = decode(&pcap_file(&with_dups, 1));
    assert_round(&messages);
    assert!(summary.retransmitted_segments > 10);
}

#[test]
fn capture_starting_mid_stream() {
    let (c, s) = group_round(9, 5);
    // Start inside the Metadata exchange: no handshake, first bytes are the tail of a frame.
    let client: Vec<Vec<u8>> = vec![c[0][9..].to_vec(), c[1].clone(), c[2].clone()];
    let server: Vec<Vec<u8>> = vec![s[0][5..].to_vec(), s[1].clone(), s[2].clone()];
    let (messages, summary) = decode(&pcap_file(&segments(&client, &server, 1500, false), 1));
    assert_round(&messages);
    assert!(summary.frames.resyncs >= 2);
    // The broker's bytes come first (held until the client's side shows a request).
    let mut packets = segments(&client, &server, 1500, false);
    packets.swap(0, 1);
    assert!(!packets[0].from_client);
    let (messages, summary) = decode(&pcap_file(&packets, 1));
    assert_round(&messages);
    assert_eq!(summary.kafka_connections, 1);
}

#[test]
fn truncated_capture_keeps_what_came_before() {
    let (c, s) = group_round(9, 5);
    let file = pcap_file(&segments(&c, &s, 1500, true), 1);
    // Cut in the middle of the last packet (the SyncGroup response).
    let cut = &file[..file.len() - 10];
    let (messages, summary) = decode(cut);
    assert_eq!(messages.len(), 3);
    assert!(summary.truncated_capture);
    assert_eq!(summary.frames.incomplete_frames, 0);
}

#[test]
fn snap_length_cut_segment_is_a_gap() {
    let (c, s) = group_round(9, 5);
    let mut file = pcap_file(&segments(&c, &s, 1500, true), 1);
    // Rewrite the last record (SyncGroup response) as captured with only 60 bytes.
    let total = file.len();
    let mut at = 24;
    let mut last = 24;
    while at < total {
        last = at;
        at += 16 + u32::from_le_bytes(file[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    let incl = 60u32;
    file[last + 8..last + 12].copy_from_slice(&incl.to_le_bytes());
    file.truncate(last + 16 + incl as usize);
    let (messages, summary) = decode(&file);
    assert_eq!(messages.len(), 3);
    assert_eq!(summary.truncated_segments, 1);
    assert!(summary.stream_gaps >= 1);
}

#[test]
fn garbage_and_other_traffic_are_skipped() {
    // Not a capture at all.
    assert!(GroupReader::new(&b"garbage garbage garbage"[..], ReaderOptions::default()).is_err());
    // A capture of HTTP and random bytes, and a Kafka round afterwards on another connection.
    let mut packets = vec![
        Packet { from_client: true, seq: 1, syn: false, payload: b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec() },
        Packet { from_client: false, seq: 1, syn: false, payload: b"HTTP/1.1 200 OK\r\n\r\n".to_vec() },
    ];
    let mut state = 12345u32;
    for i in 0..20 {
        let payload: Vec<u8> = (0..200)
            .map(|_| {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (state >> 16) as u8
            })
            .collect();
        packets.push(Packet { from_client: i % 2 == 0, seq: 100 + i * 200, syn: false, payload });
    }
    let file = pcap_file(&packets, 1);
    let (messages, summary) = decode(&file);
    assert!(messages.is_empty());
    assert_eq!(summary.kafka_connections, 0);
    assert_eq!(summary.packets, 22);
    // Garbage link-layer frames and non-TCP packets.
    let mut file = pcap_file(&[], 1);
    for frame in [&[0u8; 3][..], &[0xffu8; 60][..], &[0u8; 14][..]] {
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        file.extend_from_slice(frame);
    }
    let (messages, summary) = decode(&file);
    assert!(messages.is_empty());
    assert_eq!(summary.packets, 3);
    assert_eq!(summary.malformed_packets + summary.non_tcp_packets, 3);
}

#[test]
fn pcapng_blocks_written_here() {
    let (c, s) = group_round(7, 4);
    let packets = segments(&c, &s, 1500, true);
    let mut out = Vec::new();
    let block = |out: &mut Vec<u8>, kind: u32, body: &[u8]| {
        let len = 12 + body.len().div_ceil(4) * 4;
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(body);
        out.resize(out.len() + (len - 12 - body.len()), 0);
        out.extend_from_slice(&(len as u32).to_le_bytes());
    };
    let mut shb = 0x1a2b3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut out, 0x0a0d0d0a, &shb);
    let mut idb = 276u16.to_le_bytes().to_vec(); // Linux SLL2
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&0u32.to_le_bytes());
    block(&mut out, 1, &idb);
    for (i, p) in packets.iter().enumerate() {
        let frame = checksum_free_tcp(p.from_client, p.seq, p.syn, &p.payload, 276);
        let mut epb = 0u32.to_le_bytes().to_vec();
        let ts: u64 = 1_700_000_000_000_000 + i as u64;
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(&frame);
        block(&mut out, 6, &epb);
    }
    let (messages, summary) = decode(&out);
    assert_eq!(summary.format, "pcapng");
    assert_round(&messages);
    assert_eq!(messages[0].timestamp.as_secs(), 1_700_000_000);
}

#[test]
fn small_read_buffer_grows_for_big_blocks() {
    let path = testdata().join("java-cooperative-sticky.pcap");
    let (all, _) = read_all(&path, ReaderOptions::default());
    // 4 KiB is smaller than some records (snap length 16384): the buffer must grow.
    let (small, summary) = read_all(&path, ReaderOptions { read_buffer: 4096, ..ReaderOptions::default() });
    assert_eq!(all.len(), small.len());
    assert!(summary.capture_error.is_none() && !summary.truncated_capture);
    let pcapng = testdata().join("pcapng/rdkafka-range.pcapng");
    let (ng, _) = read_all(&pcapng, ReaderOptions { read_buffer: 4096, ..ReaderOptions::default() });
    assert_eq!(ng.len(), 38);
}

#[test]
fn tiny_memory_limits_degrade_without_panicking() {
    let path = testdata().join("mixed-java-rdkafka.pcap");
    let (all, _) = read_all(&path, ReaderOptions::default());
    let limited = |options: ReaderOptions| {
        let (messages, summary) = read_all(&path, options);
        assert!(messages.len() < all.len(), "{summary:?}");
        for m in &messages {
            assert!(matches!(m.frame.body.api(), "JoinGroup" | "SyncGroup"));
        }
        summary
    };
    let s = limited(ReaderOptions { max_group_frame: 200, ..ReaderOptions::default() });
    assert!(s.frames.oversized_frames > 0);
    let s = limited(ReaderOptions { max_connections: 2, ..ReaderOptions::default() });
    assert!(s.connections_over_limit > 0);
    // Frames split over small segments must be buffered: a 50-byte budget drops them.
    let (c, s) = group_round(9, 5);
    let file = pcap_file(&segments(&c, &s, 7, true), 1);
    let mut reader =
        GroupReader::new(&file[..], ReaderOptions { max_total_buffered: 50, ..ReaderOptions::default() }).unwrap();
    let messages: Vec<_> = reader.by_ref().collect();
    assert!(messages.len() < 4);
    assert!(reader.summary().streams_dropped_for_memory > 0);
}

#[test]
fn ports_reused_by_a_new_connection() {
    let (c, s) = group_round(5, 3);
    let mut packets = segments(&c, &s, 1500, true);
    // The same round again on the same ports with new initial sequence numbers.
    for p in segments(&c, &s, 1500, true) {
        packets.push(Packet { seq: p.seq.wrapping_add(7_000_000), ..p });
    }
    let (messages, summary) = decode(&pcap_file(&packets, 1));
    assert_eq!(messages.len(), 8);
    assert_round(&messages[..4]);
    assert_round(&messages[4..]);
    assert_eq!(summary.tcp_connections, 2);
}

#[test]
fn cut_and_corrupted_real_captures_never_panic() {
    let full = std::fs::read(testdata().join("mixed-java-rdkafka.pcap")).unwrap();
    let (all, _) = decode(&full);
    let mut state = 0x2545_f491_u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..20 {
        let cut = 24 + next(full.len() - 24);
        let (messages, summary) = decode(&full[..cut]);
        assert!(messages.len() <= all.len());
        // Every record boundary is a clean end; anything else is a truncated capture.
        assert!(summary.truncated_capture || summary.packets > 0 || cut < 40);
    }
    for _ in 0..20 {
        let mut bytes = full.clone();
        for _ in 0..8 {
            let at = 24 + next(bytes.len() - 24);
            bytes[at] ^= 1 << next(8);
        }
        let mut reader = GroupReader::new(&bytes[..], ReaderOptions::default()).unwrap();
        let n = reader.by_ref().count() as u64;
        assert_eq!(reader.summary().messages, n);
    }
}

/// A little-endian pcapng block of `kind` around `body` (padded to 4 bytes).
fn ng_block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let len = 12 + body.len().div_ceil(4) * 4;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(body);
    out.resize(out.len() + (len - 12 - body.len()), 0);
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

/// A pcapng capture of one group round on an Ethernet interface whose `if_tsresol` option is
/// `tsresol` (none when `None`), timestamps `ts(i)` in that unit.
fn pcapng_round(tsresol: Option<u8>, ts: impl Fn(usize) -> u64) -> Vec<u8> {
    let (c, s) = group_round(7, 4);
    let packets = segments(&c, &s, 1500, true);
    let mut out = Vec::new();
    let mut shb = 0x1a2b3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    ng_block(&mut out, 0x0a0d0d0a, &shb);
    let mut idb = 1u16.to_le_bytes().to_vec();
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&0u32.to_le_bytes());
    if let Some(r) = tsresol {
        // if_tsresol (code 9, length 1), padded; then opt_endofopt.
        idb.extend_from_slice(&[9, 0, 1, 0, r, 0, 0, 0, 0, 0, 0, 0]);
    }
    ng_block(&mut out, 1, &idb);
    for (i, p) in packets.iter().enumerate() {
        let frame = checksum_free_tcp(p.from_client, p.seq, p.syn, &p.payload, 1);
        let mut epb = 0u32.to_le_bytes().to_vec();
        let t = ts(i);
        epb.extend_from_slice(&((t >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(t as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(&frame);
        ng_block(&mut out, 6, &epb);
    }
    out
}

#[test]
fn pcapng_binary_timestamp_resolutions_are_honoured() {
    // 2^-20 s units (if_tsresol 0x94): pcap-parser 0.16 refuses every binary resolution, and
    // read as microseconds these timestamps were dates in the year 59813.
    let file = pcapng_round(Some(0x80 | 20), |i| (1_700_000_000u64 << 20) + (i as u64) * (1 << 19));
    let (messages, summary) = decode(&file);
    assert_round(&messages);
    assert!(summary.capture_error.is_none());
    assert_eq!(messages[0].timestamp.as_secs() / 1000, 1_700_000);
    // Decimal nanoseconds (if_tsresol 9) still read as before.
    let file = pcapng_round(Some(9), |i| 1_700_000_000_000_000_000 + i as u64);
    let (messages, _) = decode(&file);
    assert_eq!(messages[0].timestamp.as_secs(), 1_700_000_000);
}

/// The classic pcap of one group round, with a record of `big` zero bytes (not TCP) first.
fn round_after_a_big_record(big: usize) -> Vec<u8> {
    let (c, s) = group_round(7, 4);
    let file = pcap_file(&segments(&c, &s, 1500, true), 1);
    let mut out = file[..24].to_vec();
    out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(big as u32).to_le_bytes());
    out.extend_from_slice(&(big as u32).to_le_bytes());
    out.resize(out.len() + big, 0);
    out.extend_from_slice(&file[24..]);
    out
}

#[test]
fn blocks_over_a_mebibyte_grow_the_buffer_and_the_rest_is_read() {
    // 3 MiB: above the default 1 MiB read buffer (pcap-parser's BufferTooSmall used to end the
    // capture there, with every message after it silently dropped).
    let (messages, summary) = decode(&round_after_a_big_record(3 << 20));
    assert_eq!(summary.capture_error, None);
    assert_eq!(summary.non_tcp_packets, 1);
    assert_round(&messages);
}

#[test]
fn a_block_over_the_limit_is_a_reported_capture_error() {
    let (messages, summary) = decode(&round_after_a_big_record(65 << 20));
    assert!(messages.is_empty());
    let error = summary.capture_error.expect("reported, not silent");
    assert!(error.contains("larger than the 64 MiB block limit"), "{error}");
}

#[test]
fn corrupt_block_errors_never_carry_the_block() {
    // An enhanced packet block of 1 MiB whose trailing length disagrees with its leading one.
    let mut file = pcapng_round(None, |i| i as u64);
    let mut epb = vec![0u8; 20];
    epb.resize(1 << 20, 0x41);
    let len = (12 + epb.len()) as u32;
    file.extend_from_slice(&6u32.to_le_bytes());
    file.extend_from_slice(&len.to_le_bytes());
    file.extend_from_slice(&epb);
    file.extend_from_slice(&(len + 4).to_le_bytes());
    let (messages, summary) = decode(&file);
    assert_round(&messages);
    let error = summary.capture_error.expect("corrupt");
    assert!(error.len() < 200, "{} bytes: {}", error.len(), &error[..200.min(error.len())]);
    assert!(error.starts_with("corrupt capture at byte "), "{error}");
}
