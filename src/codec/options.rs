//! Decode options and lenient repairs.

use core::fmt;

use crate::codec::version::Version;

/// How to decode: as which reader, how strictly, and whether to repair known third-party defects.
///
/// The default is Apache Kafka's Java client: the newest reader, trailing bytes ignored, no repairs.
///
/// ```
/// use kafka_consumer_protocol::{DecodeOptions, SubscriptionView, Version};
/// // A v3 subscription read by a consumer that only knows v0: owned partitions, generation
/// // and rack become trailing bytes it ignores.
/// let bytes = [0, 3, 0, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 7, 255, 255];
/// let sub = SubscriptionView::decode_with(&bytes, DecodeOptions::new().reader_version(Version::V0)).unwrap();
/// assert_eq!(sub.read_as(), Version::V0);
/// assert_eq!(sub.generation_id(), -1);
/// assert_eq!(sub.trailing_bytes(), 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecodeOptions {
    pub(crate) reader_version: Version,
    pub(crate) strict: bool,
    pub(crate) lenient: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions { reader_version: Version::LATEST, strict: false, lenient: false }
    }
}

impl DecodeOptions {
    /// Java's behaviour: newest reader, trailing bytes ignored, no repairs.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decode as a reader that knows versions up to `version` does (what an older consumer sees).
    pub fn reader_version(mut self, version: Version) -> Self {
        self.reader_version = version;
        self
    }

    /// Reject trailing bytes after the last field read (`trailing_bytes` error), and nullable
    /// lengths below `-1`, which Java reads as null.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Accept the malformed payloads that real third-party clients send: a payload whose
    /// version promises fields that are simply absent (it ends exactly where they would start)
    /// is read with the layout that the bytes actually have, and the repair is reported.
    pub fn lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }

    /// The reader version.
    pub fn get_reader_version(&self) -> Version {
        self.reader_version
    }

    /// Whether strict mode is on.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// Whether lenient mode is on.
    pub fn is_lenient(&self) -> bool {
        self.lenient
    }
}

/// A repair made in lenient mode: the payload declared `declared_version` but ended right
/// after the fields of `read_as`, so the fields appended after `read_as` took their defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repair {
    /// The version on the wire.
    pub declared_version: i16,
    /// The layout the bytes actually had.
    pub read_as: Version,
    /// Which message was repaired.
    pub message: crate::codec::error::MessageKind,
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::codec::error::MessageKind;
        let missing = match (self.message, self.read_as) {
            (MessageKind::Assignment, _) => "user_data",
            (_, Version::V0) => "owned_partitions, generation_id and rack_id",
            (_, Version::V1) => "generation_id and rack_id",
            (_, _) => "rack_id",
        };
        let known = match (self.message, self.read_as) {
            (MessageKind::Subscription, Version::V0) if self.declared_version == 1 => {
                " (known defect of kafkajs < 2.2.2, segmentio/kafka-go and bsm/sarama-cluster)"
            }
            (MessageKind::Subscription, Version::V0) if self.declared_version >= 3 => {
                " (known defect of clients that declare v3 but write v0 fields, e.g. samsa)"
            }
            _ => "",
        };
        write!(
            f,
            "lenient: version {} payload ends before {missing}; read with the {} layout{known}",
            self.declared_version, self.read_as
        )
    }
}
