//! The JSON shapes of cli.md: decoded subscriptions and assignments (serialized straight from
//! the borrowed views into the output, so a large payload never becomes a large JSON document in
//! memory) and errors. The decode shape read back (`kcp encode`'s input) is the library's
//! `codec::json`.

use kafka_consumer_protocol::codec::{PartitionIds, TopicNames, TopicPartitionsList, TopicPartitionsView};
use kafka_consumer_protocol::{AssignmentView, DecodeError, SubscriptionView, Version};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{json, Value};

use super::input::to_hex;

/// Partition ids as a JSON array.
pub struct Ids<'a>(pub PartitionIds<'a>);

impl Serialize for Ids<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

/// `{"topic": .., "partitions": [..]}`.
pub struct Group<'a>(pub TopicPartitionsView<'a>);

impl Serialize for Group<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("topic", self.0.topic)?;
        m.serialize_entry("partitions", &Ids(self.0.partitions))?;
        m.end()
    }
}

/// `[{"topic": .., "partitions": [..]}]` in wire order.
pub struct Groups<'a>(pub TopicPartitionsList<'a>);

impl Serialize for Groups<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Group))
    }
}

struct Names<'a>(TopicNames<'a>);

impl Serialize for Names<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

/// Lowercase hex, or `null`.
pub struct Hex<'a>(pub Option<&'a [u8]>);

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_none(),
            Some(b) => s.serialize_str(&to_hex(b)),
        }
    }
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

/// The warnings of a decoded subscription.
pub fn subscription_warnings(s: &SubscriptionView<'_>) -> Vec<String> {
    warnings(s.version(), s.read_as(), s.trailing_bytes(), s.repair().map(|r| r.to_string()))
}

/// The warnings of a decoded assignment.
pub fn assignment_warnings(a: &AssignmentView<'_>) -> Vec<String> {
    warnings(a.version(), a.read_as(), a.trailing_bytes(), a.repair().map(|r| r.to_string()))
}

/// The decode shape of a subscription, plus `notes` appended to its warnings.
pub struct SubscriptionJson<'v, 'a> {
    /// The payload.
    pub view: &'v SubscriptionView<'a>,
    /// Warnings of the command's own (for example how `--kind auto` chose).
    pub notes: &'v [String],
}

impl Serialize for SubscriptionJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.view;
        let mut warnings = subscription_warnings(v);
        warnings.extend(self.notes.iter().cloned());
        let mut m = s.serialize_map(Some(10))?;
        m.serialize_entry("kind", "subscription")?;
        m.serialize_entry("version", &v.version())?;
        m.serialize_entry("read_as_version", &v.read_as().as_i16())?;
        m.serialize_entry("topics", &Names(v.topics()))?;
        m.serialize_entry("user_data", &Hex(v.user_data()))?;
        m.serialize_entry("owned_partitions", &Groups(v.owned_partitions()))?;
        m.serialize_entry("generation_id", &v.generation_id())?;
        m.serialize_entry("rack_id", &v.rack_id())?;
        m.serialize_entry("trailing_bytes", &v.trailing_bytes())?;
        m.serialize_entry("warnings", &warnings)?;
        m.end()
    }
}

/// The decode shape of an assignment, plus `notes` appended to its warnings.
pub struct AssignmentJson<'v, 'a> {
    /// The payload.
    pub view: &'v AssignmentView<'a>,
    /// Warnings of the command's own.
    pub notes: &'v [String],
}

impl Serialize for AssignmentJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.view;
        let mut warnings = assignment_warnings(a);
        warnings.extend(self.notes.iter().cloned());
        let mut m = s.serialize_map(Some(7))?;
        m.serialize_entry("kind", "assignment")?;
        m.serialize_entry("version", &a.version())?;
        m.serialize_entry("read_as_version", &a.read_as().as_i16())?;
        m.serialize_entry("assigned_partitions", &Groups(a.assigned_partitions()))?;
        m.serialize_entry("user_data", &Hex(a.user_data()))?;
        m.serialize_entry("trailing_bytes", &a.trailing_bytes())?;
        m.serialize_entry("warnings", &warnings)?;
        m.end()
    }
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

/// The decode shape of a subscription as a JSON value (for documents built whole, such as
/// `kcp group describe`'s per-member entries).
pub fn subscription_json(view: &SubscriptionView<'_>) -> Value {
    serde_json::to_value(SubscriptionJson { view, notes: &[] }).expect("the decode shape serializes")
}

/// The decode shape of an assignment as a JSON value.
pub fn assignment_json(view: &AssignmentView<'_>) -> Value {
    serde_json::to_value(AssignmentJson { view, notes: &[] }).expect("the decode shape serializes")
}
