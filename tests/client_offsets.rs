//! OffsetFetch and ListOffsets against fake brokers on loopback: the fewest requests (groups
//! batched per coordinator, partitions per leader), the fallback for brokers without batched
//! OffsetFetch, and every gap (group errors, partition errors, a leader that moved, a partition
//! without a leader, an unknown topic, hostile counts and offsets) reported in its place while
//! the rest is answered.
#![allow(clippy::type_complexity)]

mod client_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use client_support::*;
use kafka_consumer_protocol::client::{
    Client, ClientConfig, Deadline, ErrorKind, IsolationLevel, OffsetSpec, OFFSET_FETCH_BATCHED_VERSION,
};
use kafka_consumer_protocol::TopicPartitions;
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::*;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Message, StrBytes};

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(20))
}

fn client_for(address: &str) -> Client {
    let mut config = ClientConfig::new([address]).unwrap();
    config.retry_backoff = Duration::from_millis(5);
    config.retry_backoff_max = Duration::from_millis(20);
    Client::new(config).unwrap()
}

/// The client's APIs plus OffsetFetch and ListOffsets at `kafka-protocol`'s full ranges.
fn apis() -> Vec<ApiVersion> {
    fn range<R: Message>(key: i16) -> ApiVersion {
        ApiVersion::default().with_api_key(key).with_min_version(R::VERSIONS.min).with_max_version(R::VERSIONS.max)
    }
    let mut apis = all_api_versions();
    apis.push(range::<OffsetFetchRequest>(9));
    apis.push(range::<ListOffsetsRequest>(2));
    apis
}

/// FindCoordinator: every group on node 1 at `port`.
fn find_coordinator(port: u16, r: &Seen) -> Reply {
    let request: FindCoordinatorRequest = r.decode();
    if r.version >= 4 {
        let coordinators = request
            .coordinator_keys
            .iter()
            .map(|k| {
                Coordinator::default()
                    .with_key(k.clone())
                    .with_node_id(1.into())
                    .with_host(s("127.0.0.1"))
                    .with_port(port as i32)
            })
            .collect();
        body(&FindCoordinatorResponse::default().with_coordinators(coordinators), r.version)
    } else {
        body(
            &FindCoordinatorResponse::default().with_node_id(1.into()).with_host(s("127.0.0.1")).with_port(port as i32),
            r.version,
        )
    }
}

/// The committed offsets the fake coordinator holds: group "orders" has three partitions
/// (one without a commit, one with an error, one with a hostile offset besides good ones);
/// "denied" may not be read, "gone" was deleted.
fn group_answer(group: &str) -> (i16, Vec<(&'static str, i32, i64, i32, Option<&'static str>, i16)>) {
    match group {
        "orders" => (
            0,
            vec![
                ("orders", 1, 40, 3, Some("m1"), 0),
                ("orders", 0, 15, 3, Some(""), 0),
                ("orders", 2, -1, -1, None, 0),
                ("payments", 0, -1, -1, None, 88),
                ("payments", 1, -7, -1, None, 0),
            ],
        ),
        "denied" => (30, vec![]),
        "gone" => (69, vec![]),
        _ => (0, vec![]),
    }
}

fn offset_fetch(r: &Seen) -> Reply {
    let request: OffsetFetchRequest = r.decode();
    if r.version >= 8 {
        let groups = request
            .groups
            .iter()
            .map(|g| {
                assert_eq!(g.topics, None, "all topics");
                let (code, rows) = group_answer(g.group_id.as_str());
                let mut topics: Vec<OffsetFetchResponseTopics> = Vec::new();
                for (topic, partition, offset, epoch, metadata, error) in rows {
                    let p = OffsetFetchResponsePartitions::default()
                        .with_partition_index(partition)
                        .with_committed_offset(offset)
                        .with_committed_leader_epoch(epoch)
                        .with_metadata(metadata.map(s))
                        .with_error_code(error);
                    match topics.iter_mut().find(|t| t.name.as_str() == topic) {
                        Some(t) => t.partitions.push(p),
                        None => topics.push(
                            OffsetFetchResponseTopics::default()
                                .with_name(TopicName(s(topic)))
                                .with_partitions(vec![p]),
                        ),
                    }
                }
                OffsetFetchResponseGroup::default()
                    .with_group_id(g.group_id.clone())
                    .with_topics(topics)
                    .with_error_code(code)
            })
            .collect();
        body(&OffsetFetchResponse::default().with_groups(groups), r.version)
    } else {
        assert_eq!(request.topics, None, "all topics");
        let (code, rows) = group_answer(request.group_id.as_str());
        let mut topics: Vec<OffsetFetchResponseTopic> = Vec::new();
        for (topic, partition, offset, epoch, metadata, error) in rows {
            let p = OffsetFetchResponsePartition::default()
                .with_partition_index(partition)
                .with_committed_offset(offset)
                .with_committed_leader_epoch(epoch)
                .with_metadata(metadata.map(s))
                .with_error_code(error);
            match topics.iter_mut().find(|t| t.name.as_str() == topic) {
                Some(t) => t.partitions.push(p),
                None => topics
                    .push(OffsetFetchResponseTopic::default().with_name(TopicName(s(topic))).with_partitions(vec![p])),
            }
        }
        body(&OffsetFetchResponse::default().with_topics(topics).with_error_code(code), r.version)
    }
}

async fn coordinator(max_offset_fetch: i16) -> FakeBroker {
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let broker = start(move |r| {
        let port = p.load(Ordering::SeqCst) as u16;
        match r.api_key {
            18 => api_versions(r, cap(apis(), 9, max_offset_fetch)),
            3 => body(
                &MetadataResponse::default().with_brokers(vec![MetadataResponseBroker::default()
                    .with_node_id(1.into())
                    .with_host(s("127.0.0.1"))
                    .with_port(port as i32)]),
                r.version,
            ),
            10 => find_coordinator(port, r),
            9 => offset_fetch(r),
            key => panic!("unexpected api {key}"),
        }
    })
    .await;
    port.store(broker.port as usize, Ordering::SeqCst);
    broker
}

async fn check_committed(client: &Client) {
    let answers = client.fetch_committed_offsets(&["orders", "denied", "gone", "empty", "orders"], deadline()).await;
    let answers = answers.unwrap();
    assert_eq!(answers.len(), 4, "one answer per distinct group");
    let orders = answers[0].as_ref().unwrap();
    assert_eq!(orders.group_id, "orders");
    let rows: Vec<(&str, i32, Option<i64>, Option<i32>, Option<&str>)> = orders
        .offsets
        .iter()
        .map(|o| (o.topic.as_str(), o.partition, o.offset, o.leader_epoch, o.metadata.as_deref()))
        .collect();
    assert_eq!(
        rows,
        [
            ("orders", 0, Some(15), Some(3), Some("")),
            ("orders", 1, Some(40), Some(3), Some("m1")),
            ("orders", 2, None, None, None),
            ("payments", 0, None, None, None),
            ("payments", 1, None, None, None),
        ],
        "(topic, partition) order; -1 is no commit"
    );
    assert!(orders.offsets[..3].iter().all(|o| o.error.is_none()));
    let unstable = orders.get("payments", 0).unwrap().error.as_ref().unwrap();
    assert!(unstable.message().contains("UNSTABLE_OFFSET_COMMIT (88)"), "{unstable}");
    assert!(unstable.message().contains("payments-0"), "{unstable}");
    let hostile = orders.get("payments", 1).unwrap().error.as_ref().unwrap();
    assert_eq!(hostile.kind(), ErrorKind::Protocol);
    assert!(hostile.message().contains("committed offset -7 is not an offset"), "{hostile}");
    let denied = answers[1].as_ref().unwrap_err();
    assert_eq!(denied.kind(), ErrorKind::Authorization, "{denied}");
    assert!(denied.message().contains("group 'denied'"), "{denied}");
    assert_eq!(answers[2].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    assert!(answers[3].as_ref().unwrap().offsets.is_empty());
}

#[tokio::test]
async fn offset_fetch_batches_every_group_of_a_coordinator() {
    let broker = coordinator(OffsetFetchRequest::VERSIONS.max).await;
    let client = client_for(&broker.address());
    check_committed(&client).await;
    let fetches: Vec<Seen> = broker.seen().into_iter().filter(|s| s.api_key == 9).collect();
    assert_eq!(fetches.len(), 1, "one OffsetFetch for four groups");
    assert!(fetches[0].version >= OFFSET_FETCH_BATCHED_VERSION);
    let request: OffsetFetchRequest = fetches[0].decode();
    let groups: Vec<&str> = request.groups.iter().map(|g| g.group_id.as_str()).collect();
    assert_eq!(groups, ["orders", "denied", "gone", "empty"]);
    assert!(!request.require_stable);
}

#[tokio::test]
async fn offset_fetch_falls_back_to_one_request_per_group() {
    let broker = coordinator(7).await;
    let client = client_for(&broker.address());
    check_committed(&client).await;
    let fetches: Vec<Seen> = broker.seen().into_iter().filter(|s| s.api_key == 9).collect();
    assert_eq!(fetches.len(), 4, "one OffsetFetch per group below v8");
    assert!(fetches.iter().all(|f| f.version == 7));
    let mut groups: Vec<String> =
        fetches.iter().map(|f| f.decode::<OffsetFetchRequest>().group_id.as_str().to_string()).collect();
    groups.sort();
    assert_eq!(groups, ["denied", "empty", "gone", "orders"]);
}

#[tokio::test]
async fn offset_fetch_needs_v2() {
    let broker = coordinator(1).await;
    let client = client_for(&broker.address());
    let answers = client.fetch_committed_offsets(&["orders"], deadline()).await.unwrap();
    let e = answers[0].as_ref().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    assert!(e.message().contains("up to v1"), "{e}");
}

/// A two-broker cluster for ListOffsets. Topic "orders": partition 0 led by node 1, partition 1
/// led by node 2 in the first metadata and by node 1 after (node 2 answers
/// NOT_LEADER_OR_FOLLOWER for it), partition 2 without a leader; partition 3 led by node 2,
/// which answers a negative log end for it. Topic "ghost" does not exist.
struct Leaders {
    node1: FakeBroker,
    node2: FakeBroker,
    metadata_calls: Arc<AtomicUsize>,
}

fn list_offsets_reply(node: i32, r: &Seen, isolation: &Mutex<Vec<i8>>) -> Reply {
    let request: ListOffsetsRequest = r.decode();
    assert_eq!(request.replica_id.0, -1, "a consumer's ListOffsets");
    isolation.lock().unwrap().push(request.isolation_level);
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let answer = ListOffsetsPartitionResponse::default().with_partition_index(p.partition_index);
                    let committed = request.isolation_level == 1;
                    match (node, p.partition_index, p.timestamp) {
                        (2, 1, _) => answer.with_error_code(6),
                        (2, 3, -1) => answer.with_offset(-4),
                        (_, i, -2) => answer.with_offset(i64::from(i) * 10).with_leader_epoch(5),
                        (_, i, -1) => answer.with_offset(i64::from(i) * 10 + if committed { 90 } else { 100 }),
                        (_, i, t) if t >= 0 => {
                            if i == 0 {
                                answer.with_offset(-1).with_timestamp(-1)
                            } else {
                                answer.with_offset(55).with_timestamp(t + 3)
                            }
                        }
                        _ => answer.with_error_code(42),
                    }
                })
                .collect();
            ListOffsetsTopicResponse::default().with_name(t.name.clone()).with_partitions(partitions)
        })
        .collect();
    body(&ListOffsetsResponse::default().with_topics(topics), r.version)
}

/// The partition count of the fake cluster's `wide` topic.
const WIDE: i32 = 10_000;

async fn leaders(isolation: Arc<Mutex<Vec<i8>>>) -> Leaders {
    let ports = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let metadata_calls = Arc::new(AtomicUsize::new(0));
    let handler = |node: i32| {
        let ports = ports.clone();
        let calls = metadata_calls.clone();
        let isolation = isolation.clone();
        move |r: &Seen| -> Reply {
            match r.api_key {
                18 => api_versions(r, apis()),
                3 => {
                    let round = calls.fetch_add(1, Ordering::SeqCst);
                    let request: MetadataRequest = r.decode();
                    let broker = |id: i32| {
                        MetadataResponseBroker::default()
                            .with_node_id(id.into())
                            .with_host(s("127.0.0.1"))
                            .with_port(ports[id as usize - 1].load(Ordering::SeqCst) as i32)
                    };
                    let partition = |i: i32, leader: i32| {
                        MetadataResponsePartition::default().with_partition_index(i).with_leader_id(leader.into())
                    };
                    let topics = request
                        .topics
                        .unwrap_or_default()
                        .iter()
                        .map(|t| {
                            let name = t.name.clone().unwrap();
                            if name.as_str() == "wide" {
                                // 10,000 partitions over the two nodes (partitions 1 and 3 on
                                // node 1: node 2's fake answers treat those two specially).
                                let leader = |i: i32| if i % 2 == 0 || i == 1 || i == 3 { 1 } else { 2 };
                                MetadataResponseTopic::default()
                                    .with_name(Some(name))
                                    .with_partitions((0..WIDE).map(|i| partition(i, leader(i))).collect())
                            } else if name.as_str() == "orders" {
                                let moved = if round == 0 { 2 } else { 1 };
                                MetadataResponseTopic::default().with_name(Some(name)).with_partitions(vec![
                                    partition(0, 1),
                                    partition(1, moved),
                                    partition(2, -1),
                                    partition(3, 2),
                                ])
                            } else {
                                MetadataResponseTopic::default().with_name(Some(name)).with_error_code(3)
                            }
                        })
                        .collect();
                    body(
                        &MetadataResponse::default().with_brokers(vec![broker(1), broker(2)]).with_topics(topics),
                        r.version,
                    )
                }
                2 => list_offsets_reply(node, r, &isolation),
                key => panic!("unexpected api {key}"),
            }
        }
    };
    let node1 = start(handler(1)).await;
    let node2 = start(handler(2)).await;
    ports[0].store(node1.port as usize, Ordering::SeqCst);
    ports[1].store(node2.port as usize, Ordering::SeqCst);
    Leaders { node1, node2, metadata_calls }
}

#[tokio::test]
async fn log_offsets_per_leader_with_gaps_in_place() {
    let isolation = Arc::new(Mutex::new(Vec::new()));
    let cluster = leaders(isolation.clone()).await;
    let client = client_for(&cluster.node1.address());
    let topics = client.log_offsets(&["orders", "ghost", "orders"], IsolationLevel::ReadCommitted, deadline()).await;
    let topics = topics.unwrap();
    let names: Vec<&str> = topics.iter().map(|t| t.topic.as_str()).collect();
    assert_eq!(names, ["ghost", "orders"], "topics in name order, once each");
    let ghost = topics[0].partitions.as_ref().unwrap_err();
    assert_eq!(ghost.kind(), ErrorKind::NotFound, "{ghost}");

    let orders = &topics[1];
    let p0 = orders.partition(0).unwrap();
    assert_eq!((p0.log_start_offset.clone(), p0.log_end_offset.clone()), (Ok(0), Ok(90)), "read_committed: LSO");
    // The leader moved: node 2 answered NOT_LEADER_OR_FOLLOWER, the refreshed metadata names
    // node 1, which answered.
    let p1 = orders.partition(1).unwrap();
    assert_eq!((p1.log_start_offset.clone(), p1.log_end_offset.clone()), (Ok(10), Ok(100)));
    let p2 = orders.partition(2).unwrap();
    assert_eq!(p2.leader, None);
    let no_leader = p2.log_end_offset.as_ref().unwrap_err();
    assert!(no_leader.message().contains("orders-2 has no leader"), "{no_leader}");
    let p3 = orders.partition(3).unwrap();
    assert_eq!(p3.log_start_offset, Ok(30));
    let hostile = p3.log_end_offset.as_ref().unwrap_err();
    assert_eq!(hostile.kind(), ErrorKind::Protocol);
    assert!(hostile.message().contains("offset -4 is not an offset"), "{hostile}");

    // One Metadata, then one ListOffsets per (leader, spec); a refresh and one more per spec
    // for the partition that moved; nothing asked twice otherwise.
    assert_eq!(cluster.metadata_calls.load(Ordering::SeqCst), 2);
    let on = |b: &FakeBroker| -> Vec<ListOffsetsRequest> {
        b.seen().iter().filter(|s| s.api_key == 2).map(|s| s.decode()).collect()
    };
    let node1 = on(&cluster.node1);
    let node2 = on(&cluster.node2);
    assert_eq!(node2.len(), 2, "earliest and latest");
    assert!(node2.iter().all(|r| r.topics[0].partitions.len() == 2), "partitions 1 and 3 together");
    assert_eq!(node1.len(), 4, "earliest and latest, then again for the moved partition");
    let asked: Vec<usize> = node1.iter().map(|r| r.topics[0].partitions.len()).collect();
    assert_eq!(asked.iter().sum::<usize>(), 4);
    assert!(isolation.lock().unwrap().iter().all(|&level| level == 1));
}

/// The round trips of the log offsets do not grow with the partition count: a topic of 10,000
/// partitions over two leaders takes one Metadata and, per leader, one ListOffsets for the log
/// starts and one for the ends (issue 23's "one group with 10,000 partitions").
#[tokio::test]
async fn ten_thousand_partitions_take_two_list_offsets_per_leader() {
    let isolation = Arc::new(Mutex::new(Vec::new()));
    let cluster = leaders(isolation).await;
    let client = client_for(&cluster.node1.address());
    let topics = client.log_offsets(&["wide"], IsolationLevel::ReadUncommitted, deadline()).await.unwrap();
    let wide = &topics[0];
    for i in 0..WIDE {
        let p = wide.partition(i).unwrap_or_else(|| panic!("wide-{i} missing"));
        assert_eq!(
            (p.log_start_offset.clone(), p.log_end_offset.clone()),
            (Ok(i64::from(i) * 10), Ok(i64::from(i) * 10 + 100))
        );
    }
    assert_eq!(cluster.metadata_calls.load(Ordering::SeqCst), 1);
    let on = |b: &FakeBroker| -> Vec<usize> {
        b.seen()
            .iter()
            .filter(|s| s.api_key == 2)
            .map(|s| s.decode::<ListOffsetsRequest>().topics.iter().map(|t| t.partitions.len()).sum())
            .collect()
    };
    let (node1, node2) = (on(&cluster.node1), on(&cluster.node2));
    assert_eq!(node1.len(), 2, "earliest and latest from node 1");
    assert_eq!(node2.len(), 2, "earliest and latest from node 2");
    assert_eq!(node1.iter().chain(&node2).sum::<usize>(), 2 * WIDE as usize, "every partition asked twice, once each");
}

#[tokio::test]
async fn list_offsets_by_timestamp_and_unknown_partitions() {
    let isolation = Arc::new(Mutex::new(Vec::new()));
    let cluster = leaders(isolation.clone()).await;
    let client = client_for(&cluster.node1.address());
    let asked = [TopicPartitions::new("orders", [1, 0, 9]), TopicPartitions::new("ghost", [0])];
    let answers =
        client.list_offsets(&asked, OffsetSpec::Timestamp(1_000), IsolationLevel::default(), deadline()).await;
    let answers = answers.unwrap();
    let keys: Vec<(&str, i32)> = answers.iter().map(|a| (a.topic.as_str(), a.partition)).collect();
    assert_eq!(keys, [("ghost", 0), ("orders", 0), ("orders", 1), ("orders", 9)]);
    assert_eq!(answers[0].result.as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    let none = answers[1].result.as_ref().unwrap();
    assert_eq!((none.offset, none.timestamp), (None, None), "no record at or after the timestamp");
    let found = answers[2].result.as_ref().unwrap();
    assert_eq!((found.offset, found.timestamp, found.leader), (Some(55), Some(1_003), 1));
    let missing = answers[3].result.as_ref().unwrap_err();
    assert!(missing.message().contains("orders-9"), "{missing}");
    assert!(isolation.lock().unwrap().iter().all(|&level| level == 0));
}

#[tokio::test]
async fn a_hostile_list_offsets_count_is_a_gap_not_an_abort() {
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let broker = start(move |r| match r.api_key {
        18 => api_versions(r, cap(apis(), 2, 1)),
        3 => body(
            &MetadataResponse::default()
                .with_brokers(vec![MetadataResponseBroker::default()
                    .with_node_id(1.into())
                    .with_host(s("127.0.0.1"))
                    .with_port(p.load(Ordering::SeqCst) as i32)])
                .with_topics(vec![MetadataResponseTopic::default()
                    .with_name(Some(TopicName(s("t"))))
                    .with_partitions(vec![MetadataResponsePartition::default().with_leader_id(1.into())])]),
            r.version,
        ),
        // ListOffsets v1: one topic "t" claiming 2^31-1 partitions in four bytes.
        2 => Reply::Body(vec![0, 0, 0, 1, 0, 1, b't', 0x7f, 0xff, 0xff, 0xff]),
        key => panic!("unexpected api {key}"),
    })
    .await;
    port.store(broker.port as usize, Ordering::SeqCst);
    let client = client_for(&broker.address());
    let answers = client
        .list_offsets(&[TopicPartitions::new("t", [0])], OffsetSpec::Latest, IsolationLevel::default(), deadline())
        .await
        .unwrap();
    let e = answers[0].result.as_ref().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    assert!(e.message().contains("ListOffsets v1 response does not decode"), "{e}");
    // read_committed needs ListOffsets v2: refused before sending.
    let answers = client
        .list_offsets(&[TopicPartitions::new("t", [0])], OffsetSpec::Latest, IsolationLevel::ReadCommitted, deadline())
        .await
        .unwrap();
    assert!(answers[0].result.as_ref().unwrap_err().message().contains("needs v2"));
}
