//! The offsets view of `kcp group describe`, `kcp group watch` and `kcp serve` as the contract
//! shows it: committed offsets, log start and end, lag, owners, pending hand-overs and lag
//! totals, per group, from what `client::collect` gathered (one OffsetFetch per coordinator for
//! all the groups, one ListOffsets per partition leader and offset kind).

use std::collections::HashMap;

use kafka_consumer_protocol::client::collect::{DescribedGroup, Offsets};
use kafka_consumer_protocol::client::{ClientError, IsolationLevel};
use kafka_consumer_protocol::inspect::offsets::GroupOffsetsReport;
use serde_json::{json, Map, Value};

use super::json::diagnostic_json;
use super::table::table;
use crate::client_error_json;
use crate::text::clean;

/// `--isolation`: which log end the lag is measured to.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// The high watermark (Kafka's tool's default).
    #[default]
    ReadUncommitted,
    /// The last stable offset (below any open transaction).
    ReadCommitted,
}

impl Isolation {
    pub(crate) fn level(self) -> IsolationLevel {
        match self {
            Isolation::ReadUncommitted => IsolationLevel::ReadUncommitted,
            Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
        }
    }
}

/// One group's offsets view, as the contract shows it, and whether it has gaps.
pub(crate) struct GroupOffsetsJson {
    /// The `offsets` array.
    pub(crate) offsets: Value,
    /// The `lag` object.
    pub(crate) lag: Value,
    /// The offsets' findings, for the group's `diagnostics`.
    pub(crate) diagnostics: Vec<Value>,
    /// The OffsetFetch error of the whole group, if any (`offsets_error`).
    pub(crate) error: Option<Value>,
    /// Whether any gap was reported (the answer is partial).
    pub(crate) partial: bool,
    /// The view itself, for `watch`'s lag evaluation.
    pub(crate) report: GroupOffsetsReport,
}

/// The name of an isolation level in the contract (`lag.isolation`).
pub(crate) fn isolation_name(level: IsolationLevel) -> &'static str {
    match level {
        IsolationLevel::ReadUncommitted => "read_uncommitted",
        IsolationLevel::ReadCommitted => "read_committed",
    }
}

/// The offsets view of one described group, as the contract shows it.
pub(crate) fn offsets_json(offsets: &Offsets, group_id: &str, described: &DescribedGroup) -> GroupOffsetsJson {
    let view = offsets.view(group_id, described);
    let partial = view.partial();
    let error_json = |e: &ClientError| client_error_json(e)["error"].clone();
    let rows: Vec<Value> = view
        .report
        .offsets
        .iter()
        .map(|o| {
            let gap = view.gaps.get(&(o.topic.clone(), o.partition)).map(error_json);
            json!({
                "topic": o.topic,
                "partition": o.partition,
                "committed_offset": o.committed_offset,
                "metadata": o.metadata,
                "leader_epoch": o.leader_epoch,
                "log_start_offset": o.log_start_offset,
                "log_end_offset": o.log_end_offset,
                "lag": o.lag,
                "owner": o.owner,
                "pending_to": o.pending_to,
                "withheld": o.withheld,
                "error": gap,
            })
        })
        .collect();
    let lag = json!({
        "total": view.report.lag.total,
        "by_topic": view.report.lag.by_topic,
        "by_member": view.report.lag.by_member,
        "isolation": isolation_name(offsets.isolation),
    });
    let diagnostics = view.report.diagnostics.iter().map(diagnostic_json).collect();
    GroupOffsetsJson {
        offsets: Value::Array(rows),
        lag,
        diagnostics,
        error: view.error.as_ref().map(error_json),
        partial,
        report: view.report,
    }
}

/// Adds the offsets view to a group's JSON object: `offsets`, `lag`, `offsets_error`, and the
/// offsets' findings at the end of `diagnostics`.
pub(crate) fn add_to_group(v: &mut Value, view: &GroupOffsetsJson) {
    let Some(object) = v.as_object_mut() else { return };
    object.insert("offsets".into(), view.offsets.clone());
    object.insert("lag".into(), view.lag.clone());
    object.insert("offsets_error".into(), view.error.clone().unwrap_or(Value::Null));
    if let Some(Value::Array(diagnostics)) = object.get_mut("diagnostics") {
        diagnostics.extend(view.diagnostics.iter().cloned());
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) if s.is_empty() => "-".into(),
        Value::String(s) => clean(s).into_owned(),
        other => other.to_string(),
    }
}

/// The offsets table of one group (from its JSON, so text shows what JSON says), in the
/// columns of `kafka-consumer-groups.sh --describe`, then the decoded ones: the owner's rack,
/// the member a pending hand-over goes to, the findings about the partition, and a gap.
pub(crate) fn offsets_table(v: &Value) -> String {
    let Some(offsets) = v["offsets"].as_array() else { return String::new() };
    let members: HashMap<&str, &Map<String, Value>> = v["members"]
        .as_array()
        .map(|ms| ms.iter().filter_map(|m| Some((m["member_id"].as_str()?, m.as_object()?))).collect())
        .unwrap_or_default();
    let mut findings: HashMap<(String, i64), Vec<String>> = HashMap::new();
    for d in v["diagnostics"].as_array().into_iter().flatten() {
        let kind = d["kind"].as_str().unwrap_or("?").to_owned();
        for g in d["partitions"].as_array().into_iter().flatten() {
            let topic = g["topic"].as_str().unwrap_or_default();
            for p in g["partitions"].as_array().into_iter().flatten().filter_map(Value::as_i64) {
                let list = findings.entry((topic.to_owned(), p)).or_default();
                if !list.contains(&kind) {
                    list.push(kind.clone());
                }
            }
        }
    }
    let group = cell(&v["group_id"]);
    let rows: Vec<[String; 13]> = offsets
        .iter()
        .map(|o| {
            let owner = o["owner"].as_str().and_then(|id| members.get(id));
            let field = |key: &str| owner.and_then(|m| m.get(key)).map_or_else(|| "-".to_owned(), cell);
            let rack = owner
                .and_then(|m| {
                    m.get("rack_id").filter(|r| !r.is_null()).or_else(|| m.get("subscription")?.get("rack_id"))
                })
                .map_or_else(|| "-".to_owned(), cell);
            let key = (o["topic"].as_str().unwrap_or_default().to_owned(), o["partition"].as_i64().unwrap_or(-1));
            let found = findings.get(&key).map_or_else(|| "-".to_owned(), |f| f.join(","));
            let gap = o["error"]["kind"].as_str().map_or_else(|| "-".to_owned(), str::to_owned);
            [
                group.clone(),
                cell(&o["topic"]),
                cell(&o["partition"]),
                cell(&o["committed_offset"]),
                cell(&o["log_end_offset"]),
                cell(&o["lag"]),
                cell(&o["owner"]),
                field("client_host"),
                field("client_id"),
                rack,
                cell(&o["pending_to"]),
                found,
                gap,
            ]
        })
        .collect();
    let header = [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
        "RACK",
        "PENDING-TO",
        "FINDINGS",
        "GAP",
    ];
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str("  no offsets\n");
    } else {
        out.push_str(&table(&header, &rows, "  "));
    }
    let lag = &v["lag"];
    let by_topic: Vec<String> = lag["by_topic"]
        .as_object()
        .map(|m| m.iter().map(|(t, l)| format!("{} {l}", clean(t))).collect())
        .unwrap_or_default();
    out.push_str(&format!(
        "  lag {} ({}){}\n",
        cell(&lag["total"]),
        cell(&lag["isolation"]),
        if by_topic.is_empty() { String::new() } else { format!(": {}", by_topic.join(", ")) }
    ));
    if let Some(e) = v["offsets_error"].as_object() {
        out.push_str(&format!(
            "  committed offsets not read: {}: {}\n",
            e.get("kind").map_or_else(|| "-".into(), cell),
            e.get("message").map_or_else(|| "-".into(), cell)
        ));
    }
    out
}
