//! Shared plumbing of the built-in assignors: topic interning (flat partition ids), member
//! ordering and building the output.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::{AssignError, ClusterMetadata, GroupAssignment, GroupMember, GroupMemberView, PendingPartition, TopicInfo};
use crate::codec::java_string_cmp;
use crate::codec::lists::{PartitionIdsIter, TopicNames, TopicPartitionsList};
use crate::TopicPartitions;

/// One member as the built-in assignors read it, whichever form it came in: owned
/// ([`GroupMember`]) or still in wire form ([`GroupMemberView`]). A reference, so the list of
/// them costs 16 bytes per member; the fields are read through it.
#[derive(Clone, Copy)]
pub(crate) enum Member<'a> {
    Owned(&'a GroupMember),
    View(&'a GroupMemberView<'a>),
}

impl<'a> Member<'a> {
    pub(crate) fn all_owned(members: &'a [GroupMember]) -> Vec<Self> {
        members.iter().map(Member::Owned).collect()
    }

    pub(crate) fn all_views(members: &'a [GroupMemberView<'a>]) -> Vec<Self> {
        members.iter().map(Member::View).collect()
    }

    #[inline]
    pub(crate) fn id(self) -> &'a str {
        match self {
            Member::Owned(m) => &m.member_id,
            Member::View(m) => m.member_id,
        }
    }

    #[inline]
    pub(crate) fn instance_id(self) -> Option<&'a str> {
        match self {
            Member::Owned(m) => m.group_instance_id.as_deref(),
            Member::View(m) => m.group_instance_id,
        }
    }

    #[inline]
    pub(crate) fn topics(self) -> TopicList<'a> {
        match self {
            Member::Owned(m) => TopicList::Owned(&m.subscription.topics),
            Member::View(m) => TopicList::Wire(m.subscription.topics()),
        }
    }

    #[inline]
    pub(crate) fn owned(self) -> OwnedList<'a> {
        match self {
            Member::Owned(m) => OwnedList::Owned(&m.subscription.owned_partitions),
            Member::View(m) => OwnedList::Wire(m.subscription.owned_partitions()),
        }
    }

    #[inline]
    pub(crate) fn generation_id(self) -> i32 {
        match self {
            Member::Owned(m) => m.subscription.generation_id,
            Member::View(m) => m.subscription.generation_id(),
        }
    }

    #[inline]
    pub(crate) fn user_data(self) -> Option<&'a [u8]> {
        match self {
            Member::Owned(m) => m.subscription.user_data.as_deref(),
            Member::View(m) => m.subscription.user_data(),
        }
    }

    /// The rack, `None` when absent or empty (Java ignores an empty rack id).
    #[inline]
    pub(crate) fn rack(self) -> Option<&'a str> {
        match self {
            Member::Owned(m) => m.subscription.rack_id.as_deref(),
            Member::View(m) => m.subscription.rack_id(),
        }
        .filter(|r| !r.is_empty())
    }
}

/// A member's subscribed topic names.
#[derive(Clone, Copy)]
pub(crate) enum TopicList<'a> {
    Owned(&'a [String]),
    Wire(TopicNames<'a>),
}

impl<'a> TopicList<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            TopicList::Owned(t) => t.len(),
            TopicList::Wire(t) => t.len(),
        }
    }

    pub(crate) fn for_each(&self, mut f: impl FnMut(&'a str)) {
        match *self {
            TopicList::Owned(t) => t.iter().for_each(|n| f(n)),
            TopicList::Wire(t) => t.iter().for_each(f),
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        match *self {
            TopicList::Owned(t) => t.iter().any(|n| n == name),
            TopicList::Wire(t) => t.iter().any(|n| n == name),
        }
    }

    /// The same names in the same order. Two wire lists compare as bytes: one `memcmp` over
    /// each member's topic section instead of a string compare per name. Owned lists compare
    /// their last names first (lists that differ usually do there), then name by name. (A
    /// group's members are all owned or all views, so the forms never mix; mixed lists count as
    /// different.)
    fn same(&self, other: &TopicList<'_>) -> bool {
        match (self, other) {
            (TopicList::Wire(a), TopicList::Wire(b)) => a == b,
            (TopicList::Owned(a), TopicList::Owned(b)) => a.last() == b.last() && same_names(a, b),
            _ => false,
        }
    }
}

/// A member's owned partitions (subscription v1+).
#[derive(Clone, Copy)]
pub(crate) enum OwnedList<'a> {
    Owned(&'a [TopicPartitions]),
    Wire(TopicPartitionsList<'a>),
}

impl<'a> OwnedList<'a> {
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            OwnedList::Owned(l) => l.is_empty(),
            OwnedList::Wire(l) => l.is_empty(),
        }
    }

    /// [`OwnedList::for_each`] with each topic name as bytes, not validated again (the claims
    /// walk only looks names up among known topics).
    #[inline]
    pub(crate) fn for_each_raw(&self, mut f: impl FnMut(&'a [u8], &mut OwnedPartitions<'a>)) {
        match *self {
            OwnedList::Owned(l) => {
                l.iter().for_each(|g| f(g.topic.as_bytes(), &mut OwnedPartitions::Owned(g.partitions.iter().copied())))
            }
            OwnedList::Wire(l) => l.for_each_raw(|topic, ids| f(topic, &mut OwnedPartitions::Wire(ids.iter()))),
        }
    }

    /// Calls `f` with each entry's topic and partitions, in list order.
    #[inline]
    pub(crate) fn for_each(&self, mut f: impl FnMut(&'a str, &mut OwnedPartitions<'a>)) {
        match *self {
            OwnedList::Owned(l) => {
                l.iter().for_each(|g| f(&g.topic, &mut OwnedPartitions::Owned(g.partitions.iter().copied())))
            }
            OwnedList::Wire(l) => l.iter().for_each(|g| f(g.topic, &mut OwnedPartitions::Wire(g.partitions.iter()))),
        }
    }
}

/// The partition ids of one entry of an [`OwnedList`]: a concrete iterator, not a trait object,
/// so that the claim loops inline it (through `dyn Iterator` every id cost a virtual call:
/// +11% instructions on an eager sticky reassignment).
pub(crate) enum OwnedPartitions<'a> {
    Owned(std::iter::Copied<std::slice::Iter<'a, i32>>),
    Wire(PartitionIdsIter<'a>),
}

impl Iterator for OwnedPartitions<'_> {
    type Item = i32;

    #[inline]
    fn next(&mut self) -> Option<i32> {
        match self {
            OwnedPartitions::Owned(i) => i.next(),
            OwnedPartitions::Wire(i) => i.next(),
        }
    }
}

/// A small, fast, deterministic hasher for topic names (FxHash-style multiply-rotate). Topic
/// names are not attacker-chosen keys in a way that matters here: the leader hashes its own
/// group's names once per assignment.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(i)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A topic name's bytes as a map key, hashed as `str` hashes (the bytes, then `0xff`): `[u8]`'s
/// own hash puts the length first, and with [`FxHasher`] that spread names that differ in their
/// last digits badly (twice the probes and key comparisons on 500 `topic-NNN` names).
#[derive(PartialEq, Eq, Clone, Copy)]
pub(crate) struct NameBytes<'a>(pub(crate) &'a [u8]);

impl Hash for NameBytes<'_> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0);
        state.write_u8(0xff);
    }
}

/// "No member" in flat `u32` member arrays.
pub(crate) const NONE: u32 = u32::MAX;

/// The topics an assignment works on: every topic some member subscribes to that exists in the
/// metadata with at least one partition, sorted in Java `String.compareTo` order. Partition `p` of
/// topic `t` has the flat id `base[t] + p`.
pub(crate) struct Topics<'a> {
    pub(crate) names: Vec<&'a str>,
    pub(crate) info: Vec<&'a TopicInfo>,
    /// Prefix sums of partition counts; `base.len() == names.len() + 1`.
    pub(crate) base: Vec<u32>,
    /// Topic id by name, keyed by the name's bytes (claims are looked up unvalidated).
    index: FxMap<NameBytes<'a>, u32>,
    /// Per member: which distinct topic list it has (index into `lists`).
    list_of: Vec<u32>,
    /// One member index per distinct topic list, in first-appearance order.
    lists: Vec<u32>,
}

/// While a group has at most this many distinct topic lists, every member's list is compared
/// with all of them; beyond, only with the previous member's.
const FEW_LISTS: usize = 16;

impl<'a> Topics<'a> {
    pub(crate) fn new(metadata: &'a ClusterMetadata, members: &[Member<'a>]) -> Result<Self, AssignError> {
        let mut names: Vec<&'a str> = Vec::new();
        let mut seen: FxMap<&'a str, ()> = FxMap::default();
        let mut lists: Vec<u32> = Vec::new();
        let mut list_of: Vec<u32> = Vec::with_capacity(members.len());
        let topics_of = |i: u32| members[i as usize].topics();
        for (i, m) in members.iter().enumerate() {
            // Groups mostly share a few subscriptions: recognise a list seen before and skip it.
            let mine = &m.topics();
            let previous = list_of.last().copied();
            let known = match previous {
                Some(prev) if topics_of(lists[prev as usize]).same(mine) => previous,
                _ if lists.len() <= FEW_LISTS => (0..lists.len() as u32)
                    .filter(|&l| Some(l) != previous)
                    .find(|&l| topics_of(lists[l as usize]).same(mine)),
                _ => None,
            };
            if let Some(l) = known {
                list_of.push(l);
                continue;
            }
            list_of.push(lists.len() as u32);
            lists.push(i as u32);
            mine.for_each(|t| {
                if seen.insert(t, ()).is_none() {
                    if let Some((name, info)) = metadata.topics.get_key_value(t) {
                        if info.partitions > 0 {
                            names.push(name.as_str());
                        }
                    }
                }
            });
        }
        names.sort_unstable_by(|a, b| java_string_cmp(a, b));
        let info: Vec<&TopicInfo> = names.iter().map(|n| &metadata.topics[*n]).collect();
        let mut base = Vec::with_capacity(names.len() + 1);
        let mut acc = 0u64;
        base.push(0);
        for i in &info {
            acc += i.partitions as u64;
            if acc >= u64::from(u32::MAX) {
                return Err(AssignError::TooManyPartitions { limit: u32::MAX - 1 });
            }
            base.push(acc as u32);
        }
        let index = names.iter().enumerate().map(|(i, n)| (NameBytes(n.as_bytes()), i as u32)).collect();
        Ok(Topics { names, info, base, index, list_of, lists })
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Total number of partitions.
    #[inline]
    pub(crate) fn total(&self) -> usize {
        *self.base.last().unwrap_or(&0) as usize
    }

    #[inline]
    pub(crate) fn id(&self, name: &str) -> Option<u32> {
        self.id_of_bytes(name.as_bytes())
    }

    /// [`Topics::id`] by the name's bytes.
    #[inline]
    pub(crate) fn id_of_bytes(&self, name: &[u8]) -> Option<u32> {
        self.index.get(&NameBytes(name)).copied()
    }

    #[inline]
    pub(crate) fn count(&self, t: u32) -> u32 {
        self.base[t as usize + 1] - self.base[t as usize]
    }

    /// The topic of flat partition `p`.
    #[inline]
    pub(crate) fn topic_of(&self, p: u32) -> u32 {
        (self.base.partition_point(|&b| b <= p) - 1) as u32
    }

    /// Topic `t`'s first flat id and its partition count: for loops over many ids of one topic.
    #[inline]
    pub(crate) fn span(&self, t: u32) -> (u32, u32) {
        (self.base[t as usize], self.count(t))
    }

    /// Flat id of `(topic name, partition)` when both exist.
    #[inline]
    pub(crate) fn flat(&self, t: u32, partition: i32) -> Option<u32> {
        (partition >= 0 && (partition as u32) < self.count(t)).then(|| self.base[t as usize] + partition as u32)
    }

    /// Each member's subscribed topic ids (existing ones only), sorted and deduplicated. Members
    /// with the same topic list share one list.
    pub(crate) fn subscriptions(&self, members: &[Member<'_>]) -> Subscriptions {
        let lists = self
            .lists
            .iter()
            .map(|&i| {
                let mut v: Vec<u32> = Vec::with_capacity(members[i as usize].topics().len().min(self.len()));
                members[i as usize].topics().for_each(|t| v.extend(self.id(t)));
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        Subscriptions { lists, of: self.list_of.clone() }
    }
}

/// Per-member subscribed topic ids; `subs[m]` is member `m`'s sorted list.
pub(crate) struct Subscriptions {
    lists: Vec<Vec<u32>>,
    of: Vec<u32>,
}

impl std::ops::Index<usize> for Subscriptions {
    type Output = Vec<u32>;

    #[inline]
    fn index(&self, member: usize) -> &Vec<u32> {
        &self.lists[self.of[member] as usize]
    }
}

/// Topic lists equal, name by name. Inlined compares of short names: a uniform group compares
/// every member's list with the previous one, a million short strings for the largest groups.
fn same_names(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_str(x.as_bytes(), y.as_bytes()))
}

#[inline]
fn same_str(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    // Two overlapping loads cover the whole name when 4 <= len <= 16.
    match (a.first_chunk::<8>(), b.first_chunk::<8>(), a.last_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(a0), Some(b0), Some(a1), Some(b1)) if a.len() <= 16 => return a0 == b0 && a1 == b1,
        _ => {}
    }
    match (a.first_chunk::<4>(), b.first_chunk::<4>(), a.last_chunk::<4>(), b.last_chunk::<4>()) {
        (Some(a0), Some(b0), Some(a1), Some(b1)) if a.len() < 8 => a0 == b0 && a1 == b1,
        _ => a == b,
    }
}

/// Refuses duplicate member ids.
pub(crate) fn check_members(members: &[Member<'_>]) -> Result<(), AssignError> {
    let mut ids: Vec<&str> = members.iter().map(|m| m.id()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(AssignError::DuplicateMemberId(w[0].to_owned()));
    }
    if members.len() >= NONE as usize {
        return Err(AssignError::TooManyMembers);
    }
    Ok(())
}

/// Java's `MemberInfo` order: static members (by `group.instance.id`) first, then dynamic members
/// by member id, both in UTF-16 code-unit order. Equal instance ids fall back to member id.
pub(crate) fn member_info_cmp(a: &Member<'_>, b: &Member<'_>) -> Ordering {
    match (a.instance_id(), b.instance_id()) {
        (Some(x), Some(y)) => java_string_cmp(x, y).then_with(|| java_string_cmp(a.id(), b.id())),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => java_string_cmp(a.id(), b.id()),
    }
}

/// Member indexes in Java `MemberInfo` order.
pub(crate) fn member_info_order(members: &[Member<'_>]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..members.len() as u32).collect();
    order.sort_by(|&a, &b| member_info_cmp(&members[a as usize], &members[b as usize]));
    order
}

/// Member indexes in member-id order (Java `String.compareTo`).
pub(crate) fn member_id_order(members: &[Member<'_>]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..members.len() as u32).collect();
    order.sort_by(|&a, &b| java_string_cmp(members[a as usize].id(), members[b as usize].id()));
    order
}

/// The inverse of an order of member indexes (such as [`member_id_order`]): per member index,
/// its position.
pub(crate) fn rank_of(order: &[u32]) -> Vec<u32> {
    let mut rank = vec![0u32; order.len()];
    for (r, &m) in order.iter().enumerate() {
        rank[m as usize] = r as u32;
    }
    rank
}

/// Member indexes in the order of a [`GroupAssignment`]'s slots: member ids by their bytes.
pub(crate) fn slot_order(members: &[Member<'_>]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..members.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| members[a as usize].id().cmp(members[b as usize].id()));
    order
}

/// Builds the result from a flat `owner` array (member index per partition, or [`NONE`]).
/// Each member's partitions are grouped per topic in topic order, ascending within a topic.
pub(crate) fn build_group_assignment(
    topics: &Topics<'_>,
    members: &[Member<'_>],
    owner: &[u32],
    pending: Vec<PendingPartition>,
    returned: &[Returned<'_>],
) -> GroupAssignment {
    let n = members.len();
    let mut counts = vec![0usize; n];
    for &o in owner {
        if o != NONE {
            counts[o as usize] += 1;
        }
    }
    for r in returned {
        counts[r.member as usize] += 1;
    }
    // Each member's run starts where the previous one's ends.
    let by_id = slot_order(members);
    let mut cursor = vec![0usize; n];
    let mut slots = Vec::with_capacity(n);
    let mut at = 0usize;
    for &m in &by_id {
        cursor[m as usize] = at;
        slots.push((members[m as usize].id().to_owned(), at, at + counts[m as usize]));
        at += counts[m as usize];
    }
    let mut entry_topics = vec![0u32; at];
    let mut entry_partitions = vec![0i32; at];
    for t in 0..topics.len() {
        let base = topics.base[t] as usize;
        for (p, &o) in owner[base..topics.base[t + 1] as usize].iter().enumerate() {
            if o != NONE {
                let c = &mut cursor[o as usize];
                entry_topics[*c] = t as u32;
                entry_partitions[*c] = p as i32;
                *c += 1;
            }
        }
    }
    let mut names: Vec<String> = topics.names.iter().map(|n| (*n).to_owned()).collect();
    // Returned partitions come after the member's known ones, sorted by topic and partition.
    for r in returned {
        let t = match names[topics.len()..].iter().position(|n| n == r.topic) {
            Some(i) => topics.len() + i,
            None => {
                names.push(r.topic.to_owned());
                names.len() - 1
            }
        };
        let c = &mut cursor[r.member as usize];
        entry_topics[*c] = t as u32;
        entry_partitions[*c] = r.partition;
        *c += 1;
    }
    GroupAssignment::from_parts(names, slots, entry_topics, entry_partitions, pending)
}

/// A partition of a topic the leader's metadata does not have, given back to the member that
/// claims it (KIP-429 leader step 2.6, "unknown-but-owned").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Returned<'a> {
    pub(crate) member: u32,
    pub(crate) topic: &'a str,
    pub(crate) partition: i32,
}
