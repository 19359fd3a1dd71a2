//! A Kafka client for the consumer-group APIs, on tokio (feature `client`).
//!
//! [`Client`] bootstraps from a list of brokers, negotiates API versions with every broker it
//! connects to (ApiVersions; each request goes at the highest version both sides support),
//! reuses one connection per broker, and speaks PLAINTEXT, SSL (rustls; with a truststore the
//! broker's certificate is checked by OpenSSL, as librdkafka checks it, so X.509 v1 certificates
//! work as in Java), SASL PLAIN and SCRAM-SHA-256/512. Messages are `kafka-protocol`'s, never
//! hand-written; every response is checked against the bytes present before it is decoded (no
//! allocation sized by a count a broker sent), and a response frame's size is checked against
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

//!
//! The module's files: `types` (the public types: metadata, group descriptions, targets,
//! deadlines), `pool` (connections, one per broker and lane, and version negotiation), `send`
//! (the request and retry machinery) and `admin/` (the admin calls, one `impl Client` block per
//! file, with their conversions from `kafka-protocol`'s responses).

mod admin;
mod codec;
pub mod collect;
mod config;
mod conn;
mod error;
mod guard;
pub mod member;
mod pool;
mod properties;
mod sasl;
mod send;
mod tls;
mod types;
mod versions;

use bytes::Bytes;

pub use admin::fetch::{FetchOptions, FetchedRecords, PartitionFetcher};
pub use admin::offsets::{
    CommittedOffset, GroupOffsets, IsolationLevel, ListedOffset, OffsetSpec, PartitionListing, PartitionLogOffsets,
    TopicLogOffsets, OFFSET_FETCH_BATCHED_VERSION,
};
#[cfg(feature = "offsets-log")]
#[cfg_attr(docsrs, doc(cfg(feature = "offsets-log")))]
pub use admin::timestamps::{RecordTime, TimestampAnswer, TimestampQuery, TIMESTAMP_FETCH_PARTITION_BYTES};
pub use admin::writes::{OffsetToCommit, PartitionWrite, ADMIN_GENERATION_ID};
pub use admin::BrokerConfig;
pub use config::{
    BrokerAddress, ClientConfig, ClientIdentity, OAuthBearerConfig, PemSource, SaslConfig, SaslMechanism, Secret,
    SecurityProtocol, StoreFile, StoreFormat, TlsConfig, TrustStore, DEFAULT_MAX_RESPONSE_SIZE,
    DEFAULT_REQUEST_TIMEOUT,
};
pub use error::{ClientError, ConfigError, ErrorKind};
// `kafka-protocol`'s messages and string type are not re-exported: callers of `Client::send`
// depend on that crate themselves (the generated docs stay ours). Imported here for the
// submodules.
use kafka_protocol::messages;
use kafka_protocol::protocol::StrBytes;
pub use pool::Client;
pub use types::{
    ClassicGroupDescription, ConsumerGroupDescription, Deadline, ListGroupsFilter, ListedGroup, Metadata, Node,
    PartitionMetadata, SendOptions, Sent, Target, TopicMetadata,
};

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
