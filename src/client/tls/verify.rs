//! Certificates checked by OpenSSL, as librdkafka checks them, inside the rustls handshake.
//!
//! Why not rustls-webpki: it refuses X.509 **v1** certificates by design (`UnsupportedCertVersion`),
//! and `openssl x509 -req -CA ...` makes v1 certificates on OpenSSL 3.0 when no extensions are
//! given: the recipe of Confluent's security tutorial and `kafka-generate-ssl.sh`. Java,
//! librdkafka (OpenSSL) and Go accept them. No maintained pure-Rust crate validates a path with
//! v1 certificates in it (webpki's maintainers declined; x509-parser parses but does not build
//! paths; picky and certval are not widely used), and writing path validation here is out of the
//! question. So the trust decision is OpenSSL's `X509_verify_cert`, the code librdkafka relies on,
//! while rustls keeps the protocol (versions, cipher suites, the stream types, every TLS setting
//! that already works): rustls hands the broker's chain to [`OpenSslVerifier`], which answers as
//! OpenSSL does, with the reason said in words.
//!
//! What is checked, and how it matches Java's `X509TrustManager` with
//! `ssl.endpoint.identification.algorithm=https`:
//! - the chain, up to any certificate of the truststore (`X509_V_FLAG_PARTIAL_CHAIN`: Java's PKIX
//!   also takes any trusted certificate as an anchor, not only self-signed roots);
//! - validity dates at the handshake's time, signatures, CA flags (a self-signed v1 certificate
//!   may be a root, as in Java), and the TLS server purpose (extendedKeyUsage serverAuth when the
//!   extension is present);
//! - weak algorithms as Java's default `jdk.certpath.disabledAlgorithms` has them: MD2, MD4
//!   and MD5 signatures, RSA and DSA keys below 1024 bits, EC keys below 224 bits
//!   ([`java_disabled_algorithm`]). Not OpenSSL's security levels: level 1 already refuses
//!   SHA-1 signatures on OpenSSL 3, which Java accepts from a private CA (only chains to the
//!   JDK's own roots are refused SHA-1);
//! - the host name: the subjectAltName DNS names, or the most specific common name when there is
//!   no DNS name (v1 certificates have no extensions, so only a CN), and IP addresses only against
//!   subjectAltName IP entries: Java's `HostnameChecker` rules, which OpenSSL's `X509_check_host`
//!   and `X509_check_ip` follow. Wildcards only as a whole left-most label.
//!
//! The handshake's signature is checked with the certificate's public key alone (rustls'
//! raw-public-key checks), so that webpki never parses the certificate. The client's own
//! certificate is matched to its key here too ([`key_matches_certificate`]), because rustls'
//! check parses the certificate with webpki and so refuses a v1 certificate with a message that
//! blames the key.

use std::net::IpAddr;
use std::sync::Arc;

use openssl::error::ErrorStack;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey};
use openssl::stack::Stack;
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::verify::{X509CheckFlags, X509VerifyFlags, X509VerifyParam};
use openssl::x509::{X509NameRef, X509PurposeId, X509Ref, X509StoreContext, X509VerifyResult, X509};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, SubjectPublicKeyInfoDer, UnixTime};
use rustls::sign::SigningKey;
use rustls::{CertificateError, DigitallySignedStruct, OtherError, PeerMisbehaved, SignatureScheme};

/// The broker's certificate checked by OpenSSL against the truststore's certificates.
#[derive(Debug)]
pub(super) struct OpenSslVerifier {
    trusted: Vec<X509>,
    verify_hostname: bool,
    /// The setting that names the truststore, for the "unknown CA" message.
    trust_key: &'static str,
    algorithms: WebPkiSupportedAlgorithms,
}

impl OpenSslVerifier {
    /// Reads the trusted certificates (DER); a certificate OpenSSL cannot read is an error saying
    /// which one and why.
    pub(super) fn new(
        trusted: &[CertificateDer<'_>],
        verify_hostname: bool,
        trust_key: &'static str,
        algorithms: WebPkiSupportedAlgorithms,
    ) -> Result<Self, String> {
        let trusted = trusted
            .iter()
            .enumerate()
            .map(|(i, der)| {
                X509::from_der(der)
                    .map_err(|e| format!("certificate {} is not a readable X.509 certificate: {}", i + 1, reason(&e)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(OpenSslVerifier { trusted, verify_hostname, trust_key, algorithms })
    }

    /// A store for one handshake: the trusted certificates, the handshake's time and, when
    /// checked, the name the client connected to (OpenSSL keeps these per store).
    fn store(&self, server_name: &ServerName<'_>, now: UnixTime) -> Result<X509Store, ErrorStack> {
        let mut builder = X509StoreBuilder::new()?;
        for certificate in &self.trusted {
            builder.add_cert(certificate.clone())?;
        }
        let mut param = X509VerifyParam::new()?;
        param.set_flags(X509VerifyFlags::PARTIAL_CHAIN)?;
        param.set_purpose(X509PurposeId::SSL_SERVER)?;
        // No security level: Java's weak-algorithm rules are applied to the validated chain.
        param.set_auth_level(0);
        // Seconds since 1970 fit time_t (64 bits on every target OpenSSL 3 supports).
        param.set_time(i64::try_from(now.as_secs()).unwrap_or(i64::MAX) as _);
        if self.verify_hostname {
            match server_name {
                ServerName::DnsName(name) => {
                    param.set_host(name.as_ref())?;
                    param.set_hostflags(X509CheckFlags::NO_PARTIAL_WILDCARDS);
                }
                ServerName::IpAddress(ip) => param.set_ip(IpAddr::from(*ip))?,
                // rustls makes only the two kinds from a host string (see `handshake`).
                _ => {}
            }
        }
        builder.set_param(&param)?;
        Ok(builder.build())
    }

    /// Why OpenSSL refused the chain, in words: what is wrong, with which certificate.
    fn explain(&self, refused: Refused, leaf: &X509Ref, server_name: &ServerName<'_>) -> String {
        let certificate = refused.certificate.as_deref().unwrap_or(leaf);
        let whose = match refused.depth {
            0 => "the broker's certificate".to_string(),
            depth => format!("certificate {} of the broker's chain", depth + 1),
        };
        let subject = name(certificate.subject_name());
        let issuer = name(certificate.issuer_name());
        let code = refused.code.as_raw();
        match code {
            openssl_sys::X509_V_ERR_CERT_HAS_EXPIRED => {
                format!("expired: {whose} ({subject}) was valid until {}", certificate.not_after())
            }
            openssl_sys::X509_V_ERR_CERT_NOT_YET_VALID => {
                format!("not yet valid: {whose} ({subject}) is valid from {}", certificate.not_before())
            }
            openssl_sys::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
            | openssl_sys::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
            | openssl_sys::X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE
            | openssl_sys::X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
            | openssl_sys::X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
            | openssl_sys::X509_V_ERR_CERT_UNTRUSTED => {
                // Named from the broker's own certificate, and where the chain stops when the
                // broker sent more (its CA, say, which the truststore does not hold).
                let mut text = format!(
                    "unknown CA: the broker's certificate ({}, issued by {}) does not chain to a certificate of {}",
                    name(leaf.subject_name()),
                    name(leaf.issuer_name()),
                    self.trust_key
                );
                if refused.depth > 0 {
                    text.push_str(&format!(" (the chain ends at {whose}, {subject}, issued by {issuer})"));
                }
                text
            }
            openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH | openssl_sys::X509_V_ERR_IP_ADDRESS_MISMATCH => {
                let host = match server_name {
                    ServerName::DnsName(name) => name.as_ref().to_string(),
                    ServerName::IpAddress(ip) => IpAddr::from(*ip).to_string(),
                    other => format!("{other:?}"),
                };
                format!(
                    "hostname mismatch: certificate not valid for name \"{host}\": {} (the check of ssl.endpoint.identification.algorithm=https; empty turns it off)",
                    names(leaf)
                )
            }
            openssl_sys::X509_V_ERR_CERT_SIGNATURE_FAILURE => {
                format!("bad signature: {whose} ({subject}) is not signed by the key of its issuer ({issuer})")
            }
            openssl_sys::X509_V_ERR_INVALID_CA => format!(
                "not a CA: {whose} ({subject}) issued another but is not a CA (it needs basicConstraints CA:TRUE, or to be a self-signed root)"
            ),
            openssl_sys::X509_V_ERR_INVALID_PURPOSE => format!(
                "not for TLS servers: {whose} ({subject}) has an extendedKeyUsage or keyUsage that excludes serverAuth"
            ),
            _ => format!("{whose} ({subject}) is refused: {}", refused.code.error_string()),
        }
    }
}

/// What `X509_verify_cert` said when it refused.
struct Refused {
    code: X509VerifyResult,
    depth: u32,
    certificate: Option<X509>,
}

/// A certificate refused for the reason in the text: shown by [`super::tls_error_text`] as
/// "invalid peer certificate: TEXT".
#[derive(Debug)]
pub(super) struct CertificateRefused(pub(super) String);

impl std::fmt::Display for CertificateRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CertificateRefused {}

fn refused(text: String) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(CertificateRefused(text)))))
}

fn internal(e: ErrorStack) -> rustls::Error {
    refused(format!("OpenSSL could not check the certificate: {}", reason(&e)))
}

impl ServerCertVerifier for OpenSslVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let leaf = X509::from_der(end_entity).map_err(|e| {
            refused(format!("the broker's certificate is not a readable X.509 certificate: {}", reason(&e)))
        })?;
        let mut chain = Stack::new().map_err(internal)?;
        for (i, der) in intermediates.iter().enumerate() {
            let certificate = X509::from_der(der).map_err(|e| {
                refused(format!(
                    "certificate {} of the broker's chain is not a readable X.509 certificate: {}",
                    i + 2,
                    reason(&e)
                ))
            })?;
            chain.push(certificate).map_err(internal)?;
        }
        let store = self.store(server_name, now).map_err(internal)?;
        let mut context = X509StoreContext::new().map_err(internal)?;
        let outcome = context
            .init(&store, &leaf, &chain, |context| {
                if context.verify_cert()? {
                    let chain = context.chain().map(|chain| chain.iter().map(|c| c.to_owned()).collect());
                    return Ok(Ok(chain.unwrap_or_default()));
                }
                Ok(Err(Refused {
                    code: context.error(),
                    depth: context.error_depth(),
                    certificate: context.current_cert().map(|c| c.to_owned()),
                }))
            })
            .map_err(internal)?;
        let chain: Vec<X509> = outcome.map_err(|why| refused(self.explain(why, &leaf, server_name)))?;
        for (depth, certificate) in chain.iter().enumerate() {
            // The anchor's own signature is not part of the path (Java does not check it either).
            let is_anchor = depth + 1 == chain.len();
            if let Some(weak) = java_disabled_algorithm(certificate, !is_anchor) {
                let whose = match depth {
                    0 => "the broker's certificate".to_string(),
                    depth => format!("certificate {} of the broker's chain", depth + 1),
                };
                return Err(refused(format!(
                    "too weak: {whose} ({}) {weak}, which Java refuses too (jdk.certpath.disabledAlgorithms)",
                    name(certificate.subject_name())
                )));
            }
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let spki = public_key_of(cert)?;
        let key = webpki::RawPublicKeyEntity::try_from(&spki)
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
        // TLS 1.2 names a scheme that may stand for several algorithms: try each, as rustls does.
        let candidates = self
            .algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == dss.scheme)
            .map(|(_, algorithms)| *algorithms)
            .ok_or(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme)?;
        for algorithm in candidates {
            #[allow(deprecated)]
            match key.verify_signature(*algorithm, message, dss.signature()) {
                Ok(()) => return Ok(HandshakeSignatureValid::assertion()),
                Err(
                    webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(_)
                    | webpki::Error::UnsupportedSignatureAlgorithmForPublicKey,
                ) => continue,
                Err(_) => return Err(rustls::Error::InvalidCertificate(CertificateError::BadSignature)),
            }
        }
        Err(rustls::Error::InvalidCertificate(CertificateError::BadSignature))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let spki = public_key_of(cert)?;
        rustls::crypto::verify_tls13_signature_with_raw_key(message, &spki, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// What Java's default `jdk.certpath.disabledAlgorithms` (`MD2, MD5, ..., RSA keySize < 1024,
/// DSA keySize < 1024, EC keySize < 224`) refuses in `certificate`: its signature (unless it is
/// the trust anchor) or its key.
fn java_disabled_algorithm(certificate: &X509Ref, check_signature: bool) -> Option<String> {
    let signature = certificate.signature_algorithm().object().nid();
    if check_signature
        && [Nid::MD2WITHRSAENCRYPTION, Nid::MD4WITHRSAENCRYPTION, Nid::MD5WITHRSAENCRYPTION, Nid::MD5WITHRSA]
            .contains(&signature)
    {
        return Some(format!("is signed with {}", signature.long_name().unwrap_or("MD5")));
    }
    let key = certificate.public_key().ok()?;
    let (kind, minimum) = match key.id() {
        Id::RSA | Id::RSA_PSS => ("RSA", 1024),
        Id::DSA => ("DSA", 1024),
        Id::EC => ("EC", 224),
        _ => return None,
    };
    (key.bits() < minimum).then(|| format!("has a {}-bit {kind} key (the least is {minimum})", key.bits()))
}

/// The certificate's SubjectPublicKeyInfo, read by OpenSSL.
fn public_key_of(certificate: &CertificateDer<'_>) -> Result<SubjectPublicKeyInfoDer<'static>, rustls::Error> {
    let certificate = X509::from_der(certificate).map_err(|e| {
        refused(format!("the broker's certificate is not a readable X.509 certificate: {}", reason(&e)))
    })?;
    let spki = certificate.public_key().and_then(|key| key.public_key_to_der()).map_err(|e| {
        refused(format!("the broker's certificate has a public key OpenSSL cannot read: {}", reason(&e)))
    })?;
    Ok(SubjectPublicKeyInfoDer::from(spki))
}

/// Whether `key` is the private key of `certificate` (the first of a client chain): compared by
/// OpenSSL (`EVP_PKEY_eq`), whatever the certificate's version. The error says which of the two
/// is at fault.
pub(super) fn key_matches_certificate(certificate: &CertificateDer<'_>, key: &dyn SigningKey) -> Result<(), String> {
    let certificate = X509::from_der(certificate)
        .map_err(|e| format!("the client certificate is not a readable X.509 certificate: {}", reason(&e)))?;
    let subject = name(certificate.subject_name());
    let certificate_key = certificate.public_key().map_err(|e| {
        format!("the client certificate ({subject}) has a public key OpenSSL cannot read: {}", reason(&e))
    })?;
    // ring's keys always give their public half; a key that does not cannot be compared, and
    // rustls lets it through too (the broker will refuse the handshake if it is wrong).
    let Some(spki) = key.public_key() else { return Ok(()) };
    let public = PKey::public_key_from_der(&spki)
        .map_err(|e| format!("the private key's public half is not readable: {}", reason(&e)))?;
    if certificate_key.public_eq(&public) {
        Ok(())
    } else {
        Err(format!(
            "the private key does not match the client certificate ({subject}): the certificate was issued for another key"
        ))
    }
}

/// A distinguished name as `CN=..., O=...` (the attributes in their order).
fn name(name: &X509NameRef) -> String {
    let parts: Vec<String> = name
        .entries()
        .map(|entry| {
            let key = entry.object().nid().short_name().unwrap_or("?");
            let value = entry.data().to_string().unwrap_or_else(|_| "?".to_string());
            format!("{key}={value}")
        })
        .collect();
    if parts.is_empty() {
        "an empty subject".to_string()
    } else {
        parts.join(", ")
    }
}

/// The names a server certificate is valid for, as the host name check reads them.
fn names(certificate: &X509Ref) -> String {
    let mut listed = Vec::new();
    if let Some(alternatives) = certificate.subject_alt_names() {
        for alternative in &alternatives {
            if let Some(dns) = alternative.dnsname() {
                listed.push(format!("DNS:{dns}"));
            } else if let Some(ip) = alternative.ipaddress() {
                match <[u8; 4]>::try_from(ip).map(IpAddr::from).or_else(|_| <[u8; 16]>::try_from(ip).map(IpAddr::from))
                {
                    Ok(ip) => listed.push(format!("IP:{ip}")),
                    Err(_) => listed.push("IP:(malformed)".to_string()),
                }
            }
        }
    }
    let has_dns = listed.iter().any(|n| n.starts_with("DNS:"));
    let mut text = if listed.is_empty() {
        "it has no subjectAltName name".to_string()
    } else {
        format!("it is valid for {}", listed.join(", "))
    };
    if !has_dns {
        // Without DNS names the common name stands for one (Java and OpenSSL alike).
        let common_name = certificate
            .subject_name()
            .entries_by_nid(Nid::COMMONNAME)
            .last()
            .and_then(|entry| entry.data().to_string().ok());
        match common_name {
            Some(cn) => text.push_str(&format!(" and the common name \"{cn}\"")),
            None => text.push_str(" and no common name"),
        }
    }
    text
}

/// OpenSSL's first reason, without its internal codes.
fn reason(e: &ErrorStack) -> String {
    e.errors()
        .first()
        .map(|error| error.reason().unwrap_or("unknown reason").to_string())
        .unwrap_or_else(|| "unknown reason".to_string())
}
