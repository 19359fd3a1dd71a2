//! SASL/OAUTHBEARER's token: fetched from an OIDC token endpoint by the client credentials grant
//! as Java's `OAuthBearerLoginCallbackHandler` fetches it (KIP-768), kept until near its expiry,
//! and sent in the RFC 7628 initial response.
//!
//! The token request is Java's: `POST` with `Authorization: Basic base64(clientId:clientSecret)`
//! and the form `grant_type=client_credentials[&scope=...]`; the answer's `access_token` is
//! checked as Java's `LoginAccessTokenValidator` checks it (a JWT with `exp` and the subject
//! claim; the signature is the broker's to check). One difference: `http://` is allowed to a
//! loopback host only, so a client secret never crosses a network in clear.
//!
//! HTTP is hyper's (its HTTP/1.1 client connection), over a TCP connection of our own and, for
//! `https://`, the client's tokio-rustls with ring, Mozilla's roots and hostname verification.
//! One connection per request, closed after the answer: a token is fetched once per lifetime, so
//! a pool would hold an idle connection for nothing. The exchange is bounded: the caller's
//! deadline covers connecting, TLS, the request and the whole answer; the answer's head is at
//! most [`MAX_HEAD`] bytes and its body at most [`MAX_RESPONSE`] bytes, refused at once when its
//! `Content-Length` says more; redirects are not followed (a 3xx is an error, as any non-2xx).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD as BASE64, URL_SAFE_NO_PAD};
use base64::Engine as _;
use bytes::Bytes;
use http::header::{HeaderValue, ACCEPT, AUTHORIZATION, CACHE_CONTROL, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::Body as _;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::super::config::{CachedToken, OAuthBearerConfig, SaslConfig, Secret, TlsConfig};
use super::super::error::{ClientError, ErrorKind};
use super::super::tls;

/// The largest token endpoint answer body read: 1 MiB. A token answer is a JWT and a few
/// fields, a few kilobytes; the cap bounds what a broken or hostile endpoint makes us hold.
const MAX_RESPONSE: usize = 1 << 20;
/// The most bytes of an answer's status line and headers (hyper's `max_header_size`; its read
/// buffer is bounded to the same, which hyper allows to overshoot by one read); a token
/// answer's head is a few hundred bytes.
const MAX_HEAD: usize = 64 << 10;
/// The most characters of an identity provider's explanation shown in an error.
const MAX_SHOWN: usize = 200;
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
    access_token_trusting(sasl, oauth, None, deadline).await
}

/// [`access_token`] with the TLS configuration for an `https://` endpoint: `None` is the
/// default one, [`TlsConfig::default`] (Mozilla's roots, hostname verification); tests give
/// their own CA.
async fn access_token_trusting(
    sasl: &SaslConfig,
    oauth: &OAuthBearerConfig,
    trust: Option<Arc<rustls::ClientConfig>>,
    deadline: Instant,
) -> Result<Secret, ClientError> {
    let mut cache = oauth.cache.0.lock().await;
    if let Some(cached) = cache.as_ref().filter(|c| std::time::Instant::now() < c.refresh_after) {
        return Ok(cached.token.clone());
    }
    let url = shown_url(&oauth.token_endpoint);
    let body = fetch(sasl, oauth, trust, deadline).await?;
    let token =
        access_token_of(&body).map_err(|why| token_error(format!("OAUTHBEARER token request to {url}: {why}")))?;
    let lifetime = validate(&token, oauth)
        .map_err(|why| token_error(format!("the access token from {url} is not usable: {why}")))?;
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

/// Where the token request goes, from the endpoint URL.
#[derive(Debug)]
struct Endpoint {
    https: bool,
    /// The host to connect to and to verify in TLS (an IPv6 address without its brackets).
    host: String,
    port: u16,
    /// The `Host` header: the URL's authority as written.
    authority: String,
    /// The request target: the path and query (a fragment is not sent).
    target: String,
}

fn parse_url(url: &str) -> Result<Endpoint, String> {
    let uri: Uri = url.parse().map_err(|e| format!("not a URL ({e})"))?;
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return Err("not an http(s):// URL".into()),
    };
    let authority = uri.authority().ok_or("no host")?;
    if authority.as_str().contains('@') {
        return Err("credentials in the URL are not supported".into());
    }
    let host = authority.host();
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if host.is_empty() {
        return Err("no host".into());
    }
    // (`Authority::port` is `None` for a port that is not a u16 as for no port at all.)
    let port = match authority.as_str().strip_prefix(authority.host()).and_then(|rest| rest.strip_prefix(':')) {
        Some(port) => port.parse::<u16>().map_err(|_| format!("'{port}' is not a port"))?,
        None if https => 443,
        None => 80,
    };
    let target = uri.path_and_query().map_or_else(
        || "/".to_string(),
        |p| format!("{}{}", p.path(), p.query().map(|q| format!("?{q}")).unwrap_or_default()),
    );
    Ok(Endpoint { https, host: host.to_string(), port, authority: authority.as_str().to_string(), target })
}

/// The endpoint URL as messages show it: user information before the host (`user:pass@`),
/// which [`parse_url`] refuses, is shown as `***@`.
fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_string(),
    }
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The client credentials grant as Java's `HttpAccessTokenRetriever` sends it. The form is
/// encoded as Java's `URLEncoder` encodes it (space as `+`, `*-._` and alphanumerics kept).
fn token_request(
    sasl: &SaslConfig,
    oauth: &OAuthBearerConfig,
    endpoint: &Endpoint,
) -> Result<Request<Full<Bytes>>, String> {
    let credentials = BASE64.encode(format!("{}:{}", sasl.username, sasl.password.expose()));
    let mut authorization = HeaderValue::try_from(format!("Basic {credentials}"))
        .map_err(|_| "the client id and secret do not make an HTTP header".to_string())?;
    // Kept out of hyper's and http's Debug output.
    authorization.set_sensitive(true);
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", "client_credentials");
    if let Some(scope) = &oauth.scope {
        form.append_pair("scope", scope);
    }
    let form = form.finish();
    Request::builder()
        .method(Method::POST)
        .uri(endpoint.target.as_str())
        .header(HOST, endpoint.authority.as_str())
        .header(AUTHORIZATION, authorization)
        .header(ACCEPT, "application/json")
        .header(CACHE_CONTROL, "no-cache")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(CONTENT_LENGTH, form.len())
        .header(CONNECTION, "close")
        .body(Full::new(Bytes::from(form)))
        .map_err(|e| format!("cannot make the request ({e})"))
}

/// What the endpoint answered: its status and its whole body.
struct Answer {
    status: StatusCode,
    body: Bytes,
}

/// POSTs the client credentials grant; the answer's body when the status is 2xx. `trust` as
/// in [`access_token_trusting`].
async fn fetch(
    sasl: &SaslConfig,
    oauth: &OAuthBearerConfig,
    trust: Option<Arc<rustls::ClientConfig>>,
    deadline: Instant,
) -> Result<Bytes, ClientError> {
    let url = shown_url(&oauth.token_endpoint);
    let fail = |why: String| token_error(format!("OAUTHBEARER token request to {url}: {why}"));
    let endpoint = parse_url(&oauth.token_endpoint).map_err(&fail)?;
    if !endpoint.https && !is_loopback(&endpoint.host) {
        return Err(fail("http:// is allowed to a loopback host only: use https://".into()));
    }
    let request = token_request(sasl, oauth, &endpoint).map_err(&fail)?;
    let exchange = async {
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        if endpoint.https {
            let config = match trust {
                Some(config) => config,
                None => tls::client_config(&TlsConfig::default()).map_err(|e| e.to_string())?,
            };
            let stream =
                tls::handshake(config, &endpoint.host, tcp, &url).await.map_err(|e| e.message().to_string())?;
            send(stream, request).await
        } else {
            send(tcp, request).await
        }
    };
    let answer = match tokio::time::timeout_at(deadline, exchange).await {
        Ok(answer) => answer.map_err(&fail)?,
        Err(_) => {
            return Err(ClientError::new(
                ErrorKind::Timeout,
                format!("OAUTHBEARER token request to {url}: no answer before the deadline"),
            ))
        }
    };
    if !answer.status.is_success() {
        let mut why = format!("HTTP {}: {}", answer.status.as_u16(), refusal(&answer.body, sasl));
        if answer.status.is_redirection() {
            why.push_str(" (redirects are not followed: give the endpoint's own URL)");
        }
        return Err(fail(why));
    }
    Ok(answer.body)
}

/// One request over `io` with hyper's HTTP/1.1 client, and the whole answer (bounded).
async fn send<IO>(io: IO, request: Request<Full<Bytes>>) -> Result<Answer, String>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let (mut sender, connection) = hyper::client::conn::http1::Builder::new()
        .max_header_size(MAX_HEAD)
        .max_buf_size(MAX_HEAD)
        .handshake::<_, Full<Bytes>>(TokioIo::new(io))
        .await
        .map_err(|e| http_failure(&e))?;
    let answer = async move {
        let response = sender.send_request(request).await.map_err(|e| http_failure(&e))?;
        let status = response.status();
        let body = response.into_body();
        // A Content-Length over the cap is refused before anything is read; the body is
        // collected chunk by chunk as it comes, never into a buffer sized by the header.
        if body.size_hint().lower() > MAX_RESPONSE as u64 {
            return Err(format!(
                "the answer is larger than {MAX_RESPONSE} bytes (Content-Length {})",
                body.size_hint().lower()
            ));
        }
        let body = Limited::new(body, MAX_RESPONSE).collect().await.map_err(|e| {
            if e.is::<LengthLimitError>() {
                format!("the answer is larger than {MAX_RESPONSE} bytes")
            } else if let Some(e) = e.downcast_ref::<hyper::Error>() {
                http_failure(e)
            } else {
                e.to_string()
            }
        })?;
        Ok(Answer { status, body: body.to_bytes() })
    };
    // The connection is driven here rather than spawned, so that it ends with this future (at
    // the deadline too) and no task outlives the request.
    tokio::pin!(answer, connection);
    tokio::select! {
        answer = &mut answer => answer,
        // The connection ends after the answer (Connection: close) or on a failure; either way
        // the answer now has all its data or the failure.
        _ = &mut connection => answer.await,
    }
}

/// What went wrong in hyper, with the underlying cause (an I/O or TLS error).
fn http_failure(e: &hyper::Error) -> String {
    // (hyper's client has no is_parse_too_large; its message is the one test-pinned sign.)
    let what = if e.is_parse() && e.to_string().contains("too large") {
        format!("the answer's status line and headers are larger than {MAX_HEAD} bytes")
    } else if e.is_parse() || e.is_parse_status() {
        format!("not an HTTP/1.x answer ({e})")
    } else if e.is_incomplete_message() || io_cause(e).is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
    {
        // (A body cut short is an I/O error "end of file before message length reached".)
        "the connection closed before the answer was complete".to_string()
    } else {
        e.to_string()
    };
    match std::error::Error::source(e) {
        Some(cause) => format!("{what}: {cause}"),
        None => what,
    }
}

fn io_cause(e: &hyper::Error) -> Option<&std::io::Error> {
    std::error::Error::source(e)?.downcast_ref::<std::io::Error>()
}

/// What a refusal says, read as Java's `HttpAccessTokenRetriever.formatErrorMessage` reads it:
/// RFC 6749's `error` and `error_description` (section 5.2), or Okta's `errorCode` and
/// `errorSummary`; else the body's text. At most [`MAX_SHOWN`] characters, without control
/// characters, and with the client secret (and the Basic credentials made of it) masked, should
/// an endpoint echo them.
fn refusal(body: &[u8], sasl: &SaslConfig) -> String {
    let fields = |json: &serde_json::Value, code: &str, description: &str| {
        let text = |value: &serde_json::Value| value.as_str().map_or_else(|| value.to_string(), str::to_string);
        let code = text(json.get(code)?);
        Some(match json.get(description) {
            Some(description) => format!("{code}: {}", text(description)),
            None => code,
        })
    };
    let text = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(json) => fields(&json, "error", "error_description").or_else(|| fields(&json, "errorCode", "errorSummary")),
        Err(_) => None,
    }
    .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let secret = sasl.password.expose();
    let credentials = BASE64.encode(format!("{}:{secret}", sasl.username));
    let mut text = text;
    for hidden in [credentials.as_str(), secret].into_iter().filter(|s| !s.is_empty()) {
        text = text.replace(hidden, "***");
    }
    let text: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let text: String = text.trim().chars().take(MAX_SHOWN).collect();
    if text.is_empty() {
        "(no body)".to_string()
    } else {
        text
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
mod tests;
