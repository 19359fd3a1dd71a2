//! [`ClientConfig`]: what a client connects to and how, read from a Java-client properties file
//! as Apache Kafka's own tools read `--command-config`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::error::ConfigError;
use super::properties;

/// A password or private key: never shown by `Debug` or `Display`.
///
/// ```
/// # use kafka_consumer_protocol::client::Secret;
/// let password = Secret::new("hunter2");
/// assert_eq!(format!("{password:?}"), "Secret(***)");
/// assert_eq!(password.expose(), "hunter2");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret itself, for the code that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// One `host:port` of `bootstrap.servers` (IPv6 hosts in brackets: `[::1]:9092`).
///
/// ```
/// # use kafka_consumer_protocol::client::BrokerAddress;
/// let a: BrokerAddress = "[::1]:9092".parse()?;
/// assert_eq!((a.host.as_str(), a.port), ("::1", 9092));
/// assert_eq!(a.to_string(), "[::1]:9092");
/// # Ok::<(), kafka_consumer_protocol::client::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BrokerAddress {
    /// The host name or IP address, without brackets.
    pub host: String,
    /// The port.
    pub port: u16,
}

impl BrokerAddress {
    /// An address from its parts.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        BrokerAddress { host: host.into(), port }
    }
}

impl FromStr for BrokerAddress {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let bad = |why: &str| ConfigError::new("bootstrap.servers", format!("'{s}' is not HOST:PORT: {why}"));
        let s_trim = s.trim();
        let (host, port) = match s_trim.strip_prefix('[') {
            Some(rest) => {
                let (host, after) = rest.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
                (host, after.strip_prefix(':').ok_or_else(|| bad("no port"))?)
            }
            None => s_trim.rsplit_once(':').ok_or_else(|| bad("no port"))?,
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port: u16 = port.parse().map_err(|_| bad("the port is not a number from 1 to 65535"))?;
        if port == 0 {
            return Err(bad("the port is not a number from 1 to 65535"));
        }
        Ok(BrokerAddress { host: host.to_string(), port })
    }
}

impl fmt::Display for BrokerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// `security.protocol`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    /// No TLS, no authentication (the default).
    #[default]
    Plaintext,
    /// TLS.
    Ssl,
    /// SASL authentication without TLS.
    SaslPlaintext,
    /// SASL authentication over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// Whether the connection is wrapped in TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    /// Whether the connection authenticates with SASL.
    pub fn uses_sasl(self) -> bool {
        matches!(self, SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl)
    }

    /// Kafka's name (`SASL_SSL`).
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }
}

/// `sasl.mechanism`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslMechanism {
    /// `PLAIN` (RFC 4616): the password is sent as is, so use it over TLS.
    Plain,
    /// `SCRAM-SHA-256` (RFC 5802, RFC 7677).
    ScramSha256,
    /// `SCRAM-SHA-512`.
    ScramSha512,
    /// `OAUTHBEARER` (RFC 7628) with a token from an OIDC token endpoint by the client
    /// credentials grant (KIP-768); see [`OAuthBearerConfig`].
    OAuthBearer,
}

impl SaslMechanism {
    /// The mechanism's name as the broker knows it.
    pub fn as_str(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
            SaslMechanism::OAuthBearer => "OAUTHBEARER",
        }
    }
}

/// SASL credentials: a mechanism, a user and a password (from `sasl.mechanism` and
/// `sasl.jaas.config`). For OAUTHBEARER the user is the OAuth client id, the password its
/// secret, and [`oauth`](Self::oauth) says where to get tokens.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SaslConfig {
    /// The mechanism.
    pub mechanism: SaslMechanism,
    /// The user name (OAUTHBEARER: the client id).
    pub username: String,
    /// The password (OAUTHBEARER: the client secret).
    pub password: Secret,
    /// The token endpoint and claims, for [`SaslMechanism::OAuthBearer`].
    pub oauth: Option<OAuthBearerConfig>,
}

impl SaslConfig {
    /// Credentials for `mechanism`.
    pub fn new(mechanism: SaslMechanism, username: impl Into<String>, password: Secret) -> Self {
        SaslConfig { mechanism, username: username.into(), password, oauth: None }
    }
}

impl fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslConfig")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &self.password)
            .field("oauth", &self.oauth)
            .finish()
    }
}

/// SASL/OAUTHBEARER with the OIDC client credentials grant, as Java's
/// `OAuthBearerLoginCallbackHandler` (KIP-768): the client POSTs
/// `grant_type=client_credentials` (and the scope) to the token endpoint with its id and secret
/// in HTTP Basic authentication, keeps the access token until near its expiry, and sends it to
/// each broker in the OAUTHBEARER initial response.
///
/// ```
/// use kafka_consumer_protocol::client::{ClientConfig, SaslMechanism};
///
/// let config = ClientConfig::from_properties(r#"
/// security.protocol=SASL_SSL
/// sasl.mechanism=OAUTHBEARER
/// sasl.oauthbearer.token.endpoint.url=https://idp.example.com/oauth2/token
/// sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler
/// sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \
///     clientId="kcp" clientSecret="s3cret" scope="kafka";
/// "#)?;
/// let sasl = config.sasl.as_ref().unwrap();
/// assert_eq!(sasl.mechanism, SaslMechanism::OAuthBearer);
/// let oauth = sasl.oauth.as_ref().unwrap();
/// assert_eq!(oauth.token_endpoint, "https://idp.example.com/oauth2/token");
/// assert_eq!(oauth.scope.as_deref(), Some("kafka"));
/// assert!(!format!("{config:?}").contains("s3cret"));
/// # Ok::<(), kafka_consumer_protocol::client::ConfigError>(())
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthBearerConfig {
    /// `sasl.oauthbearer.token.endpoint.url`: `https://...` (or `http://` to a loopback address).
    pub token_endpoint: String,
    /// The `scope` JAAS option, sent with the token request when given.
    pub scope: Option<String>,
    /// `sasl.oauthbearer.scope.claim.name` (default `scope`).
    pub scope_claim_name: String,
    /// `sasl.oauthbearer.sub.claim.name` (default `sub`): the token must have this claim.
    pub sub_claim_name: String,
    /// SASL extensions (`extension_NAME="value"` JAAS options), sent in the initial response.
    pub extensions: Vec<(String, String)>,
    /// The token in use, shared by the connections of clients made from this configuration.
    pub(crate) cache: TokenCache,
}

impl OAuthBearerConfig {
    /// Tokens from `token_endpoint`, with Java's default claim names.
    pub fn new(token_endpoint: impl Into<String>) -> Self {
        OAuthBearerConfig {
            token_endpoint: token_endpoint.into(),
            scope: None,
            scope_claim_name: "scope".to_string(),
            sub_claim_name: "sub".to_string(),
            extensions: Vec::new(),
            cache: TokenCache::default(),
        }
    }
}

/// The access token last fetched and when to fetch a new one; shared by clones.
#[derive(Clone, Default)]
pub(crate) struct TokenCache(pub(crate) std::sync::Arc<tokio::sync::Mutex<Option<CachedToken>>>);

/// An access token and the instant after which it is fetched again.
pub(crate) struct CachedToken {
    pub(crate) token: Secret,
    pub(crate) refresh_after: std::time::Instant,
}

impl PartialEq for TokenCache {
    /// A cache is not part of what a configuration says.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for TokenCache {}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCache")
    }
}

/// PEM text or a file holding it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PemSource {
    /// A file (`ssl.truststore.location`, `ssl.keystore.location`).
    File(PathBuf),
    /// PEM text given in the configuration itself (`ssl.truststore.certificates`).
    Text(String),
}

/// The format of a trust or key store file (`ssl.truststore.type`, `ssl.keystore.type`).
///
/// As Java (`keystore.type.compat`, on by default since Java 9), a store of either type is
/// read in the format its first bytes show, so a PKCS12 file named as JKS still works.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFormat {
    /// Java's own key store format (`keytool -storetype JKS`).
    Jks,
    /// PKCS#12 (`.p12`, `.pfx`; keytool's default since Java 9).
    Pkcs12,
}

impl StoreFormat {
    /// Kafka's name of the type (`JKS`, `PKCS12`).
    pub fn as_str(self) -> &'static str {
        match self {
            StoreFormat::Jks => "JKS",
            StoreFormat::Pkcs12 => "PKCS12",
        }
    }
}

/// A JKS or PKCS12 store file and its password.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreFile {
    /// The file (`ssl.truststore.location`, `ssl.keystore.location`).
    pub path: PathBuf,
    /// The format it is declared as.
    pub format: StoreFormat,
    /// The store's password (`ssl.truststore.password`, `ssl.keystore.password`); a JKS
    /// truststore may have none, and is then read without its integrity check, as Java does.
    pub password: Option<Secret>,
}

impl StoreFile {
    /// A store file of `format` with an optional password.
    pub fn new(path: impl Into<PathBuf>, format: StoreFormat, password: Option<Secret>) -> Self {
        StoreFile { path: path.into(), format, password }
    }
}

/// The certificate authorities the client trusts.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TrustStore {
    /// Mozilla's root CAs (the `webpki-roots` crate), as Java falls back to the JVM's `cacerts`.
    #[default]
    PublicRoots,
    /// Certificates in PEM: `ssl.truststore.type=PEM` with `ssl.truststore.location` or
    /// `ssl.truststore.certificates`.
    Pem(PemSource),
    /// A JKS or PKCS12 store (`ssl.truststore.type=JKS`, the default, or `PKCS12`): its trusted
    /// certificates and the certificates of its key entries, as Java's trust manager takes them.
    Store(StoreFile),
}

/// A client certificate for mutual TLS.
#[non_exhaustive]
#[derive(Clone, PartialEq, Eq)]
pub enum ClientIdentity {
    /// One PEM file with the certificate chain and the unencrypted private key, as Java's PEM
    /// keystore (`ssl.keystore.type=PEM`, `ssl.keystore.location`).
    PemFile(PathBuf),
    /// PEM texts given in the configuration (`ssl.keystore.certificate.chain`, `ssl.keystore.key`).
    PemText {
        /// The certificate chain.
        certificate_chain: String,
        /// The unencrypted private key.
        key: Secret,
    },
    /// A JKS or PKCS12 keystore holding one private key with its chain
    /// (`ssl.keystore.type`, `ssl.keystore.location`, `ssl.keystore.password`).
    Store {
        /// The store (its password is required).
        store: StoreFile,
        /// `ssl.key.password`: the key's own password where it differs from the store's (JKS
        /// only; a PKCS12 key is protected by the store password).
        key_password: Option<Secret>,
    },
}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientIdentity::PemFile(path) => f.debug_tuple("PemFile").field(path).finish(),
            ClientIdentity::PemText { key, .. } => {
                f.debug_struct("PemText").field("certificate_chain", &"…").field("key", key).finish()
            }
            ClientIdentity::Store { store, key_password } => {
                f.debug_struct("Store").field("store", store).field("key_password", key_password).finish()
            }
        }
    }
}

/// TLS settings (used when `security.protocol` is `SSL` or `SASL_SSL`).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// The CAs that sign the brokers' certificates.
    pub trust: TrustStore,
    /// A client certificate, for brokers with `ssl.client.auth=required`.
    pub identity: Option<ClientIdentity>,
    /// Whether the broker's certificate must name the host connected to
    /// (`ssl.endpoint.identification.algorithm=https`, the default; `""` turns it off).
    pub verify_hostname: bool,
    /// Allow TLS 1.2 (`ssl.enabled.protocols`; TLS 1.3 is always allowed unless left out there).
    pub allow_tls12: bool,
    /// Allow TLS 1.3.
    pub allow_tls13: bool,
    /// `ssl.key.password` with a PEM keystore: the password of its encrypted PKCS#8 private key
    /// (`-----BEGIN ENCRYPTED PRIVATE KEY-----`, PBES2), as Kafka's PEM keystore takes it.
    pub pem_key_password: Option<Secret>,
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig {
            trust: TrustStore::default(),
            identity: None,
            verify_hostname: true,
            allow_tls12: true,
            allow_tls13: true,
            pem_key_password: None,
        }
    }
}

/// Everything a [`Client`](super::Client) needs to reach and talk to a cluster.
///
/// Built in code or read from a Java-client properties file:
///
/// ```
/// use kafka_consumer_protocol::client::{ClientConfig, SaslMechanism, SecurityProtocol};
///
/// let config = ClientConfig::from_properties(r#"
/// bootstrap.servers=broker1:9093,broker2:9093
/// security.protocol=SASL_SSL
/// sasl.mechanism=SCRAM-SHA-512
/// sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
///     username="alice" password="alice-secret";
/// ssl.truststore.type=PEM
/// ssl.truststore.location=/etc/kafka/ca.pem
/// "#)?;
/// assert_eq!(config.security_protocol, SecurityProtocol::SaslSsl);
/// let sasl = config.sasl.as_ref().unwrap();
/// assert_eq!((sasl.mechanism, sasl.username.as_str()), (SaslMechanism::ScramSha512, "alice"));
/// assert!(!format!("{config:?}").contains("alice-secret"));
/// # Ok::<(), kafka_consumer_protocol::client::ConfigError>(())
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// The brokers tried in order to learn the cluster (`bootstrap.servers`).
    pub bootstrap_servers: Vec<BrokerAddress>,
    /// `client.id`, sent in every request header (default `kcp`).
    pub client_id: String,
    /// `security.protocol`.
    pub security_protocol: SecurityProtocol,
    /// SASL credentials; `Some` exactly when the security protocol uses SASL.
    pub sasl: Option<SaslConfig>,
    /// TLS settings; used when the security protocol uses TLS.
    pub tls: TlsConfig,
    /// How long one request waits for its response (`request.timeout.ms`, default 30 s) before
    /// the connection is given up; an overall deadline may cut it shorter.
    pub request_timeout: Duration,
    /// How long establishing one connection may take, TCP, TLS and SASL together
    /// (`socket.connection.setup.timeout.ms`, default 10 s).
    pub connection_setup_timeout: Duration,
    /// The first pause before a retry (`retry.backoff.ms`, default 100 ms); it doubles on each
    /// retry up to `retry.backoff.max.ms` (default 1 s).
    pub retry_backoff: Duration,
    /// The longest pause between retries (`retry.backoff.max.ms`).
    pub retry_backoff_max: Duration,
    /// The largest response frame accepted, checked before anything is allocated for it
    /// (default 100 MiB, Kafka's `socket.request.max.bytes`).
    pub max_response_size: usize,
    /// Keys of the properties file that do not concern the connection (for example
    /// `group.id`) and were therefore not used; a caller may warn about them, as Java does.
    pub ignored_keys: Vec<String>,
}

/// The default `request.timeout.ms` (Java's default).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_millis(30_000);
/// The default largest response frame.
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = 100 * 1024 * 1024;

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            bootstrap_servers: Vec::new(),
            client_id: "kcp".to_string(),
            security_protocol: SecurityProtocol::Plaintext,
            sasl: None,
            tls: TlsConfig::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connection_setup_timeout: Duration::from_millis(10_000),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_millis(1_000),
            max_response_size: DEFAULT_MAX_RESPONSE_SIZE,
            ignored_keys: Vec::new(),
        }
    }
}

/// Keys that are about the connection but ask for something this client does not do, with what
/// to do instead.
const REFUSED_KEYS: &[(&str, &str)] = &[
    ("ssl.cipher.suites", "kcp uses rustls's default cipher suites; remove the setting"),
    ("ssl.provider", "kcp uses rustls; remove the setting"),
    ("ssl.engine.factory.class", "kcp uses rustls; remove the setting"),
    ("sasl.login.class", "kcp supports the built-in PLAIN, SCRAM and OAUTHBEARER logins only; remove the setting"),
    (
        "sasl.client.callback.handler.class",
        "kcp supports the built-in PLAIN, SCRAM and OAUTHBEARER logins only; remove the setting",
    ),
    ("security.providers", "kcp uses rustls and its own SASL; remove the setting"),
];

/// Apache Kafka's client configuration keys (consumer, producer, admin and their shared SASL and
/// SSL keys) that kcp does not read: a file may hold them, and they are ignored
/// ([`ClientConfig::ignored_keys`]) rather than taken for misspellings of the keys kcp reads.
const KAFKA_CLIENT_KEYS: &[&str] = &[
    "acks",
    "allow.auto.create.topics",
    "auto.commit.interval.ms",
    "auto.include.jmx.reporter",
    "auto.offset.reset",
    "batch.size",
    "buffer.memory",
    "check.crcs",
    "client.dns.lookup",
    "client.rack",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.type",
    "compression.zstd.level",
    "connections.max.idle.ms",
    "default.api.timeout.ms",
    "delivery.timeout.ms",
    "enable.auto.commit",
    "enable.idempotence",
    "enable.metrics.push",
    "exclude.internal.topics",
    "fetch.max.bytes",
    "fetch.max.wait.ms",
    "fetch.min.bytes",
    "group.id",
    "group.instance.id",
    "group.protocol",
    "group.remote.assignor",
    "heartbeat.interval.ms",
    "interceptor.classes",
    "isolation.level",
    "key.deserializer",
    "key.serializer",
    "linger.ms",
    "max.block.ms",
    "max.in.flight.requests.per.connection",
    "max.partition.fetch.bytes",
    "max.poll.interval.ms",
    "max.poll.records",
    "max.request.size",
    "metadata.max.age.ms",
    "metadata.max.idle.ms",
    "metadata.recovery.strategy",
    "metadata.recovery.rebootstrap.trigger.ms",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.recording.level",
    "metrics.sample.window.ms",
    "partition.assignment.strategy",
    "partitioner.class",
    "partitioner.adaptive.partitioning.enable",
    "partitioner.availability.timeout.ms",
    "partitioner.ignore.keys",
    "receive.buffer.bytes",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "retries",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.service.name",
    "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.ticket.renew.window.factor",
    "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms",
    "sasl.login.refresh.buffer.seconds",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms",
    "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.url",
    "security.providers",
    "send.buffer.bytes",
    "session.timeout.ms",
    "socket.connection.setup.timeout.max.ms",
    "ssl.secure.random.implementation",
    "transaction.timeout.ms",
    "transactional.id",
    "value.deserializer",
    "value.serializer",
    "enable.ssl.certificate.verification",
];

/// The key kcp reads that an unknown `key` is most likely a misspelling of: within two edits
/// (insertions, deletions, substitutions or swaps of neighbours) and nearer to it than to any
/// of Kafka's other client keys. A key of Kafka's list is never a misspelling.
fn mistyped_key(key: &str) -> Option<&'static str> {
    if KAFKA_CLIENT_KEYS.contains(&key) {
        return None;
    }
    let nearest = |keys: &[&'static str]| keys.iter().map(|k| (edit_distance(key, k), *k)).min();
    let (distance, meant) = nearest(KNOWN_KEYS)?;
    let others = nearest(KAFKA_CLIENT_KEYS).map_or(usize::MAX, |(d, _)| d);
    (distance <= 2 && distance < others).then_some(meant)
}

/// The optimal-string-alignment distance: Levenshtein's edits plus the swap of two neighbours
/// (`mechansim` is one edit from `mechanism`).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// Keys read by [`ClientConfig::from_properties`].
const KNOWN_KEYS: &[&str] = &[
    "bootstrap.servers",
    "client.id",
    "security.protocol",
    "sasl.mechanism",
    "sasl.jaas.config",
    "sasl.login.callback.handler.class",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.certificates",
    "ssl.truststore.password",
    "ssl.keystore.type",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.location",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.endpoint.identification.algorithm",
    "ssl.protocol",
    "ssl.enabled.protocols",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "request.timeout.ms",
    "socket.connection.setup.timeout.ms",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
];

impl ClientConfig {
    /// A PLAINTEXT configuration for these bootstrap brokers, everything else at its default.
    ///
    /// ```
    /// # use kafka_consumer_protocol::client::ClientConfig;
    /// let config = ClientConfig::new(["127.0.0.1:9092"])?;
    /// assert_eq!(config.bootstrap_servers[0].port, 9092);
    /// # Ok::<(), kafka_consumer_protocol::client::ConfigError>(())
    /// ```
    pub fn new<S: AsRef<str>>(bootstrap: impl IntoIterator<Item = S>) -> Result<Self, ConfigError> {
        let mut config = ClientConfig::default();
        config.set_bootstrap(bootstrap)?;
        Ok(config)
    }

    /// Replaces the bootstrap list (each item `HOST:PORT`; items may also be comma-separated
    /// lists, as `--bootstrap-server` takes them).
    pub fn set_bootstrap<S: AsRef<str>>(&mut self, bootstrap: impl IntoIterator<Item = S>) -> Result<(), ConfigError> {
        let mut servers = Vec::new();
        for item in bootstrap {
            for part in item.as_ref().split(',').map(str::trim).filter(|p| !p.is_empty()) {
                servers.push(part.parse()?);
            }
        }
        self.bootstrap_servers = servers;
        Ok(())
    }

    /// Reads a Java-client properties file's text, parsed as Java's `Properties.load(Reader)`
    /// parses it. The keys read: `bootstrap.servers`, `client.id`, `security.protocol`,
    /// `sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER), `sasl.jaas.config`,
    /// `sasl.login.callback.handler.class` (OAuth's), `sasl.oauthbearer.token.endpoint.url`,
    /// `sasl.oauthbearer.scope.claim.name`, `sasl.oauthbearer.sub.claim.name`,
    /// `ssl.truststore.type` (JKS, PKCS12, PEM), `ssl.truststore.location`,
    /// `ssl.truststore.password`, `ssl.truststore.certificates`, `ssl.keystore.type`,
    /// `ssl.keystore.location`, `ssl.keystore.password`, `ssl.key.password`,
    /// `ssl.keystore.certificate.chain`, `ssl.keystore.key`,
    /// `ssl.endpoint.identification.algorithm`, `ssl.protocol`, `ssl.enabled.protocols`,
    /// `ssl.keymanager.algorithm`, `ssl.trustmanager.algorithm`, `request.timeout.ms`,
    /// `socket.connection.setup.timeout.ms`, `retry.backoff.ms`, `retry.backoff.max.ms`.
    ///
    /// A setting that cannot be honoured (GSSAPI, a JCEKS store, an unknown security protocol,
    /// ...) or a misspelling of a key read here (`sasl.mechansim`) is a [`ConfigError`] naming
    /// the key and what to use instead. Stores are opened by [`Client::new`](super::Client::new),
    /// whose error names the file, the format tried and why. Kafka's other client keys
    /// (`group.id`, ...) and keys far from any read here are listed in
    /// [`ignored_keys`](Self::ignored_keys).
    pub fn from_properties(text: &str) -> Result<Self, ConfigError> {
        let pairs = properties::parse(text)?;
        let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        let mut config = ClientConfig::default();

        for (key, _) in &pairs {
            if let Some((_, instead)) = REFUSED_KEYS.iter().find(|(k, _)| k == key) {
                return Err(ConfigError::new(key.as_str(), *instead));
            }
            if !KNOWN_KEYS.contains(&key.as_str()) {
                if let Some(meant) = mistyped_key(key) {
                    return Err(ConfigError::new(key.as_str(), format!("unknown key: did you mean {meant}?")));
                }
                config.ignored_keys.push(key.clone());
            }
        }

        if let Some(servers) = get("bootstrap.servers") {
            config.set_bootstrap([servers])?;
        }
        if let Some(id) = get("client.id") {
            config.client_id = id.to_string();
        }
        if let Some(protocol) = get("security.protocol") {
            config.security_protocol = match protocol.trim().to_ascii_uppercase().as_str() {
                "PLAINTEXT" => SecurityProtocol::Plaintext,
                "SSL" => SecurityProtocol::Ssl,
                "SASL_PLAINTEXT" => SecurityProtocol::SaslPlaintext,
                "SASL_SSL" => SecurityProtocol::SaslSsl,
                _ => {
                    return Err(ConfigError::new(
                        "security.protocol",
                        format!("unknown protocol '{protocol}': use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
                    ))
                }
            };
        }
        if config.security_protocol.uses_sasl() {
            config.sasl = Some(sasl_from(&get)?);
        }
        config.tls = tls_from(&get)?;

        for (key, default) in [
            ("request.timeout.ms", &mut config.request_timeout),
            ("socket.connection.setup.timeout.ms", &mut config.connection_setup_timeout),
            ("retry.backoff.ms", &mut config.retry_backoff),
            ("retry.backoff.max.ms", &mut config.retry_backoff_max),
        ] {
            if let Some(value) = get(key) {
                let ms: u64 = value
                    .trim()
                    .parse()
                    .map_err(|_| ConfigError::new(key, format!("'{value}' is not a number of milliseconds")))?;
                *default = Duration::from_millis(ms);
            }
        }
        Ok(config)
    }

    /// Reads a properties file from disk (see [`from_properties`](Self::from_properties)) as
    /// Kafka's tools read `--command-config`: each byte is one ISO-8859-1 character
    /// (`Properties.load(InputStream)`), so non-ASCII text is written as `\uXXXX` escapes.
    pub fn from_properties_file(path: impl AsRef<std::path::Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let bytes =
            std::fs::read(path).map_err(|e| ConfigError::new("", format!("cannot read {}: {e}", path.display())))?;
        ClientConfig::from_properties(&properties::decode_file(&bytes))
    }
}

fn sasl_from<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<SaslConfig, ConfigError> {
    const USE: &str = "use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER";
    let mechanism = match get("sasl.mechanism").map(str::trim) {
        None => {
            return Err(ConfigError::new(
                "sasl.mechanism",
                format!("not set, and Java's default GSSAPI (Kerberos) is not supported: {USE}"),
            ))
        }
        Some("PLAIN") => SaslMechanism::Plain,
        Some("SCRAM-SHA-256") => SaslMechanism::ScramSha256,
        Some("SCRAM-SHA-512") => SaslMechanism::ScramSha512,
        Some("OAUTHBEARER") => SaslMechanism::OAuthBearer,
        Some("GSSAPI") => {
            return Err(ConfigError::new("sasl.mechanism", format!("GSSAPI (Kerberos) is not supported: {USE}")))
        }
        Some(other) => return Err(ConfigError::new("sasl.mechanism", format!("unknown mechanism '{other}': {USE}"))),
    };
    let jaas = get("sasl.jaas.config").ok_or_else(|| {
        ConfigError::new(
            "sasl.jaas.config",
            "required with SASL: a PlainLoginModule, ScramLoginModule or OAuthBearerLoginModule line",
        )
    })?;
    let login = parse_jaas(jaas)?;
    let expected = match mechanism {
        SaslMechanism::Plain => PLAIN_MODULE,
        SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => SCRAM_MODULE,
        SaslMechanism::OAuthBearer => OAUTH_MODULE,
    };
    if login.module != expected {
        return Err(ConfigError::new(
            "sasl.jaas.config",
            format!("sasl.mechanism={} needs {expected}, not {}", mechanism.as_str(), login.module),
        ));
    }
    let option = |name: &str| login.options.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let (user_option, password_option) =
        if mechanism == SaslMechanism::OAuthBearer { ("clientId", "clientSecret") } else { ("username", "password") };
    let username = option(user_option)
        .ok_or_else(|| ConfigError::new("sasl.jaas.config", format!("{} has no {user_option} option", login.module)))?;
    let password = option(password_option).ok_or_else(|| {
        ConfigError::new("sasl.jaas.config", format!("{} has no {password_option} option", login.module))
    })?;
    let mut sasl = SaslConfig { mechanism, username, password: Secret(password), oauth: None };
    let handler = get("sasl.login.callback.handler.class").map(str::trim);
    if mechanism != SaslMechanism::OAuthBearer {
        if handler.is_some() {
            return Err(ConfigError::new(
                "sasl.login.callback.handler.class",
                "only OAUTHBEARER's OAuthBearerLoginCallbackHandler is supported; remove the setting",
            ));
        }
        return Ok(sasl);
    }
    if let Some(handler) = handler.filter(|h| !OAUTH_LOGIN_HANDLERS.contains(h)) {
        return Err(ConfigError::new(
            "sasl.login.callback.handler.class",
            format!("{handler} is not supported: kcp gets tokens as {} does", OAUTH_LOGIN_HANDLERS[0]),
        ));
    }
    let endpoint = get("sasl.oauthbearer.token.endpoint.url").map(str::trim).ok_or_else(|| {
        ConfigError::new(
            "sasl.oauthbearer.token.endpoint.url",
            "required with OAUTHBEARER: kcp gets tokens by the client credentials grant (Java's unsecured test tokens are not supported)",
        )
    })?;
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
        return Err(ConfigError::new(
            "sasl.oauthbearer.token.endpoint.url",
            format!("'{endpoint}' is not an https:// URL (kcp does not read tokens from files)"),
        ));
    }
    let mut oauth = OAuthBearerConfig::new(endpoint);
    oauth.scope = option("scope");
    if let Some(name) = get("sasl.oauthbearer.scope.claim.name") {
        oauth.scope_claim_name = name.trim().to_string();
    }
    if let Some(name) = get("sasl.oauthbearer.sub.claim.name") {
        oauth.sub_claim_name = name.trim().to_string();
    }
    for (key, value) in &login.options {
        if let Some(name) = key.strip_prefix("extension_") {
            // RFC 7628: a key is letters only, and "auth" is the token's own.
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphabetic()) || name == "auth" {
                return Err(ConfigError::new(
                    "sasl.jaas.config",
                    format!("{key}: an extension name is letters only, not auth"),
                ));
            }
            oauth.extensions.push((name.to_string(), value.clone()));
        }
    }
    sasl.oauth = Some(oauth);
    Ok(sasl)
}

/// Java's names of the client credentials login handler (KIP-768 put it in `secured`, Kafka
/// 3.4 moved it).
const OAUTH_LOGIN_HANDLERS: &[&str] = &[
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
];

const PLAIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";
const OAUTH_MODULE: &str = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";

struct JaasLogin {
    module: String,
    options: Vec<(String, String)>,
}

/// Parses a `sasl.jaas.config` value: `MODULE FLAG key=value ... ;` with values quoted
/// (`"..."`, backslash escapes) or bare. Exactly one login module, as Kafka requires for a
/// client. Errors never quote option values (they may be passwords).
fn parse_jaas(text: &str) -> Result<JaasLogin, ConfigError> {
    let err = |what: String| ConfigError::new("sasl.jaas.config", what);
    let mut tokens = JaasTokens { chars: text.chars().peekable() };
    let module = match tokens.next().map_err(err)? {
        Some(Token::Word(w)) => w,
        _ => return Err(err("expected a login module class name".into())),
    };
    if module != PLAIN_MODULE && module != SCRAM_MODULE && module != OAUTH_MODULE {
        let instead = if module.contains("Krb5") { "this login is not supported" } else { "unknown login module" };
        return Err(err(format!("{module}: {instead}: use {PLAIN_MODULE}, {SCRAM_MODULE} or {OAUTH_MODULE}")));
    }
    match tokens.next().map_err(err)? {
        Some(Token::Word(flag)) if ["required", "requisite", "sufficient", "optional"].contains(&flag.as_str()) => {}
        _ => return Err(err("expected a control flag (required) after the login module".into())),
    }
    let mut options = Vec::new();
    loop {
        match tokens.next().map_err(err)? {
            Some(Token::Semicolon) => break,
            Some(Token::Word(key)) => {
                if tokens.next().map_err(err)? != Some(Token::Equals) {
                    return Err(err(format!("option {key} has no '='")));
                }
                match tokens.next().map_err(err)? {
                    Some(Token::Word(value)) | Some(Token::Quoted(value)) => options.push((key, value)),
                    _ => return Err(err(format!("option {key} has no value"))),
                }
            }
            None => return Err(err("the login module is not ended by ';'".into())),
            Some(_) => return Err(err("expected an option name or ';'".into())),
        }
    }
    if tokens.next().map_err(err)?.is_some() {
        return Err(err("a client takes exactly one login module".into()));
    }
    Ok(JaasLogin { module, options })
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

struct JaasTokens<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl JaasTokens<'_> {
    fn next(&mut self) -> Result<Option<Token>, String> {
        while self.chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(c) = self.chars.next() else { return Ok(None) };
        Ok(Some(match c {
            '=' => Token::Equals,
            ';' => Token::Semicolon,
            '"' => {
                let mut value = String::new();
                loop {
                    match self.chars.next() {
                        None => return Err("unterminated quoted value".into()),
                        Some('"') => break,
                        Some('\\') => match self.chars.next() {
                            Some('n') => value.push('\n'),
                            Some('t') => value.push('\t'),
                            Some(other) => value.push(other),
                            None => return Err("unterminated quoted value".into()),
                        },
                        Some(other) => value.push(other),
                    }
                }
                Token::Quoted(value)
            }
            first => {
                let mut word = String::from(first);
                while let Some(c) = self.chars.next_if(|c| !c.is_whitespace() && !matches!(c, '=' | ';' | '"')) {
                    word.push(c);
                }
                Token::Word(word)
            }
        }))
    }
}

/// How to convert a store kcp does not read.
const CONVERT_HINT: &str = "convert it to PKCS12 (keytool -importkeystore -srckeystore FILE -destkeystore FILE.p12 -deststoretype PKCS12) or to PEM (keytool -exportcert -rfc; openssl pkcs12 -nodes)";

fn tls_from<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<TlsConfig, ConfigError> {
    let mut tls = TlsConfig::default();
    // Java's default store type is JKS (the JVM's keystore.type).
    let store_type = |key: &str| -> Result<Option<StoreFormat>, ConfigError> {
        match get(key).map(|t| t.trim().to_ascii_uppercase()).as_deref() {
            None | Some("JKS") => Ok(Some(StoreFormat::Jks)),
            Some("PKCS12") => Ok(Some(StoreFormat::Pkcs12)),
            Some("PEM") => Ok(None),
            Some(t) => Err(ConfigError::new(
                key,
                format!("{t} stores are not supported (kcp reads JKS, PKCS12 and PEM): {CONVERT_HINT}"),
            )),
        }
    };
    let secret = |key: &str| get(key).map(|p| Secret(p.to_string()));
    let trust_format = store_type("ssl.truststore.type")?;
    let (location, certificates) = (get("ssl.truststore.location"), get("ssl.truststore.certificates"));
    match trust_format {
        None => {
            if get("ssl.truststore.password").is_some() {
                return Err(ConfigError::new(
                    "ssl.truststore.password",
                    "a PEM truststore has no password (Java refuses it too); remove the setting",
                ));
            }
            tls.trust = match (location, certificates) {
                (Some(_), Some(_)) => {
                    return Err(ConfigError::new(
                        "ssl.truststore.certificates",
                        "set either ssl.truststore.location or ssl.truststore.certificates, not both",
                    ))
                }
                (Some(location), None) => TrustStore::Pem(PemSource::File(PathBuf::from(location.trim()))),
                (None, Some(text)) => TrustStore::Pem(PemSource::Text(text.to_string())),
                (None, None) => TrustStore::PublicRoots,
            };
        }
        Some(format) => {
            if certificates.is_some() {
                return Err(ConfigError::new(
                    "ssl.truststore.type",
                    "ssl.truststore.certificates needs ssl.truststore.type=PEM",
                ));
            }
            if let Some(location) = location {
                tls.trust =
                    TrustStore::Store(StoreFile::new(location.trim(), format, secret("ssl.truststore.password")));
            }
        }
    }
    let key_format = store_type("ssl.keystore.type")?;
    let (location, chain, key) =
        (get("ssl.keystore.location"), get("ssl.keystore.certificate.chain"), get("ssl.keystore.key"));
    match key_format {
        None => {
            if get("ssl.keystore.password").is_some() {
                return Err(ConfigError::new(
                    "ssl.keystore.password",
                    "a PEM keystore has no store password (Java refuses it too): the key's is ssl.key.password",
                ));
            }
            tls.pem_key_password = secret("ssl.key.password");
            match (location, chain, key) {
                (Some(location), None, None) => {
                    tls.identity = Some(ClientIdentity::PemFile(PathBuf::from(location.trim())))
                }
                (None, Some(chain), Some(key)) => {
                    tls.identity = Some(ClientIdentity::PemText {
                        certificate_chain: chain.to_string(),
                        key: Secret(key.to_string()),
                    })
                }
                (None, None, None) => {}
                (Some(_), _, _) => {
                    return Err(ConfigError::new(
                        "ssl.keystore.location",
                        "set either ssl.keystore.location or ssl.keystore.certificate.chain with ssl.keystore.key, not both",
                    ))
                }
                (None, _, _) => {
                    return Err(ConfigError::new(
                        "ssl.keystore.key",
                        "ssl.keystore.certificate.chain and ssl.keystore.key go together",
                    ))
                }
            }
        }
        Some(format) => {
            if chain.is_some() || key.is_some() {
                return Err(ConfigError::new(
                    "ssl.keystore.type",
                    "ssl.keystore.certificate.chain and ssl.keystore.key need ssl.keystore.type=PEM",
                ));
            }
            if let Some(location) = location {
                let password = secret("ssl.keystore.password").ok_or_else(|| {
                    ConfigError::new(
                        "ssl.keystore.password",
                        format!("required with a {} keystore (ssl.keystore.location)", format.as_str()),
                    )
                })?;
                tls.identity = Some(ClientIdentity::Store {
                    store: StoreFile::new(location.trim(), format, Some(password)),
                    key_password: secret("ssl.key.password"),
                });
            }
        }
    }
    if let Some(algorithm) = get("ssl.endpoint.identification.algorithm") {
        tls.verify_hostname = match algorithm.trim().to_ascii_lowercase().as_str() {
            "" => false,
            "https" => true,
            _ => {
                return Err(ConfigError::new(
                    "ssl.endpoint.identification.algorithm",
                    format!("unknown algorithm '{algorithm}': use https (the default) or an empty value to turn hostname verification off"),
                ))
            }
        };
    }
    if let Some(protocol) = get("ssl.protocol") {
        if !matches!(protocol.trim(), "TLS" | "TLSv1.2" | "TLSv1.3") {
            return Err(ConfigError::new(
                "ssl.protocol",
                format!("'{protocol}' is not supported: rustls speaks TLSv1.2 and TLSv1.3 (use TLSv1.3, the default, or TLSv1.2)"),
            ));
        }
    }
    if let Some(list) = get("ssl.enabled.protocols") {
        tls.allow_tls12 = false;
        tls.allow_tls13 = false;
        for protocol in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match protocol {
                "TLSv1.2" => tls.allow_tls12 = true,
                "TLSv1.3" => tls.allow_tls13 = true,
                _ => {
                    return Err(ConfigError::new(
                        "ssl.enabled.protocols",
                        format!("'{protocol}' is not supported: rustls speaks TLSv1.2 and TLSv1.3 only"),
                    ))
                }
            }
        }
        if !tls.allow_tls12 && !tls.allow_tls13 {
            return Err(ConfigError::new("ssl.enabled.protocols", "empty: list TLSv1.3 and/or TLSv1.2"));
        }
    }
    for (key, default) in [("ssl.keymanager.algorithm", "SunX509"), ("ssl.trustmanager.algorithm", "PKIX")] {
        if let Some(value) = get(key) {
            if value.trim() != default {
                return Err(ConfigError::new(
                    key,
                    format!("'{value}' is not supported: kcp verifies certificates as Java's default {default} does; remove the setting"),
                ));
            }
        }
    }
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRAM: &str = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"s3cr\\\\\\\"et\";";

    fn refused(text: &str) -> ConfigError {
        ClientConfig::from_properties(text).expect_err(text)
    }

    #[test]
    fn every_key() {
        let text = format!(
            "bootstrap.servers=a:9092, [::1]:9093 ,b:1\nclient.id=me\nsecurity.protocol=sasl_ssl\n\
             sasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config={SCRAM}\nssl.truststore.type=PEM\n\
             ssl.truststore.location=/ca.pem\nssl.keystore.type=pem\nssl.keystore.location=/me.pem\n\
             ssl.endpoint.identification.algorithm=\nssl.protocol=TLSv1.3\nssl.enabled.protocols=TLSv1.3\n\
             ssl.keymanager.algorithm=SunX509\nssl.trustmanager.algorithm=PKIX\nrequest.timeout.ms=1234\n\
             socket.connection.setup.timeout.ms=55\nretry.backoff.ms=7\nretry.backoff.max.ms=70\n\
             group.id=x\nauto.offset.reset=earliest\n"
        );
        let c = ClientConfig::from_properties(&text).unwrap();
        assert_eq!(
            c.bootstrap_servers,
            [BrokerAddress::new("a", 9092), BrokerAddress::new("::1", 9093), BrokerAddress::new("b", 1)]
        );
        assert_eq!(c.client_id, "me");
        assert_eq!(c.security_protocol, SecurityProtocol::SaslSsl);
        let sasl = c.sasl.clone().unwrap();
        assert_eq!(sasl.mechanism, SaslMechanism::ScramSha256);
        assert_eq!(sasl.username, "alice");
        assert_eq!(sasl.password.expose(), "s3cr\"et");
        assert_eq!(c.tls.trust, TrustStore::Pem(PemSource::File("/ca.pem".into())));
        assert_eq!(c.tls.identity, Some(ClientIdentity::PemFile("/me.pem".into())));
        assert!(!c.tls.verify_hostname);
        assert!(c.tls.allow_tls13 && !c.tls.allow_tls12);
        assert_eq!(c.request_timeout, Duration::from_millis(1234));
        assert_eq!(c.connection_setup_timeout, Duration::from_millis(55));
        assert_eq!(c.retry_backoff, Duration::from_millis(7));
        assert_eq!(c.retry_backoff_max, Duration::from_millis(70));
        assert_eq!(c.ignored_keys, ["group.id", "auto.offset.reset"]);
        assert!(!format!("{c:?}").contains("s3cr"));
    }

    #[test]
    fn defaults() {
        let c = ClientConfig::from_properties("").unwrap();
        assert!(c.bootstrap_servers.is_empty());
        assert_eq!(c.client_id, "kcp");
        assert_eq!(c.security_protocol, SecurityProtocol::Plaintext);
        assert_eq!(c.sasl, None);
        assert_eq!(c.tls, TlsConfig::default());
        assert!(c.tls.verify_hostname);
        assert_eq!(c.request_timeout, Duration::from_secs(30));
        assert_eq!(c.max_response_size, 100 << 20);
        // A JAAS line without a SASL protocol is not used (as Java).
        let c = ClientConfig::from_properties(&format!("sasl.jaas.config={SCRAM}")).unwrap();
        assert_eq!(c.sasl, None);
    }

    #[test]
    fn plain_and_inline_pem() {
        let text = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n\
            sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=bob password=pw;\n\
            ssl.truststore.type=PEM\nssl.truststore.certificates=-----BEGIN CERTIFICATE----- \\\n  MIIB \\\n  -----END CERTIFICATE-----\n\
            ssl.keystore.type=PEM\nssl.keystore.certificate.chain=CHAIN\nssl.keystore.key=KEYTEXT\n";
        let c = ClientConfig::from_properties(text).unwrap();
        let sasl = c.sasl.clone().unwrap();
        assert_eq!(
            (sasl.mechanism, sasl.username.as_str(), sasl.password.expose()),
            (SaslMechanism::Plain, "bob", "pw")
        );
        assert_eq!(
            c.tls.trust,
            TrustStore::Pem(PemSource::Text("-----BEGIN CERTIFICATE----- MIIB -----END CERTIFICATE-----".into()))
        );
        assert!(matches!(&c.tls.identity, Some(ClientIdentity::PemText { certificate_chain, key })
            if certificate_chain == "CHAIN" && key.expose() == "KEYTEXT"));
        assert!(!format!("{c:?}").contains("KEYTEXT"));
    }

    #[test]
    fn every_refusal_names_its_key() {
        let sasl = |mechanism: &str, jaas: &str| {
            format!("security.protocol=SASL_SSL\nsasl.mechanism={mechanism}\nsasl.jaas.config={jaas}")
        };
        let cases: Vec<(String, &str, &str)> = vec![
            ("security.protocol=SASL_GSS".into(), "security.protocol", "SASL_SSL"),
            ("security.protocol=SASL_SSL".into(), "sasl.mechanism", "GSSAPI"),
            (sasl("GSSAPI", SCRAM), "sasl.mechanism", "not supported"),
            (
                sasl("OAUTHBEARER", SCRAM),
                "sasl.jaas.config",
                "needs org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
            ),
            (
                sasl("OAUTHBEARER", &format!("{OAUTH_MODULE} required clientId=c clientSecret=pw-secret;")),
                "sasl.oauthbearer.token.endpoint.url",
                "client credentials",
            ),
            (
                format!(
                    "{}\nsasl.oauthbearer.token.endpoint.url=file:///t",
                    sasl("OAUTHBEARER", &format!("{OAUTH_MODULE} required clientId=c clientSecret=pw-secret;"))
                ),
                "sasl.oauthbearer.token.endpoint.url",
                "https://",
            ),
            (
                sasl("OAUTHBEARER", &format!("{OAUTH_MODULE} required clientSecret=pw-secret;")),
                "sasl.jaas.config",
                "no clientId",
            ),
            (
                format!("{}\nsasl.login.callback.handler.class=x.Y", sasl("SCRAM-SHA-512", SCRAM)),
                "sasl.login.callback.handler.class",
                "OAUTHBEARER",
            ),
            (sasl("SCRAM-SHA-1", SCRAM), "sasl.mechanism", "unknown"),
            ("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN".into(), "sasl.jaas.config", "PlainLoginModule"),
            (sasl("PLAIN", SCRAM), "sasl.jaas.config", "needs org.apache.kafka.common.security.plain.PlainLoginModule"),
            (
                sasl("SCRAM-SHA-512", "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"),
                "sasl.jaas.config",
                "not supported",
            ),
            (
                sasl(
                    "SCRAM-SHA-512",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\";",
                ),
                "sasl.jaas.config",
                "no password",
            ),
            (
                sasl(
                    "SCRAM-SHA-512",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required password=\"a\";",
                ),
                "sasl.jaas.config",
                "no username",
            ),
            (
                sasl(
                    "SCRAM-SHA-512",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\" password=\"b\"",
                ),
                "sasl.jaas.config",
                "';'",
            ),
            (
                sasl("SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule username=\"a\";"),
                "sasl.jaas.config",
                "control flag",
            ),
            (
                sasl(
                    "SCRAM-SHA-512",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required password=\"unterminated;",
                ),
                "sasl.jaas.config",
                "unterminated",
            ),
            (sasl("SCRAM-SHA-512", &format!("{SCRAM} {SCRAM}")), "sasl.jaas.config", "exactly one"),
            (
                "ssl.truststore.type=JCEKS\nssl.truststore.location=/a.jks".into(),
                "ssl.truststore.type",
                "keytool -importkeystore",
            ),
            ("ssl.truststore.type=BCFKS".into(), "ssl.truststore.type", "JKS, PKCS12 and PEM"),
            ("ssl.truststore.certificates=x".into(), "ssl.truststore.type", "PEM"),
            ("ssl.truststore.type=PKCS12\nssl.truststore.certificates=x".into(), "ssl.truststore.type", "PEM"),
            (
                "ssl.truststore.type=PEM\nssl.truststore.location=/a\nssl.truststore.certificates=x".into(),
                "ssl.truststore.certificates",
                "not both",
            ),
            ("ssl.keystore.type=JKS\nssl.keystore.location=/a".into(), "ssl.keystore.password", "JKS keystore"),
            ("ssl.keystore.location=/a.p12".into(), "ssl.keystore.password", "required"),
            ("ssl.keystore.type=PKCS12\nssl.keystore.key=k".into(), "ssl.keystore.type", "PEM"),
            ("ssl.keystore.type=PEM\nssl.keystore.key=k".into(), "ssl.keystore.key", "together"),
            ("ssl.keystore.certificate.chain=c\nssl.keystore.key=k".into(), "ssl.keystore.type", "PEM"),
            (
                "ssl.keystore.type=PEM\nssl.keystore.location=/a\nssl.keystore.key=k".into(),
                "ssl.keystore.location",
                "not both",
            ),
            ("ssl.endpoint.identification.algorithm=ldap".into(), "ssl.endpoint.identification.algorithm", "https"),
            ("ssl.protocol=TLSv1.1".into(), "ssl.protocol", "TLSv1.2"),
            ("ssl.enabled.protocols=TLSv1.2,TLSv1".into(), "ssl.enabled.protocols", "TLSv1.2 and TLSv1.3"),
            ("ssl.enabled.protocols= ".into(), "ssl.enabled.protocols", "empty"),
            ("ssl.keymanager.algorithm=PKIX".into(), "ssl.keymanager.algorithm", "SunX509"),
            ("ssl.trustmanager.algorithm=SunX509".into(), "ssl.trustmanager.algorithm", "PKIX"),
            ("ssl.cipher.suites=TLS_AES_128_GCM_SHA256".into(), "ssl.cipher.suites", "rustls"),
            ("ssl.provider=SunJSSE".into(), "ssl.provider", "rustls"),
            ("ssl.engine.factory.class=x".into(), "ssl.engine.factory.class", "rustls"),
            ("ssl.keystore.type=PEM\nssl.keystore.password=pw-secret".into(), "ssl.keystore.password", "PEM keystore"),
            ("ssl.truststore.type=PEM\nssl.truststore.password=pw-secret".into(), "ssl.truststore.password", "remove"),
            ("sasl.login.class=x".into(), "sasl.login.class", "OAUTHBEARER logins only"),
            (
                "sasl.client.callback.handler.class=x".into(),
                "sasl.client.callback.handler.class",
                "OAUTHBEARER logins only",
            ),
            ("security.providers=x".into(), "security.providers", "rustls"),
            ("request.timeout.ms=soon".into(), "request.timeout.ms", "milliseconds"),
            ("socket.connection.setup.timeout.ms=-1".into(), "socket.connection.setup.timeout.ms", "milliseconds"),
            ("retry.backoff.ms=1.5".into(), "retry.backoff.ms", "milliseconds"),
            ("retry.backoff.max.ms=x".into(), "retry.backoff.max.ms", "milliseconds"),
            ("bootstrap.servers=a".into(), "bootstrap.servers", "no port"),
            ("bootstrap.servers=a:0".into(), "bootstrap.servers", "65535"),
            ("bootstrap.servers=a:99999".into(), "bootstrap.servers", "65535"),
            ("bootstrap.servers=[::1:9092".into(), "bootstrap.servers", "unclosed"),
            ("bootstrap.servers=:9092".into(), "bootstrap.servers", "no host"),
            ("k=\\u00zz".into(), "", "line 1"),
        ];
        for (text, key, hint) in cases {
            let e = refused(&text);
            assert_eq!(e.key(), key, "{text}: {e}");
            assert!(e.to_string().contains(hint), "{text}: {e}");
            assert!(!e.to_string().contains("pw-secret") && !e.to_string().contains("s3cr"), "{e}");
        }
    }

    /// A misspelt key that kcp reads is named with the key meant; Kafka's other keys and keys far
    /// from every known one stay ignored.
    #[test]
    fn mistyped_keys() {
        for (text, meant) in [
            ("sasl.mechansim=PLAIN", "sasl.mechanism"),
            ("security.protcol=SSL", "security.protocol"),
            ("bootstrap.server=a:1", "bootstrap.servers"),
            ("ssl.truststore.locaton=/x", "ssl.truststore.location"),
            ("sasl.jass.config=x", "sasl.jaas.config"),
            ("ssl.keystore.pasword=x", "ssl.keystore.password"),
        ] {
            let e = refused(text);
            let key = text.split('=').next().unwrap();
            assert_eq!(e.key(), key);
            assert_eq!(e.to_string(), format!("{key}: unknown key: did you mean {meant}?"), "{text}");
        }
        let c = ClientConfig::from_properties("group.id=g\nclient.rack=r\nretries=3\nmy.own.setting=1").unwrap();
        assert_eq!(c.ignored_keys, ["group.id", "client.rack", "retries", "my.own.setting"]);
        // No key of Kafka's list is within reach of a key kcp reads unless nearer another.
        for key in KAFKA_CLIENT_KEYS {
            assert_eq!(mistyped_key(key), None, "{key}");
            assert!(!KNOWN_KEYS.contains(key), "{key}");
        }
        assert_eq!(edit_distance("mechansim", "mechanism"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    /// Java's store types: JKS by default, PKCS12, PEM; a password where Java takes one.
    #[test]
    fn store_types() {
        let c = ClientConfig::from_properties("ssl.truststore.location=/t.jks\nssl.truststore.password=tpw").unwrap();
        assert_eq!(
            c.tls.trust,
            TrustStore::Store(StoreFile::new("/t.jks", StoreFormat::Jks, Some(Secret::new("tpw"))))
        );
        let c = ClientConfig::from_properties("ssl.truststore.type=pkcs12\nssl.truststore.location=/t.p12").unwrap();
        assert_eq!(c.tls.trust, TrustStore::Store(StoreFile::new("/t.p12", StoreFormat::Pkcs12, None)));
        // A store type without a location is Java's default truststore.
        let c = ClientConfig::from_properties("ssl.truststore.type=PKCS12\nssl.truststore.password=x").unwrap();
        assert_eq!(c.tls.trust, TrustStore::PublicRoots);
        let c = ClientConfig::from_properties(
            "ssl.keystore.type=PKCS12\nssl.keystore.location=/k.p12\nssl.keystore.password=kpw-secret\nssl.key.password=kk-secret",
        )
        .unwrap();
        assert_eq!(
            c.tls.identity,
            Some(ClientIdentity::Store {
                store: StoreFile::new("/k.p12", StoreFormat::Pkcs12, Some(Secret::new("kpw-secret"))),
                key_password: Some(Secret::new("kk-secret")),
            })
        );
        let debug = format!("{c:?}");
        assert!(!debug.contains("kpw-secret") && !debug.contains("kk-secret"), "{debug}");
        assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
    }

    #[test]
    fn oauthbearer() {
        let text = format!(
            "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n\
             sasl.login.callback.handler.class={}\n\
             sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:8080/token\n\
             sasl.oauthbearer.scope.claim.name=scp\nsasl.oauthbearer.sub.claim.name=client_id\n\
             sasl.jaas.config={OAUTH_MODULE} required clientId=\"me\" clientSecret=\"pw-secret\" extension_traceId=\"t1\";\n",
            OAUTH_LOGIN_HANDLERS[1]
        );
        let c = ClientConfig::from_properties(&text).unwrap();
        let sasl = c.sasl.clone().unwrap();
        assert_eq!(
            (sasl.mechanism, sasl.username.as_str(), sasl.password.expose()),
            (SaslMechanism::OAuthBearer, "me", "pw-secret")
        );
        let oauth = sasl.oauth.unwrap();
        assert_eq!(oauth.token_endpoint, "http://127.0.0.1:8080/token");
        assert_eq!(
            (oauth.scope, oauth.scope_claim_name.as_str(), oauth.sub_claim_name.as_str()),
            (None, "scp", "client_id")
        );
        assert_eq!(oauth.extensions, [("traceId".to_string(), "t1".to_string())]);
        assert!(c.ignored_keys.is_empty(), "{:?}", c.ignored_keys);
        assert!(!format!("{c:?}").contains("pw-secret"));
        let bad = text.replace("extension_traceId", "extension_auth");
        assert_eq!(refused(&bad).key(), "sasl.jaas.config");
        let bad = text.replace(OAUTH_LOGIN_HANDLERS[1], "com.example.Handler");
        assert_eq!(refused(&bad).key(), "sasl.login.callback.handler.class");
    }

    #[test]
    fn jaas_forms() {
        let login = parse_jaas(
            "org.apache.kafka.common.security.plain.PlainLoginModule   optional\n username = \"a b\"\tpassword=p\\q ; ",
        )
        .unwrap();
        assert_eq!(
            login.options,
            [("username".to_string(), "a b".to_string()), ("password".to_string(), "p\\q".to_string())]
        );
        let login =
            parse_jaas(&format!("{SCRAM_MODULE} required username=\"x\\\\y\" password=\"\" tokenauth=true;")).unwrap();
        assert_eq!(login.options[0].1, "x\\y");
        assert_eq!(login.options[1].1, "");
    }
}
