//! Coordinator records as JSON (features `offsets-log` and `json`), with Kafka's own schema
//! field names: a key as `{"type": N, "data": {...}}` and a value as `{"version": N, "data":
//! {...}}`, the shape `kafka-dump-log.sh --offsets-decoder` prints (there `type` and `version`
//! are strings; here numbers). Fields appear for the versions the schema gives them, as Kafka's
//! generated JSON converters write them. The embedded subscription and assignment bytes are
//! rendered by the caller's function (`kcp` uses the shape of `kcp decode`).
//!
//! ```
//! use kafka_consumer_protocol::offsets_log::{json, CoordinatorRecord};
//!
//! let key = [0, 2, 0, 1, b'g'];
//! let record = CoordinatorRecord::decode(Some(&key), None).unwrap();
//! assert_eq!(json::key_json(&record.key).to_string(), r#"{"type":2,"data":{"group":"g"}}"#);
//! ```

use serde_json::{json, Map, Value};

use super::record::{MemberMetadata, RecordKey, RecordValue, TopicIdPartitions};

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

/// `{"type": N, "data": {...}}`.
pub fn key_json(key: &RecordKey<'_>) -> Value {
    let data = match *key {
        RecordKey::OffsetCommit { group, topic, partition, .. } => {
            json!({"group": group, "topic": topic, "partition": partition})
        }
        RecordKey::GroupMetadata { group } => json!({ "group": group }),
        RecordKey::ConsumerGroupMetadata { group_id }
        | RecordKey::ConsumerGroupPartitionMetadata { group_id }
        | RecordKey::ConsumerGroupTargetAssignmentMetadata { group_id } => json!({ "groupId": group_id }),
        RecordKey::ConsumerGroupMemberMetadata { group_id, member_id }
        | RecordKey::ConsumerGroupTargetAssignmentMember { group_id, member_id }
        | RecordKey::ConsumerGroupCurrentMemberAssignment { group_id, member_id } => {
            json!({"groupId": group_id, "memberId": member_id})
        }
        RecordKey::ConsumerGroupRegularExpression { group_id, regular_expression } => {
            json!({"groupId": group_id, "regularExpression": regular_expression})
        }
        RecordKey::Other { group_id, .. } => json!({ "groupId": group_id }),
    };
    json!({"type": key.type_id(), "data": data})
}

fn topic_partitions(list: &[TopicIdPartitions]) -> Value {
    list.iter().map(|t| json!({"topicId": t.topic_id.to_string(), "partitions": t.partitions})).collect()
}

/// `{"version": N, "data": {...}}`; `embedded` renders subscription and assignment bytes.
pub fn value_json(version: i16, value: &RecordValue<'_>, embedded: &dyn Fn(Embedded, &[u8]) -> Value) -> Value {
    let data = match value {
        RecordValue::OffsetCommit(c) => {
            let mut m = Map::new();
            m.insert("offset".into(), c.offset.into());
            if version >= 3 {
                m.insert("leaderEpoch".into(), c.leader_epoch.into());
            }
            m.insert("metadata".into(), c.metadata.into());
            m.insert("commitTimestamp".into(), c.commit_timestamp.into());
            if version == 1 {
                m.insert("expireTimestamp".into(), c.expire_timestamp.into());
            }
            if let Some(id) = c.topic_id {
                m.insert("topicId".into(), id.to_string().into());
            }
            Value::Object(m)
        }
        RecordValue::GroupMetadata(g) => {
            let consumer = g.protocol_type == "consumer";
            let mut m = Map::new();
            m.insert("protocolType".into(), g.protocol_type.into());
            m.insert("generation".into(), g.generation.into());
            m.insert("protocol".into(), g.protocol.into());
            m.insert("leader".into(), g.leader.into());
            if version >= 2 {
                m.insert("currentStateTimestamp".into(), g.current_state_timestamp.into());
            }
            let members: Vec<Value> =
                g.members.iter().map(|member| member_json(version, member, consumer, embedded)).collect();
            m.insert("members".into(), members.into());
            Value::Object(m)
        }
        RecordValue::ConsumerGroupMetadata(g) => {
            // A tagged field at its default is absent, as Kafka's converter leaves it out.
            if g.metadata_hash == 0 {
                json!({ "epoch": g.epoch })
            } else {
                json!({"epoch": g.epoch, "metadataHash": g.metadata_hash})
            }
        }
        RecordValue::ConsumerGroupPartitionMetadata(p) => {
            let topics: Vec<Value> = p
                .topics
                .iter()
                .map(|t| {
                    let partitions: Vec<Value> =
                        t.partition_metadata.iter().map(|(p, racks)| json!({"partition": p, "racks": racks})).collect();
                    json!({"topicId": t.topic_id.to_string(), "topicName": t.topic_name,
                           "numPartitions": t.num_partitions, "partitionMetadata": partitions})
                })
                .collect();
            json!({ "topics": topics })
        }
        RecordValue::ConsumerGroupMemberMetadata(m) => {
            let classic = m.classic_member_metadata.as_ref().map(|c| {
                let protocols: Vec<Value> = c
                    .supported_protocols
                    .iter()
                    .map(|(name, metadata)| json!({"name": name, "metadata": embedded(Embedded::ClassicProtocolMetadata, metadata)}))
                    .collect();
                json!({"sessionTimeoutMs": c.session_timeout_ms, "supportedProtocols": protocols})
            });
            json!({
                "instanceId": m.instance_id, "rackId": m.rack_id, "clientId": m.client_id,
                "clientHost": m.client_host, "subscribedTopicNames": m.subscribed_topic_names,
                "subscribedTopicRegex": m.subscribed_topic_regex, "rebalanceTimeoutMs": m.rebalance_timeout_ms,
                "serverAssignor": m.server_assignor, "classicMemberMetadata": classic,
            })
        }
        RecordValue::ConsumerGroupTargetAssignmentMetadata { assignment_epoch } => {
            json!({ "assignmentEpoch": assignment_epoch })
        }
        RecordValue::ConsumerGroupTargetAssignmentMember(list) => json!({ "topicPartitions": topic_partitions(list) }),
        RecordValue::ConsumerGroupCurrentMemberAssignment(c) => json!({
            "memberEpoch": c.member_epoch, "previousMemberEpoch": c.previous_member_epoch, "state": c.state,
            "assignedPartitions": topic_partitions(&c.assigned_partitions),
            "partitionsPendingRevocation": topic_partitions(&c.partitions_pending_revocation),
        }),
        RecordValue::ConsumerGroupRegularExpression(r) => {
            json!({"topics": r.topics, "version": r.version, "timestamp": r.timestamp})
        }
        RecordValue::Other(bytes) => return json!({"version": version, "data": null, "undecoded_hex": hex(bytes)}),
    };
    json!({"version": version, "data": data})
}

fn member_json(
    version: i16,
    m: &MemberMetadata<'_>,
    consumer: bool,
    embedded: &dyn Fn(Embedded, &[u8]) -> Value,
) -> Value {
    let (sub, assign) =
        if consumer { (Embedded::Subscription, Embedded::Assignment) } else { (Embedded::Opaque, Embedded::Opaque) };
    let mut o = Map::new();
    o.insert("memberId".into(), m.member_id.into());
    if version >= 3 {
        o.insert("groupInstanceId".into(), m.group_instance_id.into());
    }
    o.insert("clientId".into(), m.client_id.into());
    o.insert("clientHost".into(), m.client_host.into());
    if version >= 1 {
        o.insert("rebalanceTimeout".into(), m.rebalance_timeout.into());
    }
    o.insert("sessionTimeout".into(), m.session_timeout.into());
    o.insert("subscription".into(), embedded(sub, m.subscription));
    o.insert("assignment".into(), embedded(assign, m.assignment));
    Value::Object(o)
}
