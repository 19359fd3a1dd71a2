//! The HTTP side of `kcp serve`: hyper's HTTP/1.1 server with axum's router, read-only routes,
//! optional TLS (rustls) and bearer or basic authentication, and bounds for hostile clients.
//!
//! Bounds: at most `--max-connections` connections at once (more are closed on arrival); a
//! request head larger than 16 KiB is refused by hyper (431 or 414); a head not received within
//! 10 s, or a TLS handshake not finished within 10 s, closes the connection; at most 64
//! event streams at once (503 beyond). Only GET (and HEAD) routes exist: another method on a known
//! path is 405, an unknown path 404. Every response says `Cache-Control: no-store`,
//! `X-Content-Type-Options: nosniff` and a Content-Security-Policy that allows the page's own
//! script, style sheet and fetches only (no inline script or style, no eval).

use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::Engine as _;
use futures_util::StreamExt as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio::sync::{broadcast, Semaphore};

use super::state::Shared;
use super::{api, burrow, page, ServeArgs};
use crate::CliError;

/// The largest request head hyper reads.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long a client may take to send its request head, or to finish a TLS handshake.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Event streams served at once.
const MAX_EVENT_STREAMS: usize = 64;
/// The page's own script, style sheet and fetches only: no inline script or style, no eval, no
/// other origin.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'";

/// Who may ask, and over what.
pub(crate) struct Security {
    /// The SHA-256 of the `Authorization` header value every protected request must carry.
    authorization: Option<[u8; 32]>,
    /// What a 401 names (`Bearer` or `Basic realm="kcp"`).
    challenge: &'static str,
    pub(crate) tls: Option<tokio_rustls::TlsAcceptor>,
}

/// The first line of a secret file, without its line end.
fn first_line(path: &Path, what: &str) -> Result<String, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Config(format!("{what}: cannot read {}: {e}", path.display())))?;
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r').to_owned();
    if line.is_empty() {
        return Err(CliError::Config(format!("{what}: {} is empty", path.display())));
    }
    Ok(line)
}

impl Security {
    pub(crate) fn load(args: &ServeArgs) -> Result<Security, CliError> {
        let (authorization, challenge) = match (&args.bearer_token_file, &args.basic_auth_file) {
            (Some(_), Some(_)) => {
                return Err(CliError::usage("--bearer-token-file and --basic-auth-file: give one of them"))
            }
            (Some(path), None) => {
                let token = first_line(path, "--bearer-token-file")?;
                (Some(digest(format!("Bearer {token}").as_bytes())), "Bearer")
            }
            (None, Some(path)) => {
                let pair = first_line(path, "--basic-auth-file")?;
                if !pair.contains(':') {
                    return Err(CliError::Config(format!(
                        "--basic-auth-file: {} must hold USER:PASSWORD on its first line",
                        path.display()
                    )));
                }
                let encoded = base64::engine::general_purpose::STANDARD.encode(pair.as_bytes());
                (Some(digest(format!("Basic {encoded}").as_bytes())), "Basic realm=\"kcp\"")
            }
            (None, None) => (None, ""),
        };
        let tls = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(tls_acceptor(cert, key)?),
            _ => None,
        };
        Ok(Security { authorization, challenge, tls })
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn tls_acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor, CliError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| CliError::Config(format!("--tls-cert: {}: {e}", cert.display())))?;
    if certs.is_empty() {
        return Err(CliError::Config(format!("--tls-cert: {}: no certificate", cert.display())));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| CliError::Config(format!("--tls-key: {}: {e}", key.display())))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| CliError::Config(format!("TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| CliError::Config(format!("--tls-cert and --tls-key: {e}")))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// What every handler sees.
#[derive(Clone)]
struct App {
    shared: Arc<Shared>,
    security: Arc<(Option<[u8; 32]>, &'static str)>,
    streams: Arc<Semaphore>,
    host: Arc<str>,
    /// The upgrade-check verdicts of the group pages.
    verdicts: Arc<super::verdict::Verdicts>,
}

/// The machine's name, for Burrow's `request.host`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `value` as JSON, or Burrow's 404 saying `missing` (an unknown cluster, group or topic).
fn answer(app: &App, uri: &Uri, value: Option<Value>, missing: &str) -> Response {
    match value {
        Some(v) => json_response(StatusCode::OK, &v),
        None => not_found(uri, &app.host, missing),
    }
}

fn not_found(uri: &Uri, host: &str, message: &str) -> Response {
    json_response(StatusCode::NOT_FOUND, &burrow::error(message, uri.path(), host))
}

/// The server's routes.
fn router(app: App) -> Router {
    Router::new()
        .route("/", get(page_index))
        .route("/clusters/{cluster}", get(page_list))
        .route("/groups/{cluster}/{group}", get(page_group))
        .route(
            "/assets/app.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], page::APP_JS) }),
        )
        .route(
            "/assets/app.css",
            get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], page::APP_CSS) }),
        )
        // Browsers ask for it on their own; nothing to show, and no 404 in their consoles.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/burrow/admin", get(|| async { "GOOD" }))
        .route("/v3/kafka", get(v3_clusters))
        .route("/v3/kafka/{cluster}", get(v3_cluster))
        .route("/v3/kafka/{cluster}/topic", get(v3_topics))
        .route("/v3/kafka/{cluster}/topic/{topic}", get(v3_topic))
        .route("/v3/kafka/{cluster}/consumer", get(v3_consumers))
        .route("/v3/kafka/{cluster}/consumer/{group}", get(v3_consumer))
        .route("/v3/kafka/{cluster}/consumer/{group}/status", get(v3_status))
        .route("/v3/kafka/{cluster}/consumer/{group}/lag", get(v3_lag))
        .route("/api/v1/clusters", get(api_clusters))
        .route("/api/v1/clusters/{cluster}/groups", get(api_groups))
        .route("/api/v1/clusters/{cluster}/groups/{group}", get(api_group))
        .route("/api/v1/clusters/{cluster}/groups/{group}/history", get(api_history))
        .route("/api/v1/clusters/{cluster}/events", get(api_events))
        .fallback(fallback)
        .layer(middleware::from_fn_with_state(app.clone(), authenticate))
        .layer(middleware::map_response(secure_headers))
        // gzip where the client accepts it; never an event stream (the default predicate).
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(app)
}

async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// Every path but the health checks needs the configured credentials.
async fn authenticate(State(app): State<App>, request: Request, next: Next) -> Response {
    let (expected, challenge) = *app.security;
    let open = matches!(request.uri().path(), "/healthz" | "/readyz");
    if let (Some(expected), false) = (expected, open) {
        let given = request.headers().get(header::AUTHORIZATION).map(|v| digest(v.as_bytes()));
        if given != Some(expected) {
            let mut response = json_response(
                StatusCode::UNAUTHORIZED,
                &burrow::error("authentication required", request.uri().path(), &app.host),
            );
            if let Ok(value) = HeaderValue::from_str(challenge) {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
            return response;
        }
    }
    next.run(request).await
}

async fn fallback(State(app): State<App>, uri: Uri) -> Response {
    not_found(&uri, &app.host, "invalid request type")
}

/// The groups list of cluster `index`, as rendered after its last collection: gzipped where the
/// request accepts it (the compression layer leaves a response with a `Content-Encoding` alone).
fn list_response(app: &App, index: usize, headers: &HeaderMap) -> Response {
    let page = app.shared.list_page(index);
    let gzip = headers.get_all(header::ACCEPT_ENCODING).iter().any(|v| v.to_str().is_ok_and(page::accepts_gzip));
    let mut response = if gzip {
        let mut r = Html(page.gzip.clone()).into_response();
        r.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        r
    } else {
        Html(page.html.clone()).into_response()
    };
    response.headers_mut().insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    response
}

/// The groups list of the first cluster.
async fn page_index(State(app): State<App>, headers: HeaderMap) -> Response {
    if app.shared.clusters.is_empty() {
        return StatusCode::NOT_FOUND.into_response();
    }
    list_response(&app, 0, &headers)
}

async fn page_list(
    State(app): State<App>,
    UrlPath(cluster): UrlPath<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    match app.shared.clusters.iter().position(|c| c.spec.name == cluster) {
        Some(index) => list_response(&app, index, &headers),
        None => not_found(&uri, &app.host, "cluster not found"),
    }
}

async fn page_group(
    State(app): State<App>,
    UrlPath((cluster, group)): UrlPath<(String, String)>,
    Query(query): Query<Vec<(String, String)>>,
    uri: Uri,
) -> Response {
    // `?p=topic:partition`: the partitions charted.
    let selected = page::selected_partitions(query.iter().filter(|(k, _)| k == "p").map(|(_, v)| v.as_str()));
    let Some(handle) = app.shared.cluster(&cluster) else {
        return not_found(&uri, &app.host, "cluster or group not found");
    };
    let verdict = app.verdicts.of(handle, &group).await;
    match page::group_page(&app.shared, handle, &group, verdict.as_ref(), &selected) {
        Some(html) => Html(html).into_response(),
        None => not_found(&uri, &app.host, "cluster or group not found"),
    }
}

/// The OpenMetrics text: gzip-compressed when the scraper accepts gzip (Prometheus asks for it),
/// plain otherwise. Both were made when the snapshot was collected: the answer is a copy, with
/// its length, and the compression layer leaves a response that has a Content-Encoding alone.
async fn metrics(State(app): State<App>, headers: HeaderMap) -> Response {
    let body = app.shared.metrics_body();
    let gzip = !body.gzip.is_empty() && accepts_gzip(&headers);
    let mut response = (
        [
            (header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8"),
            (header::VARY, "accept-encoding"),
        ],
        if gzip { body.gzip } else { body.plain },
    )
        .into_response();
    if gzip {
        response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// Whether `Accept-Encoding` accepts gzip: `gzip` or `x-gzip` (or `*` when neither is named)
/// with a quality above 0 (RFC 9110, 12.5.3).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut named = None;
    let mut any = false;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let quality = parts
                .filter_map(|p| p.trim().split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
                .map_or(Some(1.0), |(_, q)| q.trim().parse::<f32>().ok());
            let accepted = quality.is_some_and(|q| q > 0.0);
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                // The best of what names it (`gzip;q=0, x-gzip` accepts it).
                named = Some(named.unwrap_or(false) || accepted);
            } else if coding == "*" {
                any |= accepted;
            }
        }
    }
    named.unwrap_or(any)
}

async fn readyz(State(app): State<App>) -> Response {
    if app.shared.ready() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready: a cluster has not been collected yet\n").into_response()
    }
}

async fn v3_clusters(State(app): State<App>, uri: Uri) -> Response {
    json_response(StatusCode::OK, &burrow::cluster_list(&app.shared, uri.path(), &app.host))
}

async fn v3_cluster(State(app): State<App>, UrlPath(cluster): UrlPath<String>, uri: Uri) -> Response {
    answer(
        &app,
        &uri,
        app.shared.cluster(&cluster).map(|c| burrow::cluster_detail(&app.shared, c, uri.path(), &app.host)),
        "cluster module not found",
    )
}

async fn v3_topics(State(app): State<App>, UrlPath(cluster): UrlPath<String>, uri: Uri) -> Response {
    answer(
        &app,
        &uri,
        app.shared.cluster(&cluster).map(|c| burrow::topic_list(c, uri.path(), &app.host)),
        "cluster not found",
    )
}

async fn v3_topic(State(app): State<App>, UrlPath((cluster, topic)): UrlPath<(String, String)>, uri: Uri) -> Response {
    answer(
        &app,
        &uri,
        app.shared.cluster(&cluster).and_then(|c| burrow::topic_detail(c, &topic, uri.path(), &app.host)),
        "cluster or topic not found",
    )
}

async fn v3_consumers(State(app): State<App>, UrlPath(cluster): UrlPath<String>, uri: Uri) -> Response {
    answer(
        &app,
        &uri,
        app.shared.cluster(&cluster).map(|c| burrow::consumer_list(c, uri.path(), &app.host)),
        "cluster not found",
    )
}

async fn v3_consumer(
    State(app): State<App>,
    UrlPath((cluster, group)): UrlPath<(String, String)>,
    uri: Uri,
) -> Response {
    answer(
        &app,
        &uri,
        app.shared.cluster(&cluster).and_then(|c| burrow::consumer_detail(c, &group, uri.path(), &app.host)),
        "cluster or consumer not found",
    )
}

fn v3_group_status(app: &App, cluster: &str, group: &str, show_all: bool, uri: &Uri) -> Response {
    let Some(c) = app.shared.cluster(cluster) else {
        return not_found(uri, &app.host, "cluster or consumer not found");
    };
    let (found, value) = burrow::consumer_status(&app.shared, c, group, show_all, uri.path(), &app.host);
    json_response(if found { StatusCode::OK } else { StatusCode::NOT_FOUND }, &value)
}

async fn v3_status(State(app): State<App>, UrlPath((cluster, group)): UrlPath<(String, String)>, uri: Uri) -> Response {
    v3_group_status(&app, &cluster, &group, false, &uri)
}

async fn v3_lag(State(app): State<App>, UrlPath((cluster, group)): UrlPath<(String, String)>, uri: Uri) -> Response {
    v3_group_status(&app, &cluster, &group, true, &uri)
}

async fn api_clusters(State(app): State<App>) -> Response {
    json_response(StatusCode::OK, &api::clusters(&app.shared))
}

async fn api_groups(State(app): State<App>, UrlPath(cluster): UrlPath<String>, uri: Uri) -> Response {
    answer(&app, &uri, app.shared.cluster(&cluster).map(api::groups), "cluster not found")
}

async fn api_history(
    State(app): State<App>,
    UrlPath((cluster, group)): UrlPath<(String, String)>,
    uri: Uri,
) -> Response {
    answer(&app, &uri, app.shared.cluster(&cluster).and_then(|c| api::history(c, &group)), "cluster or group not found")
}

async fn api_group(State(app): State<App>, UrlPath((cluster, group)): UrlPath<(String, String)>, uri: Uri) -> Response {
    answer(&app, &uri, app.shared.cluster(&cluster).and_then(|c| api::group(c, &group)), "cluster or group not found")
}

/// The cluster's change events as Server-Sent Events: the recent ones first (up to 256), then
/// each as it happens. Each event's data is one JSON object in `kcp group watch`'s shape, with
/// `cluster`; its SSE event name is the JSON's `event`.
async fn api_events(State(app): State<App>, UrlPath(cluster): UrlPath<String>, uri: Uri) -> Response {
    let Some(c) = app.shared.cluster(&cluster) else {
        return not_found(&uri, &app.host, "cluster not found");
    };
    let Ok(permit) = app.streams.clone().try_acquire_owned() else {
        return json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &burrow::error("too many event streams", uri.path(), &app.host),
        );
    };
    let receiver = c.events.subscribe();
    let recent: Vec<Arc<str>> = c.recent.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect();
    let live = futures_util::stream::unfold((receiver, permit), |(mut receiver, permit)| async move {
        loop {
            match receiver.recv().await {
                Ok(line) => return Some((line, (receiver, permit))),
                // A slow reader misses what the buffer dropped; the stream goes on.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    let stream = futures_util::stream::iter(recent).chain(live).map(|line: Arc<str>| {
        let name = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| v["event"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "message".into());
        Ok::<Event, Infallible>(Event::default().event(name).data(line.as_ref()))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

/// Accepts connections until `stop` turns true.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    security: Security,
    max_connections: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let app = App {
        shared,
        security: Arc::new((security.authorization, security.challenge)),
        streams: Arc::new(Semaphore::new(MAX_EVENT_STREAMS)),
        host: host_name().into(),
        verdicts: Arc::default(),
    };
    let tls = security.tls;
    let service = router(app);
    let connections = Arc::new(Semaphore::new(max_connections));
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors and the like: wait a moment rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        // Over the limit: closed at once.
        let Ok(permit) = connections.clone().try_acquire_owned() else { continue };
        let service = TowerToHyperService::new(service.clone());
        let tls = tls.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(HEAD_TIMEOUT).max_buf_size(MAX_HEAD_BYTES);
            match tls {
                Some(acceptor) => {
                    let Ok(Ok(stream)) = tokio::time::timeout(HEAD_TIMEOUT, acceptor.accept(stream)).await else {
                        return;
                    };
                    let _ = builder.serve_connection(TokioIo::new(stream), service).await;
                }
                None => {
                    let _ = builder.serve_connection(TokioIo::new(stream), service).await;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(values: &[&str]) -> bool {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        }
        accepts_gzip(&headers)
    }

    #[test]
    fn gzip_is_accepted_as_rfc_9110_says() {
        assert!(!accept(&[]), "no header: identity");
        assert!(accept(&["gzip"]));
        assert!(accept(&["deflate, GZIP;q=0.5"]));
        assert!(accept(&["x-gzip"]));
        assert!(accept(&["br", "gzip"]), "one header line of several");
        assert!(accept(&["*"]));
        assert!(!accept(&["gzip;q=0"]));
        assert!(!accept(&["gzip; q=0.000, *"]), "gzip refused by name: * does not bring it back");
        assert!(!accept(&["br, deflate"]));
        assert!(!accept(&["*;q=0"]));
        assert!(!accept(&["gzip;q=nonsense"]), "an unreadable quality accepts nothing");
        assert!(accept(&["gzip;q=0, x-gzip"]));
    }
}
