//! Shared plumbing of the built-in assignors: topic interning (flat partition ids), member
//! ordering and building the output.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use super::{AssignError, ClusterMetadata, GroupMember, TopicInfo};
use crate::wire::java_string_cmp;
use crate::{Assignment, TopicPartitions};

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
    index: HashMap<&'a str, u32>,
}

impl<'a> Topics<'a> {
    pub(crate) fn new(metadata: &'a ClusterMetadata, members: &'a [GroupMember]) -> Result<Self, AssignError> {
        let mut names: Vec<&'a str> = Vec::new();
        let mut seen: HashMap<&'a str, ()> = HashMap::new();
        for m in members {
            for t in &m.subscription.topics {
                if seen.insert(t.as_str(), ()).is_none() {
                    if let Some((name, info)) = metadata.topics.get_key_value(t.as_str()) {
                        if info.partitions > 0 {
                            names.push(name.as_str());
                        }
                    }
                }
            }
        }
        names.sort_unstable_by(|a, b| java_string_cmp(a, b));
        let info: Vec<&TopicInfo> = names.iter().map(|n| &metadata.topics[*n]).collect();
        let mut base = Vec::with_capacity(names.len() + 1);
        let mut acc = 0u64;
        base.push(0);
        for i in &info {
            acc += i.partitions as u64;
            if acc >= u64::from(u32::MAX) {
                return Err(AssignError::InvalidInput(format!("more than {} partitions in total", u32::MAX - 1)));
            }
            base.push(acc as u32);
        }
        let index = names.iter().enumerate().map(|(i, n)| (*n, i as u32)).collect();
        Ok(Topics { names, info, base, index })
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
        self.index.get(name).copied()
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

    /// Flat id of `(topic name, partition)` when both exist.
    #[inline]
    pub(crate) fn flat(&self, t: u32, partition: i32) -> Option<u32> {
        (partition >= 0 && (partition as u32) < self.count(t)).then(|| self.base[t as usize] + partition as u32)
    }

    /// Each member's subscribed topic ids (existing ones only), sorted and deduplicated.
    pub(crate) fn subscriptions(&self, members: &[GroupMember]) -> Vec<Vec<u32>> {
        members
            .iter()
            .map(|m| {
                let mut v: Vec<u32> = m.subscription.topics.iter().filter_map(|t| self.id(t)).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect()
    }
}

/// Refuses duplicate member ids.
pub(crate) fn check_members(members: &[GroupMember]) -> Result<(), AssignError> {
    let mut ids: Vec<&str> = members.iter().map(|m| m.member_id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(AssignError::InvalidInput(format!("member id {:?} appears twice", w[0])));
    }
    if members.len() >= NONE as usize {
        return Err(AssignError::InvalidInput("too many members".into()));
    }
    Ok(())
}

/// Java's `MemberInfo` order: static members (by `group.instance.id`) first, then dynamic members
/// by member id, both in UTF-16 code-unit order. Equal instance ids fall back to member id.
pub(crate) fn member_info_cmp(a: &GroupMember, b: &GroupMember) -> Ordering {
    match (&a.group_instance_id, &b.group_instance_id) {
        (Some(x), Some(y)) => java_string_cmp(x, y).then_with(|| java_string_cmp(&a.member_id, &b.member_id)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => java_string_cmp(&a.member_id, &b.member_id),
    }
}

/// Member indexes in Java `MemberInfo` order.
pub(crate) fn member_info_order(members: &[GroupMember]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..members.len() as u32).collect();
    order.sort_by(|&a, &b| member_info_cmp(&members[a as usize], &members[b as usize]));
    order
}

/// Member indexes in member-id order (Java `String.compareTo`).
pub(crate) fn member_id_order(members: &[GroupMember]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..members.len() as u32).collect();
    order.sort_by(|&a, &b| java_string_cmp(&members[a as usize].member_id, &members[b as usize].member_id));
    order
}

/// Builds the per-member output from a flat `owner` array (member index per partition, or
/// [`NONE`]). Partitions are grouped per topic in topic order, ascending within a topic.
pub(crate) fn build_assignments(
    topics: &Topics<'_>,
    members: &[GroupMember],
    owner: &[u32],
) -> BTreeMap<String, Assignment> {
    let n = members.len();
    // CSR: partitions per member in flat-id order.
    let mut start = vec![0u32; n + 1];
    for &o in owner {
        if o != NONE {
            start[o as usize + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut flat = vec![0u32; start[n] as usize];
    for (p, &o) in owner.iter().enumerate() {
        if o != NONE {
            flat[fill[o as usize] as usize] = p as u32;
            fill[o as usize] += 1;
        }
    }
    let mut out = BTreeMap::new();
    for (m, member) in members.iter().enumerate() {
        let parts = &flat[start[m] as usize..start[m + 1] as usize];
        let mut groups: Vec<TopicPartitions> = Vec::new();
        let mut i = 0;
        while i < parts.len() {
            let t = topics.topic_of(parts[i]);
            let b = topics.base[t as usize];
            let end = topics.base[t as usize + 1];
            let j = i + parts[i..].partition_point(|&p| p < end);
            groups.push(TopicPartitions {
                topic: topics.names[t as usize].to_owned(),
                partitions: parts[i..j].iter().map(|&p| (p - b) as i32).collect(),
            });
            i = j;
        }
        out.insert(member.member_id.clone(), Assignment::new(groups));
    }
    out
}
