//! TLS with rustls (ring provider): the trusted CAs from PEM (or Mozilla's roots), an optional
//! client certificate for mutual TLS, and hostname verification unless turned off.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::config::{ClientIdentity, PemSource, TlsConfig, TrustStore};
use super::error::{ClientError, ConfigError, ErrorKind};

/// Builds the rustls configuration; a file that cannot be read or holds no usable PEM is a
/// [`ConfigError`] naming its key.
pub(crate) fn client_config(tls: &TlsConfig) -> Result<Arc<rustls::ClientConfig>, ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    match &tls.trust {
        TrustStore::PublicRoots => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        TrustStore::Pem(source) => {
            let key = match source {
                PemSource::File(_) => "ssl.truststore.location",
                PemSource::Text(_) => "ssl.truststore.certificates",
            };
            let pem = read_pem(source, key)?;
            let certificates = certificates(&pem, key)?;
            for certificate in certificates {
                roots
                    .add(certificate)
                    .map_err(|e| ConfigError::new(key, format!("a certificate is not a usable CA: {e}")))?;
            }
        }
    }
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [(tls.allow_tls13, &rustls::version::TLS13), (tls.allow_tls12, &rustls::version::TLS12)]
            .into_iter()
            .filter_map(|(allowed, version)| allowed.then_some(version))
            .collect();
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| ConfigError::new("ssl.truststore.location", format!("no usable CA: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> =
        if tls.verify_hostname { verifier } else { Arc::new(AnyHostname(verifier)) };
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| ConfigError::new("ssl.enabled.protocols", e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match &tls.identity {
        None => builder.with_no_client_auth(),
        Some(identity) => {
            let (key_name, chain, key_pem) = match identity {
                ClientIdentity::PemFile(path) => {
                    let pem = read_pem(&PemSource::File(path.clone()), "ssl.keystore.location")?;
                    ("ssl.keystore.location", pem.clone(), pem)
                }
                ClientIdentity::PemText { certificate_chain, key } => {
                    ("ssl.keystore.key", certificate_chain.as_bytes().to_vec(), key.expose().as_bytes().to_vec())
                }
            };
            let chain = certificates(&chain, key_name)?;
            let key = private_key(&key_pem, key_name)?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                ConfigError::new(key_name, format!("the client certificate and key do not go together: {e}"))
            })?
        }
    };
    Ok(Arc::new(config))
}

fn read_pem(source: &PemSource, key: &str) -> Result<Vec<u8>, ConfigError> {
    match source {
        PemSource::File(path) => {
            std::fs::read(path).map_err(|e| ConfigError::new(key, format!("cannot read {}: {e}", path.display())))
        }
        PemSource::Text(text) => Ok(text.as_bytes().to_vec()),
    }
}

fn certificates(pem: &[u8], key: &str) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let certificates: Vec<_> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| ConfigError::new(key, format!("malformed PEM: {e}")))?;
    if certificates.is_empty() {
        return Err(ConfigError::new(key, "no CERTIFICATE in the PEM"));
    }
    Ok(certificates)
}

fn private_key(pem: &[u8], key: &str) -> Result<PrivateKeyDer<'static>, ConfigError> {
    if String::from_utf8_lossy(pem).contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        return Err(ConfigError::new(
            key,
            "the private key is encrypted: kcp reads unencrypted keys only (openssl pkcs8 -topk8 -nocrypt)",
        ));
    }
    PrivateKeyDer::from_pem_slice(pem)
        .map_err(|_| ConfigError::new(key, "no unencrypted PRIVATE KEY (PKCS#8, PKCS#1 or SEC1) in the PEM"))
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
            Some(tls) => tls.to_string(),
            None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                "the broker closed the connection (is the listener TLS?)".to_string()
            }
            None => e.to_string(),
        };
        ClientError::new(ErrorKind::Tls, format!("TLS handshake with {label} failed: {why}"))
    })
}
