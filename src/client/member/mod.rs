//! A consumer-group member on the network: the sans-IO [`Coordinator`] driven by one tokio task.
//!
//! [`MemberDriver::start`] spawns the task. It owns the coordinator and does, in the coordinator's
//! handshake order (events, then requests, then timers):
//!
//! - fetches the cluster metadata before the first JoinGroup (the leader's assignors need the
//!   partition counts and replica racks) and again every [`MemberConfig::metadata_max_age`]
//!   (sooner, backing off to 10 s, while a subscribed topic is missing from it), feeding
//!   [`Coordinator::update_metadata`];
//! - sends JoinGroup, SyncGroup and LeaveGroup on one connection to the group coordinator and the
//!   heartbeats on another ([`Lane`]): a JoinGroup waits at the broker for up to the rebalance
//!   timeout and a broker answers one connection's requests in order, so heartbeats behind it would
//!   stall and the member would think its session expired;
//! - turns a lost connection or a timeout into the error response the coordinator already handles
//!   (the transport finds the coordinator again on the next request);
//! - runs the coordinator's timers from [`Coordinator::poll_timeout`];
//! - hands every listener callback to the application as a [`Delivery`] and, for `revoked`,
//!   `assigned` and `lost`, waits until the application drops it (its handling may be async) before
//!   it sends the next JoinGroup, SyncGroup or LeaveGroup, as Java runs the rebalance listener
//!   inside `poll()`. Heartbeats keep going meanwhile, as Java's heartbeat thread does. The time
//!   spent is recorded with [`Coordinator::record_listener_latency`];
//! - commits offsets for the application ([`MemberControl::commit`], [`MemberControl::commit_async`])
//!   in the member's generation, also from inside a `revoked` callback: the coordinator runs with
//!   [`Config::await_revocation`], so the generation stays valid and the JoinGroup (or LeaveGroup)
//!   waits until the revocation is acknowledged, after the callback's commits;
//! - fetches the committed offsets of newly assigned partitions before telling the application
//!   ([`Config::fetch_offsets_on_assign`], on by default): [`MemberEvent::Assigned`] carries them.
//!
//! The network is a [`GroupTransport`]; the crate's [`ClientTransport`]
//! speaks Kafka over TCP, and a client author can plug in their own connections instead.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::{sleep_until, Instant};

use crate::assignor::{ClusterMetadata, PartitionAssignor, RebalanceProtocol};
use crate::coordinator::{
    AssignmentDone, CommitError, Config, Coordinator, CoordinatorError, ErrorCode, Event, HeartbeatResponse,
    JoinGroupResponse, LeaveGroupResponse, ListenerKind, OffsetCommitResponse, OffsetFetchResponse, PartitionOffset,
    Request, RequestId, Response, SyncGroupResponse, Transmit,
};
use crate::group_api::{OffsetCommitPartitionResult, OffsetCommitTopicResult};
use crate::{PartitionSet, TopicPartitions};

#[cfg(all(test, feature = "sim"))]
mod tests;
mod transport;

pub use transport::ClientTransport;

/// Which connection to the group coordinator a request travels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// JoinGroup, SyncGroup and LeaveGroup.
    Group,
    /// Heartbeat, on a connection of its own so that it is never queued behind a JoinGroup the
    /// broker holds until the rebalance completes.
    Heartbeat,
}

/// Why a request got no response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportError {
    /// What went wrong.
    pub kind: TransportErrorKind,
    /// Detail for people.
    pub message: String,
}

/// The kinds of [`TransportError`], named as the CLI contract names connection errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// No broker (or not the coordinator) could be reached, or the connection closed.
    Unreachable,
    /// No response within the request timeout.
    Timeout,
    /// SASL authentication failed.
    Authentication,
    /// TLS handshake or certificate failure.
    Tls,
    /// The principal may not use the group or the topics.
    Authorization,
    /// The broker answered something that does not decode, or nothing this client can use.
    Protocol,
}

impl TransportErrorKind {
    /// The contract's name: `unreachable`, `timeout`, `authentication`, `tls`, `authorization`,
    /// `protocol`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportErrorKind::Unreachable => "unreachable",
            TransportErrorKind::Timeout => "timeout",
            TransportErrorKind::Authentication => "authentication",
            TransportErrorKind::Tls => "tls",
            TransportErrorKind::Authorization => "authorization",
            TransportErrorKind::Protocol => "protocol",
        }
    }

    /// Whether retrying can help: a member retries these forever (as Java does) and stops on the
    /// others (credentials, certificates and permissions do not fix themselves).
    pub fn is_retriable(self) -> bool {
        matches!(self, TransportErrorKind::Unreachable | TransportErrorKind::Timeout | TransportErrorKind::Protocol)
    }
}

impl TransportError {
    /// An error of `kind`.
    pub fn new(kind: TransportErrorKind, message: impl Into<String>) -> Self {
        TransportError { kind, message: message.into() }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for TransportError {}

/// What the member needs from the network: group requests to the group's coordinator and the
/// cluster's topic metadata.
///
/// Implementations find the coordinator themselves (FindCoordinator) and find it again after a
/// `NOT_COORDINATOR` or `COORDINATOR_NOT_AVAILABLE` answer or a lost connection, negotiate the
/// API versions, and bound every request by `timeout`. Broker error codes come back inside the
/// [`Response`]; `Err` is for requests that got no usable answer.
pub trait GroupTransport: Send + Sync + 'static {
    /// Sends `request` to the coordinator of `group_id` on `lane` and waits at most `timeout`.
    fn send(
        &self,
        group_id: &str,
        lane: Lane,
        request: Request,
        timeout: Duration,
    ) -> impl Future<Output = Result<Response, TransportError>> + Send;

    /// Every topic's partition count and each partition's replica racks.
    fn metadata(&self, timeout: Duration) -> impl Future<Output = Result<ClusterMetadata, TransportError>> + Send;
}

/// Configuration of a [`MemberDriver`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemberConfig {
    /// The coordinator's configuration: group id, static instance id, rack, timeouts.
    pub coordinator: Config,
    /// The topics to subscribe to.
    pub topics: Vec<String>,
    /// `metadata.max.age.ms`: how often the metadata is fetched again (Java's default, 5 minutes).
    pub metadata_max_age: Duration,
    /// How long the first metadata fetch may keep failing before the member gives up with a fatal
    /// error; `None` retries forever. Later failures are always retried.
    pub startup_timeout: Option<Duration>,
    /// `default.api.timeout.ms`: how long [`MemberControl::commit`] retries retriable errors
    /// (Java's default, 60 s).
    pub commit_timeout: Duration,
}

impl MemberConfig {
    /// A member of `group_id` subscribed to `topics`, with Java's defaults.
    pub fn new<I, T>(group_id: impl Into<String>, topics: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        MemberConfig {
            coordinator: Config::new(group_id).with_fetch_offsets_on_assign(true),
            topics: topics.into_iter().map(Into::into).collect(),
            metadata_max_age: Duration::from_millis(300_000),
            startup_timeout: None,
            commit_timeout: Duration::from_millis(60_000),
        }
    }
}

/// An error the member reports.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberError {
    /// The coordinator's error (a broker error code, an assignor failure, a payload that does not
    /// decode).
    Coordinator(CoordinatorError),
    /// The network's.
    Transport(TransportError),
}

impl fmt::Display for MemberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemberError::Coordinator(e) => write!(f, "{e}"),
            MemberError::Transport(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for MemberError {}

/// What the application hears from its member, in the order the listener callbacks fire.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberEvent {
    /// A JoinGroup completed: the member is in generation `generation_id` (the SyncGroup follows).
    Joined {
        /// The member id the broker gave it.
        member_id: String,
        /// The new generation.
        generation_id: i32,
        /// The rebalance protocol the member's assignors share.
        protocol: RebalanceProtocol,
        /// The assignor the group selected.
        assignor: String,
        /// Whether this member computed the assignment.
        leader: bool,
    },
    /// `onPartitionsRevoked`: the member gives `partitions` up.
    Revoked {
        /// The generation they belonged to (the last one joined).
        generation_id: i32,
        /// The partitions revoked.
        partitions: Vec<TopicPartitions>,
        /// What the member owns afterwards.
        owned: Vec<TopicPartitions>,
    },
    /// `onPartitionsAssigned`: eager: everything assigned; cooperative: what was added (fires
    /// after every rebalance, even empty).
    Assigned {
        /// The generation.
        generation_id: i32,
        /// The partitions the callback is about.
        partitions: Vec<TopicPartitions>,
        /// What the member owns afterwards.
        owned: Vec<TopicPartitions>,
        /// Where the group left `partitions`: their committed offsets, fetched before this
        /// event (with [`Config::fetch_offsets_on_assign`]); a partition never committed is
        /// absent (start it by your reset policy).
        committed: Vec<PartitionOffset>,
    },
    /// `onPartitionsLost`: the member fell out of the group; another member may own these already.
    Lost {
        /// The generation the member had.
        generation_id: i32,
        /// The partitions lost.
        partitions: Vec<TopicPartitions>,
        /// What the member owns afterwards.
        owned: Vec<TopicPartitions>,
    },
    /// An error. When `fatal`, the member has stopped (after reporting its partitions lost) and
    /// no further event follows.
    Error {
        /// The error.
        error: MemberError,
        /// Whether the member stopped.
        fatal: bool,
    },
    /// The member left the group (LeaveGroup sent unless static); the last event.
    Left,
}

impl MemberEvent {
    /// The listener callback this event runs, for those the member waits on.
    fn listener_kind(&self) -> Option<ListenerKind> {
        match self {
            MemberEvent::Revoked { .. } => Some(ListenerKind::Revoked),
            MemberEvent::Assigned { .. } => Some(ListenerKind::Assigned),
            MemberEvent::Lost { .. } => Some(ListenerKind::Lost),
            _ => None,
        }
    }
}

/// One event handed to the application. For `revoked`, `assigned` and `lost`, the member sends
/// no further group request until this value is dropped (or [`ack`](Self::ack)ed): finish the
/// callback's work first.
#[derive(Debug)]
pub struct Delivery {
    /// The event.
    pub event: MemberEvent,
    ack: Option<oneshot::Sender<()>>,
}

impl Delivery {
    /// Tells the member the callback is done (dropping the delivery does the same).
    pub fn ack(self) {
        drop(self);
    }

    /// Whether the member waits for this delivery's acknowledgement.
    pub fn awaits_ack(&self) -> bool {
        self.ack.is_some()
    }
}

/// Listener callbacks for [`MemberDriver::run`], Java's `ConsumerRebalanceListener` with async bodies.
/// Every method has an empty default.
pub trait RebalanceListener: Send {
    /// A JoinGroup completed.
    fn on_joined(
        &mut self,
        member_id: &str,
        generation_id: i32,
        assignor: &str,
        leader: bool,
    ) -> impl Future<Output = ()> + Send {
        let _ = (member_id, generation_id, assignor, leader);
        async {}
    }
    /// `onPartitionsRevoked`.
    fn on_partitions_revoked(&mut self, partitions: &[TopicPartitions]) -> impl Future<Output = ()> + Send {
        let _ = partitions;
        async {}
    }
    /// `onPartitionsAssigned`.
    fn on_partitions_assigned(&mut self, partitions: &[TopicPartitions]) -> impl Future<Output = ()> + Send {
        let _ = partitions;
        async {}
    }
    /// `onPartitionsLost`.
    fn on_partitions_lost(&mut self, partitions: &[TopicPartitions]) -> impl Future<Output = ()> + Send {
        let _ = partitions;
        async {}
    }
    /// A non-fatal error (the member retries by itself).
    fn on_error(&mut self, error: &MemberError) -> impl Future<Output = ()> + Send {
        let _ = error;
        async {}
    }
}

type CommitReply = oneshot::Sender<Result<Vec<PartitionOffset>, CommitError>>;

/// Application commands to the driver task.
#[derive(Debug)]
enum Command {
    Leave,
    Subscribe(Vec<String>),
    Commit { offsets: Vec<PartitionOffset>, reply: CommitReply },
    Committed(oneshot::Sender<Vec<PartitionOffset>>),
}

/// Sends commands to a running [`MemberDriver`]; cheap to clone.
#[derive(Clone, Debug)]
pub struct MemberControl {
    commands: mpsc::UnboundedSender<Command>,
    retry_backoff_ms: u64,
    commit_timeout: Duration,
}

/// The outcome of [`MemberControl::commit_async`]: await it, or drop it (the commit still goes).
#[derive(Debug)]
pub struct CommitHandle {
    reply: oneshot::Receiver<Result<Vec<PartitionOffset>, CommitError>>,
}

impl Future for CommitHandle {
    type Output = Result<Vec<PartitionOffset>, CommitError>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        // A member that stopped before answering cannot commit for its generation any more.
        std::pin::Pin::new(&mut self.reply).poll(cx).map(|r| r.unwrap_or(Err(CommitError::CommitFailed)))
    }
}

impl MemberControl {
    /// Leaves the group: revokes (or, mid-rebalance, loses) the owned partitions, sends
    /// LeaveGroup unless the member is static, then reports [`MemberEvent::Left`].
    pub fn leave(&self) {
        let _ = self.commands.send(Command::Leave);
    }

    /// Changes the subscription (a rejoin follows).
    pub fn subscribe<I, T>(&self, topics: I)
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let _ = self.commands.send(Command::Subscribe(topics.into_iter().map(Into::into).collect()));
    }

    /// Commits `offsets` once (Java `commitAsync`): no retry. Fails at once with
    /// [`CommitError::RebalanceInProgress`] while the member rebalances (complete the rebalance,
    /// then commit again), with [`CommitError::CommitFailed`] when the member is in no generation.
    /// Works from inside a `revoked` callback, before the delivery is acknowledged.
    pub fn commit_async(&self, offsets: Vec<PartitionOffset>) -> CommitHandle {
        let (reply, rx) = oneshot::channel();
        let _ = self.commands.send(Command::Commit { offsets, reply });
        CommitHandle { reply: rx }
    }

    /// Commits `offsets` and waits (Java `commitSync`): retriable errors are retried, backing
    /// off from `retry.backoff.ms` to 1 s, until [`MemberConfig::commit_timeout`]; the others
    /// are returned at once.
    pub async fn commit(&self, offsets: Vec<PartitionOffset>) -> Result<Vec<PartitionOffset>, CommitError> {
        let deadline = Instant::now() + self.commit_timeout;
        let mut attempt = 0;
        loop {
            match self.commit_async(offsets.clone()).await {
                Err(e) if e.is_retriable() && Instant::now() < deadline => {
                    tokio::time::sleep(backoff(self.retry_backoff_ms, attempt)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// The offsets committed for the partitions the member owns now: the last it committed, or
    /// what the group had committed when they were assigned. Empty once the member stopped.
    pub async fn committed(&self) -> Vec<PartitionOffset> {
        let (tx, rx) = oneshot::channel();
        let _ = self.commands.send(Command::Committed(tx));
        rx.await.unwrap_or_default()
    }
}

/// A running group member: the task that drives the member's [`Coordinator`] over the network
/// (named apart from the assignors' [`GroupMember`](crate::assignor::GroupMember), the member as
/// the leader's assignment reads it). Read its events with [`next`](Self::next) (a stream) or
/// hand them to a [`RebalanceListener`] with [`run`](Self::run). Dropping it leaves the group.
#[derive(Debug)]
pub struct MemberDriver {
    events: mpsc::UnboundedReceiver<Delivery>,
    control: MemberControl,
    task: Option<JoinHandle<()>>,
}

impl MemberDriver {
    /// Starts a member on the current tokio runtime. Fails when `assignors` is empty or they
    /// share no rebalance protocol.
    pub fn start<T: GroupTransport>(
        transport: T,
        config: MemberConfig,
        assignors: Vec<Box<dyn PartitionAssignor>>,
    ) -> Result<MemberDriver, CoordinatorError> {
        let origin = Instant::now();
        let mut config = config;
        // The driver acknowledges revocations itself (after the application's callback).
        config.coordinator.await_revocation = true;
        // The leader's assignment runs on a blocking thread, never on this task.
        config.coordinator.offload_assignment = true;
        let coordinator = Coordinator::new(config.coordinator.clone(), assignors, 0)?;
        let (events_tx, events) = mpsc::unbounded_channel();
        let (commands_tx, commands) = mpsc::unbounded_channel();
        let control = MemberControl {
            commands: commands_tx,
            retry_backoff_ms: config.coordinator.retry_backoff_ms,
            commit_timeout: config.commit_timeout,
        };
        let driver = Driver {
            coord: coordinator,
            transport: Arc::new(transport),
            config,
            origin,
            in_flight: JoinSet::new(),
            outbox: VecDeque::new(),
            held: VecDeque::new(),
            waiting: None,
            events: events_tx,
            commands,
            commands_open: true,
            owned: PartitionSet::new(),
            generation: -1,
            subscribed: false,
            metadata_due: Some(origin),
            metadata_in_flight: false,
            metadata_failures: 0,
            metadata_missing_topic: 0,
            transport_failures: Arc::new(AtomicU32::new(0)),
            leaving: false,
            leave_request: None,
            stopped: false,
            commit_replies: BTreeMap::new(),
            fetched: Vec::new(),
        };
        let task = tokio::spawn(driver.run());
        Ok(MemberDriver { events, control, task: Some(task) })
    }

    /// The next event; `None` once the member has stopped (after [`MemberEvent::Left`] or a fatal
    /// error).
    pub async fn next(&mut self) -> Option<Delivery> {
        self.events.recv().await
    }

    /// A handle to send commands from elsewhere (a signal handler, say).
    pub fn control(&self) -> MemberControl {
        self.control.clone()
    }

    /// Leaves the group; keep reading events until [`MemberEvent::Left`].
    pub fn leave(&self) {
        self.control.leave();
    }

    /// Runs `listener` until the member stops; when `shutdown` completes, leaves the group first.
    /// Returns the fatal error, if the member stopped on one.
    pub async fn run<L, S>(mut self, listener: &mut L, shutdown: S) -> Result<(), MemberError>
    where
        L: RebalanceListener,
        S: Future<Output = ()>,
    {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut shutting_down = false;
        loop {
            let delivery = tokio::select! {
                d = self.next() => d,
                () = &mut shutdown, if !shutting_down => {
                    shutting_down = true;
                    self.leave();
                    continue;
                }
            };
            let Some(delivery) = delivery else { return Ok(()) };
            match &delivery.event {
                MemberEvent::Joined { member_id, generation_id, assignor, leader, .. } => {
                    listener.on_joined(member_id, *generation_id, assignor, *leader).await
                }
                MemberEvent::Revoked { partitions, .. } => listener.on_partitions_revoked(partitions).await,
                MemberEvent::Assigned { partitions, .. } => listener.on_partitions_assigned(partitions).await,
                MemberEvent::Lost { partitions, .. } => listener.on_partitions_lost(partitions).await,
                MemberEvent::Error { error, fatal: true } => return Err(error.clone()),
                MemberEvent::Error { error, fatal: false } => listener.on_error(error).await,
                MemberEvent::Left => return Ok(()),
            }
        }
    }

    /// Waits until the driver task has ended (after [`MemberEvent::Left`] or a fatal error).
    pub async fn join(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// What a spawned request task reports back.
enum Completion {
    Group {
        id: RequestId,
        request: RequestKind,
        result: Result<Response, TransportError>,
    },
    Metadata(Result<ClusterMetadata, TransportError>),
    /// The leader's assignment, computed on a blocking thread (`Err`: the assignor panicked).
    Assignment(Result<AssignmentDone, String>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RequestKind {
    Join,
    Sync,
    Heartbeat,
    Leave,
    Commit,
    Fetch,
}

impl RequestKind {
    fn of(request: &Request) -> RequestKind {
        match request {
            Request::JoinGroup(_) => RequestKind::Join,
            Request::SyncGroup(_) => RequestKind::Sync,
            Request::Heartbeat(_) => RequestKind::Heartbeat,
            Request::LeaveGroup(_) => RequestKind::Leave,
            Request::OffsetCommit(_) => RequestKind::Commit,
            Request::OffsetFetch(_) => RequestKind::Fetch,
        }
    }

    /// The response the coordinator already handles for a request that got none: a coordinator
    /// error, so it backs off and retries (Java marks the coordinator unknown on a disconnect
    /// and retries the same way).
    fn failed(self, error: &TransportError) -> Response {
        let error = match error.kind {
            TransportErrorKind::Timeout => ErrorCode::REQUEST_TIMED_OUT,
            _ => ErrorCode::COORDINATOR_NOT_AVAILABLE,
        };
        match self {
            RequestKind::Join => Response::JoinGroup(JoinGroupResponse { error, ..Default::default() }),
            RequestKind::Sync => Response::SyncGroup(SyncGroupResponse { error, ..Default::default() }),
            RequestKind::Heartbeat => Response::Heartbeat(HeartbeatResponse { error }),
            RequestKind::Leave => Response::LeaveGroup(LeaveGroupResponse { error }),
            // The coordinator reads a commit's first partition error; one entry carries it.
            RequestKind::Commit => Response::OffsetCommit(OffsetCommitResponse {
                throttle_time_ms: 0,
                topics: vec![OffsetCommitTopicResult {
                    name: String::new(),
                    partitions: vec![OffsetCommitPartitionResult { partition: -1, error }],
                }],
            }),
            RequestKind::Fetch => Response::OffsetFetch(OffsetFetchResponse { error, ..Default::default() }),
        }
    }
}

/// An event the application has not acknowledged yet.
struct Waiting {
    ack: oneshot::Receiver<()>,
    kind: ListenerKind,
    since: Instant,
}

struct Driver<T> {
    coord: Coordinator,
    transport: Arc<T>,
    config: MemberConfig,
    origin: Instant,
    in_flight: JoinSet<Completion>,
    /// Events taken from the coordinator, not yet handed to the application.
    outbox: VecDeque<MemberEvent>,
    /// Group requests that wait until the application has acknowledged every earlier event.
    held: VecDeque<Transmit>,
    waiting: Option<Waiting>,
    events: mpsc::UnboundedSender<Delivery>,
    commands: mpsc::UnboundedReceiver<Command>,
    commands_open: bool,
    /// What the application owns after the events handed out so far.
    owned: PartitionSet,
    /// The generation of the last `joined` event.
    generation: i32,
    subscribed: bool,
    metadata_due: Option<Instant>,
    metadata_in_flight: bool,
    metadata_failures: u32,
    /// Consecutive metadata fetches that lacked a subscribed topic.
    metadata_missing_topic: u32,
    /// Consecutive group requests that got no answer.
    transport_failures: Arc<AtomicU32>,
    leaving: bool,
    leave_request: Option<RequestId>,
    stopped: bool,
    /// The application's commits waiting for their outcome.
    commit_replies: BTreeMap<RequestId, CommitReply>,
    /// Committed offsets fetched for the next `assigned` event.
    fetched: Vec<PartitionOffset>,
}

/// Backoff after `failures` consecutive failed metadata fetches: `retry.backoff.ms` doubling up
/// to `retry.backoff.max.ms` (Java's defaults, 100 ms and 1 s).
fn backoff(base_ms: u64, failures: u32) -> Duration {
    Duration::from_millis(base_ms.saturating_mul(1 << failures.min(10)).min(1_000))
}

/// Wait before looking again for a subscribed topic the metadata lacked, after `times`
/// consecutive fetches without it: `retry.backoff.ms` doubling up to 10 s, so a topic that never
/// comes costs one small Metadata request every 10 s.
fn missing_topic_backoff(base_ms: u64, times: u32) -> Duration {
    Duration::from_millis(base_ms.saturating_mul(1 << times.min(10)).min(10_000))
}

impl<T: GroupTransport> Driver<T> {
    fn now(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    fn at(&self, ms: u64) -> Instant {
        self.origin + Duration::from_millis(ms)
    }

    async fn run(mut self) {
        while !self.stopped {
            self.pump();
            if self.stopped {
                break;
            }
            let timer = self.coord.poll_timeout().map(|t| self.at(t));
            tokio::select! {
                command = self.commands.recv(), if self.commands_open => match command {
                    Some(Command::Leave) => self.leave(),
                    None => {
                        // Every handle is gone: nobody can ask us to stay.
                        self.commands_open = false;
                        self.leave();
                    }
                    Some(Command::Subscribe(topics)) => {
                        self.config.topics = topics;
                        if self.subscribed && !self.leaving {
                            let now = self.now();
                            self.coord.subscribe(now, self.config.topics.clone());
                        }
                    }
                    Some(Command::Commit { offsets, reply }) => {
                        let now = self.now();
                        match self.coord.commit(now, offsets) {
                            Ok(id) => {
                                self.commit_replies.insert(id, reply);
                            }
                            Err(e) => {
                                let _ = reply.send(Err(e));
                            }
                        }
                    }
                    Some(Command::Committed(reply)) => {
                        let _ = reply.send(self.coord.committed());
                    }
                },
                Some(done) = self.in_flight.join_next(), if !self.in_flight.is_empty() => {
                    if let Ok(done) = done {
                        self.complete(done);
                    }
                }
                _ = wait_ack(&mut self.waiting), if self.waiting.is_some() => {
                    if let Some(w) = self.waiting.take() {
                        let now = self.now();
                        self.coord.record_listener_latency(now, w.kind, w.since.elapsed().as_millis() as u64);
                        if w.kind == ListenerKind::Revoked {
                            // The callback (and its commits) is done: the rejoin or leave may go.
                            self.coord.revocation_done(now);
                        }
                    }
                }
                () = sleep_until(timer.unwrap_or_else(Instant::now)), if timer.is_some() => {
                    let now = self.now();
                    self.coord.handle_timeout(now);
                }
                () = sleep_until(self.metadata_due.unwrap_or_else(Instant::now)),
                    if self.metadata_due.is_some() && !self.metadata_in_flight => self.fetch_metadata(),
            }
        }
        // Outstanding heartbeats and metadata fetches are abandoned with the task.
        self.in_flight.abort_all();
    }

    /// Moves the coordinator's outputs along: its events to the outbox, the outbox to the
    /// application (one callback at a time), its requests to the network.
    fn pump(&mut self) {
        loop {
            let mut progress = false;
            while let Some(event) = self.coord.poll_event() {
                self.translate(event);
                progress = true;
            }
            let now = self.now();
            if let Some(job) = self.coord.poll_assignment() {
                // A slow assignor must not hold up this task: heartbeats go on meanwhile.
                self.in_flight.spawn(async move {
                    let done = tokio::task::spawn_blocking(move || job.run()).await;
                    Completion::Assignment(done.map_err(|e| e.to_string()))
                });
                progress = true;
            }
            while let Some(t) = self.coord.poll_request(now) {
                if let Request::SyncGroup(sync) = &t.request {
                    // Every SyncGroup follows a completed JoinGroup: the moment to say `joined`.
                    self.generation = sync.generation_id;
                    self.outbox.push_back(MemberEvent::Joined {
                        member_id: sync.member_id.clone(),
                        generation_id: sync.generation_id,
                        protocol: self.coord.protocol(),
                        assignor: sync.protocol_name.clone().unwrap_or_default(),
                        leader: self.coord.is_leader(),
                    });
                }
                // Heartbeats, commits (a revoke callback may be waiting for one) and offset
                // fetches never wait for the application.
                if matches!(t.request, Request::Heartbeat(_) | Request::OffsetCommit(_) | Request::OffsetFetch(_)) {
                    self.dispatch(t);
                } else {
                    self.held.push_back(t);
                }
                progress = true;
            }
            while self.waiting.is_none() && !self.stopped {
                let Some(event) = self.outbox.pop_front() else { break };
                self.deliver(event);
                progress = true;
            }
            if self.stopped {
                return;
            }
            if self.waiting.is_none() && self.outbox.is_empty() {
                while let Some(t) = self.held.pop_front() {
                    self.dispatch(t);
                    progress = true;
                }
            }
            if self.leaving
                && self.leave_request.is_none()
                && self.waiting.is_none()
                && self.outbox.is_empty()
                && self.held.is_empty()
            {
                self.deliver(MemberEvent::Left);
                self.stopped = true;
                return;
            }
            if !progress {
                return;
            }
        }
    }

    /// A coordinator event as the application sees it, with what it owns afterwards.
    fn translate(&mut self, event: Event) {
        let generation_id = self.generation;
        let out = match event {
            Event::PartitionsRevoked(partitions) => {
                let gone = PartitionSet::from_groups(&partitions);
                self.owned.retain(|t, p| !gone.contains(t, p));
                MemberEvent::Revoked { generation_id, partitions, owned: self.owned.to_groups() }
            }
            Event::PartitionsLost(partitions) => {
                let gone = PartitionSet::from_groups(&partitions);
                self.owned.retain(|t, p| !gone.contains(t, p));
                MemberEvent::Lost { generation_id, partitions, owned: self.owned.to_groups() }
            }
            Event::PartitionsAssigned(partitions) => {
                self.owned.extend(PartitionSet::from_groups(&partitions).iter());
                let committed = std::mem::take(&mut self.fetched);
                MemberEvent::Assigned { generation_id, partitions, owned: self.owned.to_groups(), committed }
            }
            Event::OffsetsFetched(offsets) => {
                self.fetched = offsets;
                return;
            }
            Event::CommitCompleted { id, result } => {
                if let Some(reply) = self.commit_replies.remove(&id) {
                    let _ = reply.send(result);
                }
                return;
            }
            Event::Assignment { .. } => return,
            Event::Error(e) => MemberEvent::Error { error: MemberError::Coordinator(e), fatal: false },
            Event::Fatal(e) => MemberEvent::Error { error: MemberError::Coordinator(e), fatal: true },
        };
        self.outbox.push_back(out);
    }

    fn deliver(&mut self, event: MemberEvent) {
        let fatal = matches!(event, MemberEvent::Error { fatal: true, .. });
        let (ack, waiting) = match event.listener_kind() {
            Some(kind) => {
                let (tx, rx) = oneshot::channel();
                (Some(tx), Some(Waiting { ack: rx, kind, since: Instant::now() }))
            }
            None => (None, None),
        };
        if self.events.send(Delivery { event, ack }).is_ok() {
            self.waiting = waiting;
        } else if !self.leaving {
            // Nobody listens any more: leave as a dropped Java consumer's close() would.
            self.leave();
        }
        if fatal {
            self.held.clear();
            self.stopped = true;
        }
    }

    fn leave(&mut self) {
        if self.leaving {
            return;
        }
        self.leaving = true;
        self.metadata_due = None;
        let now = self.now();
        self.coord.leave(now);
    }

    fn dispatch(&mut self, t: Transmit) {
        let kind = RequestKind::of(&t.request);
        let config = &self.config.coordinator;
        // Java's JoinGroup timeout: the broker holds it for up to the rebalance timeout.
        let timeout = Duration::from_millis(match kind {
            RequestKind::Join => config.request_timeout_ms.max(config.rebalance_timeout_ms + 5_000),
            _ => config.request_timeout_ms,
        });
        let lane = if kind == RequestKind::Heartbeat { Lane::Heartbeat } else { Lane::Group };
        if kind == RequestKind::Leave {
            self.leave_request = Some(t.id);
        }
        let transport = Arc::clone(&self.transport);
        let group_id = config.group_id.clone();
        let failures = Arc::clone(&self.transport_failures);
        let base_ms = config.retry_backoff_ms;
        self.in_flight.spawn(async move {
            let result = transport.send(&group_id, lane, t.request, timeout).await;
            if result.is_err() {
                // While the coordinator is unreachable, each failure is reported a little later
                // than the last (retry.backoff.ms doubling to 1 s): the coordinator retries on
                // its own backoff, which is fixed.
                let n = failures.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(backoff(base_ms, n)).await;
            } else {
                failures.store(0, Ordering::Relaxed);
            }
            Completion::Group { id: t.id, request: kind, result }
        });
    }

    fn fetch_metadata(&mut self) {
        self.metadata_due = None;
        self.metadata_in_flight = true;
        let transport = Arc::clone(&self.transport);
        let mut timeout = Duration::from_millis(self.config.coordinator.request_timeout_ms);
        if let (false, Some(limit)) = (self.subscribed, self.config.startup_timeout) {
            // The first fetch must not outlast the startup timeout (the transport may retry
            // inside one call until its timeout).
            timeout = timeout.min(limit.saturating_sub(self.origin.elapsed())).max(Duration::from_millis(1));
        }
        self.in_flight.spawn(async move { Completion::Metadata(transport.metadata(timeout).await) });
    }

    fn complete(&mut self, done: Completion) {
        let now = self.now();
        match done {
            Completion::Group { id, request, result } => {
                if self.leave_request == Some(id) {
                    // Whatever the answer, the member has left.
                    self.leave_request = None;
                    return;
                }
                let response = match result {
                    Ok(response) => response,
                    Err(e) => {
                        let response = request.failed(&e);
                        self.report_transport_error(e);
                        response
                    }
                };
                self.coord.handle_response(now, id, response);
            }
            Completion::Assignment(Ok(done)) => self.coord.handle_assignment(now, done),
            Completion::Assignment(Err(panic)) => {
                // The assignor is gone with its thread: this member cannot lead any more.
                let error =
                    MemberError::Coordinator(CoordinatorError::Leader(crate::assignor::leader::LeaderError::Assign(
                        crate::assignor::AssignError::AssignorPanicked(panic.to_string()),
                    )));
                self.leave_without_request(now);
                self.outbox.push_back(MemberEvent::Error { error, fatal: true });
            }
            Completion::Metadata(result) => {
                self.metadata_in_flight = false;
                match result {
                    Ok(metadata) => {
                        self.metadata_failures = 0;
                        self.coord.update_metadata(now, metadata);
                        if !self.subscribed && !self.leaving {
                            self.subscribed = true;
                            self.coord.subscribe(now, self.config.topics.clone());
                        }
                        // A subscribed topic the cluster does not show yet (just created, or its
                        // metadata not yet on every broker) is looked for again soon rather than
                        // after metadata.max.age: a leader that assigned without it rejoins as
                        // soon as it appears (the coordinator compares partition counts).
                        let known = &self.coord.metadata().topics;
                        let missing = self.coord.subscription().iter().any(|t| !known.contains_key(t));
                        let wait = if missing {
                            self.metadata_missing_topic = self.metadata_missing_topic.saturating_add(1);
                            missing_topic_backoff(self.config.coordinator.retry_backoff_ms, self.metadata_missing_topic)
                        } else {
                            self.metadata_missing_topic = 0;
                            self.config.metadata_max_age
                        };
                        self.metadata_due = Some(Instant::now() + wait.min(self.config.metadata_max_age));
                    }
                    Err(e) => {
                        let startup_over = self
                            .config
                            .startup_timeout
                            .is_some_and(|limit| !self.subscribed && self.origin.elapsed() >= limit);
                        if startup_over || !e.kind.is_retriable() {
                            self.outbox.push_back(MemberEvent::Error { error: MemberError::Transport(e), fatal: true });
                            return;
                        }
                        self.outbox.push_back(MemberEvent::Error { error: MemberError::Transport(e), fatal: false });
                        self.metadata_failures += 1;
                        let wait = backoff(self.config.coordinator.retry_backoff_ms, self.metadata_failures);
                        self.metadata_due = Some(Instant::now() + wait);
                    }
                }
            }
        }
    }

    /// A request that got no answer: the coordinator retries by itself; the application hears
    /// of it, and a failure no retry can mend (credentials, certificates, permissions) stops the
    /// member.
    fn report_transport_error(&mut self, e: TransportError) {
        let fatal = !e.kind.is_retriable();
        if fatal && !self.leaving {
            let now = self.now();
            self.leave_without_request(now);
        }
        self.outbox.push_back(MemberEvent::Error { error: MemberError::Transport(e), fatal });
    }

    /// Stops after a fatal transport error: what is owned is lost (the member cannot reach the
    /// group to hand it over).
    fn leave_without_request(&mut self, now: u64) {
        let _ = now;
        if !self.owned.is_empty() {
            let partitions = self.owned.to_groups();
            self.owned.clear();
            self.outbox.push_back(MemberEvent::Lost { generation_id: self.generation, partitions, owned: Vec::new() });
        }
        self.leaving = true;
        self.metadata_due = None;
        self.held.clear();
    }
}

async fn wait_ack(waiting: &mut Option<Waiting>) {
    match waiting {
        // A dropped sender is an acknowledgement too.
        Some(w) => {
            let _ = (&mut w.ack).await;
        }
        None => std::future::pending().await,
    }
}
