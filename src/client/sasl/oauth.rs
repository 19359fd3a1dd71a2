//! SASL/OAUTHBEARER's token: fetched from an OIDC token endpoint by the client credentials grant
//! as Java's `OAuthBearerLoginCallbackHandler` fetches it (KIP-768), kept until near its expiry,
//! and sent in the RFC 7628 initial response.
//!
//! The token request is Java's: `POST` with `Authorization: Basic base64(clientId:clientSecret)`
//! and the form `grant_type=client_credentials[&scope=...]`; the answer's `access_token` is
//! checked as Java's `LoginAccessTokenValidator` checks it (a JWT with `exp` and the subject
//! claim; the signature is the broker's to check). One difference: `http://` is allowed to a
//! loopback host only, so a client secret never crosses a network in clear.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD as BASE64, URL_SAFE_NO_PAD};
use base64::Engine as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::super::config::{CachedToken, OAuthBearerConfig, SaslConfig, Secret, TlsConfig};
use super::super::error::{ClientError, ErrorKind};
use super::super::tls;

/// The largest token endpoint answer read.
const MAX_RESPONSE: u64 = 1 << 20;
/// Java's `sasl.login.refresh.window.factor`: a token is renewed after 80% of its lifetime.
const REFRESH_FACTOR: f64 = 0.8;

fn token_error(message: impl Into<String>) -> ClientError {
    ClientError::new(ErrorKind::Authentication, message)
}

/// The access token for `sasl`: the cached one while fresh, else a new one from the endpoint.
/// Connections of one client wait for one fetch.
pub(crate) async fn access_token(
    sasl: &SaslConfig,
    oauth: &OAuthBearerConfig,
    deadline: Instant,
) -> Result<Secret, ClientError> {
    let mut cache = oauth.cache.0.lock().await;
    if let Some(cached) = cache.as_ref().filter(|c| std::time::Instant::now() < c.refresh_after) {
        return Ok(cached.token.clone());
    }
    let body = fetch(sasl, oauth, deadline).await?;
    let token = access_token_of(&body).map_err(|why| token_error(format!("{}: {why}", oauth.token_endpoint)))?;
    let lifetime = validate(&token, oauth)
        .map_err(|why| token_error(format!("the access token from {} is not usable: {why}", oauth.token_endpoint)))?;
    let refresh_after = std::time::Instant::now() + lifetime.mul_f64(REFRESH_FACTOR);
    *cache = Some(CachedToken { token: Secret::new(token.clone()), refresh_after });
    Ok(Secret::new(token))
}

/// The OAUTHBEARER initial client response (RFC 7628 section 3.1, as Java's
/// `OAuthBearerClientInitialResponse`): the GS2 header `n,,`, `auth=Bearer TOKEN`, the
/// extensions, each key/value ended by `^A`, and a final `^A`.
pub(crate) fn initial_response(token: &str, extensions: &[(String, String)]) -> Vec<u8> {
    let mut message = format!("n,,\x01auth=Bearer {token}");
    for (key, value) in extensions {
        message.push('\x01');
        message.push_str(key);
        message.push('=');
        message.push_str(value);
    }
    message.push_str("\x01\x01");
    message.into_bytes()
}

/// Java's `URLEncoder.encode(s, UTF_8)`: form encoding, space as `+`.
fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => out.push(char::from(b)),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A token endpoint URL's parts.
struct Endpoint {
    https: bool,
    host: String,
    port: u16,
    /// The `Host` header: as written in the URL.
    authority: String,
    path: String,
}

fn parse_url(url: &str) -> Result<Endpoint, String> {
    let (https, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        _ => return Err("not an http(s):// URL".into()),
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    if authority.contains('@') {
        return Err("credentials in the URL are not supported".into());
    }
    let default_port = if https { 443 } else { 80 };
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']').ok_or("unclosed '['")?;
            let port = after.strip_prefix(':').map(str::parse::<u16>).transpose().map_err(|_| "bad port")?;
            (host.to_string(), port.unwrap_or(default_port))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_string(), port.parse::<u16>().map_err(|_| "bad port")?),
            None => (authority.to_string(), default_port),
        },
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok(Endpoint { https, host, port, authority: authority.to_string(), path })
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// POSTs the client credentials grant; the answer's body when the status is 2xx.
async fn fetch(sasl: &SaslConfig, oauth: &OAuthBearerConfig, deadline: Instant) -> Result<Vec<u8>, ClientError> {
    let url = &oauth.token_endpoint;
    let fail = |why: String| token_error(format!("OAUTHBEARER token request to {url}: {why}"));
    let endpoint = parse_url(url).map_err(&fail)?;
    if !endpoint.https && !is_loopback(&endpoint.host) {
        return Err(fail("http:// is allowed to a loopback host only: use https://".into()));
    }
    let credentials = BASE64.encode(format!("{}:{}", sasl.username, sasl.password.expose()));
    let mut body = "grant_type=client_credentials".to_string();
    if let Some(scope) = &oauth.scope {
        body.push_str("&scope=");
        body.push_str(&form_encode(scope));
    }
    let request = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nAuthorization: Basic {credentials}\r\nAccept: application/json\r\n\
         Cache-Control: no-cache\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        endpoint.path,
        endpoint.authority,
        body.len()
    );
    let exchange = async {
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let mut raw = Vec::new();
        if endpoint.https {
            let config = tls::client_config(&TlsConfig::default()).map_err(|e| e.to_string())?;
            let mut stream =
                tls::handshake(config, &endpoint.host, tcp, url).await.map_err(|e| e.message().to_string())?;
            stream.write_all(request.as_bytes()).await.map_err(|e| format!("cannot send: {e}"))?;
            read_capped(&mut stream, &mut raw).await?;
        } else {
            let mut stream = tcp;
            stream.write_all(request.as_bytes()).await.map_err(|e| format!("cannot send: {e}"))?;
            read_capped(&mut stream, &mut raw).await?;
        }
        Ok::<_, String>(raw)
    };
    let raw = match tokio::time::timeout_at(deadline, exchange).await {
        Ok(result) => result.map_err(fail)?,
        Err(_) => {
            return Err(ClientError::new(
                ErrorKind::Timeout,
                format!("OAUTHBEARER token request to {url}: no answer before the deadline"),
            ))
        }
    };
    let (status, body) = parse_response(&raw).map_err(fail)?;
    if !(200..300).contains(&status) {
        return Err(fail(format!("HTTP {status}: {}", printable(&body))));
    }
    Ok(body)
}

async fn read_capped(stream: &mut (impl AsyncReadExt + Unpin), raw: &mut Vec<u8>) -> Result<(), String> {
    let mut limited = stream.take(MAX_RESPONSE + 1);
    // A TLS server may end without close_notify after Connection: close; what was read counts.
    if let Err(e) = limited.read_to_end(raw).await {
        if raw.is_empty() {
            return Err(format!("no answer: {e}"));
        }
    }
    if raw.len() as u64 > MAX_RESPONSE {
        return Err(format!("the answer is larger than {MAX_RESPONSE} bytes"));
    }
    Ok(())
}

/// The status and body of an HTTP/1.x response (Content-Length, chunked, or to the end).
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("not an HTTP response (no end of headers)")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let body = &raw[end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or("not an HTTP/1.x response")?;
    let header = |name: &str| {
        lines.clone().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        return Ok((status, dechunk(body)?));
    }
    match header("content-length").map(|v| v.parse::<usize>()) {
        Some(Ok(len)) if len <= body.len() => Ok((status, body[..len].to_vec())),
        Some(_) => Err("the body is shorter than its Content-Length".into()),
        None => Ok((status, body.to_vec())),
    }
}

fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").ok_or("a chunk size line is not ended")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| "a chunk size is not hexadecimal")?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = body.get(..size).ok_or("a chunk is cut short")?;
        out.extend_from_slice(chunk);
        body = body.get(size + 2..).ok_or("a chunk is not ended")?;
    }
}

/// Up to 200 printable characters of an error body (an identity provider's explanation).
fn printable(body: &[u8]) -> String {
    let text: String =
        String::from_utf8_lossy(body).chars().map(|c| if c.is_control() { ' ' } else { c }).take(200).collect();
    if text.trim().is_empty() {
        "(no body)".to_string()
    } else {
        text.trim().to_string()
    }
}

fn access_token_of(body: &[u8]) -> Result<String, String> {
    let json: serde_json::Value = serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON ({e})"))?;
    match json.get("access_token") {
        Some(serde_json::Value::String(token)) if !token.is_empty() => Ok(token.clone()),
        Some(_) => Err("access_token is not a non-empty string".into()),
        None => Err("the answer has no access_token".into()),
    }
}

/// Java's `LoginAccessTokenValidator`: a three-part JWT whose payload has a numeric `exp` and
/// the subject claim as a string, and a scope claim (if any) that is a string or a list of them.
/// The lifetime left.
fn validate(token: &str, oauth: &OAuthBearerConfig) -> Result<Duration, String> {
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err(format!("a JWT has three parts separated by '.', this has {}", parts.len()));
    }
    let payload = URL_SAFE_NO_PAD
        .decode(parts[1].trim_end_matches('='))
        .map_err(|_| "the JWT payload is not base64url".to_string())?;
    let claims: serde_json::Value =
        serde_json::from_slice(&payload).map_err(|_| "the JWT payload is not a JSON object".to_string())?;
    let exp = claims.get("exp").and_then(serde_json::Value::as_f64).ok_or("the JWT has no numeric exp claim")?;
    match claims.get(&oauth.sub_claim_name) {
        Some(serde_json::Value::String(sub)) if !sub.trim().is_empty() => {}
        _ => return Err(format!("the JWT has no {} claim (sasl.oauthbearer.sub.claim.name)", oauth.sub_claim_name)),
    }
    match claims.get(&oauth.scope_claim_name) {
        None | Some(serde_json::Value::String(_)) => {}
        Some(serde_json::Value::Array(items)) if items.iter().all(serde_json::Value::is_string) => {}
        Some(_) => {
            return Err(format!("the JWT's {} claim is not a string or a list of strings", oauth.scope_claim_name))
        }
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    if exp <= now {
        return Err("the JWT has expired (exp is past)".into());
    }
    Ok(Duration::from_secs_f64((exp - now).min(1e9)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        format!("{}.{}.sig", URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256"}"#), URL_SAFE_NO_PAD.encode(claims))
    }

    #[test]
    fn initial_response_is_rfc_7628_as_java_writes_it() {
        assert_eq!(initial_response("t0k", &[]), b"n,,\x01auth=Bearer t0k\x01\x01");
        let ext = [("a".to_string(), "1".to_string()), ("b".to_string(), "2".to_string())];
        assert_eq!(initial_response("t", &ext), b"n,,\x01auth=Bearer t\x01a=1\x01b=2\x01\x01");
    }

    #[test]
    fn tokens_are_checked_as_java_checks_them() {
        let oauth = OAuthBearerConfig::new("https://x/t");
        let future = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() + 600;
        let lifetime = validate(&jwt(&format!(r#"{{"exp":{future},"sub":"me","scope":["a","b"]}}"#)), &oauth).unwrap();
        assert!(lifetime > Duration::from_secs(590) && lifetime <= Duration::from_secs(600), "{lifetime:?}");
        for (token, why) in [
            ("a.b".to_string(), "three parts"),
            (jwt(r#"{"sub":"me"}"#), "exp"),
            (jwt(&format!(r#"{{"exp":{future}}}"#)), "sub claim"),
            (jwt(&format!(r#"{{"exp":{future},"sub":"me","scope":3}}"#)), "scope claim"),
            (jwt(r#"{"exp":1000,"sub":"me"}"#), "expired"),
            ("a.!!.c".to_string(), "base64url"),
        ] {
            let e = validate(&token, &oauth).unwrap_err();
            assert!(e.contains(why), "{token}: {e}");
        }
    }

    #[test]
    fn http_answers() {
        let (status, body) = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}xx").unwrap();
        assert_eq!((status, body.as_slice()), (200, b"{}".as_slice()));
        let chunked =
            b"HTTP/1.1 401 Unauthorized\r\ntransfer-encoding: Chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (401, b"abcde".to_vec()));
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}").is_err());
        assert!(parse_response(b"garbage").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n").is_err());
        assert_eq!(access_token_of(br#"{"access_token":"x.y.z","expires_in":3600}"#).unwrap(), "x.y.z");
        assert!(access_token_of(br#"{"error":"invalid_client"}"#).unwrap_err().contains("no access_token"));
        assert_eq!(form_encode("kafka read:all ä"), "kafka+read%3Aall+%C3%A4");
        let e = parse_url("https://idp.example.com/oauth2/token?x=1").unwrap();
        assert_eq!(
            (e.https, e.host.as_str(), e.port, e.path.as_str()),
            (true, "idp.example.com", 443, "/oauth2/token?x=1")
        );
        let e = parse_url("http://[::1]:8080").unwrap();
        assert_eq!((e.host.as_str(), e.port, e.path.as_str()), ("::1", 8080, "/"));
        assert!(is_loopback("127.0.0.1") && is_loopback("::1") && !is_loopback("10.0.0.1"));
    }
}
