//! The token request against endpoints on loopback: well-formed ones served by hyper's server
//! (an HTTP implementation independent of the request's), and hostile ones that write exactly
//! the bytes a test gives (chunked, oversized, slow, lying, not HTTP).

use std::sync::Mutex;

use http_body_util::BodyExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::*;
use crate::client::config::{PemSource, SaslMechanism, TrustStore};

const CLIENT_ID: &str = "kcp-client";
const SECRET: &str = "s3cret-Zq9";

fn sasl() -> SaslConfig {
    SaslConfig::new(SaslMechanism::OAuthBearer, CLIENT_ID, Secret::new(SECRET))
}

fn in_ms(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

fn jwt(claims: &str) -> String {
    format!("{}.{}.sig", URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256"}"#), URL_SAFE_NO_PAD.encode(claims))
}

/// A JWT with the subject claim that expires `seconds` from now.
fn jwt_for(seconds: u64) -> String {
    let exp = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() + seconds;
    jwt(&format!(r#"{{"exp":{exp},"sub":"kcp-client"}}"#))
}

/// The message of an error, checked to name neither the client secret nor the Basic
/// credentials made of it.
fn message_of(e: &ClientError) -> String {
    let text = e.to_string();
    let credentials = BASE64.encode(format!("{CLIENT_ID}:{SECRET}"));
    assert!(!text.contains(SECRET) && !text.contains(&credentials), "a secret in: {text}");
    text
}

/// One request as the test endpoint's hyper server read it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    target: String,
    headers: http::HeaderMap,
    body: String,
}

type Requests = Arc<Mutex<Vec<Seen>>>;

/// A token endpoint served by hyper's HTTP/1.1 server on 127.0.0.1 (with TLS when `tls` is
/// given), answering each request with what `answer` makes: a status, headers and a body.
async fn hyper_endpoint(
    tls: Option<tokio_rustls::TlsAcceptor>,
    answer: impl Fn() -> (u16, Vec<(&'static str, String)>, String) + Send + Sync + 'static,
) -> (u16, Requests) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests: Requests = Arc::default();
    let (log, answer) = (requests.clone(), Arc::new(answer));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (log, answer, tls) = (log.clone(), answer.clone(), tls.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let (log, answer) = (log.clone(), answer.clone());
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await?.to_bytes();
                        log.lock().unwrap().push(Seen {
                            method: parts.method.to_string(),
                            target: parts.uri.to_string(),
                            headers: parts.headers,
                            body: String::from_utf8_lossy(&body).into_owned(),
                        });
                        let (status, headers, body) = answer();
                        let mut response = http::Response::builder().status(status);
                        for (name, value) in headers {
                            response = response.header(name, value);
                        }
                        Ok::<_, hyper::Error>(response.body(Full::new(Bytes::from(body))).unwrap())
                    }
                });
                let http = hyper::server::conn::http1::Builder::new();
                match tls {
                    Some(acceptor) => {
                        if let Ok(stream) = acceptor.accept(tcp).await {
                            let _ = http.serve_connection(TokioIo::new(stream), service).await;
                        }
                    }
                    None => {
                        let _ = http.serve_connection(TokioIo::new(tcp), service).await;
                    }
                }
            });
        }
    });
    (port, requests)
}

/// A JSON answer with `status`.
fn json(status: u16, body: &str) -> impl Fn() -> (u16, Vec<(&'static str, String)>, String) + Send + Sync + 'static {
    let body = body.to_string();
    move || (status, vec![("content-type", "application/json".to_string())], body.clone())
}

/// An endpoint that reads what it is sent and answers each connection with `script`: each
/// piece written after its pause, whatever was asked. Then it closes its side and reads on
/// until the client closes (so that unread bytes never turn its close into a reset).
async fn raw_endpoint(script: Vec<(Duration, Vec<u8>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/oauth2/token", listener.local_addr().unwrap());
    let script = Arc::new(script);
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let script = script.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 << 10];
                let _ = tcp.read(&mut buf).await;
                for (pause, bytes) in script.iter() {
                    tokio::time::sleep(*pause).await;
                    if tcp.write_all(bytes).await.is_err() {
                        return;
                    }
                }
                let _ = tcp.shutdown().await;
                let drain = async { while matches!(tcp.read(&mut buf).await, Ok(n) if n > 0) {} };
                let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
            });
        }
    });
    url
}

fn now(bytes: impl Into<Vec<u8>>) -> (Duration, Vec<u8>) {
    (Duration::ZERO, bytes.into())
}

async fn fetch_from(url: &str) -> Result<Bytes, ClientError> {
    fetch(&sasl(), &OAuthBearerConfig::new(url), None, in_ms(10_000)).await
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
fn endpoint_urls() {
    let e = parse_url("https://idp.example.com/oauth2/token?x=1#frag").unwrap();
    assert_eq!(
        (e.https, e.host.as_str(), e.port, e.authority.as_str(), e.target.as_str()),
        (true, "idp.example.com", 443, "idp.example.com", "/oauth2/token?x=1")
    );
    let e = parse_url("http://[::1]:8080").unwrap();
    assert_eq!(
        (e.https, e.host.as_str(), e.port, e.authority.as_str(), e.target.as_str()),
        (false, "::1", 8080, "[::1]:8080", "/")
    );
    assert_eq!(parse_url("http://127.0.0.1?a=b").unwrap().target, "/?a=b");
    for (url, why) in [
        ("ftp://idp/t", "not an http(s)://"),
        ("https://user:pw@idp/t", "credentials in the URL"),
        ("https://idp:99999/t", "'99999' is not a port"),
        ("https://idp:x/t", "not a"),
        ("https://[::1]:x/t", "not a"),
        ("https:///t", "not a URL"),
        ("https://idp/a b", "not a URL"),
    ] {
        let e = parse_url(url).unwrap_err();
        assert!(e.contains(why), "{url}: {e}");
    }
    assert_eq!(shown_url("https://user:pw@idp/t?x=@"), "https://***@idp/t?x=@");
    assert_eq!(shown_url("https://idp/t?x=@"), "https://idp/t?x=@");
    assert!(is_loopback("127.0.0.1") && is_loopback("::1") && is_loopback("localhost") && !is_loopback("10.0.0.1"));
}

#[tokio::test]
async fn urls_that_are_not_used_say_why_without_their_credentials() {
    let e = fetch_from("http://idp.example.com/token").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
    assert!(message_of(&e).contains("http:// is allowed to a loopback host only"), "{e}");
    let e = fetch_from("https://kcp:hunter2@idp.example.com/token").await.unwrap_err();
    let text = message_of(&e);
    assert!(text.contains("credentials in the URL are not supported") && !text.contains("hunter2"), "{text}");
}

/// Java's request: POST to the URL's path and query, Basic credentials, the form with the
/// scope encoded as `URLEncoder` encodes it, JSON accepted; one request while the token is in
/// its first 80%, a new one after.
#[tokio::test]
async fn the_token_request_is_javas_and_the_token_is_kept_for_80_percent_of_its_lifetime() {
    // Each answer a new token living 1 to 2 s (exp is whole seconds): renewed after 0.8 to 1.6 s.
    let (port, requests) = hyper_endpoint(None, || {
        let token = jwt_for(2);
        (200, vec![("content-type", "application/json".into())], format!(r#"{{"access_token":"{token}"}}"#))
    })
    .await;
    let mut oauth = OAuthBearerConfig::new(format!("http://127.0.0.1:{port}/oauth2/token?tenant=t1"));
    oauth.scope = Some("kafka read:all ä*~".to_string());
    let first = access_token(&sasl(), &oauth, in_ms(10_000)).await.unwrap();
    let again = access_token(&sasl(), &oauth, in_ms(10_000)).await.unwrap();
    assert_eq!(first.expose(), again.expose());
    let seen = requests.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let request = &seen[0];
    assert_eq!((request.method.as_str(), request.target.as_str()), ("POST", "/oauth2/token?tenant=t1"));
    let header = |name: &str| request.headers.get(name).map(|v| v.to_str().unwrap().to_string());
    assert_eq!(header("host"), Some(format!("127.0.0.1:{port}")));
    assert_eq!(header("authorization"), Some(format!("Basic {}", BASE64.encode(format!("{CLIENT_ID}:{SECRET}")))));
    assert_eq!(header("content-type").as_deref(), Some("application/x-www-form-urlencoded"));
    assert_eq!(header("accept").as_deref(), Some("application/json"));
    assert_eq!(request.body, "grant_type=client_credentials&scope=kafka+read%3Aall+%C3%A4*%7E");
    assert_eq!(header("content-length"), Some(request.body.len().to_string()));

    tokio::time::sleep(Duration::from_millis(1700)).await;
    access_token(&sasl(), &oauth, in_ms(10_000)).await.unwrap();
    assert_eq!(requests.lock().unwrap().len(), 2, "renewed after 80% of the lifetime");

    // Without a scope, the grant alone; no expires_in is needed (the JWT's exp is the lifetime).
    let token = jwt_for(600);
    let (port, requests) = hyper_endpoint(None, json(200, &format!(r#"{{"access_token":"{token}"}}"#))).await;
    let oauth = OAuthBearerConfig::new(format!("http://localhost:{port}/t"));
    assert_eq!(access_token(&sasl(), &oauth, in_ms(10_000)).await.unwrap().expose(), token);
    assert_eq!(requests.lock().unwrap()[0].body, "grant_type=client_credentials");
}

#[tokio::test]
async fn a_chunked_answer_is_read_whole() {
    let token = jwt_for(600);
    let body = format!(r#"{{"access_token":"{token}","token_type":"Bearer","expires_in":600}}"#);
    let (a, b) = body.split_at(20);
    let pause = Duration::from_millis(30);
    let url = raw_endpoint(vec![
        now("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"),
        (pause, format!("{:x};name=value\r\n{a}\r\n", a.len()).into_bytes()),
        (pause, format!("{:X}\r\n{b}\r\n", b.len()).into_bytes()),
        (pause, b"0\r\n\r\n".to_vec()),
    ])
    .await;
    let oauth = OAuthBearerConfig::new(&url);
    assert_eq!(access_token(&sasl(), &oauth, in_ms(10_000)).await.unwrap().expose(), token);
    // A chunk size that is not hexadecimal is not HTTP.
    let url =
        raw_endpoint(vec![now("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")]).await;
    let e = fetch_from(&url).await.unwrap_err();
    assert!(message_of(&e).contains("error reading a body from connection: Invalid chunk size line"), "{e}");
}

#[tokio::test]
async fn an_answer_over_the_cap_is_refused() {
    // A Content-Length far over the cap (and over memory): refused before any body is read.
    let url = raw_endpoint(vec![now("HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000\r\n\r\n{}")]).await;
    let e = fetch_from(&url).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
    assert!(message_of(&e).contains("larger than 1048576 bytes (Content-Length 1000000000000000)"), "{e}");
    // A chunked body, and one delimited by the close, that go over the cap as they come.
    let chunk = format!("10000\r\n{}\r\n", "x".repeat(1 << 16)).into_bytes();
    let mut chunked = vec![now("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")];
    chunked.extend(std::iter::repeat_n(now(chunk), 17));
    chunked.push(now("0\r\n\r\n"));
    let unframed = vec![now("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"), now(vec![b' '; MAX_RESPONSE + 1])];
    for (what, script) in [("chunked", chunked), ("to the close", unframed)] {
        let result = fetch_from(&raw_endpoint(script).await).await;
        let e = result.map(|body| panic!("{what}: {} bytes read", body.len())).unwrap_err();
        assert!(message_of(&e).ends_with("the answer is larger than 1048576 bytes"), "{what}: {e}");
    }
    // Exactly the cap is read.
    let token = jwt_for(600);
    let head = format!(r#"{{"access_token":"{token}","pad":""#);
    let body = format!("{head}{}\"}}", "p".repeat(MAX_RESPONSE - head.len() - 2));
    assert_eq!(body.len(), MAX_RESPONSE);
    let url = raw_endpoint(vec![
        now(format!("HTTP/1.1 200 OK\r\nContent-Length: {MAX_RESPONSE}\r\n\r\n")),
        now(body.into_bytes()),
    ])
    .await;
    assert_eq!(fetch_from(&url).await.unwrap().len(), MAX_RESPONSE);
    // Headers over their bound.
    let url = raw_endpoint(vec![now(format!("HTTP/1.1 200 OK\r\nX-Big: {}\r\n\r\n", "h".repeat(100_000)))]).await;
    let e = fetch_from(&url).await.unwrap_err();
    assert!(message_of(&e).contains("status line and headers are larger than 65536 bytes"), "{e}");
}

#[tokio::test]
async fn a_slow_endpoint_ends_at_the_deadline() {
    // Headers at once, then a byte of the body every 100 ms: the whole answer is bounded.
    let mut trickle = vec![now("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")];
    trickle.extend((0..100).map(|_| (Duration::from_millis(100), b" ".to_vec())));
    // And one that never answers.
    let silent = vec![(Duration::from_secs(60), b"HTTP/1.1 200 OK\r\n\r\n".to_vec())];
    for (what, script) in [("trickle", trickle), ("silent", silent)] {
        let url = raw_endpoint(script).await;
        let started = std::time::Instant::now();
        let e = fetch(&sasl(), &OAuthBearerConfig::new(&url), None, in_ms(500)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout, "{what}: {e}");
        assert!(message_of(&e).contains("no answer before the deadline"), "{what}: {e}");
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(450) && took < Duration::from_secs(3), "{what}: {took:?}");
    }
}

/// A refusal names the status and the OAuth error (RFC 6749 5.2, or Okta's fields, as Java
/// reads them), never the secret, and is an authentication error.
#[tokio::test]
async fn refusals_name_the_status_and_the_oauth_error() {
    let echoed = format!("<html>bad client {SECRET} {}</html>", BASE64.encode(format!("{CLIENT_ID}:{SECRET}")));
    let long = format!(r#"{{"error":"invalid_request","error_description":"{}"}}"#, "d".repeat(1000));
    for (status, body, expected) in [
        (
            401,
            r#"{"error":"invalid_client","error_description":"Client authentication failed"}"#.to_string(),
            "HTTP 401: invalid_client: Client authentication failed",
        ),
        (400, r#"{"error":"invalid_scope"}"#.to_string(), "HTTP 400: invalid_scope"),
        (
            500,
            r#"{"errorCode":"E0000009","errorSummary":"Internal Server Error"}"#.to_string(),
            "HTTP 500: E0000009: Internal Server Error",
        ),
        (502, echoed, "HTTP 502: <html>bad client *** ***</html>"),
        (503, String::new(), "HTTP 503: (no body)"),
    ] {
        let (port, requests) = hyper_endpoint(None, json(status, &body)).await;
        let e = fetch_from(&format!("http://127.0.0.1:{port}/t")).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
        assert!(message_of(&e).ends_with(expected), "{e}");
        assert_eq!(requests.lock().unwrap().len(), 1);
    }
    let (port, _) = hyper_endpoint(None, json(400, &long)).await;
    let e = fetch_from(&format!("http://127.0.0.1:{port}/t")).await.unwrap_err();
    assert!(e.to_string().ends_with(&format!("HTTP 400: invalid_request: {}", "d".repeat(200 - 17))), "{e}");
    // A redirect is not followed.
    let (port, requests) = hyper_endpoint(None, || (302, vec![("location", "/elsewhere".into())], String::new())).await;
    let e = fetch_from(&format!("http://127.0.0.1:{port}/t")).await.unwrap_err();
    assert!(message_of(&e).contains("HTTP 302: (no body) (redirects are not followed"), "{e}");
    assert_eq!(requests.lock().unwrap().len(), 1);
}

/// A 2xx answer that holds no usable token, and answers that are not HTTP, are typed errors
/// saying what was wrong, without the token.
#[tokio::test]
async fn answers_without_a_usable_token_say_what_was_wrong() {
    for (body, expected) in [
        "<html>not json</html>".to_string(),
        r#"{"token_type":"Bearer","expires_in":3600}"#.to_string(),
        r#"{"access_token":""}"#.to_string(),
        r#"{"access_token":"abc.def-token"}"#.to_string(),
    ]
    .into_iter()
    .zip([
        "the answer is not JSON",
        "the answer has no access_token",
        "not a non-empty string",
        "is not usable: a JWT has three parts",
    ]) {
        let (port, _) = hyper_endpoint(None, json(200, &body)).await;
        let oauth = OAuthBearerConfig::new(format!("http://127.0.0.1:{port}/t"));
        let e = access_token(&sasl(), &oauth, in_ms(10_000)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
        let text = message_of(&e);
        assert!(text.contains(expected) && !text.contains("abc.def-token"), "{body}: {text}");
    }
    for (script, expected) in [
        (vec![now("garbage\r\n\r\n")], "not an HTTP/1.x answer"),
        (vec![now("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"access")], "closed before the answer was complete"),
        (vec![], "closed before the answer was complete"),
    ] {
        let e = fetch_from(&raw_endpoint(script).await).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
        assert!(message_of(&e).contains(expected), "{e}");
    }
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let e = fetch_from(&format!("http://{closed}/t")).await.unwrap_err();
    assert!(message_of(&e).contains("cannot connect"), "{e}");
}

/// A rustls server configuration for `localhost` with a certificate of a CA made here, and
/// that CA's PEM.
fn localhost_tls() -> (rustls::ServerConfig, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    // Names of their own: with rcgen's one default name for both, the server's certificate would
    // name itself as its issuer, which OpenSSL's path building (the client's) takes for
    // self-signed.
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "kcp test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], rustls_pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()))
        .unwrap();
    (server, ca.pem())
}

/// The token endpoint's TLS configuration trusting `ca_pem` (the client's `tls::client_config`).
fn trusting(ca_pem: &str) -> Arc<rustls::ClientConfig> {
    let config = TlsConfig { trust: TrustStore::Pem(PemSource::Text(ca_pem.to_string())), ..TlsConfig::default() };
    tls::client_config(&config).unwrap()
}

/// `https://` goes over the client's tokio-rustls: a CA the endpoint's trust knows works,
/// Mozilla's roots (the default) refuse a private CA, and the host name is verified.
#[tokio::test]
async fn https_endpoints_are_verified() {
    let (server, ca_pem) = localhost_tls();
    let token = jwt_for(600);
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let (port, requests) = hyper_endpoint(Some(acceptor), json(200, &format!(r#"{{"access_token":"{token}"}}"#))).await;
    let trusting = trusting(&ca_pem);

    let oauth = OAuthBearerConfig::new(format!("https://localhost:{port}/oauth2/token"));
    let got = access_token_trusting(&sasl(), &oauth, Some(trusting.clone()), in_ms(10_000)).await.unwrap();
    assert_eq!(got.expose(), token);
    let seen = requests.lock().unwrap().clone();
    assert_eq!((seen.len(), seen[0].body.as_str()), (1, "grant_type=client_credentials"));

    let e = fetch(&sasl(), &OAuthBearerConfig::new(format!("https://localhost:{port}/t")), None, in_ms(10_000))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(message_of(&e).contains("TLS handshake") && e.to_string().contains("UnknownIssuer"), "{e}");
    let e =
        fetch(&sasl(), &OAuthBearerConfig::new(format!("https://127.0.0.1:{port}/t")), Some(trusting), in_ms(10_000))
            .await
            .unwrap_err();
    assert!(message_of(&e).contains("TLS handshake") && e.to_string().contains("not valid for name"), "{e}");
}

/// Over TLS, an answer framed by its length or chunks is whole without the server's
/// close_notify (many servers just close); one framed by the close is not (its end cannot be
/// told from a truncation) and is refused.
#[tokio::test]
async fn an_https_answer_framed_by_the_close_needs_close_notify() {
    let (server, ca_pem) = localhost_tls();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let token = jwt_for(600);
    let body = format!(r#"{{"access_token":"{token}"}}"#);
    for (framing, head) in [
        ("length", format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())),
        ("close", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_string()),
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (acceptor, answer) = (acceptor.clone(), format!("{head}{body}"));
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut tls = acceptor.accept(tcp).await.unwrap();
            let mut buf = vec![0u8; 64 << 10];
            let _ = tls.read(&mut buf).await;
            tls.write_all(answer.as_bytes()).await.unwrap();
            tls.flush().await.unwrap();
            // Close the TCP connection without TLS's close_notify.
            let (mut tcp, _) = tls.into_inner();
            let _ = tcp.shutdown().await;
            let _ = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf)).await;
        });
        let oauth = OAuthBearerConfig::new(format!("https://localhost:{port}/t"));
        let result = fetch(&sasl(), &oauth, Some(trusting(&ca_pem)), in_ms(10_000)).await;
        match framing {
            "length" => assert_eq!(result.unwrap(), body.as_bytes()),
            _ => {
                let e = result.unwrap_err();
                assert!(message_of(&e).contains("closed before the answer was complete"), "{e}");
                assert!(e.to_string().contains("close_notify"), "{e}");
            }
        }
    }
}
