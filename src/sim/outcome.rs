//! The outcome of a run: the timeline (who owns what after each event), the summary (totals,
//! violations, whether and why not the group converged) and the balance test the summary uses.

use std::collections::{BTreeMap, BTreeSet};

use super::GroupProtocol;
use crate::PartitionSet;
use crate::TopicPartitions;

/// One timeline entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineEntry {
    /// Sequence number.
    pub seq: u64,
    /// Virtual time.
    pub t_ms: u64,
    /// The broker's generation.
    pub generation: i32,
    /// `lost`, `revoked`, `assigned`, `fatal`, `error`, or a step name.
    pub event: String,
    /// The member concerned.
    pub member: Option<String>,
    /// Its rebalance protocol.
    pub protocol: Option<&'static str>,
    /// Its current assignor (the generation's protocol name).
    pub assignor: Option<String>,
    /// Partitions of a listener event.
    pub partitions: Vec<TopicPartitions>,
    /// Every live member's ownership as its own coordinator holds it after the event.
    pub owned: BTreeMap<String, Vec<TopicPartitions>>,
    /// Every live member's own generation.
    pub generations: BTreeMap<String, i32>,
    /// Free text (errors, step details).
    pub detail: Option<String>,
    /// The group's type at this instant: classic, or consumer once converted.
    pub group_protocol: GroupProtocol,
    /// In a consumer group: per member, the partitions the broker asked it to revoke and it has
    /// not acknowledged yet (still its own, withheld from their next owner).
    pub pending_revocation: BTreeMap<String, Vec<TopicPartitions>>,
    /// In a consumer group: per member, the partitions of its target assignment it does not
    /// have yet (owned by another member until that one's revocation is acknowledged).
    pub awaiting: BTreeMap<String, Vec<TopicPartitions>>,
}

impl TimelineEntry {
    /// An entry that only records who owns what at `t_ms` (no member, protocol or detail): what
    /// a timeline drawn from observations rather than a simulation has to say.
    ///
    /// ```
    /// use kafka_consumer_protocol::sim::TimelineEntry;
    /// use kafka_consumer_protocol::TopicPartitions;
    /// let owned = [("m1".to_owned(), vec![TopicPartitions::new("orders", [0, 1])])].into();
    /// let entry = TimelineEntry::ownership(1_000, 3, "stable", owned);
    /// assert_eq!((entry.t_ms, entry.generation, entry.event.as_str()), (1_000, 3, "stable"));
    /// assert!(entry.member.is_none() && entry.pending_revocation.is_empty());
    /// ```
    pub fn ownership(
        t_ms: u64,
        generation: i32,
        event: impl Into<String>,
        owned: BTreeMap<String, Vec<TopicPartitions>>,
    ) -> Self {
        TimelineEntry {
            seq: 0,
            t_ms,
            generation,
            event: event.into(),
            member: None,
            protocol: None,
            assignor: None,
            partitions: Vec::new(),
            owned,
            generations: BTreeMap::new(),
            detail: None,
            group_protocol: GroupProtocol::default(),
            pending_revocation: BTreeMap::new(),
            awaiting: BTreeMap::new(),
        }
    }
}

/// Totals of a run.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Summary {
    /// Generations the broker completed with members.
    pub rebalances: u64,
    /// Partitions that went to a member other than their previous owner.
    pub partitions_moved: u64,
    /// At the end: stable group, every partition owned exactly once, balanced.
    pub converged: bool,
    /// Safety violations (double ownership, partitions held too long after expulsion).
    pub violations: Vec<String>,
    /// Why the run did not converge (empty when it did).
    pub unconverged: Vec<String>,
    /// Members stopped by a fatal error, with the error.
    pub fatal: Vec<(String, String)>,
    /// Virtual time at the end.
    pub duration_ms: u64,
    /// The broker's generation at the end.
    pub final_generation: i32,
    /// Events processed.
    pub events: u64,
    /// The group's type at the end.
    pub group_protocol: GroupProtocol,
    /// When the group changed type (or was refused the change), in order.
    pub conversions: Vec<String>,
}

/// The result of [`run`](super::run).
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Timeline (empty when not recorded).
    pub timeline: Vec<TimelineEntry>,
    /// Totals.
    pub summary: Summary,
    /// Every partition that existed at some point (SVG lanes).
    pub partitions: PartitionSet,
    /// Final ownership per live member.
    pub final_owned: BTreeMap<String, PartitionSet>,
}

/// Balanced as Apache Kafka's assignor tests define it: per topic, the subscribers' counts
/// differ by at most one (range), or overall no member has two more partitions than another
/// member that could take one of them (sticky).
///
/// ```
/// use std::collections::{BTreeMap, BTreeSet};
/// use kafka_consumer_protocol::sim::is_balanced;
/// use kafka_consumer_protocol::PartitionSet;
/// let set = |v: &[i32]| v.iter().map(|p| ("t", *p)).collect::<PartitionSet>();
/// let subs: BTreeMap<String, BTreeSet<String>> =
///     [("a", ["t"]), ("b", ["t"])].iter().map(|(m, t)| (m.to_string(), t.iter().map(|s| s.to_string()).collect())).collect();
/// let ok = BTreeMap::from([("a".to_string(), set(&[0, 1])), ("b".to_string(), set(&[2]))]);
/// let bad = BTreeMap::from([("a".to_string(), set(&[0, 1, 2])), ("b".to_string(), set(&[]))]);
/// assert!(is_balanced(&ok, &subs));
/// assert!(!is_balanced(&bad, &subs));
/// ```
pub fn is_balanced(assign: &BTreeMap<String, PartitionSet>, subs: &BTreeMap<String, BTreeSet<String>>) -> bool {
    let topics: BTreeSet<&String> = subs.values().flatten().collect();
    let per_topic = topics.iter().all(|t| {
        let counts: Vec<usize> = subs
            .iter()
            .filter(|(_, s)| s.contains(*t))
            .map(|(m, _)| assign.get(m).map_or(0, |a| a.partitions_of(t).count()))
            .collect();
        counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0) <= 1
    });
    if per_topic {
        return true;
    }
    let empty = BTreeSet::new();
    for (a, pa) in assign {
        for (b, pb) in assign {
            if pa.len() > pb.len() + 1 {
                let sb = subs.get(b).unwrap_or(&empty);
                if pa.topics().any(|t| sb.contains(t)) {
                    let _ = a;
                    return false;
                }
            }
        }
    }
    true
}
