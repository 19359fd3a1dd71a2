//! One connection to one broker: frames written by a writer task, responses read by a reader
//! task and handed to the waiting caller by correlation id, so that several requests can be in
//! flight at once (the broker answers one connection's requests in order).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::Request;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::codec::{self, api_name};
use super::error::{ClientError, ErrorKind};

/// A byte stream to a broker: TCP, or TLS over TCP.
pub(crate) trait BrokerStream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> BrokerStream for T {}

type Reply = oneshot::Sender<Result<Bytes, ClientError>>;

struct Pending {
    waiting: HashMap<i32, Reply>,
    /// Why the connection ended; set once, then every request fails with it.
    closed: Option<ClientError>,
}

impl Pending {
    /// Ends the connection: every waiting request gets `error`.
    fn close(&mut self, error: ClientError) {
        if self.closed.is_none() {
            self.closed = Some(error.clone());
        }
        for (_, reply) in self.waiting.drain() {
            let _ = reply.send(Err(error.clone()));
        }
    }
}

/// A live connection. Dropping it stops its tasks and closes the socket.
pub(crate) struct Connection {
    /// `broker 1 (host:port)`, for messages.
    pub(crate) label: String,
    client_id: String,
    next_correlation: AtomicI32,
    pending: Arc<Mutex<Pending>>,
    frames: mpsc::UnboundedSender<Bytes>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
        self.writer.abort();
    }
}

impl Connection {
    /// Starts the reader and writer tasks over `stream`.
    pub(crate) fn start(stream: impl BrokerStream, label: String, client_id: String, max_frame: usize) -> Self {
        let (read_half, write_half) = tokio::io::split(stream);
        let pending = Arc::new(Mutex::new(Pending { waiting: HashMap::new(), closed: None }));
        let (frames, outgoing) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_loop(read_half, pending.clone(), label.clone(), max_frame));
        let writer = tokio::spawn(write_loop(write_half, outgoing, pending.clone(), label.clone()));
        Connection { label, client_id, next_correlation: AtomicI32::new(0), pending, frames, reader, writer }
    }

    /// Whether the connection has ended (the broker closed it, a frame was refused, ...).
    pub(crate) fn is_closed(&self) -> bool {
        self.pending.lock().map(|p| p.closed.is_some()).unwrap_or(true)
    }

    /// Sends `request` at `version` and waits for its response until `deadline`, then decodes
    /// it.
    ///
    /// A request that gets no answer by its deadline ends the connection, as Java's client does:
    /// the broker answers a connection's requests in order, so nothing sent after it could be
    /// answered first, and a broker that does not answer is best reached again afresh. The other
    /// requests in flight on it fail with the same timeout.
    pub(crate) async fn call<R: Request>(
        &self,
        request: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        let frame = self.call_frame(request, version, deadline).await?;
        codec::decode_response::<R::Response>(R::KEY, version, frame)
            .map_err(|e| e.context(format!("from {}", self.label)))
    }

    /// Like [`call`](Self::call), but returns the response frame (after its size) undecoded.
    pub(crate) async fn call_frame<R: Request>(
        &self,
        request: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<Bytes, ClientError> {
        let correlation = self.next_correlation.fetch_add(1, Ordering::Relaxed) & i32::MAX;
        let frame = codec::encode_request(request, version, correlation, &self.client_id)?;
        let (reply, response) = oneshot::channel();
        {
            let mut pending = self.pending.lock().map_err(|_| ClientError::protocol("connection state poisoned"))?;
            if let Some(error) = &pending.closed {
                return Err(error.clone());
            }
            pending.waiting.insert(correlation, reply);
        }
        if self.frames.send(frame).is_err() {
            return Err(ClientError::unreachable(format!("connection to {} is closed", self.label)));
        }
        let what = || format!("{} v{version} to {}", api_name(R::KEY), self.label);
        match tokio::time::timeout_at(deadline, response).await {
            Ok(Ok(Ok(frame))) => Ok(frame),
            Ok(Ok(Err(error))) => Err(error.context(what())),
            Ok(Err(_)) => Err(ClientError::unreachable(format!("{}: connection closed", what()))),
            Err(_) => {
                let mut pending =
                    self.pending.lock().map_err(|_| ClientError::protocol("connection state poisoned"))?;
                pending.waiting.remove(&correlation);
                let error = ClientError::timeout(format!("{}: no response before the deadline", what()));
                pending.close(error.clone());
                self.reader.abort();
                Err(error)
            }
        }
    }
}

async fn write_loop(
    mut stream: impl AsyncWrite + Unpin,
    mut frames: mpsc::UnboundedReceiver<Bytes>,
    pending: Arc<Mutex<Pending>>,
    label: String,
) {
    while let Some(frame) = frames.recv().await {
        let written = match stream.write_all(&frame).await {
            Ok(()) => stream.flush().await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            if let Ok(mut pending) = pending.lock() {
                pending.close(io_error("writing", &e).context(format!("to {label}")));
            }
            return;
        }
    }
    let _ = stream.shutdown().await;
}

async fn read_loop(stream: impl AsyncRead + Unpin, pending: Arc<Mutex<Pending>>, label: String, max_frame: usize) {
    let mut stream = BufReader::with_capacity(64 * 1024, stream);
    let error = loop {
        let frame = match read_frame(&mut stream, max_frame).await {
            Ok(frame) => frame,
            Err(error) => break error.context(format!("from {label}")),
        };
        let Some(correlation) = codec::correlation_id(&frame) else {
            break ClientError::protocol(format!(
                "from {label}: a response frame of {} bytes has no correlation id",
                frame.len()
            ));
        };
        let Ok(mut waiting) = pending.lock() else { return };
        // No waiter: the answer to a request abandoned at its deadline. A dropped receiver is a
        // caller that gave up. Either way there is nothing to do.
        if let Some(reply) = waiting.waiting.remove(&correlation) {
            drop(reply.send(Ok(frame)));
        }
    };
    if let Ok(mut pending) = pending.lock() {
        pending.close(error);
    }
}

/// A failed read or write: `tls` when TLS failed (an alert from the broker, such as a client
/// certificate it refuses), else `unreachable`.
fn io_error(doing: &str, e: &std::io::Error) -> ClientError {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        Some(tls) => {
            ClientError::new(ErrorKind::Tls, format!("{doing} failed: TLS: {}", super::tls::tls_error_text(tls)))
        }
        None => ClientError::unreachable(format!("{doing} failed: {e}")),
    }
}

/// The largest piece of a frame allocated before its bytes have arrived: a broker that
/// announces a large frame must send it to make the client hold it.
const READ_CHUNK: usize = 64 * 1024;

/// Reads one frame (its 4-byte size, then the bytes): the size is checked against `max_frame`
/// before anything is allocated, and the buffer grows only as bytes arrive.
pub(crate) async fn read_frame(stream: &mut (impl AsyncRead + Unpin), max_frame: usize) -> Result<Bytes, ClientError> {
    let mut size = [0u8; 4];
    if let Err(e) = stream.read_exact(&mut size).await {
        return Err(if e.kind() == std::io::ErrorKind::UnexpectedEof {
            ClientError::unreachable("the broker closed the connection")
        } else {
            io_error("reading", &e)
        });
    }
    let announced = i32::from_be_bytes(size);
    // A TLS record (alert 0x15 or handshake 0x16, version 3.x) read as a frame size: the broker
    // speaks TLS to a client that does not.
    if matches!(size, [0x15 | 0x16, 3, _, _]) {
        return Err(ClientError::new(
            ErrorKind::Tls,
            "the broker answered with TLS: the listener expects security.protocol SSL or SASL_SSL",
        ));
    }
    if announced < 4 || announced as u64 > max_frame as u64 {
        return Err(ClientError::protocol(format!(
            "response frame size {announced} is outside 4..={max_frame} (the largest accepted response)"
        )));
    }
    let len = announced as usize;
    let mut frame = BytesMut::with_capacity(len.min(READ_CHUNK));
    while frame.len() < len {
        let want = (len - frame.len()).min(READ_CHUNK);
        frame.reserve(want);
        let read = (&mut *stream).take(want as u64).read_buf(&mut frame).await;
        match read {
            Ok(0) => {
                return Err(ClientError::unreachable(format!(
                    "the broker closed the connection {} bytes into a {len}-byte response",
                    frame.len()
                )))
            }
            Ok(_) => {}
            Err(e) => return Err(io_error("reading", &e)),
        }
    }
    Ok(frame.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }

    #[test]
    fn frames_are_checked_before_allocation() {
        block_on(async {
            let mut two_gb: &[u8] = &[0x80, 0, 0, 0];
            let e = read_frame(&mut two_gb, 1 << 20).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol);
            assert!(e.message().contains("-2147483648"), "{e}");
            let mut big: &[u8] = &[0x7f, 0xff, 0xff, 0xff, 1, 2, 3];
            assert!(read_frame(&mut big, 100 << 20).await.unwrap_err().message().contains("2147483647"));
            let mut tiny: &[u8] = &[0, 0, 0, 3, 1, 2, 3];
            assert_eq!(read_frame(&mut tiny, 100).await.unwrap_err().kind(), ErrorKind::Protocol);
            let mut tls: &[u8] = &[0x15, 3, 3, 0, 2, 2, 40];
            assert_eq!(read_frame(&mut tls, 100).await.unwrap_err().kind(), ErrorKind::Tls);
            // Announced 1000 bytes, sent 5: the connection closing is reported, and only what
            // arrived was held.
            let mut short: &[u8] = &[0, 0, 3, 0xe8, 0, 0, 0, 1, 9];
            let e = read_frame(&mut short, 1 << 20).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Unreachable);
            assert!(e.message().contains("5 bytes into a 1000-byte"), "{e}");
            let mut empty: &[u8] = &[];
            assert_eq!(read_frame(&mut empty, 100).await.unwrap_err().kind(), ErrorKind::Unreachable);
            // A frame split over many reads arrives whole.
            let mut body = vec![0u8, 0, 0, 9];
            body.resize(4 + 200_000, 7u8);
            let mut framed = (body.len() as i32).to_be_bytes().to_vec();
            framed.extend_from_slice(&body);
            let mut slice = &framed[..];
            assert_eq!(read_frame(&mut slice, 1 << 20).await.unwrap(), body);
        });
    }
}
