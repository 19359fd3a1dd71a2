//! TLS and SASL against fake brokers on loopback: certificates made in the test (rcgen), a
//! rustls server, and SASL PLAIN and SCRAM servers written here from RFC 5802.

mod client_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use client_support::*;
use hmac::{Hmac, Mac};
use kafka_consumer_protocol::client::ListGroupsFilter;
use kafka_consumer_protocol::client::{
    Client, ClientConfig, ClientIdentity, Deadline, ErrorKind, PemSource, SaslConfig, SaslMechanism, Secret,
    SecurityProtocol, TrustStore,
};
use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
use kafka_protocol::messages::*;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256, Sha512};

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(20))
}

/// A broker that answers ApiVersions and Metadata (after SASL when `sasl` is given).
fn plain_cluster(request: &Seen) -> Option<Reply> {
    match request.api_key {
        18 => Some(api_versions(request, all_api_versions())),
        3 => Some(body(
            &MetadataResponse::default().with_brokers(vec![MetadataResponseBroker::default()
                .with_node_id(1.into())
                .with_host(StrBytes::from_static_str("127.0.0.1"))
                .with_port(1)]),
            request.version,
        )),
        _ => None,
    }
}

use kafka_protocol::protocol::StrBytes;

struct Pki {
    ca_pem: String,
    server_chain: Vec<CertificateDer<'static>>,
    server_key: PrivateKeyDer<'static>,
    client_cert_pem: String,
    client_key_pem: String,
    ca_der: CertificateDer<'static>,
}

fn pki(server_names: &[&str]) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "kcp test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let names: Vec<String> = server_names.iter().map(|n| n.to_string()).collect();
    let server = CertificateParams::new(names).unwrap().signed_by(&server_key, &ca, &ca_key).unwrap();
    let client_key = KeyPair::generate().unwrap();
    let mut client_params = CertificateParams::new(vec!["client".to_string()]).unwrap();
    client_params.distinguished_name.push(DnType::CommonName, "kcp client");
    let client = client_params.signed_by(&client_key, &ca, &ca_key).unwrap();
    Pki {
        ca_pem: ca.pem(),
        server_chain: vec![server.der().clone()],
        server_key: PrivateKeyDer::from_pem_slice(server_key.serialize_pem().as_bytes()).unwrap(),
        client_cert_pem: client.pem(),
        client_key_pem: client_key.serialize_pem(),
        ca_der: ca.der().clone(),
    }
}

/// A TLS fake broker; `require_client_cert` asks for a certificate signed by the test CA.
async fn tls_broker(
    pki: &Pki,
    require_client_cert: bool,
    handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
) -> FakeBroker {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder =
        rustls::ServerConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions().unwrap();
    let builder = if require_client_cert {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(pki.ca_der.clone()).unwrap();
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider).build().unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let config = builder.with_single_cert(pki.server_chain.clone(), pki.server_key.clone_key()).unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    start_with(handler, move |tcp| {
        let acceptor = acceptor.clone();
        async move { acceptor.accept(tcp).await.ok() }
    })
    .await
}

fn tls_config(address: &str, ca_pem: &str) -> ClientConfig {
    let mut config = ClientConfig::new([address]).unwrap();
    config.security_protocol = SecurityProtocol::Ssl;
    config.tls.trust = TrustStore::Pem(PemSource::Text(ca_pem.to_string()));
    config
}

fn answer(request: &Seen) -> Reply {
    plain_cluster(request).unwrap_or(Reply::Close)
}

#[tokio::test]
async fn tls_with_a_pem_ca_and_hostname_verification() {
    let pki = pki(&["127.0.0.1", "localhost"]);
    let broker = tls_broker(&pki, false, answer).await;
    let client = Client::new(tls_config(&broker.address(), &pki.ca_pem)).unwrap();
    let metadata = client.metadata(Some(&[]), deadline()).await.unwrap();
    assert_eq!(metadata.brokers[0].node_id, 1);
    // By name too.
    let client = Client::new(tls_config(&format!("localhost:{}", broker.port), &pki.ca_pem)).unwrap();
    client.metadata(Some(&[]), deadline()).await.unwrap();
}

#[tokio::test]
async fn tls_from_a_properties_file() {
    let pki = pki(&["127.0.0.1"]);
    let broker = tls_broker(&pki, false, answer).await;
    let dir = std::env::temp_dir().join(format!("kcp-client-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let text = format!(
        "bootstrap.servers={}\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={}\n",
        broker.address(),
        ca.display()
    );
    let client = Client::new(ClientConfig::from_properties(&text).unwrap()).unwrap();
    client.metadata(Some(&[]), deadline()).await.unwrap();
    let missing = ClientConfig::from_properties(&text.replace("ca.pem", "missing.pem")).unwrap();
    let e = Client::new(missing).unwrap_err();
    assert_eq!(e.key(), "ssl.truststore.location");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_wrong_ca_is_a_tls_error() {
    let pki_a = pki(&["127.0.0.1"]);
    let pki_b = pki(&["127.0.0.1"]);
    let broker = tls_broker(&pki_a, false, answer).await;
    let client = Client::new(tls_config(&broker.address(), &pki_b.ca_pem)).unwrap();
    let e = client.metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    assert!(e.message().contains("invalid peer certificate"), "{e}");
}

#[tokio::test]
async fn a_hostname_mismatch_is_a_tls_error_unless_verification_is_off() {
    let pki = pki(&["kafka.example.com"]);
    let broker = tls_broker(&pki, false, answer).await;
    let e =
        Client::new(tls_config(&broker.address(), &pki.ca_pem)).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    assert!(e.message().contains("certificate not valid for name"), "{e}");
    let mut config = tls_config(&broker.address(), &pki.ca_pem);
    config.tls.verify_hostname = false;
    Client::new(config).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    // Turning the name check off keeps the chain check.
    let other = self::pki(&["kafka.example.com"]);
    let mut config = tls_config(&broker.address(), &other.ca_pem);
    config.tls.verify_hostname = false;
    let e = Client::new(config).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
}

#[tokio::test]
async fn mutual_tls() {
    let pki = pki(&["127.0.0.1"]);
    let broker = tls_broker(&pki, true, answer).await;
    let mut config = tls_config(&broker.address(), &pki.ca_pem);
    config.tls.identity = Some(ClientIdentity::PemText {
        certificate_chain: pki.client_cert_pem.clone(),
        key: Secret::new(pki.client_key_pem.clone()),
    });
    Client::new(config).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    // One PEM file with the chain and the key, as Java's PEM keystore.
    let dir = std::env::temp_dir().join(format!("kcp-client-mtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keystore = dir.join("client.pem");
    std::fs::write(&keystore, format!("{}{}", pki.client_cert_pem, pki.client_key_pem)).unwrap();
    let mut config = tls_config(&broker.address(), &pki.ca_pem);
    config.tls.identity = Some(ClientIdentity::PemFile(keystore));
    Client::new(config).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // Without a certificate the broker refuses the connection.
    let e =
        Client::new(tls_config(&broker.address(), &pki.ca_pem)).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
}

#[tokio::test]
async fn plaintext_to_a_tls_listener_is_a_tls_error() {
    let pki = pki(&["127.0.0.1"]);
    let broker = tls_broker(&pki, false, answer).await;
    let mut config = ClientConfig::new([broker.address()]).unwrap();
    config.retry_backoff = Duration::from_millis(5);
    let e = Client::new(config).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
}

#[tokio::test]
async fn tls_to_a_plaintext_listener_is_a_tls_error() {
    let pki = pki(&["127.0.0.1"]);
    let broker = start(|_| Reply::Close).await;
    let e =
        Client::new(tls_config(&broker.address(), &pki.ca_pem)).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
}

// --- SASL ---------------------------------------------------------------------------------

/// The server side of SCRAM for one user, per connection.
struct ScramServer {
    mechanism: SaslMechanism,
    user: String,
    password: String,
    /// Send a wrong server signature (a broker that does not know the password).
    forge_signature: bool,
    state: Mutex<HashMap<usize, (String, String)>>,
}

fn hmac(mechanism: SaslMechanism, key: &[u8], data: &[u8]) -> Vec<u8> {
    match mechanism {
        SaslMechanism::ScramSha512 => {
            let mut m = Hmac::<Sha512>::new_from_slice(key).unwrap();
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
        _ => {
            let mut m = Hmac::<Sha256>::new_from_slice(key).unwrap();
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
    }
}

fn hash(mechanism: SaslMechanism, data: &[u8]) -> Vec<u8> {
    match mechanism {
        SaslMechanism::ScramSha512 => Sha512::digest(data).to_vec(),
        _ => Sha256::digest(data).to_vec(),
    }
}

fn salted(mechanism: SaslMechanism, password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
    match mechanism {
        SaslMechanism::ScramSha512 => {
            pbkdf2::pbkdf2_hmac_array::<Sha512, 64>(password.as_bytes(), salt, iterations).to_vec()
        }
        _ => pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password.as_bytes(), salt, iterations).to_vec(),
    }
}

const SALT: &[u8] = b"kcp-test-salt";

impl ScramServer {
    /// One SaslAuthenticate step: the reply token, or `None` for a refusal.
    fn step(&self, connection: usize, token: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(token).unwrap();
        let mut state = self.state.lock().unwrap();
        match state.remove(&connection) {
            None => {
                let bare = text.strip_prefix("n,,").unwrap().to_string();
                let nonce = bare.split(',').find_map(|a| a.strip_prefix("r=")).unwrap().to_string();
                let user = bare.split(',').find_map(|a| a.strip_prefix("n=")).unwrap();
                if user != self.user {
                    return None;
                }
                let server_first = format!("r={nonce}srv-nonce,s={},i=4096", BASE64.encode(SALT));
                state.insert(connection, (bare, server_first.clone()));
                Some(server_first.into_bytes())
            }
            Some((client_first_bare, server_first)) => {
                let (without_proof, proof) = text.rsplit_once(",p=").unwrap();
                let proof = BASE64.decode(proof).unwrap();
                let m = self.mechanism;
                let salted = salted(m, &self.password, SALT, 4096);
                let stored_key = hash(m, &hmac(m, &salted, b"Client Key"));
                let auth = format!("{client_first_bare},{server_first},{without_proof}");
                let signature = hmac(m, &stored_key, auth.as_bytes());
                let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(a, b)| a ^ b).collect();
                if hash(m, &client_key) != stored_key {
                    return None;
                }
                let mut server_signature = hmac(m, &hmac(m, &salted, b"Server Key"), auth.as_bytes());
                if self.forge_signature {
                    server_signature[0] ^= 1;
                }
                Some(format!("v={}", BASE64.encode(server_signature)).into_bytes())
            }
        }
    }
}

enum Login {
    Plain { user: &'static str, password: &'static str },
    Scram(ScramServer),
}

/// A SASL_PLAINTEXT broker: ApiVersions, the handshake, the exchange, then the cluster.
async fn sasl_broker(login: Login) -> FakeBroker {
    let mechanism = match &login {
        Login::Plain { .. } => "PLAIN".to_string(),
        Login::Scram(s) => s.mechanism.as_str().to_string(),
    };
    let authenticated = Mutex::new(std::collections::HashSet::new());
    start(move |r| match r.api_key {
        18 => api_versions(r, all_api_versions()),
        17 => {
            let request: SaslHandshakeRequest = r.decode();
            let code = if request.mechanism.as_str() == mechanism { 0 } else { 33 };
            body(
                &SaslHandshakeResponse::default()
                    .with_error_code(code)
                    .with_mechanisms(vec![StrBytes::from_string(mechanism.clone())]),
                r.version,
            )
        }
        36 => {
            let request: SaslAuthenticateRequest = r.decode();
            let reply = match &login {
                Login::Plain { user, password } => {
                    (request.auth_bytes[..] == *format!("\0{user}\0{password}").as_bytes()).then(Vec::new)
                }
                Login::Scram(server) => server.step(r.connection, &request.auth_bytes),
            };
            let response = match reply {
                Some(token) => {
                    if matches!(login, Login::Plain { .. }) || token.starts_with(b"v=") {
                        authenticated.lock().unwrap().insert(r.connection);
                    }
                    SaslAuthenticateResponse::default().with_auth_bytes(token.into())
                }
                None => SaslAuthenticateResponse::default().with_error_code(58).with_error_message(Some(
                    StrBytes::from_string(format!(
                        "Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
                    )),
                )),
            };
            body(&response, r.version)
        }
        _ if !authenticated.lock().unwrap().contains(&r.connection) => Reply::Close,
        _ => plain_cluster(r).unwrap_or(Reply::Close),
    })
    .await
}

fn sasl_config(address: &str, mechanism: SaslMechanism, user: &str, password: &str) -> ClientConfig {
    let mut config = ClientConfig::new([address]).unwrap();
    config.security_protocol = SecurityProtocol::SaslPlaintext;
    config.sasl = Some(SaslConfig::new(mechanism, user, Secret::new(password)));
    config
}

fn scram(mechanism: SaslMechanism, forge_signature: bool) -> Login {
    Login::Scram(ScramServer {
        mechanism,
        user: "alice".into(),
        password: "alice-secret".into(),
        forge_signature,
        state: Mutex::new(HashMap::new()),
    })
}

#[tokio::test]
async fn sasl_plain() {
    let broker = sasl_broker(Login::Plain { user: "bob", password: "bob-secret" }).await;
    let ok = sasl_config(&broker.address(), SaslMechanism::Plain, "bob", "bob-secret");
    Client::new(ok).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    assert_eq!(broker.calls()[..3], [(18, 3), (17, 1), (36, 2)]);
    let wrong = sasl_config(&broker.address(), SaslMechanism::Plain, "bob", "not-the-password");
    let e = Client::new(wrong).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.message().contains("SASL_AUTHENTICATION_FAILED (58)"), "{e}");
    assert!(!e.message().contains("not-the-password") && !format!("{e:?}").contains("not-the-password"));
}

#[tokio::test]
async fn sasl_scram_sha_256_and_512() {
    for mechanism in [SaslMechanism::ScramSha256, SaslMechanism::ScramSha512] {
        let broker = sasl_broker(scram(mechanism, false)).await;
        let ok = sasl_config(&broker.address(), mechanism, "alice", "alice-secret");
        Client::new(ok).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
        let wrong = sasl_config(&broker.address(), mechanism, "alice", "wrong-secret");
        let e = Client::new(wrong).unwrap().metadata(None, deadline()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
        assert!(!e.message().contains("wrong-secret"), "{e}");
        let unknown = sasl_config(&broker.address(), mechanism, "mallory", "alice-secret");
        let e = Client::new(unknown).unwrap().metadata(None, deadline()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    }
}

#[tokio::test]
async fn a_forged_scram_server_signature_is_refused() {
    let broker = sasl_broker(scram(SaslMechanism::ScramSha256, true)).await;
    let config = sasl_config(&broker.address(), SaslMechanism::ScramSha256, "alice", "alice-secret");
    let e = Client::new(config).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.message().contains("server signature is wrong"), "{e}");
}

#[tokio::test]
async fn a_mechanism_the_broker_does_not_offer() {
    let broker = sasl_broker(scram(SaslMechanism::ScramSha512, false)).await;
    let config = sasl_config(&broker.address(), SaslMechanism::ScramSha256, "alice", "alice-secret");
    let e = Client::new(config).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.message().contains("UNSUPPORTED_SASL_MECHANISM (33)"), "{e}");
    assert!(e.message().contains("SCRAM-SHA-512"), "{e}");
}

// ---- JKS, PKCS12 and inline PEM, as Java-world client.properties files hold them (issue 26) ----

/// Whether the live tests must run (CI): a missing tool or cluster is then a failure.
fn required() -> bool {
    std::env::var("KCP_LIVE_REQUIRED").as_deref() == Ok("1")
}

/// Runs a tool (keytool, openssl); `None` after a SKIP line when it is not installed.
fn tool(program: &str, args: &[&str]) -> Option<()> {
    match std::process::Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Some(()),
        Ok(out) => panic!("{program} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) if !required() => {
            println!("SKIP: {program} is not available ({e})");
            None
        }
        Err(e) => panic!("KCP_LIVE_REQUIRED=1 but {program} is not available: {e}"),
    }
}

const TRUST_PASSWORD: &str = "trust-pw-8a1";
const STORE_PASSWORD: &str = "store-pw-3c9";
const KEY_PASSWORD: &str = "key-pw-77e";

/// The stores a Java user has, made by keytool and openssl from PEM files: a JKS and a PKCS12
/// truststore with the CA, a PKCS12 keystore written by openssl and one re-written by keytool
/// (Java 17's PBES2/AES), and a JKS keystore whose key has its own password.
struct Stores {
    dir: std::path::PathBuf,
}

impl Stores {
    fn make(
        name: &str,
        ca_pem: &std::path::Path,
        cert_pem: &std::path::Path,
        key_pem: &std::path::Path,
    ) -> Option<Stores> {
        let dir = std::env::temp_dir().join(format!("kcp-stores-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = |file: &str| dir.join(file).display().to_string();
        let ca = ca_pem.display().to_string();
        for (file, kind) in [("trust.jks", "JKS"), ("trust.p12", "PKCS12")] {
            tool(
                "keytool",
                &[
                    "-importcert",
                    "-noprompt",
                    "-alias",
                    "ca",
                    "-file",
                    &ca,
                    "-keystore",
                    &path(file),
                    "-storetype",
                    kind,
                    "-storepass",
                    TRUST_PASSWORD,
                ],
            )?;
        }
        tool(
            "openssl",
            &[
                "pkcs12",
                "-export",
                "-in",
                &cert_pem.display().to_string(),
                "-inkey",
                &key_pem.display().to_string(),
                "-name",
                "client",
                "-out",
                &path("client-openssl.p12"),
                "-passout",
                &format!("pass:{STORE_PASSWORD}"),
            ],
        )?;
        let import = |dest: &str, kind: &str, key_password: &str| {
            tool(
                "keytool",
                &[
                    "-importkeystore",
                    "-noprompt",
                    "-srckeystore",
                    &path("client-openssl.p12"),
                    "-srcstoretype",
                    "PKCS12",
                    "-srcstorepass",
                    STORE_PASSWORD,
                    "-srcalias",
                    "client",
                    "-destkeystore",
                    &path(dest),
                    "-deststoretype",
                    kind,
                    "-deststorepass",
                    STORE_PASSWORD,
                    "-destkeypass",
                    key_password,
                ],
            )
        };
        import("client.p12", "PKCS12", STORE_PASSWORD)?;
        import("client.jks", "JKS", KEY_PASSWORD)?;
        Some(Stores { dir })
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    fn truststore(&self, file: &str, kind: &str) -> String {
        format!(
            "ssl.truststore.type={kind}\nssl.truststore.location={}\nssl.truststore.password={TRUST_PASSWORD}\n",
            self.path(file)
        )
    }

    fn keystore(&self, file: &str, kind: &str) -> String {
        let mut text = format!(
            "ssl.keystore.type={kind}\nssl.keystore.location={}\nssl.keystore.password={STORE_PASSWORD}\n",
            self.path(file)
        );
        if file.ends_with(".jks") {
            text.push_str(&format!("ssl.key.password={KEY_PASSWORD}\n"));
        }
        text
    }
}

impl Drop for Stores {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A PEM text written as Kafka documents inline PEM in a properties file: one value continued
/// over lines with `\`.
fn continued_pem(pem: &str) -> String {
    pem.trim().lines().collect::<Vec<_>>().join(" \\\n    ")
}

fn write_pki(pki: &Pki, dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let files = (dir.join("ca.pem"), dir.join("client.pem"), dir.join("client.key"));
    std::fs::write(&files.0, &pki.ca_pem).unwrap();
    std::fs::write(&files.1, &pki.client_cert_pem).unwrap();
    std::fs::write(&files.2, &pki.client_key_pem).unwrap();
    files
}

#[tokio::test]
async fn jks_and_pkcs12_stores_from_keytool_and_openssl() {
    let pki = pki(&["127.0.0.1"]);
    let broker = tls_broker(&pki, true, answer).await;
    let pem_dir = std::env::temp_dir().join(format!("kcp-pem-stores-{}", std::process::id()));
    let (ca, cert, key) = write_pki(&pki, &pem_dir);
    let Some(stores) = Stores::make("fake", &ca, &cert, &key) else { return };
    let head = format!("bootstrap.servers={}\nsecurity.protocol=SSL\n", broker.address());
    for (trust_file, trust_kind) in [("trust.jks", "JKS"), ("trust.p12", "PKCS12"), ("trust.p12", "JKS")] {
        for (key_file, key_kind) in [("client.p12", "PKCS12"), ("client-openssl.p12", "PKCS12"), ("client.jks", "JKS")]
        {
            let text =
                format!("{head}{}{}", stores.truststore(trust_file, trust_kind), stores.keystore(key_file, key_kind));
            let what = format!("{trust_file} as {trust_kind}, {key_file} as {key_kind}");
            let client =
                Client::new(ClientConfig::from_properties(&text).unwrap()).unwrap_or_else(|e| panic!("{what}: {e}"));
            client.metadata(Some(&[]), deadline()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
    // Java's default type is JKS, and a JKS truststore needs no password (no integrity check).
    let text = format!(
        "{head}ssl.truststore.location={}\n{}",
        stores.path("trust.jks"),
        stores.keystore("client.p12", "PKCS12")
    );
    Client::new(ClientConfig::from_properties(&text).unwrap()).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    std::fs::remove_dir_all(&pem_dir).unwrap();
}

/// An encrypted PKCS#8 PEM key with `ssl.key.password`, as Kafka's PEM keystore takes it.
#[tokio::test]
async fn an_encrypted_pem_key_with_ssl_key_password() {
    let pki = pki(&["127.0.0.1"]);
    let broker = tls_broker(&pki, true, answer).await;
    let dir = std::env::temp_dir().join(format!("kcp-pem-encrypted-{}", std::process::id()));
    let (_, cert, key) = write_pki(&pki, &dir);
    let encrypted = dir.join("client-encrypted.key");
    let encrypted_path = encrypted.display().to_string();
    let args = [
        "pkcs8",
        "-topk8",
        "-v2",
        "aes-256-cbc",
        "-in",
        &key.display().to_string(),
        "-out",
        &encrypted_path,
        "-passout",
        "pass:key-pw-91",
    ];
    if tool("openssl", &args).is_none() {
        return;
    }
    let keystore = dir.join("client-keystore.pem");
    let chain = std::fs::read_to_string(&cert).unwrap();
    let encrypted_pem = std::fs::read_to_string(&encrypted).unwrap();
    std::fs::write(&keystore, format!("{encrypted_pem}{chain}")).unwrap();
    let text = |password: &str| {
        format!(
            "bootstrap.servers={}\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates={}\n\
             ssl.keystore.type=PEM\nssl.keystore.location={}\n{password}",
            broker.address(),
            continued_pem(&pki.ca_pem),
            keystore.display()
        )
    };
    let client = Client::new(ClientConfig::from_properties(&text("ssl.key.password=key-pw-91\n")).unwrap()).unwrap();
    client.metadata(Some(&[]), deadline()).await.unwrap();
    // Inline too.
    let inline = format!(
        "bootstrap.servers={}\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates={}\n\
         ssl.keystore.type=PEM\nssl.keystore.certificate.chain={}\nssl.keystore.key={}\nssl.key.password=key-pw-91\n",
        broker.address(),
        continued_pem(&pki.ca_pem),
        continued_pem(&chain),
        continued_pem(&encrypted_pem)
    );
    Client::new(ClientConfig::from_properties(&inline).unwrap())
        .unwrap()
        .metadata(Some(&[]), deadline())
        .await
        .unwrap();
    for (password, key, why) in [
        ("ssl.key.password=wrong-pw-7\n", "ssl.keystore.location", "wrong ssl.key.password"),
        ("", "ssl.key.password", "the private key is encrypted: set ssl.key.password"),
    ] {
        let e = Client::new(ClientConfig::from_properties(&text(password)).unwrap()).unwrap_err();
        assert_eq!(e.key(), key, "{e}");
        assert!(e.to_string().contains(why) && !e.to_string().contains("wrong-pw-7"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_store_that_cannot_be_read_says_which_file_which_format_and_why() {
    let pki = pki(&["127.0.0.1"]);
    let pem_dir = std::env::temp_dir().join(format!("kcp-pem-errors-{}", std::process::id()));
    let (ca, cert, key) = write_pki(&pki, &pem_dir);
    let Some(stores) = Stores::make("errors", &ca, &cert, &key) else { return };
    let garbage = pem_dir.join("garbage.bin");
    std::fs::write(&garbage, [7u8; 64]).unwrap();
    let ca = ca.display().to_string();
    let garbage = garbage.display().to_string();
    let with_trust = |text: String| format!("bootstrap.servers=127.0.0.1:9\nsecurity.protocol=SSL\n{text}");
    let cases: Vec<(String, &str, Vec<String>)> = vec![
        (
            with_trust(stores.truststore("trust.jks", "JKS").replace(TRUST_PASSWORD, "wrong-pw-1")),
            "ssl.truststore.location",
            vec![
                stores.path("trust.jks"),
                "read as JKS".into(),
                "wrong password".into(),
                "keytool -importkeystore".into(),
            ],
        ),
        (
            with_trust(stores.truststore("trust.p12", "PKCS12").replace(TRUST_PASSWORD, "wrong-pw-1")),
            "ssl.truststore.location",
            vec![stores.path("trust.p12"), "read as PKCS12".into(), "wrong password".into()],
        ),
        (
            with_trust(format!("ssl.truststore.type=PKCS12\nssl.truststore.location={}\n", stores.path("trust.p12"))),
            "ssl.truststore.location",
            vec!["set ssl.truststore.password".into()],
        ),
        (
            // The wrong first error of before: JKS with a password given a PEM file.
            with_trust(format!(
                "ssl.truststore.type=JKS\nssl.truststore.location={ca}\nssl.truststore.password=wrong-pw-1\n"
            )),
            "ssl.truststore.location",
            vec![ca.clone(), "read as JKS".into(), "it is a PEM file: set ssl.truststore.type=PEM".into()],
        ),
        (
            with_trust(format!("ssl.truststore.location={garbage}\n")),
            "ssl.truststore.location",
            vec![garbage.clone(), "neither a JKS store".into()],
        ),
        (
            with_trust(stores.keystore("client.jks", "JKS").replace(KEY_PASSWORD, "wrong-pw-1")),
            "ssl.keystore.location",
            vec![stores.path("client.jks"), "wrong key password".into(), "ssl.key.password".into()],
        ),
        (
            with_trust(stores.keystore("client.p12", "PKCS12").replace(STORE_PASSWORD, "wrong-pw-1")),
            "ssl.keystore.location",
            vec![stores.path("client.p12"), "read as PKCS12".into(), "wrong password".into()],
        ),
    ];
    for (text, key, hints) in cases {
        let e = Client::new(ClientConfig::from_properties(&text).unwrap()).unwrap_err();
        assert_eq!(e.key(), key, "{text}\n{e}");
        for hint in hints {
            assert!(e.to_string().contains(&hint), "{hint:?} not in: {e}");
        }
        for secret in ["wrong-pw-1", TRUST_PASSWORD, STORE_PASSWORD, KEY_PASSWORD] {
            assert!(!e.to_string().contains(secret), "{e}");
        }
    }
    std::fs::remove_dir_all(&pem_dir).unwrap();
}

#[tokio::test]
async fn inline_pem_continued_over_lines_as_kafka_documents_it() {
    let pki = pki(&["127.0.0.1"]);
    let broker = tls_broker(&pki, true, answer).await;
    let text = format!(
        "bootstrap.servers={}\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates={}\n\
         ssl.keystore.type=PEM\nssl.keystore.certificate.chain={}\nssl.keystore.key={}\n",
        broker.address(),
        continued_pem(&pki.ca_pem),
        continued_pem(&pki.client_cert_pem),
        continued_pem(&pki.client_key_pem),
    );
    assert!(text.lines().count() > 20, "{text}");
    Client::new(ClientConfig::from_properties(&text).unwrap()).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    // A certificate cut short says so, without a list of bytes.
    let cut = text.replace("-----END CERTIFICATE-----", "");
    let e = Client::new(ClientConfig::from_properties(&cut).unwrap()).unwrap_err();
    assert_eq!(e.key(), "ssl.truststore.certificates");
    assert!(e.to_string().contains("no -----END CERTIFICATE----- marker") && e.to_string().len() < 300, "{e}");
}

/// The live cluster for these tests: `k39` (CI's, started with `--sasl-ssl --oauth`) unless
/// `KCP_LIVE_SECURITY_CLUSTER` names another; `None` after a SKIP line when it is not there or
/// lacks `needs` (an env key), a failure when KCP_LIVE_REQUIRED=1.
fn live_cluster(needs: &str) -> Option<impl Fn(&str) -> String> {
    let name = std::env::var("KCP_LIVE_SECURITY_CLUSTER").unwrap_or_else(|_| "k39".to_string());
    let prefix = format!("KCP_LIVE_{}_", name.to_ascii_uppercase());
    let get = move |key: &str| std::env::var(format!("{prefix}{key}")).ok().filter(|v| !v.is_empty());
    if get(needs).is_none() {
        let why = format!(
            "needs cluster {name} started with --sasl-ssl --oauth (KCP_LIVE_{}_{needs})",
            name.to_ascii_uppercase()
        );
        assert!(!required(), "KCP_LIVE_REQUIRED=1 but the test {why}");
        println!("SKIP: {why}");
        return None;
    }
    Some(move |key: &str| get(key).unwrap_or_else(|| panic!("{key} of the live cluster is not set")))
}

/// The live cluster's SASL_SSL and mTLS listeners with the stores a Java user has: a JKS
/// truststore (SCRAM-SHA-512), PKCS12 and JKS keystores (mTLS), and inline PEM continued over
/// lines, made here with keytool and openssl.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_stores_and_inline_pem() {
    let Some(must) = live_cluster("SASL_SSL_BOOTSTRAP") else { return };
    let (sasl_ssl, mtls) = (must("SASL_SSL_BOOTSTRAP"), must("MTLS_BOOTSTRAP"));
    let (ca, cert, key) = (must("CA_PEM"), must("CLIENT_CERT_PEM"), must("CLIENT_KEY_PEM"));
    let Some(stores) = Stores::make("live", ca.as_ref(), cert.as_ref(), key.as_ref()) else { return };
    let scram = format!(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"{}\" \\\n  password=\"{}\";\n",
        must("SCRAM_USER"),
        must("SCRAM_PASSWORD")
    );
    let read = |path: &str| std::fs::read_to_string(path).unwrap();
    let inline_trust = format!("ssl.truststore.type=PEM\nssl.truststore.certificates={}\n", continued_pem(&read(&ca)));
    let cases = [
        ("SASL_SSL, JKS truststore", format!("bootstrap.servers={sasl_ssl}\n{scram}{}", stores.truststore("trust.jks", "JKS"))),
        ("SASL_SSL, inline PEM", format!("bootstrap.servers={sasl_ssl}\n{scram}{inline_trust}")),
        (
            "mTLS, JKS truststore, PKCS12 keystore",
            format!("bootstrap.servers={mtls}\nsecurity.protocol=SSL\n{}{}", stores.truststore("trust.jks", "JKS"), stores.keystore("client.p12", "PKCS12")),
        ),
        (
            "mTLS, PKCS12 truststore, JKS keystore",
            format!("bootstrap.servers={mtls}\nsecurity.protocol=SSL\n{}{}", stores.truststore("trust.p12", "PKCS12"), stores.keystore("client.jks", "JKS")),
        ),
        (
            "mTLS, inline PEM",
            format!(
                "bootstrap.servers={mtls}\nsecurity.protocol=SSL\n{inline_trust}ssl.keystore.type=PEM\nssl.keystore.certificate.chain={}\nssl.keystore.key={}\n",
                continued_pem(&read(&cert)),
                continued_pem(&read(&key))
            ),
        ),
    ];
    for (what, text) in cases {
        let client =
            Client::new(ClientConfig::from_properties(&text).unwrap()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let metadata = client.metadata(Some(&[]), deadline()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(!metadata.brokers.is_empty(), "{what}");
    }
    // Without the client certificate the mTLS listener refuses.
    let text = format!("bootstrap.servers={mtls}\nsecurity.protocol=SSL\n{}", stores.truststore("trust.jks", "JKS"));
    let e = Client::new(ClientConfig::from_properties(&text).unwrap())
        .unwrap()
        .metadata(None, deadline())
        .await
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Tls | ErrorKind::Unreachable), "{e}");
}

/// The properties files `kafka.sh start --sasl-ssl` writes for CI (JKS truststore with SCRAM,
/// PKCS12 and JKS keystores, inline PEM continued over lines) work unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_properties_files_written_by_kafka_sh() {
    let Some(must) = live_cluster("STORE_PASSWORD") else { return };
    let run_dir = std::path::PathBuf::from(must("RUN_DIR"));
    for (file, bootstrap) in [
        ("client-scram-sha-512-jks", must("SASL_SSL_BOOTSTRAP")),
        ("client-mtls-pkcs12", must("MTLS_BOOTSTRAP")),
        ("client-mtls-jks", must("MTLS_BOOTSTRAP")),
        ("client-mtls-inline-pem", must("MTLS_BOOTSTRAP")),
    ] {
        let path = run_dir.join(format!("{file}.properties"));
        let mut config = ClientConfig::from_properties_file(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(config.ignored_keys.is_empty(), "{file}: {:?}", config.ignored_keys);
        config.set_bootstrap([&bootstrap]).unwrap();
        let client = Client::new(config).unwrap_or_else(|e| panic!("{file}: {e}"));
        client.metadata(Some(&[]), deadline()).await.unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

/// What the test's token endpoint was asked: the Authorization header and the form body.
type TokenRequests = Arc<Mutex<Vec<(String, String)>>>;

/// A token endpoint on loopback, hyper's HTTP/1.1 server, answering every request with `status`
/// and the JSON `body`.
async fn token_endpoint(status: u16, body: String) -> (String, TokenRequests) {
    use http_body_util::BodyExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/oauth2/token", listener.local_addr().unwrap());
    let seen: TokenRequests = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (log, body) = (log.clone(), body.clone());
            let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let (log, body) = (log.clone(), body.clone());
                async move {
                    let (head, form) = request.into_parts();
                    let form = form.collect().await?.to_bytes();
                    let auth = head.headers.get("authorization").map(|v| v.to_str().unwrap().to_string());
                    log.lock().unwrap().push((auth.unwrap_or_default(), String::from_utf8_lossy(&form).into_owned()));
                    let answer = hyper::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
                        .unwrap();
                    Ok::<_, hyper::Error>(answer)
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
            );
        }
    });
    (url, seen)
}

/// An RS256 JWT signed with the cluster's key (`kafka.sh --oauth` wrote its JWKS for the broker).
fn signed_jwt(pkcs8: &[u8], audience: &str) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","typ":"JWT","kid":"kcp-live"}"#);
    let claims = URL_SAFE_NO_PAD.encode(format!(
        r#"{{"sub":"kcp-oauth-client","aud":"{audience}","iat":{now},"exp":{},"scope":"kafka"}}"#,
        now + 300
    ));
    let signing_input = format!("{header}.{claims}");
    let key = ring::signature::RsaKeyPair::from_pkcs8(pkcs8).unwrap();
    let mut signature = vec![0u8; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .unwrap();
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature))
}

/// SASL/OAUTHBEARER against a real broker validating JWTs (Kafka's
/// OAuthBearerValidatorCallbackHandler with the JWKS file of `kafka.sh --oauth`), the token from
/// an endpoint served here: one token request for a client's connections, Java's request shape;
/// a token the broker refuses and an endpoint that refuses are authentication errors saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_oauthbearer_with_a_token_endpoint() {
    let Some(must) = live_cluster("OAUTH_JWT_KEY") else { return };
    let pkcs8 = std::fs::read(must("OAUTH_JWT_KEY")).unwrap();
    let properties = |url: &str| {
        format!(
            "bootstrap.servers={}\nsecurity.protocol=SASL_SSL\nssl.truststore.type=PEM\nssl.truststore.location={}\n\
             sasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url={url}\n\
             sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n\
             sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \\\n\
             \x20   clientId=\"kcp-client\" clientSecret=\"oauth-secret-5d2\" scope=\"kafka\";\n",
            must("SASL_SSL_BOOTSTRAP"),
            must("CA_PEM")
        )
    };
    let token = signed_jwt(&pkcs8, &must("OAUTH_AUDIENCE"));
    let (url, seen) =
        token_endpoint(200, format!(r#"{{"access_token":"{token}","token_type":"Bearer","expires_in":300}}"#)).await;
    let client = Client::new(ClientConfig::from_properties(&properties(&url)).unwrap()).unwrap();
    let metadata = client.metadata(Some(&[]), deadline()).await.unwrap();
    assert!(!metadata.brokers.is_empty());
    client.list_groups(&ListGroupsFilter::default(), deadline()).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one token for the client's connections: {seen:?}");
    assert_eq!(seen[0].0, format!("Basic {}", BASE64.encode("kcp-client:oauth-secret-5d2")));
    assert_eq!(seen[0].1, "grant_type=client_credentials&scope=kafka");

    // A well-signed token for another audience, and one whose signature is not the key's: the
    // broker refuses them (Kafka 3.9.1). Kafka 4.1.1's OAuthBearerValidatorCallbackHandler, set up
    // the same way, accepted both here (its DefaultJwtValidator, made by reflection, has no key
    // resolver and falls back to the client-side checks), so there this is not asserted.
    let forged = format!("{}AAAA", &token[..token.len() - 4]);
    for (what, bad) in [("another audience", signed_jwt(&pkcs8, "not-kcp-live")), ("a forged signature", forged)] {
        let (url, _) = token_endpoint(200, format!(r#"{{"access_token":"{bad}"}}"#)).await;
        let result = Client::new(ClientConfig::from_properties(&properties(&url)).unwrap())
            .unwrap()
            .metadata(None, deadline())
            .await;
        if must("VERSION").starts_with("3.") {
            let e = result.expect_err(what);
            assert_eq!(e.kind(), ErrorKind::Authentication, "{what}: {e}");
            assert!(e.to_string().contains("invalid_token") || e.to_string().contains("authentication"), "{what}: {e}");
            assert!(!e.to_string().contains("oauth-secret-5d2"), "{e}");
        } else {
            println!("NOTE: Kafka {} with {what}: {:?}", must("VERSION"), result.map(|_| "accepted"));
        }
    }

    // The endpoint refuses the client.
    let (url, _) = token_endpoint(401, r#"{"error":"invalid_client"}"#.to_string()).await;
    let e = Client::new(ClientConfig::from_properties(&properties(&url)).unwrap())
        .unwrap()
        .metadata(None, deadline())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.to_string().contains("HTTP 401") && e.to_string().contains("invalid_client"), "{e}");
    assert!(!e.to_string().contains("oauth-secret-5d2"), "{e}");
}

// ---- X.509 v1 certificates (issue 38): what `openssl x509 -req -CA ...` makes, accepted as Java does ----

mod v1 {
    use super::*;
    use openssl::asn1::{Asn1Integer, Asn1Time};
    use openssl::bn::BigNum;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::nid::Nid;
    use openssl::pkey::{PKey, Private};
    use openssl::rsa::Rsa;
    use openssl::ssl::{Ssl, SslAcceptor, SslMethod, SslVerifyMode};
    use openssl::x509::extension::{BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAlternativeName};
    use openssl::x509::store::X509StoreBuilder;
    use openssl::x509::{X509Builder, X509NameBuilder, X509};
    use std::pin::Pin;

    pub fn rsa_key() -> PKey<Private> {
        PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap()
    }

    pub fn ec_key() -> PKey<Private> {
        PKey::from_ec_key(EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap()).unwrap()
    }

    /// Validity in days from now (negative: in the past).
    #[derive(Clone, Copy)]
    pub struct Days(pub i64, pub i64);
    pub const VALID: Days = Days(-1, 30);

    pub struct Issued {
        pub cert: X509,
        pub key: PKey<Private>,
    }

    impl Issued {
        pub fn cert_pem(&self) -> String {
            String::from_utf8(self.cert.to_pem().unwrap()).unwrap()
        }
        pub fn key_pem(&self) -> String {
            String::from_utf8(self.key.private_key_to_pem_pkcs8().unwrap()).unwrap()
        }
    }

    fn builder(cn: &str, key: &PKey<Private>, issuer: Option<&Issued>, days: Days) -> X509Builder {
        let mut name = X509NameBuilder::new().unwrap();
        name.append_entry_by_nid(Nid::COMMONNAME, cn).unwrap();
        let name = name.build();
        let mut b = X509Builder::new().unwrap();
        let mut serial = BigNum::new().unwrap();
        serial.rand(64, openssl::bn::MsbOption::MAYBE_ZERO, false).unwrap();
        b.set_serial_number(&Asn1Integer::from_bn(&serial).unwrap()).unwrap();
        b.set_subject_name(&name).unwrap();
        b.set_issuer_name(issuer.map(|i| i.cert.subject_name()).unwrap_or(&name)).unwrap();
        b.set_pubkey(key).unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        b.set_not_before(&Asn1Time::from_unix(now + days.0 * 86400).unwrap()).unwrap();
        b.set_not_after(&Asn1Time::from_unix(now + days.1 * 86400).unwrap()).unwrap();
        b
    }

    /// A CA as `openssl req -new -x509` makes it (v3, CA:TRUE), or a v1 self-signed root.
    pub fn ca(cn: &str, version1: bool) -> Issued {
        ca_with_key(cn, version1, rsa_key())
    }

    pub fn ca_with_key(cn: &str, version1: bool, key: PKey<Private>) -> Issued {
        let mut b = builder(cn, &key, None, VALID);
        if version1 {
            b.set_version(0).unwrap();
        } else {
            b.set_version(2).unwrap();
            b.append_extension(BasicConstraints::new().critical().ca().build().unwrap()).unwrap();
            b.append_extension(KeyUsage::new().critical().key_cert_sign().crl_sign().build().unwrap()).unwrap();
        }
        b.sign(&key, MessageDigest::sha256()).unwrap();
        Issued { cert: b.build(), key }
    }

    /// What `openssl x509 -req -CA ca.pem -CAkey ca.key` makes on OpenSSL 3.0 from a CSR, without
    /// `-extfile`: an X.509 v1 certificate (no extensions, so no subjectAltName).
    pub fn v1_issued(cn: &str, key: PKey<Private>, ca: &Issued, days: Days) -> Issued {
        v1_signed_with(cn, key, ca, days, MessageDigest::sha256())
    }

    pub fn v1_signed_with(cn: &str, key: PKey<Private>, ca: &Issued, days: Days, digest: MessageDigest) -> Issued {
        let mut b = builder(cn, &key, Some(ca), days);
        b.set_version(0).unwrap();
        b.sign(&ca.key, digest).unwrap();
        let cert = b.build();
        assert_eq!(cert.version(), 0, "an X.509 v1 certificate");
        Issued { cert, key }
    }

    /// A v3 server certificate with a subjectAltName and an extendedKeyUsage.
    pub fn v3_issued(cn: &str, sans: &[&str], eku_client_only: bool, ca: &Issued) -> Issued {
        let key = ec_key();
        let mut b = builder(cn, &key, Some(ca), VALID);
        b.set_version(2).unwrap();
        let mut san = SubjectAlternativeName::new();
        for name in sans {
            san.dns(name);
        }
        b.append_extension(san.build(&b.x509v3_context(Some(&ca.cert), None)).unwrap()).unwrap();
        let eku = if eku_client_only {
            ExtendedKeyUsage::new().client_auth().build()
        } else {
            ExtendedKeyUsage::new().server_auth().build()
        };
        b.append_extension(eku.unwrap()).unwrap();
        b.sign(&ca.key, MessageDigest::sha256()).unwrap();
        Issued { cert: b.build(), key }
    }

    /// A broker whose TLS is OpenSSL's (as a Java broker, it takes v1 client certificates);
    /// `client_ca` requires a client certificate signed by it. The client certificates it
    /// received are in the returned list.
    pub async fn openssl_broker(
        server: &Issued,
        chain: &[&X509],
        client_ca: Option<&X509>,
    ) -> (FakeBroker, Arc<Mutex<Vec<X509>>>) {
        let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls()).unwrap();
        // Serve weak certificates too (the system's level would refuse SHA-1 and MD5): the
        // client is under test.
        b.set_security_level(0);
        b.set_private_key(&server.key).unwrap();
        b.set_certificate(&server.cert).unwrap();
        for extra in chain {
            b.add_extra_chain_cert((*extra).clone()).unwrap();
        }
        if let Some(ca) = client_ca {
            let mut store = X509StoreBuilder::new().unwrap();
            store.add_cert(ca.clone()).unwrap();
            b.set_verify_cert_store(store.build()).unwrap();
            b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
        }
        let acceptor = Arc::new(b.build());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let broker = start_with(answer, move |tcp| {
            let acceptor = acceptor.clone();
            let log = log.clone();
            async move {
                let ssl = Ssl::new(acceptor.context()).ok()?;
                let mut stream = tokio_openssl::SslStream::new(ssl, tcp).ok()?;
                Pin::new(&mut stream).accept().await.ok()?;
                if let Some(peer) = stream.ssl().peer_certificate() {
                    log.lock().unwrap().push(peer);
                }
                Some(stream)
            }
        })
        .await;
        (broker, received)
    }

    pub fn config(address: &str, ca: &Issued) -> ClientConfig {
        tls_config(address, &String::from_utf8(ca.cert.to_pem().unwrap()).unwrap())
    }

    pub fn pem_identity(client: &Issued) -> ClientIdentity {
        ClientIdentity::PemText { certificate_chain: client.cert_pem(), key: Secret::new(client.key_pem()) }
    }
}

/// A broker certificate made by Confluent's recipe (`openssl x509 -req -CA`: X.509 v1, CN only)
/// is accepted, by name through its common name (Java's rule without subjectAltName), over TLS
/// 1.3 and 1.2, with an RSA and an EC key; and with a v1 root too.
#[tokio::test]
async fn an_x509_v1_broker_certificate_is_accepted_as_java_accepts_it() {
    use openssl::hash::MessageDigest;
    // The last: SHA-1 from a private CA, which Java accepts (OpenSSL 3's security level 1 would not).
    for (ca_v1, key, digest) in [
        (false, v1::rsa_key(), MessageDigest::sha256()),
        (false, v1::ec_key(), MessageDigest::sha256()),
        (true, v1::rsa_key(), MessageDigest::sha256()),
        (false, v1::ec_key(), MessageDigest::sha1()),
    ] {
        let ca = v1::ca("kcp v1 CA", ca_v1);
        let server = v1::v1_signed_with("localhost", key, &ca, v1::VALID, digest);
        let (broker, _) = v1::openssl_broker(&server, &[], None).await;
        let by_name = format!("localhost:{}", broker.port);
        for (tls12, tls13) in [(true, true), (true, false), (false, true)] {
            let mut config = v1::config(&by_name, &ca);
            (config.tls.allow_tls12, config.tls.allow_tls13) = (tls12, tls13);
            let client = Client::new(config).unwrap();
            let what = format!("v1 CA {ca_v1}, TLS 1.2 {tls12}, TLS 1.3 {tls13}");
            client.metadata(Some(&[]), deadline()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        // By IP: a v1 certificate has no subjectAltName IP, so Java refuses the name; so does kcp,
        // saying so, and accepts it with hostname verification off.
        let e = Client::new(v1::config(&broker.address(), &ca)).unwrap().metadata(None, deadline()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(
            e.message().contains(
                "invalid peer certificate: hostname mismatch: certificate not valid for name \"127.0.0.1\": it has no subjectAltName name and the common name \"localhost\""
            ),
            "{e}"
        );
        let mut config = v1::config(&broker.address(), &ca);
        config.tls.verify_hostname = false;
        Client::new(config).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    }
}

/// The client's own v1 certificate (mutual TLS) from every keystore form: PEM text, a PEM
/// file, an encrypted PKCS#8 key, and PKCS12 and JKS stores made by openssl and keytool; the
/// broker (OpenSSL, as Java would) receives exactly that certificate.
#[tokio::test]
async fn an_x509_v1_client_certificate_for_mutual_tls() {
    let ca = v1::ca("kcp v1 CA", false);
    let server = v1::v1_issued("localhost", v1::rsa_key(), &ca, v1::VALID);
    let client = v1::v1_issued("kcp v1 client", v1::ec_key(), &ca, v1::VALID);
    let (broker, received) = v1::openssl_broker(&server, &[], Some(&ca.cert)).await;
    let by_name = format!("localhost:{}", broker.port);
    let mut config = v1::config(&by_name, &ca);
    config.tls.identity = Some(v1::pem_identity(&client));
    Client::new(config).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    {
        let received = received.lock().unwrap();
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].to_der().unwrap(), client.cert.to_der().unwrap());
        assert_eq!(received[0].version(), 0);
    }
    let dir = std::env::temp_dir().join(format!("kcp-v1-mtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Kafka's PEM keystore file: the key and the chain.
    let keystore = dir.join("client-keystore.pem");
    std::fs::write(&keystore, format!("{}{}", client.key_pem(), client.cert_pem())).unwrap();
    let mut config = v1::config(&by_name, &ca);
    config.tls.identity = Some(ClientIdentity::PemFile(keystore));
    Client::new(config).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    // An encrypted PKCS#8 key with ssl.key.password.
    let encrypted =
        client.key.private_key_to_pem_pkcs8_passphrase(openssl::symm::Cipher::aes_256_cbc(), b"v1-key-pw").unwrap();
    let mut config = v1::config(&by_name, &ca);
    config.tls.identity = Some(ClientIdentity::PemText {
        certificate_chain: client.cert_pem(),
        key: Secret::new(String::from_utf8(encrypted).unwrap()),
    });
    config.tls.pem_key_password = Some(Secret::new("v1-key-pw"));
    Client::new(config).unwrap().metadata(Some(&[]), deadline()).await.unwrap();
    assert_eq!(received.lock().unwrap().len(), 3);
    // JKS and PKCS12 keystores and truststores (keytool and the openssl command).
    let (ca_file, cert_file, key_file) = (dir.join("ca.pem"), dir.join("client.pem"), dir.join("client.key"));
    std::fs::write(&ca_file, ca.cert.to_pem().unwrap()).unwrap();
    std::fs::write(&cert_file, client.cert_pem()).unwrap();
    std::fs::write(&key_file, client.key_pem()).unwrap();
    if let Some(stores) = Stores::make("v1", &ca_file, &cert_file, &key_file) {
        let head = format!("bootstrap.servers={by_name}\nsecurity.protocol=SSL\n");
        for (trust_file, trust_kind) in [("trust.jks", "JKS"), ("trust.p12", "PKCS12")] {
            for (key_file, key_kind) in
                [("client.p12", "PKCS12"), ("client-openssl.p12", "PKCS12"), ("client.jks", "JKS")]
            {
                let text = format!(
                    "{head}{}{}",
                    stores.truststore(trust_file, trust_kind),
                    stores.keystore(key_file, key_kind)
                );
                let what = format!("{trust_file} as {trust_kind}, {key_file} as {key_kind}");
                let kcp = Client::new(ClientConfig::from_properties(&text).unwrap())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                kcp.metadata(Some(&[]), deadline()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        }
        let received = received.lock().unwrap();
        assert_eq!(received.len(), 9);
        assert!(received.iter().all(|c| c.to_der().unwrap() == client.cert.to_der().unwrap()));
    }
    // Without a certificate the broker refuses the connection.
    let e = Client::new(v1::config(&by_name, &ca)).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    assert!(e.message().contains("the broker refused the client certificate, or its absence"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A key that is not the certificate's is named as such, for a v1 and a v3 certificate alike
/// (it used to be "invalid peer certificate: Other(OtherError(UnsupportedCertVersion))" for v1).
#[test]
fn a_key_that_is_not_the_certificates_says_so() {
    let ca = v1::ca("kcp v1 CA", false);
    let client = v1::v1_issued("kcp v1 client", v1::ec_key(), &ca, v1::VALID);
    let stranger = v1::ec_key();
    let v3 = pki(&["127.0.0.1"]);
    let cases = [
        (
            client.cert_pem(),
            String::from_utf8(stranger.private_key_to_pem_pkcs8().unwrap()).unwrap(),
            "CN=kcp v1 client",
        ),
        (v3.client_cert_pem.clone(), client.key_pem(), "CN=kcp client"),
    ];
    for (certificate_chain, key, subject) in cases {
        let mut config = tls_config("127.0.0.1:9", &v3.ca_pem);
        config.tls.identity = Some(ClientIdentity::PemText { certificate_chain, key: Secret::new(key) });
        let e = Client::new(config).unwrap_err();
        assert_eq!(e.key(), "ssl.keystore.key");
        let expected = format!("the private key does not match the client certificate ({subject})");
        assert!(e.to_string().contains(&expected), "{e}");
        assert!(!e.to_string().contains("PRIVATE KEY") && !e.to_string().contains("MII"), "{e}");
    }
    // The right key with the v1 certificate loads.
    let mut config = tls_config("127.0.0.1:9", &v3.ca_pem);
    config.tls.identity = Some(v1::pem_identity(&client));
    Client::new(config).unwrap();
}

/// Each refusal says what is wrong: expired, not yet valid, unknown CA, hostname mismatch, not
/// a CA, not for TLS servers.
#[tokio::test]
async fn a_refused_broker_certificate_says_why() {
    let ca = v1::ca("kcp v1 CA", false);
    let other_ca = v1::ca("kcp other CA", false);
    let expired = v1::v1_issued("localhost", v1::ec_key(), &ca, v1::Days(-30, -1));
    let future = v1::v1_issued("localhost", v1::ec_key(), &ca, v1::Days(1, 30));
    let valid = v1::v1_issued("localhost", v1::ec_key(), &ca, v1::VALID);
    let named = v1::v3_issued("localhost", &["kafka.example.com"], false, &ca);
    let client_only = v1::v3_issued("localhost", &["localhost"], true, &ca);
    // A v1 certificate that is not self-signed cannot issue others (Java refuses it too).
    let v1_intermediate = v1::v1_issued("kcp v1 intermediate", v1::rsa_key(), &ca, v1::VALID);
    let below_intermediate = v1::v1_issued("localhost", v1::ec_key(), &v1_intermediate, v1::VALID);
    // Java's jdk.certpath.disabledAlgorithms: MD5 signatures and RSA keys below 1024 bits.
    let md5 = v1::v1_signed_with("localhost", v1::ec_key(), &ca, v1::VALID, openssl::hash::MessageDigest::md5());
    let weak_ca = v1::ca_with_key(
        "kcp weak CA",
        false,
        openssl::pkey::PKey::from_rsa(openssl::rsa::Rsa::generate(768).unwrap()).unwrap(),
    );
    let below_weak_ca = v1::v1_issued("localhost", v1::ec_key(), &weak_ca, v1::VALID);
    let cases: [(&v1::Issued, Vec<&openssl::x509::X509>, &v1::Issued, &str); 8] = [
        (&expired, vec![], &ca, "invalid peer certificate: expired: the broker's certificate (CN=localhost) was valid until "),
        (&future, vec![], &ca, "invalid peer certificate: not yet valid: the broker's certificate (CN=localhost) is valid from "),
        (
            &valid,
            vec![],
            &other_ca,
            "invalid peer certificate: unknown CA: the broker's certificate (CN=localhost, issued by CN=kcp v1 CA) does not chain to a certificate of ssl.truststore.certificates",
        ),
        (
            &named,
            vec![],
            &ca,
            "invalid peer certificate: hostname mismatch: certificate not valid for name \"localhost\": it is valid for DNS:kafka.example.com",
        ),
        (
            &client_only,
            vec![],
            &ca,
            "invalid peer certificate: not for TLS servers: the broker's certificate (CN=localhost) has an extendedKeyUsage",
        ),
        (
            &below_intermediate,
            vec![&v1_intermediate.cert],
            &ca,
            "invalid peer certificate: not a CA: certificate 2 of the broker's chain (CN=kcp v1 intermediate) issued another",
        ),
        (
            &md5,
            vec![],
            &ca,
            "invalid peer certificate: too weak: the broker's certificate (CN=localhost) is signed with md5WithRSAEncryption, which Java refuses too",
        ),
        (
            &below_weak_ca,
            vec![],
            &weak_ca,
            "invalid peer certificate: too weak: certificate 2 of the broker's chain (CN=kcp weak CA) has a 768-bit RSA key (the least is 1024)",
        ),
    ];
    for (server, chain, trusted, expected) in cases {
        let (broker, _) = v1::openssl_broker(server, &chain, None).await;
        let config = v1::config(&format!("localhost:{}", broker.port), trusted);
        let e = Client::new(config).unwrap().metadata(None, deadline()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(e.message().contains(expected), "expected {expected:?} in: {e}");
        assert!(!e.message().contains("OtherError"), "{e}");
    }
}

/// The live cluster's V1TLS and V1MTLS listeners (issue 38): broker and client certificates made
/// by Confluent's recipe (`openssl x509 -req -CA` without extensions: X.509 v1, the broker named
/// by CN=localhost only; JKS stores from keytool), read from the properties files `kafka.sh`
/// writes. Java's own `kafka-consumer-groups` connects with the same file; so does kcp, to the
/// bootstrap listener and to the broker by its advertised name; and each refusal says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_x509_v1_certificates_from_confluents_recipe() {
    let Some(must) = live_cluster("V1_MTLS_BOOTSTRAP") else { return };
    let run_dir = std::path::PathBuf::from(must("RUN_DIR"));
    for file in ["v1-broker.pem", "v1-client.pem"] {
        let pem = std::fs::read(run_dir.join("tls").join(file)).unwrap();
        assert_eq!(openssl::x509::X509::from_pem(&pem).unwrap().version(), 0, "{file} is X.509 v1");
    }
    let properties = |file: &str, bootstrap: &str| {
        let path = run_dir.join(format!("{file}.properties"));
        let mut config = ClientConfig::from_properties_file(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(config.ignored_keys.is_empty(), "{file}: {:?}", config.ignored_keys);
        config.set_bootstrap([bootstrap]).unwrap();
        config
    };
    let (tls, mtls) = (must("V1_TLS_BOOTSTRAP"), must("V1_MTLS_BOOTSTRAP"));
    for (file, bootstrap) in [("client-v1-tls", &tls), ("client-v1-mtls", &mtls)] {
        let client = Client::new(properties(file, bootstrap)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let metadata = client.metadata(Some(&[]), deadline()).await.unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(metadata.brokers[0].host, "localhost", "{file}");
        // ListGroups goes to each broker at its advertised address.
        client.list_groups(&ListGroupsFilter::default(), deadline()).await.unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    // Java's client takes the same file (the claim that kcp accepts what Java accepts).
    let java = std::process::Command::new(must("CTL"))
        .args(["tool", &must("NAME"), "consumer-groups", "--bootstrap-server", &mtls, "--command-config"])
        .arg(run_dir.join("client-v1-mtls.properties"))
        .args(["--list", "--timeout", "60000"])
        .output()
        .unwrap();
    assert!(java.status.success(), "Java's kafka-consumer-groups: {}", String::from_utf8_lossy(&java.stderr));
    // Without the client certificate the V1MTLS listener refuses.
    let e = Client::new(properties("client-v1-tls", &mtls)).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    assert!(e.message().contains("the broker refused the client certificate, or its absence"), "{e}");
    // By IP the CN=localhost certificate does not name the broker (Java: "No subject alternative
    // names present"); kcp says which names it has.
    let by_ip = tls.replace("localhost", "127.0.0.1");
    let e = Client::new(properties("client-v1-tls", &by_ip)).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert!(
        e.message().contains("hostname mismatch: certificate not valid for name \"127.0.0.1\": it has no subjectAltName name and the common name \"localhost\""),
        "{e}"
    );
    // Trusting another CA: unknown CA.
    let mut config = properties("client-v1-tls", &tls);
    config.tls.trust = TrustStore::Pem(PemSource::File(must("CA_PEM").into()));
    let e = Client::new(config).unwrap().metadata(None, deadline()).await.unwrap_err();
    assert!(
        e.message().contains(
            "unknown CA: the broker's certificate (CN=localhost, issued by CN=kcp-live v1 CA) does not chain to a certificate of ssl.truststore.location (the chain ends at certificate 2 of the broker's chain, CN=kcp-live v1 CA"
        ),
        "{e}"
    );
}
