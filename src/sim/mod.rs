//! A whole consumer group in virtual time (feature `sim`): the broker's group coordinator (the
//! `Broker` scaffolding), every
//! member's sans-IO [`Coordinator`] with its assignors, message latency from a seeded PRNG,
//! injected faults, and an invariant checker. The checker runs after every event in small
//! groups (members x partitions up to about 4,000, which covers every test scenario) and, for
//! speed, at every settle point in larger ones. That checker is the point of the simulator and
//! must be kept: a scenario that ever lets two members of the group own one partition fails.
//!
//! ```
//! use kafka_consumer_protocol::sim::{MemberSpec, Scenario, Step};
//! let mut s = Scenario::new(1, [("orders", 6)]);
//! s.members.push(MemberSpec::new("a", ["cooperative-sticky"], ["orders"]));
//! s.members.push(MemberSpec::new("b", ["cooperative-sticky"], ["orders"]));
//! s.push(Step::Join(MemberSpec::new("c", ["cooperative-sticky"], ["orders"])));
//! let out = kafka_consumer_protocol::sim::run(&s).unwrap();
//! assert!(out.summary.converged);
//! assert!(out.summary.violations.is_empty());
//! // Cooperative scale-out from 2 to 3 members moves exactly the 2 partitions balance needs.
//! assert_eq!(out.summary.partitions_moved, 2);
//! ```

mod broker;
/// Seeded random scenarios.
pub mod gen;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
/// JSON scenario files and output (feature `json`).
pub mod json;
/// SVG rendering of a timeline (the CLI's `--svg`; its markup is not a stable API).
#[doc(hidden)]
pub mod svg;

/// The simulator's limits: a scenario above one is refused (by [`run`] and by the scenario
/// parser, with an error that names the limit), so memory and run time stay bounded whatever
/// the scenario says.
pub mod limits {
    /// Partitions over all topics, counting every `create_topic` and `add_partitions`.
    pub const MAX_PARTITIONS: u64 = 100_000;
    /// Members: the initial ones plus every `join`.
    pub const MAX_MEMBERS: usize = 10_000;
    /// Steps of a scenario.
    pub const MAX_STEPS: usize = 10_000;
    /// Any duration: a `wait`, a delay, a timeout or latency setting (one virtual day). With
    /// [`MAX_STEPS`], virtual time stays far below `u64::MAX` milliseconds.
    pub const MAX_DURATION_MS: u64 = 86_400_000;
    /// The largest `max_events` a scenario may set.
    pub const MAX_EVENTS: u64 = 100_000_000;
    /// Events (messages and timers) processed before a run stops, unless the scenario's
    /// `config.max_events` says otherwise.
    pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000;
}

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

pub use broker::GroupState;
#[doc(hidden)]
pub use broker::{Broker, Reply};

use crate::assignor::{builtin, ClusterMetadata, TopicInfo};
use crate::coordinator::{Config, Coordinator, CoordinatorError, Event, Request, RequestId, Response, State};
use crate::PartitionSet;
use crate::TopicPartitions;

/// A tiny deterministic PRNG (SplitMix64). Scaffolding of the simulator and its fuzz target,
/// not part of the supported API.
///
/// ```
/// use kafka_consumer_protocol::sim::Rng;
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`0` when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// One member's configuration in a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSpec {
    /// The simulated member's name.
    pub id: String,
    /// Assignor names in preference order.
    pub assignors: Vec<String>,
    /// Subscribed topics.
    pub topics: Vec<String>,
    /// `client.rack`.
    pub rack: Option<String>,
    /// `group.instance.id`.
    pub static_id: Option<String>,
}

impl MemberSpec {
    /// A dynamic member without rack.
    pub fn new<A, T>(id: &str, assignors: A, topics: T) -> Self
    where
        A: IntoIterator,
        A::Item: Into<String>,
        T: IntoIterator,
        T::Item: Into<String>,
    {
        MemberSpec {
            id: id.to_string(),
            assignors: assignors.into_iter().map(Into::into).collect(),
            topics: topics.into_iter().map(Into::into).collect(),
            rack: None,
            static_id: None,
        }
    }
}

/// A scenario step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A new member joins.
    Join(MemberSpec),
    /// A member shuts down cleanly (`close()`) and starts again, optionally reconfigured.
    Restart {
        /// Member name.
        id: String,
        /// New assignors, if changed.
        assignors: Option<Vec<String>>,
        /// New topics, if changed.
        topics: Option<Vec<String>>,
    },
    /// A member leaves (`close()`).
    Leave(String),
    /// A member dies silently.
    Crash(String),
    /// A member stalls (no heartbeats, no polls) for longer than the rebalance timeout.
    MissRebalance(String),
    /// A member changes its subscription.
    Subscribe {
        /// Member name.
        id: String,
        /// New topics.
        topics: Vec<String>,
    },
    /// A topic is created.
    CreateTopic {
        /// Topic.
        name: String,
        /// Partitions.
        partitions: i32,
    },
    /// A topic grows to `count` partitions.
    AddPartitions {
        /// Topic.
        topic: String,
        /// New partition count.
        count: i32,
    },
    /// A topic is deleted.
    DeleteTopic(String),
    /// Run until the group is stable.
    Settle,
    /// Advance virtual time.
    Wait(u64),
    /// The next `count` responses to a member arrive `ms` late.
    DelayResponses {
        /// Member name (`"leader"`: the current leader).
        id: String,
        /// Extra delay.
        ms: u64,
        /// How many responses.
        count: u32,
    },
    /// The next `count` responses to a member are lost.
    LoseResponses {
        /// Member name (`"leader"`: the current leader).
        id: String,
        /// How many responses.
        count: u32,
    },
    /// Metadata updates reach a member `ms` late (stale leader metadata).
    StaleMetadata {
        /// Member name (`"leader"`: the current leader).
        id: String,
        /// Extra delay.
        ms: u64,
    },
}

impl Step {
    /// The step's name as in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            Step::Join(_) => "join",
            Step::Restart { .. } => "restart",
            Step::Leave(_) => "leave",
            Step::Crash(_) => "crash",
            Step::MissRebalance(_) => "miss_rebalance",
            Step::Subscribe { .. } => "subscribe",
            Step::CreateTopic { .. } => "create_topic",
            Step::AddPartitions { .. } => "add_partitions",
            Step::DeleteTopic(_) => "delete_topic",
            Step::Settle => "settle",
            Step::Wait(_) => "wait",
            Step::DelayResponses { .. } => "delay_responses",
            Step::LoseResponses { .. } => "lose_responses",
            Step::StaleMetadata { .. } => "stale_metadata",
        }
    }

    /// Whether the group settles after this step by default (faults set up the next
    /// rebalance, so they do not).
    pub fn settles_by_default(&self) -> bool {
        !matches!(
            self,
            Step::MissRebalance(_)
                | Step::Wait(_)
                | Step::DelayResponses { .. }
                | Step::LoseResponses { .. }
                | Step::StaleMetadata { .. }
        )
    }
}

/// A step and whether the group settles after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepSpec {
    /// The step.
    pub step: Step,
    /// Settle afterwards.
    pub settle: bool,
}

/// Timeouts and network shape (milliseconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// `session.timeout.ms`.
    pub session_timeout_ms: u64,
    /// `max.poll.interval.ms` (rebalance timeout).
    pub rebalance_timeout_ms: u64,
    /// `heartbeat.interval.ms`.
    pub heartbeat_interval_ms: u64,
    /// `retry.backoff.ms`.
    pub retry_backoff_ms: u64,
    /// `request.timeout.ms`.
    pub request_timeout_ms: u64,
    /// `group.initial.rebalance.delay.ms`.
    pub initial_rebalance_delay_ms: u64,
    /// One-way latency.
    pub latency_ms: u64,
    /// Extra random latency `0..=jitter_ms`.
    pub jitter_ms: u64,
    /// Metadata propagation delay.
    pub metadata_delay_ms: u64,
    /// Down time of a restarted member.
    pub restart_delay_ms: u64,
    /// Give up settling after this much virtual time.
    pub settle_limit_ms: u64,
    /// Record the timeline (turn off for large groups).
    pub record_timeline: bool,
    /// Events processed before the run stops (the summary then says so); at most
    /// [`limits::MAX_EVENTS`].
    pub max_events: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            session_timeout_ms: 10_000,
            rebalance_timeout_ms: 30_000,
            heartbeat_interval_ms: 1_000,
            retry_backoff_ms: 100,
            request_timeout_ms: 30_000,
            initial_rebalance_delay_ms: 3_000,
            latency_ms: 2,
            jitter_ms: 3,
            metadata_delay_ms: 100,
            restart_delay_ms: 1_000,
            settle_limit_ms: 600_000,
            record_timeline: true,
            max_events: limits::DEFAULT_MAX_EVENTS,
        }
    }
}

/// A scenario: initial topics and members, then steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// PRNG seed.
    pub seed: u64,
    /// Topics and partition counts at the start.
    pub topics: BTreeMap<String, i32>,
    /// Members at the start.
    pub members: Vec<MemberSpec>,
    /// Steps.
    pub steps: Vec<StepSpec>,
    /// Timeouts and network.
    pub config: SimConfig,
}

impl Scenario {
    /// A scenario with topics and no members or steps.
    pub fn new<I: IntoIterator<Item = (&'static str, i32)>>(seed: u64, topics: I) -> Self {
        Scenario {
            seed,
            topics: topics.into_iter().map(|(t, n)| (t.to_string(), n)).collect(),
            members: Vec::new(),
            steps: Vec::new(),
            config: SimConfig::default(),
        }
    }

    /// Appends a step with its default settling.
    pub fn push(&mut self, step: Step) {
        let settle = step.settles_by_default();
        self.steps.push(StepSpec { step, settle });
    }
}

/// One timeline entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineEntry {
    /// Sequence number.
    pub seq: u64,
    /// Virtual time.
    pub t_ms: u64,
    /// The broker's generation.
    pub generation: i32,
    /// `lost`, `revoked`, `assigned`, `fatal`, `error`, or a step name.
    pub event: String,
    /// The member concerned.
    pub member: Option<String>,
    /// Its rebalance protocol.
    pub protocol: Option<&'static str>,
    /// Its current assignor (the generation's protocol name).
    pub assignor: Option<String>,
    /// Partitions of a listener event.
    pub partitions: Vec<TopicPartitions>,
    /// Every live member's ownership as its own coordinator holds it after the event.
    pub owned: BTreeMap<String, Vec<TopicPartitions>>,
    /// Every live member's own generation.
    pub generations: BTreeMap<String, i32>,
    /// Free text (errors, step details).
    pub detail: Option<String>,
}

/// Totals of a run.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Summary {
    /// Generations the broker completed with members.
    pub rebalances: u64,
    /// Partitions that went to a member other than their previous owner.
    pub partitions_moved: u64,
    /// At the end: stable group, every partition owned exactly once, balanced.
    pub converged: bool,
    /// Safety violations (double ownership, partitions held too long after expulsion).
    pub violations: Vec<String>,
    /// Why the run did not converge (empty when it did).
    pub unconverged: Vec<String>,
    /// Members stopped by a fatal error, with the error.
    pub fatal: Vec<(String, String)>,
    /// Virtual time at the end.
    pub duration_ms: u64,
    /// The broker's generation at the end.
    pub final_generation: i32,
    /// Events processed.
    pub events: u64,
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Timeline (empty when not recorded).
    pub timeline: Vec<TimelineEntry>,
    /// Totals.
    pub summary: Summary,
    /// Every partition that existed at some point (SVG lanes).
    pub partitions: PartitionSet,
    /// Final ownership per live member.
    pub final_owned: BTreeMap<String, PartitionSet>,
}

/// A scenario that cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// An assignor name no built-in assignor has.
    UnknownAssignor(String),
    /// A step needs the group's leader and there is none.
    NoLeader,
    /// A step names a member that is not alive.
    NoLiveMember(String),
    /// A member joins under an id that already exists.
    MemberExists(String),
    /// A member's configuration is invalid (the coordinator refused it).
    Config(CoordinatorError),
    /// The scenario is above one of the [`limits`].
    Limit(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::UnknownAssignor(a) => write!(f, "unknown assignor {a:?}"),
            SimError::NoLeader => write!(f, "there is no leader"),
            SimError::NoLiveMember(id) => write!(f, "no live member {id:?}"),
            SimError::MemberExists(id) => write!(f, "member {id:?} already exists"),
            SimError::Config(m) => write!(f, "invalid member configuration: {m}"),
            SimError::Limit(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Config(e) => Some(e),
            _ => None,
        }
    }
}

struct SimMember {
    spec: MemberSpec,
    coord: Coordinator,
    incarnation: u32,
    alive: bool,
    frozen: bool,
    buffered: Vec<(RequestId, Response)>,
    buffered_metadata: Option<ClusterMetadata>,
    delay: (u64, u32),
    lose: u32,
    stale_ms: u64,
    out_of_group_since: Option<u64>,
    view: PartitionSet,
    timer_token: u64,
    fatal: bool,
}

enum Msg {
    ToBroker(Reply, Request),
    ToMember(String, u32, RequestId, Response),
    Metadata(String, u32, ClusterMetadata),
    Thaw(String, u32),
    Start(MemberSpec),
    MemberTimer(String, u64),
    BrokerTimer(u64),
}

/// Where timeline entries go: kept in the outcome, or handed to the caller as they happen.
type Sink<'s> = Option<&'s mut dyn FnMut(&TimelineEntry) -> bool>;

struct Sim<'s> {
    cfg: SimConfig,
    sink: Sink<'s>,
    /// The sink asked to stop, or the event budget ran out.
    stopped: bool,
    now: u64,
    order: u64,
    queue: BTreeMap<(u64, u64), Msg>,
    join_sync_in_flight: usize,
    pending_control: usize,
    broker: Broker,
    broker_token: u64,
    members: BTreeMap<String, SimMember>,
    cluster: ClusterMetadata,
    rng: Rng,
    timeline: Vec<TimelineEntry>,
    seq: u64,
    violations: Vec<String>,
    violation_keys: BTreeSet<String>,
    moved: u64,
    last_owner: HashMap<(String, i32), String>,
    partitions: PartitionSet,
    fatal: Vec<(String, String)>,
    small: bool,
    last_full_check: u64,
    events: u64,
    unconverged: Vec<String>,
    /// Last delivery time per (member, direction): each member's connection is FIFO, as TCP.
    channel: HashMap<(String, bool), u64>,
}

/// Runs a scenario.
pub fn run(scenario: &Scenario) -> Result<Outcome, SimError> {
    run_inner(scenario, None)
}

/// Runs a scenario, handing each timeline entry to `on_entry` as it happens instead of keeping
/// it: memory then stays proportional to the group, not to the length of the run (the returned
/// outcome's timeline is empty). `on_entry` returning `false` stops the run early (for example
/// when the output it writes to was closed); the outcome describes the run up to there.
///
/// ```
/// use kafka_consumer_protocol::sim::{run_with, MemberSpec, Scenario};
/// let mut s = Scenario::new(1, [("orders", 4)]);
/// s.members.push(MemberSpec::new("a", ["range"], ["orders"]));
/// let mut events = 0;
/// let out = run_with(&s, &mut |_entry| {
///     events += 1;
///     true
/// })
/// .unwrap();
/// assert!(events > 0 && out.timeline.is_empty() && out.summary.converged);
/// ```
pub fn run_with(scenario: &Scenario, on_entry: &mut dyn FnMut(&TimelineEntry) -> bool) -> Result<Outcome, SimError> {
    run_inner(scenario, Some(on_entry))
}

/// Refuses a scenario above the [`limits`] before anything is allocated for it.
fn check_limits(s: &Scenario) -> Result<(), SimError> {
    use limits::*;
    let limit = |what: String| Err(SimError::Limit(what));
    if s.steps.len() > MAX_STEPS {
        return limit(format!("{} steps, more than the limit of {MAX_STEPS}", s.steps.len()));
    }
    let joins = s.steps.iter().filter(|st| matches!(st.step, Step::Join(_))).count();
    if s.members.len() + joins > MAX_MEMBERS {
        return limit(format!(
            "{} members (initial and joining), more than the limit of {MAX_MEMBERS}",
            s.members.len() + joins
        ));
    }
    let mut partitions: u64 = s.topics.values().map(|n| (*n).max(0) as u64).sum();
    let c = &s.config;
    let mut durations = vec![
        ("session_timeout_ms", c.session_timeout_ms),
        ("rebalance_timeout_ms", c.rebalance_timeout_ms),
        ("heartbeat_interval_ms", c.heartbeat_interval_ms),
        ("retry_backoff_ms", c.retry_backoff_ms),
        ("request_timeout_ms", c.request_timeout_ms),
        ("initial_rebalance_delay_ms", c.initial_rebalance_delay_ms),
        ("latency_ms", c.latency_ms),
        ("jitter_ms", c.jitter_ms),
        ("metadata_delay_ms", c.metadata_delay_ms),
        ("restart_delay_ms", c.restart_delay_ms),
        ("settle_limit_ms", c.settle_limit_ms),
    ];
    for st in &s.steps {
        match &st.step {
            Step::CreateTopic { partitions: n, .. } | Step::AddPartitions { count: n, .. } => {
                partitions += (*n).max(0) as u64
            }
            Step::Wait(ms) => durations.push(("wait", *ms)),
            Step::DelayResponses { ms, .. } => durations.push(("delay_responses", *ms)),
            Step::StaleMetadata { ms, .. } => durations.push(("stale_metadata", *ms)),
            _ => {}
        }
    }
    if partitions > MAX_PARTITIONS {
        return limit(format!("more than {MAX_PARTITIONS} partitions in all, the simulator's limit"));
    }
    if let Some((what, ms)) = durations.iter().find(|(_, ms)| *ms > MAX_DURATION_MS) {
        return limit(format!("{what}: {ms} ms is longer than the limit of {MAX_DURATION_MS} ms (one virtual day)"));
    }
    if c.max_events > MAX_EVENTS {
        return limit(format!("max_events: {} is above the limit of {MAX_EVENTS}", c.max_events));
    }
    Ok(())
}

fn run_inner(scenario: &Scenario, sink: Sink<'_>) -> Result<Outcome, SimError> {
    check_limits(scenario)?;
    let mut sim = Sim::new(scenario, sink);
    for m in &scenario.members {
        sim.apply(&Step::Join(m.clone()))?;
    }
    sim.settle("the initial join");
    for (i, s) in scenario.steps.iter().enumerate() {
        if sim.stopped {
            break;
        }
        sim.apply(&s.step)?;
        if s.settle {
            sim.settle(&format!("step {} ({})", i, s.step.name()));
        }
    }
    sim.settle("the last step");
    Ok(sim.finish())
}

impl<'s> Sim<'s> {
    fn new(s: &Scenario, sink: Sink<'s>) -> Self {
        let cluster = ClusterMetadata::from_counts(s.topics.iter().map(|(t, n)| (t.clone(), *n)));
        let total: i64 = s.topics.values().map(|n| *n as i64).sum();
        let mut sim = Sim {
            cfg: s.config.clone(),
            sink,
            stopped: false,
            now: 0,
            order: 0,
            queue: BTreeMap::new(),
            join_sync_in_flight: 0,
            pending_control: 0,
            broker: Broker::new(s.config.initial_rebalance_delay_ms),
            broker_token: 0,
            members: BTreeMap::new(),
            cluster,
            rng: Rng::new(s.seed),
            timeline: Vec::new(),
            seq: 0,
            violations: Vec::new(),
            violation_keys: BTreeSet::new(),
            moved: 0,
            last_owner: HashMap::new(),
            partitions: PartitionSet::new(),
            fatal: Vec::new(),
            small: total * (s.members.len() as i64 + 4) <= 4_000,
            last_full_check: 0,
            events: 0,
            unconverged: Vec::new(),
            channel: HashMap::new(),
        };
        sim.note_partitions();
        sim
    }

    fn note_partitions(&mut self) {
        for (t, i) in &self.cluster.topics {
            for p in 0..i.partitions {
                self.partitions.insert(t, p);
            }
        }
    }

    fn push(&mut self, at: u64, msg: Msg) {
        match &msg {
            Msg::ToBroker(_, Request::JoinGroup(_) | Request::SyncGroup(_)) => self.join_sync_in_flight += 1,
            Msg::ToMember(_, _, _, Response::JoinGroup(_) | Response::SyncGroup(_)) => self.join_sync_in_flight += 1,
            Msg::Metadata(..) | Msg::Thaw(..) | Msg::Start(_) => self.pending_control += 1,
            _ => {}
        }
        self.order += 1;
        self.queue.insert((at, self.order), msg);
    }

    fn latency(&mut self) -> u64 {
        self.cfg.latency_ms.saturating_add(self.rng.below(self.cfg.jitter_ms.saturating_add(1)))
    }

    /// Arrival time on `member`'s connection, never before an earlier message on it.
    fn fifo(&mut self, member: &str, to_broker: bool, at: u64) -> u64 {
        let last = self.channel.entry((member.to_string(), to_broker)).or_insert(0);
        *last = (*last).max(at);
        *last
    }

    fn violation(&mut self, key: String, text: String) {
        if self.violation_keys.insert(key) && self.violations.len() < 100 {
            self.violations.push(format!("t={}ms: {text}", self.now));
        }
    }

    fn resolve(&self, id: &str) -> Result<String, SimError> {
        if id == "leader" {
            let leader = self.broker.leader().unwrap_or_default();
            return self
                .members
                .iter()
                .find(|(_, m)| m.alive && m.coord.member_id() == leader)
                .map(|(n, _)| n.clone())
                .ok_or(SimError::NoLeader);
        }
        match self.members.get(id) {
            Some(m) if m.alive => Ok(id.to_string()),
            _ => Err(SimError::NoLiveMember(id.to_string())),
        }
    }

    fn start_member(&mut self, spec: MemberSpec) -> Result<(), SimError> {
        let mut assignors = Vec::new();
        for a in &spec.assignors {
            assignors.push(builtin(a).ok_or_else(|| SimError::UnknownAssignor(a.clone()))?);
        }
        let config = Config {
            group_instance_id: spec.static_id.clone(),
            client_rack: spec.rack.clone(),
            session_timeout_ms: self.cfg.session_timeout_ms,
            rebalance_timeout_ms: self.cfg.rebalance_timeout_ms,
            heartbeat_interval_ms: self.cfg.heartbeat_interval_ms,
            retry_backoff_ms: self.cfg.retry_backoff_ms,
            request_timeout_ms: self.cfg.request_timeout_ms,
            ..Config::new("sim")
        };
        let coord = Coordinator::new(config, assignors, self.now).map_err(SimError::Config)?;
        let incarnation = self.members.get(&spec.id).map_or(0, |m| m.incarnation + 1);
        let name = spec.id.clone();
        self.members.insert(
            name.clone(),
            SimMember {
                spec: spec.clone(),
                coord,
                incarnation,
                alive: true,
                frozen: false,
                buffered: Vec::new(),
                buffered_metadata: None,
                delay: (0, 0),
                lose: 0,
                stale_ms: 0,
                out_of_group_since: None,
                view: PartitionSet::new(),
                timer_token: 0,
                fatal: false,
            },
        );
        let now = self.now;
        let md = self.cluster.clone();
        let m = self.members.get_mut(&name).expect("inserted");
        m.coord.update_metadata(now, md);
        m.coord.subscribe(now, spec.topics.iter().cloned());
        self.record_step("join", Some(&name), None);
        self.drain(&name);
        Ok(())
    }

    fn apply(&mut self, step: &Step) -> Result<(), SimError> {
        let now = self.now;
        match step {
            Step::Join(spec) => {
                if self.members.get(&spec.id).is_some_and(|m| m.alive) {
                    return Err(SimError::MemberExists(spec.id.clone()));
                }
                self.start_member(spec.clone())?;
            }
            Step::Restart { id, assignors, topics } => {
                let name = self.resolve(id)?;
                let mut spec = self.members[&name].spec.clone();
                if let Some(a) = assignors {
                    spec.assignors = a.clone();
                }
                if let Some(t) = topics {
                    spec.topics = t.clone();
                }
                for a in &spec.assignors {
                    if builtin(a).is_none() {
                        return Err(SimError::UnknownAssignor(a.clone()));
                    }
                }
                self.record_step("restart", Some(&name), Some(spec.assignors.join(",")));
                self.stop(&name, true);
                let at = now.saturating_add(self.cfg.restart_delay_ms);
                self.push(at, Msg::Start(spec));
            }
            Step::Leave(id) => {
                let name = self.resolve(id)?;
                self.record_step("leave", Some(&name), None);
                self.stop(&name, true);
            }
            Step::Crash(id) => {
                let name = self.resolve(id)?;
                self.stop(&name, false);
                self.record_step("crash", Some(&name), None);
            }
            Step::MissRebalance(id) => {
                let name = self.resolve(id)?;
                let m = self.members.get_mut(&name).expect("resolved");
                m.frozen = true;
                let inc = m.incarnation;
                self.record_step("miss_rebalance", Some(&name), None);
                let at = now.saturating_add(self.cfg.rebalance_timeout_ms).saturating_add(1_000);
                self.push(at, Msg::Thaw(name, inc));
            }
            Step::Subscribe { id, topics } => {
                let name = self.resolve(id)?;
                let m = self.members.get_mut(&name).expect("resolved");
                m.spec.topics = topics.clone();
                m.coord.subscribe(now, topics.iter().cloned());
                self.record_step("subscribe", Some(&name), Some(topics.join(",")));
                self.drain(&name);
            }
            Step::CreateTopic { name, partitions } => {
                self.cluster
                    .topics
                    .insert(name.clone(), TopicInfo { partitions: *partitions, partition_racks: Vec::new() });
                self.record_step("create_topic", None, Some(format!("{name}:{partitions}")));
                self.publish_metadata();
            }
            Step::AddPartitions { topic, count } => {
                if let Some(i) = self.cluster.topics.get_mut(topic) {
                    i.partitions = i.partitions.max(*count);
                }
                self.record_step("add_partitions", None, Some(format!("{topic}:{count}")));
                self.publish_metadata();
            }
            Step::DeleteTopic(name) => {
                self.cluster.topics.remove(name);
                self.record_step("delete_topic", None, Some(name.clone()));
                self.publish_metadata();
            }
            Step::Settle => self.settle("a settle step"),
            Step::Wait(ms) => {
                let until = now.checked_add(*ms).ok_or_else(|| {
                    SimError::Limit(format!("wait: {ms} ms from t={now}ms is beyond the end of virtual time"))
                })?;
                self.run_until(until, |_| false);
                self.now = self.now.max(until);
            }
            Step::DelayResponses { id, ms, count } => {
                let name = self.resolve(id)?;
                self.members.get_mut(&name).expect("resolved").delay = (*ms, *count);
                self.record_step("delay_responses", Some(&name), Some(format!("{count} x {ms}ms")));
            }
            Step::LoseResponses { id, count } => {
                let name = self.resolve(id)?;
                self.members.get_mut(&name).expect("resolved").lose = *count;
                self.record_step("lose_responses", Some(&name), Some(format!("{count}")));
            }
            Step::StaleMetadata { id, ms } => {
                let name = self.resolve(id)?;
                self.members.get_mut(&name).expect("resolved").stale_ms = *ms;
                self.record_step("stale_metadata", Some(&name), Some(format!("{ms}ms")));
            }
        }
        Ok(())
    }

    fn publish_metadata(&mut self) {
        self.note_partitions();
        let names: Vec<(String, u32, u64)> =
            self.members.iter().filter(|(_, m)| m.alive).map(|(n, m)| (n.clone(), m.incarnation, m.stale_ms)).collect();
        for (n, inc, stale) in names {
            let at = self.now.saturating_add(self.cfg.metadata_delay_ms).saturating_add(stale);
            let md = self.cluster.clone();
            self.push(at, Msg::Metadata(n, inc, md));
        }
    }

    /// Stops a member: `graceful` runs `close()` (LeaveGroup for dynamic members) first.
    fn stop(&mut self, name: &str, graceful: bool) {
        if graceful {
            let now = self.now;
            let m = self.members.get_mut(name).expect("present");
            if !m.frozen {
                m.coord.leave(now);
                self.drain(name);
            }
        }
        let m = self.members.get_mut(name).expect("present");
        m.alive = false;
        m.frozen = false;
        m.view.clear();
        m.incarnation += 1;
    }

    fn in_group(&self, m: &SimMember) -> bool {
        m.alive && !m.coord.member_id().is_empty() && self.broker.has_member(m.coord.member_id())
    }

    fn record(&mut self, event: &str, name: Option<&str>, partitions: Vec<TopicPartitions>, detail: Option<String>) {
        if !self.cfg.record_timeline || self.stopped {
            return;
        }
        let m = name.and_then(|n| self.members.get(n));
        let mut owned = BTreeMap::new();
        let mut generations = BTreeMap::new();
        for (n, mm) in &self.members {
            if mm.alive {
                owned.insert(n.clone(), mm.view.to_groups());
                generations.insert(n.clone(), mm.coord.generation());
            }
        }
        self.seq += 1;
        let entry = TimelineEntry {
            seq: self.seq,
            t_ms: self.now,
            generation: self.broker.generation(),
            event: event.to_string(),
            member: name.map(str::to_string),
            protocol: m.map(|m| m.coord.protocol().as_str()),
            assignor: m.and_then(|m| m.coord.protocol_name().map(str::to_string)),
            partitions,
            owned,
            generations,
            detail,
        };
        match &mut self.sink {
            Some(sink) => {
                if !sink(&entry) {
                    self.stopped = true;
                }
            }
            None => self.timeline.push(entry),
        }
    }

    fn record_step(&mut self, event: &str, name: Option<&str>, detail: Option<String>) {
        self.record(event, name, Vec::new(), detail);
    }

    /// Drains a member's events (timeline, invariants) and requests (network).
    fn drain(&mut self, name: &str) {
        let now = self.now;
        loop {
            let Some(m) = self.members.get_mut(name) else { return };
            let Some(ev) = m.coord.poll_event() else { break };
            match &ev {
                Event::PartitionsLost(p) | Event::PartitionsRevoked(p) => {
                    let label = if matches!(ev, Event::PartitionsLost(_)) { "lost" } else { "revoked" };
                    for g in p {
                        for &partition in &g.partitions {
                            m.view.remove(&g.topic, partition);
                        }
                    }
                    let p = p.clone();
                    self.record(label, Some(name), p, None);
                }
                Event::PartitionsAssigned(p) => {
                    let p = p.clone();
                    let set = PartitionSet::from_groups(&p);
                    m.view.extend(set.iter());
                    for (topic, partition) in set.iter() {
                        match self.last_owner.insert((topic.to_owned(), partition), name.to_string()) {
                            Some(prev) if prev != name => self.moved += 1,
                            _ => {}
                        }
                        if self.small {
                            self.check_gain(name, topic, partition);
                        }
                    }
                    self.record("assigned", Some(name), p, None);
                }
                // The simulated members neither commit nor fetch offsets.
                Event::Assignment { .. } | Event::OffsetsFetched(_) | Event::CommitCompleted { .. } => {}
                Event::Error(e) => {
                    let e = e.to_string();
                    self.record("error", Some(name), Vec::new(), Some(e));
                }
                Event::Fatal(e) => {
                    let e = e.to_string();
                    let m = self.members.get_mut(name).expect("present");
                    m.fatal = true;
                    self.fatal.push((name.to_string(), e.to_string()));
                    self.record("fatal", Some(name), Vec::new(), Some(e.to_string()));
                }
            }
        }
        // The sim's per-event view must match the coordinator's own state.
        let small = self.small;
        let m = self.members.get_mut(name).expect("present");
        if small && m.view != *m.coord.owned() {
            m.view = m.coord.owned().clone();
            let text = format!("{name}: listener events disagree with the coordinator's ownership");
            self.violation(format!("view-{name}"), text);
        }
        let m = self.members.get_mut(name).expect("present");
        let inc = m.incarnation;
        let mut sends = Vec::new();
        while let Some(t) = m.coord.poll_request(now) {
            sends.push(t);
        }
        for t in sends {
            let at = now.saturating_add(self.latency());
            let at = self.fifo(name, true, at);
            self.push(at, Msg::ToBroker(Reply { member: name.to_string(), incarnation: inc, id: t.id }, t.request));
        }
        self.reschedule(name);
    }

    fn reschedule(&mut self, name: &str) {
        let Some(m) = self.members.get_mut(name) else { return };
        if !m.alive || m.frozen {
            return;
        }
        m.timer_token += 1;
        let token = m.timer_token;
        if let Some(t) = m.coord.poll_timeout() {
            let at = t.max(self.now);
            self.push(at, Msg::MemberTimer(name.to_string(), token));
        }
    }

    fn reschedule_broker(&mut self) {
        self.broker_token += 1;
        if let Some(t) = self.broker.next_deadline(self.now) {
            let token = self.broker_token;
            self.push(t, Msg::BrokerTimer(token));
        }
    }

    fn deliver_broker_out(&mut self, out: Vec<(Reply, Response)>) {
        for (reply, resp) in out {
            let mut at = self.now.saturating_add(self.latency());
            if let Some(m) = self.members.get_mut(&reply.member) {
                if m.incarnation == reply.incarnation && !matches!(resp, Response::LeaveGroup(_)) {
                    if m.lose > 0 {
                        m.lose -= 1;
                        continue;
                    }
                    if m.delay.1 > 0 {
                        m.delay.1 -= 1;
                        at = at.saturating_add(m.delay.0);
                    }
                }
            }
            let at = self.fifo(&reply.member, false, at);
            self.push(at, Msg::ToMember(reply.member, reply.incarnation, reply.id, resp));
        }
    }

    fn check_gain(&mut self, name: &str, topic: &str, partition: i32) {
        let Some(me) = self.members.get(name) else { return };
        if !self.in_group(me) {
            return;
        }
        let others: Vec<String> = self
            .members
            .iter()
            .filter(|(n, m)| n.as_str() != name && m.view.contains(topic, partition) && self.in_group(m))
            .map(|(n, _)| n.clone())
            .collect();
        for o in others {
            let text =
                format!("{topic}-{partition} owned by both {o} and {name} (generation {})", self.broker.generation());
            self.violation(format!("dup-{topic}-{partition}-{o}-{name}"), text);
        }
    }

    fn full_check(&mut self) {
        let now = self.now;
        let mut owners: HashMap<(&str, i32), Vec<&str>> = HashMap::new();
        let mut late = Vec::new();
        let mut since_updates = Vec::new();
        for (n, m) in &self.members {
            if !m.alive {
                continue;
            }
            let in_group = self.in_group(m);
            if in_group {
                for tp in m.view.iter() {
                    owners.entry(tp).or_default().push(n);
                }
            }
            if !in_group && !m.view.is_empty() && !m.frozen {
                let since = m.out_of_group_since.unwrap_or(now);
                since_updates.push((n.clone(), Some(since)));
                let bound = self.cfg.session_timeout_ms
                    + self.cfg.heartbeat_interval_ms
                    + 4 * (self.cfg.latency_ms + self.cfg.jitter_ms)
                    + 100;
                if now > since + bound {
                    late.push((n.clone(), now - since));
                }
            } else {
                since_updates.push((n.clone(), None));
            }
        }
        let mut dups: Vec<((String, i32), Vec<String>)> = owners
            .into_iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|((t, p), v)| ((t.to_owned(), p), v.into_iter().map(str::to_string).collect()))
            .collect();
        dups.sort();
        for (n, s) in since_updates {
            self.members.get_mut(&n).expect("present").out_of_group_since = s;
        }
        for (tp, v) in dups {
            let text = format!("{}-{} owned by {} members of the group: {v:?}", tp.0, tp.1, v.len());
            self.violation(format!("dup-{}-{}-{v:?}", tp.0, tp.1), text);
        }
        for (n, held) in late {
            let text = format!("{n} still owns partitions {held}ms after it left the group");
            self.violation(format!("late-{n}"), text);
        }
    }

    /// Processes one queued message or timer; false when nothing is left before `limit`.
    fn step(&mut self, limit: u64) -> bool {
        if self.stopped {
            return false;
        }
        if self.events >= self.cfg.max_events {
            self.stopped = true;
            self.unconverged.push(format!(
                "the run stopped after {} events, the limit (config.max_events; at most {})",
                self.events,
                limits::MAX_EVENTS
            ));
            return false;
        }
        let Some((&(at, order), _)) = self.queue.first_key_value() else { return false };
        if at > limit {
            return false;
        }
        let msg = self.queue.remove(&(at, order)).expect("present");
        self.now = self.now.max(at);
        self.events += 1;
        match &msg {
            Msg::ToBroker(_, Request::JoinGroup(_) | Request::SyncGroup(_)) => self.join_sync_in_flight -= 1,
            Msg::ToMember(_, _, _, Response::JoinGroup(_) | Response::SyncGroup(_)) => self.join_sync_in_flight -= 1,
            Msg::Metadata(..) | Msg::Thaw(..) | Msg::Start(_) => self.pending_control -= 1,
            _ => {}
        }
        let now = self.now;
        match msg {
            Msg::ToBroker(reply, req) => {
                let alive = self.members.get(&reply.member).is_some_and(|m| m.incarnation == reply.incarnation)
                    || matches!(req, Request::LeaveGroup(_));
                if alive {
                    // A heartbeat only pushes its member's session deadline later, so the
                    // broker's timer needs no rescheduling (an early wake-up is harmless).
                    let heartbeat = matches!(req, Request::Heartbeat(_));
                    let mut out = self.broker.handle(now, reply, req);
                    if !heartbeat {
                        out.extend(self.broker.tick(now));
                    }
                    self.deliver_broker_out(out);
                    if !heartbeat {
                        self.reschedule_broker();
                    }
                }
            }
            Msg::ToMember(name, inc, id, resp) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.incarnation != inc {
                    return true;
                }
                if m.frozen {
                    m.buffered.push((id, resp));
                    return true;
                }
                m.coord.handle_response(now, id, resp);
                self.drain(&name);
            }
            Msg::Metadata(name, inc, md) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.incarnation != inc {
                    return true;
                }
                if m.frozen {
                    m.buffered_metadata = Some(md);
                    return true;
                }
                m.coord.update_metadata(now, md);
                self.drain(&name);
            }
            Msg::Thaw(name, inc) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.incarnation != inc {
                    return true;
                }
                m.frozen = false;
                m.out_of_group_since = None;
                m.coord.handle_timeout(now);
                if let Some(md) = m.buffered_metadata.take() {
                    m.coord.update_metadata(now, md);
                }
                for (id, resp) in std::mem::take(&mut m.buffered) {
                    m.coord.handle_response(now, id, resp);
                }
                self.record_step("thaw", Some(&name), None);
                self.drain(&name);
            }
            Msg::Start(spec) => {
                let name = spec.id.clone();
                if let Err(e) = self.start_member(spec) {
                    self.record_step("error", Some(&name), Some(e.to_string()));
                }
            }
            Msg::MemberTimer(name, token) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.frozen || m.timer_token != token {
                    return true;
                }
                m.coord.handle_timeout(now);
                self.drain(&name);
            }
            Msg::BrokerTimer(token) => {
                if token == self.broker_token {
                    let out = self.broker.tick(now);
                    self.deliver_broker_out(out);
                    self.reschedule_broker();
                }
            }
        }
        if self.small {
            self.last_full_check = now;
            self.full_check();
        }
        true
    }

    fn run_until(&mut self, limit: u64, mut done: impl FnMut(&mut Sim) -> bool) -> bool {
        let mut last_quiet_check = u64::MAX;
        loop {
            if (self.small || last_quiet_check != self.now / 50) && done(self) {
                return true;
            }
            last_quiet_check = self.now / 50;
            if !self.step(limit) {
                return done(self);
            }
        }
    }

    /// Whether nothing is left to happen but heartbeats.
    fn quiet(&self) -> bool {
        if self.join_sync_in_flight > 0
            || self.pending_control > 0
            || self.broker.pending_count() > 0
            || self.broker.has_parked()
            || !matches!(self.broker.state(), GroupState::Stable | GroupState::Empty)
        {
            return false;
        }
        let mut ids = BTreeSet::new();
        for m in self.members.values() {
            if !m.alive || m.fatal || m.coord.subscription().is_empty() {
                continue;
            }
            if m.frozen
                || m.coord.state() != State::Stable
                || m.coord.rejoin_needed()
                || m.coord.generation() != self.broker.generation()
            {
                return false;
            }
            ids.insert(m.coord.member_id());
        }
        self.broker.member_ids().eq(ids.iter().copied())
    }

    fn settle(&mut self, what: &str) {
        if self.stopped {
            return;
        }
        let limit = self.now.saturating_add(self.cfg.settle_limit_ms);
        if !self.run_until(limit, |s| s.quiet()) && !self.stopped {
            self.unconverged.push(format!("the group did not settle after {what}"));
        }
        self.full_check();
    }

    fn finish(mut self) -> Outcome {
        self.full_check();
        let quiet = self.quiet();
        let mut reasons = std::mem::take(&mut self.unconverged);
        let live: Vec<&SimMember> = self.members.values().filter(|m| m.alive && !m.fatal).collect();
        let subscribed: BTreeSet<&String> = live.iter().flat_map(|m| m.coord.subscription().iter()).collect();
        let mut count: BTreeMap<(&str, i32), u32> = BTreeMap::new();
        for m in &live {
            for tp in m.view.iter() {
                *count.entry(tp).or_default() += 1;
            }
        }
        for (t, i) in &self.cluster.topics {
            for p in 0..i.partitions {
                let n = count.get(&(t.as_str(), p)).copied().unwrap_or(0);
                let want = u32::from(subscribed.contains(t));
                if n != want {
                    reasons.push(format!("{t}-{p} owned {n} times, expected {want}"));
                }
            }
        }
        let assign: BTreeMap<String, PartitionSet> = live.iter().map(|m| (m.spec.id.clone(), m.view.clone())).collect();
        let subs: BTreeMap<String, BTreeSet<String>> =
            live.iter().map(|m| (m.spec.id.clone(), m.coord.subscription().clone())).collect();
        if !is_balanced(&assign, &subs) {
            reasons.push(format!(
                "the assignment is not balanced: {:?}",
                assign.values().map(PartitionSet::len).collect::<Vec<_>>()
            ));
        }
        if !quiet && reasons.is_empty() {
            reasons.push("the group is still rebalancing".into());
        }
        if !self.fatal.is_empty() {
            reasons.push(format!("{} member(s) stopped on a fatal error", self.fatal.len()));
        }
        let final_owned =
            self.members.iter().filter(|(_, m)| m.alive).map(|(n, m)| (n.clone(), m.view.clone())).collect();
        Outcome {
            timeline: self.timeline,
            summary: Summary {
                rebalances: self.broker.completed_rebalances(),
                partitions_moved: self.moved,
                converged: reasons.is_empty(),
                violations: self.violations,
                unconverged: reasons,
                fatal: self.fatal,
                duration_ms: self.now,
                final_generation: self.broker.generation(),
                events: self.events,
            },
            partitions: self.partitions,
            final_owned,
        }
    }
}

/// Balanced as Apache Kafka's assignor tests define it: per topic, the subscribers' counts
/// differ by at most one (range), or overall no member has two more partitions than another
/// member that could take one of them (sticky).
///
/// ```
/// use std::collections::{BTreeMap, BTreeSet};
/// use kafka_consumer_protocol::sim::is_balanced;
/// use kafka_consumer_protocol::PartitionSet;
/// let set = |v: &[i32]| v.iter().map(|p| ("t", *p)).collect::<PartitionSet>();
/// let subs: BTreeMap<String, BTreeSet<String>> =
///     [("a", ["t"]), ("b", ["t"])].iter().map(|(m, t)| (m.to_string(), t.iter().map(|s| s.to_string()).collect())).collect();
/// let ok = BTreeMap::from([("a".to_string(), set(&[0, 1])), ("b".to_string(), set(&[2]))]);
/// let bad = BTreeMap::from([("a".to_string(), set(&[0, 1, 2])), ("b".to_string(), set(&[]))]);
/// assert!(is_balanced(&ok, &subs));
/// assert!(!is_balanced(&bad, &subs));
/// ```
pub fn is_balanced(assign: &BTreeMap<String, PartitionSet>, subs: &BTreeMap<String, BTreeSet<String>>) -> bool {
    let topics: BTreeSet<&String> = subs.values().flatten().collect();
    let per_topic = topics.iter().all(|t| {
        let counts: Vec<usize> = subs
            .iter()
            .filter(|(_, s)| s.contains(*t))
            .map(|(m, _)| assign.get(m).map_or(0, |a| a.partitions_of(t).count()))
            .collect();
        counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0) <= 1
    });
    if per_topic {
        return true;
    }
    let empty = BTreeSet::new();
    for (a, pa) in assign {
        for (b, pb) in assign {
            if pa.len() > pb.len() + 1 {
                let sb = subs.get(b).unwrap_or(&empty);
                if pa.topics().any(|t| sb.contains(t)) {
                    let _ = a;
                    return false;
                }
            }
        }
    }
    true
}
