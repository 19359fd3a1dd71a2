//! The client against fake brokers on loopback: the happy paths of every API, version
//! negotiation, retries, pipelining, and hostile or broken brokers.

mod client_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use client_support::*;
use kafka_consumer_protocol::client::{
    Client, ClientConfig, Deadline, ErrorKind, ListGroupsFilter, SendOptions, Target,
};
use kafka_consumer_protocol::inspect::MemberType;
use kafka_consumer_protocol::TopicPartitions;
use kafka_protocol::messages::consumer_group_describe_response as cgd;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

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

/// A one-broker cluster (node 1 at `port`, rack r1) with one topic and groups, answering every
/// API at the version asked.
fn cluster(port: u16, request: &Seen) -> Reply {
    let v = request.version;
    match request.api_key {
        18 => api_versions(request, all_api_versions()),
        3 => {
            let partition = |i: i32| {
                MetadataResponsePartition::default()
                    .with_partition_index(i)
                    .with_leader_id(1.into())
                    .with_replica_nodes(vec![1.into(), 2.into()])
                    .with_isr_nodes(vec![1.into()])
            };
            body(
                &MetadataResponse::default()
                    .with_brokers(vec![
                        MetadataResponseBroker::default()
                            .with_node_id(1.into())
                            .with_host(s("127.0.0.1"))
                            .with_port(port as i32)
                            .with_rack(Some(s("r1"))),
                        MetadataResponseBroker::default()
                            .with_node_id(2.into())
                            .with_host(s("127.0.0.1"))
                            .with_port(1)
                            .with_rack(Some(s("r2"))),
                    ])
                    .with_cluster_id(Some(s("cluster-a")))
                    .with_controller_id(1.into())
                    .with_topics(vec![MetadataResponseTopic::default()
                        .with_name(Some(TopicName(s("orders"))))
                        .with_partitions(vec![partition(1), partition(0)])]),
                v,
            )
        }
        10 => {
            let request: FindCoordinatorRequest = request.decode();
            if v >= 4 {
                body(
                    &FindCoordinatorResponse::default().with_coordinators(
                        request
                            .coordinator_keys
                            .iter()
                            .map(|k| {
                                Coordinator::default()
                                    .with_key(k.clone())
                                    .with_node_id(1.into())
                                    .with_host(s("127.0.0.1"))
                                    .with_port(port as i32)
                            })
                            .collect(),
                    ),
                    v,
                )
            } else {
                body(
                    &FindCoordinatorResponse::default()
                        .with_node_id(1.into())
                        .with_host(s("127.0.0.1"))
                        .with_port(port as i32),
                    v,
                )
            }
        }
        16 => {
            let mut classic =
                ListedGroup::default().with_group_id(GroupId(s("orders"))).with_protocol_type(s("consumer"));
            let mut kip848 = ListedGroup::default().with_group_id(GroupId(s("new"))).with_protocol_type(s("consumer"));
            if v >= 4 {
                classic.group_state = s("Stable");
                kip848.group_state = s("Stable");
            }
            if v >= 5 {
                classic.group_type = s("classic");
                kip848.group_type = s("consumer");
            }
            body(&ListGroupsResponse::default().with_groups(vec![kip848, classic]), v)
        }
        15 => {
            let request: DescribeGroupsRequest = request.decode();
            let groups = request
                .groups
                .iter()
                .map(|g| {
                    DescribedGroup::default()
                        .with_group_id(g.clone())
                        .with_group_state(s("Stable"))
                        .with_protocol_type(s("consumer"))
                        .with_protocol_data(s("range"))
                        .with_members(vec![
                            DescribedGroupMember::default()
                                .with_member_id(s("m1"))
                                .with_client_id(s("c1"))
                                .with_client_host(s("/127.0.0.1"))
                                .with_group_instance_id(if v >= 4 { Some(s("i1")) } else { None })
                                .with_member_metadata(vec![0, 1, 2].into())
                                .with_member_assignment(vec![3, 4].into()),
                            // Out of member-id order: the client sorts them.
                            DescribedGroupMember::default().with_member_id(s("m0")).with_client_id(s("c0")),
                        ])
                })
                .collect();
            body(&DescribeGroupsResponse::default().with_groups(groups), v)
        }
        69 => {
            let request: ConsumerGroupDescribeRequest = request.decode();
            let tp =
                cgd::TopicPartitions::default().with_topic_name(TopicName(s("orders"))).with_partitions(vec![0, 1]);
            let groups = request
                .group_ids
                .iter()
                .map(|g| {
                    cgd::DescribedGroup::default()
                        .with_group_id(g.clone())
                        .with_group_state(s("Stable"))
                        .with_group_epoch(3)
                        .with_assignment_epoch(3)
                        .with_assignor_name(s("uniform"))
                        .with_members(vec![
                            cgd::Member::default()
                                .with_member_id(s("m1"))
                                .with_member_epoch(3)
                                .with_subscribed_topic_names(vec![TopicName(s("orders"))])
                                .with_assignment(cgd::Assignment::default().with_topic_partitions(vec![tp.clone()]))
                                .with_member_type(if v >= 1 { 0 } else { -1 }),
                            // Listed after m1, with an empty regex and its assignment out of order.
                            cgd::Member::default()
                                .with_member_id(s("a0"))
                                .with_member_epoch(3)
                                .with_subscribed_topic_regex(Some(s("")))
                                .with_target_assignment(cgd::Assignment::default().with_topic_partitions(vec![
                                    cgd::TopicPartitions::default()
                                        .with_topic_name(TopicName(s("payments")))
                                        .with_partitions(vec![2, 0]),
                                    cgd::TopicPartitions::default()
                                        .with_topic_name(TopicName(s("orders")))
                                        .with_partitions(vec![3, 2]),
                                ]))
                                .with_member_type(if v >= 1 { 1 } else { -1 }),
                        ])
                })
                .collect();
            body(&ConsumerGroupDescribeResponse::default().with_groups(groups), v)
        }
        12 => body(&HeartbeatResponse::default().with_error_code(27), v),
        key => panic!("unexpected api {key}"),
    }
}

async fn cluster_broker() -> FakeBroker {
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let broker = start(move |r| cluster(p.load(Ordering::SeqCst) as u16, r)).await;
    port.store(broker.port as usize, Ordering::SeqCst);
    broker
}

#[tokio::test]
async fn metadata_brokers_racks_topics_replicas() {
    let broker = cluster_broker().await;
    let client = client_for(&broker.address());
    let metadata = client.metadata(None, deadline()).await.unwrap();
    assert_eq!(metadata.cluster_id.as_deref(), Some("cluster-a"));
    assert_eq!(metadata.brokers.len(), 2);
    assert_eq!(metadata.broker(2).unwrap().rack.as_deref(), Some("r2"));
    let topic = metadata.topic("orders").unwrap();
    assert_eq!(topic.partition_count(), 2);
    assert_eq!(topic.partitions[0].partition, 0, "sorted by index");
    assert_eq!(topic.partitions[0].replicas, [1, 2]);
    // ApiVersions v3 first, then Metadata at kafka-protocol's highest version.
    assert_eq!(broker.calls(), [(18, 3), (3, 13)]);
    let seen = broker.seen();
    assert_eq!(seen[1].client_id.as_deref(), Some("kcp"));
    let request: MetadataRequest = seen[1].decode();
    assert_eq!(request.topics, None, "all topics");
    assert!(!request.allow_auto_topic_creation);
}

#[tokio::test]
async fn one_connection_is_reused() {
    let broker = cluster_broker().await;
    let client = client_for(&broker.address());
    client.metadata(Some(&["orders"]), deadline()).await.unwrap();
    client.clone().metadata(Some(&[]), deadline()).await.unwrap();
    let connections: Vec<usize> = broker.seen().iter().map(|s| s.connection).collect();
    assert_eq!(connections, [0, 0, 0], "one ApiVersions and two Metadata on one connection");
}

#[tokio::test]
async fn listing_needs_every_broker() {
    let broker = cluster_broker().await;
    let client = client_for(&broker.address());

    let all = client.list_groups(&ListGroupsFilter::default(), deadline()).await;
    // The fake's second broker (port 1) is unreachable: listing needs every broker.
    let e = all.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(e.message().contains("broker 2"), "{e}");
}

async fn single_broker_cluster(handler: impl Fn(u16, &Seen) -> Option<Reply> + Send + Sync + 'static) -> FakeBroker {
    let port = Arc::new(AtomicUsize::new(0));
    let p = port.clone();
    let broker = start(move |r| {
        let port = p.load(Ordering::SeqCst) as u16;
        if let Some(reply) = handler(port, r) {
            return reply;
        }
        if r.api_key == 3 {
            // Only node 1.
            return body(
                &MetadataResponse::default().with_brokers(vec![MetadataResponseBroker::default()
                    .with_node_id(1.into())
                    .with_host(s("127.0.0.1"))
                    .with_port(port as i32)]),
                r.version,
            );
        }
        cluster(port, r)
    })
    .await;
    port.store(broker.port as usize, Ordering::SeqCst);
    broker
}

#[tokio::test]
async fn list_describe_and_consumer_describe() {
    let broker = single_broker_cluster(|_, _| None).await;
    let client = client_for(&broker.address());

    let groups = client.list_groups(&ListGroupsFilter::default(), deadline()).await.unwrap();
    let ids: Vec<(&str, Option<&str>)> =
        groups.iter().map(|g| (g.group_id.as_str(), g.group_type.as_deref())).collect();
    assert_eq!(ids, [("new", Some("consumer")), ("orders", Some("classic"))]);
    assert_eq!(groups[0].coordinator.node_id, 1);
    let listed = broker.seen().into_iter().filter(|s| s.api_key == 16).last().unwrap();
    assert_eq!(listed.version, 5);

    let described = client.describe_groups(&["orders", "orders", "other"], deadline()).await.unwrap();
    assert_eq!(described.len(), 2, "one result per distinct group");
    let orders = described[0].as_ref().unwrap();
    assert_eq!(
        (orders.group.group_id.as_str(), orders.group.protocol.as_str(), orders.version),
        ("orders", "range", 6)
    );
    let ids: Vec<&str> = orders.group.members.iter().map(|m| m.member_id.as_str()).collect();
    assert_eq!(ids, ["m0", "m1"], "members in member-id order");
    let member = &orders.group.members[1];
    assert_eq!(member.group_instance_id.as_deref(), Some("i1"));
    assert_eq!(&member.member_metadata[..], [0, 1, 2]);
    assert_eq!(&member.member_assignment[..], [3, 4]);
    assert_eq!(orders.coordinator.port, broker.port);
    // Both groups' coordinators in one batched FindCoordinator (v6), both groups in one
    // DescribeGroups.
    let finds: Vec<FindCoordinatorRequest> =
        broker.seen().iter().filter(|s| s.api_key == 10).map(|s| s.decode()).collect();
    assert_eq!(finds.len(), 1, "{finds:?}");
    assert_eq!(finds[0].coordinator_keys.len(), 2);
    assert_eq!(broker.seen().iter().filter(|s| s.api_key == 15).count(), 1);

    let consumer = client.describe_consumer_groups(&["orders"], deadline()).await.unwrap();
    let group = &consumer[0].as_ref().unwrap().group;
    assert_eq!((group.group_epoch, group.assignor.as_str()), (3, "uniform"));
    // inspect's model: members in member-id order, assignments in topic and partition order,
    // an empty regex as none.
    let ids: Vec<&str> = group.members.iter().map(|m| m.member_id.as_str()).collect();
    assert_eq!(ids, ["a0", "m1"]);
    let first = &group.members[0];
    assert_eq!(first.member_type, MemberType::Consumer);
    assert_eq!(first.subscribed_topic_regex, None);
    assert_eq!(
        first.target_assignment,
        [TopicPartitions::new("orders", [2, 3]), TopicPartitions::new("payments", [0, 2])]
    );
    let member = &group.members[1];
    assert_eq!(member.member_type, MemberType::Classic);
    assert_eq!(member.assignment[0].topic, "orders");
    assert_eq!(member.assignment[0].partitions, [0, 1]);
    // The coordinator was remembered: no second FindCoordinator.
    assert_eq!(broker.seen().iter().filter(|s| s.api_key == 10).count(), 1);
}

#[tokio::test]
async fn kafka_3_9_consumer_group_describe_is_no_consumer_groups() {
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 69).then(|| {
            let request: ConsumerGroupDescribeRequest = r.decode();
            let groups = request
                .group_ids
                .iter()
                .map(|g| cgd::DescribedGroup::default().with_group_id(g.clone()).with_error_code(35))
                .collect();
            body(&ConsumerGroupDescribeResponse::default().with_groups(groups), r.version)
        })
    })
    .await;
    let client = client_for(&broker.address());
    let result = client.describe_consumer_groups(&["orders"], deadline()).await.unwrap();
    let e = result[0].as_ref().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.message().contains("does not serve KIP-848 consumer groups"), "{e}");
}

#[tokio::test]
async fn broker_without_consumer_group_describe_has_no_consumer_groups() {
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 18).then(|| {
            let apis = all_api_versions().into_iter().filter(|a| a.api_key != 69).collect();
            api_versions(r, apis)
        })
    })
    .await;
    let client = client_for(&broker.address());
    let result = client.describe_consumer_groups(&["orders"], deadline()).await.unwrap();
    assert_eq!(result[0].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    assert!(!broker.calls().iter().any(|(key, _)| *key == 69));
}

#[tokio::test]
async fn api_versions_falls_back_when_v3_is_unsupported() {
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 18 && r.version == 3).then(|| {
            // An old broker: UNSUPPORTED_VERSION in the v0 layout, advertising ApiVersions v0-v2.
            let apis = cap(all_api_versions(), 18, 2);
            body(&ApiVersionsResponse::default().with_error_code(35).with_api_keys(apis), 0)
        })
    })
    .await;
    let client = client_for(&broker.address());
    client.metadata(Some(&[]), deadline()).await.unwrap();
    assert_eq!(broker.calls()[..2], [(18, 3), (18, 2)]);
}

#[tokio::test]
async fn api_versions_without_a_range_falls_back_to_v0() {
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 18 && r.version == 3).then(|| body(&ApiVersionsResponse::default().with_error_code(35), 0))
    })
    .await;
    let client = client_for(&broker.address());
    client.metadata(Some(&[]), deadline()).await.unwrap();
    assert_eq!(broker.calls()[..2], [(18, 3), (18, 0)]);
}

#[tokio::test]
async fn versions_are_capped_by_the_broker() {
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 18).then(|| {
            let apis = cap(cap(cap(all_api_versions(), 10, 3), 15, 4), 3, 7);
            api_versions(r, apis)
        })
    })
    .await;
    let client = client_for(&broker.address());
    let described = client.describe_groups(&["a", "b"], deadline()).await.unwrap();
    assert!(described.iter().all(|d| d.as_ref().unwrap().version == 4));
    // FindCoordinator v3 takes one key per request.
    let finds: Vec<Seen> = broker.seen().into_iter().filter(|s| s.api_key == 10).collect();
    assert_eq!(finds.len(), 2);
    assert!(finds.iter().all(|f| f.version == 3));
    let keys: Vec<String> = finds.iter().map(|f| f.decode::<FindCoordinatorRequest>().key.to_string()).collect();
    assert_eq!(keys, ["a", "b"]);
}

#[tokio::test]
async fn coordinator_errors_are_retried() {
    let finds = Arc::new(AtomicUsize::new(0));
    let describes = Arc::new(AtomicUsize::new(0));
    let (f, d) = (finds.clone(), describes.clone());
    let broker = single_broker_cluster(move |_, r| match r.api_key {
        // COORDINATOR_NOT_AVAILABLE twice, then the coordinator.
        10 if f.fetch_add(1, Ordering::SeqCst) < 2 => Some(body(
            &FindCoordinatorResponse::default()
                .with_coordinators(vec![Coordinator::default().with_key(s("g")).with_error_code(15)]),
            r.version,
        )),
        // NOT_COORDINATOR once, then COORDINATOR_LOAD_IN_PROGRESS once, then the group.
        15 => match d.fetch_add(1, Ordering::SeqCst) {
            n @ (0 | 1) => Some(body(
                &DescribeGroupsResponse::default().with_groups(vec![DescribedGroup::default()
                    .with_group_id(GroupId(s("g")))
                    .with_error_code(if n == 0 { 16 } else { 14 })]),
                r.version,
            )),
            _ => None,
        },
        _ => None,
    })
    .await;
    let client = client_for(&broker.address());
    let described = client.describe_groups(&["g"], deadline()).await.unwrap();
    assert_eq!(described[0].as_ref().unwrap().group.members.len(), 2);
    assert_eq!(describes.load(Ordering::SeqCst), 3);
    // NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS sent the client to FindCoordinator again.
    assert_eq!(finds.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn retries_stop_at_the_deadline() {
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 10).then(|| {
            body(
                &FindCoordinatorResponse::default()
                    .with_coordinators(vec![Coordinator::default().with_key(s("g")).with_error_code(15)]),
                r.version,
            )
        })
    })
    .await;
    let client = client_for(&broker.address());
    let short = Deadline::after(Duration::from_millis(300));
    let found = client.find_coordinators(&["g"], short).await.unwrap();
    let e = found[0].1.as_ref().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.message().contains("COORDINATOR_NOT_AVAILABLE (15)"), "{e}");
}

#[tokio::test]
async fn a_deadline_that_ends_during_a_retry_reports_the_answer_that_caused_it() {
    // The first FindCoordinator says COORDINATOR_NOT_AVAILABLE; the retry is never answered and
    // the deadline ends while it waits: the group's error still names the broker's answer (the
    // call as a whole succeeds), as when the deadline ends during the backoff.
    let finds = Arc::new(AtomicUsize::new(0));
    let f = finds.clone();
    let broker = single_broker_cluster(move |_, r| {
        (r.api_key == 10).then(|| {
            if f.fetch_add(1, Ordering::SeqCst) == 0 {
                body(
                    &FindCoordinatorResponse::default()
                        .with_coordinators(vec![Coordinator::default().with_key(s("g")).with_error_code(15)]),
                    r.version,
                )
            } else {
                Reply::Hold
            }
        })
    })
    .await;
    let mut config = ClientConfig::new([broker.address()]).unwrap();
    config.retry_backoff = Duration::from_millis(5);
    let client = Client::new(config).unwrap();
    let found = client.find_coordinators(&["g"], Deadline::after(Duration::from_millis(300))).await.unwrap();
    let e = found[0].1.as_ref().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.message().contains("COORDINATOR_NOT_AVAILABLE (15)"), "{e}");
    assert!(finds.load(Ordering::SeqCst) >= 2, "the retry was sent");
}

#[tokio::test]
async fn group_errors_keep_their_kind() {
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 15).then(|| {
            body(
                &DescribeGroupsResponse::default().with_groups(vec![
                    DescribedGroup::default().with_group_id(GroupId(s("secret"))).with_error_code(30),
                    DescribedGroup::default().with_group_id(GroupId(s("gone"))).with_error_code(69),
                ]),
                r.version,
            )
        })
    })
    .await;
    let client = client_for(&broker.address());
    let described = client.describe_groups(&["secret", "gone"], deadline()).await.unwrap();
    assert_eq!(described[0].as_ref().unwrap_err().kind(), ErrorKind::Authorization);
    assert_eq!(described[1].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    assert!(described[1].as_ref().unwrap_err().message().contains("GROUP_ID_NOT_FOUND (69)"));
}

#[tokio::test]
async fn send_to_a_coordinator_with_a_version_cap() {
    let broker = single_broker_cluster(|_, _| None).await;
    let client = client_for(&broker.address());
    let target = Target::Coordinator("orders".into());
    let sent = client
        .send(&target, SendOptions::new(deadline()).max_version(2), |version| {
            assert_eq!(version, 2);
            HeartbeatRequest::default().with_group_id(GroupId(s("orders"))).with_generation_id(4)
        })
        .await
        .unwrap();
    assert_eq!((sent.version, sent.response.error_code, sent.broker.node_id), (2, 27, 1));
    let heartbeat: HeartbeatRequest = broker.seen().last().unwrap().decode();
    assert_eq!(heartbeat.generation_id, 4);
}

#[tokio::test]
async fn pipelined_requests_are_matched_by_correlation_id() {
    // The broker holds the JoinGroup's answer until the Heartbeat arrives, then answers the
    // Heartbeat first.
    let broker = single_broker_cluster(|_, r| match r.api_key {
        11 => Some(Reply::Later(encode(
            &JoinGroupResponse::default().with_generation_id(9).with_protocol_name(Some(s("range"))),
            r.version,
        ))),
        _ => None,
    })
    .await;
    let client = client_for(&broker.address());
    let target = Target::Coordinator("orders".into());
    client.coordinator("orders", deadline()).await.unwrap();
    client.api_versions(&target, 11, deadline()).await.unwrap();
    let join = client.send(&target, SendOptions::new(deadline()), |_| {
        JoinGroupRequest::default().with_group_id(GroupId(s("orders"))).with_protocol_type(s("consumer"))
    });
    let heartbeat = async {
        // Only once the JoinGroup is on the wire.
        while !broker.calls().iter().any(|(key, _)| *key == 11) {
            tokio::task::yield_now().await;
        }
        client.send(&target, SendOptions::new(deadline()), |_| HeartbeatRequest::default()).await
    };
    let (join, heartbeat) = tokio::join!(join, heartbeat);
    assert_eq!(join.unwrap().response.generation_id, 9);
    assert_eq!(heartbeat.unwrap().response.error_code, 27);
    let connections: std::collections::HashSet<usize> = broker.seen().iter().map(|s| s.connection).collect();
    assert_eq!(connections.len(), 1, "both on one connection");
}

/// A broker that answers ApiVersions normally and then `reply` to the next request.
async fn hostile(reply: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> FakeBroker {
    start(move |r| if r.api_key == 18 { api_versions(r, all_api_versions()) } else { reply(r) }).await
}

#[tokio::test]
async fn a_2_gb_frame_is_refused_before_allocation() {
    let broker = hostile(|_| Reply::Raw(vec![0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1])).await;
    let e = client_for(&broker.address()).metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.message().contains("2147483647"), "{e}");
}

#[tokio::test]
async fn garbage_is_a_protocol_error_naming_api_and_version() {
    let broker = hostile(|_| Reply::Body(vec![0xff; 40])).await;
    let e = client_for(&broker.address()).metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.message().contains("Metadata v13 response does not decode"), "{e}");
}

#[tokio::test]
async fn garbage_before_the_correlation_id() {
    let broker = hostile(|_| Reply::Raw(vec![0, 0, 0, 2, 9, 9])).await;
    let e = client_for(&broker.address()).metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
}

#[tokio::test]
async fn a_huge_count_inside_a_frame_is_refused() {
    // ListGroups v5: throttle, error 0, then a compact array count of 2^32-2 groups.
    let broker = single_broker_cluster(|_, r| {
        (r.api_key == 16).then(|| Reply::Body(vec![0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0]))
    })
    .await;
    let e = client_for(&broker.address()).list_groups(&Default::default(), deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.message().contains("ListGroups v5 response does not decode"), "{e}");
}

#[tokio::test]
async fn a_connection_that_closes_is_unreachable() {
    let broker = hostile(|_| Reply::Close).await;
    let e =
        client_for(&broker.address()).metadata(None, Deadline::after(Duration::from_millis(500))).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    // The client reconnected and asked again before giving up.
    assert!(broker.seen().iter().filter(|s| s.api_key == 3).count() >= 2);
}

#[tokio::test]
async fn a_silent_broker_hits_the_deadline() {
    let broker = hostile(|_| Reply::Silent).await;
    let e =
        client_for(&broker.address()).metadata(None, Deadline::after(Duration::from_millis(300))).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.message().contains("Metadata v13"), "{e}");
}

#[tokio::test]
async fn a_broker_silent_from_the_start_hits_the_deadline() {
    let broker = start(|_| Reply::Silent).await;
    let e =
        client_for(&broker.address()).metadata(None, Deadline::after(Duration::from_millis(300))).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
}

#[tokio::test]
async fn an_unreachable_port_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    drop(listener);
    let e = client_for(&address).metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(e.message().contains(&address), "{e}");
}

#[tokio::test]
async fn bootstrap_tries_each_broker() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = listener.local_addr().unwrap().to_string();
    drop(listener);
    let broker = single_broker_cluster(|_, _| None).await;
    let client = client_for(&format!("{dead},{}", broker.address()));
    client.metadata(None, deadline()).await.unwrap();
}

#[tokio::test]
async fn lanes_are_connections_of_their_own() {
    // A JoinGroup held by the broker does not hold up a heartbeat sent on another lane.
    let broker = single_broker_cluster(|_, r| match r.api_key {
        11 => Some(Reply::Hold),
        _ => None,
    })
    .await;
    let client = client_for(&broker.address());
    let target = Target::Coordinator("orders".into());
    let join = client.send(&target, SendOptions::new(Deadline::after(Duration::from_millis(500))).lane(1), |_| {
        JoinGroupRequest::default().with_group_id(GroupId(s("orders"))).with_protocol_type(s("consumer"))
    });
    let others = async {
        while !broker.calls().iter().any(|(key, _)| *key == 11) {
            tokio::task::yield_now().await;
        }
        let heartbeat =
            client.send(&target, SendOptions::new(deadline()).lane(2), |_| HeartbeatRequest::default()).await;
        // The client's own requests do not go on the JoinGroup's lane either.
        let metadata = client.metadata(Some(&[]), deadline()).await;
        (heartbeat, metadata)
    };
    let (join, (heartbeat, metadata)) = tokio::join!(join, others);
    assert_eq!(join.unwrap_err().kind(), ErrorKind::Timeout);
    assert_eq!(heartbeat.unwrap().response.error_code, 27);
    metadata.unwrap();
    let join_connection = broker.seen().iter().find(|s| s.api_key == 11).unwrap().connection;
    let heartbeat_connection = broker.seen().iter().find(|s| s.api_key == 12).unwrap().connection;
    assert_ne!(join_connection, heartbeat_connection);
}

#[tokio::test]
async fn a_request_timeout_ends_the_connection_and_the_call_reconnects() {
    // The first Metadata is never answered (and holds its connection); the retry on a new
    // connection is.
    let first = Arc::new(AtomicUsize::new(0));
    let f = first.clone();
    let broker = single_broker_cluster(move |_, r| {
        (r.api_key == 3 && f.fetch_add(1, Ordering::SeqCst) == 0).then_some(Reply::Hold)
    })
    .await;
    let mut config = ClientConfig::new([broker.address()]).unwrap();
    config.request_timeout = Duration::from_millis(200);
    config.retry_backoff = Duration::from_millis(5);
    let client = Client::new(config).unwrap();
    client.metadata(Some(&[]), deadline()).await.unwrap();
    let metadata_connections: Vec<usize> =
        broker.seen().iter().filter(|s| s.api_key == 3).map(|s| s.connection).collect();
    assert_eq!(metadata_connections, [0, 1]);
}
