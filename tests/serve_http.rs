//! `kcp serve` as an HTTP server, without a broker: what it answers while the cluster cannot be
//! reached, its authentication and TLS, and its bounds against hostile clients (huge heads, slow
//! clients, many connections, unknown paths and methods). The cluster is `127.0.0.1:1`, where
//! nothing listens, so every collection fails at once.

mod serve_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serve_support::{request, samples, value, Server};

const UNREACHABLE: &str = "127.0.0.1:1";

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kcp-serve-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_cluster_that_cannot_be_reached_is_kcp_up_0_and_the_server_keeps_answering() {
    // A password in the client configuration must appear in no answer and no log line.
    let config = temp_file(
        "sasl.properties",
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n\
         sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"s3cr3t-kcp-serve\";\n",
    );
    let server = Server::start(&[
        "--bootstrap-server",
        UNREACHABLE,
        "--command-config",
        config.to_str().unwrap(),
        "--interval-ms",
        "200",
        "--timeout-ms",
        "500",
    ]);
    let metrics = server.wait_for("/metrics", Duration::from_secs(20), "an error counted", |r| {
        value(&samples(&r.body), "kcp_collect_errors_total", &[("kind", "unreachable")]).is_some_and(|n| n >= 2.0)
    });
    assert_eq!(metrics.status, 200);
    assert!(metrics.header("content-type").unwrap().starts_with("application/openmetrics-text"));
    assert!(metrics.body.ends_with("# EOF\n"), "{}", metrics.body);
    let s = samples(&metrics.body);
    assert_eq!(value(&s, "kcp_up", &[("cluster_name", "default")]), Some(0.0));
    assert_eq!(value(&s, "kcp_snapshot_timestamp_seconds", &[]), Some(0.0), "never collected");
    assert!(s.iter().all(|x| !x.name.starts_with("kcp_consumergroup_")), "no group series: {}", metrics.body);
    assert_eq!(server.get("/readyz").status, 503);
    assert_eq!(server.get("/healthz").status, 200);
    let clusters = server.get("/api/v1/clusters").json();
    assert_eq!(clusters["clusters"][0]["up"], false);
    assert_eq!(clusters["clusters"][0]["error"]["kind"], "unreachable");
    let burrow = server.get("/v3/kafka").json();
    assert_eq!(burrow["clusters"], serde_json::json!(["default"]));
    assert_eq!(burrow["error"], false);
    let detail = server.get("/v3/kafka/default");
    assert_eq!(detail.status, 200);
    assert_eq!(detail.json()["module"]["servers"], serde_json::json!([UNREACHABLE]));
    let missing = server.get("/v3/kafka/default/consumer/nobody/status");
    assert_eq!((missing.status, missing.json()["status"]["status"].as_str()), (404, Some("NOTFOUND")));

    let mut everything = server.stderr();
    for path in ["/metrics", "/api/v1/clusters", "/v3/kafka/default", "/", "/api/v1/clusters/default/groups"] {
        everything.push_str(&server.get(path).body);
    }
    assert!(!everything.contains("s3cr3t-kcp-serve"), "a secret was shown:\n{everything}");
    assert!(everything.contains("collection failed: unreachable"), "the failure is logged: {everything}");
    // SIGTERM ends it cleanly.
    assert_eq!(server.terminate(), Some(0));
}

/// `/metrics` gzip-compressed once per collection: the same stored bytes for every scraper that
/// accepts gzip, sent with their length (a per-request compression, as tower-http's layer did,
/// streams them chunked, without one), and the plain text for the others.
#[test]
fn metrics_are_compressed_once_per_collection_and_decode_to_the_plain_text() {
    // One collection (it fails at once) in the test's time: every scrape reads its text.
    let server = Server::start(&["--bootstrap-server", UNREACHABLE, "--interval-ms", "600000", "--timeout-ms", "500"]);
    server.wait_for("/metrics", Duration::from_secs(20), "the first collection", |r| {
        value(&samples(&r.body), "kcp_collect_errors_total", &[("kind", "unreachable")]).is_some()
    });
    let plain = server.get("/metrics");
    let gzip = server.get_with("/metrics", &["Accept-Encoding: gzip"]);
    let again = server.get_with("/metrics", &["Accept-Encoding: deflate, br, gzip;q=0.5"]);
    let refused = server.get_with("/metrics", &["Accept-Encoding: gzip;q=0, br"]);
    for r in [&plain, &gzip, &again, &refused] {
        assert_eq!(r.status, 200);
        assert!(r.header("content-type").unwrap().starts_with("application/openmetrics-text"));
        assert!(
            r.header("vary").is_some_and(|v| v.to_ascii_lowercase().contains("accept-encoding")),
            "{:?}",
            r.headers
        );
        assert_eq!(r.header("cache-control"), Some("no-store"));
        assert_eq!(r.header("transfer-encoding"), None, "sent whole, with its length: {:?}", r.headers);
        assert_eq!(r.header("content-length"), Some(r.raw.len().to_string().as_str()), "{:?}", r.headers);
    }
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(refused.header("content-encoding"), None);
    assert_eq!(refused.raw, plain.raw);
    assert!(plain.body.ends_with("# EOF\n"), "{}", plain.body);
    assert_eq!(gzip.header("content-encoding"), Some("gzip"));
    assert_eq!(again.header("content-encoding"), Some("gzip"));
    assert_eq!(gzip.raw, again.raw, "two scrapes within one collection: the same bytes");
    let mut decoded = Vec::new();
    flate2::read::GzDecoder::new(&gzip.raw[..]).read_to_end(&mut decoded).expect("a gzip member");
    assert_eq!(decoded, plain.raw, "the gzip body decodes to the plain text");
    assert!(gzip.raw.len() < plain.raw.len());
    // HEAD: the same head, no body.
    let head = request(server.addr, "HEAD", "/metrics", &["Accept-Encoding: gzip"]);
    assert_eq!((head.status, head.header("content-encoding")), (200, Some("gzip")));
    assert_eq!(head.header("content-length"), Some(gzip.raw.len().to_string().as_str()));
    assert!(head.raw.is_empty());
}

#[test]
fn unknown_paths_methods_and_cluster_names_are_refused() {
    let server = Server::start(&["--bootstrap-server", UNREACHABLE, "--interval-ms", "60000"]);
    let r = server.get("/no/such/path");
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"], true);
    assert_eq!(server.get("/v3/kafka/other").status, 404);
    assert_eq!(server.get("/api/v1/clusters/other/groups").status, 404);
    for method in ["POST", "DELETE", "PUT"] {
        let r = request(server.addr, method, "/metrics", &["Content-Length: 0"]);
        assert_eq!(r.status, 405, "{method}");
        let r = request(server.addr, method, "/v3/kafka/default/consumer/g", &["Content-Length: 0"]);
        assert_eq!(r.status, 405, "{method} on a Burrow path: nothing that writes is served");
    }
    let page = server.get("/");
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && !csp.contains("unsafe"), "{csp}");
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
}

#[test]
fn bearer_and_basic_authentication() {
    let token = temp_file("token", "t0k3n-of-kcp\n");
    let server = Server::start(&[
        "--bootstrap-server",
        UNREACHABLE,
        "--interval-ms",
        "60000",
        "--bearer-token-file",
        token.to_str().unwrap(),
    ]);
    let refused = server.get("/metrics");
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    assert_eq!(server.get_with("/metrics", &["Authorization: Bearer wrong"]).status, 401);
    assert_eq!(server.get_with("/metrics", &["Authorization: Bearer t0k3n-of-kcp"]).status, 200);
    assert_eq!(server.get_with("/v3/kafka", &["Authorization: Bearer t0k3n-of-kcp"]).status, 200);
    assert_eq!(server.get("/v3/kafka").status, 401);
    assert_eq!(server.get("/healthz").status, 200, "health checks need no credentials");
    drop(server);

    let pair = temp_file("basic", "prom:pa55word\n");
    let server = Server::start(&[
        "--bootstrap-server",
        UNREACHABLE,
        "--interval-ms",
        "60000",
        "--basic-auth-file",
        pair.to_str().unwrap(),
    ]);
    assert_eq!(server.get("/metrics").status, 401);
    // base64("prom:pa55word")
    assert_eq!(server.get_with("/metrics", &["Authorization: Basic cHJvbTpwYTU1d29yZA=="]).status, 200);
    assert_eq!(server.get_with("/metrics", &["Authorization: Basic cHJvbTpvdGhlcg=="]).status, 401);
}

#[test]
fn huge_heads_and_urls_are_refused_and_the_server_goes_on() {
    let server = Server::start(&["--bootstrap-server", UNREACHABLE, "--interval-ms", "60000"]);
    let big = "x".repeat(64 * 1024);
    let header = format!("X-Big: {big}");
    let r = request(server.addr, "GET", "/healthz", &[&header]);
    assert_eq!(r.status, 431, "a 64 KiB header");
    let r = request(server.addr, "GET", &format!("/{big}"), &[]);
    assert!(matches!(r.status, 414 | 431), "a 64 KiB URL: {}", r.status);
    let many: Vec<String> = (0..2000).map(|i| format!("X-H{i}: v")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let r = request(server.addr, "GET", "/healthz", &refs);
    assert!(matches!(r.status, 431 | 400), "2,000 headers: {}", r.status);
    assert_eq!(server.get("/healthz").status, 200);
}

#[test]
fn a_slow_client_is_cut_off_and_extra_connections_are_closed() {
    let server =
        Server::start(&["--bootstrap-server", UNREACHABLE, "--interval-ms", "60000", "--max-connections", "4"]);
    // A head that never ends: closed after the 10 s head timeout.
    let mut slow = TcpStream::connect(server.addr).unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let started = Instant::now();
    let mut buf = Vec::new();
    let _ = slow.read_to_end(&mut buf);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(8) && waited < Duration::from_secs(18), "closed after {waited:?}");
    assert!(!String::from_utf8_lossy(&buf).contains("200 OK"), "{}", String::from_utf8_lossy(&buf));
    drop(slow);
    std::thread::sleep(Duration::from_millis(200));

    // Four idle connections hold every place; a fifth is closed at once.
    let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(server.addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut extra = TcpStream::connect(server.addr).unwrap();
    extra.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = extra.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut got = Vec::new();
    let started = Instant::now();
    let _ = extra.read_to_end(&mut got);
    assert!(got.is_empty() && started.elapsed() < Duration::from_secs(4), "{}", String::from_utf8_lossy(&got));
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.get("/healthz").status, 200, "places are given back");
}

#[test]
fn tls_serves_https_only() {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap().self_signed(&key).unwrap();
    let cert_file = temp_file("serve.pem", &cert.pem());
    let key_file = temp_file("serve.key", &key.serialize_pem());
    let server = Server::start(&[
        "--bootstrap-server",
        UNREACHABLE,
        "--interval-ms",
        "60000",
        "--tls-cert",
        cert_file.to_str().unwrap(),
        "--tls-key",
        key_file.to_str().unwrap(),
    ]);
    // Plain HTTP to the TLS port gets no HTTP answer.
    let plain = request(server.addr, "GET", "/healthz", &[]);
    assert_ne!(plain.status, 200);

    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.der().clone()).unwrap();
    let config =
        rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let mut sock = TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut tls = rustls::Stream::new(&mut conn, &mut sock);
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw);
    let r = serve_support::parse_response(&raw);
    assert_eq!((r.status, r.body.as_str()), (200, "ok\n"));
}

#[test]
fn a_config_file_names_several_clusters() {
    let config = temp_file(
        "clusters.json",
        &format!(
            r#"{{"clusters": [{{"name": "prod", "bootstrap_server": "{UNREACHABLE}"}}, {{"name": "dr.eu-1", "bootstrap_server": "127.0.0.1:2"}}]}}"#
        ),
    );
    let server = Server::start(&["--config", config.to_str().unwrap(), "--interval-ms", "60000"]);
    assert_eq!(server.get("/v3/kafka").json()["clusters"], serde_json::json!(["prod", "dr.eu-1"]));
    assert_eq!(server.get("/api/v1/clusters/dr.eu-1/groups").status, 200);
    let s = samples(
        &server
            .wait_for("/metrics", Duration::from_secs(10), "both collected", |r| {
                samples(&r.body).iter().filter(|s| s.name == "kcp_up").count() == 2
            })
            .body,
    );
    assert_eq!(value(&s, "kcp_up", &[("cluster_name", "prod")]), Some(0.0));
    assert_eq!(value(&s, "kcp_up", &[("cluster_name", "dr.eu-1")]), Some(0.0));

    // A typo in the file, or a name that cannot be a path segment, is a usage error.
    for (text, says) in [
        (r#"{"clusters": [{"name": "a", "bootstrap": "x:1"}]}"#, "unknown field"),
        (r#"{"clusters": [{"name": "a/b", "bootstrap_server": "x:1"}]}"#, "cluster name"),
        (r#"{"clusters": []}"#, "no cluster"),
    ] {
        let bad = temp_file("bad.json", text);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kcp"))
            .args(["serve", "--config", bad.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{text}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
