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

mod io;
mod metrics;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;

use bytes::Bytes;

pub use io::*;
pub use metrics::{ListenerKind, Metrics};

use crate::assignor::common::OwnedList;
use crate::assignor::{
    AssignError, ClusterMetadata, GroupAssignment, GroupMember, GroupMemberView, PartitionAssignor, PendingPartition,
    RebalanceProtocol,
};
use crate::{AssignmentView, Subscription, SubscriptionView, TopicPartitions, Version};

/// A `(topic, partition)` pair.
pub type Tp = (String, i32);

/// The name of the built-in cooperative assignor, whose assignments are not validated (Java
/// skips them too, KAFKA-13406).
pub const COOPERATIVE_STICKY: &str = "cooperative-sticky";

/// Member configuration (Java consumer config names in the field docs).
#[derive(Clone, Debug, PartialEq, Eq)]
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
        }
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
    /// A subscription or assignment could not be decoded or encoded.
    Codec(String),
    /// The assignor failed, or a custom cooperative assignor violated the protocol.
    Assign(AssignError),
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
            CoordinatorError::Codec(m) => write!(f, "embedded protocol error: {m}"),
            CoordinatorError::Assign(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CoordinatorError {}

/// What the application sees, in the order the KIP prescribes: lost, revoked, the assignor's
/// `onAssignment`, assigned.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    owned: BTreeSet<Tp>,
    /// Assigned partitions of topics this member's metadata does not know (yet): not taken;
    /// a rejoin is requested once the metadata shows them.
    unknown_assigned: BTreeSet<Tp>,
    generation: i32,
    member_id: String,
    protocol_name: Option<String>,
    state: State,
    rejoin_needed: bool,
    rejoin_reason: String,
    needs_join_prepare: bool,
    is_leader: bool,
    assignment_snapshot: Option<BTreeMap<String, i32>>,
    group_topics: BTreeSet<String>,
    last_group_assignment: Option<GroupAssignment>,
    join_sync: Option<InFlight>,
    heartbeat: Option<InFlight>,
    next_heartbeat: u64,
    last_heartbeat_ok: u64,
    backoff_until: u64,
    rebalance_start: Option<u64>,
    next_id: u64,
    queued: VecDeque<Transmit>,
    events: VecDeque<Event>,
    metrics: Metrics,
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

/// Groups a sorted set of partitions per topic.
pub fn group_partitions<'a>(set: impl IntoIterator<Item = &'a Tp>) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = Vec::new();
    for (t, p) in set {
        match out.last_mut() {
            Some(last) if &last.topic == t => last.partitions.push(*p),
            _ => out.push(TopicPartitions::new(t.clone(), vec![*p])),
        }
    }
    out
}

/// Flattens per-topic lists into a set.
pub fn partition_set(groups: &[TopicPartitions]) -> BTreeSet<Tp> {
    groups.iter().flat_map(|g| g.partitions.iter().map(move |p| (g.topic.clone(), *p))).collect()
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
            owned: BTreeSet::new(),
            unknown_assigned: BTreeSet::new(),
            generation: -1,
            member_id: String::new(),
            protocol_name: None,
            state: State::Unjoined,
            rejoin_needed: true,
            rejoin_reason: "initial join".into(),
            needs_join_prepare: true,
            is_leader: false,
            assignment_snapshot: None,
            group_topics: BTreeSet::new(),
            last_group_assignment: None,
            join_sync: None,
            heartbeat: None,
            next_heartbeat: now,
            last_heartbeat_ok: now,
            backoff_until: 0,
            rebalance_start: None,
            next_id: 1,
            queued: VecDeque::new(),
            events: VecDeque::new(),
            metrics: Metrics::default(),
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
        self.is_leader
    }
    /// The partitions this member owns, sorted by (topic, partition).
    pub fn owned(&self) -> &BTreeSet<Tp> {
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
        self.last_group_assignment.as_ref()
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
        let vanished: BTreeSet<Tp> = self
            .owned
            .iter()
            .filter(|(t, p)| self.metadata.topics.get(t).is_none_or(|i| *p >= i.partitions))
            .cloned()
            .collect();
        if !vanished.is_empty() {
            self.owned.retain(|tp| !vanished.contains(tp));
            self.events.push_back(Event::PartitionsLost(group_partitions(&vanished)));
        }
        if self.unknown_assigned.iter().any(|(t, p)| self.metadata.topics.get(t).is_some_and(|i| *p < i.partitions)) {
            self.unknown_assigned.clear();
            self.request_rejoin("metadata now has partitions assigned to us earlier");
        }
        self.advance(now);
    }

    /// Leaves the group (Java `unsubscribe()`/`close()`): owned partitions are revoked, or lost
    /// when the generation was reset or a rebalance is in progress; a dynamic member sends
    /// LeaveGroup, a static one does not.
    pub fn leave(&mut self, now: u64) {
        if self.state == State::Fatal {
            return;
        }
        if !self.owned.is_empty() {
            let parts = group_partitions(&self.owned);
            let lost = self.generation < 0 || self.member_id.is_empty() || self.state != State::Stable;
            self.events.push_back(if lost { Event::PartitionsLost(parts) } else { Event::PartitionsRevoked(parts) });
            self.owned.clear();
        }
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
        self.is_leader = false;
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
        if self.heartbeats_enabled() && now >= self.last_heartbeat_ok + self.config.session_timeout_ms {
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
            min(self.last_heartbeat_ok + self.config.session_timeout_ms);
            if self.heartbeat.is_none() {
                min(self.next_heartbeat);
            }
        }
        if self.rejoin_needed && self.join_sync.is_none() && !self.topics.is_empty() && self.backoff_until > 0 {
            min(self.backoff_until);
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
            self.events.push_back(Event::PartitionsLost(group_partitions(&self.owned)));
            self.owned.clear();
        }
        self.events.push_back(Event::Fatal(err));
        self.state = State::Fatal;
        self.join_sync = None;
        self.heartbeat = None;
        self.queued.clear();
    }

    /// A failed JoinGroup/SyncGroup round: counts as a failed rebalance, rejoins.
    fn fail_round(&mut self, now: u64, backoff: bool) {
        self.metrics.record_failed(now);
        if self.state != State::Fatal {
            self.state = State::Unjoined;
        }
        self.rejoin_needed = true;
        self.backoff_until = if backoff { now + self.config.retry_backoff_ms } else { 0 };
    }

    /// Resets the generation after the broker said we are out (KIP-429 §1.4): the partitions
    /// are lost at once (not at the next JoinGroup, which may wait for one in flight).
    fn reset_generation(&mut self, reset_member_id: bool, reason: &str) {
        if !self.owned.is_empty() {
            self.events.push_back(Event::PartitionsLost(group_partitions(&self.owned)));
            self.owned.clear();
        }
        self.generation = -1;
        self.protocol_name = None;
        if reset_member_id {
            self.member_id.clear();
        }
        self.state = State::Unjoined;
        self.is_leader = false;
        self.rejoin_needed = true;
        self.rejoin_reason = reason.to_string();
        self.needs_join_prepare = true;
    }

    fn advance(&mut self, now: u64) {
        if self.state == State::Fatal {
            return;
        }
        if self.is_leader && self.state == State::Stable && !self.rejoin_needed {
            if let Some(snap) = &self.assignment_snapshot {
                if *snap != self.partition_counts(&self.group_topics) {
                    self.request_rejoin("cached metadata has changed");
                }
            }
        }
        if self.rejoin_needed && self.join_sync.is_none() && !self.topics.is_empty() && now >= self.backoff_until {
            if self.needs_join_prepare {
                self.on_join_prepare();
                self.needs_join_prepare = false;
            }
            self.send_join(now);
        }
        if self.heartbeats_enabled() && self.heartbeat.is_none() && now >= self.next_heartbeat {
            let id = self.fresh_id();
            self.heartbeat = Some(InFlight {
                id,
                api: Api::Heartbeat,
                deadline: now + self.config.request_timeout_ms,
                generation: self.generation,
            });
            self.next_heartbeat = now + self.config.heartbeat_interval_ms;
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
        if self.generation < 0 || self.member_id.is_empty() {
            if !self.owned.is_empty() {
                self.events.push_back(Event::PartitionsLost(group_partitions(&self.owned)));
                self.owned.clear();
            }
        } else if self.protocol == RebalanceProtocol::Eager {
            self.events.push_back(Event::PartitionsRevoked(group_partitions(&self.owned)));
            self.owned.clear();
        } else {
            let gone: BTreeSet<Tp> = self.owned.iter().filter(|(t, _)| !self.topics.contains(t)).cloned().collect();
            if !gone.is_empty() {
                self.owned.retain(|tp| !gone.contains(tp));
                self.events.push_back(Event::PartitionsRevoked(group_partitions(&gone)));
            }
        }
        self.is_leader = false;
        self.assignment_snapshot = None;
    }

    fn subscription_for(&self, assignor: &dyn PartitionAssignor) -> Subscription {
        let topics: Vec<String> = self.topics.iter().cloned().collect();
        Subscription {
            user_data: assignor.subscription_user_data(&topics),
            topics,
            owned_partitions: group_partitions(&self.owned),
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
                    self.fatal(CoordinatorError::Codec(e.to_string()));
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
        self.last_heartbeat_ok = now;
        self.next_heartbeat = now + self.config.heartbeat_interval_ms;
        let mut assignments = Vec::new();
        if r.leader == r.member_id {
            self.is_leader = true;
            if !r.skip_assignment {
                match self.on_leader_elected(&protocol_name, &r.members) {
                    Ok(a) => assignments = a,
                    Err(e) => {
                        self.is_leader = false;
                        self.events.push_back(Event::Error(e));
                        self.fail_round(now, true);
                        return;
                    }
                }
            }
        }
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

    /// Java `onLeaderElected`: decode, assign, validate, hand over, encode.
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
        // The subscriptions are read in place: a leader of a large group copies no topic name
        // (2,000 members x 500 topics would be a million strings).
        let mut group: Vec<GroupMemberView<'_>> = Vec::with_capacity(members.len());
        for m in members {
            let subscription = SubscriptionView::decode(&m.metadata)
                .map_err(|e| CoordinatorError::Codec(format!("subscription of {}: {e}", m.member_id)))?;
            group.push(GroupMemberView {
                member_id: &m.member_id,
                group_instance_id: m.group_instance_id.as_deref(),
                subscription,
            });
        }
        let mut all_topics = BTreeSet::new();
        let mut previous = None;
        for m in &group {
            // Members mostly share their topic list: one byte compare skips a repeated one.
            let topics = m.subscription.topics();
            if previous != Some(topics) {
                for t in topics.iter() {
                    if !all_topics.contains(t) {
                        all_topics.insert(t.to_owned());
                    }
                }
                previous = Some(topics);
            }
        }
        let mut result = assignor.assign_views(&self.metadata, &group).map_err(CoordinatorError::Assign)?;
        for m in &group {
            result.ensure_member(m.member_id);
        }
        // Never hand out partitions the leader's metadata does not know (a partition index beyond
        // the count, or a topic it does not have), except KIP-429 step 2.6 in cooperative mode:
        // a partition of a topic missing from the leader's metadata goes back to the member that
        // claims it (the leader cannot tell a deleted topic from its own stale metadata). A
        // negative id is no partition of any topic: never handed out, claimed or not.
        let metadata = &self.metadata;
        let cooperative = self.protocol == RebalanceProtocol::Cooperative;
        let mut claimed: BTreeSet<(&str, &str, i32)> = BTreeSet::new();
        if cooperative {
            for m in &group {
                for g in m.subscription.owned_partitions().iter().filter(|g| !metadata.topics.contains_key(g.topic)) {
                    claimed.extend(g.partitions.iter().map(|p| (m.member_id, g.topic, p)));
                }
            }
        }
        result.retain_partitions(|member, topic, p| match metadata.topics.get(topic) {
            Some(info) => p >= 0 && p < info.partitions,
            None => p >= 0 && claimed.contains(&(member, topic, p)),
        });
        if self.protocol == RebalanceProtocol::Cooperative && protocol_name != COOPERATIVE_STICKY {
            // A custom assignor's result is checked against the owned form (rare: copy here).
            let owned: Vec<GroupMember> = group.iter().map(GroupMemberView::to_owned).collect();
            validate_cooperative_assignment(&owned, &result).map_err(CoordinatorError::Assign)?;
        }
        let claims: Vec<(&str, OwnedList<'_>)> =
            group.iter().map(|m| (m.member_id, OwnedList::Wire(m.subscription.owned_partitions()))).collect();
        handover(&claims, &mut result);
        self.assignment_snapshot = Some(self.partition_counts(&all_topics));
        self.group_topics = all_topics;
        let mut out = Vec::with_capacity(result.len());
        for a in result.members() {
            let bytes = a.encode(Version::V3).map_err(|e| CoordinatorError::Codec(e.to_string()))?;
            out.push(SyncGroupAssignment { member_id: a.member_id().to_owned(), assignment: Bytes::from(bytes) });
        }
        self.last_group_assignment = Some(result);
        Ok(out)
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
        self.last_heartbeat_ok = now;
        self.on_join_complete(r.assignment);
    }

    /// Java `onJoinComplete`.
    fn on_join_complete(&mut self, bytes: Bytes) {
        self.state = State::Stable;
        self.needs_join_prepare = true;
        let assignment = match AssignmentView::decode(&bytes) {
            Ok(v) => v.to_owned(),
            Err(e) => {
                self.events.push_back(Event::Error(CoordinatorError::Codec(format!("assignment: {e}"))));
                self.request_rejoin("received an assignment that cannot be decoded");
                return;
            }
        };
        // Partitions our metadata does not have: a leader with newer metadata (taken once ours
        // catches up, by rejoining then), or a leader handing a deleted topic back to us (KIP-429
        // step 2.6; never taken, so such claims die out).
        let metadata = &self.metadata;
        let assigned: BTreeSet<Tp>;
        (self.unknown_assigned, assigned) = partition_set(&assignment.assigned_partitions)
            .into_iter()
            .partition(|(t, p)| metadata.topics.get(t).is_none_or(|i| *p >= i.partitions));
        if assigned.iter().any(|(t, _)| !self.topics.contains(t)) {
            self.request_rejoin("received assignment does not match the current subscription");
            return;
        }
        let added: BTreeSet<Tp> = assigned.difference(&self.owned).cloned().collect();
        let revoked: BTreeSet<Tp> = self.owned.difference(&assigned).cloned().collect();
        if !revoked.is_empty() {
            // Cooperative only (eager members own nothing at this point).
            self.owned.retain(|tp| !revoked.contains(tp));
            self.events.push_back(Event::PartitionsRevoked(group_partitions(&revoked)));
            self.request_rejoin("need to revoke partitions and re-join");
        }
        let name = self.protocol_name.clone().unwrap_or_default();
        if let Some(a) = self.assignors.iter_mut().find(|a| a.name() == name) {
            a.on_assignment(&assignment, self.generation);
        }
        self.events.push_back(Event::Assignment {
            generation_id: self.generation,
            assignor: name,
            partitions: group_partitions(&assigned),
        });
        self.owned = assigned;
        let added = match self.protocol {
            RebalanceProtocol::Eager => group_partitions(&self.owned),
            RebalanceProtocol::Cooperative => group_partitions(&added),
        };
        self.events.push_back(Event::PartitionsAssigned(added));
    }

    fn on_heartbeat_response(&mut self, now: u64, f: InFlight, r: HeartbeatResponse) {
        let unchanged = f.generation == self.generation;
        match r.error {
            ErrorCode::NONE if unchanged => self.last_heartbeat_ok = now,
            ErrorCode::NONE => {}
            ErrorCode::REBALANCE_IN_PROGRESS => {
                // The broker still knows us: that proves the session is alive.
                self.last_heartbeat_ok = if unchanged { now } else { self.last_heartbeat_ok };
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

/// Java `validateCooperativeAssignment`: no partition may be added to one member while it is
/// revoked from another in the same rebalance.
pub fn validate_cooperative_assignment(members: &[GroupMember], result: &GroupAssignment) -> Result<(), AssignError> {
    let mut added = BTreeSet::new();
    let mut revoked = BTreeSet::new();
    for m in members {
        let owned = partition_set(&m.subscription.owned_partitions);
        let assigned = partition_set(&result.partitions_of(&m.member_id));
        added.extend(assigned.difference(&owned).cloned());
        revoked.extend(owned.difference(&assigned).cloned());
    }
    let both: Vec<&Tp> = added.intersection(&revoked).collect();
    if both.is_empty() {
        Ok(())
    } else {
        Err(AssignError::CooperativeViolation(format!(
            "Assignor supporting the COOPERATIVE protocol violates its requirements: {both:?} are both added and revoked"
        )))
    }
}

/// The KIP-429 leader hand-over (§2.3-2.6): a partition some *other* member claims to own is
/// withheld from its new owner this round (listed in `pending`; its owner revokes it and the
/// follow-up rebalance assigns it). Idempotent, so it is safe after an assignor that already
/// withholds.
///
/// The KIP's step 2.6 (partitions of topics missing from the leader's metadata go back to their
/// claimant) is done by the `cooperative-sticky` assignor and kept by the leader for the member
/// that claims it. It converges because a member never takes an assigned partition its own
/// metadata does not have: a deleted topic's claims die out, and a member whose metadata lags
/// rejoins once it catches up.
///
/// A negative partition id is no partition: it is never a claim, and one in `result` is left
/// where it is (the leader drops them from its result before the hand-over).
pub fn apply_cooperative_handover(members: &[GroupMember], result: &mut GroupAssignment) {
    let claims: Vec<(&str, OwnedList<'_>)> =
        members.iter().map(|m| (m.member_id.as_str(), OwnedList::Owned(&m.subscription.owned_partitions))).collect();
    handover(&claims, result);
}

/// [`apply_cooperative_handover`] on each member's id and owned partitions, in either form.
fn handover(members: &[(&str, OwnedList<'_>)], result: &mut GroupAssignment) {
    if members.iter().all(|(_, owned)| owned.is_empty()) {
        return;
    }
    // Only claims on partitions the result hands out matter. Bounding each topic's slots by the
    // highest of those keeps a member's claim (untrusted input: partition 2^31 - 1, say) from
    // sizing an allocation. The highest assigned id is no bound by itself: KIP-429 step 2.6
    // hands a claimed partition of a topic the leader does not know (any id) back to its
    // claimer. So a topic whose highest assigned id is far beyond its number of assigned
    // partitions gets a sparse table instead: the table is never more than a small multiple of
    // the result's own size.
    let mut bounds: HashMap<&str, (usize, usize)> = HashMap::new();
    for a in result.members() {
        for (topic, partitions) in a.topics() {
            let high = partitions.iter().filter_map(|&p| usize::try_from(p).ok()).max().map_or(0, |p| p + 1);
            let (h, n) = bounds.entry(topic).or_default();
            *h = (*h).max(high);
            *n += partitions.len();
        }
    }
    // Claimants per assigned topic, indexed by partition id, so that the lookup below hashes
    // each topic name once per assignment entry rather than once per partition. A negative id
    // is no partition: never a claim (the leader drops negative ids from its result before).
    let mut claims: HashMap<&str, Claimants<'_>> = HashMap::new();
    for &(member_id, owned) in members {
        owned.for_each(|topic, partitions| {
            let Some(&(high, n)) = bounds.get(topic) else { return };
            let slots = claims.entry(topic).or_insert_with(|| {
                if high > 2 * n + 64 {
                    Claimants::Sparse(HashMap::new())
                } else {
                    Claimants::Dense(Vec::new())
                }
            });
            for i in partitions.filter_map(|p| usize::try_from(p).ok()).filter(|&i| i < high) {
                slots.push(i, member_id);
            }
        });
    }
    drop(bounds);
    if claims.is_empty() {
        return;
    }
    let mut pending = BTreeSet::new();
    // Partitions come grouped per topic: look each run's topic up once.
    let mut last: Option<(*const u8, Option<&Claimants<'_>>)> = None;
    result.retain_partitions(|member_id, topic, p| {
        let slots = match last {
            Some((ptr, slots)) if ptr == topic.as_ptr() => slots,
            _ => {
                let slots = claims.get(topic);
                last = Some((topic.as_ptr(), slots));
                slots
            }
        };
        let Some(slots) = slots else { return true };
        match usize::try_from(p).ok().and_then(|i| slots.get(i)) {
            Some(owners) if owners.iter().any(|o| *o != member_id) => {
                for o in owners.iter().filter(|o| **o != member_id) {
                    pending.insert(PendingPartition {
                        topic: topic.to_owned(),
                        partition: p,
                        from: o.to_string(),
                        to: Some(member_id.to_owned()),
                    });
                }
                false
            }
            _ => true,
        }
    });
    if !pending.is_empty() {
        pending.extend(result.pending.drain(..));
        result.pending = pending.into_iter().collect();
    }
}

/// The members claiming each partition of one topic in [`apply_cooperative_handover`].
enum Claimants<'a> {
    /// Indexed by partition id.
    Dense(Vec<Vec<&'a str>>),
    /// For a topic whose assigned ids are too sparse to index.
    Sparse(HashMap<usize, Vec<&'a str>>),
}

impl<'a> Claimants<'a> {
    fn push(&mut self, i: usize, member_id: &'a str) {
        match self {
            Claimants::Dense(slots) => {
                if slots.len() <= i {
                    slots.resize(i + 1, Vec::new());
                }
                slots[i].push(member_id);
            }
            Claimants::Sparse(slots) => slots.entry(i).or_default().push(member_id),
        }
    }

    fn get(&self, i: usize) -> Option<&Vec<&'a str>> {
        match self {
            Claimants::Dense(slots) => slots.get(i),
            Claimants::Sparse(slots) => slots.get(&i),
        }
    }
}

#[cfg(test)]
mod tests;
