//! `kcp assign`: the leader's round ([`leader::lead`]) of a built-in assignor on a group
//! described in JSON, so the output is what a leader would send in SyncGroup.

use std::io::Read;

use bytes::Bytes;
use kafka_consumer_protocol::assignor::{builtin, leader, ClusterMetadata, RebalanceProtocol, TopicInfo};
use kafka_consumer_protocol::group_api::JoinGroupMember;
use kafka_consumer_protocol::{TopicPartitions, Version};
use serde_json::{json, Map, Value};

use crate::input::parse_hex;
use crate::shapes::subscription_from;
use crate::{CliError, Output};

/// The built-in strategies.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Java `RangeAssignor`.
    Range,
    /// Java `RoundRobinAssignor`.
    Roundrobin,
    /// Java `StickyAssignor` (eager).
    Sticky,
    /// Java `CooperativeStickyAssignor`.
    CooperativeSticky,
}

impl Strategy {
    fn name(self) -> &'static str {
        match self {
            Strategy::Range => "range",
            Strategy::Roundrobin => "roundrobin",
            Strategy::Sticky => "sticky",
            Strategy::CooperativeSticky => "cooperative-sticky",
        }
    }
}

/// `kcp assign` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct AssignArgs {
    /// The assignor to run.
    #[arg(long, value_enum)]
    pub strategy: Strategy,
    /// The group JSON, from a file or `-` for stdin.
    #[arg(value_name = "GROUP-FILE | -", default_value = "-")]
    pub group: String,
}

fn read_text(path: &str) -> Result<String, CliError> {
    if path == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| CliError::input(format!("cannot read stdin: {e}")))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| CliError::input(format!("cannot read {path}: {e}")))
    }
}

fn metadata_from(group: &Map<String, Value>) -> Result<ClusterMetadata, CliError> {
    let topics = group
        .get("topics")
        .and_then(Value::as_object)
        .ok_or_else(|| CliError::input("`topics` must be an object of topic -> partition count"))?;
    let racks = match group.get("partition_racks") {
        None | Some(Value::Null) => None,
        Some(Value::Object(r)) => Some(r),
        Some(_) => return Err(CliError::input("`partition_racks` must be an object")),
    };
    let mut metadata = ClusterMetadata::default();
    for (name, count) in topics {
        let partitions = count
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .filter(|n| *n >= 0)
            .ok_or_else(|| CliError::input(format!("topics.{name} must be a non-negative int32")))?;
        let partition_racks = match racks.and_then(|r| r.get(name)) {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => v
                .as_array()
                .ok_or_else(|| CliError::input(format!("partition_racks.{name} must be an array")))?
                .iter()
                .map(|rs| {
                    rs.as_array()
                        .and_then(|a| a.iter().map(|r| r.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>())
                        .ok_or_else(|| CliError::input(format!("partition_racks.{name} must hold arrays of strings")))
                })
                .collect::<Result<_, _>>()?,
        };
        metadata.topics.insert(name.clone(), TopicInfo { partitions, partition_racks });
    }
    Ok(metadata)
}

/// A member as the leader receives it: its subscription's bytes, as given or encoded (v3) from
/// its fields.
fn member_from(i: usize, m: &Value) -> Result<JoinGroupMember, CliError> {
    let obj = m.as_object().ok_or_else(|| CliError::input(format!("members[{i}] must be an object")))?;
    let member_id = obj
        .get("member_id")
        .and_then(Value::as_str)
        .ok_or_else(|| CliError::input(format!("members[{i}].member_id must be a string")))?
        .to_owned();
    let group_instance_id = match obj.get("group_instance_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(CliError::input(format!("members[{i}].group_instance_id must be a string or null"))),
    };
    let metadata = match obj.get("subscription") {
        Some(Value::String(h)) => parse_hex(h)?,
        Some(Value::Null) | None => {
            subscription_from(m)?.encode(Version::V3).map_err(|e| CliError::input(format!("members[{i}]: {e}")))?
        }
        Some(_) => return Err(CliError::input(format!("members[{i}].subscription must be a hex string"))),
    };
    Ok(JoinGroupMember { member_id, group_instance_id, metadata: Bytes::from(metadata) })
}

fn groups_json(groups: &[TopicPartitions]) -> Value {
    Value::Array(groups.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions})).collect())
}

/// `kcp assign`: the assignment of every member and the partitions withheld this round.
pub fn run_assign(args: &AssignArgs) -> Result<Output, CliError> {
    let text = read_text(&args.group)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| CliError::input(format!("invalid JSON: {e}")))?;
    let group = value.as_object().ok_or_else(|| CliError::input("the group must be a JSON object"))?;
    let metadata = metadata_from(group)?;
    let members = group
        .get("members")
        .and_then(Value::as_array)
        .ok_or_else(|| CliError::input("`members` must be an array"))?
        .iter()
        .enumerate()
        .map(|(i, m)| member_from(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    let assignor = builtin(args.strategy.name()).expect("every strategy is a built-in");
    let protocol = assignor.supported_protocols().iter().max().copied().unwrap_or(RebalanceProtocol::Eager);
    let round = leader::lead(assignor.as_ref(), protocol, &metadata, &members).map_err(|e| match e {
        leader::LeaderError::Subscription { error, .. } => CliError::Decode(error),
        e => CliError::input(e.to_string()),
    })?;
    let result = round.assignment;
    // Members in input order.
    let mut assignments = Map::new();
    for m in &members {
        assignments.insert(m.member_id.clone(), groups_json(&result.partitions_of(&m.member_id)));
    }
    let pending: Vec<Value> = result
        .pending
        .iter()
        .map(|p| json!({"topic": p.topic, "partition": p.partition, "from": p.from, "to": p.to}))
        .collect();
    Ok(Output::Json(json!({
        "strategy": args.strategy.name(),
        "protocol": protocol.as_str(),
        "assignments": assignments,
        "pending": pending,
    })))
}
