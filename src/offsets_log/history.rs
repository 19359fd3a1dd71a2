//! What happened to each group, rebuilt from its records in log order: the generations of a
//! classic group (protocol, leader, members who joined, left or came back under a new member id,
//! partitions moved), the epochs and member assignments of a KIP-848 group and of a share group
//! (KIP-932, with the topics whose share state it initialized or deleted), the commits per
//! partition (count, first, last, rewinds, rate, the pauses between commits), deletion (told apart from the coordinator converting
//! the group between classic and consumer, Kafka 4.x), and where the story starts when compaction
//! removed its beginning.
//!
//! ```
//! use kafka_consumer_protocol::offsets_log::{CoordinatorRecord, HistoryBuilder};
//!
//! let mut history = HistoryBuilder::new();
//! // A commit of offset 5 then 3 (a rewind) to orders-0 by group "g".
//! let key = [0, 1, 0, 1, b'g', 0, 6, b'o', b'r', b'd', b'e', b'r', b's', 0, 0, 0, 0];
//! for (at, offset) in [(10, 5i64), (11, 3)] {
//!     let mut value = vec![0, 3];
//!     value.extend_from_slice(&offset.to_be_bytes());
//!     value.extend_from_slice(&[255, 255, 255, 255, 0, 0]); // leaderEpoch -1, metadata ""
//!     value.extend_from_slice(&1_000i64.to_be_bytes());
//!     history.add(at, 1_000, &CoordinatorRecord::decode(Some(&key), Some(&value)).unwrap());
//! }
//! let groups = history.finish();
//! let commits = &groups[0].commits[&("orders".to_string(), 0)];
//! assert_eq!((commits.count, commits.last.offset, commits.rewinds.len()), (2, 3, 1));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::codec::{Assignment, AssignmentView, Subscription, SubscriptionView};

use super::record::{CoordinatorRecord, RecordKey, RecordValue, TopicIdPartitions, TopicPartitionsInfo, Uuid};

/// Where a record is: its offset in the partition and its timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    /// The record's offset in `__consumer_offsets`.
    pub offset: i64,
    /// The record's timestamp (ms).
    pub timestamp: i64,
}

/// One member of a classic generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerationMember {
    /// `memberId`.
    pub member_id: String,
    /// `groupInstanceId` (a static member).
    pub group_instance_id: Option<String>,
    /// `clientId`.
    pub client_id: String,
    /// `clientHost`.
    pub client_host: String,
    /// `sessionTimeout` (ms).
    pub session_timeout: i32,
    /// `rebalanceTimeout` (ms, -1 before v1).
    pub rebalance_timeout: i32,
    /// The subscription bytes.
    pub subscription: Vec<u8>,
    /// The assignment bytes.
    pub assignment: Vec<u8>,
}

impl GenerationMember {
    /// The subscription decoded, or the error's text.
    pub fn decoded_subscription(&self) -> Result<Subscription, String> {
        SubscriptionView::decode(&self.subscription).map(|v| v.to_owned()).map_err(|e| e.to_string())
    }

    /// The assignment decoded, or the error's text.
    pub fn decoded_assignment(&self) -> Result<Assignment, String> {
        AssignmentView::decode(&self.assignment).map(|v| v.to_owned()).map_err(|e| e.to_string())
    }
}

/// A partition that changed owner between two generations (`None`: unowned).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PartitionMove {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The owner in the previous generation.
    pub from: Option<String>,
    /// The owner in this one.
    pub to: Option<String>,
}

/// One `GroupMetadata` record of a classic group: a generation as the coordinator stored it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generation {
    /// Where the record is.
    pub at: At,
    /// `generation`.
    pub generation: i32,
    /// `protocolType`.
    pub protocol_type: String,
    /// `protocol`: the assignor chosen.
    pub protocol: Option<String>,
    /// `leader`.
    pub leader: Option<String>,
    /// `currentStateTimestamp` (-1 before v2).
    pub current_state_timestamp: i64,
    /// The members.
    pub members: Vec<GenerationMember>,
    /// Member ids new in this generation (not counting `rejoined`).
    pub joined: Vec<String>,
    /// Member ids of the previous generation that are gone (not counting `rejoined`).
    pub left: Vec<String>,
    /// Static members back under a new member id: (instance id, old member id, new member id).
    pub rejoined: Vec<(String, String, String)>,
    /// Partitions whose owner changed since the previous record (by the decoded assignments).
    pub moved: Vec<PartitionMove>,
}

/// A KIP-848 consumer group event.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConsumerGroupEvent {
    /// `ConsumerGroupMetadata`: the group epoch.
    GroupEpoch(i32),
    /// `ConsumerGroupMemberMetadata` of a member not seen before (or seen left).
    MemberJoined {
        /// `MemberId`.
        member_id: String,
        /// `InstanceId`.
        instance_id: Option<String>,
        /// `SubscribedTopicNames`.
        topics: Vec<String>,
        /// Whether it is a classic member (ClassicMemberMetadata set).
        classic: bool,
    },
    /// A tombstone of `ConsumerGroupMemberMetadata`: the member left or was fenced.
    MemberLeft(String),
    /// `ConsumerGroupTargetAssignmentMetadata`: the assignment epoch.
    AssignmentEpoch(i32),
    /// `ConsumerGroupCurrentMemberAssignment`: a member's epoch, its assigned partitions and
    /// those it has still to revoke, per topic id (the records name topics by id only).
    MemberAssignment {
        /// `MemberId`.
        member_id: String,
        /// `MemberEpoch`.
        member_epoch: i32,
        /// `AssignedPartitions`.
        assigned: Vec<TopicIdPartitions>,
        /// `PartitionsPendingRevocation`.
        pending_revocation: Vec<TopicIdPartitions>,
    },
    /// The coordinator converted a classic group to a consumer group (an online upgrade, Kafka
    /// 4.x): the `GroupMetadata` tombstone at this place is immediately followed by the consumer
    /// group's records, so it is not a deletion.
    ConvertedFromClassic,
    /// The coordinator converted a consumer group back to a classic group (its last
    /// consumer-protocol member left): the `ConsumerGroupMetadata` tombstone at this place is
    /// immediately followed by a `GroupMetadata` record.
    ConvertedToClassic,
}

/// A share group (KIP-932) event: what its records say, in log order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShareGroupEvent {
    /// `ShareGroupMetadata`: the group epoch (bumped when a member joins, leaves or changes its
    /// subscription, or a subscribed topic changes).
    GroupEpoch {
        /// `Epoch`.
        epoch: i32,
        /// `MetadataHash`: the hash of the subscribed topics' metadata (0 when none).
        metadata_hash: i64,
    },
    /// `ShareGroupMemberMetadata` of a member not seen before (or seen left).
    MemberJoined {
        /// `MemberId`.
        member_id: String,
        /// `ClientId`.
        client_id: String,
        /// `ClientHost`.
        client_host: String,
        /// `RackId`.
        rack_id: Option<String>,
        /// `SubscribedTopicNames`.
        topics: Vec<String>,
    },
    /// A tombstone of `ShareGroupMemberMetadata`: the member left or was fenced.
    MemberLeft(String),
    /// `ShareGroupTargetAssignmentMetadata`: the assignment epoch.
    AssignmentEpoch(i32),
    /// `ShareGroupCurrentMemberAssignment`: a member's epoch and the partitions it is assigned
    /// (shared with the other members: a share group never waits for a revocation).
    MemberAssignment {
        /// `MemberId`.
        member_id: String,
        /// `MemberEpoch`.
        member_epoch: i32,
        /// `PreviousMemberEpoch`.
        previous_member_epoch: i32,
        /// `AssignedPartitions`, per topic id.
        assigned: Vec<TopicIdPartitions>,
    },
    /// `ShareGroupStatePartitionMetadata`: the topic partitions whose share-group state (kept by
    /// the share coordinator in `__share_group_state`) is being initialized, is initialized, or is
    /// being deleted (a topic left or deleted, the group deleted).
    StatePartitions {
        /// `InitializingTopics`.
        initializing: Vec<ShareStateTopic>,
        /// `InitializedTopics`.
        initialized: Vec<ShareStateTopic>,
        /// `DeletingTopics` (their `partitions` are empty: the record names topics only).
        deleting: Vec<ShareStateTopic>,
    },
}

/// A topic of a [`ShareGroupEvent::StatePartitions`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareStateTopic {
    /// `TopicId`.
    pub topic_id: Uuid,
    /// `TopicName`.
    pub topic_name: String,
    /// `Partitions`.
    pub partitions: Vec<i32>,
}

impl ShareStateTopic {
    fn from_info(t: &TopicPartitionsInfo<'_>) -> Self {
        ShareStateTopic { topic_id: t.topic_id, topic_name: t.topic_name.to_string(), partitions: t.partitions.clone() }
    }
}

/// The commits of one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionCommits {
    /// How many commit records.
    pub count: u64,
    /// The first commit seen.
    pub first: CommitPoint,
    /// The last commit seen.
    pub last: CommitPoint,
    /// Commits of a lower offset than the one before: (previous, this).
    pub rewinds: Vec<(CommitPoint, CommitPoint)>,
    /// Whether the last record is a tombstone (the offset deleted or expired).
    pub deleted: bool,
    /// How many times the time between two consecutive commits (by `commitTimestamp`) was
    /// longer than the builder's gap ([`HistoryBuilder::with_commit_gap_ms`]).
    pub gap_count: u64,
    /// The longest of those gaps, longest first (at most [`MAX_GAPS_KEPT`]; ties keep the
    /// earlier one), so that memory does not grow with the log.
    pub largest_gaps: Vec<CommitGap>,
}

/// How many of a partition's longest commit gaps a history keeps.
pub const MAX_GAPS_KEPT: usize = 8;

/// The default gap between two commits that counts as a pause: 60 s (Java commits every 5 s
/// with auto-commit on).
pub const DEFAULT_COMMIT_GAP_MS: i64 = 60_000;

/// A pause in a partition's commits: no commit between `before` and `after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitGap {
    /// The last commit before the pause.
    pub before: CommitPoint,
    /// The first commit after it.
    pub after: CommitPoint,
}

impl CommitGap {
    /// The pause's length (ms), by `commitTimestamp`.
    pub fn length_ms(&self) -> i64 {
        self.after.commit_timestamp.saturating_sub(self.before.commit_timestamp)
    }
}

impl PartitionCommits {
    /// The time from the first to the last commit (ms), by `commitTimestamp`.
    pub fn span_ms(&self) -> i64 {
        self.last.commit_timestamp.saturating_sub(self.first.commit_timestamp)
    }

    /// Commits per minute over [`span_ms`](Self::span_ms) (the first commit starts the span, so
    /// `count - 1` commits fall in it); `None` when the span is empty.
    pub fn commits_per_minute(&self) -> Option<f64> {
        let span = self.span_ms();
        (span > 0).then(|| (self.count.saturating_sub(1)) as f64 * 60_000.0 / span as f64)
    }

    /// How far the committed offset moved per second over the span (negative after a net
    /// rewind); `None` when the span is empty.
    pub fn offsets_per_second(&self) -> Option<f64> {
        let span = self.span_ms();
        (span > 0).then(|| (self.last.offset.saturating_sub(self.first.offset)) as f64 * 1_000.0 / span as f64)
    }

    fn note_gap(&mut self, gap: CommitGap) {
        self.gap_count += 1;
        let at = self.largest_gaps.partition_point(|g| g.length_ms() >= gap.length_ms());
        if at < MAX_GAPS_KEPT {
            self.largest_gaps.insert(at, gap);
            self.largest_gaps.truncate(MAX_GAPS_KEPT);
        }
    }
}

/// One commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitPoint {
    /// The committed offset.
    pub offset: i64,
    /// `commitTimestamp`.
    pub commit_timestamp: i64,
    /// Where the record is.
    pub at: At,
}

/// Everything the log says about one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupHistory {
    /// The group id.
    pub group: String,
    /// The first record of the group in the log.
    pub first: At,
    /// The last record of the group in the log.
    pub last: At,
    /// Why earlier history is missing, when the log shows it (compaction keeps only the latest
    /// record per key): `None` when the group's creation is in the log or nothing says otherwise.
    pub compacted_before: Option<String>,
    /// Classic generations in log order.
    pub generations: Vec<Generation>,
    /// KIP-848 events in log order.
    pub consumer_group_events: Vec<(At, ConsumerGroupEvent)>,
    /// Share group (KIP-932) events in log order.
    pub share_group_events: Vec<(At, ShareGroupEvent)>,
    /// Topic names by topic id, as the group's records named them (a share group's
    /// state-partition metadata, a 3.7-4.0 consumer group's partition metadata): the assignment
    /// records name topics by id only.
    pub topic_names: BTreeMap<Uuid, String>,
    /// Commits per (topic, partition).
    pub commits: BTreeMap<(String, i32), PartitionCommits>,
    /// Where a tombstone of its group metadata (`GroupMetadata`, `ConsumerGroupMetadata` of a
    /// KIP-848 group, `ShareGroupMetadata` of a share group) deleted the group (the last such; not one the coordinator wrote to convert
    /// the group, see [`ConsumerGroupEvent::ConvertedFromClassic`]).
    pub deleted: Option<At>,
    /// Records of share or streams groups (type id, count): share groups' are also told in
    /// [`share_group_events`](Self::share_group_events); streams groups' only counted here.
    pub other_records: BTreeMap<i16, u64>,
}

impl GroupHistory {
    fn new(group: &str, at: At) -> Self {
        GroupHistory {
            group: group.to_string(),
            first: at,
            last: at,
            compacted_before: None,
            generations: Vec::new(),
            consumer_group_events: Vec::new(),
            share_group_events: Vec::new(),
            topic_names: BTreeMap::new(),
            commits: BTreeMap::new(),
            deleted: None,
            other_records: BTreeMap::new(),
        }
    }
}

/// Builds [`GroupHistory`]s from records fed in log order.
#[derive(Debug)]
pub struct HistoryBuilder {
    /// Longer than this between two commits of a partition is a gap.
    commit_gap_ms: i64,
    groups: BTreeMap<String, GroupHistory>,
    live_members: BTreeMap<(String, String), ()>,
    /// Per group, the kind of group metadata its last deletion was a tombstone of.
    tombstone_kind: BTreeMap<String, GroupKind>,
    /// The read started after the log start on purpose: earlier records were skipped, not
    /// compacted away ([`HistoryBuilder::read_after_log_start`]).
    skipped_start: bool,
}

/// Which kind of group a group metadata record is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupKind {
    Classic,
    Consumer,
    Share,
}

impl Default for HistoryBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether a record of this key, with a value, is a KIP-848 consumer group's.
fn is_consumer_group_record(key: &RecordKey<'_>) -> bool {
    matches!(
        key,
        RecordKey::ConsumerGroupMetadata { .. }
            | RecordKey::ConsumerGroupPartitionMetadata { .. }
            | RecordKey::ConsumerGroupMemberMetadata { .. }
            | RecordKey::ConsumerGroupTargetAssignmentMetadata { .. }
            | RecordKey::ConsumerGroupTargetAssignmentMember { .. }
            | RecordKey::ConsumerGroupCurrentMemberAssignment { .. }
    )
}

fn owners(members: &[GenerationMember]) -> BTreeMap<(String, i32), String> {
    let mut out = BTreeMap::new();
    for m in members {
        if let Ok(a) = m.decoded_assignment() {
            for tp in a.assigned_partitions {
                for p in tp.partitions {
                    out.insert((tp.topic.clone(), p), m.member_id.clone());
                }
            }
        }
    }
    out
}

/// The story event of a share group record (types 10-15), if it tells one; keeps the group's
/// live members and topic names.
fn share_event(
    live_members: &mut BTreeMap<(String, String), ()>,
    h: &mut GroupHistory,
    group: &str,
    key: &RecordKey<'_>,
    value: &Option<(i16, RecordValue<'_>)>,
) -> Option<ShareGroupEvent> {
    let value = value.as_ref().map(|(_, v)| v);
    match (key, value) {
        (RecordKey::ShareGroupMetadata { .. }, Some(RecordValue::ShareGroupMetadata(m))) => {
            if h.share_group_events.is_empty()
                && h.generations.is_empty()
                && h.consumer_group_events.is_empty()
                && h.compacted_before.is_none()
                && m.epoch > 1
            {
                h.compacted_before = Some(format!(
                    "the first share group epoch in the log is {}: earlier epochs were compacted away",
                    m.epoch
                ));
            }
            Some(ShareGroupEvent::GroupEpoch { epoch: m.epoch, metadata_hash: m.metadata_hash })
        }
        (RecordKey::ShareGroupMemberMetadata { member_id, .. }, value) => {
            let live = (group.to_string(), member_id.to_string());
            match value {
                Some(RecordValue::ShareGroupMemberMetadata(m)) => {
                    live_members.insert(live, ()).is_none().then(|| ShareGroupEvent::MemberJoined {
                        member_id: member_id.to_string(),
                        client_id: m.client_id.to_string(),
                        client_host: m.client_host.to_string(),
                        rack_id: m.rack_id.map(str::to_string),
                        topics: m.subscribed_topic_names.iter().map(|t| t.to_string()).collect(),
                    })
                }
                _ => {
                    live_members.remove(&live);
                    Some(ShareGroupEvent::MemberLeft(member_id.to_string()))
                }
            }
        }
        (
            RecordKey::ShareGroupTargetAssignmentMetadata { .. },
            Some(RecordValue::ShareGroupTargetAssignmentMetadata { assignment_epoch }),
        ) => Some(ShareGroupEvent::AssignmentEpoch(*assignment_epoch)),
        (
            RecordKey::ShareGroupCurrentMemberAssignment { member_id, .. },
            Some(RecordValue::ShareGroupCurrentMemberAssignment(c)),
        ) => Some(ShareGroupEvent::MemberAssignment {
            member_id: member_id.to_string(),
            member_epoch: c.member_epoch,
            previous_member_epoch: c.previous_member_epoch,
            assigned: c.assigned_partitions.clone(),
        }),
        (
            RecordKey::ShareGroupStatePartitionMetadata { .. },
            Some(RecordValue::ShareGroupStatePartitionMetadata(p)),
        ) => {
            for t in p.initializing_topics.iter().chain(&p.initialized_topics) {
                h.topic_names.insert(t.topic_id, t.topic_name.to_string());
            }
            for t in &p.deleting_topics {
                h.topic_names.insert(t.topic_id, t.topic_name.to_string());
            }
            Some(ShareGroupEvent::StatePartitions {
                initializing: p.initializing_topics.iter().map(ShareStateTopic::from_info).collect(),
                initialized: p.initialized_topics.iter().map(ShareStateTopic::from_info).collect(),
                deleting: p
                    .deleting_topics
                    .iter()
                    .map(|t| ShareStateTopic {
                        topic_id: t.topic_id,
                        topic_name: t.topic_name.to_string(),
                        partitions: Vec::new(),
                    })
                    .collect(),
            })
        }
        // Target assignments (the current assignments follow them) and tombstones of the other
        // keys (they follow a member's leaving or the group's deletion) tell nothing more.
        _ => None,
    }
}

impl HistoryBuilder {
    /// An empty builder; a commit gap is longer than [`DEFAULT_COMMIT_GAP_MS`].
    pub fn new() -> Self {
        HistoryBuilder {
            commit_gap_ms: DEFAULT_COMMIT_GAP_MS,
            groups: BTreeMap::new(),
            live_members: BTreeMap::new(),
            tombstone_kind: BTreeMap::new(),
            skipped_start: false,
        }
    }

    /// Says that the records fed start after the log start because the reader skipped the
    /// earlier ones (a read from an offset or a time): a group whose story starts late is then
    /// told so ([`GroupHistory::compacted_before`] names the skip), not that compaction removed
    /// its start.
    ///
    /// ```
    /// use kafka_consumer_protocol::offsets_log::HistoryBuilder;
    /// let builder = HistoryBuilder::new().read_after_log_start();
    /// assert!(builder.finish().is_empty());
    /// ```
    pub fn read_after_log_start(mut self) -> Self {
        self.skipped_start = true;
        self
    }
}

/// Why the story of a group starts late at generation (or epoch) `n` of `what`.
fn late_start(skipped_start: bool, what: &str, n: i32) -> String {
    if skipped_start {
        let what =
            if what == "group metadata" { "group metadata read is generation" } else { "consumer group epoch read is" };
        format!("the first {what} {n}: the read started after the log start, earlier records were not read")
    } else if what == "group metadata" {
        format!("the first group metadata in the log is generation {n}: generations before it were compacted away")
    } else {
        format!("the first consumer group epoch in the log is {n}: earlier epochs were compacted away")
    }
}

impl HistoryBuilder {
    /// Counts as a gap any time between two consecutive commits of a partition longer than
    /// `ms` (by `commitTimestamp`).
    pub fn with_commit_gap_ms(mut self, ms: i64) -> Self {
        self.commit_gap_ms = ms;
        self
    }

    /// Adds one record at `offset` with `timestamp` (records must come in log order).
    pub fn add(&mut self, offset: i64, timestamp: i64, record: &CoordinatorRecord<'_>) {
        let Some(group) = record.key.group() else { return };
        let at = At { offset, timestamp };
        let skipped_start = self.skipped_start;
        let h = self.groups.entry(group.to_string()).or_insert_with(|| GroupHistory::new(group, at));
        // A conversion is a tombstone of one kind's group metadata immediately followed (the
        // coordinator appends both in one batch) by the other kind's records: not a deletion.
        if h.deleted == Some(h.last) && h.last != at && record.value.is_some() {
            let kind = self.tombstone_kind.get(group).copied().unwrap_or(GroupKind::Classic);
            // Share groups are never converted.
            let converted = match &record.key {
                k if is_consumer_group_record(k) && kind == GroupKind::Classic => {
                    Some(ConsumerGroupEvent::ConvertedFromClassic)
                }
                RecordKey::GroupMetadata { .. } if kind == GroupKind::Consumer => {
                    Some(ConsumerGroupEvent::ConvertedToClassic)
                }
                _ => None,
            };
            if let Some(event) = converted {
                h.consumer_group_events.push((h.last, event));
                h.deleted = None;
            }
        }
        h.last = at;
        match (&record.key, &record.value) {
            (RecordKey::OffsetCommit { topic, partition, .. }, value) => {
                let key = (topic.to_string(), *partition);
                match value {
                    Some((_, RecordValue::OffsetCommit(c))) => {
                        let point = CommitPoint { offset: c.offset, commit_timestamp: c.commit_timestamp, at };
                        match h.commits.get_mut(&key) {
                            None => {
                                h.commits.insert(
                                    key,
                                    PartitionCommits {
                                        count: 1,
                                        first: point,
                                        last: point,
                                        rewinds: Vec::new(),
                                        deleted: false,
                                        gap_count: 0,
                                        largest_gaps: Vec::new(),
                                    },
                                );
                            }
                            Some(pc) => {
                                if point.offset < pc.last.offset && !pc.deleted {
                                    pc.rewinds.push((pc.last, point));
                                }
                                let gap = CommitGap { before: pc.last, after: point };
                                if gap.length_ms() > self.commit_gap_ms {
                                    pc.note_gap(gap);
                                }
                                pc.count += 1;
                                pc.last = point;
                                pc.deleted = false;
                            }
                        }
                    }
                    _ => {
                        if let Some(pc) = h.commits.get_mut(&key) {
                            pc.deleted = true;
                        }
                    }
                }
            }
            (RecordKey::GroupMetadata { .. }, None) => {
                h.deleted = Some(at);
                self.tombstone_kind.insert(group.to_string(), GroupKind::Classic);
            }
            (RecordKey::ConsumerGroupMetadata { .. }, None) => {
                h.deleted = Some(at);
                self.tombstone_kind.insert(group.to_string(), GroupKind::Consumer);
            }
            (RecordKey::GroupMetadata { .. }, Some((_, RecordValue::GroupMetadata(g)))) => {
                let members: Vec<GenerationMember> = g
                    .members
                    .iter()
                    .map(|m| GenerationMember {
                        member_id: m.member_id.to_string(),
                        group_instance_id: m.group_instance_id.map(str::to_string),
                        client_id: m.client_id.to_string(),
                        client_host: m.client_host.to_string(),
                        session_timeout: m.session_timeout,
                        rebalance_timeout: m.rebalance_timeout,
                        subscription: m.subscription.to_vec(),
                        assignment: m.assignment.to_vec(),
                    })
                    .collect();
                let previous = h.generations.last();
                if previous.is_none()
                    && h.consumer_group_events.is_empty()
                    && h.compacted_before.is_none()
                    && g.generation > 1
                {
                    h.compacted_before = Some(late_start(skipped_start, "group metadata", g.generation));
                }
                let before: Vec<&GenerationMember> = previous.map(|p| p.members.iter().collect()).unwrap_or_default();
                let before_ids: BTreeSet<&str> = before.iter().map(|m| m.member_id.as_str()).collect();
                let now_ids: BTreeSet<&str> = members.iter().map(|m| m.member_id.as_str()).collect();
                let mut rejoined = Vec::new();
                for m in &members {
                    if let Some(instance) = &m.group_instance_id {
                        if let Some(old) = before
                            .iter()
                            .find(|b| b.group_instance_id.as_ref() == Some(instance) && b.member_id != m.member_id)
                        {
                            rejoined.push((instance.clone(), old.member_id.clone(), m.member_id.clone()));
                        }
                    }
                }
                let renamed_old: BTreeSet<&str> = rejoined.iter().map(|r| r.1.as_str()).collect();
                let renamed_new: BTreeSet<&str> = rejoined.iter().map(|r| r.2.as_str()).collect();
                let joined = now_ids
                    .difference(&before_ids)
                    .filter(|id| !renamed_new.contains(*id))
                    .map(|s| s.to_string())
                    .collect();
                let left = before_ids
                    .difference(&now_ids)
                    .filter(|id| !renamed_old.contains(*id))
                    .map(|s| s.to_string())
                    .collect();
                let old_owners = previous.map(|p| owners(&p.members)).unwrap_or_default();
                let new_owners = owners(&members);
                let keys: BTreeSet<&(String, i32)> = old_owners.keys().chain(new_owners.keys()).collect();
                let moved = keys
                    .into_iter()
                    .filter(|k| old_owners.get(*k) != new_owners.get(*k))
                    .map(|k| PartitionMove {
                        topic: k.0.clone(),
                        partition: k.1,
                        from: old_owners.get(k).cloned(),
                        to: new_owners.get(k).cloned(),
                    })
                    .collect();
                h.generations.push(Generation {
                    at,
                    generation: g.generation,
                    protocol_type: g.protocol_type.to_string(),
                    protocol: g.protocol.map(str::to_string),
                    leader: g.leader.map(str::to_string),
                    current_state_timestamp: g.current_state_timestamp,
                    members,
                    joined,
                    left,
                    rejoined,
                    moved,
                });
            }
            (RecordKey::ConsumerGroupMetadata { .. }, Some((_, RecordValue::ConsumerGroupMetadata(m)))) => {
                // A converted group's first epoch continues its classic generation.
                if h.consumer_group_events.is_empty()
                    && h.generations.is_empty()
                    && h.compacted_before.is_none()
                    && m.epoch > 1
                {
                    h.compacted_before = Some(late_start(skipped_start, "consumer group epoch", m.epoch));
                }
                h.consumer_group_events.push((at, ConsumerGroupEvent::GroupEpoch(m.epoch)));
            }
            (RecordKey::ConsumerGroupMemberMetadata { member_id, .. }, value) => {
                let key = (group.to_string(), member_id.to_string());
                match value {
                    Some((_, RecordValue::ConsumerGroupMemberMetadata(m))) => {
                        if self.live_members.insert(key, ()).is_none() {
                            h.consumer_group_events.push((
                                at,
                                ConsumerGroupEvent::MemberJoined {
                                    member_id: member_id.to_string(),
                                    instance_id: m.instance_id.map(str::to_string),
                                    topics: m.subscribed_topic_names.iter().map(|t| t.to_string()).collect(),
                                    classic: m.classic_member_metadata.is_some(),
                                },
                            ));
                        }
                    }
                    _ => {
                        self.live_members.remove(&key);
                        h.consumer_group_events.push((at, ConsumerGroupEvent::MemberLeft(member_id.to_string())));
                    }
                }
            }
            (
                RecordKey::ConsumerGroupTargetAssignmentMetadata { .. },
                Some((_, RecordValue::ConsumerGroupTargetAssignmentMetadata { assignment_epoch })),
            ) => {
                h.consumer_group_events.push((at, ConsumerGroupEvent::AssignmentEpoch(*assignment_epoch)));
            }
            (
                RecordKey::ConsumerGroupCurrentMemberAssignment { member_id, .. },
                Some((_, RecordValue::ConsumerGroupCurrentMemberAssignment(c))),
            ) => {
                h.consumer_group_events.push((
                    at,
                    ConsumerGroupEvent::MemberAssignment {
                        member_id: member_id.to_string(),
                        member_epoch: c.member_epoch,
                        assigned: c.assigned_partitions.clone(),
                        pending_revocation: c.partitions_pending_revocation.clone(),
                    },
                ));
            }
            (
                RecordKey::ConsumerGroupPartitionMetadata { .. },
                Some((_, RecordValue::ConsumerGroupPartitionMetadata(p))),
            ) => {
                for t in &p.topics {
                    h.topic_names.insert(t.topic_id, t.topic_name.to_string());
                }
            }
            (key, value) if (9..=15).contains(&key.type_id()) => {
                *h.other_records.entry(key.type_id()).or_default() += 1;
                if matches!(key, RecordKey::ShareGroupMetadata { .. }) && value.is_none() {
                    h.deleted = Some(at);
                    self.tombstone_kind.insert(group.to_string(), GroupKind::Share);
                }
                if let Some(event) = share_event(&mut self.live_members, h, group, key, value) {
                    h.share_group_events.push((at, event));
                }
            }
            (key, _) if key.type_id() >= 17 => *h.other_records.entry(key.type_id()).or_default() += 1,
            _ => {}
        }
    }

    /// The histories, ordered by group id.
    pub fn finish(self) -> Vec<GroupHistory> {
        self.groups.into_values().collect()
    }
}
