//! The contract's JSON objects of described groups: members with their decoded payloads, the
//! coordinator, the diagnostics.

use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::client::{ClassicGroupDescription, ConsumerGroupDescription, Node};
use kafka_consumer_protocol::group_api::DescribedGroupMember;
use kafka_consumer_protocol::inspect::{
    inspect_classic, inspect_consumer, ClassicGroup, ClassicGroupReport, ClassicMemberReport, Diagnostic,
    ReportedPayload, UserDataReading,
};
use kafka_consumer_protocol::{StickyUserData, StickyUserDataFormat, TopicPartitions};
use serde_json::{json, Value};

use crate::input::to_hex;
use crate::shapes::{assignment_json, decode_error_json, subscription_json};

pub(crate) fn groups_json(groups: &[TopicPartitions]) -> Value {
    Value::Array(groups.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions})).collect())
}

fn coordinator_json(b: &Node) -> Value {
    json!({"node_id": b.node_id, "host": b.host, "port": b.port})
}

fn sticky_json(format: &str, data: &StickyUserData) -> Value {
    json!({"format": format, "previous_assignment": groups_json(&data.previous_assignment), "generation": data.generation})
}

fn user_data_json(reading: Option<&UserDataReading>) -> Value {
    match reading {
        None => Value::Null,
        Some(UserDataReading::CooperativeSticky(d)) => {
            json!({"format": "cooperative_sticky", "generation": d.generation})
        }
        Some(UserDataReading::Sticky { data, format }) => {
            sticky_json(if *format == StickyUserDataFormat::V0 { "sticky_v0" } else { "sticky_v1" }, data)
        }
        Some(UserDataReading::KafkaPythonSticky(data)) => sticky_json("kafka_python_sticky", data),
        Some(_) => json!({"format": "custom"}),
    }
}

fn payload_json<T>(payload: &ReportedPayload<T>, decoded: impl Fn(&T) -> Value) -> Value {
    match payload {
        ReportedPayload::Decoded(value) => decoded(value),
        ReportedPayload::NotReported => Value::Null,
        ReportedPayload::Undecodable { error, bytes } => {
            let mut v = decode_error_json(error);
            v["hex"] = Value::String(to_hex(bytes));
            v
        }
        ReportedPayload::Opaque(bytes) => json!({"hex": to_hex(bytes)}),
    }
}

/// A finding as the contract shows it.
pub(crate) fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "kind": d.kind.code(),
        "topic": d.topic,
        "partition": d.partition,
        "partitions": groups_json(&d.partitions),
        "members": d.members,
        "message": d.message,
        "payload": d.payload.map(|p| p.as_str()),
        "repair": d.repair,
        "blocks_online_upgrade": d.blocks_online_upgrade,
    })
}

fn classic_member_json(m: &DescribedGroupMember, r: &ClassicMemberReport) -> Value {
    let mut subscription = payload_json(&r.subscription, |s| subscription_json(&s.view()));
    if r.subscription.decoded().is_some() {
        subscription["user_data_decoded"] = user_data_json(r.user_data.as_ref());
    }
    json!({
        "member_id": m.member_id,
        "group_instance_id": m.group_instance_id,
        "client_id": m.client_id,
        "client_host": m.client_host,
        "subscription": subscription,
        "assignment": payload_json(&r.assignment, |a| assignment_json(&a.view())),
    })
}

/// `describe`'s object for a classic group, and for the text table each member's generation
/// and claims as the inspection worked them out.
pub(crate) fn classic_json(described: &ClassicGroupDescription, metadata: &ClusterMetadata) -> (Value, Vec<Value>) {
    let group = &described.group;
    let report = inspect_classic(group, metadata);
    let extra = report
        .members
        .iter()
        .map(|r| json!({"generation": r.generation(), "owned": groups_json(&r.claims())}))
        .collect();
    (classic_report_json(group, &report, &described.coordinator), extra)
}

fn classic_report_json(group: &ClassicGroup, report: &ClassicGroupReport, coordinator: &Node) -> Value {
    let members: Vec<Value> =
        group.members.iter().zip(&report.members).map(|(m, r)| classic_member_json(m, r)).collect();
    json!({
        "group_id": group.group_id,
        "type": "classic",
        "state": group.state,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol,
        "coordinator": coordinator_json(coordinator),
        "members": members,
        "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}

/// `describe`'s object for a KIP-848 group.
pub(crate) fn consumer_json(described: &ConsumerGroupDescription, metadata: &ClusterMetadata) -> Value {
    let group = &described.group;
    let report = inspect_consumer(group, metadata);
    let members: Vec<Value> = group
        .members
        .iter()
        .map(|m| {
            json!({
                "member_id": m.member_id,
                "group_instance_id": m.instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "rack_id": m.rack_id,
                "member_epoch": m.member_epoch,
                "member_type": m.member_type.as_str(),
                "subscribed_topics": m.subscribed_topics,
                "subscribed_topic_regex": m.subscribed_topic_regex,
                "assignment": groups_json(&m.assignment),
                "target_assignment": groups_json(&m.target_assignment),
            })
        })
        .collect();
    json!({
        "group_id": group.group_id,
        "type": "consumer",
        "state": group.state,
        "protocol_type": "consumer",
        "protocol": Value::Null,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor": group.assignor,
        "coordinator": coordinator_json(&described.coordinator),
        "members": members,
        "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}
