//! The JSON shapes of cli.md: decoded subscriptions and assignments (serialized straight from
//! the borrowed views into the output, so a large payload never becomes a large JSON document in
//! memory), errors, and the decode shape read back for `kcp encode`.

use bytes::Bytes;
use kafka_consumer_protocol::codec::{PartitionIds, TopicNames, TopicPartitionsList, TopicPartitionsView};
use kafka_consumer_protocol::{
    Assignment, AssignmentView, DecodeError, Subscription, SubscriptionView, TopicPartitions, Version,
};
use serde::de::IgnoredAny;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::input::{parse_hex, to_hex};
use super::CliError;

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

/// `{"topic", "partitions"}` as `kcp encode` and `kcp assign` read it.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, expecting = "an object {\"topic\": string, \"partitions\": [int32, ...]}")]
pub struct GroupShape {
    /// Topic.
    pub topic: String,
    /// Partition ids.
    pub partitions: Vec<i32>,
}

/// Partition groups as the library takes them.
pub fn groups_from(groups: Option<Vec<ObjectOnly<GroupShape>>>) -> Vec<TopicPartitions> {
    groups.unwrap_or_default().into_iter().map(|ObjectOnly(g)| TopicPartitions::new(g.topic, g.partitions)).collect()
}

/// `user_data` as hex (or `null`).
pub fn user_data_from(hex: Option<String>, at: &str) -> Result<Option<Bytes>, CliError> {
    hex.map(|h| parse_hex(&h).map(Bytes::from).map_err(|e| with_context(e, &format!("{at}user_data")))).transpose()
}

/// Prefixes an error's message with where in the document it was found.
pub fn with_context(e: CliError, at: &str) -> CliError {
    match e {
        CliError::Input(m) => CliError::Input(format!("{at}: {m}")),
        CliError::Usage(m) => CliError::Usage(format!("{at}: {m}")),
        other => other,
    }
}

/// The decode shape of a subscription as `kcp encode` reads it. The output-only keys of
/// `kcp decode` (`version`, `read_as_version`, `trailing_bytes`, `warnings`) are accepted and
/// ignored; any other unknown key is an error, and `kind`, when present, must say subscription.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, expecting = "a subscription object (the shape `kcp decode` prints)")]
pub struct SubscriptionShape {
    kind: Option<String>,
    /// An assignment's key: refused below with a message that says so.
    assigned_partitions: Option<IgnoredAny>,
    topics: Option<Vec<String>>,
    user_data: Option<String>,
    owned_partitions: Option<Vec<ObjectOnly<GroupShape>>>,
    generation_id: Option<i32>,
    rack_id: Option<String>,
    #[serde(rename = "version")]
    _version: Option<IgnoredAny>,
    #[serde(rename = "read_as_version")]
    _read_as_version: Option<IgnoredAny>,
    #[serde(rename = "trailing_bytes")]
    _trailing_bytes: Option<IgnoredAny>,
    #[serde(rename = "warnings")]
    _warnings: Option<IgnoredAny>,
}

/// The decode shape of an assignment as `kcp encode` reads it.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, expecting = "an assignment object (the shape `kcp decode` prints)")]
pub struct AssignmentShape {
    kind: Option<String>,
    /// A subscription's keys: refused below with a message that says so.
    topics: Option<IgnoredAny>,
    owned_partitions: Option<IgnoredAny>,
    generation_id: Option<IgnoredAny>,
    rack_id: Option<IgnoredAny>,
    assigned_partitions: Option<Vec<ObjectOnly<GroupShape>>>,
    user_data: Option<String>,
    #[serde(rename = "version")]
    _version: Option<IgnoredAny>,
    #[serde(rename = "read_as_version")]
    _read_as_version: Option<IgnoredAny>,
    #[serde(rename = "trailing_bytes")]
    _trailing_bytes: Option<IgnoredAny>,
    #[serde(rename = "warnings")]
    _warnings: Option<IgnoredAny>,
}

fn check_kind(kind: Option<&str>, want: &str) -> Result<(), CliError> {
    match kind {
        None => Ok(()),
        Some(k) if k == want => Ok(()),
        Some(k) => Err(CliError::usage(format!(
            "\"kind\" is {}, not {want:?}: this document is not a {want} (pass --kind {})",
            super::text::quoted(k, 40),
            if want == "subscription" { "assignment" } else { "subscription" }
        ))),
    }
}

impl SubscriptionShape {
    /// The subscription it describes.
    pub fn into_subscription(self, at: &str) -> Result<Subscription, CliError> {
        check_kind(self.kind.as_deref(), "subscription")?;
        if self.assigned_partitions.is_some() {
            return Err(CliError::usage(
                "\"assigned_partitions\" is an assignment's key: this document is not a subscription (pass --kind \
                 assignment)",
            ));
        }
        let mut subscription = Subscription::new(self.topics.unwrap_or_default())
            .with_user_data(user_data_from(self.user_data, at)?)
            .with_owned_partitions(groups_from(self.owned_partitions))
            .with_generation_id(self.generation_id.unwrap_or(-1));
        subscription.rack_id = self.rack_id;
        Ok(subscription)
    }
}

impl AssignmentShape {
    /// The assignment it describes.
    pub fn into_assignment(self) -> Result<Assignment, CliError> {
        check_kind(self.kind.as_deref(), "assignment")?;
        let subscription_keys = [
            ("topics", self.topics.is_some()),
            ("owned_partitions", self.owned_partitions.is_some()),
            ("generation_id", self.generation_id.is_some()),
            ("rack_id", self.rack_id.is_some()),
        ];
        if let Some((key, _)) = subscription_keys.iter().find(|(_, given)| *given) {
            return Err(CliError::usage(format!(
                "\"{key}\" is a subscription's key: this document is not an assignment (pass --kind subscription)"
            )));
        }
        Ok(Assignment::new(groups_from(self.assigned_partitions)).with_user_data(user_data_from(self.user_data, "")?))
    }
}

/// Parses a JSON document of type `T`: malformed JSON is invalid input (exit 1); a document of
/// the wrong shape (unknown key, wrong type) is a usage error naming the key (exit 2).
pub fn parse_document<T: serde::de::DeserializeOwned + Expecting>(bytes: &[u8], what: &str) -> Result<T, CliError> {
    serde_json::from_slice::<ObjectOnly<T>>(bytes).map(|o| o.0).map_err(|e| {
        let message = super::text::excerpt(&super::text::plain_numbers(&e.to_string()), 400);
        match e.classify() {
            serde_json::error::Category::Data => CliError::usage(format!("{what}: {message}")),
            _ => CliError::input(format!("{what} is not valid JSON: {message}")),
        }
    })
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

/// What a document type is called in errors ("expected a subscription object").
pub trait Expecting {
    /// The phrase after "expected".
    const EXPECTING: &'static str;
}

/// A JSON object read as `T`, refusing the array form serde would otherwise accept for a
/// struct (`[1, 2, 3]` is not a subscription).
#[derive(Debug)]
pub struct ObjectOnly<T>(pub T);

impl<'de, T: Deserialize<'de> + Expecting> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Expecting> serde::de::Visitor<'de> for Visit<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData)).map(ObjectOnly)
    }
}

impl Expecting for GroupShape {
    const EXPECTING: &'static str = "an object {\"topic\": string, \"partitions\": [int32, ...]}";
}

impl Expecting for SubscriptionShape {
    const EXPECTING: &'static str = "a subscription object (the shape `kcp decode` prints)";
}

impl Expecting for AssignmentShape {
    const EXPECTING: &'static str = "an assignment object (the shape `kcp decode` prints)";
}
