//! KIP-848 groups (`group.protocol=consumer`) as ConsumerGroupDescribe returns them.

use std::collections::BTreeMap;

use super::diagnostic::{Diagnostic, DiagnosticKind};
use super::partitions::{describe, Holders};
use crate::assignor::ClusterMetadata;
use crate::TopicPartitions;

/// Which protocol a member of a KIP-848 group speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemberType {
    /// `ConsumerGroupHeartbeat` (the KIP-848 protocol).
    Consumer,
    /// JoinGroup/SyncGroup: a classic member inside a consumer group (mixed group).
    Classic,
    /// The broker did not say (ConsumerGroupDescribe v0).
    #[default]
    Unknown,
}

impl MemberType {
    /// `consumer`, `classic` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemberType::Consumer => "consumer",
            MemberType::Classic => "classic",
            MemberType::Unknown => "unknown",
        }
    }
}

/// A KIP-848 group as ConsumerGroupDescribe returns it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerGroup {
    /// The group id.
    pub group_id: String,
    /// `Empty`, `Assigning`, `Reconciling`, `Stable`, `Dead`.
    pub state: String,
    /// The group epoch (bumped by every membership or subscription change).
    pub group_epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// The server-side assignor (`uniform`, `range`).
    pub assignor: String,
    /// The members.
    pub members: Vec<ConsumerMember>,
}

/// One member of a KIP-848 group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerMember {
    /// The member id (chosen by the client).
    pub member_id: String,
    /// Its static `group.instance.id`, if any.
    pub instance_id: Option<String>,
    /// Its rack, if any.
    pub rack_id: Option<String>,
    /// Its member epoch.
    pub member_epoch: i32,
    /// Its `client.id`.
    pub client_id: String,
    /// The host the broker saw.
    pub client_host: String,
    /// The topics it subscribes to by name.
    pub subscribed_topics: Vec<String>,
    /// The regular expression it subscribes with, if any.
    pub subscribed_topic_regex: Option<String>,
    /// The partitions it currently owns.
    pub assignment: Vec<TopicPartitions>,
    /// The partitions the broker's target assignment gives it.
    pub target_assignment: Vec<TopicPartitions>,
    /// Which protocol it speaks.
    pub member_type: MemberType,
}

/// A KIP-848 group, inspected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerGroupReport {
    /// The findings, sorted by kind, then topic, partition and members.
    pub diagnostics: Vec<Diagnostic>,
}

fn holders(members: &[ConsumerMember], pick: impl Fn(&ConsumerMember) -> &[TopicPartitions]) -> Holders<'_> {
    // In member-id order, so member lists do not depend on the broker's order.
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| members[a].member_id.cmp(&members[b].member_id));
    let mut out = Holders::default();
    for i in order {
        for g in pick(&members[i]) {
            for &p in &g.partitions {
                out.add(i, &g.topic, p);
            }
        }
    }
    out
}

/// Computes the diagnostics of a KIP-848 group: a partition currently owned by two members, a
/// partition one member still owns while the target gives it to another (the broker waits for
/// the revocation), subscribed partitions nobody is targeted with while the group is `Stable`,
/// assignments beyond the partition count, unknown topics, and members whose epoch is behind the
/// assignment epoch.
///
/// ```
/// use kafka_consumer_protocol::assignor::ClusterMetadata;
/// use kafka_consumer_protocol::inspect::{inspect_consumer, ConsumerGroup, ConsumerMember, DiagnosticKind};
/// use kafka_consumer_protocol::TopicPartitions;
/// let member = |id: &str, owns: Vec<i32>, target: Vec<i32>| ConsumerMember {
///     member_id: id.into(),
///     member_epoch: 4,
///     subscribed_topics: vec!["orders".into()],
///     assignment: vec![TopicPartitions::new("orders", owns)],
///     target_assignment: vec![TopicPartitions::new("orders", target)],
///     ..ConsumerMember::default()
/// };
/// let group = ConsumerGroup {
///     group_id: "g".into(),
///     state: "Reconciling".into(),
///     group_epoch: 4,
///     assignment_epoch: 4,
///     assignor: "uniform".into(),
///     members: vec![member("a", vec![0, 1], vec![0]), member("b", vec![], vec![1])],
/// };
/// let report = inspect_consumer(&group, &ClusterMetadata::from_counts([("orders", 2)]));
/// assert_eq!(report.diagnostics.len(), 1);
/// assert_eq!(report.diagnostics[0].kind, DiagnosticKind::PendingRevocation);
/// assert_eq!(report.diagnostics[0].message, "orders-1 is owned by a, assigned to b");
/// ```
pub fn inspect_consumer(group: &ConsumerGroup, metadata: &ClusterMetadata) -> ConsumerGroupReport {
    let members = &group.members;
    let id = |i: usize| members[i].member_id.as_str();
    let current = holders(members, |m| &m.assignment);
    let target = holders(members, |m| &m.target_assignment);
    let mut out = Vec::new();

    for (&(topic, partition), owners) in &current.by_partition {
        // Holders are in member-id order with each member's entries adjacent.
        let mut distinct = owners.clone();
        distinct.dedup();
        if owners.len() > 1 {
            let names: Vec<&str> = distinct.iter().map(|&i| id(i)).collect();
            out.push(
                Diagnostic::new(
                    DiagnosticKind::DoubleAssignment,
                    format!("{topic}-{partition} is owned by {} members: {}", distinct.len(), names.join(", ")),
                )
                .partition(topic, partition)
                .members(&names),
            );
        }
        let others: Vec<usize> =
            target.get(topic, partition).iter().copied().filter(|t| !distinct.contains(t)).collect();
        if others.is_empty() {
            continue;
        }
        let owner_names: Vec<&str> = distinct.iter().map(|&i| id(i)).collect();
        let target_names: Vec<&str> = others.iter().map(|&i| id(i)).collect();
        out.push(
            Diagnostic::new(
                DiagnosticKind::PendingRevocation,
                format!(
                    "{topic}-{partition} is owned by {}, assigned to {}",
                    owner_names.join(", "),
                    target_names.join(", ")
                ),
            )
            .partition(topic, partition)
            .members(owner_names.iter().chain(&target_names)),
        );
    }

    for (i, m) in members.iter().enumerate() {
        for (groups, what) in [(&m.assignment, "owns"), (&m.target_assignment, "is targeted with")] {
            for g in groups {
                let Some(info) = metadata.topics.get(&g.topic) else { continue };
                let beyond: Vec<i32> =
                    g.partitions.iter().copied().filter(|&p| p < 0 || p >= info.partitions).collect();
                if beyond.is_empty() {
                    continue;
                }
                let shown = describe(&[TopicPartitions::new(g.topic.clone(), beyond.clone())]);
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::AssignmentBeyondPartitionCount,
                        format!("{} {what} {shown} but {} has {} partitions", id(i), g.topic, info.partitions),
                    )
                    .topic_partitions(&g.topic, beyond)
                    .members([id(i)]),
                );
            }
        }
        if m.member_epoch < group.assignment_epoch {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::StaleGeneration,
                    format!(
                        "{} is at member epoch {}, behind the assignment epoch {}: it has not reconciled yet",
                        id(i),
                        m.member_epoch,
                        group.assignment_epoch
                    ),
                )
                .members([id(i)]),
            );
        }
    }

    let mut subscribers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut by_id: Vec<&ConsumerMember> = members.iter().collect();
    by_id.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    for m in by_id {
        for t in &m.subscribed_topics {
            subscribers.entry(t).or_default().push(&m.member_id);
        }
    }
    for (topic, names) in &subscribers {
        let Some(info) = metadata.topics.get(*topic) else {
            let mut d = Diagnostic::new(
                DiagnosticKind::UnknownTopic,
                format!("{topic} is subscribed by {} but not in the cluster's metadata", names.join(", ")),
            )
            .members(names);
            d.topic = Some((*topic).to_owned());
            out.push(d);
            continue;
        };
        if group.state != "Stable" {
            continue;
        }
        let nobody: Vec<i32> = (0..info.partitions.max(0)).filter(|&p| target.get(topic, p).is_empty()).collect();
        if nobody.is_empty() {
            continue;
        }
        out.push(
            Diagnostic::new(
                DiagnosticKind::UnassignedPartition,
                format!(
                    "{} of {} partitions of {topic} are assigned to nobody ({}); subscribed by {}",
                    nobody.len(),
                    info.partitions,
                    describe(&[TopicPartitions::new(*topic, nobody.clone())]),
                    names.join(", ")
                ),
            )
            .topic_partitions(topic, nobody)
            .members(names),
        );
    }
    out.sort();
    out.dedup();
    ConsumerGroupReport { diagnostics: out }
}
