//! A subscription and an assignment as JSON documents (feature `json`): the shape `kcp decode`
//! prints, read back. This is `kcp encode`'s input; [`crate::assignor::json`] (`kcp assign`'s
//! group document) and [`crate::sim::json`] (`kcp simulate`'s scenario) are its neighbours.
//!
//! ```
//! use kafka_consumer_protocol::codec::json::{assignment_from_json, subscription_from_json, DocumentErrorKind};
//! use kafka_consumer_protocol::codec::{SubscriptionView, Version};
//!
//! let subscription = subscription_from_json(br#"{"topics": ["orders"], "generation_id": 7,
//!     "owned_partitions": [{"topic": "orders", "partitions": [0, 1]}], "user_data": null}"#).unwrap();
//! let bytes = subscription.encode(Version::V3).unwrap();
//! assert_eq!(SubscriptionView::decode(&bytes).unwrap().generation_id(), 7);
//!
//! // A document of the other kind is refused with an error that says so.
//! let err = assignment_from_json(br#"{"topics": ["orders"]}"#).unwrap_err();
//! assert_eq!(err.kind(), DocumentErrorKind::Shape);
//! assert!(err.to_string().contains("is a subscription's key"), "{err}");
//! ```
//!
//! The output-only keys of `kcp decode` (`version`, `read_as_version`, `trailing_bytes`,
//! `warnings`) are accepted and ignored; any other unknown key is an error naming it, and `kind`,
//! when present, must name the message. Byte fields are hex (spaces, colons and a `0x` prefix
//! allowed, see [`parse_hex`]) or `null`. Strings from the document quoted in an error are
//! escaped and cut, so a message never carries terminal control sequences or a whole buffer.

use std::fmt;

use bytes::Bytes;
use serde::de::{self, IgnoredAny};
use serde::Deserialize;

use super::escape::{excerpt, quoted};
use super::{Assignment, Subscription, TopicPartitions};

/// Why a JSON input document was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentError {
    kind: DocumentErrorKind,
    message: String,
}

/// What kind of problem a [`DocumentError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DocumentErrorKind {
    /// Not JSON at all.
    Syntax,
    /// JSON of the wrong shape: an unknown key, a value of the wrong type, a document of another
    /// kind, keys that exclude each other.
    Shape,
    /// A value that cannot be used: bad hex, a count out of range, a limit exceeded, a message
    /// that cannot be encoded.
    Value,
}

impl DocumentError {
    pub(crate) fn new(kind: DocumentErrorKind, message: impl Into<String>) -> Self {
        DocumentError { kind, message: message.into() }
    }

    pub(crate) fn shape(message: impl Into<String>) -> Self {
        Self::new(DocumentErrorKind::Shape, message)
    }

    pub(crate) fn value(message: impl Into<String>) -> Self {
        Self::new(DocumentErrorKind::Value, message)
    }

    /// What kind of problem it is.
    pub fn kind(&self) -> DocumentErrorKind {
        self.kind
    }

    /// The same error, its message prefixed with where in the document it was found.
    pub(crate) fn at(self, at: &str) -> Self {
        DocumentError { kind: self.kind, message: format!("{at}: {}", self.message) }
    }
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DocumentError {}

/// `message` with every number that serde writes in exponent form (`1e+23`, between backquotes)
/// written out in full, so that an error quotes the number as the input could have.
pub(crate) fn plain_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for (i, part) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        match part.parse::<f64>() {
            Ok(x) if i % 2 == 1 && part.contains(['e', 'E']) && x.is_finite() => out.push_str(&format!("{x}")),
            _ => out.push_str(part),
        }
    }
    out
}

/// Parses the hex of a byte field: optional `0x` prefix, spaces, colons and line breaks between
/// digits.
///
/// ```
/// use kafka_consumer_protocol::codec::json::parse_hex;
/// assert_eq!(parse_hex("0x00:01 ff").unwrap(), [0, 1, 255]);
/// assert!(parse_hex("abc").unwrap_err().to_string().contains("odd number of digits"));
/// ```
pub fn parse_hex(text: &str) -> Result<Vec<u8>, DocumentError> {
    let text = text.trim();
    let text = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).unwrap_or(text);
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b':').collect();
    let nibble = |c: u8| (c as char).to_digit(16);
    if let Some(at) = digits.iter().position(|&c| nibble(c).is_none()) {
        let bad = &digits[at..digits.len().min(at + 2)];
        return Err(DocumentError::value(format!(
            "invalid hex: {} at digit {at}",
            quoted(&String::from_utf8_lossy(bad), 8)
        )));
    }
    if !digits.len().is_multiple_of(2) {
        return Err(DocumentError::value(format!("invalid hex: odd number of digits ({})", digits.len())));
    }
    Ok(digits
        .chunks_exact(2)
        .map(|pair| (nibble(pair[0]).unwrap_or(0) * 16 + nibble(pair[1]).unwrap_or(0)) as u8)
        .collect())
}

/// What a document type is called in errors ("expected a subscription object").
pub(crate) trait Expecting {
    /// The phrase after "expected".
    const EXPECTING: &'static str;
}

/// A JSON object read as `T`, refusing the array form serde would otherwise accept for a
/// struct (`[1, 2, 3]` is not a subscription).
pub(crate) struct ObjectOnly<T>(pub(crate) T);

impl<'de, T: Deserialize<'de> + Expecting> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Expecting> de::Visitor<'de> for Visit<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData)).map(ObjectOnly)
    }
}

/// Parses a JSON document of type `T` (`what` names it in errors): malformed JSON is
/// [`DocumentErrorKind::Syntax`], a document of the wrong shape [`DocumentErrorKind::Shape`].
pub(crate) fn parse_document<T: de::DeserializeOwned + Expecting>(
    bytes: &[u8],
    what: &str,
) -> Result<T, DocumentError> {
    serde_json::from_slice::<ObjectOnly<T>>(bytes).map(|o| o.0).map_err(|e| {
        let message = excerpt(&plain_numbers(&e.to_string()), 400);
        match e.classify() {
            serde_json::error::Category::Data => DocumentError::shape(format!("{what}: {message}")),
            _ => DocumentError::new(DocumentErrorKind::Syntax, format!("{what} is not valid JSON: {message}")),
        }
    })
}

/// `{"topic", "partitions"}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object {\"topic\": string, \"partitions\": [int32, ...]}")]
pub(crate) struct PartitionsDoc {
    topic: String,
    partitions: Vec<i32>,
}

impl Expecting for PartitionsDoc {
    const EXPECTING: &'static str = "an object {\"topic\": string, \"partitions\": [int32, ...]}";
}

/// Partition groups as the codec takes them.
pub(crate) fn groups_from(groups: Option<Vec<ObjectOnly<PartitionsDoc>>>) -> Vec<TopicPartitions> {
    groups.unwrap_or_default().into_iter().map(|ObjectOnly(g)| TopicPartitions::new(g.topic, g.partitions)).collect()
}

/// `user_data` as hex (or `null`); `at` is the path prefix of the key in errors.
pub(crate) fn user_data_from(hex: Option<String>, at: &str) -> Result<Option<Bytes>, DocumentError> {
    hex.map(|h| parse_hex(&h).map(Bytes::from).map_err(|e| e.at(&format!("{at}user_data")))).transpose()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a subscription object (the shape `kcp decode` prints)")]
struct SubscriptionDoc {
    kind: Option<String>,
    /// An assignment's key: refused below with a message that says so.
    assigned_partitions: Option<IgnoredAny>,
    topics: Option<Vec<String>>,
    user_data: Option<String>,
    owned_partitions: Option<Vec<ObjectOnly<PartitionsDoc>>>,
    generation_id: Option<i32>,
    rack_id: Option<String>,
    // The output-only keys of `kcp decode`, accepted and ignored. They are repeated in
    // `AssignmentDoc` rather than `#[serde(flatten)]`ed from one struct: with
    // `deny_unknown_fields` a flattened struct still refuses unknown keys (serde 1.0.229), but
    // the error loses its "expected one of ..." list and points at the document's end instead
    // of the key (`unknown_keys_are_named_with_the_accepted_ones_and_where` pins both).
    #[serde(rename = "version")]
    _version: Option<IgnoredAny>,
    #[serde(rename = "read_as_version")]
    _read_as_version: Option<IgnoredAny>,
    #[serde(rename = "trailing_bytes")]
    _trailing_bytes: Option<IgnoredAny>,
    #[serde(rename = "warnings")]
    _warnings: Option<IgnoredAny>,
}

impl Expecting for SubscriptionDoc {
    const EXPECTING: &'static str = "a subscription object (the shape `kcp decode` prints)";
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an assignment object (the shape `kcp decode` prints)")]
struct AssignmentDoc {
    kind: Option<String>,
    /// A subscription's keys: refused below with a message that says so.
    topics: Option<IgnoredAny>,
    owned_partitions: Option<IgnoredAny>,
    generation_id: Option<IgnoredAny>,
    rack_id: Option<IgnoredAny>,
    assigned_partitions: Option<Vec<ObjectOnly<PartitionsDoc>>>,
    user_data: Option<String>,
    // `kcp decode`'s output-only keys, as in `SubscriptionDoc` (which says why not flattened).
    #[serde(rename = "version")]
    _version: Option<IgnoredAny>,
    #[serde(rename = "read_as_version")]
    _read_as_version: Option<IgnoredAny>,
    #[serde(rename = "trailing_bytes")]
    _trailing_bytes: Option<IgnoredAny>,
    #[serde(rename = "warnings")]
    _warnings: Option<IgnoredAny>,
}

impl Expecting for AssignmentDoc {
    const EXPECTING: &'static str = "an assignment object (the shape `kcp decode` prints)";
}

fn check_kind(kind: Option<&str>, want: &str) -> Result<(), DocumentError> {
    match kind {
        None => Ok(()),
        Some(k) if k == want => Ok(()),
        Some(k) => Err(DocumentError::shape(format!(
            "\"kind\" is {}, not {want:?}: this document is not a {want} (pass --kind {})",
            quoted(k, 40),
            if want == "subscription" { "assignment" } else { "subscription" }
        ))),
    }
}

/// The subscription a JSON document describes (the decode shape; absent fields take the schema
/// defaults: no topics, no owned partitions, generation -1, no rack, null userData).
pub fn subscription_from_json(text: &[u8]) -> Result<Subscription, DocumentError> {
    let doc: SubscriptionDoc = parse_document(text, "the subscription")?;
    check_kind(doc.kind.as_deref(), "subscription")?;
    if doc.assigned_partitions.is_some() {
        return Err(DocumentError::shape(
            "\"assigned_partitions\" is an assignment's key: this document is not a subscription (pass --kind \
             assignment)",
        ));
    }
    let mut subscription = Subscription::new(doc.topics.unwrap_or_default())
        .with_user_data(user_data_from(doc.user_data, "")?)
        .with_owned_partitions(groups_from(doc.owned_partitions))
        .with_generation_id(doc.generation_id.unwrap_or(-1));
    subscription.rack_id = doc.rack_id;
    Ok(subscription)
}

/// The assignment a JSON document describes (the decode shape; partition groups keep their
/// order).
pub fn assignment_from_json(text: &[u8]) -> Result<Assignment, DocumentError> {
    let doc: AssignmentDoc = parse_document(text, "the assignment")?;
    check_kind(doc.kind.as_deref(), "assignment")?;
    let subscription_keys = [
        ("topics", doc.topics.is_some()),
        ("owned_partitions", doc.owned_partitions.is_some()),
        ("generation_id", doc.generation_id.is_some()),
        ("rack_id", doc.rack_id.is_some()),
    ];
    if let Some((key, _)) = subscription_keys.iter().find(|(_, given)| *given) {
        return Err(DocumentError::shape(format!(
            "\"{key}\" is a subscription's key: this document is not an assignment (pass --kind subscription)"
        )));
    }
    Ok(Assignment::new(groups_from(doc.assigned_partitions)).with_user_data(user_data_from(doc.user_data, "")?))
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::codec::escape::terminal_safe;

    #[test]
    fn escapes_what_acts_on_a_terminal() {
        assert!(matches!(terminal_safe("use1-az1"), Cow::Borrowed("use1-az1")));
        assert_eq!(terminal_safe("a\nb\x1b[2J\\"), "a\\nb\\u{1b}[2J\\\\");
        assert_eq!(terminal_safe("x\u{202e}y\u{85}\r\t"), "x\\u{202e}y\\u{85}\\r\\t");
        assert_eq!(terminal_safe("\u{2066}\u{2028}\u{200f}"), "\\u{2066}\\u{2028}\\u{200f}");
    }

    #[test]
    fn quoted_strings_are_escaped_and_cut() {
        assert_eq!(quoted("a\nb\u{1b}[2J\\", 40), "\"a\\nb\\u{1b}[2J\\\\\"");
        assert_eq!(quoted("x\u{202e}", 40), "\"x\\u{202e}\"");
        assert_eq!(quoted("abcdef", 3), "\"abc\"... (6 bytes)");
        assert_eq!(excerpt(&"x".repeat(1000), 4), "xxxx... (1000 bytes in all)");
    }

    #[test]
    fn numbers_are_written_out() {
        assert_eq!(
            plain_numbers("invalid type: floating point `1e+23`, expected i64"),
            "invalid type: floating point `100000000000000000000000`, expected i64"
        );
        assert_eq!(plain_numbers("unknown field `e1`, expected `topics`"), "unknown field `e1`, expected `topics`");
    }

    #[test]
    fn the_kinds_of_error() {
        assert_eq!(subscription_from_json(b"{").unwrap_err().kind(), DocumentErrorKind::Syntax);
        assert_eq!(subscription_from_json(b"[1]").unwrap_err().kind(), DocumentErrorKind::Shape);
        assert_eq!(subscription_from_json(br#"{"topicz": []}"#).unwrap_err().kind(), DocumentErrorKind::Shape);
        let bad_hex = subscription_from_json(br#"{"user_data": "zz"}"#).unwrap_err();
        assert_eq!(bad_hex.kind(), DocumentErrorKind::Value);
        assert!(bad_hex.to_string().starts_with("user_data: invalid hex"), "{bad_hex}");
        assert!(subscription_from_json(br#"{"kind": "assignment"}"#).unwrap_err().to_string().contains("--kind"));
    }

    #[test]
    fn unknown_keys_are_named_with_the_accepted_ones_and_where() {
        // A typo is easiest to fix next to the list of what is accepted and where it is.
        let err = subscription_from_json(br#"{"topics": ["a"], "topcs": 1, "version": 3}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the subscription: unknown field `topcs`, expected one of `kind`, `assigned_partitions`, `topics`, \
             `user_data`, `owned_partitions`, `generation_id`, `rack_id`, `version`, `read_as_version`, \
             `trailing_bytes`, `warnings` at line 1 column 25"
        );
        let err = assignment_from_json(br#"{"assigned_partitions": [], "x": 1}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the assignment: unknown field `x`, expected one of `kind`, `topics`, `owned_partitions`, \
             `generation_id`, `rack_id`, `assigned_partitions`, `user_data`, `version`, `read_as_version`, \
             `trailing_bytes`, `warnings` at line 1 column 31"
        );
        // The output-only keys of `kcp decode` are accepted, with any value, in both.
        let decoded = br#"{"version": 3, "read_as_version": 3, "trailing_bytes": 0, "warnings": [{"x": 1}]}"#;
        assert!(subscription_from_json(decoded).is_ok());
        assert!(assignment_from_json(decoded).is_ok());
    }
}
