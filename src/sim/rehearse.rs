//! The rehearsal of a live group's rolling upgrade: a simulator scenario built from what
//! `kcp group upgrade-check` read (issue 25). It lives in the simulator, which imports
//! `inspect`'s upgrade rules, so that the dependency between the two runs one way: `sim -> inspect`.

use std::collections::BTreeMap;
use std::fmt;

use super::{MemberSpec, Scenario, SimConfig, Step, StepSpec};
use crate::assignor::{builtin, ClusterMetadata};
use crate::inspect::upgrade::{BrokerLine, ServerAssignor, UpgradeEnvironment};
use crate::inspect::ClassicGroup;
use crate::SubscriptionView;

/// A rehearsal scenario of a live group's rolling upgrade, built by [`rehearsal_scenario`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rehearsal {
    /// The scenario `kcp simulate` runs.
    pub scenario: Scenario,
    /// The simulated members' short names with the live member ids they stand for, in the
    /// scenario's (and the upgrade's) order.
    pub names: Vec<(String, String)>,
    /// What the scenario simplifies or assumed (for the scenario's description and for people).
    pub notes: Vec<String>,
    /// The scenario's timeouts and initial rebalance delay, each with where it came from.
    pub timing: RehearsalTiming,
}

/// Where a value of a rehearsal's [`RehearsalTiming`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimingSource {
    /// Given by the caller (`kcp group upgrade-check --session-timeout-ms`, `--rebalance-timeout-ms`).
    Option,
    /// The group's `GroupMetadata` record in `__consumer_offsets`: what the members sent in
    /// their JoinGroup (session timeout, and rebalance timeout, which is the Java consumer's
    /// `max.poll.interval.ms`).
    GroupMetadata,
    /// The coordinator's broker config (DescribeConfigs).
    BrokerConfig,
    /// A default: Java's for the members' timeouts, Kafka's for the broker's delay.
    Default,
}

impl TimingSource {
    /// The name in `kcp group upgrade-check`'s JSON: `option`, `group_metadata`,
    /// `broker_config`, `default`.
    pub fn as_str(self) -> &'static str {
        match self {
            TimingSource::Option => "option",
            TimingSource::GroupMetadata => "group_metadata",
            TimingSource::BrokerConfig => "broker_config",
            TimingSource::Default => "default",
        }
    }
}

/// A duration of the rehearsal, in milliseconds, and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingValue {
    /// Milliseconds.
    pub ms: u64,
    /// Where the value came from.
    pub source: TimingSource,
}

/// The rehearsal's timing, as written into its scenario's `config`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RehearsalTiming {
    /// `session_timeout_ms`, also the spacing of the upgrades.
    pub session_timeout: TimingValue,
    /// `rebalance_timeout_ms`.
    pub rebalance_timeout: TimingValue,
    /// `initial_rebalance_delay_ms`.
    pub initial_rebalance_delay: TimingValue,
}

/// One member's timeouts as the classic coordinator stored them in the group's `GroupMetadata`
/// record (`__consumer_offsets`, fields `session_timeout` and `rebalance_timeout` of the
/// member), which is what the member sent in its JoinGroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberTimeouts {
    /// `session_timeout` (the member's `session.timeout.ms`).
    pub session_timeout_ms: i32,
    /// `rebalance_timeout` (the Java consumer's `max.poll.interval.ms`).
    pub rebalance_timeout_ms: i32,
}

/// What the caller of [`rehearsal_scenario_with`] knows of the members' timeouts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeoutInputs {
    /// The session timeout to use whatever the group says.
    pub session_timeout_ms: Option<u64>,
    /// The rebalance timeout to use whatever the group says.
    pub rebalance_timeout_ms: Option<u64>,
    /// The members' own timeouts by member id, from the group's latest `GroupMetadata` record
    /// (empty when it could not be read).
    pub members: BTreeMap<String, MemberTimeouts>,
}

/// Java's default `session.timeout.ms` (since Kafka 3.0), the rehearsal's session timeout when
/// neither the caller nor the group's metadata gives one.
pub const JAVA_SESSION_TIMEOUT_MS: u64 = 45_000;

impl Rehearsal {
    /// A one-paragraph description for the scenario file: what group it rehearses, the member
    /// names, and the notes.
    pub fn description(&self, group_id: &str) -> String {
        let names: Vec<String> = self.names.iter().map(|(n, id)| format!("{n}={id}")).collect();
        let mut text = format!(
            "Rehearsal of the rolling upgrade of group {group_id:?} to group.protocol=consumer: each classic member \
             restarted as a consumer-protocol member in turn, one session timeout apart. Members: {}.",
            names.join(", ")
        );
        for note in &self.notes {
            text.push(' ');
            text.push_str(note);
        }
        text
    }
}

/// Java's default `max.poll.interval.ms`, which the Java consumer sends as its rebalance
/// timeout: the rehearsal's rebalance timeout when neither the caller nor the group's metadata
/// gives one (DescribeGroups does not report the members' own).
pub const JAVA_REBALANCE_TIMEOUT_MS: u64 = 300_000;

/// Why a group cannot be rehearsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RehearsalError {
    message: String,
}

impl fmt::Display for RehearsalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RehearsalError {}

fn refuse(message: impl Into<String>) -> RehearsalError {
    RehearsalError { message: message.into() }
}

/// Builds the simulator scenario that rehearses the rolling upgrade of the classic `group`
/// (as DescribeGroups reported it) to the consumer protocol, under the broker `env` that
/// [`check_upgrade`](crate::inspect::upgrade::check_upgrade) judged it with:
///
/// - topics: those the members subscribe to, with their partition counts in `metadata`;
/// - members: one per live member, sorted by member id and named `m1`, `m2`, ... (zero-padded
///   so that the names sort as the ids do: the classic assignors order members by id), each
///   with its subscription, its rack (`client.rack`), its `group.instance.id` and the group's
///   chosen assignor (DescribeGroups reports only that one);
/// - config: `session_timeout_ms`, the broker's `group.consumer.migration.policy` (or its
///   line's default) and the server-side assignor (`assignor`, else the first of
///   `group.consumer.assignors`, else `uniform`);
/// - steps: one `upgrade` per member in that order, each followed by a wait of
///   `session_timeout_ms` (the group is not waited for in between: the checker watches the
///   rebalances overlap; the run settles after the last one).
///
/// A scenario cannot give members an initial ownership: they join at the start and the
/// group's assignor assigns from nothing, which for a balanced live group is its current
/// assignment up to which member holds which share (a note says so). The simulator applies
/// only the migration policy of the broker's rules: a broker with the consumer protocol off
/// still converts in the rehearsal (a note says so too).
///
/// Refused: a group that is not Stable (its payloads are not reported), is not of the
/// consumer protocol type, has no members, uses an
/// assignor the simulator does not have, whose subscriptions do not decode, or whose broker
/// assigns with a custom server-side assignor.
///
/// ```
/// use bytes::Bytes;
/// use kafka_consumer_protocol::assignor::ClusterMetadata;
/// use kafka_consumer_protocol::group_api::DescribedGroupMember;
/// use kafka_consumer_protocol::inspect::upgrade::{BrokerLine, UpgradeEnvironment};
/// use kafka_consumer_protocol::inspect::ClassicGroup;
/// use kafka_consumer_protocol::sim::{rehearsal_scenario, run, GroupProtocol, Step};
/// use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
///
/// let member = |id: &str, partitions: Vec<i32>| DescribedGroupMember {
///     member_id: id.into(),
///     member_metadata: Bytes::from(Subscription::new(["orders"]).encode(Version::V3).unwrap()),
///     member_assignment: Bytes::from(
///         Assignment::new(vec![TopicPartitions::new("orders", partitions)]).encode(Version::V3).unwrap(),
///     ),
///     ..DescribedGroupMember::default()
/// };
/// let group = ClassicGroup {
///     group_id: "billing".into(),
///     state: "Stable".into(),
///     protocol_type: "consumer".into(),
///     protocol: "cooperative-sticky".into(),
///     members: vec![member("consumer-2", vec![2, 3]), member("consumer-1", vec![0, 1])],
/// };
/// let metadata = ClusterMetadata::from_counts([("orders", 4)]);
/// let env = UpgradeEnvironment::defaults(BrokerLine::Kafka4);
/// let rehearsal = rehearsal_scenario(&group, &env, &metadata, None, 45_000).unwrap();
/// assert_eq!(rehearsal.names[0], ("m1".to_string(), "consumer-1".to_string()));
/// assert_eq!(rehearsal.scenario.steps[0].step, Step::Upgrade("m1".into()));
/// let out = run(&rehearsal.scenario).unwrap();
/// assert!(out.summary.converged);
/// assert!(out.summary.violations.is_empty());
/// assert_eq!(out.summary.group_protocol, GroupProtocol::Consumer);
/// ```
pub fn rehearsal_scenario(
    group: &ClassicGroup,
    env: &UpgradeEnvironment,
    metadata: &ClusterMetadata,
    assignor: Option<ServerAssignor>,
    session_timeout_ms: u64,
) -> Result<Rehearsal, RehearsalError> {
    let timeouts = TimeoutInputs { session_timeout_ms: Some(session_timeout_ms), ..TimeoutInputs::default() };
    rehearsal_scenario_with(group, env, metadata, assignor, &timeouts)
}

/// [`rehearsal_scenario`] with the members' own timeouts: each of `session_timeout_ms` and
/// `rebalance_timeout_ms` is the caller's (`timeouts`' field) when given, else the largest of
/// the live members' in `timeouts.members` (the classic coordinator waits for the slowest
/// member's rebalance timeout; the simulator has one of each for the group), else Java's
/// default ([`JAVA_SESSION_TIMEOUT_MS`], [`JAVA_REBALANCE_TIMEOUT_MS`]). A value out of the
/// simulator's range in a member's record is not used. The broker's
/// `group.initial.rebalance.delay.ms` is used when DescribeConfigs reported it, else Kafka's
/// default 3000. [`Rehearsal::timing`] says where each value came from; the notes say when
/// members are missing from the record or disagree.
///
/// ```
/// use std::collections::BTreeMap;
/// use bytes::Bytes;
/// use kafka_consumer_protocol::assignor::ClusterMetadata;
/// use kafka_consumer_protocol::group_api::DescribedGroupMember;
/// use kafka_consumer_protocol::inspect::upgrade::{BrokerConfigs, BrokerLine, UpgradeEnvironment};
/// use kafka_consumer_protocol::inspect::ClassicGroup;
/// use kafka_consumer_protocol::sim::{rehearsal_scenario_with, MemberTimeouts, TimeoutInputs, TimingSource};
/// use kafka_consumer_protocol::{Subscription, Version};
///
/// let group = ClassicGroup {
///     group_id: "billing".into(),
///     state: "Stable".into(),
///     protocol_type: "consumer".into(),
///     protocol: "range".into(),
///     members: vec![DescribedGroupMember {
///         member_id: "consumer-1".into(),
///         member_metadata: Bytes::from(Subscription::new(["orders"]).encode(Version::V3).unwrap()),
///         ..DescribedGroupMember::default()
///     }],
/// };
/// let mut env = UpgradeEnvironment::defaults(BrokerLine::Kafka4);
/// env.configs = Some(BrokerConfigs::from_pairs([("group.initial.rebalance.delay.ms", Some("0"))]));
/// let timeouts = TimeoutInputs {
///     members: BTreeMap::from([(
///         "consumer-1".to_string(),
///         MemberTimeouts { session_timeout_ms: 10_000, rebalance_timeout_ms: 120_000 },
///     )]),
///     ..TimeoutInputs::default()
/// };
/// let metadata = ClusterMetadata::from_counts([("orders", 4)]);
/// let r = rehearsal_scenario_with(&group, &env, &metadata, None, &timeouts).unwrap();
/// assert_eq!(r.scenario.config.rebalance_timeout_ms, 120_000);
/// assert_eq!(r.timing.rebalance_timeout.source, TimingSource::GroupMetadata);
/// assert_eq!(r.scenario.config.session_timeout_ms, 10_000);
/// assert_eq!(r.scenario.config.initial_rebalance_delay_ms, 0);
/// assert_eq!(r.timing.initial_rebalance_delay.source, TimingSource::BrokerConfig);
/// ```
pub fn rehearsal_scenario_with(
    group: &ClassicGroup,
    env: &UpgradeEnvironment,
    metadata: &ClusterMetadata,
    assignor: Option<ServerAssignor>,
    timeouts: &TimeoutInputs,
) -> Result<Rehearsal, RehearsalError> {
    let mut notes = Vec::new();
    if group.protocol_type != "consumer" {
        return Err(refuse(format!(
            "group {:?} has protocol type {:?}: only consumer groups can be rehearsed",
            group.group_id, group.protocol_type
        )));
    }
    if group.members.is_empty() {
        return Err(refuse(format!(
            "group {:?} has no members: there is nothing to rehearse (an empty classic group is replaced, not converted)",
            group.group_id
        )));
    }
    if group.state != "Stable" {
        return Err(refuse(format!(
            "group {:?} is {}: the broker reports the members' subscriptions only while it is Stable; try again then",
            group.group_id, group.state
        )));
    }
    if builtin(&group.protocol).is_none() {
        return Err(refuse(format!(
            "group {:?} uses the assignor {:?}, which the simulator does not have (range, roundrobin, sticky, \
             cooperative-sticky)",
            group.group_id, group.protocol
        )));
    }
    for (what, value) in [("session", timeouts.session_timeout_ms), ("rebalance", timeouts.rebalance_timeout_ms)] {
        if let Some(ms) = value.filter(|&ms| ms == 0 || ms > super::limits::MAX_DURATION_MS) {
            return Err(refuse(format!("{what} timeout {ms} ms is out of the simulator's range")));
        }
    }
    let configs = env.configs.as_ref();
    let policy = match configs.and_then(|c| c.migration_policy.as_deref()) {
        Some(p) => p.trim().to_ascii_lowercase(),
        None => {
            let default = env.line.default_policy();
            if configs.is_none() {
                notes.push(format!(
                    "The broker's configs were not readable: the {} default group.consumer.migration.policy={default} \
                     is assumed.",
                    env.line.as_str()
                ));
            }
            default.to_owned()
        }
    };
    if !["bidirectional", "upgrade", "downgrade", "disabled"].contains(&policy.as_str()) {
        return Err(refuse(format!("group.consumer.migration.policy={policy:?} is not a policy the broker knows")));
    }
    let server = match assignor {
        Some(a) => a,
        None => match configs.and_then(|c| c.consumer_assignors.as_deref()) {
            None => ServerAssignor::Uniform,
            Some(list) => {
                let first = list.split(',').next().unwrap_or("").trim();
                ServerAssignor::parse(first).ok_or_else(|| {
                    refuse(format!(
                        "the broker assigns with {first:?} (first of group.consumer.assignors={list}), a custom \
                         assignor the simulator does not have: pass --assignor"
                    ))
                })?
            }
        },
    };
    let protocols = configs.and_then(|c| c.rebalance_protocols.as_deref()).unwrap_or(env.line.default_protocols());
    let consumer_on = protocols.split(',').any(|p| p.trim().eq_ignore_ascii_case("consumer"))
        && (env.line == BrokerLine::Kafka3 || env.group_version.is_some_and(|l| l >= 1));
    if !consumer_on {
        notes.push(
            "The broker does not run consumer groups (see consumer_protocol_enabled): the real members would fail \
             with UNSUPPORTED_VERSION, which the simulator does not model; only the migration policy is rehearsed."
                .to_owned(),
        );
    }

    let mut members: Vec<_> = group.members.iter().collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    let width = members.len().to_string().len();
    let mut specs = Vec::new();
    let mut names = Vec::new();
    let mut topics = BTreeMap::new();
    for (i, m) in members.iter().enumerate() {
        let name = format!("m{:0width$}", i + 1);
        let sub = SubscriptionView::decode(&m.member_metadata)
            .map_err(|e| refuse(format!("member {:?}: its subscription does not decode: {e}", m.member_id)))?;
        let subscribed: Vec<String> = sub.topics().iter().map(str::to_owned).collect();
        for t in &subscribed {
            match metadata.topics.get(t) {
                Some(info) if info.partitions > 0 => {
                    topics.insert(t.clone(), info.partitions);
                }
                _ if !topics.contains_key(t) => {
                    let note = format!("Topic {t:?} is not in the metadata: it has no partitions in the rehearsal.");
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
                _ => {}
            }
        }
        let mut spec = MemberSpec::new(&name, [group.protocol.clone()], subscribed);
        spec.rack = sub.rack_id().filter(|r| !r.is_empty()).map(str::to_owned);
        spec.static_id = m.group_instance_id.clone();
        specs.push(spec);
        names.push((name, m.member_id.clone()));
    }
    if specs.iter().any(|m| m.static_id.is_some()) {
        notes.push(
            "Static members (group.instance.id) keep their ids, but the simulator does not model static \
             membership inside the converted consumer group."
                .to_owned(),
        );
    }
    notes.push(
        "A scenario cannot start from the group's current ownership: the members start together and the group's \
         assignor assigns from nothing, the same balance as a balanced live group, possibly with the shares held \
         by other members."
            .to_owned(),
    );
    // DescribeGroups reports neither timeout: the caller's, else the members' own from the
    // group's metadata record, else Java's defaults.
    let ids: Vec<&str> = names.iter().map(|(_, id)| id.as_str()).collect();
    let session_timeout = member_timeout(
        "session",
        timeouts.session_timeout_ms,
        &ids,
        timeouts,
        |t| t.session_timeout_ms,
        JAVA_SESSION_TIMEOUT_MS,
        &mut notes,
    );
    let rebalance_timeout = member_timeout(
        "rebalance",
        timeouts.rebalance_timeout_ms,
        &ids,
        timeouts,
        |t| t.rebalance_timeout_ms,
        JAVA_REBALANCE_TIMEOUT_MS,
        &mut notes,
    );
    let reported_delay = configs
        .and_then(|c| c.initial_rebalance_delay_ms.as_deref())
        .map(|v| v.trim().parse::<u64>().ok().filter(|&ms| ms <= crate::sim::limits::MAX_DURATION_MS).ok_or(v));
    let initial_rebalance_delay = match reported_delay {
        Some(Ok(ms)) => TimingValue { ms, source: TimingSource::BrokerConfig },
        other => {
            if let Some(Err(v)) = other {
                notes.push(format!(
                    "The broker's group.initial.rebalance.delay.ms={v:?} is not a delay the simulator takes: Kafka's \
                     default 3000 is assumed."
                ));
            }
            TimingValue { ms: SimConfig::default().initial_rebalance_delay_ms, source: TimingSource::Default }
        }
    };
    let mut steps = Vec::new();
    for (i, (name, _)) in names.iter().enumerate() {
        steps.push(StepSpec { step: Step::Upgrade(name.clone()), settle: false });
        if i + 1 < names.len() {
            steps.push(StepSpec { step: Step::Wait(session_timeout.ms), settle: false });
        }
    }
    let config = SimConfig {
        session_timeout_ms: session_timeout.ms,
        rebalance_timeout_ms: rebalance_timeout.ms,
        initial_rebalance_delay_ms: initial_rebalance_delay.ms,
        migration_policy: policy,
        server_assignor: server.as_str().to_owned(),
        broker_version: env.line.as_str().to_owned(),
        ..SimConfig::default()
    };
    let scenario = Scenario { seed: 1, topics, members: specs, steps, config };
    let timing = RehearsalTiming { session_timeout, rebalance_timeout, initial_rebalance_delay };
    Ok(Rehearsal { scenario, names, notes, timing })
}

/// One of the members' timeouts for the whole simulated group: `given`, else the largest of
/// the members' recorded values (notes say when some are missing or they differ), else
/// `default`.
fn member_timeout(
    what: &str,
    given: Option<u64>,
    ids: &[&str],
    timeouts: &TimeoutInputs,
    field: impl Fn(&MemberTimeouts) -> i32,
    default: u64,
    notes: &mut Vec<String>,
) -> TimingValue {
    if let Some(ms) = given {
        return TimingValue { ms, source: TimingSource::Option };
    }
    let recorded: Vec<u64> = ids
        .iter()
        .filter_map(|id| timeouts.members.get(*id))
        .filter_map(|t| u64::try_from(field(t)).ok())
        .filter(|&ms| ms > 0 && ms <= super::limits::MAX_DURATION_MS)
        .collect();
    let (Some(&min), Some(&max)) = (recorded.iter().min(), recorded.iter().max()) else {
        return TimingValue { ms: default, source: TimingSource::Default };
    };
    if recorded.len() < ids.len() {
        notes.push(format!(
            "The group's metadata record gave the {what} timeout of {} of the {} members: the largest of theirs, \
             {max} ms, is used.",
            recorded.len(),
            ids.len()
        ));
    } else if min != max {
        notes.push(format!(
            "The members' {what} timeouts differ ({min} to {max} ms): the simulator has one for the group, the \
             largest is used."
        ));
    }
    TimingValue { ms: max, source: TimingSource::GroupMetadata }
}
