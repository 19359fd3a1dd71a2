//! `kcp assign`: the leader's round ([`leader::lead`]) of a built-in assignor on a group
//! described in JSON, so the output is what a leader would send in SyncGroup. The group document
//! (its shape, limits and errors) is `assignor::json`'s; this module does the arguments and the
//! output.

use kafka_consumer_protocol::assignor::json::group_from_json;
use kafka_consumer_protocol::assignor::{builtin, leader, GroupAssignment, RebalanceProtocol};
use kafka_consumer_protocol::group_api::JoinGroupMember;
use kafka_consumer_protocol::TopicPartitions;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::input::read_document;
use super::{CliError, Out};

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
/// input order.
fn assign_document(
    text: &[u8],
    strategy: Strategy,
) -> Result<(Vec<JoinGroupMember>, GroupAssignment, RebalanceProtocol), CliError> {
    let group = group_from_json(text)?;
    let assignor = builtin(strategy.name()).expect("every strategy is a built-in");
    let protocol = assignor.supported_protocols().iter().max().copied().unwrap_or(RebalanceProtocol::Eager);
    let round = leader::lead(assignor.as_ref(), protocol, &group.metadata, &group.members).map_err(|e| match e {
        leader::LeaderError::Subscription { error, .. } => CliError::Decode(error),
        e => CliError::input(e.to_string()),
    })?;
    Ok((group.members, round.assignment, protocol))
}

/// `kcp assign`: the assignment of every member and the partitions withheld this round.
pub fn run_assign(args: &AssignArgs, out: &mut Out) -> Result<(), CliError> {
    let text = read_document(&args.group)?;
    let (members, result, protocol) = assign_document(&text, args.strategy)?;
    drop(text);
    out.json_pretty(&AssignJson { strategy: args.strategy.name(), protocol, members: &members, result: &result })?;
    Ok(())
}
