//! `kcp group upgrade-check`: will the broker convert a classic group to the KIP-848 consumer
//! protocol (or, with `--downgrade`, a consumer group back to classic)? The judgement is
//! `kafka_consumer_protocol::inspect::upgrade`; this module fetches what it needs (the group,
//! its coordinator's ApiVersions, features and configs, the topics' partition counts).

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use kafka_consumer_protocol::assignor::{ClusterMetadata, TopicInfo};
use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind, ListGroupsFilter, Target};
use kafka_consumer_protocol::inspect::upgrade::{
    check_downgrade, check_upgrade, BrokerConfigs, BrokerLine, Check, ServerAssignor, UpgradeEnvironment, UpgradeReport,
};
use kafka_consumer_protocol::sim::json::scenario_json;
use kafka_consumer_protocol::sim::{rehearsal_scenario, JAVA_REBALANCE_TIMEOUT_MS};
use kafka_consumer_protocol::{AssignmentView, DecodeOptions, SubscriptionView};
use serde_json::{json, Value};

use super::ConnectionArgs;
use crate::out::{note, Out};
use crate::text::clean;
use crate::{client_error_json, CliError, Format};

/// The server-side assignor to simulate.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignorArg {
    /// `uniform` (the broker's default).
    Uniform,
    /// `range`.
    Range,
}

/// `kcp group upgrade-check`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["groups", "all_groups"])))]
pub struct UpgradeCheckArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// A group to check (repeat for several).
    #[arg(long = "group", value_name = "G")]
    pub groups: Vec<String>,
    /// Check every classic group of the cluster (with --downgrade: every consumer group).
    #[arg(long)]
    pub all_groups: bool,
    /// The server-side assignor the members will ask for (group.remote.assignor); default: the
    /// broker's first of group.consumer.assignors.
    #[arg(long, value_enum)]
    pub assignor: Option<AssignorArg>,
    /// Check consumer groups for the way back to classic instead.
    #[arg(long)]
    pub downgrade: bool,
    /// Also write a `kcp simulate` scenario rehearsing the group's rolling upgrade to FILE
    /// (one --group only).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<std::path::PathBuf>,
    /// The members' session.timeout.ms in the rehearsal (the broker does not report it): the
    /// simulated session timeout and the spacing of the upgrades.
    #[arg(long, value_name = "MS", default_value_t = 45_000, requires = "scenario")]
    pub session_timeout_ms: u64,
    /// The members' rebalance timeout in the rehearsal (their max.poll.interval.ms; the broker
    /// does not report it): default Java's 300000.
    #[arg(long, value_name = "MS", default_value_t = JAVA_REBALANCE_TIMEOUT_MS, requires = "scenario",
        value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub rebalance_timeout_ms: u64,
    /// Output format: the JSON contract, or text for people.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// What the coordinator of some groups reported about itself (also `kcp serve`'s page verdict).
pub(crate) async fn environment(
    client: &Client,
    node: i32,
    deadline: Deadline,
) -> Result<UpgradeEnvironment, ClientError> {
    let target = Target::Node(node);
    // Fetch (API key 1): Kafka 4.0 removed v0-v3.
    let fetch = client.api_versions(&target, 1, deadline).await?;
    let line = BrokerLine::from_fetch_min_version(fetch.map_or(0, |(min, _)| min));
    let features = client.finalized_features(&target, deadline).await?;
    let group_version = features.get("group.version").copied().filter(|level| *level > 0);
    let configs = match client.describe_broker_configs(node, &BrokerConfigs::NAMES, deadline).await {
        Ok(configs) => Some(BrokerConfigs::from_pairs(configs.iter().map(|c| (c.name.as_str(), c.value.as_deref())))),
        Err(e) if e.kind() == ErrorKind::Authorization => {
            note(&format!(
                "kcp: DescribeConfigs on broker {node} refused ({}): the config checks are unknown",
                clean(e.message())
            ));
            None
        }
        Err(e) => return Err(e),
    };
    Ok(UpgradeEnvironment { line, group_version, configs })
}

/// [`environment`], asked once per coordinator.
async fn cached_environment(
    client: &Client,
    node: i32,
    cache: &mut HashMap<i32, UpgradeEnvironment>,
    deadline: Deadline,
) -> Result<UpgradeEnvironment, ClientError> {
    if let Some(env) = cache.get(&node) {
        return Ok(env.clone());
    }
    let env = environment(client, node, deadline).await?;
    cache.insert(node, env.clone());
    Ok(env)
}

enum Judged {
    /// The report, and the rehearsal scenario when --scenario asked for it.
    Report(UpgradeReport),
    Rehearsed(UpgradeReport, Result<Value, String>),
    Failed(String, ClientError),
}

/// The topics a classic group's members subscribe to, claim or are assigned.
fn classic_topics(group: &kafka_consumer_protocol::inspect::ClassicGroup, names: &mut BTreeSet<String>) {
    if group.protocol_type != "consumer" {
        return;
    }
    let lenient = DecodeOptions::new().lenient(true);
    for m in &group.members {
        if let Ok(sub) = SubscriptionView::decode_with(&m.member_metadata, lenient) {
            names.extend(sub.topics().iter().map(str::to_owned));
            names.extend(sub.owned_partitions().iter().map(|t| t.topic.to_owned()));
        }
        if let Ok(asg) = AssignmentView::decode_with(&m.member_assignment, lenient) {
            names.extend(asg.assigned_partitions().iter().map(|t| t.topic.to_owned()));
        }
    }
}

async fn topic_counts(
    client: &Client,
    names: BTreeSet<String>,
    deadline: Deadline,
) -> Result<ClusterMetadata, ClientError> {
    if names.is_empty() {
        return Ok(ClusterMetadata::default());
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let metadata = client.metadata(Some(&refs), deadline).await?;
    let mut counts = ClusterMetadata::default();
    for t in metadata.topics.iter().filter(|t| t.error_code == 0) {
        let partitions = i32::try_from(t.partition_count()).unwrap_or(i32::MAX);
        counts.topics.insert(t.name.clone(), TopicInfo { partitions, partition_racks: Vec::new() });
    }
    Ok(counts)
}

fn already(group_id: &str, converted: bool) -> UpgradeReport {
    // Reuses the library's shape for a group that has nothing to convert.
    let mut report = check_downgrade(
        &kafka_consumer_protocol::inspect::ConsumerGroup { group_id: group_id.to_owned(), ..Default::default() },
        &UpgradeEnvironment::defaults(BrokerLine::Kafka4),
    );
    report.checks = vec![Check {
        name: "group_type",
        ok: Some(true),
        evidence: if converted {
            "the group already uses the consumer protocol: nothing to upgrade (see --downgrade)".to_owned()
        } else {
            "the group is a classic group: nothing to downgrade".to_owned()
        },
        advice: None,
        broker_refuses: false,
    }];
    report.direction = if converted {
        kafka_consumer_protocol::inspect::upgrade::Direction::Upgrade
    } else {
        kafka_consumer_protocol::inspect::upgrade::Direction::Downgrade
    };
    report
}

async fn judge(
    client: &Client,
    group_id: &str,
    args: &UpgradeCheckArgs,
    environments: &mut HashMap<i32, UpgradeEnvironment>,
    deadline: Deadline,
) -> Judged {
    let assignor = args.assignor.map(|a| match a {
        AssignorArg::Uniform => ServerAssignor::Uniform,
        AssignorArg::Range => ServerAssignor::Range,
    });
    let fail = |e: ClientError| Judged::Failed(group_id.to_owned(), e);
    let classic = match client.describe_groups(&[group_id], deadline).await {
        Ok(mut results) => results
            .pop()
            .unwrap_or_else(|| Err(ClientError::new(ErrorKind::Protocol, "DescribeGroups answered nothing"))),
        Err(e) => return fail(e),
    };
    // DescribeGroups answers Dead without members (v6+: GROUP_ID_NOT_FOUND) for a consumer group.
    let classic = match classic {
        Ok(d) if !(d.group.state == "Dead" && d.group.members.is_empty()) => Some(d),
        Ok(_) => None,
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return fail(e),
    };
    if let Some(described) = classic {
        if args.downgrade {
            return Judged::Report(already(group_id, false));
        }
        let env = match cached_environment(client, described.coordinator.node_id, environments, deadline).await {
            Ok(env) => env,
            Err(e) => return fail(e),
        };
        let mut names = BTreeSet::new();
        classic_topics(&described.group, &mut names);
        let counts = match topic_counts(client, names, deadline).await {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        let report = check_upgrade(&described.group, &env, &counts, assignor);
        if args.scenario.is_some() {
            let rehearsal = rehearsal_scenario(&described.group, &env, &counts, assignor, args.session_timeout_ms)
                .map(|mut r| {
                    r.scenario.config.rebalance_timeout_ms = args.rebalance_timeout_ms;
                    for n in &r.notes {
                        note(&format!("kcp: rehearsal: {}", clean(n)));
                    }
                    scenario_json(&r.scenario, Some(&r.description(group_id)))
                })
                .map_err(|e| e.to_string());
            return Judged::Rehearsed(report, rehearsal);
        }
        return Judged::Report(report);
    }
    let consumer = match client.describe_consumer_groups(&[group_id], deadline).await {
        Ok(mut results) => results
            .pop()
            .unwrap_or_else(|| Err(ClientError::new(ErrorKind::Protocol, "ConsumerGroupDescribe answered nothing"))),
        Err(e) => return fail(e),
    };
    match consumer {
        Ok(described) if args.downgrade => {
            match cached_environment(client, described.coordinator.node_id, environments, deadline).await {
                Ok(env) => Judged::Report(check_downgrade(&described.group, &env)),
                Err(e) => fail(e),
            }
        }
        Ok(_) => Judged::Report(already(group_id, true)),
        Err(e) if e.kind() == ErrorKind::NotFound => fail(ClientError::new(
            ErrorKind::NotFound,
            format!("group '{group_id}' does not exist: neither a classic nor a consumer group has this id"),
        )),
        Err(e) => fail(e),
    }
}

/// The text form of one report.
pub(super) fn report_text(report: &UpgradeReport) -> String {
    let outcome = match report.broker_converts {
        Some(true) => "the broker converts it",
        Some(false) => "the broker refuses the member of the other protocol",
        None => "the broker's answer is not known yet",
    };
    let mut text = format!(
        "group {}: {} {} ({outcome})\n",
        clean(&report.group_id),
        report.direction.as_str(),
        report.verdict.as_str().to_uppercase()
    );
    for c in &report.checks {
        let mark = match c.ok {
            Some(true) => "ok  ",
            Some(false) => "FAIL",
            None => "??  ",
        };
        text.push_str(&format!("  {mark} {:<26} {}\n", c.name, clean(&c.evidence)));
        if let Some(advice) = &c.advice {
            text.push_str(&format!("       {:<26} -> {}\n", "", clean(advice)));
        }
    }
    text
}

/// Runs `kcp group upgrade-check`: whether every group was judged (else exit 1), and whether
/// a verdict is `blocked` (exit 4).
pub(super) async fn upgrade_check(
    client: &Client,
    args: &UpgradeCheckArgs,
    timeout: Duration,
    out: &mut Out,
) -> Result<(bool, bool), CliError> {
    let deadline = Deadline::after(timeout);
    if args.scenario.is_some() && (args.all_groups || args.groups.len() != 1 || args.downgrade) {
        return Err(CliError::Usage(
            "--scenario rehearses the upgrade of one group: give exactly one --group (not --all-groups, not \
             --downgrade)"
                .to_owned(),
        ));
    }
    let mut wanted: Vec<String> = Vec::new();
    if args.all_groups {
        let want_type = if args.downgrade { "consumer" } else { "classic" };
        for g in client.list_groups(&ListGroupsFilter::default(), deadline).await? {
            if g.group_type.as_deref().unwrap_or("classic") == want_type {
                wanted.push(g.group_id);
            }
        }
        wanted.sort();
        wanted.dedup();
    } else {
        for g in &args.groups {
            if !wanted.contains(g) {
                wanted.push(g.clone());
            }
        }
    }
    let as_array = args.all_groups || wanted.len() > 1;
    let mut blocked = false;
    let mut environments = HashMap::new();
    let mut values = Vec::new();
    let mut all_ok = true;
    let mut texts = Vec::new();
    for group_id in &wanted {
        match judge(client, group_id, args, &mut environments, deadline).await {
            Judged::Rehearsed(report, rehearsal) => {
                texts.push(report_text(&report));
                values.push(report.to_json());
                if let Some(path) = &args.scenario {
                    // The report is still printed: a group that cannot be rehearsed exits 1
                    // with the reason on stderr.
                    match rehearsal {
                        Ok(scenario) => {
                            let mut text = serde_json::to_string_pretty(&scenario)
                                .map_err(|e| CliError::input(format!("--scenario: {e}")))?;
                            text.push('\n');
                            std::fs::write(path, text)
                                .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
                        }
                        Err(e) => {
                            all_ok = false;
                            note(&format!("kcp: --scenario: no rehearsal written: {}", clean(&e)));
                        }
                    }
                }
            }
            Judged::Report(report) => {
                if args.scenario.is_some() {
                    all_ok = false;
                    note(&format!(
                        "kcp: --scenario: no rehearsal written: group {} is not a classic group",
                        clean(group_id)
                    ));
                }
                texts.push(report_text(&report));
                values.push(report.to_json());
            }
            Judged::Failed(name, e) => {
                all_ok = false;
                if !as_array {
                    return Err(CliError::Client(e));
                }
                note(&format!("kcp: group {}: {}: {}", clean(&name), e.kind(), clean(e.message())));
                values.push(json!({"group_id": name, "error": client_error_json(&e)["error"]}));
            }
        }
    }
    blocked |= values.iter().any(|v| v["verdict"] == "blocked");
    match args.format {
        Format::Json if as_array => out.json_pretty(&Value::Array(values))?,
        Format::Json => out.json_pretty(values.first().unwrap_or(&Value::Null))?,
        Format::Text => out.text(&texts.join("\n"))?,
    }
    Ok((all_ok, blocked))
}
