//! A fake one-broker Kafka cluster on loopback for `kcp serve`'s scale benchmark (issue 35:
//! 10,000 groups and 100,000 partitions, where a real broker is too slow to set up on two cores).
//!
//! ```sh
//! cargo run --release --example fake_cluster -- --port 27090 --groups 10000 --partitions 10
//! ```
//!
//! Group `scale-g-NNNNN` is a Stable classic group of `--members` members (real Subscription and
//! Assignment payloads, range-style) reading its own topic `scale-t-NNNNN` of `--partitions`
//! partitions. Every partition's log runs from 0 to 1,000; every group has committed 900 (lag
//! 100), and a Fetch at 900 answers one record written a minute ago, so every partition gets a lag
//! in seconds by the `fetch` method. The broker advertises a Kafka 3.9-like set of versions and
//! is the coordinator and the leader of everything. Every request is counted: when a ListGroups
//! starts a collection, the counts since the previous one are printed as one JSON line on stdout.
//! Answers are built per request; no state is kept but the counts.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions, OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{decode_request_header_from_buffer, Decodable, Encodable, StrBytes};
use kafka_protocol::records::{Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const LOG_END: i64 = 1_000;
const COMMITTED: i64 = 900;

#[derive(Clone, Copy)]
struct Layout {
    port: u16,
    groups: usize,
    partitions: i32,
    members: usize,
}

fn group_name(i: usize) -> String {
    format!("scale-g-{i:05}")
}
fn topic_name(i: usize) -> String {
    format!("scale-t-{i:05}")
}
/// The group number of a group or topic name, if it is one of ours.
fn index_of(name: &str, layout: Layout) -> Option<usize> {
    let n: usize = name.rsplit('-').next()?.parse().ok()?;
    (n < layout.groups).then_some(n)
}
fn s(text: impl Into<String>) -> StrBytes {
    StrBytes::from_string(text.into())
}

fn parse() -> Layout {
    let mut layout = Layout { port: 27090, groups: 1000, partitions: 10, members: 3 };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--port" => layout.port = value.parse().expect("--port"),
            "--groups" => layout.groups = value.parse().expect("--groups"),
            "--partitions" => layout.partitions = value.parse().expect("--partitions"),
            "--members" => layout.members = value.parse().expect("--members"),
            _ => panic!("unknown flag {flag}: --port P --groups N --partitions N --members N"),
        }
    }
    layout
}

fn versions() -> Vec<ApiVersion> {
    // A Kafka 3.9-like range for each API kcp serve uses (no ConsumerGroupDescribe: classic only).
    [(1, 4, 12), (2, 1, 8), (3, 0, 12), (9, 0, 9), (10, 0, 4), (15, 0, 5), (16, 0, 4), (18, 0, 3)]
        .into_iter()
        .map(|(key, min, max)| ApiVersion::default().with_api_key(key).with_min_version(min).with_max_version(max))
        .collect()
}

fn encode<M: Encodable>(message: &M, version: i16) -> Vec<u8> {
    let mut buf = BytesMut::new();
    message.encode(&mut buf, version).expect("response encodes");
    buf.to_vec()
}

fn members(layout: Layout, group: usize) -> Vec<DescribedGroupMember> {
    let topic = topic_name(group);
    let subscription = Bytes::from(Subscription::new([topic.clone()]).encode(Version::V3).expect("encodes"));
    (0..layout.members)
        .map(|m| {
            let owned: Vec<i32> = (0..layout.partitions).filter(|p| *p as usize % layout.members == m).collect();
            let assignment = Assignment::new(vec![TopicPartitions::new(topic.clone(), owned)]);
            DescribedGroupMember::default()
                .with_member_id(s(format!("consumer-{group}-{m}-0b6f1d2e-3c4a-4b5c-9d8e-7f6a5b4c3d2e")))
                .with_client_id(s(format!("consumer-{group}-{m}")))
                .with_client_host(s("/127.0.0.1"))
                .with_member_metadata(subscription.clone())
                .with_member_assignment(Bytes::from(assignment.encode(Version::V3).expect("encodes")))
        })
        .collect()
}

fn one_record_batch(offset: i64) -> Bytes {
    let now = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(0);
    let record = Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset,
        sequence: -1,
        timestamp: now - 60_000,
        key: None,
        value: Some(Bytes::from_static(b"a record of twenty b")),
        headers: Default::default(),
    };
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        [&record],
        &RecordEncodeOptions { version: 2, compression: Compression::None },
    )
    .expect("batch encodes");
    buf.freeze()
}

fn answer(layout: Layout, api: i16, version: i16, body: &mut Bytes) -> Vec<u8> {
    match api {
        18 => encode(&ApiVersionsResponse::default().with_api_keys(versions()), version),
        3 => {
            let request = MetadataRequest::decode(body, version).expect("Metadata");
            let names: Vec<String> = match request.topics {
                None => (0..layout.groups).map(topic_name).collect(),
                Some(topics) => topics.into_iter().filter_map(|t| t.name.map(|n| n.to_string())).collect(),
            };
            let topics = names
                .into_iter()
                .map(|name| {
                    if index_of(&name, layout).is_none() {
                        return MetadataResponseTopic::default().with_name(Some(s(name).into())).with_error_code(3);
                    }
                    let partitions = (0..layout.partitions)
                        .map(|p| {
                            MetadataResponsePartition::default()
                                .with_partition_index(p)
                                .with_leader_id(1.into())
                                .with_replica_nodes(vec![1.into()])
                                .with_isr_nodes(vec![1.into()])
                        })
                        .collect();
                    MetadataResponseTopic::default().with_name(Some(s(name).into())).with_partitions(partitions)
                })
                .collect();
            let broker = MetadataResponseBroker::default()
                .with_node_id(1.into())
                .with_host(s("127.0.0.1"))
                .with_port(layout.port.into());
            encode(
                &MetadataResponse::default()
                    .with_brokers(vec![broker])
                    .with_cluster_id(Some(s("fake-cluster")))
                    .with_controller_id(1.into())
                    .with_topics(topics),
                version,
            )
        }
        10 => {
            let request = FindCoordinatorRequest::decode(body, version).expect("FindCoordinator");
            if version < 4 {
                let response = FindCoordinatorResponse::default()
                    .with_node_id(1.into())
                    .with_host(s("127.0.0.1"))
                    .with_port(layout.port.into());
                return encode(&response, version);
            }
            let mut response = FindCoordinatorResponse::default();
            response.coordinators = request
                .coordinator_keys
                .into_iter()
                .map(|key| {
                    Coordinator::default()
                        .with_key(key)
                        .with_node_id(1.into())
                        .with_host(s("127.0.0.1"))
                        .with_port(layout.port.into())
                })
                .collect();
            encode(&response, version)
        }
        16 => {
            let groups = (0..layout.groups)
                .map(|i| {
                    ListedGroup::default()
                        .with_group_id(s(group_name(i)).into())
                        .with_protocol_type(s("consumer"))
                        .with_group_state(s("Stable"))
                        .with_group_type(s("classic"))
                })
                .collect();
            encode(&ListGroupsResponse::default().with_groups(groups), version)
        }
        15 => {
            let request = DescribeGroupsRequest::decode(body, version).expect("DescribeGroups");
            let groups = request
                .groups
                .into_iter()
                .map(|g| match index_of(&g, layout) {
                    Some(i) => DescribedGroup::default()
                        .with_group_id(g)
                        .with_group_state(s("Stable"))
                        .with_protocol_type(s("consumer"))
                        .with_protocol_data(s("range"))
                        .with_members(members(layout, i)),
                    None => DescribedGroup::default().with_group_id(g).with_group_state(s("Dead")),
                })
                .collect();
            encode(&DescribeGroupsResponse::default().with_groups(groups), version)
        }
        9 => {
            let request = OffsetFetchRequest::decode(body, version).expect("OffsetFetch");
            let partitions = |topic: usize| -> Vec<(String, Vec<i32>)> {
                vec![(topic_name(topic), (0..layout.partitions).collect())]
            };
            if version >= 8 {
                let groups = request
                    .groups
                    .into_iter()
                    .map(|g| {
                        let topics = index_of(&g.group_id, layout)
                            .map(|i| {
                                partitions(i)
                                    .into_iter()
                                    .map(|(name, ps)| {
                                        OffsetFetchResponseTopics::default().with_name(s(name).into()).with_partitions(
                                            ps.into_iter()
                                                .map(|p| {
                                                    OffsetFetchResponsePartitions::default()
                                                        .with_partition_index(p)
                                                        .with_committed_offset(COMMITTED)
                                                        .with_committed_leader_epoch(0)
                                                })
                                                .collect(),
                                        )
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        OffsetFetchResponseGroup::default().with_group_id(g.group_id).with_topics(topics)
                    })
                    .collect();
                encode(&OffsetFetchResponse::default().with_groups(groups), version)
            } else {
                let topics = index_of(&request.group_id, layout)
                    .map(|i| {
                        partitions(i)
                            .into_iter()
                            .map(|(name, ps)| {
                                OffsetFetchResponseTopic::default().with_name(s(name).into()).with_partitions(
                                    ps.into_iter()
                                        .map(|p| {
                                            OffsetFetchResponsePartition::default()
                                                .with_partition_index(p)
                                                .with_committed_offset(COMMITTED)
                                                .with_committed_leader_epoch(0)
                                        })
                                        .collect(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                encode(&OffsetFetchResponse::default().with_topics(topics), version)
            }
        }
        2 => {
            let request = ListOffsetsRequest::decode(body, version).expect("ListOffsets");
            let topics = request
                .topics
                .into_iter()
                .map(|t| {
                    let partitions = t
                        .partitions
                        .into_iter()
                        .map(|p| {
                            let offset = if p.timestamp == -2 { 0 } else { LOG_END };
                            ListOffsetsPartitionResponse::default()
                                .with_partition_index(p.partition_index)
                                .with_timestamp(-1)
                                .with_offset(offset)
                                .with_leader_epoch(0)
                        })
                        .collect();
                    ListOffsetsTopicResponse::default().with_name(t.name).with_partitions(partitions)
                })
                .collect();
            encode(&ListOffsetsResponse::default().with_topics(topics), version)
        }
        1 => {
            let request = FetchRequest::decode(body, version).expect("Fetch");
            let responses = request
                .topics
                .into_iter()
                .map(|t| {
                    let partitions = t
                        .partitions
                        .into_iter()
                        .map(|p| {
                            PartitionData::default()
                                .with_partition_index(p.partition)
                                .with_high_watermark(LOG_END)
                                .with_last_stable_offset(LOG_END)
                                .with_log_start_offset(0)
                                .with_records(Some(one_record_batch(p.fetch_offset)))
                        })
                        .collect();
                    FetchableTopicResponse::default().with_topic(t.topic).with_partitions(partitions)
                })
                .collect();
            encode(&FetchResponse::default().with_responses(responses), version)
        }
        other => panic!("the fake cluster does not answer API {other}"),
    }
}

fn frame(api: i16, version: i16, correlation_id: i32, body: &[u8]) -> Vec<u8> {
    let header_version = ApiKey::try_from(api).expect("known API").response_header_version(version);
    let mut header = BytesMut::new();
    ResponseHeader::default().with_correlation_id(correlation_id).encode(&mut header, header_version).expect("header");
    let mut out = BytesMut::new();
    out.put_i32(i32::try_from(header.len() + body.len()).expect("fits"));
    out.put_slice(&header);
    out.put_slice(body);
    out.to_vec()
}

type Counts = Arc<Mutex<BTreeMap<&'static str, u64>>>;

fn api_name(api: i16) -> &'static str {
    match api {
        1 => "Fetch",
        2 => "ListOffsets",
        3 => "Metadata",
        9 => "OffsetFetch",
        10 => "FindCoordinator",
        15 => "DescribeGroups",
        16 => "ListGroups",
        18 => "ApiVersions",
        _ => "other",
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let layout = parse();
    let listener = TcpListener::bind(("127.0.0.1", layout.port)).await.expect("bind");
    eprintln!(
        "fake cluster on 127.0.0.1:{}: {} groups x {} members, {} topics x {} partitions",
        layout.port, layout.groups, layout.members, layout.groups, layout.partitions
    );
    let counts: Counts = Arc::default();
    loop {
        let Ok((mut stream, _)) = listener.accept().await else { continue };
        let counts = counts.clone();
        tokio::spawn(async move {
            loop {
                let mut size = [0u8; 4];
                if stream.read_exact(&mut size).await.is_err() {
                    return;
                }
                let size = i32::from_be_bytes(size);
                if !(0..=100 << 20).contains(&size) {
                    return;
                }
                let mut buf = vec![0u8; usize::try_from(size).unwrap_or(0)];
                if stream.read_exact(&mut buf).await.is_err() {
                    return;
                }
                let mut body = Bytes::from(buf);
                let peek = body.clone().get_i16();
                let header = match decode_request_header_from_buffer(&mut body) {
                    Ok(h) => h,
                    Err(e) => panic!("request header of API {peek}: {e}"),
                };
                let api = header.request_api_key;
                {
                    let mut c = counts.lock().expect("counts");
                    if api == 16 && !c.is_empty() {
                        println!("{}", serde_json::to_string(&*c).expect("json"));
                        c.clear();
                    }
                    *c.entry(api_name(api)).or_default() += 1;
                }
                let reply = answer(layout, api, header.request_api_version, &mut body);
                let out = frame(api, header.request_api_version, header.correlation_id, &reply);
                if stream.write_all(&out).await.is_err() {
                    return;
                }
            }
        });
    }
}
