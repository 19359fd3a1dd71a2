//! The leader's result, stored compactly: one shared topic table and two flat arrays for all
//! members' partitions, instead of a `String` and a `Vec` per member and topic.
//!
//! A uniform group of 2,000 members over 500 topics x 2,000 partitions gives each member one
//! partition of every topic: a million `{topic, partitions}` groups. As owned
//! [`TopicPartitions`] that is two million heap allocations and ~60 MB; here it is a handful of
//! allocations and 8 bytes per partition.

use std::collections::BTreeMap;
use std::fmt;

use bytes::Bytes;

use super::common::FxMap;
use super::PendingPartition;
use crate::codec::assignment::{encode_groups, encoded_groups_len, merged_starts};
use crate::{Assignment, EncodeError, TopicPartitions, Version};

/// One member's place in the flat arrays.
#[derive(Clone)]
struct MemberSlot {
    member_id: String,
    /// `entry_topics[start..end]` / `entry_partitions[start..end]` are this member's partitions;
    /// each topic appears in one contiguous run.
    start: usize,
    end: usize,
    user_data: Option<Bytes>,
}

/// The leader's result: one assignment per member (every member present), plus the partitions
/// withheld for a cooperative hand-over. Members iterate in member-id order, so the result is
/// deterministic.
///
/// Each member's partitions are kept grouped per topic (a topic appears once, in order of first
/// appearance; partitions in the order given), which is what goes on the wire. Topic names are
/// stored once for the whole group.
///
/// ```
/// use kafka_consumer_protocol::assignor::GroupAssignment;
/// use kafka_consumer_protocol::{Assignment, AssignmentView, TopicPartitions, Version};
/// let mut out = GroupAssignment::new();
/// out.insert("m1", &Assignment::new(vec![TopicPartitions::new("orders", [0, 2])]));
/// out.insert("m2", &Assignment::new(vec![TopicPartitions::new("orders", [1])]));
/// let m1 = out.member("m1").unwrap();
/// assert_eq!(m1.topics().collect::<Vec<_>>(), [("orders", &[0, 2][..])]);
/// // What the leader sends in SyncGroup:
/// let bytes = m1.encode(Version::V3)?;
/// assert_eq!(AssignmentView::decode(&bytes).unwrap().assigned_partitions().pairs().count(), 2);
/// assert_eq!(out.partitions_of("m2"), [TopicPartitions::new("orders", [1])]);
/// # Ok::<(), kafka_consumer_protocol::EncodeError>(())
/// ```
#[derive(Clone, Default)]
pub struct GroupAssignment {
    topics: Vec<String>,
    /// Sorted by member id.
    slots: Vec<MemberSlot>,
    entry_topics: Vec<u32>,
    entry_partitions: Vec<i32>,
    /// Topic name -> table index, kept once [`GroupAssignment::insert`] has been used.
    index: Option<FxMap<String, u32>>,
    /// Partitions withheld this round (cooperative only).
    pub pending: Vec<PendingPartition>,
}

impl GroupAssignment {
    /// An empty result (no members).
    pub fn new() -> Self {
        Self::default()
    }

    /// A result from per-member assignments (a later duplicate member id replaces the earlier).
    ///
    /// ```
    /// use kafka_consumer_protocol::assignor::GroupAssignment;
    /// use kafka_consumer_protocol::{Assignment, TopicPartitions};
    /// let out = GroupAssignment::from_assignments([
    ///     ("b", Assignment::new(vec![TopicPartitions::new("t", [1])])),
    ///     ("a", Assignment::default()),
    /// ]);
    /// assert_eq!(out.member_ids().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn from_assignments<I, K>(assignments: I) -> Self
    where
        I: IntoIterator<Item = (K, Assignment)>,
        K: Into<String>,
    {
        let mut out = GroupAssignment::new();
        for (member_id, a) in assignments {
            out.insert(member_id, &a);
        }
        out
    }

    /// Sets `member_id`'s assignment, replacing any earlier one. Repeated topics are merged into
    /// their first appearance and empty groups dropped, as encoding does.
    pub fn insert(&mut self, member_id: impl Into<String>, assignment: &Assignment) {
        let mut index = self
            .index
            .take()
            .unwrap_or_else(|| self.topics.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect());
        self.insert_with(member_id.into(), assignment, &mut index);
        self.index = Some(index);
    }

    fn insert_with(&mut self, member_id: String, assignment: &Assignment, index: &mut FxMap<String, u32>) {
        let start = self.entry_topics.len();
        let groups = &assignment.assigned_partitions;
        let ids: Vec<u32> = groups
            .iter()
            .map(|g| match index.get(g.topic.as_str()) {
                Some(&t) => t,
                None => {
                    let t = self.topics.len() as u32;
                    self.topics.push(g.topic.clone());
                    index.insert(g.topic.clone(), t);
                    t
                }
            })
            .collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            // A topic listed again is merged where encoding puts it.
            for i in merged_starts(groups, |a, b| ids[a] == ids[b]) {
                for (later, _) in groups[i..].iter().zip(&ids[i..]).filter(|(_, &u)| u == ids[i]) {
                    self.entry_topics.extend(std::iter::repeat_n(ids[i], later.partitions.len()));
                    self.entry_partitions.extend_from_slice(&later.partitions);
                }
            }
        } else {
            for (g, &t) in groups.iter().zip(&ids) {
                self.entry_topics.extend(std::iter::repeat_n(t, g.partitions.len()));
                self.entry_partitions.extend_from_slice(&g.partitions);
            }
        }
        let slot =
            MemberSlot { member_id, start, end: self.entry_topics.len(), user_data: assignment.user_data.clone() };
        match self.slots.binary_search_by(|s| s.member_id.as_str().cmp(&slot.member_id)) {
            Ok(i) => self.slots[i] = slot,
            Err(i) => self.slots.insert(i, slot),
        }
    }

    /// Adds `member_id` with no partitions unless it is already present.
    pub fn ensure_member(&mut self, member_id: &str) {
        if let Err(i) = self.slot_index(member_id) {
            let at = self.entry_topics.len();
            let slot = MemberSlot { member_id: member_id.to_owned(), start: at, end: at, user_data: None };
            self.slots.insert(i, slot);
        }
    }

    fn slot_index(&self, member_id: &str) -> Result<usize, usize> {
        self.slots.binary_search_by(|s| s.member_id.as_str().cmp(member_id))
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when there are no members.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Member ids in order.
    pub fn member_ids(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.slots.iter().map(|s| s.member_id.as_str())
    }

    /// Every member's assignment, in member-id order.
    pub fn members(&self) -> impl ExactSizeIterator<Item = MemberAssignment<'_>> + '_ {
        self.slots.iter().map(move |slot| MemberAssignment { group: self, slot })
    }

    /// One member's assignment.
    pub fn member(&self, member_id: &str) -> Option<MemberAssignment<'_>> {
        self.slot_index(member_id).ok().map(|i| MemberAssignment { group: self, slot: &self.slots[i] })
    }

    /// The partitions assigned to `member_id`, as owned groups (empty when none or unknown).
    pub fn partitions_of(&self, member_id: &str) -> Vec<TopicPartitions> {
        self.member(member_id).map_or_else(Vec::new, |m| m.to_topic_partitions())
    }

    /// `member_id`'s assignment as an owned value.
    pub fn assignment_of(&self, member_id: &str) -> Option<Assignment> {
        self.member(member_id).map(|m| m.to_assignment())
    }

    /// Every member's assignment as owned values, keyed by member id.
    pub fn to_map(&self) -> BTreeMap<String, Assignment> {
        self.members().map(|m| (m.member_id().to_owned(), m.to_assignment())).collect()
    }

    /// Total number of partitions assigned (pending ones excluded).
    pub fn partition_count(&self) -> usize {
        self.slots.iter().map(|s| s.end - s.start).sum()
    }

    /// Keeps only the assigned partitions for which `keep(member_id, topic, partition)` is true.
    /// In place: the runs are compacted in the order they lie in the arrays.
    pub fn retain_partitions(&mut self, mut keep: impl FnMut(&str, &str, i32) -> bool) {
        let mut by_start: Vec<usize> = (0..self.slots.len()).collect();
        by_start.sort_unstable_by_key(|&i| self.slots[i].start);
        let mut write = 0;
        for i in by_start {
            let slot = &mut self.slots[i];
            let start = write;
            // Runs do not overlap, so the write position never passes the read position.
            for read in slot.start..slot.end {
                let (t, p) = (self.entry_topics[read], self.entry_partitions[read]);
                if keep(&slot.member_id, &self.topics[t as usize], p) {
                    self.entry_topics[write] = t;
                    self.entry_partitions[write] = p;
                    write += 1;
                }
            }
            slot.start = start;
            slot.end = write;
        }
        self.entry_topics.truncate(write);
        self.entry_partitions.truncate(write);
    }

    /// Heap bytes this value holds (by capacity), pending partitions included.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let strings = |s: &String| s.capacity();
        self.topics.capacity() * size_of::<String>()
            + self.topics.iter().map(strings).sum::<usize>()
            + self.slots.capacity() * size_of::<MemberSlot>()
            + self.slots.iter().map(|s| s.member_id.capacity()).sum::<usize>()
            + self.entry_topics.capacity() * 4
            + self.entry_partitions.capacity() * 4
            + self.index.as_ref().map_or(0, |i| i.capacity() * (size_of::<(String, u32)>() + 1))
            + self.index.as_ref().map_or(0, |i| i.keys().map(String::capacity).sum())
            + self.pending.capacity() * size_of::<PendingPartition>()
            + self
                .pending
                .iter()
                .map(|p| p.topic.capacity() + p.from.capacity() + p.to.as_ref().map_or(0, String::capacity))
                .sum::<usize>()
    }

    /// Built-in assignors' constructor: topic table, member ids sorted, and per-member partition
    /// runs already filled in.
    pub(crate) fn from_parts(
        topics: Vec<String>,
        slots: Vec<(String, usize, usize)>,
        entry_topics: Vec<u32>,
        entry_partitions: Vec<i32>,
        pending: Vec<PendingPartition>,
    ) -> Self {
        debug_assert!(slots.windows(2).all(|w| w[0].0 < w[1].0));
        let slots = slots
            .into_iter()
            .map(|(member_id, start, end)| MemberSlot { member_id, start, end, user_data: None })
            .collect();
        GroupAssignment { topics, slots, entry_topics, entry_partitions, index: None, pending }
    }
}

impl PartialEq for GroupAssignment {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.members().zip(other.members()).all(|(a, b)| a == b)
            && self.pending == other.pending
    }
}

impl Eq for GroupAssignment {}

impl fmt::Debug for GroupAssignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Members<'a>(&'a GroupAssignment);
        impl fmt::Debug for Members<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map().entries(self.0.members().map(|m| (m.member_id(), m))).finish()
            }
        }
        f.debug_struct("GroupAssignment").field("assignments", &Members(self)).field("pending", &self.pending).finish()
    }
}

/// One member's assignment inside a [`GroupAssignment`] (borrowed, no allocation).
#[derive(Clone, Copy)]
pub struct MemberAssignment<'a> {
    group: &'a GroupAssignment,
    slot: &'a MemberSlot,
}

impl<'a> MemberAssignment<'a> {
    /// The member id.
    pub fn member_id(&self) -> &'a str {
        &self.slot.member_id
    }

    /// The assignor's userData for this member (`None` is null on the wire).
    pub fn user_data(&self) -> Option<&'a Bytes> {
        self.slot.user_data.as_ref()
    }

    /// Number of partitions assigned.
    pub fn partition_count(&self) -> usize {
        self.slot.end - self.slot.start
    }

    /// True when nothing is assigned.
    pub fn is_empty(&self) -> bool {
        self.slot.end == self.slot.start
    }

    /// `(topic, partitions)` groups, each topic once, in the order they go on the wire.
    pub fn topics(&self) -> TopicGroups<'a> {
        let g = self.group;
        TopicGroups {
            names: &g.topics,
            topics: &g.entry_topics[self.slot.start..self.slot.end],
            partitions: &g.entry_partitions[self.slot.start..self.slot.end],
        }
    }

    /// Every `(topic, partition)`, in wire order.
    pub fn pairs(&self) -> impl Iterator<Item = (&'a str, i32)> + 'a {
        self.topics().flat_map(|(t, ps)| ps.iter().map(move |&p| (t, p)))
    }

    /// The groups as owned values.
    pub fn to_topic_partitions(&self) -> Vec<TopicPartitions> {
        self.topics().map(|(t, ps)| TopicPartitions::new(t, ps)).collect()
    }

    /// As an owned [`Assignment`].
    pub fn to_assignment(&self) -> Assignment {
        Assignment { assigned_partitions: self.to_topic_partitions(), user_data: self.slot.user_data.clone() }
    }

    /// Exact size of [`MemberAssignment::encode`]'s output.
    pub fn encoded_len(&self) -> usize {
        encoded_groups_len(Version::V0, self.topics().count(), self.topics(), self.slot.user_data.as_deref())
    }

    /// Encodes this member's `ConsumerProtocolAssignment` at `version` (what the leader sends
    /// in SyncGroup), with one allocation; the bytes equal encoding [`Self::to_assignment`].
    pub fn encode(&self, version: Version) -> Result<Vec<u8>, EncodeError> {
        // Each topic is one run already, so the codec writes the groups as they are.
        encode_groups(version, self.topics().count(), self.topics(), self.slot.user_data.as_deref())
    }
}

impl PartialEq for MemberAssignment<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.member_id() == other.member_id()
            && self.user_data() == other.user_data()
            && self.topics().eq(other.topics())
    }
}

impl fmt::Debug for MemberAssignment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_map();
        d.entries(self.topics());
        if let Some(u) = self.user_data() {
            d.entry(&"user_data", u);
        }
        d.finish()
    }
}

/// Iterator over a member's `(topic, partitions)` groups.
#[derive(Clone)]
pub struct TopicGroups<'a> {
    names: &'a [String],
    topics: &'a [u32],
    partitions: &'a [i32],
}

impl<'a> Iterator for TopicGroups<'a> {
    type Item = (&'a str, &'a [i32]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let &t = self.topics.first()?;
        let n = self.topics.iter().position(|&x| x != t).unwrap_or(self.topics.len());
        let (ps, rest) = self.partitions.split_at(n);
        self.topics = &self.topics[n..];
        self.partitions = rest;
        Some((&self.names[t as usize], ps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(topic: &str, partitions: &[i32]) -> TopicPartitions {
        TopicPartitions::new(topic, partitions)
    }

    #[test]
    fn insert_merges_repeated_topics_like_encoding_and_replaces_members() {
        let a = Assignment::new(vec![tp("b", &[2, 0]), tp("a", &[]), tp("a", &[1]), tp("b", &[5])]);
        let mut out = GroupAssignment::new();
        out.insert("m2", &a);
        out.insert("m1", &Assignment::new(vec![tp("a", &[9])]));
        assert_eq!(out.member_ids().collect::<Vec<_>>(), ["m1", "m2"]);
        let m2 = out.member("m2").unwrap();
        assert_eq!(m2.topics().collect::<Vec<_>>(), [("b", &[2, 0, 5][..]), ("a", &[1][..])]);
        assert_eq!(m2.partition_count(), 4);
        // Same bytes as the owned value's encoder, at every version.
        for v in [Version::V0, Version::V1, Version::V2, Version::V3] {
            assert_eq!(m2.encode(v).unwrap(), a.encode(v).unwrap());
            assert_eq!(m2.encoded_len(), a.encode(v).unwrap().len());
        }
        out.insert("m2", &Assignment::default());
        assert!(out.member("m2").unwrap().is_empty());
        assert_eq!(out.partition_count(), 1);
    }

    #[test]
    fn user_data_round_trips_and_counts_in_equality() {
        let mut with = Assignment::new(vec![tp("t", &[0])]);
        with.user_data = Some(Bytes::from_static(&[1, 2, 3]));
        let a = GroupAssignment::from_assignments([("m", with.clone())]);
        let b = GroupAssignment::from_assignments([("m", Assignment::new(vec![tp("t", &[0])]))]);
        assert_eq!(a.assignment_of("m"), Some(with.clone()));
        assert_eq!(a.member("m").unwrap().encode(Version::V1).unwrap(), with.encode(Version::V1).unwrap());
        assert_ne!(a, b);
    }

    /// A repeated topic lands where encoding puts it: at its first partition, not at an empty
    /// group listed before it.
    #[test]
    fn insert_merges_repeats_as_encoding_does() {
        let input = Assignment::new(vec![tp("a", &[]), tp("b", &[1]), tp("a", &[2]), tp("b", &[0])]);
        let out = GroupAssignment::from_assignments([("m", input.clone())]);
        let member = out.member("m").unwrap();
        assert_eq!(member.encode(Version::V3).unwrap(), input.encode(Version::V3).unwrap());
        assert_eq!(member.pairs().collect::<Vec<_>>(), [("b", 1), ("b", 0), ("a", 2)]);
    }

    #[test]
    fn equality_ignores_topic_table_order() {
        let x = GroupAssignment::from_assignments([
            ("m1", Assignment::new(vec![tp("a", &[0])])),
            ("m2", Assignment::new(vec![tp("b", &[0])])),
        ]);
        let y = GroupAssignment::from_assignments([
            ("m2", Assignment::new(vec![tp("b", &[0])])),
            ("m1", Assignment::new(vec![tp("a", &[0])])),
        ]);
        assert_eq!(x, y);
        assert_eq!(x.to_map(), y.to_map());
    }

    #[test]
    fn retain_and_ensure_member() {
        let mut out = GroupAssignment::from_assignments([
            ("m1", Assignment::new(vec![tp("a", &[0, 1, 2]), tp("b", &[0])])),
            ("m2", Assignment::new(vec![tp("a", &[3])])),
        ]);
        out.retain_partitions(|m, t, p| !(m == "m1" && t == "a" && p == 1) && t != "b");
        assert_eq!(out.partitions_of("m1"), [tp("a", &[0, 2])]);
        assert_eq!(out.partitions_of("m2"), [tp("a", &[3])]);
        out.ensure_member("m0");
        out.ensure_member("m2");
        assert_eq!(out.len(), 3);
        assert!(out.member("m0").unwrap().is_empty());
        assert_eq!(out.partitions_of("m2"), [tp("a", &[3])]);
        assert!(out.partitions_of("nobody").is_empty());
        assert_eq!(out.member("m1").unwrap().pairs().collect::<Vec<_>>(), [("a", 0), ("a", 2)]);
        // Every assigned partition costs 8 bytes of entries.
        let partitions: Vec<i32> = (0..1000).collect();
        let big = GroupAssignment::from_assignments([("m", Assignment::new(vec![tp("a", &partitions)]))]);
        assert!(big.heap_bytes() >= 8 * 1000, "{}", big.heap_bytes());
    }

    #[test]
    fn retain_compacts_runs_left_out_of_member_order_by_replacements() {
        // Runs in the arrays: b (replaced later, dead), a, c, then b's replacement.
        let mut out = GroupAssignment::new();
        out.insert("b", &Assignment::new(vec![tp("t", &[9, 8])]));
        out.insert("a", &Assignment::new(vec![tp("t", &[0, 1]), tp("u", &[0])]));
        out.insert("c", &Assignment::new(vec![tp("u", &[1, 2])]));
        out.insert("b", &Assignment::new(vec![tp("t", &[2, 3])]));
        out.retain_partitions(|m, t, p| !(m == "a" && p == 0 || t == "u" && p == 2));
        assert_eq!(out.partitions_of("a"), [tp("t", &[1])]);
        assert_eq!(out.partitions_of("b"), [tp("t", &[2, 3])]);
        assert_eq!(out.partitions_of("c"), [tp("u", &[1])]);
        assert_eq!(out.partition_count(), 4);
    }
}
