//! [`GroupTransport`] over the crate's [`Client`]: the coordinator's requests converted with
//! [`group_api::kafka`](crate::group_api::kafka) and sent at the highest version both sides
//! support.

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

fn response_error(response: &Response) -> ErrorCode {
    match response {
        Response::JoinGroup(r) => r.error,
        Response::SyncGroup(r) => r.error,
        Response::Heartbeat(r) => r.error,
        Response::LeaveGroup(r) => r.error,
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
