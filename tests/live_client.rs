//! The connection layer (`kafka_consumer_protocol::client`) against real brokers: Kafka 3.9.1
//! (`k39`, with its SASL_SSL and mTLS listeners) and 4.1.1 (`k41`). Without the clusters' env
//! these print SKIP (see tools/live/README.md); CI starts them and sets KCP_LIVE_REQUIRED=1.

mod live;

use std::time::Duration;

use kafka_consumer_protocol::client::{
    Client, ClientConfig, Deadline, ErrorKind, ListGroupsFilter, SendOptions, Target,
};
use kafka_consumer_protocol::inspect::MemberType;
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use live::{Cluster, MemberOptions};

const SETTLE: Duration = Duration::from_secs(90);
const QUIET: Duration = Duration::from_secs(2);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(30))
}

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn plaintext(cluster: &Cluster) -> Client {
    Client::new(ClientConfig::new([cluster.bootstrap.as_str()]).unwrap()).unwrap()
}

/// Metadata, ListGroups, DescribeGroups and ConsumerGroupDescribe of a group a Java consumer
/// runs, and of groups that do not exist.
fn describe_a_java_group(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = live::unique_name("client-t");
    let group = live::unique_name("client-g");
    cluster.create_topic(&topic, 3);
    let mut member = cluster.java(&MemberOptions::new(&group, [&topic]).assignors(["range"]).client_id("j1"));
    live::wait_settled(&mut [&mut member], &live::partitions(&topic, 0..3), SETTLE, QUIET)
        .unwrap_or_else(|e| panic!("{e}"));
    runtime().block_on(async {
        let client = plaintext(&cluster);
        let metadata = client.metadata(Some(&[topic.as_str()]), deadline()).await.unwrap();
        assert_eq!(metadata.brokers.len(), cluster.broker_bootstraps.len());
        let t = metadata.topic(&topic).unwrap();
        assert_eq!(t.partition_count(), 3);
        assert!(t.partitions.iter().all(|p| p.replicas == [1]), "{t:?}");

        let listed = client.list_groups(&ListGroupsFilter::default(), deadline()).await.unwrap();
        let ours = listed.iter().find(|g| g.group_id == group).unwrap_or_else(|| panic!("{group} in {listed:?}"));
        assert_eq!(ours.protocol_type, "consumer");
        assert_eq!(ours.group_type.as_deref(), Some("classic"));
        assert_eq!(ours.state.as_deref(), Some("Stable"));

        let described = client.describe_groups(&[group.as_str()], deadline()).await.unwrap();
        let g = &described[0].as_ref().unwrap().group;
        assert_eq!((g.state.as_str(), g.protocol.as_str()), ("Stable", "range"));
        assert_eq!(g.members.len(), 1);
        let m = &g.members[0];
        assert_eq!(m.client_id, "j1");
        let subscription = Subscription::decode(&m.member_metadata).unwrap();
        assert_eq!(subscription.topics, [topic.as_str()]);
        let assignment = Assignment::decode(&m.member_assignment).unwrap();
        assert_eq!(assignment.assigned_partitions, [TopicPartitions::new(topic.as_str(), [0, 1, 2])]);

        // An unknown group: Dead and empty before DescribeGroups v6, GROUP_ID_NOT_FOUND from v6.
        let unknown = client.describe_groups(&["client-no-such-group"], deadline()).await.unwrap();
        match &unknown[0] {
            Ok(g) => assert_eq!((g.group.state.as_str(), g.group.members.len(), cluster.is_4x()), ("Dead", 0, false)),
            Err(e) => assert_eq!((e.kind(), cluster.is_4x()), (ErrorKind::NotFound, true), "{e}"),
        }
        // ConsumerGroupDescribe of a classic group: 3.9 answers UNSUPPORTED_VERSION, 4.1 says it
        // is not a consumer group; both mean "no such consumer group".
        let consumer = client.describe_consumer_groups(&[group.as_str()], deadline()).await.unwrap();
        let e = consumer[0].as_ref().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    });
    member.terminate(Duration::from_secs(45)).unwrap();
}

#[test]
fn describe_a_java_group_on_kafka_3_9() {
    describe_a_java_group("k39");
}

#[test]
fn describe_a_java_group_on_kafka_4_1() {
    describe_a_java_group("k41");
}

#[test]
fn consumer_group_describe_on_kafka_4_1() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let topic = live::unique_name("client-848-t");
    let group = live::unique_name("client-848-g");
    cluster.create_topic(&topic, 4);
    let mut member = cluster.java(&MemberOptions::new(&group, [&topic]).group_protocol("consumer").client_id("c1"));
    live::wait_settled(&mut [&mut member], &live::partitions(&topic, 0..4), SETTLE, QUIET)
        .unwrap_or_else(|e| panic!("{e}"));
    runtime().block_on(async {
        let client = plaintext(&cluster);
        let listed = client.list_groups(&ListGroupsFilter::default(), deadline()).await.unwrap();
        let ours = listed.iter().find(|g| g.group_id == group).unwrap();
        assert_eq!(ours.group_type.as_deref(), Some("consumer"));
        let described = client.describe_consumer_groups(&[group.as_str()], deadline()).await.unwrap();
        let g = &described[0].as_ref().unwrap().group;
        assert_eq!(g.state, "Stable");
        assert!(g.group_epoch >= 1);
        let m = &g.members[0];
        assert_eq!(m.client_id, "c1");
        assert_eq!(m.subscribed_topics, [topic.as_str()]);
        assert_ne!(m.member_type, MemberType::Classic, "a consumer-protocol member");
        let mut partitions: Vec<i32> = m.assignment.iter().flat_map(|t| t.partitions.clone()).collect();
        partitions.sort();
        assert_eq!(partitions, [0, 1, 2, 3]);
        assert_eq!(m.assignment[0].topic, topic);
    });
    member.terminate(Duration::from_secs(45)).unwrap();
}

/// A whole classic membership through `Client::send`: JoinGroup (MEMBER_ID_REQUIRED, then
/// again with the id), SyncGroup as leader, Heartbeat, LeaveGroup, at the negotiated versions.
fn membership_through_send(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = live::unique_name("client-send-t");
    let group = live::unique_name("client-send-g");
    cluster.create_topic(&topic, 2);
    runtime().block_on(async {
        let client = plaintext(&cluster);
        let target = Target::Coordinator(group.clone());
        let metadata = Subscription::new([topic.as_str()]).encode(Version::V3).unwrap();
        let join = |member_id: String| {
            let metadata = metadata.clone();
            let group = group.clone();
            move |version: i16| {
                let mut request = JoinGroupRequest::default()
                    .with_group_id(GroupId(s(&group)))
                    .with_session_timeout_ms(10_000)
                    .with_member_id(s(&member_id))
                    .with_protocol_type(s("consumer"))
                    .with_protocols(vec![JoinGroupRequestProtocol::default()
                        .with_name(s("range"))
                        .with_metadata(metadata.clone().into())]);
                if version >= 1 {
                    request.rebalance_timeout_ms = 10_000;
                }
                request
            }
        };
        let options = SendOptions::new(deadline()).request_timeout(Duration::from_secs(20));
        let first = client.send(&target, options, join(String::new())).await.unwrap();
        // From JoinGroup v4 a new member is first given its id (MEMBER_ID_REQUIRED).
        assert_eq!((first.version >= 4, first.response.error_code), (true, 79));
        let member_id = first.response.member_id.to_string();
        let joined = client.send(&target, options, join(member_id.clone())).await.unwrap().response;
        assert_eq!(joined.error_code, 0);
        assert_eq!(joined.leader.as_str(), member_id, "the only member leads");
        let generation = joined.generation_id;
        let assignment =
            Assignment::new(vec![TopicPartitions::new(topic.as_str(), [0, 1])]).encode(Version::V3).unwrap();
        let synced = client
            .send(&target, options, |version| {
                let mut request = SyncGroupRequest::default()
                    .with_group_id(GroupId(s(&group)))
                    .with_generation_id(generation)
                    .with_member_id(s(&member_id))
                    .with_assignments(vec![SyncGroupRequestAssignment::default()
                        .with_member_id(s(&member_id))
                        .with_assignment(assignment.clone().into())]);
                if version >= 5 {
                    request.protocol_type = Some(s("consumer"));
                    request.protocol_name = Some(s("range"));
                }
                request
            })
            .await
            .unwrap();
        assert_eq!(synced.response.error_code, 0);
        assert_eq!(Assignment::decode(&synced.response.assignment).unwrap().assigned_partitions.len(), 1);
        // The heartbeat on a lane of its own, as the member driver sends it.
        let beat = client
            .send(&target, SendOptions::new(deadline()).lane(1), |_| {
                HeartbeatRequest::default()
                    .with_group_id(GroupId(s(&group)))
                    .with_generation_id(generation)
                    .with_member_id(s(&member_id))
            })
            .await
            .unwrap();
        assert_eq!(beat.response.error_code, 0);
        let left = client
            .send(&target, SendOptions::new(deadline()), |version| {
                let request = LeaveGroupRequest::default().with_group_id(GroupId(s(&group)));
                if version >= 3 {
                    request.with_members(vec![MemberIdentity::default().with_member_id(s(&member_id))])
                } else {
                    request.with_member_id(s(&member_id))
                }
            })
            .await
            .unwrap();
        assert_eq!(left.response.error_code, 0);
        let described = client.describe_groups(&[group.as_str()], deadline()).await.unwrap();
        assert_eq!(described[0].as_ref().unwrap().group.state, "Empty");
    });
}

#[test]
fn membership_through_send_on_kafka_3_9() {
    membership_through_send("k39");
}

#[test]
fn membership_through_send_on_kafka_4_1() {
    membership_through_send("k41");
}

/// SASL_SSL with SCRAM-SHA-256/512 and PLAIN and mTLS, from the properties files the cluster
/// wrote; a wrong password, a wrong CA and an unreachable port give their kinds within the
/// deadline, with no password in any message.
fn secured(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let Some(secured) = cluster.sasl_ssl.clone() else {
        println!("SKIP: cluster {name} has no SASL_SSL listener");
        return;
    };
    runtime().block_on(async {
        for kind in ["scram-sha-256", "scram-sha-512", "plain", "mtls"] {
            let mut config = ClientConfig::from_properties_file(cluster.client_properties(kind)).unwrap();
            let bootstrap = if kind == "mtls" { &secured.mtls_bootstrap } else { &secured.bootstrap };
            config.set_bootstrap([bootstrap]).unwrap();
            let client = Client::new(config).unwrap();
            let metadata = client.metadata(Some(&[]), deadline()).await.unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(metadata.brokers.len(), cluster.broker_bootstraps.len());
            client
                .list_groups(&ListGroupsFilter::default(), deadline())
                .await
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
        }
        let text = std::fs::read_to_string(cluster.client_properties("scram-sha-512")).unwrap();
        let start = std::time::Instant::now();
        let wrong = text.replace(&secured.scram_password, "not-the-password");
        let mut config = ClientConfig::from_properties(&wrong).unwrap();
        config.set_bootstrap([&secured.bootstrap]).unwrap();
        let e =
            Client::new(config).unwrap().metadata(None, Deadline::after(Duration::from_secs(15))).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
        for secret in [secured.scram_password.as_str(), "not-the-password"] {
            assert!(!e.to_string().contains(secret) && !format!("{e:?}").contains(secret), "{e}");
        }
        let other_ca = text.replace(
            &format!("ssl.truststore.location={}", secured.ca_pem.display()),
            &format!("ssl.truststore.location={}", secured.other_ca_pem.display()),
        );
        assert_ne!(other_ca, text);
        let mut config = ClientConfig::from_properties(&other_ca).unwrap();
        config.set_bootstrap([&secured.bootstrap]).unwrap();
        let e =
            Client::new(config).unwrap().metadata(None, Deadline::after(Duration::from_secs(15))).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut config = ClientConfig::from_properties(&text).unwrap();
        config.set_bootstrap([format!("127.0.0.1:{port}")]).unwrap();
        let e =
            Client::new(config).unwrap().metadata(None, Deadline::after(Duration::from_secs(15))).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
        assert!(start.elapsed() < Duration::from_secs(45), "each failure came before its deadline");
    });
}

#[test]
fn secured_listeners_on_kafka_3_9() {
    secured("k39");
}

#[test]
fn secured_listeners_on_kafka_4_1() {
    secured("k41");
}
