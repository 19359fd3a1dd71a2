//! `kcp group upgrade-check`: will the broker convert a classic group to the KIP-848 consumer
//! protocol (or, with `--downgrade`, a consumer group back to classic)? The judgement is
//! `kafka_consumer_protocol::inspect::upgrade`; this module fetches what it needs (the group,
//! its coordinator's ApiVersions, features and configs, the topics' partition counts; for
//! `--scenario`, the members' timeouts in the group's metadata record in `__consumer_offsets`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use kafka_consumer_protocol::assignor::{ClusterMetadata, TopicInfo};
use kafka_consumer_protocol::client::{
    Client, ClientError, Deadline, ErrorKind, FetchOptions, IsolationLevel, ListGroupsFilter, PartitionFetcher, Target,
};
use kafka_consumer_protocol::inspect::upgrade::{
    check_downgrade, check_upgrade, BrokerConfigs, BrokerLine, Check, ServerAssignor, UpgradeEnvironment, UpgradeReport,
};
use kafka_consumer_protocol::offsets_log::{
    partition_for_group, CoordinatorRecord, Limits, RecordKey, RecordValue, SegmentReader,
};
use kafka_consumer_protocol::sim::json::scenario_json;
use kafka_consumer_protocol::sim::{
    rehearsal_scenario_with, MemberTimeouts, Rehearsal, TimeoutInputs, TimingSource, TimingValue,
};
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
    /// The members' session.timeout.ms in the rehearsal (the simulated session timeout and the
    /// spacing of the upgrades): default the largest of the members' own, from the group's
    /// metadata in __consumer_offsets, else Java's 45000.
    #[arg(long, value_name = "MS", requires = "scenario")]
    pub session_timeout_ms: Option<u64>,
    /// The members' rebalance timeout in the rehearsal (their max.poll.interval.ms): default the
    /// largest of the members' own, from the group's metadata in __consumer_offsets, else Java's
    /// 300000.
    #[arg(long, value_name = "MS", requires = "scenario",
        value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub rebalance_timeout_ms: Option<u64>,
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
    Rehearsed(UpgradeReport, Result<Rehearsed, String>),
    Failed(String, ClientError),
}

/// A rehearsal written by --scenario: the scenario file's document, and the report's
/// `rehearsal` object without its `file`.
struct Rehearsed {
    scenario: Value,
    summary: Value,
}

const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// The fetch size of the read of the group's `__consumer_offsets` partition.
const METADATA_FETCH_MAX_BYTES: i32 = 4 << 20;

/// The most a single batch of `__consumer_offsets` may take (the fetch size doubles up to it).
const METADATA_FETCH_MAX_BYTES_CAP: i32 = 64 << 20;

/// Where the group's latest `GroupMetadata` record was found.
struct RecordedTimeouts {
    members: BTreeMap<String, MemberTimeouts>,
    partition: i32,
    offset: i64,
}

/// The members' timeouts in the latest `GroupMetadata` record of `group_id`: its partition of
/// `__consumer_offsets` read from the log start to the high watermark (a compacted topic: about
/// one record per key), as `kcp group history` reads it. An error is why it could not be read
/// (an ACL, the deadline, no such record), for the rehearsal to fall back to Java's defaults.
async fn recorded_timeouts(client: &Client, group_id: &str, deadline: Deadline) -> Result<RecordedTimeouts, String> {
    let metadata = client.metadata(Some(&[OFFSETS_TOPIC]), deadline).await.map_err(|e| e.to_string())?;
    let topic = metadata.topic(OFFSETS_TOPIC).ok_or_else(|| format!("Metadata does not list {OFFSETS_TOPIC}"))?;
    if topic.error_code != 0 {
        return Err(ClientError::from_code(topic.error_code, format!("Metadata for {OFFSETS_TOPIC}"), None).to_string());
    }
    let count = u32::try_from(topic.partition_count()).unwrap_or(u32::MAX);
    if count == 0 {
        return Err(format!("{OFFSETS_TOPIC} has no partitions"));
    }
    let partition = partition_for_group(group_id, count) as i32;
    let ends = client
        .log_offsets(&[OFFSETS_TOPIC], IsolationLevel::ReadUncommitted, deadline)
        .await
        .map_err(|e| e.to_string())?;
    let offsets = match ends.first().map(|t| &t.partitions) {
        Some(Err(e)) => return Err(e.to_string()),
        Some(Ok(_)) => {
            ends[0].partition(partition).ok_or_else(|| format!("no offsets for {OFFSETS_TOPIC}-{partition}"))?
        }
        None => return Err(format!("no ListOffsets answer for {OFFSETS_TOPIC}")),
    };
    let mut offset = offsets.log_start_offset.clone().map_err(|e| e.to_string())?;
    let end = offsets.log_end_offset.clone().map_err(|e| e.to_string())?;
    let options = FetchOptions::default().max_bytes(METADATA_FETCH_MAX_BYTES).max_wait(Duration::from_millis(100));
    let mut fetcher = PartitionFetcher::new(client.clone(), OFFSETS_TOPIC, partition, options);
    // The latest record of the group's metadata: a tombstone (the group deleted) clears it.
    let mut latest: Option<(i64, BTreeMap<String, MemberTimeouts>)> = None;
    while offset < end {
        let fetched = fetcher.fetch(offset, deadline).await.map_err(|e| format!("{OFFSETS_TOPIC}-{partition}: {e}"))?;
        let mut reader = SegmentReader::new(&fetched.records[..], Limits::default());
        while let Some(batch) = reader.next_batch() {
            let batch = batch.map_err(|e| format!("{OFFSETS_TOPIC}-{partition}: {e}"))?;
            for record in batch.records() {
                let record = record.map_err(|e| format!("{OFFSETS_TOPIC}-{partition}: {e}"))?;
                if record.offset < offset || record.offset >= end {
                    continue;
                }
                // Records of other types, other versions or transaction markers are not ours
                // to judge here: only the group's metadata is wanted.
                let Ok(decoded) = CoordinatorRecord::decode(record.key, record.value) else { continue };
                if decoded.key != (RecordKey::GroupMetadata { group: group_id }) {
                    continue;
                }
                latest = match decoded.value {
                    Some((_, RecordValue::GroupMetadata(value))) => {
                        let members = value
                            .members
                            .iter()
                            .map(|m| {
                                let timeouts = MemberTimeouts {
                                    session_timeout_ms: m.session_timeout,
                                    rebalance_timeout_ms: m.rebalance_timeout,
                                };
                                (m.member_id.to_owned(), timeouts)
                            })
                            .collect();
                        Some((record.offset, members))
                    }
                    _ => None,
                };
            }
        }
        if fetched.next_offset > offset {
            offset = fetched.next_offset;
        } else if fetched.partial_bytes > 0 && fetcher.options().max_bytes < METADATA_FETCH_MAX_BYTES_CAP {
            let options = fetcher.options();
            fetcher.set_options(options.max_bytes(options.max_bytes.saturating_mul(2)));
        } else {
            return Err(format!(
                "{OFFSETS_TOPIC}-{partition} gave nothing at offset {offset} (high watermark {})",
                fetched.high_watermark
            ));
        }
    }
    match latest {
        Some((offset, members)) => Ok(RecordedTimeouts { members, partition, offset }),
        None => Err(format!("{OFFSETS_TOPIC}-{partition} holds no metadata record of the group")),
    }
}

fn timing_json(value: TimingValue) -> Value {
    json!({"value": value.ms, "source": value.source.as_str()})
}

/// The report's `rehearsal` object (without `file`, which the caller adds).
fn rehearsal_json(rehearsal: &Rehearsal, recorded: &Result<RecordedTimeouts, String>) -> Value {
    let t = &rehearsal.timing;
    let group_metadata = match recorded {
        Ok(r) => json!({"partition": r.partition, "offset": r.offset, "members": r.members.len(), "error": null}),
        Err(e) => json!({"partition": null, "offset": null, "members": null, "error": e}),
    };
    json!({
        "session_timeout_ms": timing_json(t.session_timeout),
        "rebalance_timeout_ms": timing_json(t.rebalance_timeout),
        "initial_rebalance_delay_ms": timing_json(t.initial_rebalance_delay),
        "group_metadata": group_metadata,
        "notes": rehearsal.notes,
    })
}

/// The words of a timing source in the text form.
fn source_text(source: &str) -> &'static str {
    match source {
        "option" => "given on the command line",
        "group_metadata" => "the members' own, from the group's metadata in __consumer_offsets",
        "broker_config" => "the broker's group.initial.rebalance.delay.ms",
        _ => "default",
    }
}

/// The text lines of the report's `rehearsal` object.
fn rehearsal_text(rehearsal: &Value) -> String {
    let mut text = format!("  rehearsal written to {}\n", clean(rehearsal["file"].as_str().unwrap_or("")));
    for key in ["session_timeout_ms", "rebalance_timeout_ms", "initial_rebalance_delay_ms"] {
        let v = &rehearsal[key];
        text.push_str(&format!(
            "       {key:<26} {} ({})\n",
            v["value"],
            source_text(v["source"].as_str().unwrap_or(""))
        ));
    }
    if let Some(e) = rehearsal["group_metadata"]["error"].as_str() {
        text.push_str(&format!("       {:<26} not read: {}\n", "group metadata", clean(e)));
    }
    text
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
            // The members' own timeouts are only in the group's metadata record; when it cannot
            // be read (no READ on __consumer_offsets, the deadline), Java's defaults stand in.
            let needed = args.session_timeout_ms.is_none() || args.rebalance_timeout_ms.is_none();
            let recorded = if needed {
                recorded_timeouts(client, group_id, deadline).await
            } else {
                Err("not read: both timeouts were given".to_owned())
            };
            let timeouts = TimeoutInputs {
                session_timeout_ms: args.session_timeout_ms,
                rebalance_timeout_ms: args.rebalance_timeout_ms,
                members: recorded.as_ref().map(|r| r.members.clone()).unwrap_or_default(),
            };
            let rehearsal = rehearsal_scenario_with(&described.group, &env, &counts, assignor, &timeouts)
                .map(|mut r| {
                    if let (true, Err(e)) = (needed, &recorded) {
                        let defaulted = [r.timing.session_timeout, r.timing.rebalance_timeout]
                            .iter()
                            .any(|t| t.source == TimingSource::Default);
                        if defaulted {
                            r.notes.push(format!(
                                "The members' timeouts were not read from the group's metadata ({e}): Java's defaults \
                                 are used where no option gave them."
                            ));
                        }
                    }
                    for n in &r.notes {
                        note(&format!("kcp: rehearsal: {}", clean(n)));
                    }
                    Rehearsed {
                        scenario: scenario_json(&r.scenario, Some(&r.description(group_id))),
                        summary: rehearsal_json(&r, &recorded),
                    }
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
                let mut text = report_text(&report);
                let mut value = report.to_json();
                if let Some(path) = &args.scenario {
                    // The report is still printed: a group that cannot be rehearsed exits 1
                    // with the reason on stderr.
                    match rehearsal {
                        Ok(Rehearsed { scenario, mut summary }) => {
                            let mut file = serde_json::to_string_pretty(&scenario)
                                .map_err(|e| CliError::input(format!("--scenario: {e}")))?;
                            file.push('\n');
                            std::fs::write(path, file)
                                .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
                            summary["file"] = path.display().to_string().into();
                            text.push_str(&rehearsal_text(&summary));
                            value["rehearsal"] = summary;
                        }
                        Err(e) => {
                            all_ok = false;
                            note(&format!("kcp: --scenario: no rehearsal written: {}", clean(&e)));
                        }
                    }
                }
                texts.push(text);
                values.push(value);
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
