//! The JSON shapes of cli.md: decoded subscriptions and assignments, errors, and back.

use bytes::Bytes;
use kafka_consumer_protocol::{
    AssignmentView, DecodeError, Subscription, SubscriptionView, TopicPartitions, TopicPartitionsList, Version,
};
use serde_json::{json, Map, Value};

use crate::input::{parse_hex, to_hex};
use crate::CliError;

/// `[{"topic": .., "partitions": [..]}]` in wire order.
pub fn partitions_json(list: TopicPartitionsList<'_>) -> Value {
    Value::Array(list.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions.to_vec()})).collect())
}

fn bytes_json(bytes: Option<&[u8]>) -> Value {
    bytes.map_or(Value::Null, |b| Value::String(to_hex(b)))
}

/// Warnings a reader of this payload should know about.
fn warnings(version: i16, read_as: Version, trailing: usize, repair: Option<String>) -> Vec<String> {
    let mut out: Vec<String> = repair.into_iter().collect();
    if version > Version::LATEST.as_i16() {
        out.push(format!(
            "version {version} is newer than the newest known ({}); read with the {read_as} layout{}",
            Version::LATEST.as_i16(),
            if trailing > 0 { format!(", {trailing} bytes of newer fields ignored") } else { String::new() }
        ));
    } else if trailing > 0 && read_as.as_i16() < version {
        out.push(format!("read as {read_as} by an older reader: {trailing} bytes of newer fields ignored"));
    } else if trailing > 0 {
        out.push(format!("{trailing} unexpected trailing bytes after the last field (ignored, as Apache Kafka does)"));
    }
    out
}

/// The decode shape of a subscription.
pub fn subscription_json(s: &SubscriptionView<'_>) -> Value {
    json!({
        "kind": "subscription",
        "version": s.version(),
        "read_as_version": s.read_as().as_i16(),
        "topics": s.topics().iter().collect::<Vec<_>>(),
        "user_data": bytes_json(s.user_data()),
        "owned_partitions": partitions_json(s.owned_partitions()),
        "generation_id": s.generation_id(),
        "rack_id": s.rack_id(),
        "trailing_bytes": s.trailing_bytes(),
        "warnings": warnings(s.version(), s.read_as(), s.trailing_bytes(), s.repair().map(|r| r.to_string())),
    })
}

/// The decode shape of an assignment.
pub fn assignment_json(a: &AssignmentView<'_>) -> Value {
    json!({
        "kind": "assignment",
        "version": a.version(),
        "read_as_version": a.read_as().as_i16(),
        "assigned_partitions": partitions_json(a.assigned_partitions()),
        "user_data": bytes_json(a.user_data()),
        "trailing_bytes": a.trailing_bytes(),
        "warnings": warnings(a.version(), a.read_as(), a.trailing_bytes(), a.repair().map(|r| r.to_string())),
    })
}

/// `{"error": {...}}` for a decode error.
pub fn decode_error_json(e: &DecodeError) -> Value {
    json!({"error": {
        "kind": e.kind().code(),
        "offset": e.offset(),
        "field": e.field().to_string(),
        "message": e.kind().to_string(),
    }})
}

fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    obj.get(name).filter(|v| !v.is_null())
}

fn user_data_from(obj: &Map<String, Value>) -> Result<Option<Bytes>, CliError> {
    match field(obj, "user_data") {
        None => Ok(None),
        Some(Value::String(h)) => Ok(Some(Bytes::from(parse_hex(h)?))),
        Some(other) => Err(CliError::input(format!("user_data must be a hex string or null, got {other}"))),
    }
}

/// Parses `[{"topic", "partitions"}]`.
pub fn partitions_from(value: Option<&Value>, name: &str) -> Result<Vec<TopicPartitions>, CliError> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
    let groups = value.as_array().ok_or_else(|| CliError::input(format!("{name} must be an array")))?;
    groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let topic = g
                .get("topic")
                .and_then(Value::as_str)
                .ok_or_else(|| CliError::input(format!("{name}[{i}].topic must be a string")))?;
            let partitions = g
                .get("partitions")
                .and_then(Value::as_array)
                .ok_or_else(|| CliError::input(format!("{name}[{i}].partitions must be an array")))?
                .iter()
                .map(|p| {
                    p.as_i64()
                        .and_then(|p| i32::try_from(p).ok())
                        .ok_or_else(|| CliError::input(format!("{name}[{i}].partitions: {p} is not an int32")))
                })
                .collect::<Result<Vec<i32>, _>>()?;
            Ok(TopicPartitions::new(topic, partitions))
        })
        .collect()
}

/// A subscription from the decode shape (unknown keys such as `version` are ignored).
pub fn subscription_from(value: &Value) -> Result<Subscription, CliError> {
    let obj = value.as_object().ok_or_else(|| CliError::input("a subscription must be a JSON object"))?;
    let topics = match field(obj, "topics") {
        None => Vec::new(),
        Some(v) => v
            .as_array()
            .ok_or_else(|| CliError::input("topics must be an array of strings"))?
            .iter()
            .map(|t| t.as_str().map(str::to_owned).ok_or_else(|| CliError::input("topics must be an array of strings")))
            .collect::<Result<_, _>>()?,
    };
    let generation_id = match field(obj, "generation_id") {
        None => -1,
        Some(v) => v
            .as_i64()
            .and_then(|g| i32::try_from(g).ok())
            .ok_or_else(|| CliError::input("generation_id must be an int32"))?,
    };
    let rack_id = match field(obj, "rack_id") {
        None => None,
        Some(v) => Some(v.as_str().ok_or_else(|| CliError::input("rack_id must be a string or null"))?.to_owned()),
    };
    let mut subscription = Subscription::new(topics)
        .with_user_data(user_data_from(obj)?)
        .with_owned_partitions(partitions_from(obj.get("owned_partitions"), "owned_partitions")?)
        .with_generation_id(generation_id);
    subscription.rack_id = rack_id;
    Ok(subscription)
}

/// An assignment from the decode shape.
pub fn assignment_from(value: &Value) -> Result<kafka_consumer_protocol::Assignment, CliError> {
    let obj = value.as_object().ok_or_else(|| CliError::input("an assignment must be a JSON object"))?;
    Ok(kafka_consumer_protocol::Assignment::new(partitions_from(
        obj.get("assigned_partitions"),
        "assigned_partitions",
    )?)
    .with_user_data(user_data_from(obj)?))
}
