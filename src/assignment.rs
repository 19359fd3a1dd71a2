//! `ConsumerProtocolAssignment`: what the leader gives each member in SyncGroup.

use core::fmt;

use bytes::Bytes;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, FieldPath, MessageKind};
use crate::lists::{read_topic_partitions_array, ArrayRegion, OptRange, TopicPartitions, TopicPartitionsList};
use crate::options::{DecodeOptions, Repair};
use crate::version::Version;
use crate::wire::{Reader, Sink};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Layout {
    version: i16,
    read_as: Version,
    assigned_partitions: ArrayRegion,
    user_data: OptRange,
    end: usize,
    repair: Option<Repair>,
}

const VERSION: FieldPath = FieldPath::field("version");
const USER_DATA: FieldPath = FieldPath::field("user_data");

fn parse(buf: &[u8], options: DecodeOptions) -> Result<Layout, DecodeError> {
    let mut r = Reader::new(buf, MessageKind::Assignment);
    let version = r.i16(VERSION)?;
    let Some(wire_layout) = Version::layout_for_wire(version) else {
        return Err(r.error(DecodeErrorKind::UnsupportedVersion(version), 0, VERSION));
    };
    let read_as = wire_layout.min(options.reader_version);
    let assigned_partitions = read_topic_partitions_array(&mut r, "assigned_partitions")?;
    let (user_data, repair) = if options.lenient && r.remaining() == 0 {
        // Some third-party leaders omit the trailing userData; read it as null.
        (OptRange::default(), Some(Repair { declared_version: version, read_as, message: MessageKind::Assignment }))
    } else {
        let ud = r.nullable_bytes(USER_DATA, options.strict)?;
        (OptRange::ending_at(r.pos(), ud), None)
    };
    if options.strict && r.remaining() > 0 {
        return Err(r.error(DecodeErrorKind::TrailingBytes(r.remaining()), r.pos(), FieldPath::field("end")));
    }
    Ok(Layout { version, read_as, assigned_partitions, user_data, end: r.pos(), repair })
}

crate::forms::decoded_forms! {
    /// A decoded assignment borrowing from the input (no allocation).
    ///
    /// ```
    /// use kafka_consumer_protocol::AssignmentView;
    /// // Version 1: foo-0 and foo-2, null userData.
    /// let bytes = [0, 1, 0, 0, 0, 1, 0, 3, b'f', b'o', b'o', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 255, 255, 255, 255];
    /// let a = AssignmentView::decode(&bytes)?;
    /// let parts: Vec<(&str, i32)> = a.assigned_partitions().pairs().collect();
    /// assert_eq!(parts, [("foo", 0), ("foo", 2)]);
    /// assert_eq!(a.user_data(), None);
    /// # Ok::<(), kafka_consumer_protocol::DecodeError>(())
    /// ```
    view AssignmentView;
    /// A decoded assignment that owns its input as [`Bytes`] (`Send + Sync + 'static`, no copies).
    buf AssignmentBuf;
    layout Layout; parse parse; message "assignment";
}

impl<'a> AssignmentView<'a> {
    /// Assigned partitions, grouped per topic as on the wire.
    pub fn assigned_partitions(&self) -> TopicPartitionsList<'a> {
        TopicPartitionsList {
            bytes: self.layout.assigned_partitions.bytes(self.buf),
            count: self.layout.assigned_partitions.count,
        }
    }

    /// Copies into the owned [`Assignment`].
    pub fn to_owned(&self) -> Assignment {
        Assignment {
            assigned_partitions: self.assigned_partitions().to_owned(),
            user_data: self.user_data().map(Bytes::copy_from_slice),
        }
    }
}

impl fmt::Debug for AssignmentView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AssignmentView")
            .field("version", &self.version())
            .field("read_as", &self.read_as())
            .field("assigned_partitions", &self.assigned_partitions())
            .field("user_data", &self.user_data())
            .field("trailing_bytes", &self.trailing_bytes())
            .finish()
    }
}

impl PartialEq for AssignmentView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.version() == other.version()
            && self.read_as() == other.read_as()
            && self.assigned_partitions() == other.assigned_partitions()
            && self.user_data() == other.user_data()
            && self.trailing_bytes() == other.trailing_bytes()
    }
}

/// An assignment as values.
///
/// Encoding groups partitions per topic in order of first appearance and keeps the partition
/// order given, as Apache Kafka's Java client does (it does not sort assignments).
///
/// ```
/// use kafka_consumer_protocol::{Assignment, TopicPartitions, Version};
/// let a = Assignment::new(vec![
///     TopicPartitions::new("orders", [2, 0]),
///     TopicPartitions::new("audit", [1]),
///     TopicPartitions::new("orders", [5]),
/// ]);
/// let back = Assignment::decode(&a.encode(Version::V3)?).unwrap();
/// assert_eq!(back.assigned_partitions, [TopicPartitions::new("orders", [2, 0, 5]), TopicPartitions::new("audit", [1])]);
/// # Ok::<(), kafka_consumer_protocol::EncodeError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Assignment {
    /// Assigned partitions, grouped per topic.
    pub assigned_partitions: Vec<TopicPartitions>,
    /// The assignor's userData; `None` is null on the wire.
    pub user_data: Option<Bytes>,
}

crate::forms::value_encoding!(Assignment);

impl Assignment {
    /// An assignment of these partitions with null userData.
    pub fn new(assigned_partitions: Vec<TopicPartitions>) -> Self {
        Assignment { assigned_partitions, user_data: None }
    }

    /// Decodes into owned values (copies names and userData).
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        AssignmentView::decode(buf).map(|v| v.to_owned())
    }

    fn write<S: Sink>(&self, version: Version, sink: &mut S) -> Result<(), EncodeError> {
        sink.i16(version.as_i16());
        let groups = &self.assigned_partitions;
        // Java writes a flat partition list grouped by topic: an empty group cannot exist, and a
        // topic listed twice is merged into its first appearance.
        let distinct = distinct_topics(groups);
        if distinct && groups.iter().all(|g| !g.partitions.is_empty()) {
            sink.count(groups.len(), "assigned_partitions")?;
            for g in groups {
                sink.string(&g.topic, "assigned_partitions.topic")?;
                sink.count(g.partitions.len(), "assigned_partitions.partitions")?;
                for &p in &g.partitions {
                    sink.i32(p);
                }
            }
        } else {
            let first =
                |i: usize| groups[..i].iter().all(|earlier| earlier.topic != groups[i].topic) && total(groups, i) > 0;
            sink.count((0..groups.len()).filter(|&i| first(i)).count(), "assigned_partitions")?;
            for i in (0..groups.len()).filter(|&i| first(i)) {
                sink.string(&groups[i].topic, "assigned_partitions.topic")?;
                sink.count(total(groups, i), "assigned_partitions.partitions")?;
                for g in groups[i..].iter().filter(|g| g.topic == groups[i].topic) {
                    for &p in &g.partitions {
                        sink.i32(p);
                    }
                }
            }
        }
        sink.nullable_bytes(self.user_data.as_deref(), "user_data")
    }
}

/// Number of partitions of `groups[i].topic` in `groups[i..]`.
fn total(groups: &[TopicPartitions], i: usize) -> usize {
    groups[i..].iter().filter(|g| g.topic == groups[i].topic).map(|g| g.partitions.len()).sum()
}

fn distinct_topics(groups: &[TopicPartitions]) -> bool {
    if groups.len() <= 32 {
        return groups.iter().enumerate().all(|(i, g)| groups[..i].iter().all(|e| e.topic != g.topic));
    }
    let mut seen = std::collections::HashSet::with_capacity(groups.len());
    groups.iter().all(|g| seen.insert(g.topic.as_str()))
}
