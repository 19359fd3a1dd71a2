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
use kafka_consumer_protocol::client::messages::metadata_response::MetadataResponseBroker;
use kafka_consumer_protocol::client::messages::*;
use kafka_consumer_protocol::client::{
    Client, ClientConfig, ClientIdentity, Deadline, ErrorKind, PemSource, SaslConfig, SaslMechanism, Secret,
    SecurityProtocol, TrustStore,
};
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

use kafka_consumer_protocol::client::StrBytes;

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
