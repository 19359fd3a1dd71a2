//! `kcp assign`: the leader's round ([`leader::lead`]) of a built-in assignor on a group
//! described in JSON, so the output is what a leader would send in SyncGroup.
//!
//! The input shape (every key but `topics` and `members` optional; unknown keys are refused):
//!
//! ```json
//! {"topics": {"orders": 6, "payments": 3},
//!  "partition_racks": {"orders": [["r1", "r2"], ["r2"], ["r1"], ["r2"], ["r3"], ["r1"]]},
//!  "members": [
//!    {"member_id": "m1", "group_instance_id": null, "topics": ["orders"],
//!     "owned_partitions": [{"topic": "orders", "partitions": [0]}],
//!     "generation_id": 2, "rack_id": null, "user_data": null},
//!    {"member_id": "m2", "subscription": "0003000000010006..."}]}
//! ```
//!
//! A member is given either by fields (`topics`, `owned_partitions`, `generation_id`, `rack_id`,
//! `user_data`) or by its encoded subscription (`subscription`, hex as captured from a
//! JoinGroup), not both.

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_consumer_protocol::assignor::{
    builtin, leader, ClusterMetadata, GroupAssignment, RebalanceProtocol, TopicInfo,
};
use kafka_consumer_protocol::group_api::JoinGroupMember;
use kafka_consumer_protocol::{Subscription, TopicPartitions, Version};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use super::input::{parse_hex, read_document};
use super::shapes::{groups_from, parse_document, user_data_from, with_context, Expecting, GroupShape, ObjectOnly};
use super::{CliError, Out};

/// The most partitions, over all topics, that `kcp assign` takes: 1,000,000 (the assignors'
/// memory grows with the partition count, so the count is checked before anything is allocated).
pub const MAX_PARTITIONS: u64 = 1_000_000;
/// The most members `kcp assign` takes: 100,000.
pub const MAX_MEMBERS: usize = 100_000;

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
    /// The assignor's name.
    pub fn name(self) -> &'static str {
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a group object {\"topics\": {...}, \"members\": [...]}")]
struct GroupDoc {
    topics: BTreeMap<String, i64>,
    partition_racks: Option<BTreeMap<String, Vec<Vec<String>>>>,
    members: Vec<ObjectOnly<MemberDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a member object {\"member_id\": ..., \"topics\": [...]}")]
struct MemberDoc {
    member_id: String,
    group_instance_id: Option<String>,
    subscription: Option<String>,
    topics: Option<Vec<String>>,
    owned_partitions: Option<Vec<ObjectOnly<GroupShape>>>,
    generation_id: Option<i32>,
    rack_id: Option<String>,
    user_data: Option<String>,
}

impl Expecting for GroupDoc {
    const EXPECTING: &'static str = "a group object {\"topics\": {...}, \"members\": [...]}";
}

impl Expecting for MemberDoc {
    const EXPECTING: &'static str = "a member object {\"member_id\": ..., \"topics\": [...]}";
}

fn metadata_from(doc: &mut GroupDoc) -> Result<ClusterMetadata, CliError> {
    let mut racks = doc.partition_racks.take().unwrap_or_default();
    let mut total = 0u64;
    let mut metadata = ClusterMetadata::default();
    for (name, &count) in &doc.topics {
        let at = format!("topics.{}", super::text::quoted(name, 60));
        let partitions = i32::try_from(count)
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| CliError::input(format!("{at}: the partition count {count} is not in 0..=2147483647")))?;
        total += partitions as u64;
        if total > MAX_PARTITIONS {
            return Err(CliError::input(format!(
                "{at}: the group has more than {MAX_PARTITIONS} partitions, the limit of kcp assign"
            )));
        }
        let partition_racks = racks.remove(name).unwrap_or_default();
        metadata.topics.insert(name.clone(), TopicInfo { partitions, partition_racks });
    }
    if let Some(name) = racks.keys().next() {
        return Err(CliError::usage(format!(
            "partition_racks.{}: no such topic in \"topics\"",
            super::text::quoted(name, 60)
        )));
    }
    Ok(metadata)
}

/// A member as the leader receives it: its subscription's bytes, as given or encoded (v3) from
/// its fields.
fn member_from(i: usize, m: MemberDoc) -> Result<JoinGroupMember, CliError> {
    let at = format!("members[{i}]");
    let metadata = match m.subscription {
        Some(hex) => {
            let by_fields = [
                ("topics", m.topics.is_some()),
                ("owned_partitions", m.owned_partitions.is_some()),
                ("generation_id", m.generation_id.is_some()),
                ("rack_id", m.rack_id.is_some()),
                ("user_data", m.user_data.is_some()),
            ];
            if let Some((key, _)) = by_fields.iter().find(|(_, given)| *given) {
                return Err(CliError::usage(format!(
                    "{at}: both \"subscription\" and \"{key}\" given: a member is given either by its encoded \
                     subscription or by fields"
                )));
            }
            parse_hex(&hex).map_err(|e| with_context(e, &format!("{at}.subscription")))?
        }
        None => {
            let mut subscription = Subscription::new(m.topics.unwrap_or_default())
                .with_user_data(user_data_from(m.user_data, &format!("{at}."))?)
                .with_owned_partitions(groups_from(m.owned_partitions))
                .with_generation_id(m.generation_id.unwrap_or(-1));
            subscription.rack_id = m.rack_id;
            subscription
        }
        .encode(Version::V3)
        .map_err(|e| CliError::input(format!("{at}: {e}")))?,
    };
    Ok(JoinGroupMember {
        member_id: m.member_id,
        group_instance_id: m.group_instance_id,
        metadata: Bytes::from(metadata),
    })
}

struct Groups<'a>(&'a [TopicPartitions]);

impl Serialize for Groups<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(GroupJson))
    }
}

struct GroupJson<'a>(&'a TopicPartitions);

impl Serialize for GroupJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("topic", &self.0.topic)?;
        m.serialize_entry("partitions", &self.0.partitions)?;
        m.end()
    }
}

/// The output: every member's assignment (in input order) and the partitions withheld.
struct AssignJson<'a> {
    strategy: &'static str,
    protocol: RebalanceProtocol,
    members: &'a [JoinGroupMember],
    result: &'a GroupAssignment,
}

impl Serialize for AssignJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Assignments<'a>(&'a [JoinGroupMember], &'a GroupAssignment);
        impl Serialize for Assignments<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for member in self.0 {
                    m.serialize_entry(&member.member_id, &Groups(&self.1.partitions_of(&member.member_id)))?;
                }
                m.end()
            }
        }
        struct Pending<'a>(&'a GroupAssignment);
        impl Serialize for Pending<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.pending.iter().map(
                    |p| serde_json::json!({"topic": p.topic, "partition": p.partition, "from": p.from, "to": p.to}),
                ))
            }
        }
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("strategy", self.strategy)?;
        m.serialize_entry("protocol", self.protocol.as_str())?;
        m.serialize_entry("assignments", &Assignments(self.members, self.result))?;
        m.serialize_entry("pending", &Pending(self.result))?;
        m.end()
    }
}

/// The leader's round of `strategy` on the group a JSON document describes, with the members in
/// input order (the CLI fuzz target calls this too).
pub fn assign_document(
    text: &[u8],
    strategy: Strategy,
) -> Result<(Vec<JoinGroupMember>, GroupAssignment, RebalanceProtocol), CliError> {
    let mut doc: GroupDoc = parse_document(text, "the group")?;
    let metadata = metadata_from(&mut doc)?;
    if doc.members.len() > MAX_MEMBERS {
        return Err(CliError::input(format!(
            "members: {} members, more than the limit of kcp assign ({MAX_MEMBERS})",
            doc.members.len()
        )));
    }
    let members = doc
        .members
        .into_iter()
        .enumerate()
        .map(|(i, ObjectOnly(m))| member_from(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    let assignor = builtin(strategy.name()).expect("every strategy is a built-in");
    let protocol = assignor.supported_protocols().iter().max().copied().unwrap_or(RebalanceProtocol::Eager);
    let round = leader::lead(assignor.as_ref(), protocol, &metadata, &members).map_err(|e| match e {
        leader::LeaderError::Subscription { error, .. } => CliError::Decode(error),
        e => CliError::input(e.to_string()),
    })?;
    Ok((members, round.assignment, protocol))
}

/// `kcp assign`: the assignment of every member and the partitions withheld this round.
pub fn run_assign(args: &AssignArgs, out: &mut Out) -> Result<(), CliError> {
    let text = read_document(&args.group)?;
    let (members, result, protocol) = assign_document(&text, args.strategy)?;
    drop(text);
    out.json_pretty(&AssignJson { strategy: args.strategy.name(), protocol, members: &members, result: &result })?;
    Ok(())
}
