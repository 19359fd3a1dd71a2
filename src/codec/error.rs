//! Errors: one decode error type naming the kind, the byte offset and the field path.

use core::fmt;

use crate::codec::version::Version;

/// Which message a decode error belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessageKind {
    /// `ConsumerProtocolSubscription` (JoinGroup protocol metadata).
    Subscription,
    /// `ConsumerProtocolAssignment` (SyncGroup assignment).
    Assignment,
    /// The `cooperative-sticky` assignor's userData (an `int32` generation).
    CooperativeStickyUserData,
    /// The `sticky` assignor's userData (previous assignment and generation).
    StickyUserData,
}

impl MessageKind {
    /// The name used in error messages and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Subscription => "subscription",
            MessageKind::Assignment => "assignment",
            MessageKind::CooperativeStickyUserData => "cooperative_sticky_user_data",
            MessageKind::StickyUserData => "sticky_user_data",
        }
    }
}

/// One step of a [`FieldPath`]: a field name and, for array elements, the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PathSegment {
    /// The field's name as in Apache Kafka's message schema, in snake case.
    pub name: &'static str,
    /// The element index when the segment is an element of an array.
    pub index: Option<u32>,
}

/// Where in a message a decode error happened, for example `owned_partitions[1].partitions[0]`.
///
/// Stored inline (no allocation), at most two levels deep, which covers every field of the
/// consumer protocol messages.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldPath {
    segments: [PathSegment; 2],
    depth: u8,
}

impl FieldPath {
    pub(crate) const fn field(name: &'static str) -> Self {
        FieldPath { segments: [PathSegment { name, index: None }, PathSegment { name: "", index: None }], depth: 1 }
    }

    pub(crate) const fn element(name: &'static str, index: usize) -> Self {
        let mut path = Self::field(name);
        path.segments[0].index = Some(index as u32);
        path
    }

    pub(crate) const fn child(mut self, name: &'static str, index: Option<usize>) -> Self {
        self.segments[1] = PathSegment {
            name,
            index: match index {
                Some(i) => Some(i as u32),
                None => None,
            },
        };
        self.depth = 2;
        self
    }

    /// The segments from the outermost field inwards.
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments[..self.depth as usize]
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments().iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(segment.name)?;
            if let Some(index) = segment.index {
                write!(f, "[{index}]")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FieldPath({self})")
    }
}

/// What was wrong with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended inside a field.
    Truncated {
        /// Bytes the field needed.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// Length `-1` (null) for a field that is not nullable.
    UnexpectedNull,
    /// A length or count below `-1` (or below `0` where `-1` means null and strict mode is on).
    NegativeLength(i32),
    /// A string that is not valid UTF-8.
    InvalidUtf8,
    /// A negative version header.
    UnsupportedVersion(i16),
    /// An array count larger than the bytes left could possibly hold.
    TooManyElements {
        /// The count on the wire.
        count: i32,
        /// Bytes left after the count.
        remaining: usize,
    },
    /// Bytes after the last field (strict mode only).
    TrailingBytes(usize),
}

impl DecodeErrorKind {
    /// The stable snake-case name used in `kcp`'s JSON (`truncated`, `unexpected_null`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            DecodeErrorKind::Truncated { .. } => "truncated",
            DecodeErrorKind::UnexpectedNull => "unexpected_null",
            DecodeErrorKind::NegativeLength(_) => "negative_length",
            DecodeErrorKind::InvalidUtf8 => "invalid_utf8",
            DecodeErrorKind::UnsupportedVersion(_) => "unsupported_version",
            DecodeErrorKind::TooManyElements { .. } => "too_many_elements",
            DecodeErrorKind::TrailingBytes(_) => "trailing_bytes",
        }
    }
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeErrorKind::Truncated { needed, available } => {
                write!(f, "needed {needed} bytes, {available} left")
            }
            DecodeErrorKind::UnexpectedNull => f.write_str("null (length -1) for a field that is not nullable"),
            DecodeErrorKind::NegativeLength(len) => write!(f, "negative length {len}"),
            DecodeErrorKind::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            DecodeErrorKind::UnsupportedVersion(v) => write!(f, "unsupported version {v}"),
            DecodeErrorKind::TooManyElements { count, remaining } => {
                write!(f, "count {count} exceeds the {remaining} bytes left")
            }
            DecodeErrorKind::TrailingBytes(n) => write!(f, "{n} unexpected trailing bytes"),
        }
    }
}

/// A decode failure: the kind, the byte offset in the input (the version header is at offset 0)
/// and the field being read.
///
/// ```
/// use kafka_consumer_protocol::{SubscriptionView, DecodeErrorKind};
/// // Version 3, one topic whose 3-byte name is missing.
/// let err = SubscriptionView::decode(&[0, 3, 0, 0, 0, 1, 0, 3]).unwrap_err();
/// assert_eq!(err.kind(), DecodeErrorKind::Truncated { needed: 3, available: 0 });
/// assert_eq!(err.offset(), 8);
/// assert_eq!(err.field().to_string(), "topics[0]");
/// assert_eq!(err.to_string(), "subscription: topics[0] at byte 8: truncated: needed 3 bytes, 0 left");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeError {
    message: MessageKind,
    kind: DecodeErrorKind,
    offset: usize,
    field: FieldPath,
}

impl DecodeError {
    #[cold]
    pub(crate) fn new(message: MessageKind, kind: DecodeErrorKind, offset: usize, field: FieldPath) -> Self {
        DecodeError { message, kind, offset, field }
    }

    /// What was wrong.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }

    /// Byte offset in the input where the offending field starts.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The field being read, for example `owned_partitions[1].partitions[0]`.
    pub fn field(&self) -> FieldPath {
        self.field
    }

    /// The message being decoded.
    pub fn message_kind(&self) -> MessageKind {
        self.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} at byte {}: {}: {}",
            self.message.as_str(),
            self.field,
            self.offset,
            self.kind.code().replace('_', " "),
            self.kind
        )
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeError")
            .field("message", &self.message)
            .field("kind", &self.kind)
            .field("offset", &self.offset)
            .field("field", &format_args!("{}", self.field))
            .finish()
    }
}

impl std::error::Error for DecodeError {}

/// An encode failure: a value that the wire format cannot represent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// A string longer than 32,767 bytes (the `int16` length limit).
    StringTooLong {
        /// The field.
        field: &'static str,
        /// Its length in bytes.
        len: usize,
    },
    /// An array or byte field longer than `i32::MAX`.
    TooManyElements {
        /// The field.
        field: &'static str,
        /// Its length.
        len: usize,
    },
    /// A version the message does not have.
    UnsupportedVersion(Version),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::StringTooLong { field, len } => {
                write!(f, "{field}: string of {len} bytes exceeds the 32767-byte limit")
            }
            EncodeError::TooManyElements { field, len } => {
                write!(f, "{field}: {len} elements exceed the int32 limit")
            }
            EncodeError::UnsupportedVersion(v) => write!(f, "unsupported version {}", v.as_i16()),
        }
    }
}

impl std::error::Error for EncodeError {}
