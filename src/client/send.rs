//! The request machinery: sending a request at the negotiated version to a broker, a node or a
//! group's coordinator, and the retries (backoff, reconnection) bounded by the call's deadline.

use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::protocol::Request;

use super::pool::{BoxFuture, Live};
use super::{Client, ClientConfig, ClientError, Deadline, ErrorKind, Node, SendOptions, Sent, Target};

/// Backoff between retries: doubling from `retry.backoff.ms` to `retry.backoff.max.ms`.
pub(super) struct Backoff {
    next: Duration,
    max: Duration,
    attempts: u32,
}

impl Backoff {
    pub(super) fn new(config: &ClientConfig) -> Self {
        Backoff { next: config.retry_backoff, max: config.retry_backoff_max.max(config.retry_backoff), attempts: 1 }
    }

    /// Waits before the next attempt; `false` if the deadline would pass first.
    pub(super) async fn wait(&mut self, deadline: Deadline) -> bool {
        if deadline.remaining() <= self.next {
            return false;
        }
        tokio::time::sleep(self.next).await;
        self.next = (self.next * 2).min(self.max);
        self.attempts += 1;
        true
    }

    /// The error to report when the deadline ends the retries: a broker that stayed
    /// unreachable is `unreachable`, anything else a `timeout` naming the last error.
    pub(super) fn give_up(&self, last: ClientError) -> ClientError {
        if last.kind() == ErrorKind::Unreachable || last.kind() == ErrorKind::Timeout {
            return last;
        }
        let attempts = self.attempts;
        ClientError::timeout(format!("gave up at the deadline after {attempts} attempts: {last}"))
    }
}

/// How many times an idempotent request is sent when its connection keeps failing: a broker
/// that refuses connections is reported at once rather than at the deadline.
const MAX_ATTEMPTS: u32 = 3;

/// Whether a failed call may be repeated on a new connection: the connection was lost, or the
/// broker did not answer within `request.timeout.ms` (the overall deadline ends the loop).
pub(super) fn is_connection_error(e: &ClientError) -> bool {
    matches!(e.kind(), ErrorKind::Unreachable | ErrorKind::Timeout) && e.error_code().is_none()
}

impl Client {
    /// Sends one request built for the negotiated version on `live`.
    pub(super) async fn call_on<R: Request>(
        &self,
        live: &Live,
        options: &SendOptions,
        build: &impl Fn(i16) -> R,
    ) -> Result<(i16, R::Response), ClientError> {
        let version = live.versions.pick::<R>(options.max_version, &live.conn.label)?;
        let request = build(version);
        let timeout = options.request_timeout.unwrap_or(self.inner.config.request_timeout);
        let request_deadline = options.deadline.within(timeout);
        let response = live.conn.call(&request, version, request_deadline).await?;
        Ok((version, response))
    }

    /// Sends a request to `target` at the highest version both sides support (at most
    /// `options.max_version`); `build` makes the request for that version.
    ///
    /// Connecting is retried with backoff until the deadline (for a coordinator, finding it
    /// again), but a request that was sent is not sent again: when its connection is lost the
    /// error is `unreachable` and the caller decides. Error codes inside the response are the
    /// caller's to read; after NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE call
    /// [`forget_coordinator`](Self::forget_coordinator) before sending again.
    ///
    /// The responses of the APIs in [`DECODED_API_KEYS`](super::DECODED_API_KEYS) are checked against the bytes present
    /// before they are decoded. Other APIs' responses go straight to `kafka-protocol`, which
    /// pre-allocates each array by the count the broker sent: the frame cap bounds the bytes
    /// read, not that allocation, so only send them to brokers you trust.
    ///
    /// `R` is any request of the `kafka-protocol` crate (its `Request` trait), which a caller
    /// depends on itself, at the version this crate uses:
    ///
    /// ```no_run
    /// use kafka_consumer_protocol::client::{Client, Deadline, SendOptions, Target};
    /// use kafka_protocol::messages::{GroupId, HeartbeatRequest};
    /// use kafka_protocol::protocol::StrBytes;
    /// # async fn run(client: Client, member_id: StrBytes) -> Result<(), kafka_consumer_protocol::client::ClientError> {
    /// let deadline = Deadline::after(std::time::Duration::from_secs(10));
    /// let target = Target::Coordinator("orders".into());
    /// let sent = client
    ///     .send(&target, SendOptions::new(deadline), |_version| {
    ///         HeartbeatRequest::default()
    ///             .with_group_id(GroupId("orders".into()))
    ///             .with_generation_id(4)
    ///             .with_member_id(member_id.clone())
    ///     })
    ///     .await?;
    /// println!("Heartbeat v{}: error {}", sent.version, sent.response.error_code);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send<R: Request>(
        &self,
        target: &Target,
        options: SendOptions,
        build: impl Fn(i16) -> R,
    ) -> Result<Sent<R::Response>, ClientError> {
        let deadline = options.deadline;
        let mut backoff = Backoff::new(&self.inner.config);
        loop {
            let connected = self.target_connection(target, options.lane, deadline).await;
            let (live, broker) = match (connected, target) {
                (Ok(found), _) => found,
                // A coordinator that cannot be reached may have moved: find it again.
                (Err(e), Target::Coordinator(group)) if is_connection_error(&e) => {
                    self.forget_coordinator(group);
                    if !backoff.wait(deadline).await {
                        return Err(backoff.give_up(e));
                    }
                    continue;
                }
                (Err(e), _) => return Err(e),
            };
            let (version, response) = self.call_on(&live, &options, &build).await?;
            return Ok(Sent { version, broker, response });
        }
    }

    /// The connection for `target`. Finding a broker or a coordinator sends requests itself,
    /// through [`send`](Self::send): the boxed future breaks the cycle of future types.
    pub(super) fn target_connection<'a>(
        &'a self,
        target: &'a Target,
        lane: u8,
        deadline: Deadline,
    ) -> BoxFuture<'a, Result<(Arc<Live>, Node), ClientError>> {
        Box::pin(async move {
            match target {
                Target::AnyBroker => {
                    let (live, broker) = self.any_connection(deadline).await?;
                    let broker =
                        broker.unwrap_or_else(|| Node { node_id: -1, host: String::new(), port: 0, rack: None });
                    Ok((live, broker))
                }
                Target::Node(id) => {
                    let broker = self.broker(*id, deadline).await?;
                    Ok((self.broker_connection(&broker, lane, deadline).await?, broker))
                }
                Target::Coordinator(group) => {
                    let broker = self.coordinator(group, deadline).await?;
                    Ok((self.broker_connection(&broker, lane, deadline).await?, broker))
                }
            }
        })
    }

    /// An idempotent request with retries: a lost connection or a request timeout reconnects
    /// and sends again, [`MAX_ATTEMPTS`] times at most and until the deadline.
    pub(super) async fn call_retrying<R: Request>(
        &self,
        target: &Target,
        deadline: Deadline,
        build: impl Fn(i16) -> R,
    ) -> Result<Sent<R::Response>, ClientError> {
        let mut backoff = Backoff::new(&self.inner.config);
        loop {
            match self.send(target, SendOptions::new(deadline), &build).await {
                Err(e) if is_connection_error(&e) && !deadline.is_expired() && backoff.attempts < MAX_ATTEMPTS => {
                    if let Target::Coordinator(group) = target {
                        self.forget_coordinator(group);
                    }
                    if !backoff.wait(deadline).await {
                        return Err(backoff.give_up(e));
                    }
                }
                other => return other,
            }
        }
    }

    /// The API version range a broker supports for `api_key` (connecting to it if needed);
    /// `None` if it does not support the API.
    pub async fn api_versions(
        &self,
        target: &Target,
        api_key: i16,
        deadline: Deadline,
    ) -> Result<Option<(i16, i16)>, ClientError> {
        let (live, _) = self.target_connection(target, 0, deadline).await?;
        Ok(live.versions.range(api_key))
    }
}
