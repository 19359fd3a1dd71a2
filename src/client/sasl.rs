//! SASL authentication on a fresh connection: SaslHandshake v1 then SaslAuthenticate (v0-v2)
//! with PLAIN (RFC 4616) or SCRAM-SHA-256/512 (RFC 5802, RFC 7677), as Java's
//! `SaslClientAuthenticator` does. The server's SCRAM signature is verified, so a broker that
//! does not know the password cannot pretend to. OAUTHBEARER (RFC 7628) sends a token from an
//! OIDC token endpoint (`oauth`).

mod oauth;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::StrBytes;
use sha2::{Digest, Sha256, Sha512};
use tokio::time::Instant;

use super::config::{SaslConfig, SaslMechanism};
use super::conn::Connection;
use super::error::{ClientError, ErrorKind};
use super::versions::ApiVersionTable;

/// The fewest SCRAM iterations accepted (Kafka's minimum for both mechanisms).
const MIN_ITERATIONS: u32 = 4096;
/// The most SCRAM iterations accepted: Kafka's own maximum, and a bound on the work a hostile
/// broker can make the client do.
const MAX_ITERATIONS: u32 = 16384;

fn auth_error(message: impl Into<String>) -> ClientError {
    ClientError::new(ErrorKind::Authentication, message)
}

/// Authenticates `conn` with `sasl` before `deadline`.
pub(crate) async fn authenticate(
    conn: &Connection,
    versions: &ApiVersionTable,
    sasl: &SaslConfig,
    deadline: Instant,
) -> Result<(), ClientError> {
    let mechanism = sasl.mechanism.as_str();
    let handshake_version = versions.pick::<SaslHandshakeRequest>(None, &conn.label)?;
    if handshake_version < 1 {
        return Err(ClientError::protocol(format!(
            "{} supports SaslHandshake v0 only (Kafka before 1.0): kcp needs SaslAuthenticate",
            conn.label
        )));
    }
    let request = SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism));
    let response = conn.call(&request, handshake_version, deadline).await?;
    if response.error_code != 0 {
        let offered: Vec<&str> = response.mechanisms.iter().map(|m| m.as_str()).collect();
        return Err(ClientError::from_code(
            response.error_code,
            format!("SASL handshake with {} for {mechanism}", conn.label),
            Some(&format!("the broker offers {}", offered.join(", "))),
        )
        .with_kind(ErrorKind::Authentication));
    }
    let version = versions.pick::<SaslAuthenticateRequest>(None, &conn.label)?;
    let exchange = |token: Vec<u8>| async move {
        let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(token));
        let response = conn.call(&request, version, deadline).await?;
        if response.error_code != 0 {
            let message = response.error_message.as_ref().map(|m| m.as_str().to_string());
            return Err(ClientError::from_code(
                response.error_code,
                format!("SASL {mechanism} authentication of '{}' with {}", sasl.username, conn.label),
                message.as_deref(),
            )
            .with_kind(ErrorKind::Authentication));
        }
        Ok(response.auth_bytes.to_vec())
    };
    match sasl.mechanism {
        SaslMechanism::Plain => {
            exchange(plain_token(&sasl.username, sasl.password.expose())).await?;
        }
        SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => {
            let scram = ScramClient::new(sasl.mechanism, &sasl.username, sasl.password.expose(), &client_nonce()?);
            let server_first = exchange(scram.client_first().into_bytes()).await?;
            let (client_final, expected) = scram.client_final(&server_first)?;
            let server_final = exchange(client_final.into_bytes()).await?;
            verify_server_final(&server_final, &expected)?;
        }
        SaslMechanism::OAuthBearer => {
            let config = sasl
                .oauth
                .as_ref()
                .ok_or_else(|| auth_error("sasl.mechanism=OAUTHBEARER needs a token endpoint (SaslConfig::oauth)"))?;
            let token = oauth::access_token(sasl, config, deadline).await?;
            let challenge = exchange(oauth::initial_response(token.expose(), &config.extensions)).await?;
            if !challenge.is_empty() {
                // RFC 7628 3.2.2: the broker refused the token with a JSON error; the client
                // answers ^A and the broker then fails the authentication with its reason.
                let reason = String::from_utf8_lossy(&challenge).chars().take(300).collect::<String>();
                exchange(vec![0x01]).await?;
                return Err(auth_error(format!(
                    "SASL OAUTHBEARER authentication of '{}' with {}: the broker refused the token: {reason}",
                    sasl.username, conn.label
                )));
            }
        }
    }
    Ok(())
}

/// PLAIN's single message: an empty authorization id, the user, the password.
fn plain_token(username: &str, password: &str) -> Vec<u8> {
    let mut token = Vec::with_capacity(username.len() + password.len() + 2);
    token.push(0);
    token.extend_from_slice(username.as_bytes());
    token.push(0);
    token.extend_from_slice(password.as_bytes());
    token
}

/// 24 random bytes, base64: a nonce of printable characters without ','.
fn client_nonce() -> Result<String, ClientError> {
    let mut bytes = [0u8; 24];
    getrandom::getrandom(&mut bytes).map_err(|e| auth_error(format!("no random bytes for the SCRAM nonce: {e}")))?;
    Ok(BASE64.encode(bytes))
}

/// A SCRAM client: one exchange, client-first, client-final, then the server's signature.
pub(crate) struct ScramClient {
    mechanism: SaslMechanism,
    password: Vec<u8>,
    nonce: String,
    client_first_bare: String,
}

impl ScramClient {
    pub(crate) fn new(mechanism: SaslMechanism, username: &str, password: &str, nonce: &str) -> Self {
        let name = username.replace('=', "=3D").replace(',', "=2C");
        ScramClient {
            mechanism,
            password: password.as_bytes().to_vec(),
            nonce: nonce.to_string(),
            client_first_bare: format!("n={name},r={nonce}"),
        }
    }

    /// The client-first message (no channel binding, no authorization id).
    pub(crate) fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    /// The client-final message for the server-first message, and the server signature the
    /// server-final message must carry.
    pub(crate) fn client_final(&self, server_first: &[u8]) -> Result<(String, Vec<u8>), ClientError> {
        let server_first =
            std::str::from_utf8(server_first).map_err(|_| auth_error("the SCRAM server-first message is not UTF-8"))?;
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for attribute in server_first.split(',') {
            match attribute.split_once('=') {
                Some(("r", value)) => nonce = Some(value),
                Some(("s", value)) => salt = Some(value),
                Some(("i", value)) => iterations = Some(value),
                Some(("m", _)) => return Err(auth_error("the SCRAM server requires an extension kcp does not know")),
                Some(("e", value)) => return Err(auth_error(format!("the SCRAM server refused: {value}"))),
                _ => {}
            }
        }
        let (Some(server_nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return Err(auth_error("the SCRAM server-first message lacks its nonce, salt or iteration count"));
        };
        if !server_nonce.starts_with(&self.nonce) || server_nonce.len() == self.nonce.len() {
            return Err(auth_error("the SCRAM server nonce does not extend the client's"));
        }
        let salt = BASE64.decode(salt).map_err(|_| auth_error("the SCRAM salt is not base64"))?;
        let iterations: u32 =
            iterations.parse().map_err(|_| auth_error("the SCRAM iteration count is not a number"))?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(auth_error(format!(
                "the SCRAM iteration count {iterations} is outside {MIN_ITERATIONS}..={MAX_ITERATIONS} (Kafka's bounds)"
            )));
        }
        let salted = self.salted_password(&salt, iterations);
        let client_key = self.hmac(&salted, b"Client Key");
        let stored_key = self.hash(&client_key);
        let without_proof = format!("c=biws,r={server_nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let client_signature = self.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(&client_signature).map(|(k, s)| k ^ s).collect();
        let server_key = self.hmac(&salted, b"Server Key");
        let server_signature = self.hmac(&server_key, auth_message.as_bytes());
        Ok((format!("{without_proof},p={}", BASE64.encode(proof)), server_signature))
    }

    fn salted_password(&self, salt: &[u8], iterations: u32) -> Vec<u8> {
        match self.mechanism {
            SaslMechanism::ScramSha512 => {
                pbkdf2::pbkdf2_hmac_array::<Sha512, 64>(&self.password, salt, iterations).to_vec()
            }
            _ => pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(&self.password, salt, iterations).to_vec(),
        }
    }

    fn hmac(&self, key: &[u8], data: &[u8]) -> Vec<u8> {
        // HMAC takes keys of any length: `new_from_slice` cannot fail.
        match self.mechanism {
            SaslMechanism::ScramSha512 => {
                let mut mac = Hmac::<Sha512>::new_from_slice(key).expect("HMAC accepts any key length");
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
            _ => {
                let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts any key length");
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
        }
    }

    fn hash(&self, data: &[u8]) -> Vec<u8> {
        match self.mechanism {
            SaslMechanism::ScramSha512 => Sha512::digest(data).to_vec(),
            _ => Sha256::digest(data).to_vec(),
        }
    }
}

/// Checks the server-final message: `v=` with the expected signature, or `e=` with an error.
pub(crate) fn verify_server_final(server_final: &[u8], expected: &[u8]) -> Result<(), ClientError> {
    let text =
        std::str::from_utf8(server_final).map_err(|_| auth_error("the SCRAM server-final message is not UTF-8"))?;
    let first = text.split(',').next().unwrap_or("");
    if let Some(error) = first.strip_prefix("e=") {
        return Err(auth_error(format!("the SCRAM server refused: {error}")));
    }
    let signature = first
        .strip_prefix("v=")
        .and_then(|v| BASE64.decode(v).ok())
        .ok_or_else(|| auth_error("the SCRAM server-final message has no signature"))?;
    // Compare without an early exit.
    let same =
        signature.len() == expected.len() && signature.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if !same {
        return Err(auth_error(
            "the SCRAM server signature is wrong: the broker does not know this user's credentials",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7677_scram_sha_256_vector() {
        let scram = ScramClient::new(SaslMechanism::ScramSha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(scram.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let (client_final, signature) = scram.client_final(server_first).unwrap();
        assert_eq!(
            client_final,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        verify_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", &signature).unwrap();
        let wrong = verify_server_final(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", &signature).unwrap_err();
        assert_eq!(wrong.kind(), ErrorKind::Authentication);
        assert!(verify_server_final(b"e=invalid-proof", &signature).unwrap_err().message().contains("invalid-proof"));
        assert!(verify_server_final(b"", &signature).is_err());
    }

    #[test]
    fn scram_refuses_bad_server_first_messages() {
        let scram = ScramClient::new(SaslMechanism::ScramSha512, "a=b,c", "pw", "abc");
        assert_eq!(scram.client_first(), "n,,n=a=3Db=2Cc,r=abc");
        for (server_first, hint) in [
            (&b"r=xyz123,s=AAAA,i=4096"[..], "extend"),
            (b"r=abc,s=AAAA,i=4096", "extend"),
            (b"r=abcd,s=AAAA,i=100", "outside"),
            (b"r=abcd,s=AAAA,i=2000000000", "outside"),
            (b"r=abcd,s=AAAA,i=x", "number"),
            (b"r=abcd,s=!!,i=4096", "base64"),
            (b"r=abcd,i=4096", "lacks"),
            (b"m=ext,r=abcd,s=AAAA,i=4096", "extension"),
            (b"e=unknown-user", "unknown-user"),
            (b"\xff", "UTF-8"),
        ] {
            let e = scram.client_final(server_first).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Authentication);
            assert!(e.message().contains(hint), "{e}");
            assert!(!e.message().contains("pw"), "{e}");
        }
    }

    #[test]
    fn plain_token_layout() {
        assert_eq!(plain_token("u", "p"), b"\0u\0p");
    }

    #[test]
    fn nonces_are_printable_and_fresh() {
        let a = client_nonce().unwrap();
        assert_eq!(a.len(), 32);
        assert!(!a.contains(','));
        assert_ne!(a, client_nonce().unwrap());
    }
}
