//! Will a group survive the move between the classic protocol and KIP-848's consumer protocol?
//!
//! [`check_upgrade`] judges a classic group before its members restart with
//! `group.protocol=consumer`; [`check_downgrade`] judges a consumer group whose members must go
//! back to `classic`. Both are pure: the caller hands in what the cluster reported (the broker
//! line from ApiVersions (Fetch's minimum version), the finalized `group.version` feature, the group coordinator's broker
//! configs from DescribeConfigs, the described group and the topic metadata), and gets one
//! [`Check`] per condition the group coordinator applies, with its evidence and advice.
//!
//! The conditions are those of Apache Kafka's `GroupMetadataManager` (`validateOnlineUpgrade`,
//! `convertToConsumerGroup`, `validateOnlineDowngradeWith*`) and `ConsumerGroup.fromClassicGroup`,
//! which differ between the lines:
//!
//! | | 3.7–3.9 | 4.0 and later |
//! | --- | --- | --- |
//! | consumer groups on | `group.coordinator.rebalance.protocols` contains `consumer` (default `classic`) | that, and the `group.version` feature finalized at level 1 or more (default protocols `classic,consumer,…`) |
//! | `group.consumer.migration.policy` default | `disabled` (an internal config: DescribeConfigs reports it only when set) | `bidirectional` |
//! | a member's assignment with userData | converted, the userData dropped | refused ("unsupported custom assignor") |
//! | a member with an empty (never synced) assignment | refused: Java's reader fails on zero bytes | converted with no partitions |
//!
//! A refusal is answered with GROUP_ID_NOT_FOUND to the consumer-protocol member, which the
//! Java consumer treats as fatal; a disabled consumer protocol with UNSUPPORTED_VERSION.
//!
//! ```
//! use bytes::Bytes;
//! use kafka_consumer_protocol::assignor::ClusterMetadata;
//! use kafka_consumer_protocol::group_api::DescribedGroupMember;
//! use kafka_consumer_protocol::inspect::upgrade::{check_upgrade, BrokerLine, UpgradeEnvironment, Verdict};
//! use kafka_consumer_protocol::inspect::ClassicGroup;
//! use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
//!
//! let member = |id: &str, partitions: Vec<i32>| DescribedGroupMember {
//!     member_id: id.into(),
//!     member_metadata: Bytes::from(Subscription::new(["orders"]).encode(Version::V3).unwrap()),
//!     member_assignment: Bytes::from(
//!         Assignment::new(vec![TopicPartitions::new("orders", partitions)]).encode(Version::V3).unwrap(),
//!     ),
//!     ..DescribedGroupMember::default()
//! };
//! let group = ClassicGroup {
//!     group_id: "billing".into(),
//!     state: "Stable".into(),
//!     protocol_type: "consumer".into(),
//!     protocol: "cooperative-sticky".into(),
//!     members: vec![member("c1", vec![0, 1]), member("c2", vec![2])],
//! };
//! let metadata = ClusterMetadata::from_counts([("orders", 3)]);
//! // A 4.x broker with every config at its default: ready.
//! let report = check_upgrade(&group, &UpgradeEnvironment::defaults(BrokerLine::Kafka4), &metadata, None);
//! assert_eq!(report.verdict, Verdict::Ready);
//! // A 3.9 broker with its defaults: the consumer protocol is off and the policy disabled.
//! let report = check_upgrade(&group, &UpgradeEnvironment::defaults(BrokerLine::Kafka3), &metadata, None);
//! assert_eq!(report.verdict, Verdict::Blocked);
//! let failed: Vec<&str> = report.checks.iter().filter(|c| c.ok == Some(false)).map(|c| c.name).collect();
//! assert_eq!(failed, ["consumer_protocol_enabled", "migration_policy"]);
//! ```

use std::collections::BTreeMap;

use super::classic::{inspect_classic, ClassicGroup, ReportedPayload};
use super::consumer::{ConsumerGroup, MemberType};
use super::diagnostic::DiagnosticKind;
use crate::assignor::{builtin, ClusterMetadata, GroupMember};
use crate::{Subscription, TopicPartitions};

/// Which group coordinator's rules apply: they changed between 3.x and 4.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrokerLine {
    /// Kafka 3.7 to 3.9: KIP-848 in preview, off unless configured.
    Kafka3,
    /// Kafka 4.0 and later: KIP-848 generally available.
    Kafka4,
}

impl BrokerLine {
    /// The line of a broker from its ApiVersions: Kafka 4.0 removed Fetch v0-v3 (KIP-896), so
    /// a minimum Fetch version of 4 or more is 4.0 or later. (Not Produce: 4.x brokers still
    /// advertise Produce v0 for old librdkafka clients, though they refuse v0-v2.)
    ///
    /// ```
    /// use kafka_consumer_protocol::inspect::upgrade::BrokerLine;
    /// assert_eq!(BrokerLine::from_fetch_min_version(0), BrokerLine::Kafka3);
    /// assert_eq!(BrokerLine::from_fetch_min_version(4), BrokerLine::Kafka4);
    /// ```
    pub fn from_fetch_min_version(min_version: i16) -> Self {
        if min_version >= 4 {
            BrokerLine::Kafka4
        } else {
            BrokerLine::Kafka3
        }
    }

    /// `3.x` or `4.x`, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            BrokerLine::Kafka3 => "3.x",
            BrokerLine::Kafka4 => "4.x",
        }
    }

    /// `group.coordinator.rebalance.protocols`' default on this line (the simulator's rehearsal
    /// assumes it too).
    pub(crate) fn default_protocols(self) -> &'static str {
        match self {
            BrokerLine::Kafka3 => "classic",
            BrokerLine::Kafka4 => "classic,consumer",
        }
    }

    /// `group.consumer.migration.policy`'s default on this line.
    pub(crate) fn default_policy(self) -> &'static str {
        match self {
            BrokerLine::Kafka3 => "disabled",
            BrokerLine::Kafka4 => "bidirectional",
        }
    }
}

/// The group coordinator's configs as DescribeConfigs reported them for the coordinator's
/// broker: the raw values, `None` for a config the broker did not report (then its default for
/// the [`BrokerLine`] applies; 3.x reports `group.consumer.migration.policy` only when set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BrokerConfigs {
    /// `group.coordinator.rebalance.protocols`, for example `classic,consumer`.
    pub rebalance_protocols: Option<String>,
    /// `group.consumer.migration.policy`: `disabled`, `upgrade`, `downgrade` or `bidirectional`.
    pub migration_policy: Option<String>,
    /// `group.consumer.max.size`.
    pub consumer_max_size: Option<String>,
    /// `group.max.size` (the classic limit, for a downgrade).
    pub classic_max_size: Option<String>,
    /// `group.consumer.assignors`: class names or (4.x) the names `uniform`, `range`.
    pub consumer_assignors: Option<String>,
    /// `group.initial.rebalance.delay.ms`: how long the coordinator waits for more members
    /// before the first rebalance of an empty classic group (the rehearsal's
    /// `initial_rebalance_delay_ms`).
    pub initial_rebalance_delay_ms: Option<String>,
}

impl BrokerConfigs {
    /// The config names to ask DescribeConfigs for.
    pub const NAMES: [&'static str; 6] = [
        "group.coordinator.rebalance.protocols",
        "group.consumer.migration.policy",
        "group.consumer.max.size",
        "group.max.size",
        "group.consumer.assignors",
        "group.initial.rebalance.delay.ms",
    ];

    /// Fills the fields from `(name, value)` pairs (names not in [`BrokerConfigs::NAMES`] are ignored).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> Self {
        let mut configs = BrokerConfigs::default();
        for (name, value) in pairs {
            let value = value.map(str::to_owned);
            match name {
                "group.coordinator.rebalance.protocols" => configs.rebalance_protocols = value,
                "group.consumer.migration.policy" => configs.migration_policy = value,
                "group.consumer.max.size" => configs.consumer_max_size = value,
                "group.max.size" => configs.classic_max_size = value,
                "group.consumer.assignors" => configs.consumer_assignors = value,
                "group.initial.rebalance.delay.ms" => configs.initial_rebalance_delay_ms = value,
                _ => {}
            }
        }
        configs
    }
}

/// What the cluster reported about its group coordinator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeEnvironment {
    /// Whose rules apply.
    pub line: BrokerLine,
    /// The finalized level of the `group.version` feature (ApiVersions v3+), `None` when not
    /// finalized.
    pub group_version: Option<i16>,
    /// The coordinator's configs; `None` when they could not be read (DescribeConfigs refused),
    /// which makes the checks that need them unknown.
    pub configs: Option<BrokerConfigs>,
}

impl UpgradeEnvironment {
    /// A broker of `line` with every config at its default and `group.version` finalized at
    /// the level its line formats by default (1 on 4.x, none on 3.x).
    pub fn defaults(line: BrokerLine) -> Self {
        let group_version = match line {
            BrokerLine::Kafka3 => None,
            BrokerLine::Kafka4 => Some(1),
        };
        UpgradeEnvironment { line, group_version, configs: Some(BrokerConfigs::default()) }
    }
}

/// Which way the group moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Classic to consumer (`group.protocol=consumer`).
    Upgrade,
    /// Consumer to classic.
    Downgrade,
}

impl Direction {
    /// `upgrade` or `downgrade`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Upgrade => "upgrade",
            Direction::Downgrade => "downgrade",
        }
    }
}

/// The server-side assignor of a consumer group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerAssignor {
    /// `org.apache.kafka.coordinator.group.assignor.UniformAssignor`, the default.
    Uniform,
    /// `org.apache.kafka.coordinator.group.assignor.RangeAssignor`.
    Range,
}

impl ServerAssignor {
    /// `uniform` or `range`.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerAssignor::Uniform => "uniform",
            ServerAssignor::Range => "range",
        }
    }

    /// Reads a name as the broker accepts it in `group.consumer.assignors` or
    /// `group.remote.assignor`: the short name or the built-in class name.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "uniform" | "org.apache.kafka.coordinator.group.assignor.UniformAssignor" => Some(ServerAssignor::Uniform),
            "range" | "org.apache.kafka.coordinator.group.assignor.RangeAssignor" => Some(ServerAssignor::Range),
            _ => None,
        }
    }

    /// Our assignor that stands in for it: `uniform` balances and keeps what each member
    /// owns, as our `cooperative-sticky` does when given the owned partitions (its withheld
    /// partitions count at their final owner); `range` hands each topic's partitions out in
    /// ranges over the members sorted by id, as our (Java's client) `range`.
    pub(crate) fn model(self) -> &'static str {
        match self {
            ServerAssignor::Uniform => "cooperative-sticky",
            ServerAssignor::Range => "range",
        }
    }
}

/// `ready`, `blocked` or `unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Every check passed.
    Ready,
    /// At least one check failed.
    Blocked,
    /// None failed, but at least one could not be decided from what was reported.
    Unknown,
}

impl Verdict {
    /// `ready`, `blocked` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ready => "ready",
            Verdict::Blocked => "blocked",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One condition, judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// A stable snake_case name (see the module's check list in `docs/cli.md`).
    pub name: &'static str,
    /// `Some(true)` passed, `Some(false)` failed, `None` could not be decided.
    pub ok: Option<bool>,
    /// What was checked and what the cluster reported.
    pub evidence: String,
    /// What to do, when the check failed or could not be decided.
    pub advice: Option<String>,
    /// Whether the broker itself refuses the conversion when this check fails (the others
    /// are conditions under which it converts, but badly).
    pub broker_refuses: bool,
}

impl Check {
    fn pass(name: &'static str, broker_refuses: bool, evidence: impl Into<String>) -> Self {
        Check { name, ok: Some(true), evidence: evidence.into(), advice: None, broker_refuses }
    }

    fn fail(name: &'static str, broker_refuses: bool, evidence: impl Into<String>, advice: impl Into<String>) -> Self {
        Check { name, ok: Some(false), evidence: evidence.into(), advice: Some(advice.into()), broker_refuses }
    }

    fn unknown(
        name: &'static str,
        broker_refuses: bool,
        evidence: impl Into<String>,
        advice: impl Into<String>,
    ) -> Self {
        Check { name, ok: None, evidence: evidence.into(), advice: Some(advice.into()), broker_refuses }
    }
}

/// The judgement of one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeReport {
    /// The group id.
    pub group_id: String,
    /// Upgrade or downgrade.
    pub direction: Direction,
    /// `blocked` if a check failed, else `unknown` if one is undecided, else `ready`.
    pub verdict: Verdict,
    /// What the broker will do when the first member of the other protocol arrives (upgrade)
    /// or the last one leaves (downgrade): `Some(true)` convert, `Some(false)` refuse, `None`
    /// not decidable. It can be `Some(true)` with a `blocked` verdict: the broker converts a
    /// group in the middle of a rebalance, but from a stale assignment.
    pub broker_converts: Option<bool>,
    /// One check per condition, in a fixed order.
    pub checks: Vec<Check>,
}

impl UpgradeReport {
    fn new(group_id: &str, direction: Direction, checks: Vec<Check>) -> Self {
        let verdict = if checks.iter().any(|c| c.ok == Some(false)) {
            Verdict::Blocked
        } else if checks.iter().any(|c| c.ok.is_none()) {
            Verdict::Unknown
        } else {
            Verdict::Ready
        };
        let refusing = checks.iter().filter(|c| c.broker_refuses);
        let broker_converts = if refusing.clone().any(|c| c.ok == Some(false)) {
            Some(false)
        } else if refusing.clone().any(|c| c.ok.is_none()) {
            None
        } else {
            Some(true)
        };
        UpgradeReport { group_id: group_id.to_owned(), direction, verdict, broker_converts, checks }
    }

    /// The check of that name.
    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// The report as the `kcp group upgrade-check` JSON object.
    #[cfg(feature = "json")]
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "group_id": self.group_id,
            "direction": self.direction.as_str(),
            "verdict": self.verdict.as_str(),
            "broker_converts": self.broker_converts,
            "checks": self.checks.iter().map(|c| serde_json::json!({
                "name": c.name,
                "ok": c.ok,
                "evidence": c.evidence,
                "advice": c.advice,
                "broker_refuses": c.broker_refuses,
            })).collect::<Vec<_>>(),
        })
    }
}

/// A config's value, or its default for the line, and where it came from.
fn config_or<'a>(value: Option<&'a str>, default: &'a str) -> (&'a str, &'static str) {
    match value {
        Some(v) => (v, ""),
        None => (default, " (default)"),
    }
}

/// `1 member`, `2 members`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn parse_size(value: Option<&str>) -> Result<(i64, &'static str), String> {
    match value {
        None => Ok((i64::from(i32::MAX), " (default)")),
        Some(v) => v.trim().parse::<i64>().map(|n| (n, "")).map_err(|_| format!("{v:?} is not a number")),
    }
}

fn consumer_protocol_check(env: &UpgradeEnvironment) -> Check {
    const NAME: &str = "consumer_protocol_enabled";
    let Some(configs) = &env.configs else {
        return Check::unknown(
            NAME,
            true,
            "group.coordinator.rebalance.protocols was not readable (DescribeConfigs on the coordinator's broker failed)",
            "grant DescribeConfigs on the cluster, or check the brokers' server.properties",
        );
    };
    let (protocols, origin) = config_or(configs.rebalance_protocols.as_deref(), env.line.default_protocols());
    let listed = protocols.split(',').any(|p| p.trim().eq_ignore_ascii_case("consumer"));
    let feature = match env.group_version {
        Some(level) => format!("group.version={level}"),
        None => "group.version not finalized".to_owned(),
    };
    let evidence =
        format!("{} broker: group.coordinator.rebalance.protocols={protocols}{origin}, {feature}", env.line.as_str());
    match env.line {
        BrokerLine::Kafka3 if listed => Check::pass(NAME, true, evidence),
        BrokerLine::Kafka3 => Check::fail(
            NAME,
            true,
            evidence,
            "Kafka 3.x runs consumer groups only with group.coordinator.rebalance.protocols=classic,consumer on every \
             broker (a preview, not for production); without it a consumer-protocol member fails with \
             UNSUPPORTED_VERSION. Upgrade the brokers to 4.x first",
        ),
        BrokerLine::Kafka4 => {
            let feature_on = env.group_version.is_some_and(|level| level >= 1);
            if listed && feature_on {
                Check::pass(NAME, true, evidence)
            } else if !listed {
                Check::fail(
                    NAME,
                    true,
                    evidence,
                    "add consumer to group.coordinator.rebalance.protocols on every broker and restart them",
                )
            } else {
                Check::fail(
                    NAME,
                    true,
                    evidence,
                    "finalize the feature: kafka-features.sh --bootstrap-server ... upgrade --feature group.version=1",
                )
            }
        }
    }
}

fn policy_check(env: &UpgradeEnvironment, direction: Direction) -> Check {
    const NAME: &str = "migration_policy";
    let Some(configs) = &env.configs else {
        return Check::unknown(
            NAME,
            true,
            "group.consumer.migration.policy was not readable (DescribeConfigs on the coordinator's broker failed)",
            "grant DescribeConfigs on the cluster, or check the brokers' server.properties",
        );
    };
    let (policy, origin) = config_or(configs.migration_policy.as_deref(), env.line.default_policy());
    let evidence = format!("group.consumer.migration.policy={policy}{origin} on a {} broker", env.line.as_str());
    let allowed: &[&str] = match direction {
        Direction::Upgrade => &["bidirectional", "upgrade"],
        Direction::Downgrade => &["bidirectional", "downgrade"],
    };
    let policy_lower = policy.trim().to_ascii_lowercase();
    if allowed.contains(&policy_lower.as_str()) {
        Check::pass(NAME, true, evidence)
    } else if ["bidirectional", "upgrade", "downgrade", "disabled"].contains(&policy_lower.as_str()) {
        Check::fail(
            NAME,
            true,
            evidence,
            format!(
                "set group.consumer.migration.policy={} (or bidirectional) on every broker; or empty the group (stop every \
                 member) and restart them all with the new protocol: an empty group is replaced, not converted",
                allowed[1]
            ),
        )
    } else {
        Check::unknown(NAME, true, format!("{evidence}: not a policy the broker knows"), "check the broker's config")
    }
}

/// Judges whether the broker will convert the classic `group` to a consumer group when its
/// first member arrives with `group.protocol=consumer`, under the rules of `env`.
/// `assignor` is the server-side assignor the members will ask for (`group.remote.assignor`);
/// `None` takes the broker's default (the first of `group.consumer.assignors`).
pub fn check_upgrade(
    group: &ClassicGroup,
    env: &UpgradeEnvironment,
    metadata: &ClusterMetadata,
    assignor: Option<ServerAssignor>,
) -> UpgradeReport {
    let mut checks = vec![consumer_protocol_check(env)];
    if group.members.is_empty() {
        let evidence = format!("the group is {} with no members", group.state);
        for name in [
            "migration_policy",
            "protocol_type",
            "group_size",
            "payloads_decode",
            "assignment_user_data",
            "partition_ownership",
            "rebalance_state",
        ] {
            checks.push(Check::pass(
                name,
                false,
                format!("{evidence}: the broker replaces an empty classic group instead of converting it"),
            ));
        }
        return UpgradeReport::new(&group.group_id, Direction::Upgrade, checks);
    }
    checks.push(policy_check(env, Direction::Upgrade));
    checks.push(protocol_type_check(group));
    checks.push(size_check(env, group.members.len(), "group.consumer.max.size", |c| c.consumer_max_size.as_deref()));
    let consumer = group.protocol_type == "consumer";
    let report = consumer.then(|| inspect_classic(group, metadata));
    let reported = group.state == "Stable";
    checks.push(payloads_check(group, env.line, report.as_ref(), reported));
    checks.push(user_data_check(group, env.line, report.as_ref(), reported));
    checks.push(ownership_check(report.as_ref(), reported));
    checks.push(rebalance_check(&group.state));
    checks.push(assignor_check(group, env, metadata, report.as_ref(), assignor));
    UpgradeReport::new(&group.group_id, Direction::Upgrade, checks)
}

fn protocol_type_check(group: &ClassicGroup) -> Check {
    const NAME: &str = "protocol_type";
    let evidence = format!("protocol type {:?}", group.protocol_type);
    if group.protocol_type == "consumer" {
        Check::pass(NAME, true, evidence)
    } else {
        Check::fail(
            NAME,
            true,
            evidence,
            "only groups of the consumer embedded protocol convert; Kafka Connect, Streams and custom protocols stay \
             classic (Connect and Streams have their own protocols)",
        )
    }
}

fn size_check(
    env: &UpgradeEnvironment,
    members: usize,
    config: &'static str,
    value: impl Fn(&BrokerConfigs) -> Option<&str>,
) -> Check {
    const NAME: &str = "group_size";
    let Some(configs) = &env.configs else {
        return Check::unknown(
            NAME,
            true,
            format!("{}; {config} was not readable", count(members, "member")),
            "grant DescribeConfigs on the cluster",
        );
    };
    match parse_size(value(configs)) {
        Err(e) => Check::unknown(
            NAME,
            true,
            format!("{}; {config} {e}", count(members, "member")),
            "check the broker's config",
        ),
        Ok((limit, origin)) => {
            let evidence = format!("{}, {config}={limit}{origin}", count(members, "member"));
            if i64::try_from(members).unwrap_or(i64::MAX) <= limit {
                Check::pass(NAME, true, evidence)
            } else {
                Check::fail(
                    NAME,
                    true,
                    evidence,
                    format!(
                        "raise {config} to at least {members} on every broker, or scale the group down first (the \
                         converted group must hold every member: a restarted member that does not fit gets \
                         GROUP_MAX_SIZE_REACHED, a conversion of a larger group GROUP_ID_NOT_FOUND)"
                    ),
                )
            }
        }
    }
}

fn not_reported(name: &'static str, state: &str, broker_refuses: bool) -> Check {
    Check::unknown(
        name,
        broker_refuses,
        format!("the group is {state}: the broker reports the members' payloads only while it is Stable"),
        "run the check again once the group is Stable",
    )
}

fn payloads_check(
    group: &ClassicGroup,
    line: BrokerLine,
    report: Option<&super::ClassicGroupReport>,
    reported: bool,
) -> Check {
    const NAME: &str = "payloads_decode";
    let Some(report) = report else {
        return Check::pass(NAME, false, "not a consumer group: the payloads are not read (see protocol_type)");
    };
    if !reported {
        return not_reported(NAME, &group.state, true);
    }
    let mut failures = Vec::new();
    for (member, r) in group.members.iter().zip(&report.members) {
        let sub_repair = r.subscription.decoded().and_then(|s| s.view().repair());
        match &r.subscription {
            ReportedPayload::Undecodable { error, .. } => {
                failures.push(format!("{}: subscription: {error}", member.member_id))
            }
            ReportedPayload::Decoded(_) if sub_repair.is_some() => failures.push(format!(
                "{}: subscription only decodes leniently ({})",
                member.member_id,
                sub_repair.map(|r| r.to_string()).unwrap_or_default()
            )),
            _ => {}
        }
        let asg_repair = r.assignment.decoded().and_then(|a| a.view().repair());
        match &r.assignment {
            // 4.x reads an empty assignment as no partitions (a member that never synced);
            // 3.x hands the zero bytes to Java's reader, which fails on the missing version.
            ReportedPayload::Undecodable { bytes, .. } if bytes.is_empty() && line == BrokerLine::Kafka4 => {}
            ReportedPayload::Undecodable { bytes, .. } if bytes.is_empty() => failures.push(format!(
                "{}: assignment is empty (the member has not synced); a 3.x broker cannot read zero bytes",
                member.member_id
            )),
            ReportedPayload::Undecodable { error, .. } => {
                failures.push(format!("{}: assignment: {error}", member.member_id))
            }
            ReportedPayload::Decoded(_) if asg_repair.is_some() => failures.push(format!(
                "{}: assignment only decodes leniently ({})",
                member.member_id,
                asg_repair.map(|r| r.to_string()).unwrap_or_default()
            )),
            _ => {}
        }
    }
    let n = group.members.len();
    if failures.is_empty() {
        Check::pass(
            NAME,
            true,
            format!("{} and {} decode with Java's reader", count(n, "subscription"), count(n, "assignment")),
        )
    } else {
        Check::fail(
            NAME,
            true,
            failures.join("; "),
            "the broker refuses a group whose embedded protocol is malformed (GROUP_ID_NOT_FOUND): fix or replace \
             the client that writes these payloads, let the group rebalance, and check again",
        )
    }
}

fn user_data_check(
    group: &ClassicGroup,
    line: BrokerLine,
    report: Option<&super::ClassicGroupReport>,
    reported: bool,
) -> Check {
    const NAME: &str = "assignment_user_data";
    let refuses = line == BrokerLine::Kafka4;
    let Some(report) = report else {
        return Check::pass(NAME, false, "not a consumer group: the assignments are not read (see protocol_type)");
    };
    if !reported {
        return not_reported(NAME, &group.state, refuses);
    }
    let carrying: Vec<String> = group
        .members
        .iter()
        .zip(&report.members)
        .filter_map(|(m, r)| {
            let len = r.assignment.decoded()?.view().user_data().map_or(0, <[u8]>::len);
            (len > 0).then(|| format!("{} ({len} bytes)", m.member_id))
        })
        .collect();
    if carrying.is_empty() {
        return Check::pass(NAME, refuses, "no member's assignment carries userData");
    }
    let evidence = format!("assignor {:?} puts userData in the assignment of {}", group.protocol, carrying.join(", "));
    match line {
        BrokerLine::Kafka4 => Check::fail(
            NAME,
            true,
            evidence,
            "Kafka 4.x refuses to drop a custom assignor's state (\"an unsupported custom assignor is in use\"): \
             switch the group to a built-in assignor (range, roundrobin, cooperative-sticky) with a rolling restart \
             first, or empty the group and restart every member with group.protocol=consumer",
        ),
        BrokerLine::Kafka3 => Check::pass(
            NAME,
            false,
            format!("{evidence}; a 3.x broker converts the group and drops it, so the assignor's state is lost"),
        ),
    }
}

fn ownership_check(report: Option<&super::ClassicGroupReport>, reported: bool) -> Check {
    const NAME: &str = "partition_ownership";
    let Some(report) = report else {
        return Check::pass(NAME, false, "not a consumer group: the assignments are not read (see protocol_type)");
    };
    if !reported {
        return not_reported(NAME, "not Stable", true);
    }
    let doubles: Vec<&str> = report
        .diagnostics
        .iter()
        .filter(|d| d.kind == DiagnosticKind::DoubleAssignment)
        .map(|d| d.message.as_str())
        .collect();
    let beyond: Vec<&str> = report
        .diagnostics
        .iter()
        .filter(|d| {
            matches!(d.kind, DiagnosticKind::ClaimBeyondPartitionCount | DiagnosticKind::AssignmentBeyondPartitionCount)
        })
        .map(|d| d.message.as_str())
        .collect();
    if !doubles.is_empty() {
        let mut evidence = doubles.join("; ");
        if !beyond.is_empty() {
            evidence = format!("{evidence}; {}", beyond.join("; "));
        }
        return Check::fail(
            NAME,
            true,
            evidence,
            "the broker gives every owned partition one owner and fails the conversion on a partition owned twice \
             (KAFKA-21684): restart one of the owners so that the group rebalances, and check again",
        );
    }
    if !beyond.is_empty() {
        return Check {
            name: NAME,
            ok: Some(false),
            evidence: beyond.join("; "),
            advice: Some(
                "claims of partitions the topic no longer has make the sticky assignors hand partitions out twice \
                 (KAFKA-21674), which then blocks the conversion: let the group rebalance until no member claims them"
                    .to_owned(),
            ),
            broker_refuses: false,
        };
    }
    Check::pass(NAME, true, "every assigned partition has one owner and exists")
}

fn rebalance_check(state: &str) -> Check {
    const NAME: &str = "rebalance_state";
    match state {
        "Stable" => Check::pass(NAME, false, "the group is Stable"),
        "PreparingRebalance" | "CompletingRebalance" => Check::fail(
            NAME,
            false,
            format!("the group is {state}"),
            "a conversion during a classic rebalance starts from the last completed assignment, not the one being \
             computed (KAFKA-21582): retry once the group is Stable, at the latest after the members' \
             max.poll.interval.ms (the rebalance timeout); with dynamic members, restart each one only after the \
             previous restart's rebalance has completed",
        ),
        other => Check::unknown(NAME, false, format!("the group is {other:?}"), "check the group's state"),
    }
}

/// The first of `group.consumer.assignors`, or the default `uniform`.
fn broker_assignor(env: &UpgradeEnvironment) -> Result<(ServerAssignor, String), String> {
    let configured = env.configs.as_ref().and_then(|c| c.consumer_assignors.as_deref());
    let Some(list) = configured else {
        return Ok((ServerAssignor::Uniform, "uniform (the default of group.consumer.assignors)".to_owned()));
    };
    let first = list.split(',').next().unwrap_or("").trim();
    match ServerAssignor::parse(first) {
        Some(a) => Ok((a, format!("{} (first of group.consumer.assignors={list})", a.as_str()))),
        None => Err(format!("{first} (first of group.consumer.assignors={list}), a custom assignor")),
    }
}

fn assignor_check(
    group: &ClassicGroup,
    env: &UpgradeEnvironment,
    metadata: &ClusterMetadata,
    report: Option<&super::ClassicGroupReport>,
    chosen: Option<ServerAssignor>,
) -> Check {
    const NAME: &str = "server_assignor";
    let (assignor, described) = match (chosen, broker_assignor(env)) {
        (Some(a), _) => (a, format!("{} (group.remote.assignor)", a.as_str())),
        (None, Ok(found)) => found,
        (None, Err(described)) => {
            return Check::pass(NAME, false, format!("the broker assigns with {described}: not simulated"));
        }
    };
    let prefix = format!(
        "the classic assignor {:?} is replaced by the server-side {described}",
        if group.protocol.is_empty() { "(none chosen)" } else { &group.protocol }
    );
    let Some(report) = report.filter(|_| group.state == "Stable") else {
        return Check::pass(
            NAME,
            false,
            format!("{prefix}; moves not simulated (the group is not a Stable consumer group)"),
        );
    };
    let mut members = Vec::new();
    let mut previous: BTreeMap<(String, i32), String> = BTreeMap::new();
    for (member, r) in group.members.iter().zip(&report.members) {
        let (Some(sub), Some(asg)) = (r.subscription.decoded(), r.assignment.decoded()) else {
            return Check::pass(NAME, false, format!("{prefix}; moves not simulated (a payload does not decode)"));
        };
        let owned: Vec<TopicPartitions> = asg.view().assigned_partitions().to_owned();
        for tp in &owned {
            for &p in &tp.partitions {
                previous.insert((tp.topic.clone(), p), member.member_id.clone());
            }
        }
        let topics: Vec<String> = sub.view().topics().iter().map(str::to_owned).collect();
        members.push(GroupMember {
            member_id: member.member_id.clone(),
            group_instance_id: member.group_instance_id.clone(),
            // The broker starts from the last classic assignment as every member's current
            // one; our sticky model reads it from the owned partitions.
            subscription: Subscription::new(topics).with_owned_partitions(owned).with_generation_id(1),
        });
    }
    let Some(model) = builtin(assignor.model()) else {
        return Check::pass(NAME, false, format!("{prefix}; moves not simulated"));
    };
    let outcome = match model.assign(metadata, &members) {
        Ok(outcome) => outcome,
        Err(e) => return Check::pass(NAME, false, format!("{prefix}; moves not simulated ({e})")),
    };
    let (mut moved, mut total) = (0usize, 0usize);
    // Withheld partitions (cooperative): once per partition, at their final owner.
    let mut withheld = std::collections::BTreeSet::new();
    for pending in &outcome.pending {
        if withheld.insert((pending.topic.as_str(), pending.partition)) {
            total += 1;
            if pending.to.as_deref() != Some(pending.from.as_str()) {
                moved += 1;
            }
        }
    }
    for member in &members {
        for tp in outcome.partitions_of(&member.member_id) {
            for &p in &tp.partitions {
                total += 1;
                if previous.get(&(tp.topic.clone(), p)).is_some_and(|owner| owner != &member.member_id) {
                    moved += 1;
                }
            }
        }
    }
    Check::pass(
        NAME,
        false,
        format!(
            "{prefix}; simulated with kcp's {} assignor on the same members, from their current assignment (the \
             moves of the conversion itself; a --scenario rehearsal starts from no ownership and its \
             summary.partitions_moved counts the whole run): {moved} of {total} partitions change owner",
            assignor.model()
        ),
    )
}

/// Judges whether the broker will convert the consumer group `group` back to a classic group
/// when its last consumer-protocol member leaves (the others having rejoined with
/// `group.protocol=classic`), under the rules of `env`.
pub fn check_downgrade(group: &ConsumerGroup, env: &UpgradeEnvironment) -> UpgradeReport {
    let mut checks = Vec::new();
    if group.members.is_empty() {
        checks.push(Check::pass(
            "migration_policy",
            false,
            format!("the group is {} with no members: a classic member replaces an empty consumer group", group.state),
        ));
        return UpgradeReport::new(&group.group_id, Direction::Downgrade, checks);
    }
    checks.push(policy_check(env, Direction::Downgrade));
    // The broker counts the group without the leaving member against group.max.size.
    let after = group.members.len().saturating_sub(1);
    let mut size = size_check(env, after, "group.max.size", |c| c.classic_max_size.as_deref());
    size.evidence =
        format!("{} once the last consumer-protocol member has left ({} now)", size.evidence, group.members.len());
    checks.push(size);
    let consumer = group.members.iter().filter(|m| m.member_type == MemberType::Consumer).count();
    let classic = group.members.iter().filter(|m| m.member_type == MemberType::Classic).count();
    let unknown = group.members.len() - consumer - classic;
    const MEMBERS: &str = "member_protocols";
    checks.push(if unknown > 0 {
        Check::unknown(
            MEMBERS,
            false,
            format!("{} of unknown type (ConsumerGroupDescribe v0 does not say)", count(unknown, "member")),
            "describe with a broker that supports ConsumerGroupDescribe v1 (Kafka 4.0+)",
        )
    } else {
        Check::pass(
            MEMBERS,
            false,
            format!(
                "{consumer} consumer-protocol and {classic} classic members: the broker converts the group when the \
                 last consumer-protocol member leaves while all others are classic{}",
                if after == 0 { " (a group of one becomes empty and is replaced instead)" } else { "" }
            ),
        )
    });
    const STATE: &str = "rebalance_state";
    checks.push(match group.state.as_str() {
        "Stable" => Check::pass(STATE, false, "the group is Stable"),
        "Assigning" | "Reconciling" => Check::fail(
            STATE,
            false,
            format!("the group is {}", group.state),
            "the classic group starts from each member's target assignment: restart the next member only once the \
             group is Stable again",
        ),
        other => Check::unknown(STATE, false, format!("the group is {other:?}"), "check the group's state"),
    });
    UpgradeReport::new(&group.group_id, Direction::Downgrade, checks)
}

#[cfg(test)]
mod tests;
