//! The client's public types: the cluster's metadata, the groups the admin calls describe, where a
//! request goes and by when.

use std::time::Duration;

use tokio::time::Instant;

use super::BrokerAddress;
#[cfg(doc)]
use super::Client;
use crate::inspect;

/// The moment a call must be done by: every retry, reconnection and wait of one call (or of a
/// whole command, when the same deadline is passed to each call) stops there.
///
/// ```
/// # use std::time::Duration;
/// # use kafka_consumer_protocol::client::Deadline;
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let deadline = Deadline::after(Duration::from_secs(30));
/// assert!(deadline.remaining() <= Duration::from_secs(30));
/// assert!(!deadline.is_expired());
/// # });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline(Instant);

impl Deadline {
    /// `timeout` from now.
    pub fn after(timeout: Duration) -> Self {
        Deadline(Instant::now() + timeout)
    }

    /// At a given instant.
    pub fn at(instant: Instant) -> Self {
        Deadline(instant)
    }

    /// The instant.
    pub fn instant(self) -> Instant {
        self.0
    }

    /// The time left (zero once passed).
    pub fn remaining(self) -> Duration {
        self.0.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub fn is_expired(self) -> bool {
        Instant::now() >= self.0
    }

    /// The earlier of this deadline and `timeout` from now.
    pub(super) fn within(self, timeout: Duration) -> Instant {
        self.0.min(Instant::now() + timeout)
    }
}

/// A broker of the cluster (a node, as Apache Kafka's clients call it), as the Metadata API
/// describes it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    /// The node id.
    pub node_id: i32,
    /// The advertised host.
    pub host: String,
    /// The advertised port.
    pub port: u16,
    /// `broker.rack`, if set.
    pub rack: Option<String>,
}

impl Node {
    pub(super) fn address(&self) -> BrokerAddress {
        BrokerAddress::new(self.host.clone(), self.port)
    }

    pub(super) fn label(&self) -> String {
        format!("broker {} ({})", self.node_id, self.address())
    }
}

/// The cluster's brokers and topics, as the Metadata API answers. The assignors' view of it,
/// [`assignor::ClusterMetadata`](crate::assignor::ClusterMetadata), is made from it with `From`.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The cluster id (Metadata v2+).
    pub cluster_id: Option<String>,
    /// The controller's node id (-1 if unknown).
    pub controller_id: i32,
    /// The live brokers.
    pub brokers: Vec<Node>,
    /// The topics asked for (all topics when none were named).
    pub topics: Vec<TopicMetadata>,
}

impl Metadata {
    /// The broker with this node id.
    pub fn broker(&self, node_id: i32) -> Option<&Node> {
        self.brokers.iter().find(|b| b.node_id == node_id)
    }

    /// The topic with this name.
    pub fn topic(&self, name: &str) -> Option<&TopicMetadata> {
        self.topics.iter().find(|t| t.name == name)
    }
}

/// One topic of [`Metadata`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMetadata {
    /// The topic name.
    pub name: String,
    /// The topic id (Metadata v10+; all zeros before).
    pub topic_id: [u8; 16],
    /// The Kafka error code for this topic (0: none; 3: UNKNOWN_TOPIC_OR_PARTITION).
    pub error_code: i16,
    /// Whether the topic is internal (`__consumer_offsets`).
    pub is_internal: bool,
    /// The partitions, sorted by index.
    pub partitions: Vec<PartitionMetadata>,
}

impl TopicMetadata {
    /// How many partitions the topic has.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }
}

/// One partition of a [`TopicMetadata`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// The partition index.
    pub partition: i32,
    /// The Kafka error code for this partition.
    pub error_code: i16,
    /// The leader's node id (-1: none).
    pub leader: i32,
    /// The replicas' node ids (look their racks up with [`Metadata::broker`]).
    pub replicas: Vec<i32>,
    /// The in-sync replicas.
    pub isr: Vec<i32>,
    /// The offline replicas (Metadata v5+).
    pub offline_replicas: Vec<i32>,
}

/// What [`Client::list_groups`] lists.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListGroupsFilter {
    /// Only groups in these states (`Stable`, `Empty`, ...); empty: any. Sent to brokers with
    /// ListGroups v4+, applied here for older ones.
    pub states: Vec<String>,
    /// Only groups of these types (`classic`, `consumer`); empty: any. Sent to brokers with
    /// ListGroups v5+; older brokers have classic groups only.
    pub types: Vec<String>,
}

/// One group of [`Client::list_groups`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGroup {
    /// The group id.
    pub group_id: String,
    /// The protocol type (`consumer`, `connect`, empty for a KIP-848 group on some versions).
    pub protocol_type: String,
    /// The state (ListGroups v4+).
    pub state: Option<String>,
    /// The type, `classic` or `consumer` (ListGroups v5+).
    pub group_type: Option<String>,
    /// The broker that listed it: the group's coordinator.
    pub coordinator: Node,
}

/// A classic group as DescribeGroups returns it: the group in [`inspect`]'s model (the one
/// model of a described classic group, whose members are
/// [`group_api::DescribedGroupMember`](crate::group_api::DescribedGroupMember)s and which
/// [`inspect_classic`](crate::inspect::inspect_classic) reads as it is) and what only the
/// network knows.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicGroupDescription {
    /// The group: its state (`Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty`,
    /// `Dead`), protocol type (`consumer`), chosen protocol (the assignor name for consumer
    /// groups) and members, in member-id order, with their raw protocol payloads (a
    /// Subscription and an Assignment for consumers; both empty while rebalancing).
    /// DescribeGroups before v6 answers `Dead` with no members both for an unknown group and
    /// for a KIP-848 group.
    pub group: inspect::ClassicGroup,
    /// The authorized operations bit field (-2^31 when not asked for).
    pub authorized_operations: i32,
    /// The coordinator that answered.
    pub coordinator: Node,
    /// The DescribeGroups version used.
    pub version: i16,
}

/// A KIP-848 group as ConsumerGroupDescribe returns it: the group in [`inspect`]'s model (the
/// one model of a KIP-848 group and its members, which [`inspect_consumer`](crate::inspect::inspect_consumer)
/// reads as it is) and what only the network knows.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupDescription {
    /// The group: state (`Stable`, `Reconciling`, `Assigning`, `Empty`, `Dead`), epochs, the
    /// server-side assignor and the members, in member-id order. Each member's current and
    /// target assignments are in topic order with ascending partitions; an empty subscribed
    /// regular expression reads as none, and the member type as
    /// [`MemberType::Unknown`](crate::inspect::MemberType::Unknown) before ConsumerGroupDescribe v1.
    /// Topic ids are not kept (the names are).
    pub group: inspect::ConsumerGroup,
    /// The authorized operations bit field.
    pub authorized_operations: i32,
    /// The coordinator that answered.
    pub coordinator: Node,
}

/// Where [`Client::send`] sends a request.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Any broker (a live connection if there is one, else a bootstrap broker).
    AnyBroker,
    /// The broker with this node id.
    Node(i32),
    /// The coordinator of this group (found with FindCoordinator and remembered).
    Coordinator(String),
}

/// Options of [`Client::send`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendOptions {
    /// When the call must be done.
    pub deadline: Deadline,
    /// The highest version to use, below what both sides support.
    pub max_version: Option<i16>,
    /// How long the broker may take to answer, instead of `request.timeout.ms` (a JoinGroup
    /// waits up to the rebalance timeout).
    pub request_timeout: Option<Duration>,
    /// Which connection to the broker carries the request: each lane is a connection of its
    /// own. A broker answers one connection's requests in order, so a request it holds (a
    /// JoinGroup waits for the whole rebalance) delays everything behind it on its lane. Lane 0,
    /// the default, carries the client's own requests (Metadata, FindCoordinator, the describe
    /// calls): send JoinGroup/SyncGroup on one other lane and heartbeats on another. Ignored
    /// for [`Target::AnyBroker`] (always lane 0).
    pub lane: u8,
}

impl SendOptions {
    /// Options with a deadline, the negotiated version and `request.timeout.ms`.
    pub fn new(deadline: Deadline) -> Self {
        SendOptions { deadline, max_version: None, request_timeout: None, lane: 0 }
    }

    /// Caps the version.
    pub fn max_version(mut self, version: i16) -> Self {
        self.max_version = Some(version);
        self
    }

    /// Overrides `request.timeout.ms` for this request.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Sends on connection `lane` of the broker (see [`lane`](Self::lane)).
    pub fn lane(mut self, lane: u8) -> Self {
        self.lane = lane;
        self
    }
}

/// A response of [`Client::send`], with the version it was sent at and the broker.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct Sent<T> {
    /// The version the request and response used.
    pub version: i16,
    /// The broker that answered.
    pub broker: Node,
    /// The decoded response.
    pub response: T,
}
