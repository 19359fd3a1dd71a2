//! The offsets view of `kcp group describe` and `kcp group watch`: committed offsets, log start
//! and end, lag, owners, pending hand-overs and lag totals, per group, asked of the cluster in a
//! number of round trips that does not grow with the partitions: one OffsetFetch per coordinator
//! for all the groups (v8+; one per group on older brokers), one Metadata and one ListOffsets per
//! partition leader and offset kind (earliest, latest) for all the groups' topics together.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::client::{
    Client, ClientError, CommittedOffset, Deadline, GroupOffsets, IsolationLevel, TopicLogOffsets,
};
use kafka_consumer_protocol::inspect::inspect_classic;
use kafka_consumer_protocol::inspect::offsets::{group_offsets, Committed, GroupOffsetsReport, GroupView, LogRange};
use serde_json::{json, Map, Value};

use super::describe::{topic_names, Described};
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
    pub(super) fn level(self) -> IsolationLevel {
        match self {
            Isolation::ReadUncommitted => IsolationLevel::ReadUncommitted,
            Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read_uncommitted",
            Isolation::ReadCommitted => "read_committed",
        }
    }
}

/// What the cluster answered for the offsets of a set of groups.
pub(super) struct Offsets {
    committed: HashMap<String, Result<GroupOffsets, ClientError>>,
    logs: HashMap<String, TopicLogOffsets>,
    isolation: Isolation,
}

/// One group's offsets view, as the contract shows it, and whether it has gaps.
pub(super) struct GroupOffsetsJson {
    /// The `offsets` array.
    pub(super) offsets: Value,
    /// The `lag` object.
    pub(super) lag: Value,
    /// The offsets' findings, for the group's `diagnostics`.
    pub(super) diagnostics: Vec<Value>,
    /// The OffsetFetch error of the whole group, if any (`offsets_error`).
    pub(super) error: Option<Value>,
    /// Whether any gap was reported (the answer is partial).
    pub(super) partial: bool,
    /// The view itself, for `watch`'s lag evaluation.
    pub(super) report: GroupOffsetsReport,
}

impl Offsets {
    /// Fetches the committed offsets of every group in `groups` (one OffsetFetch per
    /// coordinator) and the log start and end of every topic they subscribe to, are assigned or
    /// have committed (one Metadata, then one ListOffsets per leader and offset kind).
    pub(super) async fn fetch(
        client: &Client,
        groups: &[(&str, &Described)],
        isolation: Isolation,
        deadline: Deadline,
    ) -> Result<Offsets, ClientError> {
        let names: Vec<&str> = groups.iter().map(|(n, _)| *n).collect();
        let mut committed = HashMap::new();
        let mut topics = BTreeSet::new();
        if !names.is_empty() {
            for (name, result) in names.iter().zip(client.fetch_committed_offsets(&names, deadline).await?) {
                if let Ok(g) = &result {
                    topics.extend(g.offsets.iter().map(|o| o.topic.clone()));
                }
                committed.insert((*name).to_owned(), result);
            }
        }
        for (_, described) in groups {
            topic_names(described, &mut topics);
        }
        let topics: Vec<String> = topics.into_iter().collect();
        let logs = client
            .log_offsets(&topics, isolation.level(), deadline)
            .await?
            .into_iter()
            .map(|t| (t.topic.clone(), t))
            .collect();
        Ok(Offsets { committed, logs, isolation })
    }

    /// The partition counts of every topic asked, from the ListOffsets metadata.
    fn counts(&self) -> ClusterMetadata {
        ClusterMetadata::from_counts(self.logs.values().filter_map(|t| {
            let partitions = t.partitions.as_ref().ok()?;
            Some((t.topic.clone(), i32::try_from(partitions.len()).unwrap_or(i32::MAX)))
        }))
    }

    /// The offsets view of one described group.
    pub(super) fn group_json(&self, group_id: &str, described: &Described) -> GroupOffsetsJson {
        let counts = self.counts();
        let mut partial = false;
        let mut error = None;
        let mut gaps: BTreeMap<(String, i32), Value> = BTreeMap::new();
        let committed: Vec<Committed> = match self.committed.get(group_id) {
            Some(Ok(g)) => g.offsets.iter().map(|o| committed_of(o, &mut gaps)).collect(),
            Some(Err(e)) => {
                partial = true;
                error = Some(client_error_json(e)["error"].clone());
                Vec::new()
            }
            None => Vec::new(),
        };
        let mut logs = Vec::new();
        for t in self.logs.values() {
            if let Ok(partitions) = &t.partitions {
                for p in partitions {
                    let key = (t.topic.clone(), p.partition);
                    for side in [&p.log_start_offset, &p.log_end_offset] {
                        if let Err(e) = side {
                            gaps.entry(key.clone()).or_insert_with(|| client_error_json(e)["error"].clone());
                        }
                    }
                    logs.push(LogRange {
                        topic: t.topic.clone(),
                        partition: p.partition,
                        log_start_offset: p.log_start_offset.as_ref().ok().copied(),
                        log_end_offset: p.log_end_offset.as_ref().ok().copied(),
                    });
                }
            }
        }
        let report = match described {
            Described::Classic(g) => {
                let inspected = inspect_classic(&g.group, &counts);
                group_offsets(GroupView::Classic(&g.group, &inspected), &counts, &committed, &logs)
            }
            Described::Consumer(g) => group_offsets(GroupView::Consumer(&g.group), &counts, &committed, &logs),
        };
        // A topic whose metadata could not be read: each of its rows has that error.
        let topic_errors: HashMap<&str, Value> = self
            .logs
            .values()
            .filter_map(|t| {
                t.partitions.as_ref().err().map(|e| (t.topic.as_str(), client_error_json(e)["error"].clone()))
            })
            .collect();
        let offsets: Vec<Value> = report
            .offsets
            .iter()
            .map(|o| {
                let gap =
                    gaps.get(&(o.topic.clone(), o.partition)).or_else(|| topic_errors.get(o.topic.as_str())).cloned();
                partial |= gap.is_some();
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
                    "error": gap,
                })
            })
            .collect();
        let lag = json!({
            "total": report.lag.total,
            "by_topic": report.lag.by_topic,
            "by_member": report.lag.by_member,
            "isolation": self.isolation.name(),
        });
        let diagnostics = report.diagnostics.iter().map(diagnostic_json).collect();
        GroupOffsetsJson { offsets: Value::Array(offsets), lag, diagnostics, error, partial, report }
    }
}

fn committed_of(o: &CommittedOffset, gaps: &mut BTreeMap<(String, i32), Value>) -> Committed {
    if let Some(e) = &o.error {
        gaps.insert((o.topic.clone(), o.partition), client_error_json(e)["error"].clone());
    }
    Committed {
        topic: o.topic.clone(),
        partition: o.partition,
        offset: o.offset,
        metadata: o.metadata.clone(),
        leader_epoch: o.leader_epoch,
    }
}

/// Adds the offsets view to a group's JSON object: `offsets`, `lag`, `offsets_error`, and the
/// offsets' findings at the end of `diagnostics`.
pub(super) fn add_to_group(v: &mut Value, view: &GroupOffsetsJson) {
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
pub(super) fn offsets_table(v: &Value) -> String {
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
