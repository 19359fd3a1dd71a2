//! A fake Kafka broker on loopback for the client's tests: it decodes each request's header
//! with `kafka-protocol` and lets the test answer with a response message, raw bytes, silence
//! or a closed connection.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{decode_request_header_from_buffer, Decodable, Encodable, HeaderVersion, Message};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the fake broker saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub api_key: i16,
    pub version: i16,
    pub correlation_id: i32,
    pub client_id: Option<String>,
    pub body: Bytes,
    /// Which connection (0, 1, ...) of this broker carried it.
    pub connection: usize,
}

impl Seen {
    /// Decodes the body as request type `R`.
    pub fn decode<R: Decodable>(&self) -> R {
        R::decode(&mut self.body.clone(), self.version).expect("request decodes")
    }
}

/// What the fake broker does with a request.
pub enum Reply {
    /// A response body (already encoded at the request's version), framed with the header.
    Body(Vec<u8>),
    /// Bytes written as they are (no framing).
    Raw(Vec<u8>),
    /// Answer nothing and keep the connection open.
    Silent,
    /// Close the connection.
    Close,
    /// Answer this request only after the next one, whose answer goes first.
    Later(Vec<u8>),
    /// Answer neither this request nor any later one on this connection, as a broker holds a
    /// connection's later requests behind one it has not answered yet (a JoinGroup).
    Hold,
}

/// Encodes a response message at `version` as a [`Reply::Body`].
pub fn body<M: Encodable>(message: &M, version: i16) -> Reply {
    Reply::Body(encode(message, version))
}

pub fn encode<M: Encodable>(message: &M, version: i16) -> Vec<u8> {
    let mut buf = BytesMut::new();
    message.encode(&mut buf, version).expect("response encodes");
    buf.to_vec()
}

pub type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

pub struct FakeBroker {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeBroker {
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The (api key, version) of every request seen, in order.
    pub fn calls(&self) -> Vec<(i16, i16)> {
        self.seen().iter().map(|s| (s.api_key, s.version)).collect()
    }
}

/// Starts a fake broker whose every connection is served by `handler`.
pub async fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> FakeBroker {
    start_with(handler, |stream| async move { Some(stream) }).await
}

/// Starts a fake broker; `wrap` turns each accepted TCP stream into the stream served (a TLS
/// acceptor, for example), or refuses it.
pub async fn start_with<S, W, Fut>(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static, wrap: W) -> FakeBroker
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    W: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Option<S>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handler: Handler = Arc::new(handler);
    let log = seen.clone();
    let wrap = Arc::new(wrap);
    tokio::spawn(async move {
        let mut connection = 0;
        while let Ok((tcp, _)) = listener.accept().await {
            let handler = handler.clone();
            let log = log.clone();
            let wrap = wrap.clone();
            let id = connection;
            connection += 1;
            tokio::spawn(async move {
                if let Some(stream) = wrap(tcp).await {
                    serve(stream, handler, log, id).await;
                }
            });
        }
    });
    FakeBroker { port, seen }
}

async fn serve(
    mut stream: impl AsyncRead + AsyncWrite + Unpin,
    handler: Handler,
    log: Arc<Mutex<Vec<Seen>>>,
    id: usize,
) {
    let mut held: Option<(Seen, Vec<u8>)> = None;
    let mut muted = false;
    loop {
        let mut size = [0u8; 4];
        if stream.read_exact(&mut size).await.is_err() {
            return;
        }
        // As a broker refuses a request above socket.request.max.bytes (a TLS ClientHello read
        // as a size, say): it closes the connection.
        let size = i32::from_be_bytes(size);
        if !(0..=100 << 20).contains(&size) {
            return;
        }
        let mut frame = vec![0u8; size as usize];
        if stream.read_exact(&mut frame).await.is_err() {
            return;
        }
        let mut buf = Bytes::from(frame);
        let header = decode_request_header_from_buffer(&mut buf).expect("request header decodes");
        let seen = Seen {
            api_key: header.request_api_key,
            version: header.request_api_version,
            correlation_id: header.correlation_id,
            client_id: header.client_id.as_ref().map(|c| c.to_string()),
            body: buf,
            connection: id,
        };
        log.lock().unwrap().push(seen.clone());
        if muted {
            continue;
        }
        let reply = handler(&seen);
        let mut out = Vec::new();
        match reply {
            Reply::Body(body) => out.extend(frame_response(&seen, &body)),
            Reply::Raw(bytes) => out.extend(bytes),
            Reply::Silent => {}
            Reply::Hold => {
                muted = true;
                continue;
            }
            Reply::Close => return,
            Reply::Later(body) => {
                held = Some((seen, body));
                continue;
            }
        }
        if let Some((earlier, body)) = held.take() {
            out.extend(frame_response(&earlier, &body));
        }
        if stream.write_all(&out).await.is_err() {
            return;
        }
        let _ = stream.flush().await;
    }
}

/// Frames a response body for `request`: size, correlation id, header tags if flexible.
pub fn frame_response(request: &Seen, body: &[u8]) -> Vec<u8> {
    let api = ApiKey::try_from(request.api_key).unwrap();
    let header_version = api.response_header_version(request.version);
    let mut header = BytesMut::new();
    ResponseHeader::default().with_correlation_id(request.correlation_id).encode(&mut header, header_version).unwrap();
    let mut out = BytesMut::new();
    out.put_i32((header.len() + body.len()) as i32);
    out.put_slice(&header);
    out.put_slice(body);
    out.to_vec()
}

/// ApiVersions entries for the APIs the client uses, at `kafka-protocol`'s full ranges.
pub fn all_api_versions() -> Vec<ApiVersion> {
    fn range<R: Message>(key: i16) -> ApiVersion {
        ApiVersion::default().with_api_key(key).with_min_version(R::VERSIONS.min).with_max_version(R::VERSIONS.max)
    }
    vec![
        range::<MetadataRequest>(3),
        range::<FindCoordinatorRequest>(10),
        range::<JoinGroupRequest>(11),
        range::<HeartbeatRequest>(12),
        range::<LeaveGroupRequest>(13),
        range::<SyncGroupRequest>(14),
        range::<DescribeGroupsRequest>(15),
        range::<ListGroupsRequest>(16),
        range::<SaslHandshakeRequest>(17),
        range::<ApiVersionsRequest>(18),
        range::<SaslAuthenticateRequest>(36),
        range::<ConsumerGroupDescribeRequest>(69),
    ]
}

/// An ApiVersions response advertising `apis`.
pub fn api_versions(request: &Seen, apis: Vec<ApiVersion>) -> Reply {
    body(&ApiVersionsResponse::default().with_api_keys(apis), request.version)
}

/// Caps one API's advertised maximum version.
pub fn cap(mut apis: Vec<ApiVersion>, key: i16, max: i16) -> Vec<ApiVersion> {
    for api in &mut apis {
        if api.api_key == key {
            api.max_version = max;
        }
    }
    apis
}

/// Reads a big-endian i32 at the start of a slice.
pub fn be_i32(b: &[u8]) -> i32 {
    (&b[..4]).get_i32()
}

/// Whether a `HeaderVersion` type uses a flexible header at `version` (for raw replies).
pub fn flexible_header<M: HeaderVersion>(version: i16) -> bool {
    M::header_version(version) >= 1
}
