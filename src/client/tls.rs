//! TLS with rustls (ring provider): the trusted CAs from PEM, a JKS or PKCS12 truststore (or
//! Mozilla's roots), an optional client certificate for mutual TLS from PEM or a JKS or PKCS12
//! keystore, and hostname verification unless turned off.
//!
//! The broker's certificate is checked by OpenSSL against a configured truststore, and the client
//! certificate matched to its key by OpenSSL ([`verify`] says why): so X.509 v1 certificates,
//! which Java and librdkafka accept and rustls-webpki refuses, work as in Java. With no
//! truststore (Mozilla's roots, public CAs, which issue only v3 certificates) rustls-webpki
//! checks the certificate, as before.
//!
//! PEM is read as Kafka's `DefaultSslEngineFactory.PemParser` reads it: between the `BEGIN` and
//! `END` markers every white space is dropped, so a certificate written on one line (as a
//! properties value continued with `\` becomes) reads as one written over many.

mod jks;
mod verify;

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::ResolvesClientCert;
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs1KeyDer, PrivatePkcs8KeyDer, PrivateSec1KeyDer, ServerName, UnixTime,
};
use rustls::sign::CertifiedKey;
use rustls::{CertificateError, DigitallySignedStruct, OtherError, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::config::{ClientIdentity, PemSource, StoreFile, StoreFormat, TlsConfig, TrustStore};
use super::error::{ClientError, ConfigError, ErrorKind};

/// Builds the rustls configuration; a file that cannot be read, a store that does not open or
/// PEM without a usable certificate is a [`ConfigError`] naming its key, the file and why.
pub(crate) fn client_config(tls: &TlsConfig) -> Result<Arc<rustls::ClientConfig>, ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (trust_key, trusted) = match &tls.trust {
        TrustStore::PublicRoots => ("ssl.truststore.location", None),
        TrustStore::Pem(source) => {
            let key = match source {
                PemSource::File(_) => "ssl.truststore.location",
                PemSource::Text(_) => "ssl.truststore.certificates",
            };
            (key, Some(certificates(&read_pem(source, key)?, key)?))
        }
        TrustStore::Store(store) => {
            let key = "ssl.truststore.location";
            let contents = read_store(store, key, "ssl.truststore", None)?;
            let mut trusted = contents.trusted;
            // Java's trust manager also trusts the certificate of each key entry.
            trusted.extend(contents.keys.iter().filter_map(|k| k.chain.first().cloned()));
            if trusted.is_empty() {
                return Err(ConfigError::new(key, format!("{}: the store holds no certificate", store.path.display())));
            }
            (key, Some(trusted.into_iter().map(CertificateDer::from).collect()))
        }
    };
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [(tls.allow_tls13, &rustls::version::TLS13), (tls.allow_tls12, &rustls::version::TLS12)]
            .into_iter()
            .filter_map(|(allowed, version)| allowed.then_some(version))
            .collect();
    let verifier: Arc<dyn ServerCertVerifier> = match trusted {
        // The configured CAs: OpenSSL checks the chain and the name, as librdkafka (see verify.rs).
        Some(trusted) => Arc::new(
            verify::OpenSslVerifier::new(
                &trusted,
                tls.verify_hostname,
                trust_key,
                provider.signature_verification_algorithms,
            )
            .map_err(|why| ConfigError::new(trust_key, format!("a certificate is not a usable CA: {why}")))?,
        ),
        None => {
            let mut roots = RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| ConfigError::new(trust_key, format!("no usable CA: {e}")))?;
            if tls.verify_hostname {
                verifier
            } else {
                Arc::new(AnyHostname(verifier))
            }
        }
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| ConfigError::new("ssl.enabled.protocols", e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match &tls.identity {
        None => builder.with_no_client_auth(),
        Some(identity) => {
            let (key_name, chain, key) = match identity {
                ClientIdentity::PemFile(path) => {
                    let key_name = "ssl.keystore.location";
                    let pem = read_pem(&PemSource::File(path.clone()), key_name)?;
                    let key = private_key(&pem, key_name, tls.pem_key_password.as_ref())?;
                    (key_name, certificates(&pem, key_name)?, key)
                }
                ClientIdentity::PemText { certificate_chain, key } => {
                    let chain = certificates(certificate_chain, "ssl.keystore.certificate.chain")?;
                    let key = private_key(key.expose(), "ssl.keystore.key", tls.pem_key_password.as_ref())?;
                    ("ssl.keystore.key", chain, key)
                }
                ClientIdentity::Store { store, key_password } => {
                    let key_name = "ssl.keystore.location";
                    let password = key_password.as_ref().map(|p| p.expose());
                    let contents = read_store(store, key_name, "ssl.keystore", password)?;
                    let path = store.path.display();
                    let mut keys = contents.keys.into_iter();
                    let (Some(entry), None) = (keys.next(), keys.next()) else {
                        return Err(ConfigError::new(
                            key_name,
                            format!("{path}: kcp needs a keystore with exactly one private key entry (copy the one to use with keytool -importkeystore -srcalias ALIAS)"),
                        ));
                    };
                    let Some(pkcs8) = entry.pkcs8 else {
                        return Err(ConfigError::new(key_name, format!("{path}: the private key entry has no key")));
                    };
                    if entry.chain.is_empty() {
                        return Err(ConfigError::new(key_name, format!("{path}: the private key has no certificate")));
                    }
                    let chain = entry.chain.into_iter().map(CertificateDer::from).collect();
                    (key_name, chain, PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8)))
                }
            };
            // Not `with_client_auth_cert`: its key check parses the certificate with webpki, which
            // refuses X.509 v1 certificates (and then blames the key). OpenSSL compares the keys.
            let signing_key = provider
                .key_provider
                .load_private_key(key)
                .map_err(|e| ConfigError::new(key_name, format!("the private key is not usable: {e}")))?;
            verify::key_matches_certificate(&chain[0], signing_key.as_ref())
                .map_err(|why| ConfigError::new(key_name, why))?;
            builder
                .with_client_cert_resolver(Arc::new(ClientCertificate(Arc::new(CertifiedKey::new(chain, signing_key)))))
        }
    };
    Ok(Arc::new(config))
}

fn read_pem(source: &PemSource, key: &str) -> Result<String, ConfigError> {
    match source {
        PemSource::File(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| ConfigError::new(key, format!("cannot read {}: {e}", path.display())))?;
            // PEM is ASCII; anything else is reported by the parser without quoting it.
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
        PemSource::Text(text) => Ok(text.clone()),
    }
}

/// One block of PEM: its label (`CERTIFICATE`, `PRIVATE KEY`, ...) and its decoded contents.
struct PemBlock {
    label: String,
    der: Vec<u8>,
}

/// Every `-----BEGIN LABEL----- ... -----END LABEL-----` block of `text`, in order. As Kafka's
/// parser: any white space (line ends or spaces) may stand between the base64 characters, and
/// text outside the blocks is ignored. Errors say which block and what is wrong, never quoting
/// the contents.
fn pem_blocks(text: &str) -> Result<Vec<PemBlock>, String> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(begin) = rest.find("-BEGIN") {
        let number = blocks.len() + 1;
        let after = &rest[begin + "-BEGIN".len()..];
        let label_end = after.find('-').ok_or(format!("PEM block {number}: the BEGIN line is not closed by -----"))?;
        let label: String = after[..label_end].split_whitespace().collect::<Vec<_>>().join(" ");
        let body = after[label_end..].trim_start_matches('-');
        let end = body.find("-END").ok_or(format!("PEM block {number} ({label}): no -----END {label}----- marker"))?;
        let encoded = body[..end].trim_end_matches('-');
        if encoded.contains(':') {
            return Err(format!(
                "PEM block {number} ({label}) has headers (an old-style encrypted key): convert it to unencrypted PKCS#8 (openssl pkcs8 -topk8 -nocrypt)"
            ));
        }
        let after_end = &body[end + "-END".len()..];
        let end_label_end =
            after_end.find('-').ok_or(format!("PEM block {number} ({label}): the END line is not closed by -----"))?;
        let end_label: String = after_end[..end_label_end].split_whitespace().collect::<Vec<_>>().join(" ");
        if end_label != label {
            return Err(format!("PEM block {number}: BEGIN {label} is ended by END {end_label}"));
        }
        let compact: String = encoded.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some(bad) = compact.chars().position(|c| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))) {
            return Err(format!("PEM block {number} ({label}): base64 character {} is not base64", bad + 1));
        }
        let der = PEM_BASE64
            .decode(compact.as_bytes())
            .map_err(|e| format!("PEM block {number} ({label}): malformed base64: {e}"))?;
        blocks.push(PemBlock { label, der });
        rest = after_end[end_label_end..].trim_start_matches('-');
    }
    Ok(blocks)
}

/// Base64 as Java's basic decoder takes it: padding optional.
const PEM_BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

fn certificates(pem: &str, key: &str) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let blocks = pem_blocks(pem).map_err(|why| ConfigError::new(key, format!("malformed PEM: {why}")))?;
    let certificates: Vec<_> =
        blocks.into_iter().filter(|b| b.label == "CERTIFICATE").map(|b| CertificateDer::from(b.der)).collect();
    if certificates.is_empty() {
        return Err(ConfigError::new(key, "no -----BEGIN CERTIFICATE----- block in the PEM"));
    }
    Ok(certificates)
}

/// The private key of a PEM keystore: unencrypted (PKCS#8, PKCS#1 or SEC1), or an encrypted
/// PKCS#8 key (PBES2) with `ssl.key.password`, as Kafka's PEM keystore reads it.
fn private_key(
    pem: &str,
    key: &str,
    password: Option<&super::config::Secret>,
) -> Result<PrivateKeyDer<'static>, ConfigError> {
    let blocks = pem_blocks(pem).map_err(|why| ConfigError::new(key, format!("malformed PEM: {why}")))?;
    for block in blocks {
        let encrypted = block.label == "ENCRYPTED PRIVATE KEY";
        if password.is_some() != encrypted
            && matches!(
                block.label.as_str(),
                "PRIVATE KEY" | "RSA PRIVATE KEY" | "EC PRIVATE KEY" | "ENCRYPTED PRIVATE KEY"
            )
        {
            return Err(ConfigError::new(
                "ssl.key.password",
                if encrypted {
                    "the private key is encrypted: set ssl.key.password (or decrypt it: openssl pkcs8 -topk8 -nocrypt)"
                } else {
                    "set, but the private key is not encrypted (Java refuses it too): remove the setting"
                },
            ));
        }
        return Ok(match block.label.as_str() {
            "PRIVATE KEY" => PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(block.der)),
            "RSA PRIVATE KEY" => PrivateKeyDer::Pkcs1(PrivatePkcs1KeyDer::from(block.der)),
            "EC PRIVATE KEY" => PrivateKeyDer::Sec1(PrivateSec1KeyDer::from(block.der)),
            "ENCRYPTED PRIVATE KEY" => {
                let password = password.map(|p| p.expose()).unwrap_or_default();
                let pkcs8 = decrypt_pkcs8(&block.der, password).map_err(|why| ConfigError::new(key, why))?;
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8))
            }
            _ => continue,
        });
    }
    Err(ConfigError::new(key, "no PRIVATE KEY (PKCS#8, PKCS#1 or SEC1) in the PEM"))
}

/// `EncryptedPrivateKeyInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING }` decrypted
/// with PBES2 (PBKDF2 or scrypt, AES-CBC): what `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes.
fn decrypt_pkcs8(der: &[u8], password: &str) -> Result<Vec<u8>, String> {
    let malformed = || "the ENCRYPTED PRIVATE KEY is not an EncryptedPrivateKeyInfo".to_string();
    let (0x30, info, _) = jks::der(der).ok_or_else(malformed)? else { return Err(malformed()) };
    let (0x30, _, after_algorithm) = jks::der(info).ok_or_else(malformed)? else { return Err(malformed()) };
    let algorithm = &info[..info.len() - after_algorithm.len()];
    let (0x04, encrypted, _) = jks::der(after_algorithm).ok_or_else(malformed)? else { return Err(malformed()) };
    let scheme = pkcs5::EncryptionScheme::try_from(algorithm).map_err(|_| {
        "the private key is encrypted with a scheme kcp does not read (PBES2 with AES is): re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc".to_string()
    })?;
    scheme
        .decrypt(password, encrypted)
        .map_err(|_| "wrong ssl.key.password: the private key does not decrypt".to_string())
}

/// What a JKS or PKCS12 store holds, as DER.
struct StoreContents {
    trusted: Vec<Vec<u8>>,
    keys: Vec<KeyEntry>,
}

struct KeyEntry {
    /// The PKCS#8 key, when it was asked for (keystores) and recovered.
    pkcs8: Option<Vec<u8>>,
    chain: Vec<Vec<u8>>,
}

/// Reads a JKS or PKCS12 store: in the format its first bytes show (Java does the same for
/// JKS and PKCS12 since Java 9), failing with the file, the format tried, why, and how to
/// convert it. `key_password` is asked only of keystores (`Some` or the store password).
fn read_store(
    store: &StoreFile,
    key: &str,
    prefix: &str,
    key_password: Option<&str>,
) -> Result<StoreContents, ConfigError> {
    let path = store.path.display();
    let data = std::fs::read(&store.path).map_err(|e| ConfigError::new(key, format!("cannot read {path}: {e}")))?;
    let declared = store.format.as_str();
    let fail = |tried: &str, why: String| {
        ConfigError::new(
            key,
            format!(
                "{path} ({prefix}.type={declared}) read as {tried}: {why}; if the store is right, convert it: keytool -importkeystore -srckeystore {path} -destkeystore store.p12 -deststoretype PKCS12, or to PEM with keytool -exportcert -rfc / openssl pkcs12 -nodes and {prefix}.type=PEM",
                path = store_name(&store.path)
            ),
        )
    };
    let not_a_store = |tried: &str, why: String| {
        ConfigError::new(key, format!("{} ({prefix}.type={declared}) read as {tried}: {why}", store_name(&store.path)))
    };
    let password = store.password.as_ref().map(|p| p.expose());
    let is_keystore = prefix == "ssl.keystore";
    if data.starts_with(&jks::MAGIC) {
        let jks = jks::read(&data, password).map_err(|e| fail("JKS", e.to_string()))?;
        let mut keys = Vec::new();
        for entry in jks.keys {
            let pkcs8 = match (is_keystore, key_password.or(password)) {
                (false, _) => None,
                (true, Some(key_password)) => Some(entry.recover(key_password).map_err(|e| {
                    let hint = if key_password_given(key_password, password) {
                        "ssl.key.password"
                    } else {
                        "ssl.keystore.password (set ssl.key.password if the key has its own)"
                    };
                    fail("JKS", format!("{e} (tried {hint})"))
                })?),
                (true, None) => {
                    return Err(fail("JKS", format!("{prefix}.password is required to recover the private key")))
                }
            };
            keys.push(KeyEntry { pkcs8, chain: entry.chain });
        }
        return Ok(StoreContents { trusted: jks.trusted, keys });
    }
    if data.first() == Some(&0x30) {
        if is_keystore && key_password.is_some_and(|k| Some(k) != password) {
            return Err(fail(
                "PKCS12",
                format!("ssl.key.password differs from {prefix}.password, but a PKCS12 key is protected by the store password (keytool requires them equal)"),
            ));
        }
        let store = p12_keystore::KeyStore::from_pkcs12(&data, password.unwrap_or("")).map_err(|e| {
            let why = match e {
                p12_keystore::error::Error::MacError(_) if password.is_none() => {
                    format!("the store is protected by a password: set {prefix}.password")
                }
                p12_keystore::error::Error::MacError(_) | p12_keystore::error::Error::UnpadError => {
                    "wrong password: the store's integrity check failed".to_string()
                }
                p12_keystore::error::Error::DerError(e) => format!("not a PKCS#12 file ({e})"),
                p12_keystore::error::Error::UnsupportedEncryptionScheme | p12_keystore::error::Error::UnsupportedMacAlgorithm => {
                    "protected with an algorithm kcp does not read (re-export it with openssl pkcs12 -export or keytool, which use PBES2 with AES)".to_string()
                }
                other => other.to_string(),
            };
            fail("PKCS12", why)
        })?;
        let mut contents = StoreContents { trusted: Vec::new(), keys: Vec::new() };
        for (_, entry) in store.entries() {
            match entry {
                p12_keystore::KeyStoreEntry::Certificate(certificate) => {
                    contents.trusted.push(certificate.as_der().to_vec())
                }
                p12_keystore::KeyStoreEntry::PrivateKeyChain(chain) => contents.keys.push(KeyEntry {
                    pkcs8: is_keystore.then(|| chain.key().to_vec()),
                    chain: chain.chain().iter().map(|c| c.as_der().to_vec()).collect(),
                }),
                p12_keystore::KeyStoreEntry::Secret(_) => {}
            }
        }
        return Ok(contents);
    }
    let tried = match store.format {
        StoreFormat::Jks => "JKS",
        StoreFormat::Pkcs12 => "PKCS12",
    };
    if String::from_utf8_lossy(&data[..data.len().min(4096)]).contains("-----BEGIN") {
        return Err(not_a_store(tried, format!("it is a PEM file: set {prefix}.type=PEM")));
    }
    Err(fail(tried, "neither a JKS store (which starts with FEEDFEED) nor a PKCS12 one (a DER SEQUENCE)".to_string()))
}

fn key_password_given(key_password: &str, store_password: Option<&str>) -> bool {
    Some(key_password) != store_password
}

fn store_name(path: &Path) -> String {
    path.display().to_string()
}

/// Verifies the chain but accepts any host name
/// (`ssl.endpoint.identification.algorithm=`, as Java does).
#[derive(Debug)]
struct AnyHostname(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostname {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The client certificate and key, sent whenever the broker asks for a certificate (as Java's
/// key manager with one key entry).
#[derive(Debug)]
struct ClientCertificate(Arc<CertifiedKey>);

impl ResolvesClientCert for ClientCertificate {
    fn resolve(&self, _root_hint_subjects: &[&[u8]], _sigschemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// A rustls error in words: a certificate refused by [`verify`] says why (rustls itself would
/// print its debug form).
pub(crate) fn tls_error_text(e: &rustls::Error) -> String {
    match e {
        rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(inner))) => {
            format!("invalid peer certificate: {inner}")
        }
        // Alerts a broker sends when it refuses the client's certificate, or its absence.
        rustls::Error::AlertReceived(
            rustls::AlertDescription::BadCertificate
            | rustls::AlertDescription::CertificateRequired
            | rustls::AlertDescription::UnknownCA
            | rustls::AlertDescription::CertificateUnknown
            | rustls::AlertDescription::CertificateExpired
            | rustls::AlertDescription::UnsupportedCertificate,
        ) => format!("{e} (the broker refused the client certificate, or its absence: see ssl.keystore.*)"),
        other => other.to_string(),
    }
}

/// The TLS handshake over `tcp`; failures are `tls` errors saying why.
pub(crate) async fn handshake(
    config: Arc<rustls::ClientConfig>,
    host: &str,
    tcp: TcpStream,
    label: &str,
) -> Result<TlsStream<TcpStream>, ClientError> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| ClientError::new(ErrorKind::Tls, format!("{label}: '{host}' is not a valid TLS server name")))?;
    tokio_rustls::TlsConnector::from(config).connect(name, tcp).await.map_err(|e| {
        let why = match e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
            Some(tls) => tls_error_text(tls),
            None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                "the broker closed the connection (is the listener TLS?)".to_string()
            }
            None => e.to_string(),
        };
        ClientError::new(ErrorKind::Tls, format!("TLS handshake with {label} failed: {why}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT_LINES: [&str; 3] = ["MIIBszCCAVmgAwIBAgIUQ", "x0y1z2A3B4C5D6E7F8G9H0", "AAAA"];

    #[test]
    fn pem_on_one_line_or_many_reads_the_same() {
        let many = format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", CERT_LINES.join("\n"));
        // What a properties value continued with `\` becomes: one line, blanks between parts.
        let one = format!("-----BEGIN CERTIFICATE----- {} -----END CERTIFICATE-----", CERT_LINES.join(" "));
        let (a, b) = (pem_blocks(&many).unwrap(), pem_blocks(&one).unwrap());
        assert_eq!((a.len(), b.len()), (1, 1));
        assert_eq!(a[0].der, b[0].der);
        assert_eq!(a[0].label, "CERTIFICATE");
        assert_eq!(a[0].der, PEM_BASE64.decode(CERT_LINES.concat()).unwrap());
        let two = format!("junk {one}\n{many}");
        assert_eq!(certificates(&two, "k").unwrap().len(), 2);
    }

    #[test]
    fn malformed_pem_names_the_block_and_never_the_bytes() {
        let cases = [
            ("-----BEGIN CERTIFICATE----- MIIB", "no -----END CERTIFICATE----- marker"),
            ("-----BEGIN CERTIFICATE----- MI*B -----END CERTIFICATE-----", "not base64"),
            ("-----BEGIN CERTIFICATE----- MIIB -----END PRIVATE KEY-----", "ended by END PRIVATE KEY"),
            ("nothing here", "no -----BEGIN CERTIFICATE-----"),
        ];
        for (pem, why) in cases {
            let e = certificates(pem, "ssl.truststore.certificates").unwrap_err();
            assert_eq!(e.key(), "ssl.truststore.certificates");
            let text = e.to_string();
            assert!(text.contains(why), "{text}");
            assert!(!text.contains("[67, 69") && text.len() < 300, "{text}");
        }
        let encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----";
        let e = private_key(encrypted, "k", None).unwrap_err();
        assert_eq!(e.key(), "ssl.key.password");
        assert!(e.to_string().contains("openssl pkcs8"), "{e}");
        let password = crate::client::Secret::new("pw");
        let e = private_key(encrypted, "k", Some(&password)).unwrap_err();
        assert!(e.to_string().contains("not an EncryptedPrivateKeyInfo"), "{e}");
    }
}
