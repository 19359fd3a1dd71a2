//! The one error type of the `__consumer_offsets` decoder: what went wrong, where, in which field.

use core::fmt;

/// What went wrong while reading a segment or decoding a record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogErrorKind {
    /// The input ended inside the named field.
    Truncated,
    /// A batch's length field claims more bytes than the file still holds.
    BatchBeyondFile {
        /// The length the batch claims (bytes after its length field).
        length: i32,
        /// The bytes that were left.
        available: u64,
    },
    /// A batch longer than [`super::Limits::max_batch_bytes`]; it was skipped unread.
    BatchTooLarge {
        /// The length the batch claims.
        length: i32,
        /// The limit in force.
        limit: usize,
    },
    /// A batch length too small for its header or negative: the rest of the file cannot be framed.
    InvalidBatchLength(i32),
    /// A magic byte other than 0, 1 or 2.
    UnsupportedMagic(i8),
    /// Compression codec bits naming no codec (5, 6, 7).
    UnknownCompression(u8),
    /// The named codec refused the compressed bytes.
    Decompression(&'static str),
    /// A compressed batch inflates past [`super::Limits::max_inflated_bytes`].
    InflatedTooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// The batch declares more records than its bytes hold.
    RecordCountBeyondBatch {
        /// The count in the batch header.
        declared: i32,
        /// The records read before the bytes ran out.
        read: i32,
    },
    /// A negative or impossible length or count (other than a null's -1).
    InvalidLength(i64),
    /// A varint longer than its type allows.
    InvalidVarint,
    /// A string that is not UTF-8.
    InvalidUtf8,
    /// A record whose key is null (a coordinator record always has a key).
    MissingKey,
    /// A key type id this decoder does not know (neither a consumer, share nor streams group record).
    UnknownRecordType(i16),
    /// A value version the record type's schema does not define.
    UnknownValueVersion {
        /// The key type id.
        record_type: i16,
        /// The value's version.
        version: i16,
    },
    /// Reading the input failed.
    Io(std::io::ErrorKind),
}

/// An error of the `__consumer_offsets` decoder, with the byte position and the field.
///
/// For framing errors (batches, records, decompression) the position is the byte offset in the
/// segment file; for key and value errors it is the offset inside the key's or the value's bytes
/// and the field starts with `key.` or `value.`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError {
    kind: LogErrorKind,
    position: u64,
    field: &'static str,
}

impl LogError {
    pub(crate) fn new(kind: LogErrorKind, position: u64, field: &'static str) -> Self {
        LogError { kind, position, field }
    }

    /// What went wrong.
    pub fn kind(&self) -> &LogErrorKind {
        &self.kind
    }

    /// The byte position (see the type's doc for what it counts from).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The field being read, in Kafka's schema names (for example `value.members[].subscription`).
    pub fn field(&self) -> &'static str {
        self.field
    }
}

impl LogErrorKind {
    /// A stable snake-case name of the kind, for JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            LogErrorKind::Truncated => "truncated",
            LogErrorKind::BatchBeyondFile { .. } => "batch_beyond_file",
            LogErrorKind::BatchTooLarge { .. } => "batch_too_large",
            LogErrorKind::InvalidBatchLength(_) => "invalid_batch_length",
            LogErrorKind::UnsupportedMagic(_) => "unsupported_magic",
            LogErrorKind::UnknownCompression(_) => "unknown_compression",
            LogErrorKind::Decompression(_) => "decompression",
            LogErrorKind::InflatedTooLarge { .. } => "inflated_too_large",
            LogErrorKind::RecordCountBeyondBatch { .. } => "record_count_beyond_batch",
            LogErrorKind::InvalidLength(_) => "invalid_length",
            LogErrorKind::InvalidVarint => "invalid_varint",
            LogErrorKind::InvalidUtf8 => "invalid_utf8",
            LogErrorKind::MissingKey => "missing_key",
            LogErrorKind::UnknownRecordType(_) => "unknown_record_type",
            LogErrorKind::UnknownValueVersion { .. } => "unknown_value_version",
            LogErrorKind::Io(_) => "io",
        }
    }
}

impl fmt::Display for LogErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogErrorKind::Truncated => f.write_str("input ends inside the field"),
            LogErrorKind::BatchBeyondFile { length, available } => {
                write!(f, "batch length {length} goes beyond the file ({available} bytes left)")
            }
            LogErrorKind::BatchTooLarge { length, limit } => {
                write!(f, "batch length {length} is above the limit of {limit} bytes; skipped")
            }
            LogErrorKind::InvalidBatchLength(n) => write!(f, "invalid batch length {n}"),
            LogErrorKind::UnsupportedMagic(m) => write!(f, "unsupported magic {m}"),
            LogErrorKind::UnknownCompression(c) => write!(f, "unknown compression codec {c}"),
            LogErrorKind::Decompression(codec) => write!(f, "{codec} data does not decompress"),
            LogErrorKind::InflatedTooLarge { limit } => {
                write!(f, "compressed batch inflates past the limit of {limit} bytes")
            }
            LogErrorKind::RecordCountBeyondBatch { declared, read } => {
                write!(f, "batch declares {declared} records but holds {read}")
            }
            LogErrorKind::InvalidLength(n) => write!(f, "invalid length or count {n}"),
            LogErrorKind::InvalidVarint => f.write_str("varint too long"),
            LogErrorKind::InvalidUtf8 => f.write_str("string is not UTF-8"),
            LogErrorKind::MissingKey => f.write_str("record has no key"),
            LogErrorKind::UnknownRecordType(t) => write!(f, "unknown record type {t}"),
            LogErrorKind::UnknownValueVersion { record_type, version } => {
                write!(f, "record type {record_type} has no value version {version}")
            }
            LogErrorKind::Io(kind) => write!(f, "read failed: {kind}"),
        }
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {} ({})", self.kind, self.position, self.field)
    }
}

impl std::error::Error for LogError {}
