//! Coordinator records as JSON (features `offsets-log` and `json`), with Kafka's own schema
//! field names: a key as `{"type": N, "data": {...}}` and a value as `{"version": N, "data":
//! {...}}`, the shape `kafka-dump-log.sh --offsets-decoder` prints (there `type` and `version`
//! are strings; here numbers). Fields appear for the versions the schema gives them, as Kafka's
//! generated JSON converters write them. The embedded subscription and assignment bytes are
//! rendered by the caller's function (`kcp` uses the shape of `kcp decode`).
//!
//! [`KeyJson`] and [`ValueJson`] serialize straight from the decoded record (no intermediate
//! [`Value`] per record, which cost most of the time of `kcp group history --records`);
//! [`key_json`] and [`value_json`] build the same document as a [`Value`] from them.
//!
//! ```
//! use kafka_consumer_protocol::offsets_log::{json, CoordinatorRecord};
//!
//! let key = [0, 2, 0, 1, b'g'];
//! let record = CoordinatorRecord::decode(Some(&key), None).unwrap();
//! assert_eq!(json::key_json(&record.key).to_string(), r#"{"type":2,"data":{"group":"g"}}"#);
//! ```

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use super::record::{
    ClassicMemberMetadata, CopartitionGroup, MemberMetadata, PartitionMetadataTopic, RecordKey, RecordValue,
    StreamsEndpoint, StreamsTasks, StreamsTopicInfo, Subtopology, TaskIds, TopicIdPartitions, TopicInfo,
    TopicPartitionsInfo, Uuid,
};

/// What embedded bytes are, for the caller's renderer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embedded {
    /// A classic consumer group member's `subscription` (ConsumerProtocolSubscription).
    Subscription,
    /// A classic consumer group member's `assignment` (ConsumerProtocolAssignment).
    Assignment,
    /// The `Metadata` of a classic member's supported protocol in a consumer group
    /// (ConsumerProtocolSubscription).
    ClassicProtocolMetadata,
    /// Bytes of a group whose protocol type is not `consumer` (Connect, Streams): not ours to decode.
    Opaque,
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A key as `{"type": N, "data": {...}}`, serialized from the decoded key.
///
/// ```
/// use kafka_consumer_protocol::offsets_log::{json::KeyJson, CoordinatorRecord};
///
/// let key = [0, 2, 0, 1, b'g'];
/// let record = CoordinatorRecord::decode(Some(&key), None).unwrap();
/// assert_eq!(serde_json::to_string(&KeyJson(&record.key)).unwrap(), r#"{"type":2,"data":{"group":"g"}}"#);
/// ```
#[derive(Clone, Copy)]
pub struct KeyJson<'r, 'a>(pub &'r RecordKey<'a>);

impl Serialize for KeyJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", &self.0.type_id())?;
        m.serialize_entry("data", &KeyData(self.0))?;
        m.end()
    }
}

struct KeyData<'r, 'a>(&'r RecordKey<'a>);

impl Serialize for KeyData<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match *self.0 {
            RecordKey::OffsetCommit { group, topic, partition, .. } => {
                m.serialize_entry("group", group)?;
                m.serialize_entry("topic", topic)?;
                m.serialize_entry("partition", &partition)?;
            }
            RecordKey::GroupMetadata { group } => m.serialize_entry("group", group)?,
            RecordKey::ConsumerGroupMetadata { group_id }
            | RecordKey::ConsumerGroupPartitionMetadata { group_id }
            | RecordKey::ConsumerGroupTargetAssignmentMetadata { group_id }
            | RecordKey::ShareGroupMetadata { group_id }
            | RecordKey::ShareGroupTargetAssignmentMetadata { group_id }
            | RecordKey::ShareGroupStatePartitionMetadata { group_id }
            | RecordKey::StreamsGroupMetadata { group_id }
            | RecordKey::StreamsGroupTargetAssignmentMetadata { group_id }
            | RecordKey::StreamsGroupTopology { group_id } => m.serialize_entry("groupId", group_id)?,
            RecordKey::Other { group_id, .. } => m.serialize_entry("groupId", &group_id)?,
            RecordKey::ConsumerGroupMemberMetadata { group_id, member_id }
            | RecordKey::ConsumerGroupTargetAssignmentMember { group_id, member_id }
            | RecordKey::ConsumerGroupCurrentMemberAssignment { group_id, member_id }
            | RecordKey::ShareGroupMemberMetadata { group_id, member_id }
            | RecordKey::ShareGroupTargetAssignmentMember { group_id, member_id }
            | RecordKey::ShareGroupCurrentMemberAssignment { group_id, member_id }
            | RecordKey::StreamsGroupMemberMetadata { group_id, member_id }
            | RecordKey::StreamsGroupTargetAssignmentMember { group_id, member_id }
            | RecordKey::StreamsGroupCurrentMemberAssignment { group_id, member_id } => {
                m.serialize_entry("groupId", group_id)?;
                m.serialize_entry("memberId", member_id)?;
            }
            RecordKey::ConsumerGroupRegularExpression { group_id, regular_expression } => {
                m.serialize_entry("groupId", group_id)?;
                m.serialize_entry("regularExpression", regular_expression)?;
            }
        }
        m.end()
    }
}

/// `{"type": N, "data": {...}}` as a [`Value`] (see [`KeyJson`]).
pub fn key_json(key: &RecordKey<'_>) -> Value {
    serde_json::to_value(KeyJson(key)).unwrap_or(Value::Null)
}

/// A value as `{"version": N, "data": {...}}`, serialized from the decoded value; `embedded`
/// renders subscription and assignment bytes (any serializable shape).
///
/// ```
/// use kafka_consumer_protocol::offsets_log::json::{Embedded, ValueJson};
/// use kafka_consumer_protocol::offsets_log::RecordValue;
///
/// let value = RecordValue::ConsumerGroupTargetAssignmentMetadata { assignment_epoch: 7 };
/// let json = ValueJson { version: 0, value: &value, embedded: |_: Embedded, b: &[u8]| b.len() };
/// assert_eq!(serde_json::to_string(&json).unwrap(), r#"{"version":0,"data":{"assignmentEpoch":7}}"#);
/// ```
pub struct ValueJson<'r, 'a, F> {
    /// The value's schema version.
    pub version: i16,
    /// The decoded value.
    pub value: &'r RecordValue<'a>,
    /// Renders embedded subscription and assignment bytes.
    pub embedded: F,
}

impl<F, V> Serialize for ValueJson<'_, '_, F>
where
    F: Fn(Embedded, &[u8]) -> V,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("version", &self.version)?;
        if let RecordValue::Other(bytes) = self.value {
            m.serialize_entry("data", &())?;
            m.serialize_entry("undecoded_hex", &hex(bytes))?;
        } else {
            m.serialize_entry("data", &ValueData(self))?;
        }
        m.end()
    }
}

/// `{"version": N, "data": {...}}` as a [`Value`] (see [`ValueJson`]); `embedded` renders
/// subscription and assignment bytes.
pub fn value_json(version: i16, value: &RecordValue<'_>, embedded: &dyn Fn(Embedded, &[u8]) -> Value) -> Value {
    serde_json::to_value(ValueJson { version, value, embedded }).unwrap_or(Value::Null)
}

struct ValueData<'j, 'r, 'a, F>(&'j ValueJson<'r, 'a, F>);

/// A list serialized from an iterator made on demand (no intermediate `Vec`).
struct SeqOf<F>(F);

impl<F, I> Serialize for SeqOf<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for item in (self.0)() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

impl<F, V> Serialize for ValueData<'_, '_, '_, F>
where
    F: Fn(Embedded, &[u8]) -> V,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ValueJson { version, value, embedded } = self.0;
        let version = *version;
        let mut m = s.serialize_map(None)?;
        match value {
            RecordValue::OffsetCommit(c) => {
                m.serialize_entry("offset", &c.offset)?;
                if version >= 3 {
                    m.serialize_entry("leaderEpoch", &c.leader_epoch)?;
                }
                m.serialize_entry("metadata", c.metadata)?;
                m.serialize_entry("commitTimestamp", &c.commit_timestamp)?;
                if version == 1 {
                    m.serialize_entry("expireTimestamp", &c.expire_timestamp)?;
                }
                if let Some(id) = c.topic_id {
                    m.serialize_entry("topicId", &UuidJson(id))?;
                }
            }
            RecordValue::GroupMetadata(g) => {
                let consumer = g.protocol_type == "consumer";
                m.serialize_entry("protocolType", g.protocol_type)?;
                m.serialize_entry("generation", &g.generation)?;
                m.serialize_entry("protocol", &g.protocol)?;
                m.serialize_entry("leader", &g.leader)?;
                if version >= 2 {
                    m.serialize_entry("currentStateTimestamp", &g.current_state_timestamp)?;
                }
                m.serialize_entry(
                    "members",
                    &SeqOf(|| g.members.iter().map(|member| MemberJson { version, member, consumer, embedded })),
                )?;
            }
            RecordValue::ConsumerGroupMetadata(g) => {
                m.serialize_entry("epoch", &g.epoch)?;
                // A tagged field at its default is absent, as Kafka's converter leaves it out.
                if g.metadata_hash != 0 {
                    m.serialize_entry("metadataHash", &g.metadata_hash)?;
                }
            }
            RecordValue::ConsumerGroupPartitionMetadata(p) => {
                m.serialize_entry("topics", &SeqOf(|| p.topics.iter().map(PartitionMetadataTopicJson)))?;
            }
            RecordValue::ConsumerGroupMemberMetadata(member) => {
                m.serialize_entry("instanceId", &member.instance_id)?;
                m.serialize_entry("rackId", &member.rack_id)?;
                m.serialize_entry("clientId", member.client_id)?;
                m.serialize_entry("clientHost", member.client_host)?;
                m.serialize_entry("subscribedTopicNames", &member.subscribed_topic_names)?;
                m.serialize_entry("subscribedTopicRegex", &member.subscribed_topic_regex)?;
                m.serialize_entry("rebalanceTimeoutMs", &member.rebalance_timeout_ms)?;
                m.serialize_entry("serverAssignor", &member.server_assignor)?;
                let classic = member.classic_member_metadata.as_ref().map(|c| ClassicJson { classic: c, embedded });
                m.serialize_entry("classicMemberMetadata", &classic)?;
            }
            RecordValue::ConsumerGroupTargetAssignmentMetadata { assignment_epoch } => {
                m.serialize_entry("assignmentEpoch", assignment_epoch)?;
            }
            RecordValue::ConsumerGroupTargetAssignmentMember(list) => {
                m.serialize_entry("topicPartitions", &SeqOf(|| list.iter().map(TopicIdPartitionsJson)))?;
            }
            RecordValue::ConsumerGroupCurrentMemberAssignment(c) => {
                m.serialize_entry("memberEpoch", &c.member_epoch)?;
                m.serialize_entry("previousMemberEpoch", &c.previous_member_epoch)?;
                m.serialize_entry("state", &c.state)?;
                m.serialize_entry(
                    "assignedPartitions",
                    &SeqOf(|| c.assigned_partitions.iter().map(TopicIdPartitionsJson)),
                )?;
                m.serialize_entry(
                    "partitionsPendingRevocation",
                    &SeqOf(|| c.partitions_pending_revocation.iter().map(TopicIdPartitionsJson)),
                )?;
            }
            RecordValue::ConsumerGroupRegularExpression(r) => {
                m.serialize_entry("topics", &r.topics)?;
                m.serialize_entry("version", &r.version)?;
                m.serialize_entry("timestamp", &r.timestamp)?;
            }
            RecordValue::ShareGroupMemberMetadata(member) => {
                m.serialize_entry("rackId", &member.rack_id)?;
                m.serialize_entry("clientId", member.client_id)?;
                m.serialize_entry("clientHost", member.client_host)?;
                m.serialize_entry("subscribedTopicNames", &member.subscribed_topic_names)?;
            }
            RecordValue::ShareGroupMetadata(g) | RecordValue::StreamsGroupMetadata(g) => {
                m.serialize_entry("epoch", &g.epoch)?;
                // A plain field of these schemas: always present, unlike ConsumerGroupMetadata's.
                m.serialize_entry("metadataHash", &g.metadata_hash)?;
            }
            RecordValue::ShareGroupTargetAssignmentMetadata { assignment_epoch }
            | RecordValue::StreamsGroupTargetAssignmentMetadata { assignment_epoch } => {
                m.serialize_entry("assignmentEpoch", assignment_epoch)?;
            }
            RecordValue::ShareGroupTargetAssignmentMember(list) => {
                m.serialize_entry("topicPartitions", &SeqOf(|| list.iter().map(TopicIdPartitionsJson)))?;
            }
            RecordValue::ShareGroupCurrentMemberAssignment(c) => {
                m.serialize_entry("memberEpoch", &c.member_epoch)?;
                m.serialize_entry("previousMemberEpoch", &c.previous_member_epoch)?;
                m.serialize_entry("state", &c.state)?;
                m.serialize_entry(
                    "assignedPartitions",
                    &SeqOf(|| c.assigned_partitions.iter().map(TopicIdPartitionsJson)),
                )?;
            }
            RecordValue::ShareGroupStatePartitionMetadata(p) => {
                m.serialize_entry(
                    "initializingTopics",
                    &SeqOf(|| p.initializing_topics.iter().map(TopicPartitionsInfoJson)),
                )?;
                m.serialize_entry(
                    "initializedTopics",
                    &SeqOf(|| p.initialized_topics.iter().map(TopicPartitionsInfoJson)),
                )?;
                m.serialize_entry("deletingTopics", &SeqOf(|| p.deleting_topics.iter().map(TopicInfoJson)))?;
            }
            RecordValue::StreamsGroupMemberMetadata(member) => {
                m.serialize_entry("instanceId", &member.instance_id)?;
                m.serialize_entry("rackId", &member.rack_id)?;
                m.serialize_entry("clientId", member.client_id)?;
                m.serialize_entry("clientHost", member.client_host)?;
                m.serialize_entry("rebalanceTimeoutMs", &member.rebalance_timeout_ms)?;
                m.serialize_entry("topologyEpoch", &member.topology_epoch)?;
                m.serialize_entry("processId", member.process_id)?;
                m.serialize_entry("userEndpoint", &member.user_endpoint.map(EndpointJson))?;
                m.serialize_entry(
                    "clientTags",
                    &SeqOf(|| member.client_tags.iter().map(|&(k, v)| PairJson("key", k, "value", v))),
                )?;
            }
            RecordValue::StreamsGroupTargetAssignmentMember(tasks) => {
                tasks_entries(&mut m, tasks, ["activeTasks", "standbyTasks", "warmupTasks"])?;
            }
            RecordValue::StreamsGroupCurrentMemberAssignment(c) => {
                m.serialize_entry("memberEpoch", &c.member_epoch)?;
                m.serialize_entry("previousMemberEpoch", &c.previous_member_epoch)?;
                m.serialize_entry("state", &c.state)?;
                tasks_entries(&mut m, &c.tasks, ["activeTasks", "standbyTasks", "warmupTasks"])?;
                tasks_entries(
                    &mut m,
                    &c.tasks_pending_revocation,
                    ["activeTasksPendingRevocation", "standbyTasksPendingRevocation", "warmupTasksPendingRevocation"],
                )?;
            }
            RecordValue::StreamsGroupTopology(t) => {
                m.serialize_entry("epoch", &t.epoch)?;
                m.serialize_entry("subtopologies", &SeqOf(|| t.subtopologies.iter().map(SubtopologyJson)))?;
            }
            // Written by `ValueJson` itself (no `data`).
            RecordValue::Other(_) => {}
        }
        m.end()
    }
}

/// A streams member's three task lists under the given names.
fn tasks_entries<M: SerializeMap>(m: &mut M, tasks: &StreamsTasks<'_>, names: [&str; 3]) -> Result<(), M::Error> {
    for (name, list) in names.into_iter().zip([&tasks.active_tasks, &tasks.standby_tasks, &tasks.warmup_tasks]) {
        m.serialize_entry(name, &SeqOf(|| list.iter().map(TaskIdsJson)))?;
    }
    Ok(())
}

struct TaskIdsJson<'r, 'a>(&'r TaskIds<'a>);

impl Serialize for TaskIdsJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("subtopologyId", self.0.subtopology_id)?;
        m.serialize_entry("partitions", &self.0.partitions)?;
        m.end()
    }
}

/// `{"<k>": key, "<v>": value}`: a streams `KeyValue` or `TopicConfig`.
struct PairJson<'a>(&'static str, &'a str, &'static str, &'a str);

impl Serialize for PairJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry(self.0, self.1)?;
        m.serialize_entry(self.2, self.3)?;
        m.end()
    }
}

struct EndpointJson<'a>(StreamsEndpoint<'a>);

impl Serialize for EndpointJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("host", self.0.host)?;
        m.serialize_entry("port", &self.0.port)?;
        m.end()
    }
}

struct StreamsTopicInfoJson<'r, 'a>(&'r StreamsTopicInfo<'a>);

impl Serialize for StreamsTopicInfoJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("name", t.name)?;
        m.serialize_entry("partitions", &t.partitions)?;
        m.serialize_entry("replicationFactor", &t.replication_factor)?;
        m.serialize_entry(
            "topicConfigs",
            &SeqOf(|| t.topic_configs.iter().map(|&(k, v)| PairJson("key", k, "value", v))),
        )?;
        m.end()
    }
}

struct SubtopologyJson<'r, 'a>(&'r Subtopology<'a>);

impl Serialize for SubtopologyJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(Some(7))?;
        m.serialize_entry("subtopologyId", t.subtopology_id)?;
        m.serialize_entry("sourceTopics", &t.source_topics)?;
        m.serialize_entry("sourceTopicRegex", &t.source_topic_regex)?;
        m.serialize_entry(
            "stateChangelogTopics",
            &SeqOf(|| t.state_changelog_topics.iter().map(StreamsTopicInfoJson)),
        )?;
        m.serialize_entry("repartitionSinkTopics", &t.repartition_sink_topics)?;
        m.serialize_entry(
            "repartitionSourceTopics",
            &SeqOf(|| t.repartition_source_topics.iter().map(StreamsTopicInfoJson)),
        )?;
        m.serialize_entry("copartitionGroups", &SeqOf(|| t.copartition_groups.iter().map(CopartitionGroupJson)))?;
        m.end()
    }
}

struct CopartitionGroupJson<'r>(&'r CopartitionGroup);

impl Serialize for CopartitionGroupJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("sourceTopics", &self.0.source_topics)?;
        m.serialize_entry("sourceTopicRegex", &self.0.source_topic_regex)?;
        m.serialize_entry("repartitionSourceTopics", &self.0.repartition_source_topics)?;
        m.end()
    }
}

struct TopicPartitionsInfoJson<'r, 'a>(&'r TopicPartitionsInfo<'a>);

impl Serialize for TopicPartitionsInfoJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("topicId", &UuidJson(self.0.topic_id))?;
        m.serialize_entry("topicName", self.0.topic_name)?;
        m.serialize_entry("partitions", &self.0.partitions)?;
        m.end()
    }
}

struct TopicInfoJson<'r, 'a>(&'r TopicInfo<'a>);

impl Serialize for TopicInfoJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("topicId", &UuidJson(self.0.topic_id))?;
        m.serialize_entry("topicName", self.0.topic_name)?;
        m.end()
    }
}

/// A topic id as its string form.
struct UuidJson(Uuid);

impl Serialize for UuidJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

struct TopicIdPartitionsJson<'r>(&'r TopicIdPartitions);

impl Serialize for TopicIdPartitionsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("topicId", &UuidJson(self.0.topic_id))?;
        m.serialize_entry("partitions", &self.0.partitions)?;
        m.end()
    }
}

struct PartitionMetadataTopicJson<'r, 'a>(&'r PartitionMetadataTopic<'a>);

impl Serialize for PartitionMetadataTopicJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("topicId", &UuidJson(t.topic_id))?;
        m.serialize_entry("topicName", t.topic_name)?;
        m.serialize_entry("numPartitions", &t.num_partitions)?;
        m.serialize_entry("partitionMetadata", &SeqOf(|| t.partition_metadata.iter().map(PartitionRacksJson)))?;
        m.end()
    }
}

struct PartitionRacksJson<'r, 'a>(&'r (i32, Vec<&'a str>));

impl Serialize for PartitionRacksJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("partition", &self.0 .0)?;
        m.serialize_entry("racks", &self.0 .1)?;
        m.end()
    }
}

struct ClassicJson<'r, 'a, 'e, F> {
    classic: &'r ClassicMemberMetadata<'a>,
    embedded: &'e F,
}

impl<F, V> Serialize for ClassicJson<'_, '_, '_, F>
where
    F: Fn(Embedded, &[u8]) -> V,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let embedded = self.embedded;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("sessionTimeoutMs", &self.classic.session_timeout_ms)?;
        m.serialize_entry(
            "supportedProtocols",
            &SeqOf(|| {
                self.classic.supported_protocols.iter().map(move |&(name, metadata)| ProtocolJson {
                    name,
                    metadata,
                    embedded,
                })
            }),
        )?;
        m.end()
    }
}

struct ProtocolJson<'a, 'e, F> {
    name: &'a str,
    metadata: &'a [u8],
    embedded: &'e F,
}

impl<F, V> Serialize for ProtocolJson<'_, '_, F>
where
    F: Fn(Embedded, &[u8]) -> V,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("name", self.name)?;
        m.serialize_entry("metadata", &(self.embedded)(Embedded::ClassicProtocolMetadata, self.metadata))?;
        m.end()
    }
}

struct MemberJson<'r, 'a, 'e, F> {
    version: i16,
    member: &'r MemberMetadata<'a>,
    consumer: bool,
    embedded: &'e F,
}

impl<F, V> Serialize for MemberJson<'_, '_, '_, F>
where
    F: Fn(Embedded, &[u8]) -> V,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let MemberJson { version, member: mm, consumer, embedded } = *self;
        let (sub, assign) = if consumer {
            (Embedded::Subscription, Embedded::Assignment)
        } else {
            (Embedded::Opaque, Embedded::Opaque)
        };
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("memberId", mm.member_id)?;
        if version >= 3 {
            m.serialize_entry("groupInstanceId", &mm.group_instance_id)?;
        }
        m.serialize_entry("clientId", mm.client_id)?;
        m.serialize_entry("clientHost", mm.client_host)?;
        if version >= 1 {
            m.serialize_entry("rebalanceTimeout", &mm.rebalance_timeout)?;
        }
        m.serialize_entry("sessionTimeout", &mm.session_timeout)?;
        m.serialize_entry("subscription", &embedded(sub, mm.subscription))?;
        m.serialize_entry("assignment", &embedded(assign, mm.assignment))?;
        m.end()
    }
}
