//! Metadata: the cluster's brokers and topics.

use std::collections::BTreeMap;

use kafka_protocol::messages::{MetadataRequest, TopicName};

use super::{opt_text, text};
use crate::assignor::{ClusterMetadata, TopicInfo};
use crate::client::pool::lock;
use crate::client::{
    messages, Client, ClientError, Deadline, Metadata, Node, PartitionMetadata, StrBytes, Target, TopicMetadata,
};

impl Client {
    /// Metadata: the brokers (with racks), and the named topics (`None`: all topics;
    /// `Some(&[])`: none) with their partitions and replicas.
    pub async fn metadata(&self, topics: Option<&[&str]>, deadline: Deadline) -> Result<Metadata, ClientError> {
        let sent = self
            .call_retrying(&Target::AnyBroker, deadline, |version| {
                let mut request = MetadataRequest::default();
                request.topics = match topics {
                    None if version >= 1 => None,
                    None => Some(Vec::new()),
                    Some(names) => Some(
                        names
                            .iter()
                            .map(|name| {
                                messages::metadata_request::MetadataRequestTopic::default()
                                    .with_name(Some(TopicName(StrBytes::from_string(name.to_string()))))
                            })
                            .collect(),
                    ),
                };
                request.allow_auto_topic_creation = version < 4;
                request
            })
            .await?;
        let response = sent.response;
        if response.error_code != 0 {
            return Err(ClientError::from_code(response.error_code, format!("Metadata v{}", sent.version), None));
        }
        let brokers: Vec<Node> = response
            .brokers
            .iter()
            .map(|b| Node { node_id: b.node_id.0, host: text(&b.host), port: b.port as u16, rack: opt_text(&b.rack) })
            .collect();
        {
            let mut known = lock(&self.inner.brokers);
            for broker in &brokers {
                known.insert(broker.node_id, broker.clone());
            }
        }
        let mut topics_out: Vec<TopicMetadata> = response
            .topics
            .iter()
            // Metadata v0 reads an empty list as "all topics"; the caller asked for none.
            .filter(|_| !(topics == Some(&[]) && sent.version == 0))
            .map(|t| {
                let mut partitions: Vec<PartitionMetadata> = t
                    .partitions
                    .iter()
                    .map(|p| PartitionMetadata {
                        partition: p.partition_index,
                        error_code: p.error_code,
                        leader: p.leader_id.0,
                        replicas: p.replica_nodes.iter().map(|n| n.0).collect(),
                        isr: p.isr_nodes.iter().map(|n| n.0).collect(),
                        offline_replicas: p.offline_replicas.iter().map(|n| n.0).collect(),
                    })
                    .collect();
                partitions.sort_by_key(|p| p.partition);
                TopicMetadata {
                    name: t.name.as_ref().map(|n| text(&n.0)).unwrap_or_default(),
                    topic_id: *t.topic_id.as_bytes(),
                    error_code: t.error_code,
                    is_internal: t.is_internal,
                    partitions,
                }
            })
            .collect();
        topics_out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Metadata {
            cluster_id: opt_text(&response.cluster_id),
            controller_id: response.controller_id.0,
            brokers,
            topics: topics_out,
        })
    }
}

/// The assignors' view of the cluster: every topic Metadata answered without an error, except the
/// internal ones, with its partition count and, when any broker has a rack, each partition's
/// replica racks (by partition index, sorted, each once), as the live group member gives its
/// assignors (Java's rack-aware assignors read the same set of racks per partition).
///
/// ```
/// use kafka_consumer_protocol::assignor::ClusterMetadata;
/// # fn run(metadata: &kafka_consumer_protocol::client::Metadata) {
/// let for_assignors = ClusterMetadata::from(metadata);
/// # let _ = for_assignors;
/// # }
/// ```
impl From<&Metadata> for ClusterMetadata {
    fn from(cluster: &Metadata) -> Self {
        let racks: BTreeMap<i32, Option<&str>> =
            cluster.brokers.iter().map(|b| (b.node_id, b.rack.as_deref())).collect();
        let mut out = ClusterMetadata::default();
        for topic in cluster.topics.iter().filter(|t| t.error_code == 0 && !t.is_internal) {
            // Java's partition count is the number of partitions Metadata lists (bounded by the
            // response's size, unlike the ids in it).
            let count = i32::try_from(topic.partitions.len()).unwrap_or(i32::MAX);
            // Replica racks by partition index; none at all when no broker has a rack.
            let mut partition_racks: Vec<Vec<String>> = Vec::new();
            if racks.values().any(Option::is_some) {
                partition_racks = vec![Vec::new(); topic.partitions.len()];
                for p in &topic.partitions {
                    let Some(slot) = usize::try_from(p.partition).ok().and_then(|i| partition_racks.get_mut(i)) else {
                        continue;
                    };
                    let mut set: Vec<String> =
                        p.replicas.iter().filter_map(|r| racks.get(r).copied().flatten().map(str::to_string)).collect();
                    set.sort();
                    set.dedup();
                    *slot = set;
                }
            }
            out.topics.insert(topic.name.clone(), TopicInfo { partitions: count, partition_racks });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(node_id: i32, rack: Option<&str>) -> Node {
        Node { node_id, host: "localhost".into(), port: 9092, rack: rack.map(str::to_string) }
    }

    fn topic(name: &str, error_code: i16, is_internal: bool, replicas: &[&[i32]]) -> TopicMetadata {
        let partitions = replicas
            .iter()
            .enumerate()
            .map(|(i, r)| PartitionMetadata {
                partition: i as i32,
                error_code: 0,
                leader: r[0],
                replicas: r.to_vec(),
                isr: r.to_vec(),
                offline_replicas: Vec::new(),
            })
            .collect();
        TopicMetadata { name: name.into(), topic_id: [0; 16], error_code, is_internal, partitions }
    }

    #[test]
    fn the_assignors_see_sorted_replica_racks_and_no_internal_or_failed_topics() {
        let cluster = Metadata {
            cluster_id: None,
            controller_id: 1,
            brokers: vec![node(1, Some("b")), node(2, Some("a")), node(3, None)],
            topics: vec![
                topic("orders", 0, false, &[&[1, 2, 1], &[3], &[2]]),
                topic("__consumer_offsets", 0, true, &[&[1]]),
                topic("gone", 3, false, &[]),
            ],
        };
        let view = ClusterMetadata::from(&cluster);
        assert_eq!(view.topics.keys().collect::<Vec<_>>(), ["orders"]);
        let orders = &view.topics["orders"];
        assert_eq!(orders.partitions, 3);
        assert_eq!(orders.partition_racks, [vec!["a".to_string(), "b".to_string()], vec![], vec!["a".to_string()]]);
    }

    #[test]
    fn a_cluster_without_racks_gives_no_partition_racks() {
        let cluster = Metadata {
            cluster_id: None,
            controller_id: 1,
            brokers: vec![node(1, None)],
            topics: vec![topic("orders", 0, false, &[&[1], &[1]])],
        };
        let view = ClusterMetadata::from(&cluster);
        assert_eq!(view.topics["orders"].partitions, 2);
        assert!(view.topics["orders"].partition_racks.is_empty());
    }
}
