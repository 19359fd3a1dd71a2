//! Partition bookkeeping shared by the classic and the KIP-848 inspections.

use std::collections::{BTreeMap, BTreeSet};

use crate::TopicPartitions;

/// `topic -> partitions`, sorted, without duplicates: the inspections' working map (the
/// crate's set of pairs that crosses modules is [`crate::PartitionSet`]).
pub(crate) type PartitionsByTopic = BTreeMap<String, BTreeSet<i32>>;

/// Groups `(topic, partition)` pairs per topic, topics and partitions ascending.
pub(crate) fn grouped<'a>(pairs: impl IntoIterator<Item = (&'a str, i32)>) -> Vec<TopicPartitions> {
    let mut set = PartitionsByTopic::new();
    for (topic, partition) in pairs {
        set.entry(topic.to_owned()).or_default().insert(partition);
    }
    to_groups(&set)
}

/// The map as `{topic, partitions}` groups.
pub(crate) fn to_groups(set: &PartitionsByTopic) -> Vec<TopicPartitions> {
    set.iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(t, p)| TopicPartitions::new(t.clone(), p.iter().copied().collect::<Vec<_>>()))
        .collect()
}

/// The partitions of `{topic, partitions}` groups by topic (a topic listed twice is merged).
pub(crate) fn by_topic(groups: &[TopicPartitions]) -> PartitionsByTopic {
    let mut set = PartitionsByTopic::new();
    for g in groups {
        set.entry(g.topic.clone()).or_default().extend(g.partitions.iter().copied());
    }
    set
}

/// `orders 0,2; audit 1` — short, for messages.
pub(crate) fn describe(groups: &[TopicPartitions]) -> String {
    groups
        .iter()
        .map(|g| {
            let ids: Vec<String> = g.partitions.iter().map(i32::to_string).collect();
            format!("{} {}", g.topic, ids.join(","))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Who holds each partition: for every `(topic, partition)`, the indexes of the members that
/// list it (a member listing it twice appears twice, so duplicates inside one payload show).
#[derive(Default)]
pub(crate) struct Holders<'a> {
    pub(crate) by_partition: BTreeMap<(&'a str, i32), Vec<usize>>,
}

impl<'a> Holders<'a> {
    pub(crate) fn add(&mut self, member: usize, topic: &'a str, partition: i32) {
        self.by_partition.entry((topic, partition)).or_default().push(member);
    }

    pub(crate) fn get<'s>(&'s self, topic: &'s str, partition: i32) -> &'s [usize] {
        self.by_partition.get(&(topic, partition)).map_or(&[], Vec::as_slice)
    }
}
