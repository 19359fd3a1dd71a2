//! `kcp conform`: judges every group and member of a capture against the conformance rules
//! (the library's `conform` module) and writes the report; exit 4 when a rule fails.

use std::path::PathBuf;

use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::conform::{Checker, Outcome, Report, RuleResult};
use kafka_consumer_protocol::pcap::{GroupReader, ReaderOptions};
use serde_json::{json, Value};

use super::out::note;
use super::pcap::summary_json;
use super::text::clean;
use super::{CliError, Format, Out};

/// Arguments of `kcp conform`.
#[derive(clap::Args, Debug)]
pub struct ConformArgs {
    /// A pcap or pcapng capture.
    #[arg(long, value_name = "FILE")]
    pub pcap: PathBuf,
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

/// Runs `kcp conform`.
pub fn run_conform(args: &ConformArgs, out: &mut Out) -> Result<(), CliError> {
    let file = std::fs::File::open(&args.pcap).map_err(|e| CliError::input(format!("{}: {e}", args.pcap.display())))?;
    let options = ReaderOptions { ports: args.ports.clone(), ..ReaderOptions::default() };
    let mut reader = GroupReader::new(std::io::BufReader::new(file), options)
        .map_err(|e| CliError::input(format!("{}: {e}", args.pcap.display())))?;
    let checker = if args.partitions.is_empty() {
        Checker::new()
    } else {
        Checker::with_metadata(ClusterMetadata::from_counts(args.partitions.iter().cloned()))
    };
    let report = checker.check_capture(&mut reader);
    let summary = reader.summary().clone();
    match args.format {
        Format::Json => out.json_pretty(&report_json(&report))?,
        Format::Text => {
            let mut text = String::new();
            for g in &report.groups {
                text.push_str(&format!("group {}\n", clean(&g.group_id)));
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
    if let Some(error) = &summary.capture_error {
        note(&format!("kcp: reading stopped early, the rest of the capture is lost: {}", clean(error)));
    }
    note(&serde_json::to_string(&summary_json(&summary)).expect("JSON values serialize"));
    if report.has_failure() {
        return Err(CliError::Blocked);
    }
    if summary.capture_error.is_some() {
        return Err(CliError::Reported);
    }
    Ok(())
}
