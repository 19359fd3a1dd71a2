//! A group's offsets and lag, per partition, from what the broker describes: the described
//! group (classic or KIP-848), its committed offsets (OffsetFetch) and the partitions' log
//! start and end (ListOffsets). No I/O.
//!
//! One [`PartitionOffsets`] per partition of every topic the group subscribes to, is assigned,
//! or has committed offsets for (every partition of such a topic, also those never committed),
//! in (topic, partition) order; lag totals per group, topic and
//! member; and the findings only offsets show ([`DiagnosticKind::LagWithoutOwner`],
//! [`DiagnosticKind::OffsetOutOfRange`]).
//!
//! Lag is Kafka's: log end minus committed offset, `None` when nothing is committed (or the
//! log end is unknown). It is not clamped: a committed offset beyond the log end gives a
//! negative lag, exactly as `kafka-consumer-groups.sh` prints it, and an `offset_out_of_range`
//! finding.
//!
//! Who committed an offset cannot be known from the admin APIs (OffsetFetch does not say, and
//! the offset commit records of `__consumer_offsets` carry no member id), so there is no
//! finding about commits by a former owner.
//!
//! ```
//! use kafka_consumer_protocol::assignor::ClusterMetadata;
//! use kafka_consumer_protocol::inspect::offsets::{group_offsets, Committed, GroupView, LogRange};
//! use kafka_consumer_protocol::inspect::{ConsumerGroup, ConsumerMember};
//! use kafka_consumer_protocol::TopicPartitions;
//!
//! let group = ConsumerGroup {
//!     group_id: "g".into(),
//!     state: "Stable".into(),
//!     members: vec![ConsumerMember {
//!         member_id: "a".into(),
//!         subscribed_topics: vec!["orders".into()],
//!         assignment: vec![TopicPartitions::new("orders", [0, 1])],
//!         target_assignment: vec![TopicPartitions::new("orders", [0, 1])],
//!         ..ConsumerMember::default()
//!     }],
//!     ..ConsumerGroup::default()
//! };
//! let committed = [Committed::new("orders", 0, 40)];
//! let logs = [LogRange::new("orders", 0, 0, 100), LogRange::new("orders", 1, 0, 7)];
//! let report =
//!     group_offsets(GroupView::Consumer(&group), &ClusterMetadata::from_counts([("orders", 2)]), &committed, &logs);
//! assert_eq!(report.offsets[0].lag, Some(60));
//! assert_eq!(report.offsets[1].lag, None, "nothing committed");
//! assert_eq!(report.offsets[1].owner.as_deref(), Some("a"));
//! assert_eq!(report.lag.total, 60);
//! assert_eq!(report.lag.by_member["a"], 60);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::classic::{ClassicGroup, ClassicGroupReport};
use super::consumer::ConsumerGroup;
use super::diagnostic::{Diagnostic, DiagnosticKind};
use super::partitions::describe;
use crate::assignor::ClusterMetadata;
use crate::TopicPartitions;

/// The group whose offsets are shown.
#[derive(Clone, Copy, Debug)]
pub enum GroupView<'a> {
    /// A classic group with its inspection (decoded subscriptions and assignments).
    Classic(&'a ClassicGroup, &'a ClassicGroupReport),
    /// A KIP-848 group.
    Consumer(&'a ConsumerGroup),
}

/// One committed offset, as OffsetFetch answers it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The committed offset (`None`: no commit, or it could not be read).
    pub offset: Option<i64>,
    /// The commit's metadata string.
    pub metadata: Option<String>,
    /// The leader epoch committed with it.
    pub leader_epoch: Option<i32>,
}

impl Committed {
    /// A commit of `offset` without metadata or leader epoch.
    pub fn new(topic: impl Into<String>, partition: i32, offset: i64) -> Self {
        Committed { topic: topic.into(), partition, offset: Some(offset), metadata: None, leader_epoch: None }
    }
}

/// A partition's log range, as ListOffsets answers it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogRange {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The log-start offset (`None`: unknown).
    pub log_start_offset: Option<i64>,
    /// The log-end offset: high watermark or last stable offset (`None`: unknown).
    pub log_end_offset: Option<i64>,
}

impl LogRange {
    /// A known range.
    pub fn new(topic: impl Into<String>, partition: i32, start: i64, end: i64) -> Self {
        LogRange { topic: topic.into(), partition, log_start_offset: Some(start), log_end_offset: Some(end) }
    }
}

/// One partition of a group's offsets view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionOffsets {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The committed offset (`None` when nothing is committed).
    pub committed_offset: Option<i64>,
    /// The commit's metadata string.
    pub metadata: Option<String>,
    /// The leader epoch of the commit.
    pub leader_epoch: Option<i32>,
    /// The log-start offset.
    pub log_start_offset: Option<i64>,
    /// The log-end offset.
    pub log_end_offset: Option<i64>,
    /// `log_end_offset - committed_offset`; `None` when either is unknown.
    pub lag: Option<i64>,
    /// The member that owns the partition now: the one whose current assignment has it
    /// (classic: the SyncGroup assignment; KIP-848: the current assignment), or, during a
    /// pending hand-over of a classic group, the member that still claims it.
    pub owner: Option<String>,
    /// The member the partition goes to when a hand-over is pending (the target assignment of
    /// a KIP-848 group; a classic group's assignment while another member still claims it).
    pub pending_to: Option<String>,
    /// A cooperative round withheld the partition from every member while its owner still
    /// holds it (KIP-429): the owner is revoking it and the next round assigns it.
    pub withheld: bool,
}

impl PartitionOffsets {
    /// The partition is in a hand-over: pending to another member, or withheld from everyone
    /// while its owner revokes it.
    pub fn in_hand_over(&self) -> bool {
        self.pending_to.is_some() || self.withheld
    }
}

/// A group's lag totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LagTotals {
    /// The sum of every known partition lag.
    pub total: i64,
    /// Per topic (topics with at least one known lag).
    pub by_topic: BTreeMap<String, i64>,
    /// Per owner (members owning at least one partition with a known lag; partitions without
    /// an owner count in `total` and `by_topic` only).
    pub by_member: BTreeMap<String, i64>,
}

/// A group's offsets view ([`group_offsets`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupOffsetsReport {
    /// One entry per partition, in (topic, partition) order.
    pub offsets: Vec<PartitionOffsets>,
    /// The lag totals.
    pub lag: LagTotals,
    /// The findings of the offsets, sorted.
    pub diagnostics: Vec<Diagnostic>,
}

/// A partition's owner and where it is going.
#[derive(Clone, Debug, Default)]
struct PartitionOwnership {
    owner: Option<String>,
    pending_to: Option<String>,
    withheld: bool,
}

/// The owner and the pending receiver of each partition.
type Ownership = BTreeMap<(String, i32), PartitionOwnership>;

/// Topics, owners and pending receivers of a classic group: owner = the member whose
/// assignment has the partition, unless another member still holds it (its subscription's
/// owned partitions; sticky userData is the assignor's history, not ownership: an eager member
/// revoked everything before it joined), the same rule as the `pending_revocation` finding:
/// then the holder owns it and it is pending to the assignee. A partition a member holds and
/// nobody is assigned is withheld: the cooperative round keeps it from everyone until its
/// holder has revoked it.
fn classic_ownership(group: &ClassicGroup, report: &ClassicGroupReport, topics: &mut BTreeSet<String>) -> Ownership {
    let mut order: Vec<usize> = (0..group.members.len().min(report.members.len())).collect();
    order.sort_by(|&a, &b| group.members[a].member_id.cmp(&group.members[b].member_id));
    let mut claimants: BTreeMap<(String, i32), Vec<usize>> = BTreeMap::new();
    let mut assignees: BTreeMap<(String, i32), Vec<usize>> = BTreeMap::new();
    for &i in &order {
        let r = &report.members[i];
        if let Some(sub) = r.subscription.decoded() {
            topics.extend(sub.view().topics().into_iter().map(str::to_owned));
        }
        for g in r.owned_partitions() {
            for &p in &g.partitions {
                claimants.entry((g.topic.clone(), p)).or_default().push(i);
            }
        }
        if let Some(a) = r.assignment.decoded() {
            for g in a.view().assigned_partitions().to_owned() {
                topics.insert(g.topic.clone());
                for &p in &g.partitions {
                    assignees.entry((g.topic.clone(), p)).or_default().push(i);
                }
            }
        }
    }
    let id = |i: usize| group.members[i].member_id.clone();
    let mut out = Ownership::new();
    for (key, holders) in &assignees {
        let claims = claimants.get(key).map_or(&[][..], Vec::as_slice);
        let newcomer = holders.iter().copied().find(|h| !claims.contains(h));
        let (owner, pending_to) = match (claims.first(), newcomer) {
            (Some(&claimant), Some(to)) => (Some(id(claimant)), Some(id(to))),
            _ => (Some(id(holders[0])), None),
        };
        out.insert(key.clone(), PartitionOwnership { owner, pending_to, withheld: false });
    }
    // Withheld only where the round's assignments are all known: a Stable group whose every
    // assignment decoded (an unreadable one could be the holder's).
    let round_known = group.state == "Stable" && report.members.iter().all(|r| r.assignment.decoded().is_some());
    for (key, holders) in claimants.iter().filter(|_| round_known) {
        if !assignees.contains_key(key) {
            out.insert(
                key.clone(),
                PartitionOwnership { owner: Some(id(holders[0])), pending_to: None, withheld: true },
            );
        }
    }
    out
}

/// Topics, owners and pending receivers of a KIP-848 group: owner from the current
/// assignment, pending receiver from the target assignment where it names another member.
fn consumer_ownership(group: &ConsumerGroup, topics: &mut BTreeSet<String>) -> Ownership {
    let mut members: Vec<_> = group.members.iter().collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    let mut owners: BTreeMap<(String, i32), &str> = BTreeMap::new();
    let mut targets: BTreeMap<(String, i32), Vec<&str>> = BTreeMap::new();
    for m in &members {
        topics.extend(m.subscribed_topics.iter().cloned());
        for g in &m.assignment {
            topics.insert(g.topic.clone());
            for &p in &g.partitions {
                owners.entry((g.topic.clone(), p)).or_insert(&m.member_id);
            }
        }
        for g in &m.target_assignment {
            topics.insert(g.topic.clone());
            for &p in &g.partitions {
                targets.entry((g.topic.clone(), p)).or_default().push(&m.member_id);
            }
        }
    }
    let keys: BTreeSet<&(String, i32)> = owners.keys().chain(targets.keys()).collect();
    let mut out = Ownership::new();
    for key in keys {
        let owner = owners.get(key).copied();
        let pending = targets.get(key).and_then(|t| t.iter().copied().find(|&m| Some(m) != owner));
        out.insert(
            key.clone(),
            PartitionOwnership {
                owner: owner.map(str::to_owned),
                pending_to: pending.map(str::to_owned),
                withheld: false,
            },
        );
    }
    out
}

/// The offsets view of one group: one entry per partition of every topic the group subscribes
/// to (by name; a KIP-848 regex subscription counts through the topics it was assigned), is
/// assigned, or has a commit for (each of its partitions, committed or not), in (topic, partition) order. `metadata` gives the partition
/// counts (a topic missing there contributes the partitions seen assigned or committed);
/// `committed` and `logs` may have gaps (entries missing or `None`): the fields stay `None`.
pub fn group_offsets(
    group: GroupView<'_>,
    metadata: &ClusterMetadata,
    committed: &[Committed],
    logs: &[LogRange],
) -> GroupOffsetsReport {
    let mut topics = BTreeSet::new();
    let ownership = match group {
        GroupView::Classic(g, r) => classic_ownership(g, r, &mut topics),
        GroupView::Consumer(g) => consumer_ownership(g, &mut topics),
    };
    let commits: BTreeMap<(&str, i32), &Committed> =
        committed.iter().map(|c| ((c.topic.as_str(), c.partition), c)).collect();
    let ranges: BTreeMap<(&str, i32), &LogRange> = logs.iter().map(|l| ((l.topic.as_str(), l.partition), l)).collect();

    // A topic with a commit counts whole: a partition added while the group was down, or one
    // that never had a consumer, is the one a person must see (with no committed offset).
    topics.extend(committed.iter().map(|c| c.topic.clone()));
    let mut keys: BTreeSet<(String, i32)> = BTreeSet::new();
    for topic in &topics {
        if let Some(info) = metadata.topics.get(topic) {
            keys.extend((0..info.partitions.max(0)).map(|p| (topic.clone(), p)));
        }
    }
    keys.extend(ownership.keys().cloned());
    keys.extend(committed.iter().map(|c| (c.topic.clone(), c.partition)));

    let mut offsets = Vec::with_capacity(keys.len());
    let mut lag = LagTotals::default();
    for (topic, partition) in keys {
        let commit = commits.get(&(topic.as_str(), partition));
        let range = ranges.get(&(topic.as_str(), partition));
        let committed_offset = commit.and_then(|c| c.offset);
        let log_end_offset = range.and_then(|r| r.log_end_offset);
        let partition_lag = committed_offset.zip(log_end_offset).map(|(c, end)| end.saturating_sub(c));
        let PartitionOwnership { owner, pending_to, withheld } =
            ownership.get(&(topic.clone(), partition)).cloned().unwrap_or_default();
        if let Some(l) = partition_lag {
            lag.total = lag.total.saturating_add(l);
            let t = lag.by_topic.entry(topic.clone()).or_default();
            *t = t.saturating_add(l);
            if let Some(owner) = &owner {
                let m = lag.by_member.entry(owner.clone()).or_default();
                *m = m.saturating_add(l);
            }
        }
        offsets.push(PartitionOffsets {
            committed_offset,
            metadata: commit.and_then(|c| c.metadata.clone()),
            leader_epoch: commit.and_then(|c| c.leader_epoch),
            log_start_offset: range.and_then(|r| r.log_start_offset),
            log_end_offset,
            lag: partition_lag,
            owner,
            pending_to,
            withheld,
            topic,
            partition,
        });
    }
    let diagnostics = findings(&offsets);
    GroupOffsetsReport { offsets, lag, diagnostics }
}

fn findings(offsets: &[PartitionOffsets]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Lag nobody is working off: no owner and no member it is pending to, per topic.
    let mut orphaned: BTreeMap<&str, (Vec<i32>, i64)> = BTreeMap::new();
    for o in offsets {
        if o.owner.is_none() && o.pending_to.is_none() && o.lag.is_some_and(|l| l > 0) {
            let entry = orphaned.entry(&o.topic).or_default();
            entry.0.push(o.partition);
            entry.1 = entry.1.saturating_add(o.lag.unwrap_or(0));
        }
        let (Some(committed), start, end) = (o.committed_offset, o.log_start_offset, o.log_end_offset) else {
            continue;
        };
        let where_ = if end.is_some_and(|e| committed > e) {
            Some(format!("beyond the log end {}", end.unwrap_or_default()))
        } else if start.is_some_and(|s| committed < s) {
            Some(format!("before the log start {}", start.unwrap_or_default()))
        } else {
            None
        };
        if let Some(where_) = where_ {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::OffsetOutOfRange,
                    format!(
                        "{}-{} has committed offset {committed}, {where_}: a consumer that resumes there resets \
                         by auto.offset.reset",
                        o.topic, o.partition
                    ),
                )
                .partition(&o.topic, o.partition),
            );
        }
    }
    for (topic, (partitions, total)) in orphaned {
        let shown = describe(&[TopicPartitions::new(topic, partitions.clone())]);
        out.push(
            Diagnostic::new(
                DiagnosticKind::LagWithoutOwner,
                format!(
                    "{} partition{} of {topic} lag{} {total} record{} and no member owns {} ({shown})",
                    partitions.len(),
                    if partitions.len() == 1 { "" } else { "s" },
                    if partitions.len() == 1 { "s" } else { "" },
                    if total == 1 { "" } else { "s" },
                    if partitions.len() == 1 { "it" } else { "them" },
                ),
            )
            .topic_partitions(topic, partitions),
        );
    }
    out.sort();
    out
}

#[cfg(test)]
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;
    use crate::group_api::DescribedGroupMember;
    use crate::inspect::{inspect_classic, ConsumerMember};
    use crate::{Assignment, Subscription, Version};
    use bytes::Bytes;

    fn member(
        id: &str,
        topics: &[&str],
        owned: Vec<TopicPartitions>,
        assigned: Vec<TopicPartitions>,
    ) -> DescribedGroupMember {
        DescribedGroupMember {
            member_id: id.into(),
            member_metadata: Bytes::from(
                Subscription::new(topics.iter().copied())
                    .with_owned_partitions(owned)
                    .with_generation_id(3)
                    .encode(Version::V3)
                    .unwrap(),
            ),
            member_assignment: Bytes::from(Assignment::new(assigned).encode(Version::V3).unwrap()),
            ..DescribedGroupMember::default()
        }
    }

    fn tp(topic: &str, partitions: &[i32]) -> TopicPartitions {
        TopicPartitions::new(topic, partitions.to_vec())
    }

    #[test]
    fn classic_rows_owners_hand_overs_and_totals() {
        let group = ClassicGroup {
            group_id: "g".into(),
            state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol: "cooperative-sticky".into(),
            members: vec![
                // c2 still claims orders-1, which the assignment gives c1.
                member("c2", &["orders"], vec![tp("orders", &[1, 2])], vec![tp("orders", &[2])]),
                member("c1", &["orders"], vec![tp("orders", &[0])], vec![tp("orders", &[0, 1])]),
            ],
        };
        let metadata = ClusterMetadata::from_counts([("orders", 4), ("audit", 1)]);
        let report = inspect_classic(&group, &metadata);
        let committed = [
            Committed::new("orders", 0, 10),
            Committed { metadata: Some("m".into()), leader_epoch: Some(4), ..Committed::new("orders", 1, 5) },
            Committed::new("orders", 3, 8),
            // A topic the group no longer subscribes to still shows, as Kafka's tool shows it.
            Committed::new("audit", 0, 1),
        ];
        let logs = [
            LogRange::new("orders", 0, 0, 12),
            LogRange::new("orders", 1, 0, 5),
            LogRange::new("orders", 2, 0, 9),
            LogRange::new("orders", 3, 0, 20),
            LogRange::new("audit", 0, 0, 1),
        ];
        let view = group_offsets(GroupView::Classic(&group, &report), &metadata, &committed, &logs);
        let rows: Vec<(&str, i32, Option<i64>, Option<i64>, Option<&str>, Option<&str>)> = view
            .offsets
            .iter()
            .map(|o| {
                (o.topic.as_str(), o.partition, o.committed_offset, o.lag, o.owner.as_deref(), o.pending_to.as_deref())
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("audit", 0, Some(1), Some(0), None, None),
                ("orders", 0, Some(10), Some(2), Some("c1"), None),
                ("orders", 1, Some(5), Some(0), Some("c2"), Some("c1")),
                ("orders", 2, None, None, Some("c2"), None),
                ("orders", 3, Some(8), Some(12), None, None),
            ]
        );
        assert_eq!((view.offsets[2].metadata.as_deref(), view.offsets[2].leader_epoch), (Some("m"), Some(4)));
        assert_eq!(view.lag.total, 14);
        assert_eq!(view.lag.by_topic, BTreeMap::from([("audit".into(), 0), ("orders".into(), 14)]));
        assert_eq!(view.lag.by_member, BTreeMap::from([("c1".into(), 2), ("c2".into(), 0)]));
        let kinds: Vec<(DiagnosticKind, Option<i32>)> =
            view.diagnostics.iter().map(|d| (d.kind, d.partition)).collect();
        assert_eq!(kinds, [(DiagnosticKind::LagWithoutOwner, Some(3))]);
        assert_eq!(
            view.diagnostics[0].message,
            "1 partition of orders lags 12 records and no member owns it (orders 3)"
        );
    }

    /// The rows' (partition, owner, pending_to, withheld), and how many are in a hand-over.
    fn hand_overs(group: &ClassicGroup, partitions: i32) -> (Vec<(i32, Option<String>, Option<String>, bool)>, usize) {
        let metadata = ClusterMetadata::from_counts([("orders", partitions)]);
        let report = inspect_classic(group, &metadata);
        let view = group_offsets(GroupView::Classic(group, &report), &metadata, &[], &[]);
        let rows =
            view.offsets.iter().map(|o| (o.partition, o.owner.clone(), o.pending_to.clone(), o.withheld)).collect();
        (rows, view.offsets.iter().filter(|o| o.in_hand_over()).count())
    }

    #[test]
    fn a_cooperative_round_withholds_what_its_holder_revokes() {
        // Java's cooperative leader, scale-out: c1 still holds orders-2 and 3, the round
        // assigns them to nobody until c1 has revoked them.
        let mut group = ClassicGroup {
            group_id: "g".into(),
            state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol: "cooperative-sticky".into(),
            members: vec![
                member("c1", &["orders"], vec![tp("orders", &[0, 1, 2, 3])], vec![tp("orders", &[0, 1])]),
                member("c2", &["orders"], vec![], vec![]),
            ],
        };
        let some = |s: &str| Some(s.to_owned());
        let (rows, pending) = hand_overs(&group, 4);
        assert_eq!(
            rows,
            [
                (0, some("c1"), None, false),
                (1, some("c1"), None, false),
                (2, some("c1"), None, true),
                (3, some("c1"), None, true)
            ]
        );
        assert_eq!(pending, 2);
        // Outside a Stable round the assignments are not the round's: nothing is withheld.
        group.state = "CompletingRebalance".into();
        assert_eq!(hand_overs(&group, 4).1, 0);
    }

    #[test]
    fn sticky_user_data_is_history_not_ownership() {
        // An eager sticky member revoked everything before it joined: the previous assignment in
        // its userData (generation 1: all four) is no hand-over once generation 2 is Stable.
        let sticky =
            crate::StickyUserData { previous_assignment: vec![tp("orders", &[0, 1, 2, 3])], generation: Some(1) };
        let subscription = Subscription::new(["orders"]).with_user_data(Some(sticky.encode().unwrap().into()));
        let a = DescribedGroupMember {
            member_id: "a".into(),
            member_metadata: Bytes::from(subscription.encode(Version::V3).unwrap()),
            member_assignment: Bytes::from(Assignment::new(vec![tp("orders", &[0, 1])]).encode(Version::V3).unwrap()),
            ..DescribedGroupMember::default()
        };
        let group = ClassicGroup {
            group_id: "g".into(),
            state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol: "sticky".into(),
            members: vec![a, member("b", &["orders"], vec![], vec![tp("orders", &[2, 3])])],
        };
        let some = |s: &str| Some(s.to_owned());
        let (rows, pending) = hand_overs(&group, 4);
        assert_eq!(
            rows,
            [
                (0, some("a"), None, false),
                (1, some("a"), None, false),
                (2, some("b"), None, false),
                (3, some("b"), None, false)
            ]
        );
        assert_eq!(pending, 0);
        let report = inspect_classic(&group, &ClusterMetadata::from_counts([("orders", 4)]));
        assert!(
            report.diagnostics.iter().all(|d| d.kind != DiagnosticKind::PendingRevocation),
            "{:?}",
            report.diagnostics
        );
    }

    #[test]
    fn consumer_group_target_and_out_of_range() {
        let member = |id: &str, owns: &[i32], target: &[i32]| ConsumerMember {
            member_id: id.into(),
            subscribed_topic_regex: Some("ord.*".into()),
            assignment: vec![tp("orders", owns)],
            target_assignment: vec![tp("orders", target)],
            ..ConsumerMember::default()
        };
        let group = ConsumerGroup {
            group_id: "g".into(),
            state: "Reconciling".into(),
            members: vec![member("b", &[], &[1, 2]), member("a", &[0, 1], &[0])],
            ..ConsumerGroup::default()
        };
        let metadata = ClusterMetadata::from_counts([("orders", 3)]);
        let committed =
            [Committed::new("orders", 0, 50), Committed::new("orders", 1, 2), Committed::new("orders", 2, 7)];
        let logs = [
            LogRange::new("orders", 0, 0, 40),
            LogRange::new("orders", 1, 5, 9),
            LogRange { topic: "orders".into(), partition: 2, log_start_offset: Some(0), log_end_offset: None },
        ];
        let view = group_offsets(GroupView::Consumer(&group), &metadata, &committed, &logs);
        let rows: Vec<(i32, Option<i64>, Option<&str>, Option<&str>)> =
            view.offsets.iter().map(|o| (o.partition, o.lag, o.owner.as_deref(), o.pending_to.as_deref())).collect();
        assert_eq!(
            rows,
            [(0, Some(-10), Some("a"), None), (1, Some(7), Some("a"), Some("b")), (2, None, None, Some("b"))],
            "negative lag as Kafka's tool prints it; an unknown log end is no lag"
        );
        assert_eq!((view.lag.total, view.lag.by_member.get("a")), (-3, Some(&-3)));
        let messages: Vec<&str> = view.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "orders-0 has committed offset 50, beyond the log end 40: a consumer that resumes there resets by auto.offset.reset",
                "orders-1 has committed offset 2, before the log start 5: a consumer that resumes there resets by auto.offset.reset",
            ]
        );
    }

    #[test]
    fn empty_group_lists_committed_partitions_without_owner() {
        let group = ConsumerGroup { group_id: "g".into(), state: "Empty".into(), ..ConsumerGroup::default() };
        let committed = [Committed::new("t", 1, 3), Committed::new("t", 0, 3)];
        let logs = [LogRange::new("t", 0, 0, 3), LogRange::new("t", 1, 0, 10)];
        // The topic has two partitions more than committed (added while the group was down, or
        // never consumed): they are listed too, without a committed offset or lag.
        let view =
            group_offsets(GroupView::Consumer(&group), &ClusterMetadata::from_counts([("t", 4)]), &committed, &logs);
        let rows: Vec<(i32, Option<i64>, Option<i64>)> =
            view.offsets.iter().map(|o| (o.partition, o.committed_offset, o.lag)).collect();
        assert_eq!(rows, [(0, Some(3), Some(0)), (1, Some(3), Some(7)), (2, None, None), (3, None, None)]);
        assert!(view.lag.by_member.is_empty());
        assert_eq!(view.lag.total, 7);
        assert_eq!(view.diagnostics.len(), 1);
        assert_eq!(view.diagnostics[0].partitions, [tp("t", &[1])]);
    }
}
