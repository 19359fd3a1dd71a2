//! The connection pool: one connection per broker address and lane, set up (TCP, TLS,
//! ApiVersions negotiation, SASL) when a call first needs it and reused while it lives, and the
//! caches of brokers and coordinators the calls fill.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_protocol::protocol::Request;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::conn::{self, Connection};
use super::versions::ApiVersionTable;
use super::{codec, sasl, tls};
use super::{BrokerAddress, ClientConfig, ClientError, ConfigError, Deadline, ErrorKind, Node, StrBytes};

/// A connection with what its broker supports.
pub(super) struct Live {
    pub(super) conn: Connection,
    pub(super) versions: ApiVersionTable,
}

pub(super) type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

pub(super) type Slot = Arc<tokio::sync::Mutex<Option<Arc<Live>>>>;

pub(super) struct Inner {
    pub(super) config: ClientConfig,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Connections by address (bootstrap addresses and brokers alike) and lane: one per pair.
    pub(super) slots: Mutex<HashMap<(BrokerAddress, u8), Slot>>,
    /// Brokers by node id, from the last Metadata.
    pub(super) brokers: Mutex<HashMap<i32, Node>>,
    /// Group coordinators found, by group id.
    pub(super) coordinators: Mutex<HashMap<String, Node>>,
}

/// A client of one cluster. Cheap to clone (the clones share connections and caches); every
/// method may be called concurrently.
#[derive(Clone)]
pub struct Client {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("config", &self.inner.config).finish_non_exhaustive()
    }
}

/// A poisoned lock only means another task panicked while holding it; the maps stay usable.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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

    pub(super) fn slot(&self, address: &BrokerAddress, lane: u8) -> Slot {
        lock(&self.inner.slots).entry((address.clone(), lane)).or_default().clone()
    }

    /// The connection to `address`, reusing a live one.
    pub(super) async fn connection(
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
    pub(super) async fn establish(
        &self,
        address: &BrokerAddress,
        label: &str,
        deadline: Deadline,
    ) -> Result<Live, ClientError> {
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
    pub(super) async fn any_connection(&self, deadline: Deadline) -> Result<(Arc<Live>, Option<Node>), ClientError> {
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
    pub(super) async fn broker(&self, node_id: i32, deadline: Deadline) -> Result<Node, ClientError> {
        if let Some(broker) = lock(&self.inner.brokers).get(&node_id).cloned() {
            return Ok(broker);
        }
        let metadata = self.metadata(Some(&[]), deadline).await?;
        metadata
            .broker(node_id)
            .cloned()
            .ok_or_else(|| ClientError::protocol(format!("broker {node_id} is not in the cluster metadata")))
    }

    pub(super) async fn broker_connection(
        &self,
        broker: &Node,
        lane: u8,
        deadline: Deadline,
    ) -> Result<Arc<Live>, ClientError> {
        self.connection(&broker.address(), &broker.label(), lane, deadline).await
    }
}

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
