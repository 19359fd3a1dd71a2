//! The metadata cache `describe` and `watch` share: partition counts and racks of the topics seen
//! so far, asked of the cluster once per topic.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use kafka_consumer_protocol::assignor::{ClusterMetadata as TopicCounts, TopicInfo};
use kafka_consumer_protocol::client::{Client, ClientError, Deadline};

/// Partition counts (and racks) of the topics seen so far, shared by the describing tasks.
pub(super) struct Topics {
    pub(super) known: Mutex<HashMap<String, Option<TopicInfo>>>,
}

impl Topics {
    /// Metadata for `names`, asking the cluster only for those not seen before.
    pub(super) async fn get(
        &self,
        client: &Client,
        names: BTreeSet<String>,
        deadline: Deadline,
    ) -> Result<TopicCounts, ClientError> {
        let missing: Vec<String> = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            names.iter().filter(|n| !known.contains_key(*n)).cloned().collect()
        };
        if !missing.is_empty() {
            let refs: Vec<&str> = missing.iter().map(String::as_str).collect();
            let metadata = client.metadata(Some(&refs), deadline).await?;
            let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            for name in missing {
                let info = metadata.topic(&name).filter(|t| t.error_code == 0).map(|t| {
                    let racks: Vec<Vec<String>> = t
                        .partitions
                        .iter()
                        .map(|p| {
                            p.replicas.iter().filter_map(|r| metadata.broker(*r).and_then(|b| b.rack.clone())).collect()
                        })
                        .collect();
                    let any_rack = racks.iter().any(|r: &Vec<String>| !r.is_empty());
                    TopicInfo {
                        partitions: i32::try_from(t.partitions.len()).unwrap_or(i32::MAX),
                        partition_racks: if any_rack { racks } else { Vec::new() },
                    }
                });
                known.insert(name, info);
            }
        }
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let mut counts = TopicCounts::default();
        for name in names {
            if let Some(Some(info)) = known.get(&name) {
                counts.topics.insert(name, info.clone());
            }
        }
        Ok(counts)
    }
}

impl Topics {
    /// An empty cache.
    pub(super) fn new() -> Self {
        Topics { known: Mutex::new(HashMap::new()) }
    }
}
