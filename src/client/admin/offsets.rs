//! Committed offsets (OffsetFetch) and log offsets (ListOffsets), asked in the fewest round
//! trips: OffsetFetch for every group of a coordinator in one request where the broker batches
//! groups (v8+, KIP-709), one request per group below; ListOffsets once per partition leader
//! and offset kind for all the partitions asked, whatever group they belong to.
//!
//! Gaps are answers too: a partition whose leader is unknown, a per-partition error, a group
//! the caller may not read, a group deleted meanwhile each come back as an `Err` at their own
//! place, and the rest of the answer is still given. Partition-level errors that mean the
//! metadata was stale (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE,
//! FENCED/UNKNOWN_LEADER_EPOCH, a lost connection to a leader) refresh the metadata once and are
//! asked again of the new leader; what still fails after that is reported.
//!
//! Both responses are checked against the bytes present before `kafka-protocol` decodes them
//! (see `guard`), so no count a broker sent sizes an allocation; offsets below -1 are refused
//! per partition as `protocol` errors.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestGroup;
use kafka_protocol::messages::{BrokerId, GroupId, ListOffsetsRequest, OffsetFetchRequest, TopicName};
use kafka_protocol::protocol::{Message, Request, StrBytes};

use super::{opt_text, text};
use crate::client::send::is_connection_error;
use crate::client::{
    Client, ClientError, Deadline, ErrorKind, Metadata, Node, PartitionMetadata, Target, TopicMetadata,
};
use crate::TopicPartitions;

/// The first OffsetFetch version that carries several groups in one request (KIP-709).
pub const OFFSET_FETCH_BATCHED_VERSION: i16 = 8;

/// The first OffsetFetch version that can ask for all of a group's offsets (a null topic list).
const OFFSET_FETCH_ALL_TOPICS_VERSION: i16 = 2;

/// One partition's committed offset, as OffsetFetch answers it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The committed offset; `None` when the group has none for this partition (-1 on the wire).
    pub offset: Option<i64>,
    /// The leader epoch committed with it (OffsetFetch v5+); `None` when unknown (-1).
    pub leader_epoch: Option<i32>,
    /// The commit's metadata string (`None` when null; often empty).
    pub metadata: Option<String>,
    /// The partition's error, when the broker answered one for it (UNSTABLE_OFFSET_COMMIT,
    /// TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION) or the offset it sent is not an
    /// offset (below -1). `offset` is `None` then.
    pub error: Option<ClientError>,
}

/// A group's committed offsets ([`Client::fetch_committed_offsets`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupOffsets {
    /// The group id.
    pub group_id: String,
    /// Every partition the group has committed for, in (topic, partition) order. A group that
    /// does not exist (or was deleted) has none: Kafka answers it like an empty group.
    pub offsets: Vec<CommittedOffset>,
    /// The coordinator that answered.
    pub coordinator: Node,
    /// The OffsetFetch version used.
    pub version: i16,
}

impl GroupOffsets {
    /// The committed offset of one partition, if the group has an entry for it.
    pub fn get(&self, topic: &str, partition: i32) -> Option<&CommittedOffset> {
        self.offsets
            .binary_search_by(|o| (o.topic.as_str(), o.partition).cmp(&(topic, partition)))
            .ok()
            .map(|i| &self.offsets[i])
    }
}

/// Which offset of a partition ListOffsets asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OffsetSpec {
    /// The log-start offset (timestamp -2).
    Earliest,
    /// The log-end offset (timestamp -1): the high watermark, or with
    /// [`IsolationLevel::ReadCommitted`] the last stable offset.
    Latest,
    /// The offset of the record with the largest timestamp (-3; ListOffsets v7+).
    MaxTimestamp,
    /// The first offset whose record's timestamp is at or after this many milliseconds since
    /// the epoch (`None` in the answer when there is no such record).
    Timestamp(i64),
}

impl OffsetSpec {
    /// The timestamp ListOffsets carries for this spec.
    pub fn wire_timestamp(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
            OffsetSpec::MaxTimestamp => -3,
            OffsetSpec::Timestamp(t) => t,
        }
    }

    /// The lowest ListOffsets version that serves this spec.
    fn min_version(self) -> i16 {
        match self {
            OffsetSpec::MaxTimestamp => 7,
            _ => 0,
        }
    }
}

/// The isolation level of ListOffsets: which end of the log counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IsolationLevel {
    /// The high watermark (Kafka's default, and `kafka-consumer-groups.sh`'s).
    #[default]
    ReadUncommitted,
    /// The last stable offset: below any open transaction (ListOffsets v2+).
    ReadCommitted,
}

impl IsolationLevel {
    pub(super) fn wire(self) -> i8 {
        match self {
            IsolationLevel::ReadUncommitted => 0,
            IsolationLevel::ReadCommitted => 1,
        }
    }
}

/// What ListOffsets answered for one partition.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedOffset {
    /// The offset; `None` for a timestamp with no record at or after it.
    pub offset: Option<i64>,
    /// The record's timestamp (by-timestamp lookups; `None` when -1).
    pub timestamp: Option<i64>,
    /// The leader epoch of the offset (ListOffsets v4+; `None` when -1).
    pub leader_epoch: Option<i32>,
    /// The leader that answered.
    pub leader: i32,
}

/// One partition of [`Client::list_offsets`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionListing {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The answer, or why there is none (no leader, unknown partition, the leader's error).
    pub result: Result<ListedOffset, ClientError>,
}

/// A partition's log-start and log-end offsets ([`Client::log_offsets`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionLogOffsets {
    /// The partition.
    pub partition: i32,
    /// The leader in the metadata (`None`: no leader).
    pub leader: Option<i32>,
    /// The log-start offset.
    pub log_start_offset: Result<i64, ClientError>,
    /// The log-end offset: the high watermark, or the last stable offset with
    /// [`IsolationLevel::ReadCommitted`].
    pub log_end_offset: Result<i64, ClientError>,
}

/// One topic of [`Client::log_offsets`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicLogOffsets {
    /// The topic.
    pub topic: String,
    /// Its partitions in order, or the topic's error (UNKNOWN_TOPIC_OR_PARTITION,
    /// TOPIC_AUTHORIZATION_FAILED).
    pub partitions: Result<Vec<PartitionLogOffsets>, ClientError>,
}

impl TopicLogOffsets {
    /// One partition's offsets.
    pub fn partition(&self, partition: i32) -> Option<&PartitionLogOffsets> {
        self.partitions.as_ref().ok()?.iter().find(|p| p.partition == partition)
    }
}

/// Partition-level ListOffsets errors that mean the leader in our metadata is stale or not
/// ready: NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE,
/// REPLICA_NOT_AVAILABLE, REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR, FENCED_LEADER_EPOCH,
/// UNKNOWN_LEADER_EPOCH, OFFSET_NOT_AVAILABLE (a new leader catching up).
pub(super) fn is_stale_leader_code(code: i16) -> bool {
    matches!(code, 3 | 5 | 6 | 7 | 9 | 56 | 74 | 75 | 78)
}

/// A (topic, partition) key.
type Tp = (String, i32);

impl Client {
    /// The committed offsets of every partition of each group (OffsetFetch with all topics),
    /// each group asked of its coordinator: coordinators in parallel, all of one coordinator's
    /// groups in one request on brokers with OffsetFetch v8+, one request per group (pipelined
    /// on the one connection) below. One result per distinct group, in the order asked; a
    /// group's error (GROUP_AUTHORIZATION_FAILED, GROUP_ID_NOT_FOUND) is its own, retriable
    /// coordinator errors are retried until the deadline.
    pub async fn fetch_committed_offsets<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<Result<GroupOffsets, ClientError>>, ClientError> {
        let names: Vec<String> = groups.iter().map(|g| g.as_ref().to_string()).collect();
        self.per_coordinator(names, deadline, |client, broker, batch| async move {
            client.offsets_on(broker, batch, deadline).await
        })
        .await
    }

    async fn offsets_on(
        &self,
        broker: Node,
        batch: Vec<String>,
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<GroupOffsets, ClientError>)>, ClientError> {
        let target = Target::Node(broker.node_id);
        let max = match self.api_versions(&target, OffsetFetchRequest::KEY, deadline).await? {
            Some((_, max)) => max.min(OffsetFetchRequest::VERSIONS.max),
            None => {
                let e = ClientError::protocol(format!("{} does not support OffsetFetch", broker.label()));
                return Ok(batch.into_iter().map(|g| (g, Err(e.clone()))).collect());
            }
        };
        if max < OFFSET_FETCH_ALL_TOPICS_VERSION {
            let e = ClientError::protocol(format!(
                "{} supports OffsetFetch up to v{max}, which cannot list all of a group's offsets (v2+)",
                broker.label()
            ));
            return Ok(batch.into_iter().map(|g| (g, Err(e.clone()))).collect());
        }
        if max >= OFFSET_FETCH_BATCHED_VERSION {
            return self.offsets_batched(&broker, &batch, deadline).await;
        }
        // One request per group; the requests are pipelined on the coordinator's connection.
        let mut tasks = tokio::task::JoinSet::new();
        for (index, group) in batch.into_iter().enumerate() {
            let client = self.clone();
            let broker = broker.clone();
            tasks.spawn(async move {
                let answer = client.offsets_single(&broker, &group, deadline).await;
                (index, group, answer)
            });
        }
        let mut answers = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            let (index, group, answer) =
                joined.map_err(|e| ClientError::protocol(format!("an OffsetFetch task failed: {e}")))?;
            answers.push((index, group, answer));
        }
        answers.sort_by_key(|(index, _, _)| *index);
        Ok(answers.into_iter().map(|(_, group, answer)| (group, answer)).collect())
    }

    async fn offsets_batched(
        &self,
        broker: &Node,
        batch: &[String],
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<GroupOffsets, ClientError>)>, ClientError> {
        let sent = self
            .call_retrying(&Target::Node(broker.node_id), deadline, |_| {
                // The top-level topics stay at their default: v8+ carries them per group.
                OffsetFetchRequest::default().with_groups(
                    batch
                        .iter()
                        .map(|g| {
                            OffsetFetchRequestGroup::default()
                                .with_group_id(GroupId(StrBytes::from_string(g.clone())))
                                .with_topics(None)
                        })
                        .collect(),
                )
            })
            .await?;
        let version = sent.version;
        let asked: HashSet<&str> = batch.iter().map(String::as_str).collect();
        let mut answers = Vec::new();
        for group in sent.response.groups {
            let group_id = text(&group.group_id.0);
            if !asked.contains(group_id.as_str()) {
                continue;
            }
            let context = format!("OffsetFetch v{version} for group '{group_id}' on {}", broker.label());
            let result = if group.error_code != 0 {
                Err(ClientError::from_code(group.error_code, &context, None))
            } else {
                let mut offsets = Vec::new();
                for topic in &group.topics {
                    let name = text(&topic.name.0);
                    for p in &topic.partitions {
                        offsets.push(committed_offset(
                            &name,
                            p.partition_index,
                            p.committed_offset,
                            p.committed_leader_epoch,
                            opt_text(&p.metadata),
                            p.error_code,
                            &context,
                        ));
                    }
                }
                Ok(group_offsets(group_id.clone(), offsets, broker, version))
            };
            answers.push((group_id, result));
        }
        Ok(answers)
    }

    async fn offsets_single(
        &self,
        broker: &Node,
        group: &str,
        deadline: Deadline,
    ) -> Result<GroupOffsets, ClientError> {
        let sent = self
            .call_retrying(&Target::Node(broker.node_id), deadline, |_| {
                OffsetFetchRequest::default()
                    .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
                    .with_topics(None)
            })
            .await?;
        let version = sent.version;
        let context = format!("OffsetFetch v{version} for group '{group}' on {}", broker.label());
        let response = sent.response;
        if response.error_code != 0 {
            return Err(ClientError::from_code(response.error_code, &context, None));
        }
        let mut offsets = Vec::new();
        for topic in &response.topics {
            let name = text(&topic.name.0);
            for p in &topic.partitions {
                offsets.push(committed_offset(
                    &name,
                    p.partition_index,
                    p.committed_offset,
                    p.committed_leader_epoch,
                    opt_text(&p.metadata),
                    p.error_code,
                    &context,
                ));
            }
        }
        Ok(group_offsets(group.to_string(), offsets, broker, version))
    }

    /// ListOffsets for `partitions` with one `spec`: one request per partition leader (leaders
    /// in parallel), after one Metadata for their topics. One answer per distinct partition, in
    /// (topic, partition) order; a partition of an unknown topic, without a leader, or whose
    /// leader answered an error is an `Err` at its place. Stale-leader errors refresh the
    /// metadata once and ask the new leader.
    pub async fn list_offsets(
        &self,
        partitions: &[TopicPartitions],
        spec: OffsetSpec,
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<Vec<PartitionListing>, ClientError> {
        let wanted: BTreeSet<Tp> =
            partitions.iter().flat_map(|g| g.partitions.iter().map(|&p| (g.topic.clone(), p))).collect();
        let topics: Vec<&str> = wanted.iter().map(|(t, _)| t.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
        let metadata = self.metadata(Some(&topics), deadline).await?;
        let mut answers = self.list_offsets_with(metadata, &wanted, &[spec], isolation, deadline).await?;
        Ok(wanted
            .into_iter()
            .map(|tp| {
                let result = answers.get_mut(&tp).and_then(|specs| specs.pop()).unwrap_or_else(|| {
                    Err(ClientError::protocol(format!("no ListOffsets answer for {}-{}", tp.0, tp.1)))
                });
                PartitionListing { topic: tp.0, partition: tp.1, result }
            })
            .collect())
    }

    /// The log-start and log-end offsets of every partition of `topics`: one Metadata for the
    /// topics, then ListOffsets earliest and latest (`isolation`: high watermark or last stable
    /// offset) once per partition leader, both sent together. Topics in name order; a topic that
    /// does not exist or may not be described is an `Err` in its place.
    pub async fn log_offsets<S: AsRef<str>>(
        &self,
        topics: &[S],
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<Vec<TopicLogOffsets>, ClientError> {
        let names: BTreeSet<&str> = topics.iter().map(|t| t.as_ref()).collect();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let asked: Vec<&str> = names.iter().copied().collect();
        let metadata = self.metadata(Some(&asked), deadline).await?;
        self.log_offsets_with(metadata, names, isolation, deadline).await
    }

    /// [`log_offsets`](Self::log_offsets) with the topics' `metadata` already read (the
    /// collector reads it once per collection for the groups' partition counts and the
    /// leaders both).
    pub(in crate::client) async fn log_offsets_with(
        &self,
        metadata: Metadata,
        names: BTreeSet<&str>,
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<Vec<TopicLogOffsets>, ClientError> {
        let mut wanted = BTreeSet::new();
        for topic in &metadata.topics {
            if topic.error_code == 0 && names.contains(topic.name.as_str()) {
                wanted.extend(topic.partitions.iter().map(|p| (topic.name.clone(), p.partition)));
            }
        }
        let specs = [OffsetSpec::Earliest, OffsetSpec::Latest];
        let mut answers = self.list_offsets_with(metadata.clone(), &wanted, &specs, isolation, deadline).await?;
        // By name: `Metadata::topic` is a linear search, once per topic it is quadratic.
        let by_name: HashMap<&str, &TopicMetadata> = metadata.topics.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut out = Vec::new();
        for name in names {
            let partitions = match by_name.get(name).copied() {
                None => Err(ClientError::from_code(3, format!("Metadata for topic '{name}'"), None)),
                Some(t) if t.error_code != 0 => {
                    Err(ClientError::from_code(t.error_code, format!("Metadata for topic '{name}'"), None))
                }
                Some(t) => Ok(t
                    .partitions
                    .iter()
                    .map(|p| {
                        let missing =
                            || Err(ClientError::protocol(format!("no ListOffsets answer for {name}-{}", p.partition)));
                        let mut specs =
                            answers.remove(&(name.to_string(), p.partition)).unwrap_or_default().into_iter();
                        let offset = |r: Option<Result<ListedOffset, ClientError>>, what: &str| match r {
                            Some(Ok(ListedOffset { offset: Some(o), .. })) => Ok(o),
                            Some(Ok(_)) => Err(ClientError::protocol(format!(
                                "ListOffsets gave no {what} offset for {name}-{}",
                                p.partition
                            ))),
                            Some(Err(e)) => Err(e),
                            None => missing(),
                        };
                        let start = offset(specs.next(), "earliest");
                        let end = offset(specs.next(), "latest");
                        PartitionLogOffsets {
                            partition: p.partition,
                            leader: (p.leader >= 0).then_some(p.leader),
                            log_start_offset: start,
                            log_end_offset: end,
                        }
                    })
                    .collect()),
            };
            out.push(TopicLogOffsets { topic: name.to_string(), partitions });
        }
        Ok(out)
    }

    /// ListOffsets for `wanted` partitions and each of `specs`, given fresh `metadata` for their
    /// topics: one request per (leader, spec), all in parallel; partitions with stale-leader
    /// errors are asked once more after a metadata refresh. Each partition's answers come in
    /// the order of `specs`.
    async fn list_offsets_with(
        &self,
        mut metadata: Metadata,
        wanted: &BTreeSet<Tp>,
        specs: &[OffsetSpec],
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<HashMap<Tp, Vec<Result<ListedOffset, ClientError>>>, ClientError> {
        let mut slots: HashMap<Tp, Vec<Option<Result<ListedOffset, ClientError>>>> =
            wanted.iter().map(|tp| (tp.clone(), vec![None; specs.len()])).collect();
        // (partition, spec index) pairs still to ask.
        let mut todo: Vec<(Tp, usize)> =
            wanted.iter().flat_map(|tp| (0..specs.len()).map(move |i| (tp.clone(), i))).collect();
        for attempt in 0..2 {
            let last_attempt = attempt == 1;
            let mut retry: Vec<(Tp, usize)> = Vec::new();
            let mut requests: BTreeMap<(i32, usize), Vec<Tp>> = BTreeMap::new();
            // Topics and partitions by name and index: `Metadata::topic` and a scan of the
            // partitions, once per partition, grew with topics x partitions (issue 35's 100,000
            // partitions).
            let by_name: HashMap<&str, (&TopicMetadata, HashMap<i32, &PartitionMetadata>)> = metadata
                .topics
                .iter()
                .map(|t| (t.name.as_str(), (t, t.partitions.iter().map(|p| (p.partition, p)).collect())))
                .collect();
            for (tp, spec) in todo.drain(..) {
                let topic = by_name.get(tp.0.as_str());
                let partition =
                    topic.filter(|(t, _)| t.error_code == 0).and_then(|(_, partitions)| partitions.get(&tp.1).copied());
                let gap = match partition {
                    None => {
                        let code = topic.map(|(t, _)| t.error_code).filter(|&c| c != 0).unwrap_or(3);
                        Some(ClientError::from_code(code, format!("Metadata for {}-{}", tp.0, tp.1), None))
                    }
                    Some(p) if p.leader < 0 => {
                        Some(ClientError::from_code(5, format!("partition {}-{} has no leader", tp.0, tp.1), None))
                    }
                    Some(p) => {
                        requests.entry((p.leader, spec)).or_default().push(tp.clone());
                        None
                    }
                };
                if let Some(e) = gap {
                    if !last_attempt && e.error_code().is_some_and(is_stale_leader_code) {
                        retry.push((tp, spec));
                    } else {
                        if let Some(s) = slots.get_mut(&tp) {
                            s[spec] = Some(Err(e));
                        }
                    }
                }
            }
            let mut tasks = tokio::task::JoinSet::new();
            for ((leader, spec_index), partitions) in requests {
                let client = self.clone();
                let spec = specs[spec_index];
                tasks.spawn(async move {
                    let answer = client.list_offsets_on(leader, &partitions, spec, isolation, deadline).await;
                    (spec_index, partitions, answer)
                });
            }
            while let Some(joined) = tasks.join_next().await {
                let (spec, partitions, answer) =
                    joined.map_err(|e| ClientError::protocol(format!("a ListOffsets task failed: {e}")))?;
                match answer {
                    Ok(answered) => {
                        for (tp, result) in answered {
                            let stale = matches!(&result, Err(e) if e.error_code().is_some_and(is_stale_leader_code));
                            if stale && !last_attempt {
                                retry.push((tp, spec));
                            } else if let Some(s) = slots.get_mut(&tp) {
                                s[spec] = Some(result);
                            }
                        }
                    }
                    // The whole request failed: a leader that went away is a stale leader too.
                    Err(e) => {
                        let again = !last_attempt && is_connection_error(&e) && !deadline.is_expired();
                        for tp in partitions {
                            if again {
                                retry.push((tp, spec));
                            } else if let Some(s) = slots.get_mut(&tp) {
                                s[spec] = Some(Err(e.clone()));
                            }
                        }
                    }
                }
            }
            if retry.is_empty() {
                break;
            }
            let topics: Vec<&str> =
                retry.iter().map(|((t, _), _)| t.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
            metadata = self.metadata(Some(&topics), deadline).await?;
            todo = retry;
        }
        Ok(slots
            .into_iter()
            .map(|(tp, answers)| {
                let answers = answers
                    .into_iter()
                    .map(|a| {
                        a.unwrap_or_else(|| {
                            Err(ClientError::protocol(format!("no ListOffsets answer for {}-{}", tp.0, tp.1)))
                        })
                    })
                    .collect();
                (tp, answers)
            })
            .collect())
    }

    /// One ListOffsets request to `leader` for `partitions` (sorted, distinct) and one spec.
    /// `Err` when the request as a whole failed; otherwise one answer per partition asked.
    async fn list_offsets_on(
        &self,
        leader: i32,
        partitions: &[Tp],
        spec: OffsetSpec,
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<Vec<(Tp, Result<ListedOffset, ClientError>)>, ClientError> {
        let target = Target::Node(leader);
        let (min, max) = self
            .api_versions(&target, ListOffsetsRequest::KEY, deadline)
            .await?
            .ok_or_else(|| ClientError::protocol(format!("broker {leader} does not support ListOffsets")))?;
        let max = max.min(ListOffsetsRequest::VERSIONS.max);
        let needed = spec.min_version().max(if isolation == IsolationLevel::ReadCommitted { 2 } else { 0 });
        if max < needed || max < min {
            return Err(ClientError::protocol(format!(
                "broker {leader} supports ListOffsets up to v{max}; {spec:?} with {isolation:?} needs v{needed}"
            )));
        }
        let timeout_ms = i32::try_from(self.config().request_timeout.as_millis()).unwrap_or(i32::MAX);
        let sent = self
            .call_retrying(&target, deadline, |_| {
                let mut topics: Vec<ListOffsetsTopic> = Vec::new();
                for (topic, partition) in partitions {
                    let entry = ListOffsetsPartition::default()
                        .with_partition_index(*partition)
                        .with_timestamp(spec.wire_timestamp());
                    match topics.last_mut() {
                        Some(last) if last.name.0.as_str() == topic => last.partitions.push(entry),
                        _ => topics.push(
                            ListOffsetsTopic::default()
                                .with_name(TopicName(StrBytes::from_string(topic.clone())))
                                .with_partitions(vec![entry]),
                        ),
                    }
                }
                ListOffsetsRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_isolation_level(isolation.wire())
                    .with_topics(topics)
                    .with_timeout_ms(timeout_ms)
            })
            .await?;
        let version = sent.version;
        let label = sent.broker.label();
        let mut answered: HashMap<Tp, Result<ListedOffset, ClientError>> = HashMap::new();
        for topic in &sent.response.topics {
            let name = text(&topic.name.0);
            for p in &topic.partitions {
                let tp = (name.clone(), p.partition_index);
                if answered.contains_key(&tp) || partitions.binary_search(&tp).is_err() {
                    continue;
                }
                let context = format!("ListOffsets v{version} for {}-{} on {label}", tp.0, tp.1);
                let result = if p.error_code != 0 {
                    Err(ClientError::from_code(p.error_code, context, None))
                } else {
                    listed_offset(spec, p.offset, p.timestamp, p.leader_epoch, leader, &context)
                };
                answered.insert(tp, result);
            }
        }
        Ok(partitions
            .iter()
            .map(|tp| {
                let result = answered.remove(tp).unwrap_or_else(|| {
                    Err(ClientError::protocol(format!(
                        "ListOffsets v{version} on {label} did not answer for {}-{}",
                        tp.0, tp.1
                    )))
                });
                (tp.clone(), result)
            })
            .collect())
    }
}

/// One answered partition of ListOffsets, its offset checked: the log ends always exist (an
/// offset below 0 is not one), a by-timestamp lookup may find nothing (-1).
fn listed_offset(
    spec: OffsetSpec,
    offset: i64,
    timestamp: i64,
    leader_epoch: i32,
    leader: i32,
    context: &str,
) -> Result<ListedOffset, ClientError> {
    let ends = matches!(spec, OffsetSpec::Earliest | OffsetSpec::Latest);
    let offset = match offset {
        o if o >= 0 => Some(o),
        -1 if !ends => None,
        o => return Err(ClientError::protocol(format!("{context}: offset {o} is not an offset"))),
    };
    Ok(ListedOffset {
        offset,
        timestamp: (timestamp >= 0).then_some(timestamp),
        leader_epoch: (leader_epoch >= 0).then_some(leader_epoch),
        leader,
    })
}

fn committed_offset(
    topic: &str,
    partition: i32,
    offset: i64,
    leader_epoch: i32,
    metadata: Option<String>,
    error_code: i16,
    context: &str,
) -> CommittedOffset {
    let mut error = None;
    let mut committed = None;
    if error_code != 0 {
        error = Some(ClientError::from_code(error_code, format!("{context}, {topic}-{partition}"), None));
    } else if offset >= 0 {
        committed = Some(offset);
    } else if offset < -1 {
        error = Some(ClientError::new(
            ErrorKind::Protocol,
            format!("{context}, {topic}-{partition}: committed offset {offset} is not an offset"),
        ));
    }
    CommittedOffset {
        topic: topic.to_string(),
        partition,
        offset: committed,
        leader_epoch: (leader_epoch >= 0).then_some(leader_epoch),
        metadata,
        error,
    }
}

fn group_offsets(group_id: String, mut offsets: Vec<CommittedOffset>, broker: &Node, version: i16) -> GroupOffsets {
    offsets.sort_by(|a, b| (a.topic.as_str(), a.partition).cmp(&(b.topic.as_str(), b.partition)));
    offsets.dedup_by(|a, b| a.topic == b.topic && a.partition == b.partition);
    GroupOffsets { group_id, offsets, coordinator: broker.clone(), version }
}
