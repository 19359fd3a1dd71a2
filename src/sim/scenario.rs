//! The scenario: what a run is given (initial topics and members, the steps with their faults,
//! the timeouts and network shape), the [`limits`] that bound it, and the error a scenario that
//! cannot run gets. Plain data: the engine (`engine.rs`) plays it, `json.rs` parses it from a file.

use std::collections::BTreeMap;
use std::fmt;

use crate::coordinator::CoordinatorError;

/// The simulator's limits: a scenario above one is refused (by [`run`](super::run) and by the scenario
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
    /// `group.protocol`: the classic JoinGroup/SyncGroup member (the default) or a KIP-848
    /// consumer-protocol member.
    pub protocol: GroupProtocol,
}

/// A member's `group.protocol`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupProtocol {
    /// The classic protocol: JoinGroup/SyncGroup with the member's own assignors.
    #[default]
    Classic,
    /// KIP-848: heartbeats, the broker's server-side assignor and reconciliation. Its first
    /// heartbeat converts a classic group to a consumer group when the broker's rules allow it.
    Consumer,
}

impl GroupProtocol {
    /// `classic` or `consumer`, as in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupProtocol::Classic => "classic",
            GroupProtocol::Consumer => "consumer",
        }
    }
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
            protocol: GroupProtocol::Classic,
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
    /// A classic member shuts down cleanly and starts again as a consumer-protocol member
    /// (`group.protocol=consumer`): one step of a rolling upgrade.
    Upgrade(String),
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
            Step::Upgrade(_) => "upgrade",
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
    /// The broker's `group.consumer.migration.policy` (`bidirectional`, `upgrade`, `downgrade`,
    /// `disabled`): whether a consumer member may convert the classic group.
    pub migration_policy: String,
    /// The server-side assignor of consumer groups: `uniform` or `range`.
    pub server_assignor: String,
    /// The broker's line, whose conversion rules apply: `4.x` (default) or `3.x` (Kafka 3.7 to
    /// 3.9, the consumer protocol assumed on: the simulator applies only the migration policy).
    pub broker_version: String,
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
            migration_policy: "bidirectional".into(),
            broker_version: "4.x".into(),
            server_assignor: "uniform".into(),
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
    /// A step the simulator does not model for that member (a fault on a consumer-protocol
    /// member, an upgrade of a member that is not classic).
    Unsupported(String),
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
            SimError::Unsupported(m) => write!(f, "{m}"),
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

/// Refuses a scenario above the [`limits`] before anything is allocated for it.
pub(super) fn check_limits(s: &Scenario) -> Result<(), SimError> {
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
