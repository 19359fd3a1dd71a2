//! A sans-IO consumer-group member coordinator (classic protocol with KIP-429 cooperative
//! rebalancing), shaped like `quinn-proto`: no sockets, no clocks, no threads.
//!
//! Every input carries `now`, a monotonic time in milliseconds from any origin. The caller
//! feeds inputs and drains outputs:
//!
//! - inputs: [`Coordinator::handle_response`], [`Coordinator::handle_timeout`],
//!   [`Coordinator::subscribe`], [`Coordinator::update_metadata`], [`Coordinator::leave`];
//! - outputs, drained after every input **in this order**: [`Coordinator::poll_event`]
//!   (listener callbacks: run them before sending anything), [`Coordinator::poll_request`]
//!   (requests to send), [`Coordinator::poll_timeout`] (when to call `handle_timeout`).
//!
//! ```
//! use kafka_consumer_protocol::assignor::{
//!     AssignError, ClusterMetadata, GroupAssignment, GroupMember, PartitionAssignor,
//! };
//! use kafka_consumer_protocol::coordinator::*;
//! use kafka_consumer_protocol::{Assignment, AssignmentView, TopicPartitions, Version};
//!
//! /// Gives every partition of every topic to the first member.
//! struct First;
//! impl PartitionAssignor for First {
//!     fn name(&self) -> &str { "first" }
//!     fn assign(&self, md: &ClusterMetadata, members: &[GroupMember])
//!         -> Result<GroupAssignment, AssignError> {
//!         let mut out = GroupAssignment::new();
//!         for (i, m) in members.iter().enumerate() {
//!             let parts = if i > 0 { vec![] } else {
//!                 md.topics.iter().map(|(t, info)| TopicPartitions::new(t.clone(), (0..info.partitions).collect::<Vec<_>>())).collect()
//!             };
//!             out.insert(m.member_id.clone(), &Assignment::new(parts));
//!         }
//!         Ok(out)
//!     }
//! }
//!
//! let mut c = Coordinator::new(Config::new("g"), vec![Box::new(First)], 0).unwrap();
//! c.update_metadata(0, ClusterMetadata::from_counts([("orders", 2)]));
//! c.subscribe(0, ["orders"]);
//! let join = c.poll_request(0).expect("JoinGroup");
//! assert!(matches!(join.request, Request::JoinGroup(_)));
//! // The broker asks for a member id first (KIP-394), then completes the join.
//! c.handle_response(1, join.id, Response::JoinGroup(JoinGroupResponse {
//!     error: ErrorCode::MEMBER_ID_REQUIRED, member_id: "m1".into(), ..Default::default() }));
//! let join = c.poll_request(1).unwrap();
//! let Request::JoinGroup(req) = &join.request else { panic!() };
//! assert_eq!(req.member_id, "m1");
//! let metadata = req.protocols[0].metadata.clone();
//! c.handle_response(2, join.id, Response::JoinGroup(JoinGroupResponse {
//!     generation_id: 1, member_id: "m1".into(), leader: "m1".into(),
//!     protocol_name: Some("first".into()),
//!     members: vec![JoinGroupMember { member_id: "m1".into(), group_instance_id: None, metadata }],
//!     ..Default::default() }));
//! let sync = c.poll_request(2).unwrap();
//! let Request::SyncGroup(req) = &sync.request else { panic!() };
//! let mine = req.assignments[0].assignment.clone();
//! c.handle_response(3, sync.id, Response::SyncGroup(SyncGroupResponse {
//!     assignment: mine, ..Default::default() }));
//! assert_eq!(c.state(), State::Stable);
//! let events: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
//! assert!(matches!(events.last(), Some(Event::PartitionsAssigned(p)) if p[0].partitions == [0, 1]));
//! ```
//!
//! The drains above, in that order, are the handshake a driver follows; the polls are
//! `#[must_use]` because a request or an event left queued stalls the member. The leader's work
//! lives in [`assignor::leader`](crate::assignor::leader), the messages in
//! [`group_api`](crate::group_api), the network driver in `client::member`. The member's clocks
//! (heartbeat, session, rejoin backoff) are one timer table (`timers.rs`).

mod assignment;
mod io;
mod metrics;
mod offsets;
mod timers;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use bytes::Bytes;

/// The messages the coordinator sends and receives, re-exported from [`group_api`](crate::group_api).
pub use crate::group_api::{
    ErrorCode, HeartbeatRequest, HeartbeatResponse, JoinGroupMember, JoinGroupProtocol, JoinGroupRequest,
    JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest, OffsetCommitResponse,
    OffsetFetchRequest, OffsetFetchResponse, SyncGroupAssignment, SyncGroupRequest, SyncGroupResponse,
};
use assignment::Away;
pub use assignment::{AssignmentDone, AssignmentJob};
pub use io::{Request, RequestId, Response, Transmit};
pub use metrics::{ListenerKind, Metrics};
pub use offsets::{CommitError, PartitionOffset};
use offsets::{PendingAssign, PendingCommit};
use timers::Timers;

use crate::assignor::leader::{self, LeaderError};
use crate::assignor::{ClusterMetadata, GroupAssignment, PartitionAssignor, RebalanceProtocol};
use crate::{AssignmentView, DecodeError, EncodeError, PartitionSet, Subscription, TopicPartitions, Version};

/// Member configuration (Java consumer config names in the field docs).
///
/// `#[non_exhaustive]` (Java keeps adding consumer settings): start from [`Config::new`], then
/// the `with_*` setters or assign the public fields.
///
/// ```
/// use kafka_consumer_protocol::coordinator::Config;
/// let config = Config::new("orders").with_group_instance_id("host-a").with_session_timeout_ms(10_000);
/// assert_eq!((config.session_timeout_ms, config.heartbeat_interval_ms), (10_000, 3_000));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// `group.id`.
    pub group_id: String,
    /// `group.instance.id` (static membership).
    pub group_instance_id: Option<String>,
    /// `client.rack`, sent in subscriptions v3.
    pub client_rack: Option<String>,
    /// `session.timeout.ms` (default 45000).
    pub session_timeout_ms: u64,
    /// `max.poll.interval.ms`, the rebalance timeout (default 300000).
    pub rebalance_timeout_ms: u64,
    /// `heartbeat.interval.ms` (default 3000).
    pub heartbeat_interval_ms: u64,
    /// `retry.backoff.ms` (default 100).
    pub retry_backoff_ms: u64,
    /// `request.timeout.ms` (default 30000).
    pub request_timeout_ms: u64,
    /// Fetch the committed offsets of newly assigned partitions (OffsetFetch with
    /// `require_stable`) before announcing them: [`Event::OffsetsFetched`] comes right before
    /// [`Event::PartitionsAssigned`]. Off by default, so a caller that does not read offsets sends
    /// nothing more than before; the network member turns it on.
    pub fetch_offsets_on_assign: bool,
    /// After [`Event::PartitionsRevoked`], send no JoinGroup or LeaveGroup (and keep the
    /// generation) until [`Coordinator::revocation_done`], so the application can commit the
    /// revoked partitions' offsets in its callback, as Java's `onPartitionsRevoked` can. Off by
    /// default; the network member turns it on.
    pub await_revocation: bool,
    /// As leader, hand the assignment out as an [`AssignmentJob`]
    /// ([`Coordinator::poll_assignment`]) to run elsewhere (a blocking thread) instead of
    /// computing it inside [`Coordinator::handle_response`], so that a slow assignor never holds
    /// up the caller's heartbeats. Off by default; the network member turns it on.
    pub offload_assignment: bool,
}

impl Config {
    /// Java's defaults for group `group_id`.
    pub fn new(group_id: impl Into<String>) -> Self {
        Config {
            group_id: group_id.into(),
            group_instance_id: None,
            client_rack: None,
            session_timeout_ms: 45_000,
            rebalance_timeout_ms: 300_000,
            heartbeat_interval_ms: 3_000,
            retry_backoff_ms: 100,
            request_timeout_ms: 30_000,
            fetch_offsets_on_assign: false,
            await_revocation: false,
            offload_assignment: false,
        }
    }

    /// With a `group.instance.id` (static membership).
    pub fn with_group_instance_id(mut self, id: impl Into<String>) -> Self {
        self.group_instance_id = Some(id.into());
        self
    }

    /// With a `client.rack`.
    pub fn with_client_rack(mut self, rack: impl Into<String>) -> Self {
        self.client_rack = Some(rack.into());
        self
    }

    /// With this `session.timeout.ms`.
    pub fn with_session_timeout_ms(mut self, ms: u64) -> Self {
        self.session_timeout_ms = ms;
        self
    }

    /// With this `max.poll.interval.ms` (the rebalance timeout).
    pub fn with_rebalance_timeout_ms(mut self, ms: u64) -> Self {
        self.rebalance_timeout_ms = ms;
        self
    }

    /// With this `heartbeat.interval.ms`.
    pub fn with_heartbeat_interval_ms(mut self, ms: u64) -> Self {
        self.heartbeat_interval_ms = ms;
        self
    }

    /// With this `retry.backoff.ms`.
    pub fn with_retry_backoff_ms(mut self, ms: u64) -> Self {
        self.retry_backoff_ms = ms;
        self
    }

    /// With this `request.timeout.ms`.
    pub fn with_request_timeout_ms(mut self, ms: u64) -> Self {
        self.request_timeout_ms = ms;
        self
    }

    /// With [`fetch_offsets_on_assign`](Self::fetch_offsets_on_assign) set to `on`.
    pub fn with_fetch_offsets_on_assign(mut self, on: bool) -> Self {
        self.fetch_offsets_on_assign = on;
        self
    }

    /// With [`offload_assignment`](Self::offload_assignment) set to `on`.
    pub fn with_offload_assignment(mut self, on: bool) -> Self {
        self.offload_assignment = on;
        self
    }

    /// With [`await_revocation`](Self::await_revocation) set to `on`.
    pub fn with_await_revocation(mut self, on: bool) -> Self {
        self.await_revocation = on;
        self
    }
}

/// The member's state, as Java's `MemberState` plus the two terminal states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Not in a group (never joined, or reset, or left).
    Unjoined,
    /// JoinGroup sent, waiting for the join barrier.
    PreparingRebalance,
    /// Joined a generation, waiting for SyncGroup.
    CompletingRebalance,
    /// Has its assignment for the current generation.
    Stable,
    /// Stopped on a fatal error; see [`Event::Fatal`].
    Fatal,
}

/// An error surfaced to the application.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CoordinatorError {
    /// Construction: no assignors configured.
    NoAssignors,
    /// Construction: the assignors share no rebalance protocol.
    NoCommonProtocol(Vec<String>),
    /// The broker answered with an error the member cannot recover from.
    Broker {
        /// The API that failed.
        api: &'static str,
        /// The error.
        error: ErrorCode,
    },
    /// The broker selected a protocol this member has no assignor for.
    UnknownProtocol(String),
    /// The assignment this member received does not decode (the member rejoins).
    Assignment(DecodeError),
    /// This member's subscription cannot be encoded.
    Encode(EncodeError),
    /// As leader, the round failed: a member's subscription does not decode, the assignor failed
    /// (or a custom cooperative assignor violated the protocol), or a member's assignment cannot
    /// be encoded; the member ids are kept.
    Leader(LeaderError),
}

impl fmt::Display for CoordinatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordinatorError::NoAssignors => write!(f, "no partition assignors configured"),
            CoordinatorError::NoCommonProtocol(names) => {
                write!(f, "Specified assignors {names:?} do not have commonly supported rebalance protocol")
            }
            CoordinatorError::Broker { api, error } => write!(f, "{api} failed: {error}"),
            CoordinatorError::UnknownProtocol(p) => {
                write!(f, "Coordinator selected invalid assignment protocol: {p}")
            }
            CoordinatorError::Assignment(e) => write!(f, "embedded protocol error: assignment: {e}"),
            CoordinatorError::Encode(e) => write!(f, "embedded protocol error: {e}"),
            CoordinatorError::Leader(LeaderError::Assign(e)) => write!(f, "{e}"),
            CoordinatorError::Leader(e) => write!(f, "embedded protocol error: {e}"),
        }
    }
}

impl std::error::Error for CoordinatorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CoordinatorError::Assignment(error) => Some(error),
            CoordinatorError::Encode(e) => Some(e),
            CoordinatorError::Leader(e) => Some(e),
            _ => None,
        }
    }
}

impl From<LeaderError> for CoordinatorError {
    fn from(e: LeaderError) -> Self {
        CoordinatorError::Leader(e)
    }
}

/// What the application sees, in the order the KIP prescribes: lost, revoked, the assignor's
/// `onAssignment`, assigned. `#[non_exhaustive]`: match with a `_` arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// `onPartitionsLost`: the member fell out of the group (never empty).
    PartitionsLost(Vec<TopicPartitions>),
    /// `onPartitionsRevoked`: eager: everything before joining (even empty); cooperative: only
    /// what moves away (never empty).
    PartitionsRevoked(Vec<TopicPartitions>),
    /// The assignor's `onAssignment` ran with this generation's full assignment.
    Assignment {
        /// The generation.
        generation_id: i32,
        /// The assignor (protocol name).
        assignor: String,
        /// Everything assigned to this member.
        partitions: Vec<TopicPartitions>,
    },
    /// `onPartitionsAssigned`: eager: the full assignment; cooperative: only the added
    /// partitions. Fires after every successful rebalance, even when empty.
    PartitionsAssigned(Vec<TopicPartitions>),
    /// The committed offsets of the partitions the next [`Event::PartitionsAssigned`] announces
    /// (only with [`Config::fetch_offsets_on_assign`]); partitions without a commit are absent.
    OffsetsFetched(Vec<PartitionOffset>),
    /// The outcome of [`Coordinator::commit`] `id`: the offsets committed, or why not.
    CommitCompleted {
        /// The id `commit` returned.
        id: RequestId,
        /// The committed offsets, or the error.
        result: Result<Vec<PartitionOffset>, CommitError>,
    },
    /// A non-fatal error (Java throws it from `poll()`; the next poll retries).
    Error(CoordinatorError),
    /// A fatal error; the coordinator stops.
    Fatal(CoordinatorError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Join,
    Sync,
    Heartbeat,
    OffsetFetch,
}

/// The leader's state: whether this member leads the current generation, what it assigned, and
/// the assignment it is computing elsewhere ([`Config::offload_assignment`]).
#[derive(Debug, Default)]
struct LeaderState {
    /// This member computed (or computes) the current generation's assignment.
    elected: bool,
    /// The partition counts the assignment was computed from (Java `assignmentSnapshot`).
    assignment_snapshot: Option<BTreeMap<String, i32>>,
    /// Every topic some member subscribes to.
    group_topics: BTreeSet<String>,
    /// The last assignment computed.
    last_group_assignment: Option<GroupAssignment>,
    /// The assignment to compute, not yet taken by [`Coordinator::poll_assignment`].
    job: Option<AssignmentJob>,
    /// The generation and protocol of the assignment being computed elsewhere; its assignor is
    /// out of the coordinator until [`Coordinator::handle_assignment`].
    assigning: Option<(i32, String)>,
}

#[derive(Clone, Debug)]
struct InFlight {
    id: RequestId,
    api: Api,
    deadline: u64,
    generation: i32,
}

/// The member-side coordinator of one consumer. See the [module docs](self) for the driving
/// loop.
pub struct Coordinator {
    config: Config,
    assignors: Vec<Box<dyn PartitionAssignor>>,
    protocol: RebalanceProtocol,
    topics: BTreeSet<String>,
    metadata: ClusterMetadata,
    owned: PartitionSet,
    /// Assigned partitions of topics this member's metadata does not know (yet): not taken;
    /// a rejoin is requested once the metadata shows them.
    unknown_assigned: PartitionSet,
    generation: i32,
    member_id: String,
    protocol_name: Option<String>,
    state: State,
    rejoin_needed: bool,
    rejoin_reason: String,
    needs_join_prepare: bool,
    /// Everything only the leader has (issue 22: in one place).
    leader: LeaderState,
    join_sync: Option<InFlight>,
    heartbeat: Option<InFlight>,
    /// The member's clocks; requests in flight carry their own deadlines.
    timers: Timers,
    rebalance_start: Option<u64>,
    next_id: u64,
    queued: VecDeque<Transmit>,
    events: VecDeque<Event>,
    metrics: Metrics,
    /// Commits sent and not yet answered.
    commits: BTreeMap<RequestId, PendingCommit>,
    /// The last offset committed or fetched, per partition.
    committed: BTreeMap<(String, i32), PartitionOffset>,
    /// Newly assigned partitions waiting for their committed offsets.
    pending_assign: Option<PendingAssign>,
    /// A revocation the application has not finished ([`Config::await_revocation`]).
    revocation_pending: bool,
    /// A leave that waits for the revocation to finish.
    leave_pending: bool,
}

impl fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Coordinator")
            .field("member_id", &self.member_id)
            .field("generation", &self.generation)
            .field("state", &self.state)
            .field("protocol", &self.protocol)
            .field("owned", &self.owned.len())
            .finish_non_exhaustive()
    }
}

/// Picks the highest protocol every assignor supports (Java's `ConsumerCoordinator`
/// constructor).
///
/// ```
/// use kafka_consumer_protocol::assignor::RebalanceProtocol::*;
/// use kafka_consumer_protocol::coordinator::select_protocol;
/// assert_eq!(select_protocol(&[&[Eager, Cooperative], &[Cooperative, Eager]]), Some(Cooperative));
/// assert_eq!(select_protocol(&[&[Cooperative, Eager], &[Eager]]), Some(Eager));
/// assert_eq!(select_protocol(&[&[Eager], &[Cooperative]]), None);
/// ```
pub fn select_protocol(supported: &[&[RebalanceProtocol]]) -> Option<RebalanceProtocol> {
    let first = supported.first()?;
    first.iter().copied().filter(|p| supported.iter().all(|s| s.contains(p))).max()
}

impl Coordinator {
    /// A coordinator with `assignors` in preference order. Fails when none is given or they
    /// share no rebalance protocol.
    pub fn new(config: Config, assignors: Vec<Box<dyn PartitionAssignor>>, now: u64) -> Result<Self, CoordinatorError> {
        if assignors.is_empty() {
            return Err(CoordinatorError::NoAssignors);
        }
        let lists: Vec<&[RebalanceProtocol]> = assignors.iter().map(|a| a.supported_protocols()).collect();
        let protocol = select_protocol(&lists).ok_or_else(|| {
            CoordinatorError::NoCommonProtocol(assignors.iter().map(|a| a.name().to_string()).collect())
        })?;
        Ok(Coordinator {
            config,
            assignors,
            protocol,
            topics: BTreeSet::new(),
            metadata: ClusterMetadata::default(),
            owned: PartitionSet::new(),
            unknown_assigned: PartitionSet::new(),
            generation: -1,
            member_id: String::new(),
            protocol_name: None,
            state: State::Unjoined,
            rejoin_needed: true,
            rejoin_reason: "initial join".into(),
            needs_join_prepare: true,
            leader: LeaderState::default(),
            join_sync: None,
            heartbeat: None,
            timers: Timers::new(now),
            rebalance_start: None,
            next_id: 1,
            queued: VecDeque::new(),
            events: VecDeque::new(),
            metrics: Metrics::default(),
            commits: BTreeMap::new(),
            committed: BTreeMap::new(),
            pending_assign: None,
            revocation_pending: false,
            leave_pending: false,
        })
    }

    // ---- getters -------------------------------------------------------------------------

    /// The rebalance protocol chosen at construction.
    pub fn protocol(&self) -> RebalanceProtocol {
        self.protocol
    }
    /// Current state.
    pub fn state(&self) -> State {
        self.state
    }
    /// Current generation (`-1` when none).
    pub fn generation(&self) -> i32 {
        self.generation
    }
    /// Current member id (empty when none).
    pub fn member_id(&self) -> &str {
        &self.member_id
    }
    /// The selected assignor of the current generation.
    pub fn protocol_name(&self) -> Option<&str> {
        self.protocol_name.as_deref()
    }
    /// Whether this member computed the current generation's assignment.
    pub fn is_leader(&self) -> bool {
        self.leader.elected
    }
    /// The partitions this member owns, sorted by (topic, partition).
    pub fn owned(&self) -> &PartitionSet {
        &self.owned
    }
    /// The subscribed topics.
    pub fn subscription(&self) -> &BTreeSet<String> {
        &self.topics
    }
    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }
    /// The member's view of the cluster.
    pub fn metadata(&self) -> &ClusterMetadata {
        &self.metadata
    }
    /// The last assignment this member computed as leader (after the cooperative hand-over).
    pub fn last_group_assignment(&self) -> Option<&GroupAssignment> {
        self.leader.last_group_assignment.as_ref()
    }
    /// Whether a rejoin is pending.
    pub fn rejoin_needed(&self) -> bool {
        self.rejoin_needed
    }
    /// Metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    // ---- application commands ------------------------------------------------------------

    /// Subscribes to `topics` (an empty list is [`leave`](Self::leave)). A change triggers a
    /// rejoin; before it, cooperative members revoke only partitions of topics they dropped,
    /// eager members revoke everything.
    pub fn subscribe<I, T>(&mut self, now: u64, topics: I)
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let topics: BTreeSet<String> = topics.into_iter().map(Into::into).collect();
        if topics.is_empty() {
            self.leave(now);
            return;
        }
        if topics != self.topics {
            self.topics = topics;
            self.request_rejoin("subscription changed");
        }
        self.advance(now);
    }

    /// New cluster metadata. Owned partitions that no longer exist are lost at once; the leader
    /// rejoins when the partition counts of the group's topics changed since it assigned.
    pub fn update_metadata(&mut self, now: u64, metadata: ClusterMetadata) {
        self.metadata = metadata;
        let vanished: PartitionSet =
            self.owned.iter().filter(|&(t, p)| self.metadata.topics.get(t).is_none_or(|i| p >= i.partitions)).collect();
        if !vanished.is_empty() {
            self.owned.retain(|t, p| !vanished.contains(t, p));
            self.events.push_back(Event::PartitionsLost(vanished.to_groups()));
        }
        if self.unknown_assigned.iter().any(|(t, p)| self.metadata.topics.get(t).is_some_and(|i| p < i.partitions)) {
            self.unknown_assigned.clear();
            self.request_rejoin("metadata now has partitions assigned to us earlier");
        }
        self.advance(now);
    }

    /// Leaves the group (Java `unsubscribe()`/`close()`): owned partitions are revoked, or lost
    /// when the generation was reset or a rebalance is in progress; a dynamic member sends
    /// LeaveGroup, a static one does not.
    ///
    /// With [`Config::await_revocation`], a revocation holds the LeaveGroup (and the generation,
    /// for the callback's commits) until [`revocation_done`](Self::revocation_done).
    pub fn leave(&mut self, now: u64) {
        if self.state == State::Fatal {
            return;
        }
        self.pending_assign = None;
        if !self.owned.is_empty() {
            let parts = self.owned.to_groups();
            let lost = self.generation < 0 || self.member_id.is_empty() || self.state != State::Stable;
            self.owned.clear();
            if lost {
                self.events.push_back(Event::PartitionsLost(parts));
            } else {
                self.revoke(parts);
                if self.revocation_pending {
                    self.leave_pending = true;
                    self.topics.clear();
                    return;
                }
            }
        }
        self.finish_leave(now);
    }

    /// The application finished handling [`Event::PartitionsRevoked`] (its commits sent): the
    /// held JoinGroup or LeaveGroup may go. Only meaningful with [`Config::await_revocation`].
    pub fn revocation_done(&mut self, now: u64) {
        if !self.revocation_pending {
            return;
        }
        self.revocation_pending = false;
        if self.leave_pending {
            self.leave_pending = false;
            self.finish_leave(now);
        }
        self.advance(now);
    }

    /// Whether a revocation holds the next JoinGroup or LeaveGroup.
    pub fn revocation_pending(&self) -> bool {
        self.revocation_pending
    }

    fn revoke(&mut self, parts: Vec<TopicPartitions>) {
        if self.config.await_revocation {
            self.revocation_pending = true;
        }
        self.events.push_back(Event::PartitionsRevoked(parts));
    }

    fn finish_leave(&mut self, now: u64) {
        if self.config.group_instance_id.is_none() && !self.member_id.is_empty() && self.state != State::Unjoined {
            let id = self.fresh_id();
            self.queued.push_back(Transmit {
                id,
                request: Request::LeaveGroup(LeaveGroupRequest {
                    group_id: self.config.group_id.clone(),
                    member_id: self.member_id.clone(),
                    group_instance_id: None,
                    reason: Some("the consumer unsubscribed from all topics".into()),
                }),
            });
        }
        self.topics.clear();
        self.generation = -1;
        self.member_id.clear();
        self.protocol_name = None;
        self.state = State::Unjoined;
        self.leader.elected = false;
        self.join_sync = None;
        self.heartbeat = None;
        self.rejoin_needed = true;
        self.needs_join_prepare = true;
        self.rebalance_start = None;
        let _ = now;
    }

    /// Asks for a rejoin (Java `enforceRebalance`).
    pub fn request_rejoin(&mut self, reason: &str) {
        if !self.rejoin_needed {
            self.rejoin_reason = reason.to_string();
        }
        self.rejoin_needed = true;
    }

    /// Records how long the application spent in a listener callback.
    pub fn record_listener_latency(&mut self, now: u64, kind: ListenerKind, latency_ms: u64) {
        self.metrics.record_listener(now, kind, latency_ms);
    }

    // ---- inputs --------------------------------------------------------------------------

    /// Expires timers: request timeouts, the retry backoff, the heartbeat interval and the
    /// session timeout. Extra calls are harmless.
    pub fn handle_timeout(&mut self, now: u64) {
        self.expire_commits(now);
        self.expire_offset_fetch(now);
        if let Some(f) = &self.join_sync {
            if now >= f.deadline {
                self.join_sync = None;
                self.fail_round(now, true);
            }
        }
        if let Some(f) = &self.heartbeat {
            if now >= f.deadline {
                self.heartbeat = None;
            }
        }
        if self.heartbeats_enabled() && now >= self.timers.session_expiry(self.config.session_timeout_ms) {
            // As librdkafka does: no heartbeat got through for a whole session, so the broker
            // has expelled us; our partitions are lost.
            self.reset_generation(true, "session timed out without a successful heartbeat");
        }
        self.advance(now);
    }

    /// Hands a response back. Responses to requests that are no longer awaited (timed out,
    /// superseded) are ignored.
    pub fn handle_response(&mut self, now: u64, id: RequestId, response: Response) {
        if self.state == State::Fatal {
            return;
        }
        match response {
            Response::JoinGroup(r) => {
                if let Some(f) = self.take_in_flight(id, Api::Join) {
                    self.on_join_response(now, f, r);
                }
            }
            Response::SyncGroup(r) => {
                if let Some(f) = self.take_in_flight(id, Api::Sync) {
                    self.on_sync_response(now, f, r);
                }
            }
            Response::Heartbeat(r) => {
                if self.heartbeat.as_ref().is_some_and(|f| f.id == id) {
                    let f = self.heartbeat.take().expect("checked");
                    self.on_heartbeat_response(now, f, r);
                }
            }
            Response::LeaveGroup(_) => {}
            Response::OffsetCommit(r) => {
                if let Some(c) = self.commits.remove(&id) {
                    self.on_commit_response(id, c, r);
                }
            }
            Response::OffsetFetch(r) => self.on_offset_fetch_response(now, id, r),
        }
        self.advance(now);
    }

    // ---- outputs -------------------------------------------------------------------------

    /// The next request to send, if any.
    #[must_use]
    pub fn poll_request(&mut self, now: u64) -> Option<Transmit> {
        self.advance(now);
        self.queued.pop_front()
    }

    /// The next listener event, if any.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.state == State::Fatal {
            return None;
        }
        let mut t: Option<u64> = None;
        let mut min = |x: u64| t = Some(t.map_or(x, |y| y.min(x)));
        if let Some(f) = &self.join_sync {
            min(f.deadline);
        }
        if let Some(f) = &self.heartbeat {
            min(f.deadline);
        }
        if self.heartbeats_enabled() {
            min(self.timers.session_expiry(self.config.session_timeout_ms));
            if self.heartbeat.is_none() {
                min(self.timers.heartbeat_due);
            }
        }
        if self.rejoin_needed
            && self.join_sync.is_none()
            && !self.topics.is_empty()
            && self.timers.rejoin_backoff_until > 0
        {
            min(self.timers.rejoin_backoff_until);
        }
        for c in self.commits.values() {
            min(c.deadline);
        }
        if let Some(p) = &self.pending_assign {
            min(p.fetch.as_ref().map_or(p.retry_at, |f| f.deadline));
        }
        t
    }

    /// Metrics by Java name at `now`.
    pub fn metrics_snapshot(&self, now: u64) -> BTreeMap<&'static str, f64> {
        self.metrics.snapshot(now)
    }

    // ---- internals -----------------------------------------------------------------------

    fn fresh_id(&mut self) -> RequestId {
        let id = RequestId(self.next_id);
        self.next_id += 1;
        id
    }

    fn take_in_flight(&mut self, id: RequestId, api: Api) -> Option<InFlight> {
        if self.join_sync.as_ref().is_some_and(|f| f.id == id && f.api == api) {
            self.join_sync.take()
        } else {
            None
        }
    }

    fn fatal(&mut self, err: CoordinatorError) {
        if !self.owned.is_empty() {
            self.events.push_back(Event::PartitionsLost(self.owned.to_groups()));
            self.owned.clear();
        }
        self.events.push_back(Event::Fatal(err));
        self.state = State::Fatal;
        self.join_sync = None;
        self.heartbeat = None;
        self.queued.clear();
        self.pending_assign = None;
        self.fail_commits();
    }

    /// A failed JoinGroup/SyncGroup round: counts as a failed rebalance, rejoins.
    fn fail_round(&mut self, now: u64, backoff: bool) {
        self.metrics.record_failed(now);
        if self.state != State::Fatal {
            self.state = State::Unjoined;
        }
        self.rejoin_needed = true;
        self.timers.rejoin_backoff_until = if backoff { now + self.config.retry_backoff_ms } else { 0 };
    }

    /// Resets the generation after the broker said we are out (KIP-429 §1.4): the partitions
    /// are lost at once (not at the next JoinGroup, which may wait for one in flight).
    fn reset_generation(&mut self, reset_member_id: bool, reason: &str) {
        // Partitions never announced are not lost either.
        self.pending_assign = None;
        if !self.owned.is_empty() {
            self.events.push_back(Event::PartitionsLost(self.owned.to_groups()));
            self.owned.clear();
        }
        self.generation = -1;
        self.protocol_name = None;
        if reset_member_id {
            self.member_id.clear();
        }
        self.state = State::Unjoined;
        self.leader.elected = false;
        self.rejoin_needed = true;
        self.rejoin_reason = reason.to_string();
        self.needs_join_prepare = true;
    }

    fn advance(&mut self, now: u64) {
        if self.state == State::Fatal {
            return;
        }
        if self.leader.elected && self.state == State::Stable && !self.rejoin_needed {
            if let Some(snap) = &self.leader.assignment_snapshot {
                if *snap != self.partition_counts(&self.leader.group_topics) {
                    self.request_rejoin("cached metadata has changed");
                }
            }
        }
        if self
            .leader
            .job
            .as_ref()
            .is_some_and(|j| self.state != State::CompletingRebalance || j.generation != self.generation)
        {
            // Never taken and no longer needed: the assignor comes back at once.
            if let Some(job) = self.leader.job.take() {
                self.leader.assigning = None;
                if let Some(slot) = self.assignors.get_mut(job.index) {
                    *slot = job.assignor;
                }
            }
        }
        self.send_offset_fetch(now);
        if self.rejoin_needed
            && self.leader.assigning.is_none()
            && self.join_sync.is_none()
            && !self.topics.is_empty()
            && now >= self.timers.rejoin_backoff_until
            && !self.revocation_pending
        {
            if self.needs_join_prepare {
                self.on_join_prepare();
                self.needs_join_prepare = false;
            }
            if !self.revocation_pending {
                self.send_join(now);
            }
        }
        if self.heartbeats_enabled() && self.heartbeat.is_none() && now >= self.timers.heartbeat_due {
            let id = self.fresh_id();
            self.heartbeat = Some(InFlight {
                id,
                api: Api::Heartbeat,
                deadline: now + self.config.request_timeout_ms,
                generation: self.generation,
            });
            self.timers.heartbeat_after(now, self.config.heartbeat_interval_ms);
            self.queued.push_back(Transmit {
                id,
                request: Request::Heartbeat(HeartbeatRequest {
                    group_id: self.config.group_id.clone(),
                    generation_id: self.generation,
                    member_id: self.member_id.clone(),
                    group_instance_id: self.config.group_instance_id.clone(),
                }),
            });
        }
    }

    /// Heartbeats run while the member holds a generation: in `CompletingRebalance` and
    /// `Stable` as in Java, and also while a rejoin's JoinGroup is in flight (Java pauses them
    /// there), so a member whose JoinGroup response was lost learns from `ILLEGAL_GENERATION`
    /// within a heartbeat interval instead of keeping its partitions until the join timeout.
    fn heartbeats_enabled(&self) -> bool {
        self.generation >= 0
            && matches!(self.state, State::PreparingRebalance | State::CompletingRebalance | State::Stable)
    }

    fn partition_counts(&self, topics: &BTreeSet<String>) -> BTreeMap<String, i32> {
        topics.iter().filter_map(|t| self.metadata.topics.get(t).map(|i| (t.clone(), i.partitions))).collect()
    }

    /// Java `onJoinPrepare`.
    fn on_join_prepare(&mut self) {
        self.pending_assign = None;
        if self.generation < 0 || self.member_id.is_empty() {
            if !self.owned.is_empty() {
                self.events.push_back(Event::PartitionsLost(self.owned.to_groups()));
                self.owned.clear();
            }
        } else if self.protocol == RebalanceProtocol::Eager {
            let parts = self.owned.to_groups();
            self.owned.clear();
            self.revoke(parts);
        } else {
            let gone: PartitionSet = self.owned.iter().filter(|(t, _)| !self.topics.contains(*t)).collect();
            if !gone.is_empty() {
                self.owned.retain(|t, p| !gone.contains(t, p));
                self.revoke(gone.to_groups());
            }
        }
        self.leader.elected = false;
        self.leader.assignment_snapshot = None;
    }

    fn subscription_for(&self, assignor: &dyn PartitionAssignor) -> Subscription {
        let topics: Vec<String> = self.topics.iter().cloned().collect();
        Subscription {
            user_data: assignor.subscription_user_data(&topics),
            topics,
            owned_partitions: self.owned.to_groups(),
            generation_id: self.generation,
            rack_id: self.config.client_rack.clone(),
        }
    }

    fn send_join(&mut self, now: u64) {
        let mut protocols = Vec::with_capacity(self.assignors.len());
        for a in &self.assignors {
            match self.subscription_for(a.as_ref()).encode(Version::V3) {
                Ok(bytes) => {
                    protocols.push(JoinGroupProtocol { name: a.name().to_string(), metadata: Bytes::from(bytes) })
                }
                Err(e) => {
                    self.fatal(CoordinatorError::Encode(e));
                    return;
                }
            }
        }
        if self.rebalance_start.is_none() {
            self.rebalance_start = Some(now);
        }
        let id = self.fresh_id();
        let deadline = now + self.config.request_timeout_ms.max(self.config.rebalance_timeout_ms + 5000);
        self.join_sync = Some(InFlight { id, api: Api::Join, deadline, generation: self.generation });
        self.state = State::PreparingRebalance;
        self.rejoin_needed = false;
        self.queued.push_back(Transmit {
            id,
            request: Request::JoinGroup(JoinGroupRequest {
                group_id: self.config.group_id.clone(),
                session_timeout_ms: self.config.session_timeout_ms as i32,
                rebalance_timeout_ms: self.config.rebalance_timeout_ms as i32,
                member_id: self.member_id.clone(),
                group_instance_id: self.config.group_instance_id.clone(),
                protocol_type: "consumer".into(),
                protocols,
                reason: Some(std::mem::take(&mut self.rejoin_reason)),
            }),
        });
    }

    fn on_join_response(&mut self, now: u64, f: InFlight, r: JoinGroupResponse) {
        let unchanged = f.generation == self.generation;
        match r.error {
            ErrorCode::NONE => {}
            ErrorCode::MEMBER_ID_REQUIRED => {
                self.member_id = r.member_id;
                self.fail_round(now, false);
                return;
            }
            ErrorCode::REBALANCE_IN_PROGRESS => {
                self.fail_round(now, false);
                return;
            }
            ErrorCode::UNKNOWN_MEMBER_ID => {
                if unchanged {
                    self.reset_generation(true, "encountered UNKNOWN_MEMBER_ID from JoinGroup");
                }
                self.fail_round(now, false);
                return;
            }
            e if e.is_fatal() => {
                self.fatal(CoordinatorError::Broker { api: "JoinGroup", error: e });
                return;
            }
            e if e.is_coordinator_error() => {
                self.fail_round(now, true);
                return;
            }
            e => {
                // ILLEGAL_GENERATION and anything else: Java raises an unexpected-error
                // KafkaException; the next poll retries.
                self.events.push_back(Event::Error(CoordinatorError::Broker { api: "JoinGroup", error: e }));
                self.fail_round(now, true);
                return;
            }
        }
        if r.protocol_type.as_deref().is_some_and(|t| t != "consumer") {
            self.fatal(CoordinatorError::Broker { api: "JoinGroup", error: ErrorCode::INCONSISTENT_GROUP_PROTOCOL });
            return;
        }
        let Some(protocol_name) = r.protocol_name.clone() else {
            self.fatal(CoordinatorError::Broker { api: "JoinGroup", error: ErrorCode::INCONSISTENT_GROUP_PROTOCOL });
            return;
        };
        self.generation = r.generation_id;
        self.member_id = r.member_id.clone();
        self.protocol_name = Some(protocol_name.clone());
        self.state = State::CompletingRebalance;
        self.timers.session_alive(now);
        self.timers.heartbeat_after(now, self.config.heartbeat_interval_ms);
        let mut assignments = Vec::new();
        if r.leader == r.member_id {
            self.leader.elected = true;
            if !r.skip_assignment && self.config.offload_assignment {
                match self.assignors.iter().position(|a| a.name() == protocol_name) {
                    Some(index) => {
                        let away: Box<dyn PartitionAssignor> = Box::new(Away::of(self.assignors[index].as_ref()));
                        let assignor = std::mem::replace(&mut self.assignors[index], away);
                        self.leader.job = Some(AssignmentJob {
                            generation: self.generation,
                            index,
                            assignor,
                            protocol: self.protocol,
                            metadata: self.metadata.clone(),
                            members: r.members,
                        });
                        self.leader.assigning = Some((self.generation, protocol_name));
                    }
                    None => {
                        self.leader.elected = false;
                        self.events.push_back(Event::Error(CoordinatorError::UnknownProtocol(protocol_name)));
                        self.fail_round(now, true);
                    }
                }
                return;
            }
            if !r.skip_assignment {
                match self.on_leader_elected(&protocol_name, &r.members) {
                    Ok(a) => assignments = a,
                    Err(e) => {
                        self.leader.elected = false;
                        self.events.push_back(Event::Error(e));
                        self.fail_round(now, true);
                        return;
                    }
                }
            }
        }
        self.send_sync(now, protocol_name, assignments);
    }

    fn send_sync(&mut self, now: u64, protocol_name: String, assignments: Vec<SyncGroupAssignment>) {
        let id = self.fresh_id();
        self.join_sync = Some(InFlight {
            id,
            api: Api::Sync,
            deadline: now + self.config.request_timeout_ms,
            generation: self.generation,
        });
        self.queued.push_back(Transmit {
            id,
            request: Request::SyncGroup(SyncGroupRequest {
                group_id: self.config.group_id.clone(),
                generation_id: self.generation,
                member_id: self.member_id.clone(),
                group_instance_id: self.config.group_instance_id.clone(),
                protocol_type: Some("consumer".into()),
                protocol_name: Some(protocol_name),
                assignments,
            }),
        });
    }

    /// The leader's assignment to compute elsewhere, with [`Config::offload_assignment`]: run it
    /// ([`AssignmentJob::run`], on any thread) and hand the result to
    /// [`handle_assignment`](Self::handle_assignment). Until then no SyncGroup (nor JoinGroup)
    /// is sent; heartbeats go on.
    #[must_use]
    pub fn poll_assignment(&mut self) -> Option<AssignmentJob> {
        self.leader.job.take()
    }

    /// The result of an [`AssignmentJob`]: its assignor returns to the coordinator and, when the
    /// generation is still the one it was computed for, the SyncGroup follows.
    pub fn handle_assignment(&mut self, now: u64, done: AssignmentDone) {
        if let Some(slot) = self.assignors.get_mut(done.index) {
            *slot = done.assignor;
        }
        let Some((generation, protocol_name)) = self.leader.assigning.take() else { return };
        if self.state != State::CompletingRebalance || generation != self.generation || done.generation != generation {
            // The generation ended meanwhile; a rejoin is already under way.
            self.advance(now);
            return;
        }
        match done.result {
            Ok(round) => {
                self.leader.assignment_snapshot = Some(self.partition_counts(&round.subscribed_topics));
                self.leader.group_topics = round.subscribed_topics;
                self.leader.last_group_assignment = Some(round.assignment);
                self.send_sync(now, protocol_name, round.sync_assignments);
            }
            Err(e) => {
                self.leader.elected = false;
                self.events.push_back(Event::Error(e.into()));
                self.fail_round(now, true);
            }
        }
        self.advance(now);
    }

    /// Java `onLeaderElected`: the leader's round ([`leader::lead`]) with the selected assignor.
    fn on_leader_elected(
        &mut self,
        protocol_name: &str,
        members: &[JoinGroupMember],
    ) -> Result<Vec<SyncGroupAssignment>, CoordinatorError> {
        let assignor = self
            .assignors
            .iter()
            .find(|a| a.name() == protocol_name)
            .ok_or_else(|| CoordinatorError::UnknownProtocol(protocol_name.to_string()))?;
        let round = leader::lead(assignor.as_ref(), self.protocol, &self.metadata, members)?;
        self.leader.assignment_snapshot = Some(self.partition_counts(&round.subscribed_topics));
        self.leader.group_topics = round.subscribed_topics;
        self.leader.last_group_assignment = Some(round.assignment);
        Ok(round.sync_assignments)
    }

    fn on_sync_response(&mut self, now: u64, f: InFlight, r: SyncGroupResponse) {
        let unchanged = f.generation == self.generation;
        match r.error {
            ErrorCode::NONE => {}
            ErrorCode::REBALANCE_IN_PROGRESS => {
                self.fail_round(now, false);
                return;
            }
            ErrorCode::UNKNOWN_MEMBER_ID => {
                if unchanged {
                    self.reset_generation(true, "encountered UNKNOWN_MEMBER_ID from SyncGroup");
                }
                self.fail_round(now, false);
                return;
            }
            ErrorCode::ILLEGAL_GENERATION => {
                if unchanged {
                    self.reset_generation(false, "encountered ILLEGAL_GENERATION from SyncGroup");
                }
                self.fail_round(now, false);
                return;
            }
            e if e.is_fatal() => {
                self.fatal(CoordinatorError::Broker { api: "SyncGroup", error: e });
                return;
            }
            _ => {
                self.fail_round(now, true);
                return;
            }
        }
        if !unchanged || self.state != State::CompletingRebalance {
            // The generation was reset while the SyncGroup was in flight.
            self.fail_round(now, false);
            return;
        }
        if r.protocol_type.as_deref().is_some_and(|t| t != "consumer")
            || r.protocol_name.as_deref().is_some_and(|p| Some(p) != self.protocol_name.as_deref())
        {
            self.fatal(CoordinatorError::Broker { api: "SyncGroup", error: ErrorCode::INCONSISTENT_GROUP_PROTOCOL });
            return;
        }
        let start = self.rebalance_start.take().unwrap_or(now);
        self.metrics.record_rebalance(now, now - start);
        self.timers.session_alive(now);
        self.on_join_complete(now, r.assignment);
    }

    /// Java `onJoinComplete`.
    fn on_join_complete(&mut self, now: u64, bytes: Bytes) {
        self.state = State::Stable;
        self.needs_join_prepare = true;
        let assignment = match AssignmentView::decode(&bytes) {
            Ok(v) => v.to_owned(),
            Err(e) => {
                self.events.push_back(Event::Error(CoordinatorError::Assignment(e)));
                self.request_rejoin("received an assignment that cannot be decoded");
                return;
            }
        };
        // Partitions our metadata does not have: a leader with newer metadata (taken once ours
        // catches up, by rejoining then), or a leader handing a deleted topic back to us (KIP-429
        // step 2.6; never taken, so such claims die out).
        let metadata = &self.metadata;
        let mut assigned = PartitionSet::from_groups(&assignment.assigned_partitions);
        self.unknown_assigned =
            assigned.iter().filter(|&(t, p)| metadata.topics.get(t).is_none_or(|i| p >= i.partitions)).collect();
        let unknown = &self.unknown_assigned;
        assigned.retain(|t, p| !unknown.contains(t, p));
        if assigned.iter().any(|(t, _)| !self.topics.contains(t)) {
            self.request_rejoin("received assignment does not match the current subscription");
            return;
        }
        let added: PartitionSet = assigned.difference(&self.owned).collect();
        let revoked: PartitionSet = self.owned.difference(&assigned).collect();
        if !revoked.is_empty() {
            // Cooperative only (eager members own nothing at this point).
            self.owned.retain(|t, p| !revoked.contains(t, p));
            self.revoke(revoked.to_groups());
            self.request_rejoin("need to revoke partitions and re-join");
        }
        let name = self.protocol_name.clone().unwrap_or_default();
        if let Some(a) = self.assignors.iter_mut().find(|a| a.name() == name) {
            a.on_assignment(&assignment, self.generation);
        }
        self.events.push_back(Event::Assignment {
            generation_id: self.generation,
            assignor: name,
            partitions: assigned.to_groups(),
        });
        if self.config.fetch_offsets_on_assign && !added.is_empty() {
            // Announced once their committed offsets are known (offsets.rs).
            self.owned = assigned;
            self.owned.retain(|t, p| !added.contains(t, p));
            self.fetch_before_assigning(now, added);
            return;
        }
        self.owned = assigned;
        let added = match self.protocol {
            RebalanceProtocol::Eager => self.owned.to_groups(),
            RebalanceProtocol::Cooperative => added.to_groups(),
        };
        self.events.push_back(Event::PartitionsAssigned(added));
    }

    fn on_heartbeat_response(&mut self, now: u64, f: InFlight, r: HeartbeatResponse) {
        let unchanged = f.generation == self.generation;
        match r.error {
            ErrorCode::NONE if unchanged => self.timers.session_alive(now),
            ErrorCode::NONE => {}
            ErrorCode::REBALANCE_IN_PROGRESS => {
                // The broker still knows us: that proves the session is alive.
                if unchanged {
                    self.timers.session_alive(now);
                }
                if self.state == State::Stable {
                    self.request_rejoin("group is already rebalancing");
                }
            }
            ErrorCode::UNKNOWN_MEMBER_ID if unchanged => {
                self.reset_generation(true, "encountered UNKNOWN_MEMBER_ID from Heartbeat");
            }
            ErrorCode::ILLEGAL_GENERATION if unchanged => {
                self.reset_generation(false, "encountered ILLEGAL_GENERATION from Heartbeat");
            }
            ErrorCode::FENCED_INSTANCE_ID if unchanged => {
                self.fatal(CoordinatorError::Broker { api: "Heartbeat", error: ErrorCode::FENCED_INSTANCE_ID });
            }
            e if e.is_fatal() && unchanged => {
                self.fatal(CoordinatorError::Broker { api: "Heartbeat", error: e });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
