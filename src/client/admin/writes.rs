//! The calls that change a group: committing offsets as an administrator (OffsetCommit with
//! generation -1 and no member, as Java's `Admin.alterConsumerGroupOffsets` and
//! `kafka-consumer-groups.sh --reset-offsets` send it), deleting committed offsets
//! (OffsetDelete) and deleting groups (DeleteGroups).
//!
//! Each is sent to the group's coordinator. The coordinator's transient answers
//! (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, in the response or
//! in any of its partitions) find the coordinator again and send the request again until the
//! deadline, as Java's admin client does; every other error is the caller's, at its place (a
//! partition's or a group's). The broker refuses an administrator's commit and a group deletion
//! while the group has members, and an offset deletion for a topic the group's members
//! subscribe to; those refusals come back as errors too. Callers that want to refuse earlier
//! (`kcp` does) describe the group first.
//!
//! The responses are checked against the bytes present before they are decoded (`guard`).

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
use kafka_protocol::messages::offset_delete_request::{OffsetDeleteRequestPartition, OffsetDeleteRequestTopic};
use kafka_protocol::messages::{DeleteGroupsRequest, GroupId, OffsetCommitRequest, OffsetDeleteRequest, TopicName};

use super::text;
use crate::client::error::is_retriable_group_code;
use crate::client::send::Backoff;
use crate::client::{Client, ClientError, Deadline, Node, StrBytes, Target};
use crate::TopicPartitions;

/// The generation an administrator's OffsetCommit carries: no generation (Java's
/// `JoinGroupRequest.UNKNOWN_GENERATION_ID`), with an empty member id. The coordinator accepts
/// it only for a group without members.
pub const ADMIN_GENERATION_ID: i32 = -1;

/// One offset to commit ([`Client::commit_offsets_as_admin`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetToCommit {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The offset: the next record the group will read.
    pub offset: i64,
    /// The leader epoch to commit with it (OffsetCommit v6+); `None` sends -1, as Java's tool
    /// does when it resets.
    pub leader_epoch: Option<i32>,
    /// The commit's metadata string (Java's tool commits an empty one).
    pub metadata: String,
}

impl OffsetToCommit {
    /// `offset` for `topic`-`partition`, without a leader epoch and with empty metadata.
    ///
    /// ```
    /// use kafka_consumer_protocol::client::OffsetToCommit;
    /// let o = OffsetToCommit::new("orders", 3, 42);
    /// assert_eq!((o.topic.as_str(), o.partition, o.offset, o.leader_epoch), ("orders", 3, 42, None));
    /// ```
    pub fn new(topic: impl Into<String>, partition: i32, offset: i64) -> Self {
        OffsetToCommit { topic: topic.into(), partition, offset, leader_epoch: None, metadata: String::new() }
    }
}

/// What the coordinator answered for one partition of a write.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionWrite {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// `Ok` when the partition's write was applied; else the partition's error
    /// (GROUP_SUBSCRIBED_TO_TOPIC, UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE, ...).
    pub result: Result<(), ClientError>,
}

/// A (topic, partition) key.
type Tp = (String, i32);

impl Client {
    /// Commits `offsets` for `group` as an administrator: OffsetCommit with generation
    /// [`ADMIN_GENERATION_ID`], an empty member id and no instance id, at the highest version both
    /// sides support. The coordinator refuses it (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION for a
    /// classic group, STALE_MEMBER_EPOCH or UNKNOWN_MEMBER_ID for a KIP-848 group,
    /// REBALANCE_IN_PROGRESS while it rebalances) unless the group has no members; a group that
    /// does not exist is created with these offsets.
    ///
    /// One answer per distinct partition, in (topic, partition) order; `Err` for the whole call
    /// only when no answer came (the coordinator could not be reached before the deadline, the
    /// broker does not support OffsetCommit v2+).
    ///
    /// ```no_run
    /// use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, OffsetToCommit};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Client::new(ClientConfig::new(["127.0.0.1:9092"])?)?;
    /// let deadline = Deadline::after(std::time::Duration::from_secs(30));
    /// for p in client.commit_offsets_as_admin("orders-app", &[OffsetToCommit::new("orders", 0, 0)], deadline).await? {
    ///     println!("{}-{}: {:?}", p.topic, p.partition, p.result);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn commit_offsets_as_admin(
        &self,
        group: &str,
        offsets: &[OffsetToCommit],
        deadline: Deadline,
    ) -> Result<Vec<PartitionWrite>, ClientError> {
        // The last offset given for a partition wins, as a map would have it.
        let mut wanted: BTreeMap<Tp, &OffsetToCommit> = BTreeMap::new();
        for o in offsets {
            wanted.insert((o.topic.clone(), o.partition), o);
        }
        let mut answers: BTreeMap<Tp, Result<(), ClientError>> = BTreeMap::new();
        let mut todo: Vec<&OffsetToCommit> = wanted.values().copied().collect();
        let target = Target::Coordinator(group.to_string());
        let mut backoff = Backoff::new(&self.inner.config);
        while !todo.is_empty() {
            let mut by_topic: BTreeMap<&str, Vec<&OffsetToCommit>> = BTreeMap::new();
            for o in &todo {
                by_topic.entry(o.topic.as_str()).or_default().push(o);
            }
            let sent = self
                .call_retrying(&target, deadline, |_version| {
                    OffsetCommitRequest::default()
                        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
                        .with_generation_id_or_member_epoch(ADMIN_GENERATION_ID)
                        .with_member_id(StrBytes::default())
                        .with_group_instance_id(None)
                        // v2-v4: -1 keeps the broker's offsets.retention.minutes.
                        .with_retention_time_ms(-1)
                        .with_topics(
                            by_topic
                                .iter()
                                .map(|(topic, partitions)| {
                                    OffsetCommitRequestTopic::default()
                                        .with_name(TopicName(StrBytes::from_string((*topic).to_string())))
                                        .with_partitions(
                                            partitions
                                                .iter()
                                                .map(|o| {
                                                    OffsetCommitRequestPartition::default()
                                                        .with_partition_index(o.partition)
                                                        .with_committed_offset(o.offset)
                                                        .with_committed_leader_epoch(o.leader_epoch.unwrap_or(-1))
                                                        .with_committed_metadata(Some(StrBytes::from_string(
                                                            o.metadata.clone(),
                                                        )))
                                                })
                                                .collect(),
                                        )
                                })
                                .collect(),
                        )
                })
                .await;
            let sent = match sent {
                Ok(sent) => sent,
                Err(e) if answers.is_empty() => return Err(e),
                Err(e) => {
                    for o in todo.drain(..) {
                        answers.insert((o.topic.clone(), o.partition), Err(e.clone()));
                    }
                    break;
                }
            };
            let context = |topic: &str, partition: i32| {
                format!("OffsetCommit v{} for group '{group}', {topic}-{partition}", sent.version)
            };
            let mut retry: Vec<&OffsetToCommit> = Vec::new();
            let mut last = None;
            for topic in &sent.response.topics {
                let name = text(&topic.name.0);
                for p in &topic.partitions {
                    let key = (name.clone(), p.partition_index);
                    let Some(asked) = todo.iter().find(|o| o.topic == key.0 && o.partition == key.1) else {
                        continue;
                    };
                    if is_retriable_group_code(p.error_code) {
                        last = Some(ClientError::from_code(p.error_code, context(&key.0, key.1), None));
                        retry.push(asked);
                    } else if p.error_code != 0 {
                        answers.insert(
                            key.clone(),
                            Err(ClientError::from_code(p.error_code, context(&key.0, key.1), None)),
                        );
                    } else {
                        answers.insert(key, Ok(()));
                    }
                }
            }
            // A partition the coordinator did not answer for is reported, not assumed committed.
            for o in &todo {
                let key = (o.topic.clone(), o.partition);
                if !answers.contains_key(&key)
                    && !retry.iter().any(|r| r.topic == o.topic && r.partition == o.partition)
                {
                    answers.insert(
                        key,
                        Err(ClientError::protocol(format!(
                            "{}: the coordinator's answer does not name this partition",
                            context(&o.topic, o.partition)
                        ))),
                    );
                }
            }
            todo = retry;
            if let Some(last) = last {
                self.forget_coordinator(group);
                if !backoff.wait(deadline).await {
                    let error = backoff.give_up(last);
                    for o in todo.drain(..) {
                        answers.insert((o.topic.clone(), o.partition), Err(error.clone()));
                    }
                }
            }
        }
        Ok(answers
            .into_iter()
            .map(|((topic, partition), result)| PartitionWrite { topic, partition, result })
            .collect())
    }

    /// Deletes `group`'s committed offsets of `partitions` (OffsetDelete, KIP-496). The
    /// coordinator refuses a group that does not exist (GROUP_ID_NOT_FOUND: `not_found`) as a
    /// whole, and per partition a topic its members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC).
    /// Deleting an offset the group has not committed succeeds.
    ///
    /// One answer per distinct partition, in (topic, partition) order; `Err` for the whole call
    /// for a group-level error or when no answer came.
    pub async fn delete_committed_offsets(
        &self,
        group: &str,
        partitions: &[TopicPartitions],
        deadline: Deadline,
    ) -> Result<Vec<PartitionWrite>, ClientError> {
        let wanted: BTreeSet<Tp> =
            partitions.iter().flat_map(|g| g.partitions.iter().map(|&p| (g.topic.clone(), p))).collect();
        let target = Target::Coordinator(group.to_string());
        let mut backoff = Backoff::new(&self.inner.config);
        loop {
            let sent = self
                .call_retrying(&target, deadline, |_version| {
                    let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
                    for (topic, partition) in &wanted {
                        topics.entry(topic.as_str()).or_default().push(*partition);
                    }
                    OffsetDeleteRequest::default()
                        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
                        .with_topics(
                            topics
                                .into_iter()
                                .map(|(topic, partitions)| {
                                    OffsetDeleteRequestTopic::default()
                                        .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                                        .with_partitions(
                                            partitions
                                                .into_iter()
                                                .map(|p| {
                                                    OffsetDeleteRequestPartition::default().with_partition_index(p)
                                                })
                                                .collect(),
                                        )
                                })
                                .collect(),
                        )
                })
                .await?;
            let version = sent.version;
            let response = sent.response;
            let code = response.error_code;
            let group_context = format!("OffsetDelete v{version} for group '{group}'");
            let retriable_partition = response
                .topics
                .iter()
                .flat_map(|t| t.partitions.iter())
                .map(|p| p.error_code)
                .find(|&c| is_retriable_group_code(c));
            if let Some(retriable) = Some(code).filter(|&c| is_retriable_group_code(c)).or(retriable_partition) {
                self.forget_coordinator(group);
                let e = ClientError::from_code(retriable, &group_context, None);
                if !backoff.wait(deadline).await {
                    return Err(backoff.give_up(e));
                }
                continue;
            }
            if code != 0 {
                return Err(ClientError::from_code(code, group_context, None));
            }
            let mut answers: BTreeMap<Tp, Result<(), ClientError>> = BTreeMap::new();
            for topic in &response.topics {
                let name = text(&topic.name.0);
                for p in &topic.partitions {
                    let key = (name.clone(), p.partition_index);
                    if !wanted.contains(&key) {
                        continue;
                    }
                    let result = if p.error_code == 0 {
                        Ok(())
                    } else {
                        Err(ClientError::from_code(p.error_code, format!("{group_context}, {}-{}", key.0, key.1), None))
                    };
                    answers.insert(key, result);
                }
            }
            return Ok(wanted
                .into_iter()
                .map(|(topic, partition)| {
                    let result = answers.remove(&(topic.clone(), partition)).unwrap_or_else(|| {
                        Err(ClientError::protocol(format!(
                            "{group_context}, {topic}-{partition}: the coordinator's answer does not name this partition"
                        )))
                    });
                    PartitionWrite { topic, partition, result }
                })
                .collect());
        }
    }

    /// Deletes groups (DeleteGroups), each at its coordinator. The coordinator refuses a group
    /// with members (NON_EMPTY_GROUP) and answers GROUP_ID_NOT_FOUND (`not_found`) for one that
    /// does not exist. One result per distinct group, in the order asked; `Err` for the whole
    /// call only when the coordinators could not be found.
    ///
    /// A coordinator that moved or was unreachable is found again and asked again until the
    /// deadline; if the connection was lost after the broker had deleted the group, the second
    /// answer is GROUP_ID_NOT_FOUND.
    pub async fn delete_groups<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<(), ClientError>)>, ClientError> {
        let names: Vec<String> = groups.iter().map(|g| g.as_ref().to_string()).collect();
        let results = self
            .per_coordinator(names.clone(), deadline, |client, broker, batch| async move {
                client.delete_groups_on(broker, batch, deadline).await
            })
            .await?;
        let mut unique: Vec<String> = Vec::new();
        for name in names {
            if !unique.contains(&name) {
                unique.push(name);
            }
        }
        Ok(unique.into_iter().zip(results).collect())
    }

    async fn delete_groups_on(
        &self,
        broker: Node,
        batch: Vec<String>,
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<(), ClientError>)>, ClientError> {
        let sent = self
            .call_retrying(&Target::Node(broker.node_id), deadline, |_version| {
                DeleteGroupsRequest::default()
                    .with_groups_names(batch.iter().map(|g| GroupId(StrBytes::from_string(g.clone()))).collect())
            })
            .await?;
        let version = sent.version;
        let mut answers = Vec::new();
        for result in &sent.response.results {
            let group_id = text(&result.group_id.0);
            if !batch.contains(&group_id) {
                continue;
            }
            let outcome = match result.error_code {
                0 => Ok(()),
                code => Err(ClientError::from_code(
                    code,
                    format!("DeleteGroups v{version} for group '{group_id}' on {}", broker.label()),
                    None,
                )),
            };
            answers.push((group_id, outcome));
        }
        Ok(answers)
    }
}
