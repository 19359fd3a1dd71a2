//! [`GroupTransport`] over the crate's [`Client`]: the coordinator's requests converted with
//! [`group_api::kafka`](crate::group_api::kafka) and sent at the highest version both sides
//! support.

use std::collections::BTreeMap;
use std::time::Duration;

use kafka_protocol::protocol::Request as KafkaRequest;

use super::{GroupTransport, Lane, TransportError, TransportErrorKind};
use crate::assignor::ClusterMetadata;
use crate::client::{Client, ClientConfig, ClientError, ConfigError, Deadline, ErrorKind, SendOptions, Target};
use crate::coordinator::{ErrorCode, Request, Response};
use crate::group_api::kafka::{self, ConversionError};

/// The crate's [`Client`] as the member's network: JoinGroup, SyncGroup and LeaveGroup on one
/// lane (connection) to the coordinator, heartbeats on another, so that heartbeats are never
/// queued behind a JoinGroup (the broker answers one connection's requests in order, and a
/// JoinGroup can wait there for the whole rebalance timeout). Metadata and the version checks use
/// the client's own lane 0.
///
/// The coordinator is found with FindCoordinator and forgotten after `NOT_COORDINATOR`,
/// `COORDINATOR_NOT_AVAILABLE`, a lost connection or a timeout, so the next request finds it
/// again.
#[derive(Clone, Debug)]
pub struct ClientTransport {
    client: Client,
}

/// The client lane of JoinGroup, SyncGroup and LeaveGroup.
const GROUP_LANE: u8 = 1;
/// The client lane of heartbeats.
const HEARTBEAT_LANE: u8 = 2;

impl ClientTransport {
    /// A client of the cluster `config` describes (no connection is made yet).
    pub fn new(config: ClientConfig) -> Result<Self, ConfigError> {
        Ok(ClientTransport { client: Client::new(config)? })
    }

    /// Over an existing client (its connections and caches are shared).
    pub fn from_client(client: Client) -> Self {
        ClientTransport { client }
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The log-end offset (the high watermark: the offset the next record gets) of each of
    /// `partitions`, asking each partition's leader once (ListOffsets, latest, read-uncommitted),
    /// sorted by (topic, partition). A partition without a leader or answered with an error is
    /// an error naming it.
    pub async fn end_offsets(
        &self,
        partitions: &[(String, i32)],
        timeout: Duration,
    ) -> Result<BTreeMap<(String, i32), i64>, TransportError> {
        use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
        use kafka_protocol::messages::{BrokerId, ListOffsetsRequest, TopicName};
        use kafka_protocol::protocol::StrBytes;

        let deadline = Deadline::after(timeout);
        let topics: Vec<&str> =
            partitions.iter().map(|(t, _)| t.as_str()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        let metadata = self.client.metadata(Some(&topics), deadline).await.map_err(|e| transport_error(&e))?;
        let mut by_leader: BTreeMap<i32, BTreeMap<&str, Vec<i32>>> = BTreeMap::new();
        for (topic, partition) in partitions {
            let leader = metadata
                .topics
                .iter()
                .find(|t| t.name == *topic)
                .and_then(|t| t.partitions.iter().find(|p| p.partition == *partition))
                .map(|p| p.leader)
                .filter(|&l| l >= 0)
                .ok_or_else(|| {
                    TransportError::new(TransportErrorKind::Protocol, format!("{topic}-{partition} has no leader"))
                })?;
            by_leader.entry(leader).or_default().entry(topic.as_str()).or_default().push(*partition);
        }
        let mut out = BTreeMap::new();
        for (leader, topics) in by_leader {
            let build = |_version: i16| {
                let mut request = ListOffsetsRequest::default();
                request.replica_id = BrokerId(-1);
                request.topics = topics
                    .iter()
                    .map(|(name, parts)| {
                        let mut t = ListOffsetsTopic::default();
                        t.name = TopicName(StrBytes::from_string((*name).to_string()));
                        t.partitions = parts
                            .iter()
                            .map(|&p| {
                                let mut lp = ListOffsetsPartition::default();
                                lp.partition_index = p;
                                lp.timestamp = -1; // latest
                                lp
                            })
                            .collect();
                        t
                    })
                    .collect();
                request
            };
            // v7 is the newest both 3.x and 4.x brokers answer without the v10 timeout field.
            let options = SendOptions::new(deadline).max_version(7).request_timeout(timeout);
            let sent =
                self.client.send(&Target::Node(leader), options, build).await.map_err(|e| transport_error(&e))?;
            for t in sent.response.topics {
                for p in t.partitions {
                    let name = t.name.0.as_str().to_string();
                    if p.error_code != 0 {
                        return Err(TransportError::new(
                            TransportErrorKind::Protocol,
                            format!("ListOffsets of {name}-{}: {}", p.partition_index, ErrorCode(p.error_code)),
                        ));
                    }
                    out.insert((name, p.partition_index), p.offset);
                }
            }
        }
        Ok(out)
    }
}

fn transport_error(e: &ClientError) -> TransportError {
    let kind = match e.kind() {
        ErrorKind::Unreachable => TransportErrorKind::Unreachable,
        ErrorKind::Timeout => TransportErrorKind::Timeout,
        ErrorKind::Authentication => TransportErrorKind::Authentication,
        ErrorKind::Tls => TransportErrorKind::Tls,
        ErrorKind::Authorization => TransportErrorKind::Authorization,
        _ => TransportErrorKind::Protocol,
    };
    TransportError::new(kind, e.to_string())
}

fn conversion_error(e: &ConversionError) -> TransportError {
    TransportError::new(TransportErrorKind::Protocol, e.to_string())
}

/// Sends `value` converted by `convert` at the highest version this crate, `kafka-protocol`
/// and the coordinator all support. The version is chosen before sending, so a value the
/// version cannot carry (a static member on a broker older than KIP-345) is an error, not a
/// request with the field dropped.
async fn call<V, R>(
    client: &Client,
    lane: u8,
    target: &Target,
    value: &V,
    max_version: i16,
    timeout: Duration,
    convert: fn(&V, i16) -> Result<R, ConversionError>,
) -> Result<R::Response, TransportError>
where
    R: KafkaRequest + Clone,
{
    let deadline = Deadline::after(timeout);
    let range = client.api_versions(target, R::KEY, deadline).await.map_err(|e| transport_error(&e))?;
    let Some((broker_min, broker_max)) = range else {
        return Err(TransportError::new(
            TransportErrorKind::Protocol,
            format!("the coordinator does not support API key {}", R::KEY),
        ));
    };
    let version = broker_max.min(R::VERSIONS.max).min(max_version);
    if version < broker_min.max(R::VERSIONS.min) {
        return Err(TransportError::new(
            TransportErrorKind::Protocol,
            format!("no common version of API key {} (broker {broker_min}..={broker_max})", R::KEY),
        ));
    }
    let message = convert(value, version).map_err(|e| conversion_error(&e))?;
    let options = SendOptions::new(deadline).max_version(version).request_timeout(timeout).lane(lane);
    // Should the connection change between the version check and the send (the coordinator
    // moved to an older broker), the value is converted again at the version used.
    let sent = client
        .send(target, options, |v| {
            if v == version {
                message.clone()
            } else {
                convert(value, v).unwrap_or_else(|_| message.clone())
            }
        })
        .await
        .map_err(|e| transport_error(&e))?;
    Ok(sent.response)
}

/// The highest versions the conversions write (JoinGroup v9 carries KIP-800's reason and
/// KIP-814's skip_assignment).
const JOIN_GROUP_MAX: i16 = 9;
const SYNC_GROUP_MAX: i16 = 5;
const HEARTBEAT_MAX: i16 = 4;
const LEAVE_GROUP_MAX: i16 = 5;
/// v9 and later are KIP-848's (member epochs, topic ids); a classic member needs none of it.
const OFFSET_COMMIT_MAX: i16 = 8;
/// v9 and later carry KIP-848's member epoch; v8 fetches one group of the batch.
const OFFSET_FETCH_MAX: i16 = 8;

fn response_error(response: &Response) -> ErrorCode {
    match response {
        Response::JoinGroup(r) => r.error,
        Response::SyncGroup(r) => r.error,
        Response::Heartbeat(r) => r.error,
        Response::LeaveGroup(r) => r.error,
        Response::OffsetCommit(r) => r.errors().map(|(_, _, e)| e).find(|&e| e != ErrorCode::NONE).unwrap_or_default(),
        Response::OffsetFetch(r) => r.error,
    }
}

impl GroupTransport for ClientTransport {
    async fn send(
        &self,
        group_id: &str,
        lane: Lane,
        request: Request,
        timeout: Duration,
    ) -> Result<Response, TransportError> {
        let client = &self.client;
        let lane = match lane {
            Lane::Group => GROUP_LANE,
            Lane::Heartbeat => HEARTBEAT_LANE,
        };
        let target = Target::Coordinator(group_id.to_string());
        let result = match &request {
            Request::JoinGroup(r) => call(client, lane, &target, r, JOIN_GROUP_MAX, timeout, kafka::join_group_request)
                .await
                .map(|m| Response::JoinGroup(kafka::from_join_group_response(m))),
            Request::SyncGroup(r) => call(client, lane, &target, r, SYNC_GROUP_MAX, timeout, kafka::sync_group_request)
                .await
                .map(|m| Response::SyncGroup(kafka::from_sync_group_response(m))),
            Request::Heartbeat(r) => call(client, lane, &target, r, HEARTBEAT_MAX, timeout, kafka::heartbeat_request)
                .await
                .map(|m| Response::Heartbeat(kafka::from_heartbeat_response(m))),
            Request::LeaveGroup(r) => {
                call(client, lane, &target, r, LEAVE_GROUP_MAX, timeout, kafka::leave_group_request)
                    .await
                    .map(|m| Response::LeaveGroup(kafka::from_leave_group_response(m)))
            }
            Request::OffsetCommit(r) => {
                call(client, lane, &target, r, OFFSET_COMMIT_MAX, timeout, kafka::offset_commit_request)
                    .await
                    .map(|m| Response::OffsetCommit(kafka::from_offset_commit_response(m)))
            }
            Request::OffsetFetch(r) => {
                call(client, lane, &target, r, OFFSET_FETCH_MAX, timeout, kafka::offset_fetch_request)
                    .await
                    .map(|m| Response::OffsetFetch(kafka::from_offset_fetch_response(m)))
            }
        };
        let moved = match &result {
            Ok(response) => {
                matches!(response_error(response), ErrorCode::NOT_COORDINATOR | ErrorCode::COORDINATOR_NOT_AVAILABLE)
            }
            Err(e) => matches!(e.kind, TransportErrorKind::Unreachable | TransportErrorKind::Timeout),
        };
        if moved {
            self.client.forget_coordinator(group_id);
        }
        result
    }

    async fn metadata(&self, timeout: Duration) -> Result<ClusterMetadata, TransportError> {
        let cluster = self.client.metadata(None, Deadline::after(timeout)).await.map_err(|e| transport_error(&e))?;
        Ok(ClusterMetadata::from(&cluster))
    }
}
