//! `kcp conform`: judges every group and member of a capture against the conformance rules
//! (the library's `conform` module) and writes the report; exit 4 when a rule fails.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind};
use kafka_consumer_protocol::{DecodeOptions, SubscriptionView};

use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::conform::{Checker, Outcome, Report, RuleResult, Seen};
use kafka_consumer_protocol::pcap::{GroupReader, ReaderOptions};
use serde_json::{json, Value};

use super::group::{client_config, ConnectionArgs};
use super::out::note;
use super::pcap::summary_json;
use super::text::clean;
use super::{CliError, Format, Out};

/// Arguments of `kcp conform`.
#[derive(clap::Args, Debug)]
pub struct ConformArgs {
    /// A pcap or pcapng capture.
    #[arg(long, value_name = "FILE", required_unless_present = "groups", conflicts_with = "groups")]
    pub pcap: Option<PathBuf>,
    /// A live group to judge from DescribeGroups (repeatable; needs --bootstrap-server or
    /// --command-config).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// How to reach the cluster (with --group).
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Broker port (repeatable); without it Kafka connections are found from the traffic.
    #[arg(long = "port", value_name = "P")]
    pub ports: Vec<u16>,
    /// A topic's partition count (repeatable), for rules that need it; it wins over the count
    /// the capture's Metadata responses give. Without either, those rules are unknown.
    #[arg(long = "partitions", value_name = "TOPIC=N", value_parser = parse_partitions)]
    pub partitions: Vec<(String, i32)>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

fn parse_partitions(s: &str) -> Result<(String, i32), String> {
    let (topic, n) = s.rsplit_once('=').ok_or_else(|| format!("{s:?}: expected TOPIC=N"))?;
    let n: i32 = n.parse().map_err(|_| format!("{s:?}: N must be a partition count"))?;
    if topic.is_empty() || n < 1 {
        return Err(format!("{s:?}: expected a topic name and a count of at least 1"));
    }
    Ok((topic.to_owned(), n))
}

fn rule_json(r: &RuleResult) -> Value {
    json!({"rule": r.rule, "result": r.result.as_str(), "evidence": r.evidence, "consequence": r.consequence})
}

/// The report as the JSON contract of docs/cli.md.
pub fn report_json(report: &Report) -> Value {
    json!({"groups": report.groups.iter().map(|g| json!({
        "group_id": g.group_id,
        "group_protocol": g.group_protocol,
        "rules": g.rules.iter().map(rule_json).collect::<Vec<_>>(),
        "members": g.members.iter().map(|m| json!({
            "member_id": m.member_id,
            "client_id": m.client_id,
            "rules": m.rules.iter().map(rule_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })).collect::<Vec<_>>()})
}

fn rule_text(out: &mut String, indent: &str, r: &RuleResult) {
    let mark = match r.result {
        Outcome::Pass => "pass   ",
        Outcome::Fail => "FAIL   ",
        Outcome::Unknown => "unknown",
    };
    out.push_str(&format!("{indent}{mark} {}: {}\n", r.rule, clean(&r.evidence)));
    if r.result == Outcome::Fail {
        out.push_str(&format!("{indent}        consequence: {}\n", r.consequence));
    }
}

fn checker(args: &ConformArgs) -> Checker {
    if args.partitions.is_empty() {
        Checker::new()
    } else {
        Checker::with_metadata(ClusterMetadata::from_counts(args.partitions.iter().cloned()))
    }
}

/// A live group as its coordinator described it.
enum Described {
    /// DescribeGroups.
    Classic(kafka_consumer_protocol::inspect::ClassicGroup),
    /// ConsumerGroupDescribe (KIP-848).
    Consumer(kafka_consumer_protocol::inspect::ConsumerGroup),
}

/// Judges live groups: classic ones from DescribeGroups, KIP-848 ones from ConsumerGroupDescribe
/// (asked for the groups DescribeGroups does not know, as `kcp group describe` does), with their
/// topics' partition counts from Metadata.
fn live_report(args: &ConformArgs) -> Result<Report, CliError> {
    let config = client_config(&args.connection)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Client(ClientError::new(ErrorKind::Unreachable, format!("no runtime: {e}"))))?;
    let client = Client::new(config).map_err(CliError::config)?;
    let deadline = Deadline::after(Duration::from_millis(args.connection.timeout_ms));
    let mut checker = checker(args);
    runtime.block_on(async {
        // One answer per distinct group, in the order asked.
        let mut names: Vec<&String> = Vec::new();
        for name in &args.groups {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let described = client.describe_groups(&names, deadline).await.map_err(CliError::Client)?;
        let mut groups = Vec::new();
        let mut consumer = Vec::new();
        for (name, d) in names.iter().zip(described) {
            match d {
                // DescribeGroups before v6 answers Dead without members both for an unknown group
                // and for a KIP-848 group; v6 answers GROUP_ID_NOT_FOUND.
                Ok(d) if d.group.state == "Dead" && d.group.members.is_empty() => consumer.push((*name).clone()),
                Err(e) if e.kind() == ErrorKind::NotFound => consumer.push((*name).clone()),
                Ok(d) => groups.push(Described::Classic(d.group)),
                Err(e) => return Err(CliError::Client(e)),
            }
        }
        if !consumer.is_empty() {
            for (name, d) in consumer
                .iter()
                .zip(client.describe_consumer_groups(&consumer, deadline).await.map_err(CliError::Client)?)
            {
                match d {
                    Ok(d) => groups.push(Described::Consumer(d.group)),
                    Err(e) if e.kind() == ErrorKind::NotFound => {
                        return Err(CliError::Client(ClientError::new(
                            ErrorKind::NotFound,
                            format!(
                                "group {} does not exist or has no members: neither DescribeGroups nor \
                                 ConsumerGroupDescribe knows it",
                                clean(name)
                            ),
                        )))
                    }
                    Err(e) => return Err(CliError::Client(e)),
                }
            }
        }
        // The subscribed topics' partition counts (counts given with --partitions win).
        let lenient = DecodeOptions::new().lenient(true);
        let mut topics = BTreeSet::new();
        for g in &groups {
            match g {
                Described::Classic(g) => {
                    for m in &g.members {
                        if let Ok(sub) = SubscriptionView::decode_with(&m.member_metadata, lenient) {
                            topics.extend(sub.topics().iter().map(str::to_owned));
                        }
                    }
                }
                Described::Consumer(g) => {
                    topics.extend(g.members.iter().flat_map(|m| m.subscribed_topics.iter().cloned()));
                }
            }
        }
        if !topics.is_empty() {
            let names: Vec<&str> = topics.iter().map(String::as_str).collect();
            let metadata = client.metadata(Some(&names), deadline).await.map_err(CliError::Client)?;
            for t in metadata.topics.iter().filter(|t| t.error_code == 0) {
                checker.learn_partition_count(&t.name, i32::try_from(t.partition_count()).unwrap_or(i32::MAX));
            }
        }
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let seen = Seen { time: now, client_id: None };
        for g in &groups {
            match g {
                Described::Classic(g) => checker.described_group(&seen, g),
                Described::Consumer(g) => checker.described_consumer_group(&seen, g),
            }
        }
        Ok(())
    })?;
    Ok(checker.finish())
}

/// Runs `kcp conform`.
pub fn run_conform(args: &ConformArgs, out: &mut Out) -> Result<(), CliError> {
    let (report, summary) = match &args.pcap {
        Some(path) => {
            let file = std::fs::File::open(path).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
            let options = ReaderOptions { ports: args.ports.clone(), ..ReaderOptions::default() };
            let mut reader = GroupReader::new(std::io::BufReader::new(file), options)
                .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
            let report = checker(args).check_capture(&mut reader);
            (report, Some(reader.summary().clone()))
        }
        None => (live_report(args)?, None),
    };
    match args.format {
        Format::Json => out.json_pretty(&report_json(&report))?,
        Format::Text => {
            let mut text = String::new();
            for g in &report.groups {
                let protocol = if g.group_protocol == "consumer" { " (KIP-848 consumer protocol)" } else { "" };
                text.push_str(&format!("group {}{protocol}\n", clean(&g.group_id)));
                for r in &g.rules {
                    rule_text(&mut text, "  ", r);
                }
                for m in &g.members {
                    text.push_str(&format!(
                        "  member {} (client {})\n",
                        clean(&m.member_id),
                        clean(m.client_id.as_deref().unwrap_or("?"))
                    ));
                    for r in &m.rules {
                        rule_text(&mut text, "    ", r);
                    }
                }
            }
            out.writer().write_all(text.as_bytes()).map_err(|e| CliError::Output(e.into()))?;
        }
    }
    out.flush()?;
    if let Some(summary) = &summary {
        if let Some(error) = &summary.capture_error {
            note(&format!("kcp: reading stopped early, the rest of the capture is lost: {}", clean(error)));
        }
        note(&serde_json::to_string(&summary_json(summary)).expect("JSON values serialize"));
    }
    if report.has_failure() {
        return Err(CliError::Blocked);
    }
    if summary.is_some_and(|s| s.capture_error.is_some()) {
        return Err(CliError::Reported);
    }
    Ok(())
}
