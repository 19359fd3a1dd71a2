//! A Kafka client for the consumer-group APIs, on tokio (feature `client`).
//!
//! [`Client`] bootstraps from a list of brokers, negotiates API versions with every broker it
//! connects to (ApiVersions; each request goes at the highest version both sides support),
//! reuses one connection per broker, and speaks PLAINTEXT, SSL (rustls), SASL PLAIN and
//! SCRAM-SHA-256/512. Messages are `kafka-protocol`'s, never hand-written; every response is
//! checked against the bytes present before it is decoded (no allocation sized by a count a
//! broker sent), and a response frame's size is checked against
//! [`ClientConfig::max_response_size`] before anything is allocated for it.
//!
//! Every call takes a [`Deadline`]: retries (COORDINATOR_LOAD_IN_PROGRESS,
//! COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, a lost connection) back off and stop there.
//! Errors are [`ClientError`]s whose [`kind`](ClientError::kind) is one of the CLI contract's
//! kinds; settings that cannot be honoured are [`ConfigError`]s.
//!
//! ```no_run
//! use std::time::Duration;
//! use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new(ClientConfig::new(["127.0.0.1:9092"])?)?;
//! let deadline = Deadline::after(Duration::from_secs(30));
//! for group in client.list_groups(&Default::default(), deadline).await? {
//!     println!("{} {:?} {:?}", group.group_id, group.group_type, group.state);
//! }
//! for described in client.describe_groups(&["orders"], deadline).await? {
//!     let described = described?;
//!     for member in &described.group.members {
//!         // member_metadata holds the Subscription bytes, member_assignment the Assignment.
//!         println!("{} {} bytes", member.member_id, member.member_metadata.len());
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! The properties keys read by [`ClientConfig::from_properties`]: `bootstrap.servers`,
//! `client.id`, `security.protocol`, `sasl.mechanism`, `sasl.jaas.config`,
//! `ssl.truststore.type` (PEM), `ssl.truststore.location`, `ssl.truststore.certificates`,
//! `ssl.keystore.type` (PEM), `ssl.keystore.location`, `ssl.keystore.certificate.chain`,
//! `ssl.keystore.key`, `ssl.endpoint.identification.algorithm`, `ssl.protocol`,
//! `ssl.enabled.protocols`, `request.timeout.ms`, `socket.connection.setup.timeout.ms`,
//! `retry.backoff.ms`, `retry.backoff.max.ms`.

mod codec;
mod config;
mod conn;
mod error;
mod guard;
pub mod member;
mod properties;
mod sasl;
mod tls;
mod versions;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, ConsumerGroupDescribeRequest, DescribeGroupsRequest,
    FindCoordinatorRequest, GroupId, ListGroupsRequest, MetadataRequest, TopicName,
};
use kafka_protocol::protocol::Request;
use tokio::net::TcpStream;
use tokio::time::Instant;

pub use config::{
    BrokerAddress, ClientConfig, ClientIdentity, OAuthBearerConfig, PemSource, SaslConfig, SaslMechanism, Secret,
    SecurityProtocol, StoreFile, StoreFormat, TlsConfig, TrustStore, DEFAULT_MAX_RESPONSE_SIZE,
    DEFAULT_REQUEST_TIMEOUT,
};
pub use error::{ClientError, ConfigError, ErrorKind};
/// `kafka-protocol`'s request and response messages, for [`Client::send`].
pub use kafka_protocol::messages;
/// `kafka-protocol`'s string type, which its messages use.
pub use kafka_protocol::protocol::StrBytes;

use conn::Connection;
use error::{code_name, is_retriable_group_code};
use versions::ApiVersionTable;

use crate::group_api::{self, ErrorCode};
use crate::inspect;
use crate::TopicPartitions;

/// Decodes one response frame (the bytes after its 4-byte size: the response header, then the
/// body) of `api_key` at `version`, exactly as the client decodes what a broker sends: every
/// length and count is checked against the bytes present first, then `kafka-protocol` decodes.
/// Decoded APIs: Metadata, FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup,
/// DescribeGroups, ListGroups, SaslHandshake, ApiVersions, SaslAuthenticate,
/// ConsumerGroupDescribe; anything else (or a version `kafka-protocol` does not know) is a
/// `protocol` error.
///
/// ```
/// use kafka_consumer_protocol::client::{decode_response_frame, DecodedResponse};
/// // Heartbeat v0: correlation id 7, error code 27 (REBALANCE_IN_PROGRESS).
/// let frame = bytes::Bytes::from_static(&[0, 0, 0, 7, 0, 27]);
/// let DecodedResponse::Heartbeat(response) = decode_response_frame(12, 0, frame)? else { unreachable!() };
/// assert_eq!(response.error_code, 27);
/// # Ok::<(), kafka_consumer_protocol::client::ClientError>(())
/// ```
pub fn decode_response_frame(api_key: i16, version: i16, frame: Bytes) -> Result<DecodedResponse, ClientError> {
    codec::decode_any(api_key, version, frame)
}

/// A response decoded by [`decode_response_frame`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum DecodedResponse {
    Metadata(messages::MetadataResponse),
    FindCoordinator(messages::FindCoordinatorResponse),
    JoinGroup(messages::JoinGroupResponse),
    Heartbeat(messages::HeartbeatResponse),
    LeaveGroup(messages::LeaveGroupResponse),
    SyncGroup(messages::SyncGroupResponse),
    DescribeGroups(messages::DescribeGroupsResponse),
    ListGroups(messages::ListGroupsResponse),
    SaslHandshake(messages::SaslHandshakeResponse),
    ApiVersions(messages::ApiVersionsResponse),
    SaslAuthenticate(messages::SaslAuthenticateResponse),
    ConsumerGroupDescribe(messages::ConsumerGroupDescribeResponse),
}

/// The API keys [`decode_response_frame`] decodes.
pub const DECODED_API_KEYS: [i16; 12] = codec::DECODED_APIS;

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
    fn within(self, timeout: Duration) -> Instant {
        self.0.min(Instant::now() + timeout)
    }
}

/// A broker of the cluster, as Metadata describes it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Broker {
    /// The node id.
    pub node_id: i32,
    /// The advertised host.
    pub host: String,
    /// The advertised port.
    pub port: u16,
    /// `broker.rack`, if set.
    pub rack: Option<String>,
}

impl Broker {
    fn address(&self) -> BrokerAddress {
        BrokerAddress::new(self.host.clone(), self.port)
    }

    fn label(&self) -> String {
        format!("broker {} ({})", self.node_id, self.address())
    }
}

/// The cluster's brokers and topics (Metadata).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMetadata {
    /// The cluster id (Metadata v2+).
    pub cluster_id: Option<String>,
    /// The controller's node id (-1 if unknown).
    pub controller_id: i32,
    /// The live brokers.
    pub brokers: Vec<Broker>,
    /// The topics asked for (all topics when none were named).
    pub topics: Vec<TopicMetadata>,
}

impl ClusterMetadata {
    /// The broker with this node id.
    pub fn broker(&self, node_id: i32) -> Option<&Broker> {
        self.brokers.iter().find(|b| b.node_id == node_id)
    }

    /// The topic with this name.
    pub fn topic(&self, name: &str) -> Option<&TopicMetadata> {
        self.topics.iter().find(|t| t.name == name)
    }
}

/// One topic of [`ClusterMetadata`].
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
    /// The replicas' node ids (look their racks up with [`ClusterMetadata::broker`]).
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
    pub coordinator: Broker,
}

/// A classic group as DescribeGroups returns it: the group in [`inspect`]'s model (the one
/// model of a described classic group, whose members are
/// [`group_api::DescribedGroupMember`]s and which
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
    pub coordinator: Broker,
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
    pub coordinator: Broker,
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
    pub broker: Broker,
    /// The decoded response.
    pub response: T,
}

/// A connection with what its broker supports.
struct Live {
    conn: Connection,
    versions: ApiVersionTable,
}

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Live>>>>;

struct Inner {
    config: ClientConfig,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Connections by address (bootstrap addresses and brokers alike) and lane: one per pair.
    slots: Mutex<HashMap<(BrokerAddress, u8), Slot>>,
    /// Brokers by node id, from the last Metadata.
    brokers: Mutex<HashMap<i32, Broker>>,
    /// Group coordinators found, by group id.
    coordinators: Mutex<HashMap<String, Broker>>,
}

/// A client of one cluster. Cheap to clone (the clones share connections and caches); every
/// method may be called concurrently.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("config", &self.inner.config).finish_non_exhaustive()
    }
}

/// A poisoned lock only means another task panicked while holding it; the maps stay usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn text(s: &StrBytes) -> String {
    s.as_str().to_string()
}

fn opt_text(s: &Option<StrBytes>) -> Option<String> {
    s.as_ref().map(text)
}

/// A ConsumerGroupDescribe group (answered at `version`) in [`inspect`]'s model, as
/// [`ConsumerGroupDescription::group`] documents it.
fn consumer_group(
    group_id: String,
    group: &messages::consumer_group_describe_response::DescribedGroup,
    version: i16,
) -> inspect::ConsumerGroup {
    // Topic order, ascending partitions: the same assignment reads the same however the broker
    // lists it.
    let topics = |a: &messages::consumer_group_describe_response::Assignment| {
        let mut out: Vec<TopicPartitions> = a
            .topic_partitions
            .iter()
            .map(|t| TopicPartitions::new(text(&t.topic_name.0), t.partitions.clone()))
            .collect();
        out.sort();
        for g in &mut out {
            g.partitions.sort_unstable();
        }
        out
    };
    let mut members: Vec<inspect::ConsumerMember> = group
        .members
        .iter()
        .map(|m| inspect::ConsumerMember {
            member_id: text(&m.member_id),
            instance_id: opt_text(&m.instance_id),
            rack_id: opt_text(&m.rack_id),
            member_epoch: m.member_epoch,
            client_id: text(&m.client_id),
            client_host: text(&m.client_host),
            subscribed_topics: m.subscribed_topic_names.iter().map(|t| text(&t.0)).collect(),
            subscribed_topic_regex: opt_text(&m.subscribed_topic_regex).filter(|r| !r.is_empty()),
            assignment: topics(&m.assignment),
            target_assignment: topics(&m.target_assignment),
            // ConsumerGroupDescribe v1's member type: 0 classic, 1 consumer; absent before v1.
            member_type: match (version >= 1).then_some(m.member_type) {
                Some(0) => inspect::MemberType::Classic,
                Some(1) => inspect::MemberType::Consumer,
                _ => inspect::MemberType::Unknown,
            },
        })
        .collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    inspect::ConsumerGroup {
        group_id,
        state: text(&group.group_state),
        group_epoch: group.group_epoch,
        assignment_epoch: group.assignment_epoch,
        assignor: text(&group.assignor_name),
        members,
    }
}

/// Backoff between retries: doubling from `retry.backoff.ms` to `retry.backoff.max.ms`.
struct Backoff {
    next: Duration,
    max: Duration,
    attempts: u32,
}

impl Backoff {
    fn new(config: &ClientConfig) -> Self {
        Backoff { next: config.retry_backoff, max: config.retry_backoff_max.max(config.retry_backoff), attempts: 1 }
    }

    /// Waits before the next attempt; `false` if the deadline would pass first.
    async fn wait(&mut self, deadline: Deadline) -> bool {
        if deadline.remaining() <= self.next {
            return false;
        }
        tokio::time::sleep(self.next).await;
        self.next = (self.next * 2).min(self.max);
        self.attempts += 1;
        true
    }

    /// The error to report when the deadline ends the retries: a broker that stayed
    /// unreachable is `unreachable`, anything else a `timeout` naming the last error.
    fn give_up(&self, last: ClientError) -> ClientError {
        if last.kind() == ErrorKind::Unreachable || last.kind() == ErrorKind::Timeout {
            return last;
        }
        let attempts = self.attempts;
        ClientError::timeout(format!("gave up at the deadline after {attempts} attempts: {last}"))
    }
}

/// How many times an idempotent request is sent when its connection keeps failing: a broker
/// that refuses connections is reported at once rather than at the deadline.
const MAX_ATTEMPTS: u32 = 3;

/// Whether a failed call may be repeated on a new connection: the connection was lost, or the
/// broker did not answer within `request.timeout.ms` (the overall deadline ends the loop).
fn is_connection_error(e: &ClientError) -> bool {
    matches!(e.kind(), ErrorKind::Unreachable | ErrorKind::Timeout) && e.error_code().is_none()
}

impl Client {
    /// A client for `config`. Reads the TLS files now (a missing or unusable one is a
    /// [`ConfigError`]); connects only when a call needs a broker.
    pub fn new(config: ClientConfig) -> Result<Self, ConfigError> {
        if config.bootstrap_servers.is_empty() {
            return Err(ConfigError::new(
                "bootstrap.servers",
                "no bootstrap broker: give --bootstrap-server or bootstrap.servers",
            ));
        }
        if config.security_protocol.uses_sasl() && config.sasl.is_none() {
            return Err(ConfigError::new("sasl.jaas.config", "SASL needs a mechanism, a user and a password"));
        }
        let tls = if config.security_protocol.uses_tls() { Some(tls::client_config(&config.tls)?) } else { None };
        Ok(Client {
            inner: Arc::new(Inner {
                config,
                tls,
                slots: Mutex::new(HashMap::new()),
                brokers: Mutex::new(HashMap::new()),
                coordinators: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    fn slot(&self, address: &BrokerAddress, lane: u8) -> Slot {
        lock(&self.inner.slots).entry((address.clone(), lane)).or_default().clone()
    }

    /// The connection to `address`, reusing a live one.
    async fn connection(
        &self,
        address: &BrokerAddress,
        label: &str,
        lane: u8,
        deadline: Deadline,
    ) -> Result<Arc<Live>, ClientError> {
        let slot = self.slot(address, lane);
        let mut held = tokio::time::timeout_at(deadline.instant(), slot.lock())
            .await
            .map_err(|_| ClientError::timeout(format!("connecting to {label}: the deadline passed")))?;
        if let Some(live) = held.as_ref().filter(|live| !live.conn.is_closed()) {
            return Ok(live.clone());
        }
        *held = None;
        let live = Arc::new(self.establish(address, label, deadline).await?);
        *held = Some(live.clone());
        Ok(live)
    }

    /// TCP, TLS, ApiVersions, SASL: a new connection ready for requests.
    async fn establish(&self, address: &BrokerAddress, label: &str, deadline: Deadline) -> Result<Live, ClientError> {
        let config = &self.inner.config;
        let setup_deadline = deadline.within(config.connection_setup_timeout);
        let setup = async {
            let tcp = TcpStream::connect((address.host.as_str(), address.port))
                .await
                .map_err(|e| ClientError::unreachable(format!("cannot connect to {label}: {e}")))?;
            let _ = tcp.set_nodelay(true);
            let stream: Box<dyn conn::BrokerStream> = match &self.inner.tls {
                Some(tls) => Box::new(tls::handshake(tls.clone(), &address.host, tcp, label).await?),
                None => Box::new(tcp),
            };
            let conn = Connection::start(stream, label.to_string(), config.client_id.clone(), config.max_response_size);
            let versions = negotiate(&conn, setup_deadline).await?;
            if let Some(sasl) = &config.sasl {
                sasl::authenticate(&conn, &versions, sasl, setup_deadline).await.map_err(|e| {
                    // A broker that closes the connection during SASL refused the credentials
                    // (older brokers do not send an error first).
                    if e.kind() == ErrorKind::Unreachable {
                        e.with_kind(ErrorKind::Authentication)
                    } else {
                        e
                    }
                })?;
            }
            Ok(Live { conn, versions })
        };
        match tokio::time::timeout_at(setup_deadline, setup).await {
            Ok(result) => result,
            Err(_) if setup_deadline < deadline.instant() => Err(ClientError::timeout(format!(
                "connecting to {label}: not ready within socket.connection.setup.timeout.ms ({} ms)",
                config.connection_setup_timeout.as_millis()
            ))),
            Err(_) => Err(ClientError::timeout(format!("connecting to {label}: the deadline passed"))),
        }
    }

    /// A live connection to any broker: one already open, else the bootstrap brokers in order.
    async fn any_connection(&self, deadline: Deadline) -> Result<(Arc<Live>, Option<Broker>), ClientError> {
        // Lane 0 only: the other lanes may hold a JoinGroup the broker answers minutes later.
        let open: Vec<Slot> =
            lock(&self.inner.slots).iter().filter(|((_, lane), _)| *lane == 0).map(|(_, slot)| slot.clone()).collect();
        for slot in open {
            if let Ok(held) = slot.try_lock() {
                if let Some(live) = held.as_ref().filter(|live| !live.conn.is_closed()) {
                    return Ok((live.clone(), None));
                }
            }
        }
        let mut errors = Vec::new();
        for address in &self.inner.config.bootstrap_servers {
            let label = format!("bootstrap broker {address}");
            match self.connection(address, &label, 0, deadline).await {
                Ok(live) => return Ok((live, None)),
                // A wrong password or CA is the answer, not a reason to try the next broker.
                Err(e) if matches!(e.kind(), ErrorKind::Authentication | ErrorKind::Tls) => return Err(e),
                Err(e) => errors.push(e),
            }
            if deadline.is_expired() {
                break;
            }
        }
        if errors.len() == 1 {
            return Err(errors.remove(0));
        }
        let kind =
            if errors.iter().all(|e| e.kind() == errors[0].kind()) { errors[0].kind() } else { ErrorKind::Unreachable };
        let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
        Err(ClientError::new(kind, format!("no bootstrap broker answered: {}", all.join("; "))))
    }

    /// The broker with `node_id`, refreshing the metadata if it is not known yet.
    async fn broker(&self, node_id: i32, deadline: Deadline) -> Result<Broker, ClientError> {
        if let Some(broker) = lock(&self.inner.brokers).get(&node_id).cloned() {
            return Ok(broker);
        }
        let metadata = self.metadata(Some(&[]), deadline).await?;
        metadata
            .broker(node_id)
            .cloned()
            .ok_or_else(|| ClientError::protocol(format!("broker {node_id} is not in the cluster metadata")))
    }

    async fn broker_connection(&self, broker: &Broker, lane: u8, deadline: Deadline) -> Result<Arc<Live>, ClientError> {
        self.connection(&broker.address(), &broker.label(), lane, deadline).await
    }

    /// Sends one request built for the negotiated version on `live`.
    async fn call_on<R: Request>(
        &self,
        live: &Live,
        options: &SendOptions,
        build: &impl Fn(i16) -> R,
    ) -> Result<(i16, R::Response), ClientError> {
        let version = live.versions.pick::<R>(options.max_version, &live.conn.label)?;
        let request = build(version);
        let timeout = options.request_timeout.unwrap_or(self.inner.config.request_timeout);
        let request_deadline = options.deadline.within(timeout);
        let response = live.conn.call(&request, version, request_deadline).await?;
        Ok((version, response))
    }

    /// Sends a request to `target` at the highest version both sides support (at most
    /// `options.max_version`); `build` makes the request for that version.
    ///
    /// Connecting is retried with backoff until the deadline (for a coordinator, finding it
    /// again), but a request that was sent is not sent again: when its connection is lost the
    /// error is `unreachable` and the caller decides. Error codes inside the response are the
    /// caller's to read; after NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE call
    /// [`forget_coordinator`](Self::forget_coordinator) before sending again.
    ///
    /// The responses of the APIs in [`DECODED_API_KEYS`] are checked against the bytes present
    /// before they are decoded. Other APIs' responses go straight to `kafka-protocol`, which
    /// pre-allocates each array by the count the broker sent: the frame cap bounds the bytes
    /// read, not that allocation, so only send them to brokers you trust.
    ///
    /// ```no_run
    /// use kafka_consumer_protocol::client::messages::{GroupId, HeartbeatRequest};
    /// use kafka_consumer_protocol::client::{Client, Deadline, SendOptions, StrBytes, Target};
    /// # async fn run(client: Client, member_id: StrBytes) -> Result<(), kafka_consumer_protocol::client::ClientError> {
    /// let deadline = Deadline::after(std::time::Duration::from_secs(10));
    /// let target = Target::Coordinator("orders".into());
    /// let sent = client
    ///     .send(&target, SendOptions::new(deadline), |_version| {
    ///         HeartbeatRequest::default()
    ///             .with_group_id(GroupId("orders".into()))
    ///             .with_generation_id(4)
    ///             .with_member_id(member_id.clone())
    ///     })
    ///     .await?;
    /// println!("Heartbeat v{}: error {}", sent.version, sent.response.error_code);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send<R: Request>(
        &self,
        target: &Target,
        options: SendOptions,
        build: impl Fn(i16) -> R,
    ) -> Result<Sent<R::Response>, ClientError> {
        let deadline = options.deadline;
        let mut backoff = Backoff::new(&self.inner.config);
        loop {
            let connected = self.target_connection(target, options.lane, deadline).await;
            let (live, broker) = match (connected, target) {
                (Ok(found), _) => found,
                // A coordinator that cannot be reached may have moved: find it again.
                (Err(e), Target::Coordinator(group)) if is_connection_error(&e) => {
                    self.forget_coordinator(group);
                    if !backoff.wait(deadline).await {
                        return Err(backoff.give_up(e));
                    }
                    continue;
                }
                (Err(e), _) => return Err(e),
            };
            let (version, response) = self.call_on(&live, &options, &build).await?;
            return Ok(Sent { version, broker, response });
        }
    }

    /// The connection for `target`. Finding a broker or a coordinator sends requests itself,
    /// through [`send`](Self::send): the boxed future breaks the cycle of future types.
    fn target_connection<'a>(
        &'a self,
        target: &'a Target,
        lane: u8,
        deadline: Deadline,
    ) -> BoxFuture<'a, Result<(Arc<Live>, Broker), ClientError>> {
        Box::pin(async move {
            match target {
                Target::AnyBroker => {
                    let (live, broker) = self.any_connection(deadline).await?;
                    let broker =
                        broker.unwrap_or_else(|| Broker { node_id: -1, host: String::new(), port: 0, rack: None });
                    Ok((live, broker))
                }
                Target::Node(id) => {
                    let broker = self.broker(*id, deadline).await?;
                    Ok((self.broker_connection(&broker, lane, deadline).await?, broker))
                }
                Target::Coordinator(group) => {
                    let broker = self.coordinator(group, deadline).await?;
                    Ok((self.broker_connection(&broker, lane, deadline).await?, broker))
                }
            }
        })
    }

    /// An idempotent request with retries: a lost connection or a request timeout reconnects
    /// and sends again, [`MAX_ATTEMPTS`] times at most and until the deadline.
    async fn call_retrying<R: Request>(
        &self,
        target: &Target,
        deadline: Deadline,
        build: impl Fn(i16) -> R,
    ) -> Result<Sent<R::Response>, ClientError> {
        let mut backoff = Backoff::new(&self.inner.config);
        loop {
            match self.send(target, SendOptions::new(deadline), &build).await {
                Err(e) if is_connection_error(&e) && !deadline.is_expired() && backoff.attempts < MAX_ATTEMPTS => {
                    if let Target::Coordinator(group) = target {
                        self.forget_coordinator(group);
                    }
                    if !backoff.wait(deadline).await {
                        return Err(backoff.give_up(e));
                    }
                }
                other => return other,
            }
        }
    }

    /// The API version range a broker supports for `api_key` (connecting to it if needed);
    /// `None` if it does not support the API.
    pub async fn api_versions(
        &self,
        target: &Target,
        api_key: i16,
        deadline: Deadline,
    ) -> Result<Option<(i16, i16)>, ClientError> {
        let (live, _) = self.target_connection(target, 0, deadline).await?;
        Ok(live.versions.range(api_key))
    }

    /// Metadata: the brokers (with racks), and the named topics (`None`: all topics;
    /// `Some(&[])`: none) with their partitions and replicas.
    pub async fn metadata(&self, topics: Option<&[&str]>, deadline: Deadline) -> Result<ClusterMetadata, ClientError> {
        let sent = self
            .call_retrying(&Target::AnyBroker, deadline, |version| {
                let mut request = MetadataRequest::default();
                request.topics = match topics {
                    None if version >= 1 => None,
                    None => Some(Vec::new()),
                    Some(names) => Some(
                        names
                            .iter()
                            .map(|name| {
                                messages::metadata_request::MetadataRequestTopic::default()
                                    .with_name(Some(TopicName(StrBytes::from_string(name.to_string()))))
                            })
                            .collect(),
                    ),
                };
                request.allow_auto_topic_creation = version < 4;
                request
            })
            .await?;
        let response = sent.response;
        if response.error_code != 0 {
            return Err(ClientError::from_code(response.error_code, format!("Metadata v{}", sent.version), None));
        }
        let brokers: Vec<Broker> = response
            .brokers
            .iter()
            .map(|b| Broker { node_id: b.node_id.0, host: text(&b.host), port: b.port as u16, rack: opt_text(&b.rack) })
            .collect();
        {
            let mut known = lock(&self.inner.brokers);
            for broker in &brokers {
                known.insert(broker.node_id, broker.clone());
            }
        }
        let mut topics_out: Vec<TopicMetadata> = response
            .topics
            .iter()
            // Metadata v0 reads an empty list as "all topics"; the caller asked for none.
            .filter(|_| !(topics == Some(&[]) && sent.version == 0))
            .map(|t| {
                let mut partitions: Vec<PartitionMetadata> = t
                    .partitions
                    .iter()
                    .map(|p| PartitionMetadata {
                        partition: p.partition_index,
                        error_code: p.error_code,
                        leader: p.leader_id.0,
                        replicas: p.replica_nodes.iter().map(|n| n.0).collect(),
                        isr: p.isr_nodes.iter().map(|n| n.0).collect(),
                        offline_replicas: p.offline_replicas.iter().map(|n| n.0).collect(),
                    })
                    .collect();
                partitions.sort_by_key(|p| p.partition);
                TopicMetadata {
                    name: t.name.as_ref().map(|n| text(&n.0)).unwrap_or_default(),
                    topic_id: *t.topic_id.as_bytes(),
                    error_code: t.error_code,
                    is_internal: t.is_internal,
                    partitions,
                }
            })
            .collect();
        topics_out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ClusterMetadata {
            cluster_id: opt_text(&response.cluster_id),
            controller_id: response.controller_id.0,
            brokers,
            topics: topics_out,
        })
    }

    /// Forgets the remembered coordinator of `group` (after NOT_COORDINATOR or
    /// COORDINATOR_NOT_AVAILABLE), so the next call finds it again.
    pub fn forget_coordinator(&self, group: &str) {
        lock(&self.inner.coordinators).remove(group);
    }

    /// The coordinator of `group` (FindCoordinator, remembered until forgotten).
    pub async fn coordinator(&self, group: &str, deadline: Deadline) -> Result<Broker, ClientError> {
        if let Some(broker) = lock(&self.inner.coordinators).get(group).cloned() {
            return Ok(broker);
        }
        let mut found = self.find_coordinators(&[group], deadline).await?;
        found
            .pop()
            .map(|(_, result)| result)
            .unwrap_or_else(|| Err(ClientError::protocol("FindCoordinator answered nothing")))
    }

    /// The coordinators of several groups (those remembered, and the others found with
    /// FindCoordinator: batched in one request on brokers with v4+, one request per group
    /// below). Each group's result is separate (one group's
    /// GROUP_AUTHORIZATION_FAILED does not fail the others); COORDINATOR_NOT_AVAILABLE and
    /// COORDINATOR_LOAD_IN_PROGRESS are retried until the deadline.
    pub async fn find_coordinators<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<Broker, ClientError>)>, ClientError> {
        let mut results: HashMap<String, Result<Broker, ClientError>> = HashMap::new();
        let mut todo: Vec<String> = Vec::new();
        for group in groups {
            let group = group.as_ref().to_string();
            if let Some(known) = lock(&self.inner.coordinators).get(&group).cloned() {
                results.insert(group, Ok(known));
            } else if !todo.contains(&group) {
                todo.push(group);
            }
        }
        let mut backoff = Backoff::new(&self.inner.config);
        // The retriable answer that sent the groups still in `todo` round again. If the deadline
        // then ends during the retry's own request, that answer is what the caller needs to see
        // (as when it ends during the backoff), not "no response before the deadline".
        let mut sent_round_again: Option<ClientError> = None;
        while !todo.is_empty() {
            let live = match self.any_connection(deadline).await {
                Ok((live, _)) => live,
                Err(e) if e.kind() == ErrorKind::Timeout && sent_round_again.is_some() => {
                    let error = backoff.give_up(sent_round_again.take().unwrap_or(e));
                    for group in todo.drain(..) {
                        results.insert(group, Err(error.clone()));
                    }
                    break;
                }
                Err(e) => return Err(e),
            };
            let batched = live.versions.pick::<FindCoordinatorRequest>(None, &live.conn.label)? >= 4;
            let chunks: Vec<Vec<String>> =
                if batched { vec![todo.clone()] } else { todo.iter().map(|g| vec![g.clone()]).collect() };
            let mut retry = Vec::new();
            let mut last_retriable = None;
            for chunk in chunks {
                let sent = self
                    .call_retrying(&Target::AnyBroker, deadline, |version| {
                        let mut request = FindCoordinatorRequest::default();
                        if version >= 4 {
                            request.coordinator_keys = chunk.iter().map(|g| StrBytes::from_string(g.clone())).collect();
                        } else {
                            request.key = StrBytes::from_string(chunk[0].clone());
                        }
                        request
                    })
                    .await;
                let sent = match sent {
                    Ok(sent) => sent,
                    Err(e) if e.kind() == ErrorKind::Timeout && sent_round_again.is_some() => {
                        let error = backoff.give_up(sent_round_again.take().unwrap_or(e));
                        for group in &todo {
                            results.entry(group.clone()).or_insert_with(|| Err(error.clone()));
                        }
                        retry.clear();
                        break;
                    }
                    Err(e) => return Err(e),
                };
                let version = sent.version;
                let answers: Vec<(String, i16, Option<String>, i32, String, i32)> = if version >= 4 {
                    sent.response
                        .coordinators
                        .iter()
                        .map(|c| {
                            (text(&c.key), c.error_code, opt_text(&c.error_message), c.node_id.0, text(&c.host), c.port)
                        })
                        .collect()
                } else {
                    let r = &sent.response;
                    vec![(
                        chunk[0].clone(),
                        r.error_code,
                        opt_text(&r.error_message),
                        r.node_id.0,
                        text(&r.host),
                        r.port,
                    )]
                };
                for (group, code, message, node_id, host, port) in answers {
                    if !chunk.contains(&group) {
                        continue;
                    }
                    let context = format!("FindCoordinator v{version} for group '{group}'");
                    if code == 0 {
                        let rack = lock(&self.inner.brokers).get(&node_id).and_then(|b| b.rack.clone());
                        let broker = Broker { node_id, host, port: port as u16, rack };
                        lock(&self.inner.coordinators).insert(group.clone(), broker.clone());
                        results.insert(group, Ok(broker));
                    } else if is_retriable_group_code(code) {
                        last_retriable = Some(ClientError::from_code(code, context, message.as_deref()));
                        retry.push(group);
                    } else {
                        results.insert(group, Err(ClientError::from_code(code, context, message.as_deref())));
                    }
                }
                for group in &chunk {
                    if !results.contains_key(group) && !retry.contains(group) {
                        results.insert(
                            group.clone(),
                            Err(ClientError::protocol(format!(
                                "FindCoordinator v{version} did not answer for group '{group}'"
                            ))),
                        );
                    }
                }
            }
            todo = retry;
            sent_round_again = None;
            if let Some(last) = last_retriable {
                if backoff.wait(deadline).await {
                    sent_round_again = Some(last);
                } else {
                    let error = backoff.give_up(last);
                    for group in todo.drain(..) {
                        results.insert(group, Err(error.clone()));
                    }
                }
            }
        }
        let mut ordered = Vec::new();
        for group in groups {
            let group = group.as_ref();
            if let Some(result) = results.remove(group) {
                ordered.push((group.to_string(), result));
            }
        }
        Ok(ordered)
    }

    /// Every group of the cluster: ListGroups on every broker (each lists the groups it
    /// coordinates), with `filter`.
    pub async fn list_groups(
        &self,
        filter: &ListGroupsFilter,
        deadline: Deadline,
    ) -> Result<Vec<ListedGroup>, ClientError> {
        let metadata = self.metadata(Some(&[]), deadline).await?;
        let mut tasks = tokio::task::JoinSet::new();
        for broker in metadata.brokers {
            let client = self.clone();
            let filter = filter.clone();
            tasks.spawn(async move { client.list_groups_on(broker, &filter, deadline).await });
        }
        let mut groups = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            let listed = joined.map_err(|e| ClientError::protocol(format!("a ListGroups task failed: {e}")))??;
            groups.extend(listed);
        }
        groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        Ok(groups)
    }

    async fn list_groups_on(
        &self,
        broker: Broker,
        filter: &ListGroupsFilter,
        deadline: Deadline,
    ) -> Result<Vec<ListedGroup>, ClientError> {
        let target = Target::Node(broker.node_id);
        let mut backoff = Backoff::new(&self.inner.config);
        loop {
            let sent = self
                .call_retrying(&target, deadline, |version| {
                    let mut request = ListGroupsRequest::default();
                    if version >= 4 {
                        request.states_filter =
                            filter.states.iter().map(|s| StrBytes::from_string(s.clone())).collect();
                    }
                    if version >= 5 {
                        request.types_filter = filter.types.iter().map(|s| StrBytes::from_string(s.clone())).collect();
                    }
                    request
                })
                .await?;
            let response = sent.response;
            let code = response.error_code;
            if is_retriable_group_code(code) {
                let e =
                    ClientError::from_code(code, format!("ListGroups v{} on {}", sent.version, broker.label()), None);
                if !backoff.wait(deadline).await {
                    return Err(backoff.give_up(e));
                }
                continue;
            }
            if code != 0 {
                return Err(ClientError::from_code(
                    code,
                    format!("ListGroups v{} on {}", sent.version, broker.label()),
                    None,
                ));
            }
            let version = sent.version;
            let groups = response
                .groups
                .iter()
                .map(|g| ListedGroup {
                    group_id: text(&g.group_id.0),
                    protocol_type: text(&g.protocol_type),
                    state: (version >= 4).then(|| text(&g.group_state)),
                    group_type: (version >= 5).then(|| text(&g.group_type)),
                    coordinator: broker.clone(),
                })
                .filter(|g| {
                    // Filters the broker could not apply: states before v4; types before v5,
                    // when every group is classic.
                    let state_ok = filter.states.is_empty()
                        || g.state.as_ref().is_none_or(|s| filter.states.iter().any(|f| f.eq_ignore_ascii_case(s)));
                    let group_type = g.group_type.as_deref().unwrap_or("classic");
                    let type_ok =
                        filter.types.is_empty() || filter.types.iter().any(|f| f.eq_ignore_ascii_case(group_type));
                    state_ok && type_ok
                })
                .collect();
            return Ok(groups);
        }
    }

    /// DescribeGroups for classic groups, each sent to its coordinator (coordinators queried
    /// in parallel). One result per distinct group, in the order asked; a group's retriable
    /// error (coordinator loading, moved) is retried until the deadline, finding the
    /// coordinator again; GROUP_ID_NOT_FOUND (v6) is a `not_found` error.
    pub async fn describe_groups<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<Result<ClassicGroupDescription, ClientError>>, ClientError> {
        let names: Vec<String> = groups.iter().map(|g| g.as_ref().to_string()).collect();
        self.per_coordinator(names, deadline, |client, broker, batch| async move {
            client.describe_on(broker, batch, deadline).await
        })
        .await
    }

    /// ConsumerGroupDescribe for KIP-848 groups, each sent to its coordinator. A broker that
    /// does not serve consumer groups (Kafka 3.9 advertises the API but answers
    /// UNSUPPORTED_VERSION) and a group that is not a consumer group give `not_found` errors.
    pub async fn describe_consumer_groups<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<Result<ConsumerGroupDescription, ClientError>>, ClientError> {
        let names: Vec<String> = groups.iter().map(|g| g.as_ref().to_string()).collect();
        self.per_coordinator(names, deadline, |client, broker, batch| async move {
            client.consumer_describe_on(broker, batch, deadline).await
        })
        .await
    }

    /// Runs `describe` for the groups of each coordinator in parallel, retrying the groups it
    /// reports as retriable (`Err` with a retriable code) after finding their coordinators
    /// again, until the deadline.
    async fn per_coordinator<T, F, Fut>(
        &self,
        names: Vec<String>,
        deadline: Deadline,
        describe: F,
    ) -> Result<Vec<Result<T, ClientError>>, ClientError>
    where
        T: Send + 'static,
        F: Fn(Client, Broker, Vec<String>) -> Fut,
        Fut: std::future::Future<Output = Result<Vec<(String, Result<T, ClientError>)>, ClientError>> + Send + 'static,
    {
        let mut unique = Vec::new();
        for name in &names {
            if !unique.contains(name) {
                unique.push(name.clone());
            }
        }
        let mut done: HashMap<String, Result<T, ClientError>> = HashMap::new();
        let mut todo = unique.clone();
        let mut backoff = Backoff::new(&self.inner.config);
        while !todo.is_empty() {
            let mut by_coordinator: HashMap<i32, (Broker, Vec<String>)> = HashMap::new();
            for (group, found) in self.find_coordinators(&todo, deadline).await? {
                match found {
                    Ok(broker) => {
                        by_coordinator.entry(broker.node_id).or_insert_with(|| (broker, Vec::new())).1.push(group)
                    }
                    Err(e) => {
                        done.insert(group, Err(e));
                    }
                }
            }
            let mut tasks = tokio::task::JoinSet::new();
            for (_, (broker, batch)) in by_coordinator {
                let fallback: Vec<String> = batch.clone();
                let fut = describe(self.clone(), broker, batch);
                tasks.spawn(async move { (fallback, fut.await) });
            }
            let mut retry = Vec::new();
            let mut last = None;
            while let Some(joined) = tasks.join_next().await {
                let (batch, outcome) =
                    joined.map_err(|e| ClientError::protocol(format!("a describe task failed: {e}")))?;
                let answers = match outcome {
                    Ok(answers) => answers,
                    Err(e) => batch.into_iter().map(|g| (g, Err(e.clone()))).collect(),
                };
                for (group, result) in answers {
                    match result {
                        Err(e) if e.error_code().is_some_and(is_retriable_group_code) || is_connection_error(&e) => {
                            self.forget_coordinator(&group);
                            last = Some(e);
                            retry.push(group);
                        }
                        other => {
                            done.insert(group, other);
                        }
                    }
                }
            }
            todo = retry;
            if let Some(last) = last {
                if !backoff.wait(deadline).await {
                    let error = backoff.give_up(last);
                    for group in todo.drain(..) {
                        done.insert(group, Err(error.clone()));
                    }
                }
            }
        }
        Ok(unique
            .into_iter()
            .map(|g| {
                done.remove(&g).unwrap_or_else(|| Err(ClientError::protocol(format!("no answer for group '{g}'"))))
            })
            .collect())
    }

    async fn describe_on(
        &self,
        broker: Broker,
        batch: Vec<String>,
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<ClassicGroupDescription, ClientError>)>, ClientError> {
        let sent = self
            .call_retrying(&Target::Node(broker.node_id), deadline, |_| {
                DescribeGroupsRequest::default()
                    .with_groups(batch.iter().map(|g| GroupId(StrBytes::from_string(g.clone()))).collect())
            })
            .await?;
        let version = sent.version;
        let mut answers = Vec::new();
        for group in group_api::kafka::from_describe_groups_response(sent.response).groups {
            let group_id = group.group_id;
            let context = format!("DescribeGroups v{version} for group '{group_id}' on {}", broker.label());
            let result = if group.error != ErrorCode::NONE {
                Err(ClientError::from_code(group.error.0, context, group.error_message.as_deref()))
            } else {
                let mut members = group.members;
                members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
                Ok(ClassicGroupDescription {
                    group: inspect::ClassicGroup {
                        group_id: group_id.clone(),
                        state: group.group_state,
                        protocol_type: group.protocol_type,
                        protocol: group.protocol_data,
                        members,
                    },
                    authorized_operations: group.authorized_operations,
                    coordinator: broker.clone(),
                    version,
                })
            };
            answers.push((group_id, result));
        }
        Ok(answers)
    }

    async fn consumer_describe_on(
        &self,
        broker: Broker,
        batch: Vec<String>,
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<ConsumerGroupDescription, ClientError>)>, ClientError> {
        let no_consumer_groups = |why: &str| {
            ClientError::new(
                ErrorKind::NotFound,
                format!("{} does not serve KIP-848 consumer groups ({why})", broker.label()),
            )
        };
        let target = Target::Node(broker.node_id);
        if self.api_versions(&target, ConsumerGroupDescribeRequest::KEY, deadline).await?.is_none() {
            let error = no_consumer_groups("no ConsumerGroupDescribe API");
            return Ok(batch.into_iter().map(|g| (g, Err(error.clone()))).collect());
        }
        let sent = self
            .call_retrying(&target, deadline, |_| {
                ConsumerGroupDescribeRequest::default()
                    .with_group_ids(batch.iter().map(|g| GroupId(StrBytes::from_string(g.clone()))).collect())
            })
            .await?;
        let version = sent.version;
        let mut answers = Vec::new();
        for group in sent.response.groups {
            let group_id = text(&group.group_id.0);
            let result = match group.error_code {
                0 => Ok(ConsumerGroupDescription {
                    group: consumer_group(group_id.clone(), &group, version),
                    authorized_operations: group.authorized_operations,
                    coordinator: broker.clone(),
                }),
                // UNSUPPORTED_VERSION: Kafka 3.9 advertises v0 without serving it.
                35 => Err(no_consumer_groups(&format!("ConsumerGroupDescribe v{version}: {}", code_name(35)))),
                code => Err(ClientError::from_code(
                    code,
                    format!("ConsumerGroupDescribe v{version} for group '{group_id}' on {}", broker.label()),
                    group.error_message.as_ref().map(|m| m.as_str()),
                )),
            };
            answers.push((group_id, result));
        }
        Ok(answers)
    }
}

/// ApiVersions on a new connection: v3 first; a broker that does not know v3 answers
/// UNSUPPORTED_VERSION in the v0 layout with its own range, and the request is sent again at
/// the highest version it supports (as Java does).
async fn negotiate(conn: &Connection, deadline: Instant) -> Result<ApiVersionTable, ClientError> {
    let request = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("kcp"))
        .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
    let mut version: i16 = 3;
    loop {
        let frame = conn.call_frame(&request, version, deadline).await?;
        let decoded = codec::decode_response::<ApiVersionsResponse>(ApiVersionsRequest::KEY, version, frame.clone());
        let response = match decoded {
            Ok(response) if response.error_code == 0 => return Ok(ApiVersionTable::from_response(&response)),
            Ok(response) if response.error_code != 35 => response,
            // UNSUPPORTED_VERSION (or an answer in another layout): read it as v0.
            _ => codec::decode_response::<ApiVersionsResponse>(ApiVersionsRequest::KEY, 0, frame)
                .map_err(|e| e.context(format!("from {}", conn.label)))?,
        };
        if response.error_code == 35 && version > 0 {
            let theirs = response.api_keys.iter().find(|k| k.api_key == ApiVersionsRequest::KEY).map(|k| k.max_version);
            version = theirs.filter(|&v| (0..version).contains(&v)).unwrap_or(0);
            continue;
        }
        return Err(ClientError::from_code(
            response.error_code,
            format!("ApiVersions v{version} with {}", conn.label),
            None,
        ));
    }
}
