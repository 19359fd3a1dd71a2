//! Metadata: the cluster's brokers and topics.

use kafka_protocol::messages::{MetadataRequest, TopicName};

use super::{opt_text, text};
use crate::client::pool::lock;
use crate::client::{
    messages, Broker, Client, ClientError, ClusterMetadata, Deadline, PartitionMetadata, StrBytes, Target,
    TopicMetadata,
};

impl Client {
    /// Metadata: the brokers (with racks), and the named topics (`None`: all topics;
    /// `Some(&[])`: none) with their partitions and replicas.
    pub async fn metadata(&self, topics: Option<&[&str]>, deadline: Deadline) -> Result<ClusterMetadata, ClientError> {
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
        let brokers: Vec<Broker> = response
            .brokers
            .iter()
            .map(|b| Broker { node_id: b.node_id.0, host: text(&b.host), port: b.port as u16, rack: opt_text(&b.rack) })
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
        Ok(ClusterMetadata {
            cluster_id: opt_text(&response.cluster_id),
            controller_id: response.controller_id.0,
            brokers,
            topics: topics_out,
        })
    }
}
