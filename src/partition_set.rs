//! [`PartitionSet`]: a set of `(topic, partition)` pairs, the one form in which a member's
//! partitions cross module boundaries (the coordinator's owned partitions, the leader's checks,
//! the simulator's timeline and its invariant checks).
//!
//! The codec's [`TopicPartitions`] lists are the wire form (grouped per topic, in wire order);
//! a `PartitionSet` is the form to compare, diff and look up in. The assignors keep flat integer
//! ids inside their hot loops and do not use it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::codec::TopicPartitionsList;
use crate::TopicPartitions;

/// A sorted set of `(topic, partition)` pairs: ordered by topic (byte order), then partition.
///
/// ```
/// use kafka_consumer_protocol::{PartitionSet, TopicPartitions};
/// let owned = PartitionSet::from_groups(&[TopicPartitions::new("orders", [2, 0]), TopicPartitions::new("audit", [1])]);
/// let assigned: PartitionSet = [("orders", 0), ("orders", 1)].into_iter().collect();
/// let revoked: PartitionSet = owned.difference(&assigned).collect();
/// assert_eq!(revoked.to_groups(), [TopicPartitions::new("audit", [1]), TopicPartitions::new("orders", [2])]);
/// assert!(owned.contains("orders", 0));
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PartitionSet {
    /// Never holds an empty partition set, so that equal sets compare equal.
    topics: BTreeMap<String, BTreeSet<i32>>,
    len: usize,
}

impl PartitionSet {
    /// The empty set.
    pub fn new() -> Self {
        PartitionSet::default()
    }

    /// The pairs of per-topic lists (a topic may repeat; duplicates collapse).
    pub fn from_groups(groups: &[TopicPartitions]) -> Self {
        let mut set = PartitionSet::new();
        for g in groups {
            for &p in &g.partitions {
                set.insert(g.topic.as_str(), p);
            }
        }
        set
    }

    /// The pairs of a list borrowed from a decoded message.
    pub fn from_list(list: TopicPartitionsList<'_>) -> Self {
        list.pairs().collect()
    }

    /// The set grouped per topic, topics and partitions ascending: the form of the listener
    /// events and of a subscription's owned partitions.
    pub fn to_groups(&self) -> Vec<TopicPartitions> {
        self.topics
            .iter()
            .map(|(t, ps)| TopicPartitions::new(t.clone(), ps.iter().copied().collect::<Vec<_>>()))
            .collect()
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `topic`'s partition `partition` is in the set.
    pub fn contains(&self, topic: &str, partition: i32) -> bool {
        self.topics.get(topic).is_some_and(|ps| ps.contains(&partition))
    }

    /// Adds a pair; whether it was new.
    pub fn insert(&mut self, topic: &str, partition: i32) -> bool {
        let new = match self.topics.get_mut(topic) {
            Some(ps) => ps.insert(partition),
            None => {
                self.topics.insert(topic.to_owned(), BTreeSet::from([partition]));
                true
            }
        };
        self.len += usize::from(new);
        new
    }

    /// Removes a pair; whether it was there.
    pub fn remove(&mut self, topic: &str, partition: i32) -> bool {
        let Some(ps) = self.topics.get_mut(topic) else { return false };
        let was = ps.remove(&partition);
        if ps.is_empty() {
            self.topics.remove(topic);
        }
        self.len -= usize::from(was);
        was
    }

    /// Keeps the pairs for which `keep(topic, partition)` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, i32) -> bool) {
        let mut len = 0;
        self.topics.retain(|t, ps| {
            ps.retain(|&p| keep(t, p));
            len += ps.len();
            !ps.is_empty()
        });
        self.len = len;
    }

    /// Removes every pair.
    pub fn clear(&mut self) {
        self.topics.clear();
        self.len = 0;
    }

    /// The pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32)> + Clone + '_ {
        self.topics.iter().flat_map(|(t, ps)| ps.iter().map(move |&p| (t.as_str(), p)))
    }

    /// The topics, each once, in order.
    pub fn topics(&self) -> impl Iterator<Item = &str> + '_ {
        self.topics.keys().map(String::as_str)
    }

    /// One topic's partitions, ascending (none for a topic not in the set).
    pub fn partitions_of<'a>(&'a self, topic: &str) -> impl Iterator<Item = i32> + 'a {
        self.topics.get(topic).into_iter().flatten().copied()
    }

    /// Pairs in `self` and not in `other`, in order.
    pub fn difference<'a>(&'a self, other: &'a PartitionSet) -> impl Iterator<Item = (&'a str, i32)> + 'a {
        self.iter().filter(move |&(t, p)| !other.contains(t, p))
    }

    /// Pairs in both, in order.
    pub fn intersection<'a>(&'a self, other: &'a PartitionSet) -> impl Iterator<Item = (&'a str, i32)> + 'a {
        self.iter().filter(move |&(t, p)| other.contains(t, p))
    }

    /// Whether the sets share no pair.
    pub fn is_disjoint(&self, other: &PartitionSet) -> bool {
        self.intersection(other).next().is_none()
    }
}

impl fmt::Debug for PartitionSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<'s> FromIterator<(&'s str, i32)> for PartitionSet {
    fn from_iter<I: IntoIterator<Item = (&'s str, i32)>>(iter: I) -> Self {
        let mut set = PartitionSet::new();
        set.extend(iter);
        set
    }
}

impl FromIterator<(String, i32)> for PartitionSet {
    fn from_iter<I: IntoIterator<Item = (String, i32)>>(iter: I) -> Self {
        let mut set = PartitionSet::new();
        for (t, p) in iter {
            set.insert(&t, p);
        }
        set
    }
}

impl<'s> Extend<(&'s str, i32)> for PartitionSet {
    fn extend<I: IntoIterator<Item = (&'s str, i32)>>(&mut self, iter: I) {
        for (t, p) in iter {
            self.insert(t, p);
        }
    }
}
