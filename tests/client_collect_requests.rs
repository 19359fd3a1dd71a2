//! `Collector::collect` at the floor of requests (issue 35): against a fake one-broker cluster of
//! 120 classic groups, a collection kept from one collection to the next makes one ListGroups,
//! one DescribeGroups with every group, one OffsetFetch with every group, one Metadata and one
//! ListOffsets per offset kind (log start, log end), however many groups there are; and the
//! groups still get their partition counts and their lag.

mod client_support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use client_support::*;
use kafka_consumer_protocol::client::collect::{Collector, GroupSelection};
use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, IsolationLevel};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartitions, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Message, StrBytes};

/// More than the 50 groups `Collector::describe` puts in one batch.
const GROUPS: usize = 120;
const TOPICS: usize = 3;
const PARTITIONS: i32 = 2;
const COMMITTED: i64 = 5;
const LOG_END: i64 = 10;

fn s(text: impl Into<String>) -> StrBytes {
    StrBytes::from_string(text.into())
}

fn group_name(i: usize) -> String {
    format!("g-{i:03}")
}

/// Group `g-NNN` reads topic `t-(NNN mod 3)`.
fn topic_of(group: &str) -> Option<String> {
    let i: usize = group.strip_prefix("g-")?.parse().ok()?;
    (i < GROUPS).then(|| format!("t-{}", i % TOPICS))
}

fn apis() -> Vec<ApiVersion> {
    fn range<R: Message>(key: i16) -> ApiVersion {
        ApiVersion::default().with_api_key(key).with_min_version(R::VERSIONS.min).with_max_version(R::VERSIONS.max)
    }
    let mut apis = all_api_versions();
    apis.push(range::<OffsetFetchRequest>(9));
    apis.push(range::<ListOffsetsRequest>(2));
    apis
}

fn answer(port: u16, r: &Seen) -> Reply {
    match r.api_key {
        18 => api_versions(r, apis()),
        3 => {
            let request: MetadataRequest = r.decode();
            let topics = request
                .topics
                .unwrap_or_default()
                .into_iter()
                .filter_map(|t| t.name)
                .map(|name| {
                    let partitions = (0..PARTITIONS)
                        .map(|p| {
                            MetadataResponsePartition::default()
                                .with_partition_index(p)
                                .with_leader_id(1.into())
                                .with_replica_nodes(vec![1.into()])
                                .with_isr_nodes(vec![1.into()])
                        })
                        .collect();
                    MetadataResponseTopic::default().with_name(Some(name)).with_partitions(partitions)
                })
                .collect();
            let broker = MetadataResponseBroker::default()
                .with_node_id(1.into())
                .with_host(s("127.0.0.1"))
                .with_port(port as i32);
            body(&MetadataResponse::default().with_brokers(vec![broker]).with_topics(topics), r.version)
        }
        10 => {
            let request: FindCoordinatorRequest = r.decode();
            let coordinators = request
                .coordinator_keys
                .into_iter()
                .map(|key| {
                    Coordinator::default()
                        .with_key(key)
                        .with_node_id(1.into())
                        .with_host(s("127.0.0.1"))
                        .with_port(port as i32)
                })
                .collect();
            body(&FindCoordinatorResponse::default().with_coordinators(coordinators), r.version)
        }
        16 => {
            let groups = (0..GROUPS)
                .map(|i| {
                    ListedGroup::default()
                        .with_group_id(s(group_name(i)).into())
                        .with_protocol_type(s("consumer"))
                        .with_group_state(s("Stable"))
                        .with_group_type(s("classic"))
                })
                .collect();
            body(&ListGroupsResponse::default().with_groups(groups), r.version)
        }
        15 => {
            let request: DescribeGroupsRequest = r.decode();
            let groups = request
                .groups
                .into_iter()
                .map(|g| {
                    let topic = topic_of(&g).expect("a group of the cluster");
                    let subscription = Subscription::new([topic.clone()]).encode(Version::V3).unwrap();
                    let assignment =
                        Assignment::new(vec![TopicPartitions::new(topic, (0..PARTITIONS).collect::<Vec<_>>())])
                            .encode(Version::V3)
                            .unwrap();
                    let member = DescribedGroupMember::default()
                        .with_member_id(s(format!("{}-member", g.0)))
                        .with_client_id(s("client"))
                        .with_client_host(s("/127.0.0.1"))
                        .with_member_metadata(Bytes::from(subscription))
                        .with_member_assignment(Bytes::from(assignment));
                    DescribedGroup::default()
                        .with_group_id(g)
                        .with_group_state(s("Stable"))
                        .with_protocol_type(s("consumer"))
                        .with_protocol_data(s("range"))
                        .with_members(vec![member])
                })
                .collect();
            body(&DescribeGroupsResponse::default().with_groups(groups), r.version)
        }
        9 => {
            let request: OffsetFetchRequest = r.decode();
            assert!(r.version >= 8, "OffsetFetch v{} cannot batch groups", r.version);
            let groups = request
                .groups
                .into_iter()
                .map(|g| {
                    let topic = topic_of(&g.group_id).expect("a group of the cluster");
                    let partitions = (0..PARTITIONS)
                        .map(|p| {
                            OffsetFetchResponsePartitions::default()
                                .with_partition_index(p)
                                .with_committed_offset(COMMITTED)
                        })
                        .collect();
                    let topics = vec![OffsetFetchResponseTopics::default()
                        .with_name(s(topic).into())
                        .with_partitions(partitions)];
                    OffsetFetchResponseGroup::default().with_group_id(g.group_id).with_topics(topics)
                })
                .collect();
            body(&OffsetFetchResponse::default().with_groups(groups), r.version)
        }
        2 => {
            let request: ListOffsetsRequest = r.decode();
            let topics = request
                .topics
                .into_iter()
                .map(|t| {
                    let partitions = t
                        .partitions
                        .into_iter()
                        .map(|p| {
                            // -2: the earliest offset; -1: the latest.
                            let offset = if p.timestamp == -2 { 0 } else { LOG_END };
                            ListOffsetsPartitionResponse::default()
                                .with_partition_index(p.partition_index)
                                .with_timestamp(-1)
                                .with_offset(offset)
                        })
                        .collect();
                    ListOffsetsTopicResponse::default().with_name(t.name).with_partitions(partitions)
                })
                .collect();
            body(&ListOffsetsResponse::default().with_topics(topics), r.version)
        }
        other => panic!("the collection should not ask API {other}"),
    }
}

fn api_name(key: i16) -> &'static str {
    match key {
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

fn counts(seen: &[Seen]) -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::new();
    for r in seen {
        *out.entry(api_name(r.api_key)).or_default() += 1;
    }
    out
}

#[tokio::test]
async fn a_kept_collector_makes_the_floor_of_requests_per_collection() {
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let broker = start(move |r| answer(p.load(Ordering::SeqCst) as u16, r)).await;
    port.store(broker.port as usize, Ordering::SeqCst);
    let mut config = ClientConfig::new([broker.address()]).unwrap();
    config.retry_backoff = Duration::from_millis(5);
    let collector = Collector::new(Client::new(config).unwrap());
    let deadline = || Deadline::after(Duration::from_secs(20));

    let mut per_collection = Vec::new();
    for _ in 0..3 {
        let before = broker.seen().len();
        let collection =
            collector.collect(&GroupSelection::All, IsolationLevel::ReadUncommitted, deadline()).await.unwrap();
        per_collection.push(counts(&broker.seen()[before..]));

        // What the fewer requests gathered is all there: every group described, with its topic's
        // partition count, its committed offsets and its lag.
        assert_eq!(collection.groups.len(), GROUPS);
        let offsets = collection.offsets.as_ref().unwrap();
        for g in &collection.groups {
            let described = g.described.as_ref().unwrap();
            let topic = topic_of(&g.group_id).unwrap();
            assert_eq!(g.metadata.topics.get(&topic).map(|t| t.partitions), Some(PARTITIONS), "{}", g.group_id);
            let view = offsets.view(&g.group_id, described);
            assert!(!view.partial(), "{}: {:?}", g.group_id, view.gaps);
            assert_eq!(view.report.lag.total, i64::from(PARTITIONS) * (LOG_END - COMMITTED), "{}", g.group_id);
        }
    }
    // The first collection also connects (ApiVersions), finds the coordinators (one batched
    // FindCoordinator) and asks Metadata for the brokers to list the groups on.
    let floor = BTreeMap::from([
        ("DescribeGroups", 1),
        ("ListGroups", 1),
        ("ListOffsets", 2),
        ("Metadata", 1),
        ("OffsetFetch", 1),
    ]);
    let mut first = floor.clone();
    first.insert("ApiVersions", 1);
    first.insert("FindCoordinator", 1);
    first.insert("Metadata", 2);
    assert_eq!(per_collection[0], first);
    assert_eq!(per_collection[1], floor);
    assert_eq!(per_collection[2], floor);
}
