//! `ConsumerProtocolAssignment`: what the leader gives each member in SyncGroup.

use core::fmt;

use bytes::Bytes;

use crate::codec::error::{DecodeError, DecodeErrorKind, EncodeError, FieldPath, MessageKind};
use crate::codec::lists::{TopicPartitions, TopicPartitionsList};
use crate::codec::options::{DecodeOptions, Repair};
use crate::codec::version::Version;
use crate::codec::wire::{
    fingerprint_of, read_topic_partitions_array, ArrayRegion, Counter, OptRange, Presized, Reader, Sink,
};

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

#[inline(always)]
fn parse(buf: &[u8], options: DecodeOptions) -> Result<Layout, DecodeError> {
    const MESSAGE: MessageKind = MessageKind::Assignment;
    let mut r = Reader::new(buf);
    let version = r.i16().map_err(|f| f.at(MESSAGE, VERSION))?;
    let Some(wire_layout) = Version::layout_for_wire(version) else {
        return Err(DecodeError::new(MESSAGE, DecodeErrorKind::UnsupportedVersion(version), 0, VERSION));
    };
    let read_as = wire_layout.min(options.reader_version);
    let assigned_partitions = read_topic_partitions_array(&mut r, MESSAGE, "assigned_partitions")?;
    let (user_data, repair) = if options.lenient && r.remaining() == 0 {
        // Some third-party leaders omit the trailing userData; read it as null.
        (OptRange::default(), Some(Repair { declared_version: version, read_as, message: MessageKind::Assignment }))
    } else {
        let ud = r.nullable_bytes(options.strict).map_err(|f| f.at(MESSAGE, USER_DATA))?;
        (OptRange::ending_at(r.pos(), ud), None)
    };
    if options.strict && r.remaining() > 0 {
        let trailing = DecodeErrorKind::TrailingBytes(r.remaining());
        return Err(DecodeError::new(MESSAGE, trailing, r.pos(), FieldPath::field("end")));
    }
    Ok(Layout { version, read_as, assigned_partitions, user_data, end: r.pos(), repair })
}

crate::codec::forms::decoded_forms! {
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
#[non_exhaustive]
pub struct Assignment {
    /// Assigned partitions, grouped per topic.
    pub assigned_partitions: Vec<TopicPartitions>,
    /// The assignor's userData; `None` is null on the wire.
    pub user_data: Option<Bytes>,
}

crate::codec::forms::value_encoding!(Assignment);

impl Assignment {
    /// An assignment of these partitions with null userData.
    pub fn new(assigned_partitions: Vec<TopicPartitions>) -> Self {
        Assignment { assigned_partitions, user_data: None }
    }

    /// With this userData (`None`, the default, is null on the wire).
    pub fn with_user_data(mut self, user_data: impl Into<Option<Bytes>>) -> Self {
        self.user_data = user_data.into();
        self
    }

    /// Decodes into owned values (copies names and userData).
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        AssignmentView::decode(buf).map(|v| v.to_owned())
    }

    /// The encoded size if the groups are written as given, or `None` when it does not fit an
    /// `int32` (the general path reports what is too large). Every count and length is below
    /// the total, so a total that fits covers them.
    #[inline(always)]
    fn canonical_len(&self, _version: Version) -> Option<usize> {
        let groups = &self.assigned_partitions;
        let mut len = 2 + 4 + 6 * groups.len() + 4 + self.user_data.as_ref().map_or(0, |d| d.len());
        for g in groups {
            len += g.topic.len() + 4 * g.partitions.len();
        }
        (len <= i32::MAX as usize).then_some(len)
    }

    /// Writes the groups as given; whether that is Java's encoding and filled `buf` exactly.
    #[inline(always)]
    fn write_canonical(&self, version: Version, buf: &mut [u8]) -> bool {
        let groups = &self.assigned_partitions;
        let mut out = Presized::new(buf);
        out.i16(version.as_i16());
        out.i32(groups.len() as i32);
        let collision = out.groups_may_repeat(groups);
        match &self.user_data {
            None => out.i32(-1),
            Some(d) => {
                out.i32(d.len() as i32);
                out.put(d);
            }
        }
        out.complete() && (!collision || distinct_topics(groups))
    }

    /// Whether the groups can be written as they are (no topic listed twice, no group empty),
    /// and the exact encoded size.
    #[inline]
    fn plan(&self, version: Version) -> (bool, usize) {
        let groups = &self.assigned_partitions;
        match self.canonical_len(version) {
            Some(len) if groups.iter().all(|g| !g.partitions.is_empty()) && distinct_topics(groups) => (true, len),
            _ => (false, self.merged_len(version)),
        }
    }

    /// The size once repeated topics are merged and empty groups dropped.
    #[cold]
    fn merged_len(&self, version: Version) -> usize {
        let mut counter = Counter::default();
        // A value that cannot be encoded has no length; this counts what would be written.
        let _ = self.write(version, false, &mut counter);
        counter.0
    }

    fn write<S: Sink>(&self, version: Version, canonical: bool, sink: &mut S) -> Result<(), EncodeError> {
        sink.i16(version.as_i16());
        let groups = &self.assigned_partitions;
        // Java writes a flat partition list grouped by topic: an empty group cannot exist, and a
        // topic listed twice is merged into its first appearance.
        if canonical {
            write_groups(sink, groups.len(), groups.iter().map(|g| (g.topic.as_str(), g.partitions.as_slice())))?;
        } else {
            let same = |a: usize, b: usize| groups[a].topic == groups[b].topic;
            sink.count(merged_starts(groups, same).count(), "assigned_partitions")?;
            for i in merged_starts(groups, same) {
                sink.string(&groups[i].topic, "assigned_partitions.topic")?;
                sink.count(total(groups, i), "assigned_partitions.partitions")?;
                for g in groups[i..].iter().filter(|g| g.topic == groups[i].topic) {
                    sink.i32s(&g.partitions);
                }
            }
        }
        sink.nullable_bytes(self.user_data.as_deref(), "user_data")
    }
}

/// The assigned partitions as given: the count, then each `{topic, partitions}` group. Callers
/// pass groups that are already Java's (each topic once, none empty).
fn write_groups<'g, S: Sink>(
    sink: &mut S,
    count: usize,
    groups: impl Iterator<Item = (&'g str, &'g [i32])>,
) -> Result<(), EncodeError> {
    sink.count(count, "assigned_partitions")?;
    for (topic, partitions) in groups {
        sink.string(topic, "assigned_partitions.topic")?;
        sink.count(partitions.len(), "assigned_partitions.partitions")?;
        sink.i32s(partitions);
    }
    Ok(())
}

/// A whole `ConsumerProtocolAssignment` from borrowed groups that are already Java's (each topic
/// once, none empty), such as the leader's [`GroupAssignment`](crate::assignor::GroupAssignment)
/// members: the same writer as [`Assignment::encode`]'s general path. One allocation.
pub(crate) fn encode_groups<'g, I>(
    version: Version,
    count: usize,
    groups: I,
    user_data: Option<&[u8]>,
) -> Result<Vec<u8>, EncodeError>
where
    I: Iterator<Item = (&'g str, &'g [i32])> + Clone,
{
    let mut counter = Counter::default();
    // A value that cannot be encoded has no length; the writer below reports why.
    let _ = write_grouped(&mut counter, version, count, groups.clone(), user_data);
    let mut out = Vec::with_capacity(counter.0);
    write_grouped(&mut out, version, count, groups, user_data)?;
    Ok(out)
}

/// The encoded size of [`encode_groups`]'s output.
pub(crate) fn encoded_groups_len<'g>(
    version: Version,
    count: usize,
    groups: impl Iterator<Item = (&'g str, &'g [i32])>,
    user_data: Option<&[u8]>,
) -> usize {
    let mut counter = Counter::default();
    let _ = write_grouped(&mut counter, version, count, groups, user_data);
    counter.0
}

fn write_grouped<'g, S: Sink>(
    sink: &mut S,
    version: Version,
    count: usize,
    groups: impl Iterator<Item = (&'g str, &'g [i32])>,
    user_data: Option<&[u8]>,
) -> Result<(), EncodeError> {
    sink.i16(version.as_i16());
    write_groups(sink, count, groups)?;
    sink.nullable_bytes(user_data, "user_data")
}

/// Where Java's flat partition list puts each topic of `groups`: the index of the topic's first
/// group with partitions (an empty group earlier does not count); the topic's later groups are
/// merged there. `same(a, b)`: groups `a` and `b` name the same topic.
pub(crate) fn merged_starts<'a>(
    groups: &'a [TopicPartitions],
    same: impl Fn(usize, usize) -> bool + Copy + 'a,
) -> impl Iterator<Item = usize> + 'a {
    (0..groups.len()).filter(move |&i| {
        !groups[i].partitions.is_empty() && (0..i).all(|j| groups[j].partitions.is_empty() || !same(j, i))
    })
}

/// Number of partitions of `groups[i].topic` in `groups[i..]`.
fn total(groups: &[TopicPartitions], i: usize) -> usize {
    groups[i..].iter().filter(|g| g.topic == groups[i].topic).map(|g| g.partitions.len()).sum()
}

fn distinct_topics(groups: &[TopicPartitions]) -> bool {
    if groups.len() <= 32 {
        // A 1024-bit filter of fingerprints answers "all distinct" without comparing pairs;
        // only a filter collision leads to comparing fingerprints, and only equal fingerprints
        // to comparing names. (The table's load after store is no concern here: this is the
        // fast path's rare fallback.)
        let mut signatures = [0u64; 32];
        let mut filter = [0u64; 16];
        let mut collision = false;
        for (slot, g) in signatures.iter_mut().zip(groups) {
            *slot = fingerprint_of(g.topic.as_bytes());
            let bit = (*slot >> 54) as usize; // top 10 bits: 0..1024
            collision |= filter[bit / 64] & (1 << (bit % 64)) != 0;
            filter[bit / 64] |= 1 << (bit % 64);
        }
        if !collision {
            return true;
        }
        let signatures = &signatures[..groups.len()];
        return (0..groups.len())
            .all(|i| (0..i).all(|j| signatures[j] != signatures[i] || groups[j].topic != groups[i].topic));
    }
    let mut seen = std::collections::HashSet::with_capacity(groups.len());
    groups.iter().all(|g| seen.insert(g.topic.as_str()))
}
