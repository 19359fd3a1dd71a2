//! `ConsumerProtocolSubscription`: what a member sends in JoinGroup, once per protocol.

use core::fmt;

use bytes::Bytes;

use crate::codec::error::{DecodeError, DecodeErrorKind, EncodeError, FieldPath, MessageKind};
use crate::codec::lists::{TopicNames, TopicPartitions, TopicPartitionsList};
use crate::codec::options::{DecodeOptions, Repair};
use crate::codec::version::Version;
use crate::codec::wire::{
    is_ascending, java_cmp, names_sorted, read_string_array, read_topic_partitions_array, ArrayRegion, Counter,
    OptRange, Presized, Reader, Sink,
};

/// Where each field of a decoded subscription lies in the input. `Copy` and allocation-free, so
/// the borrowed and the `Bytes`-backed forms share one parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Layout {
    version: i16,
    read_as: Version,
    topics: ArrayRegion,
    user_data: OptRange,
    owned_partitions: ArrayRegion,
    generation_id: i32,
    rack_id: OptRange,
    end: usize,
    repair: Option<Repair>,
}

const VERSION: FieldPath = FieldPath::field("version");
const USER_DATA: FieldPath = FieldPath::field("user_data");
const GENERATION_ID: FieldPath = FieldPath::field("generation_id");
const RACK_ID: FieldPath = FieldPath::field("rack_id");

#[inline(always)]
fn parse(buf: &[u8], options: DecodeOptions) -> Result<Layout, DecodeError> {
    const MESSAGE: MessageKind = MessageKind::Subscription;
    let mut r = Reader::new(buf);
    let version = r.i16().map_err(|f| f.at(MESSAGE, VERSION))?;
    let Some(wire_layout) = Version::layout_for_wire(version) else {
        return Err(DecodeError::new(MESSAGE, DecodeErrorKind::UnsupportedVersion(version), 0, VERSION));
    };
    let mut read_as = wire_layout.min(options.reader_version);
    let mut layout = Layout {
        version,
        read_as,
        topics: read_string_array(&mut r, MESSAGE, "topics")?,
        user_data: OptRange::default(),
        owned_partitions: ArrayRegion::default(),
        generation_id: -1,
        rack_id: OptRange::default(),
        end: 0,
        repair: None,
    };
    let user_data = r.nullable_bytes(options.strict).map_err(|f| f.at(MESSAGE, USER_DATA))?;
    layout.user_data = OptRange::ending_at(r.pos(), user_data);

    // Appended fields, each only if the layout has it. In lenient mode a payload that ends
    // exactly where an appended field would start is read with the shorter layout.
    for field_version in [Version::V1, Version::V2, Version::V3] {
        if read_as < field_version {
            break;
        }
        if options.lenient && r.remaining() == 0 {
            let actual = match field_version {
                Version::V1 => Version::V0,
                Version::V2 => Version::V1,
                _ => Version::V2,
            };
            layout.repair =
                Some(Repair { declared_version: version, read_as: actual, message: MessageKind::Subscription });
            read_as = actual;
            break;
        }
        match field_version {
            Version::V1 => layout.owned_partitions = read_topic_partitions_array(&mut r, MESSAGE, "owned_partitions")?,
            Version::V2 => layout.generation_id = r.i32().map_err(|f| f.at(MESSAGE, GENERATION_ID))?,
            _ => {
                let rack = r.nullable_string(options.strict).map_err(|f| f.at(MESSAGE, RACK_ID))?;
                layout.rack_id = OptRange::ending_at(r.pos(), rack);
            }
        }
    }
    layout.read_as = read_as;
    layout.end = r.pos();
    if options.strict && r.remaining() > 0 {
        let trailing = DecodeErrorKind::TrailingBytes(r.remaining());
        return Err(DecodeError::new(MESSAGE, trailing, r.pos(), FieldPath::field("end")));
    }
    Ok(layout)
}

crate::codec::forms::decoded_forms! {
    /// A decoded subscription borrowing from the input: decoding validates every field once and
    /// allocates nothing; names, owned partitions and userData are views over the input.
    ///
    /// ```
    /// use kafka_consumer_protocol::{SubscriptionView, Version};
    /// let bytes = hex("0003 00000001 0003666f6f ffffffff 00000001 0003666f6f 00000001 00000000 00000005 00027231");
    /// let sub = SubscriptionView::decode(&bytes)?;
    /// assert_eq!(sub.version(), 3);
    /// assert_eq!(sub.topics().iter().collect::<Vec<_>>(), ["foo"]);
    /// assert_eq!(sub.user_data(), None);
    /// let owned: Vec<(&str, i32)> = sub.owned_partitions().pairs().collect();
    /// assert_eq!(owned, [("foo", 0)]);
    /// assert_eq!(sub.generation_id(), 5);
    /// assert_eq!(sub.rack_id(), Some("r1"));
    /// # fn hex(s: &str) -> Vec<u8> {
    /// #     let s: String = s.split_whitespace().collect();
    /// #     (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    /// # }
    /// # Ok::<(), kafka_consumer_protocol::DecodeError>(())
    /// ```
    view SubscriptionView;
    /// A decoded subscription that owns its input as [`Bytes`]: `Send + Sync + 'static`, and
    /// names and userData are shared with the input buffer rather than copied.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use kafka_consumer_protocol::SubscriptionBuf;
    /// let input = Bytes::from_static(&[0, 0, 0, 0, 0, 1, 0, 3, b'f', b'o', b'o', 0, 0, 0, 2, 7, 7]);
    /// let sub = SubscriptionBuf::decode(input.clone())?;
    /// assert_eq!(sub.view().topics().iter().collect::<Vec<_>>(), ["foo"]);
    /// let user_data = sub.user_data().unwrap();
    /// assert_eq!(&user_data[..], &[7, 7]);
    /// assert_eq!(user_data.as_ptr(), input[15..].as_ptr()); // shared, not copied
    /// # Ok::<(), kafka_consumer_protocol::DecodeError>(())
    /// ```
    buf SubscriptionBuf;
    layout Layout; parse parse; message "subscription";
}

impl<'a> SubscriptionView<'a> {
    /// Subscribed topics, in wire order.
    pub fn topics(&self) -> TopicNames<'a> {
        TopicNames { bytes: self.layout.topics.bytes(self.buf), count: self.layout.topics.count }
    }

    /// Owned partitions (v1+; empty when the layout read has none).
    pub fn owned_partitions(&self) -> TopicPartitionsList<'a> {
        TopicPartitionsList {
            bytes: self.layout.owned_partitions.bytes(self.buf),
            count: self.layout.owned_partitions.count,
        }
    }

    /// Generation id (v2+; `-1` when absent).
    pub fn generation_id(&self) -> i32 {
        self.layout.generation_id
    }

    /// Rack id (v3+; `None` when null or absent). An empty string is returned as is; Apache
    /// Kafka's Java client treats it as no rack.
    pub fn rack_id(&self) -> Option<&'a str> {
        self.layout.rack_id.get(self.buf).map(|b| core::str::from_utf8(b).unwrap_or(""))
    }

    /// Copies into the owned [`Subscription`].
    pub fn to_owned(&self) -> Subscription {
        Subscription {
            topics: self.topics().iter().map(str::to_owned).collect(),
            user_data: self.user_data().map(Bytes::copy_from_slice),
            owned_partitions: self.owned_partitions().to_owned(),
            generation_id: self.generation_id(),
            rack_id: self.rack_id().map(str::to_owned),
        }
    }
}

impl fmt::Debug for SubscriptionView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriptionView")
            .field("version", &self.version())
            .field("read_as", &self.read_as())
            .field("topics", &self.topics())
            .field("user_data", &self.user_data())
            .field("owned_partitions", &self.owned_partitions())
            .field("generation_id", &self.generation_id())
            .field("rack_id", &self.rack_id())
            .field("trailing_bytes", &self.trailing_bytes())
            .finish()
    }
}

impl PartialEq for SubscriptionView<'_> {
    /// Equal when every decoded field, the versions and the trailing byte count are equal.
    fn eq(&self, other: &Self) -> bool {
        self.version() == other.version()
            && self.read_as() == other.read_as()
            && self.topics() == other.topics()
            && self.user_data() == other.user_data()
            && self.owned_partitions() == other.owned_partitions()
            && self.generation_id() == other.generation_id()
            && self.rack_id() == other.rack_id()
            && self.trailing_bytes() == other.trailing_bytes()
    }
}

/// A subscription as values: what you build to encode, and what the assignors read.
///
/// New versions of the protocol append fields, so the struct is `#[non_exhaustive]`: build one
/// with [`Subscription::new`] and the `with_*` setters (the fields stay public to read and
/// assign).
///
/// ```
/// use kafka_consumer_protocol::{Subscription, TopicPartitions, Version};
/// let sub = Subscription::new(["payments", "orders"])
///     .with_owned_partitions(vec![TopicPartitions::new("orders", [1, 0])])
///     .with_generation_id(7)
///     .with_rack_id("use1-az1");
/// let bytes = sub.encode(Version::V3)?;
/// assert_eq!(bytes.len(), sub.encoded_len(Version::V3));
/// // Written canonically, as Apache Kafka's Java client writes it: topics and owned partitions sorted.
/// let back = Subscription::decode(&bytes).unwrap();
/// assert_eq!(back.topics, ["orders", "payments"]);
/// assert_eq!(back.owned_partitions, [TopicPartitions::new("orders", [0, 1])]);
/// // Fields the version lacks are dropped.
/// let v0 = Subscription::decode(&sub.encode(Version::V0)?).unwrap();
/// assert_eq!((v0.generation_id, v0.rack_id), (-1, None));
/// # Ok::<(), kafka_consumer_protocol::EncodeError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Subscription {
    /// Subscribed topics.
    pub topics: Vec<String>,
    /// The assignor's userData; `None` is null on the wire, distinct from empty.
    pub user_data: Option<Bytes>,
    /// Partitions the member owns (v1+).
    pub owned_partitions: Vec<TopicPartitions>,
    /// The member's generation (v2+); `-1` means none.
    pub generation_id: i32,
    /// The member's rack (v3+).
    pub rack_id: Option<String>,
}

impl Default for Subscription {
    fn default() -> Self {
        Subscription {
            topics: Vec::new(),
            user_data: None,
            owned_partitions: Vec::new(),
            generation_id: -1,
            rack_id: None,
        }
    }
}

crate::codec::forms::value_encoding!(Subscription);

impl Subscription {
    /// A subscription to `topics` with every other field at its default.
    pub fn new<I, T>(topics: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        Subscription { topics: topics.into_iter().map(Into::into).collect(), ..Self::default() }
    }

    /// With this userData (`None`, the default, is null on the wire).
    pub fn with_user_data(mut self, user_data: impl Into<Option<Bytes>>) -> Self {
        self.user_data = user_data.into();
        self
    }

    /// With these owned partitions (v1+).
    pub fn with_owned_partitions(mut self, owned_partitions: Vec<TopicPartitions>) -> Self {
        self.owned_partitions = owned_partitions;
        self
    }

    /// With this generation (v2+; `-1`, the default, means none).
    pub fn with_generation_id(mut self, generation_id: i32) -> Self {
        self.generation_id = generation_id;
        self
    }

    /// With this rack (v3+).
    pub fn with_rack_id(mut self, rack_id: impl Into<String>) -> Self {
        self.rack_id = Some(rack_id.into());
        self
    }

    /// Decodes into owned values (copies names and userData). Use [`SubscriptionView`] or
    /// [`SubscriptionBuf`] to avoid the copies.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        SubscriptionView::decode(buf).map(|v| v.to_owned())
    }

    /// The encoded size if every part is canonical, or `None` when it does not fit an `int32`
    /// (the general path reports what is too large). The writers of the fast path find the
    /// rest that makes it fail: an empty owned group, a name too long for its `int16` length.
    #[inline(always)]
    fn canonical_len(&self, version: Version) -> Option<usize> {
        let mut len = 2 + 4 + 2 * self.topics.len() + 4 + self.user_data.as_ref().map_or(0, |d| d.len());
        len += self.topics.iter().map(String::len).sum::<usize>();
        if version >= Version::V1 {
            let groups = &self.owned_partitions;
            // Two sums, so that each loop step adds to each only once: one long chain of
            // dependent additions would set the pace of this loop.
            let (mut name_bytes, mut partitions) = (0, 0);
            for g in groups {
                name_bytes += g.topic.len();
                partitions += g.partitions.len();
            }
            len += 4 + 6 * groups.len() + name_bytes + 4 * partitions;
        }
        if version >= Version::V2 {
            len += 4;
        }
        if version >= Version::V3 {
            len += 2 + self.rack_id.as_ref().map_or(0, |r| r.len());
        }
        // Every count and length is below the total, so a total that fits an `int32` covers them.
        (len <= i32::MAX as usize).then_some(len)
    }

    /// Writes the fields as given; whether they are canonical and filled `buf` exactly.
    #[inline(always)]
    fn write_canonical(&self, version: Version, buf: &mut [u8]) -> bool {
        let mut out = Presized::new(buf);
        out.i16(version.as_i16());
        out.i32(self.topics.len() as i32);
        // Out of order: the caller sorts a copy and writes it into this buffer.
        if !out.names_in_order(&self.topics) {
            return false;
        }
        match &self.user_data {
            None => out.i32(-1),
            Some(d) => {
                out.i32(d.len() as i32);
                out.put(d);
            }
        }
        if version >= Version::V1 {
            let groups = &self.owned_partitions;
            out.i32(groups.len() as i32);
            if !out.groups_in_order(groups) {
                return false;
            }
        }
        if version >= Version::V2 {
            out.i32(self.generation_id);
        }
        if version >= Version::V3 {
            match &self.rack_id {
                None => out.i16(-1),
                Some(r) => out.name(r),
            }
        }
        out.complete()
    }

    /// Which parts are in Java's order, and the exact encoded size.
    #[inline]
    fn plan(&self, version: Version) -> (Canonical, usize) {
        let mut len = 2 + 4 + 4 + self.user_data.as_ref().map_or(0, |d| d.len());
        len += self.topics.iter().map(|t| 2 + t.len()).sum::<usize>();
        let topics_sorted = names_sorted(self.topics.iter().map(String::as_str), false);
        let mut owned = true;
        if version >= Version::V1 {
            let groups = &self.owned_partitions;
            let mut owned_len = 4 + 6 * groups.len();
            for g in groups {
                owned_len += g.topic.len() + 4 * g.partitions.len();
                owned &= !g.partitions.is_empty() && is_ascending(&g.partitions);
            }
            owned = owned && names_sorted(groups.iter().map(|g| g.topic.as_str()), true);
            len += if owned { owned_len } else { owned_len_sorted(groups) };
        }
        if version >= Version::V2 {
            len += 4;
        }
        if version >= Version::V3 {
            len += 2 + self.rack_id.as_ref().map_or(0, |r| r.len());
        }
        (Canonical { topics: topics_sorted, owned }, len)
    }

    fn write<S: Sink>(&self, version: Version, canonical: Canonical, sink: &mut S) -> Result<(), EncodeError> {
        sink.i16(version.as_i16());
        // Topics sorted in Java's String order; sort a copy of the references only when needed.
        sink.count(self.topics.len(), "topics")?;
        if canonical.topics {
            for t in &self.topics {
                sink.string(t, "topics")?;
            }
        } else {
            let mut sorted: Vec<&str> = self.topics.iter().map(String::as_str).collect();
            sorted.sort_by(|a, b| java_cmp(a, b));
            for t in sorted {
                sink.string(t, "topics")?;
            }
        }
        sink.nullable_bytes(self.user_data.as_deref(), "user_data")?;
        if version >= Version::V1 {
            write_owned(&self.owned_partitions, canonical.owned, sink)?;
        }
        if version >= Version::V2 {
            sink.i32(self.generation_id);
        }
        if version >= Version::V3 {
            sink.nullable_string(self.rack_id.as_deref(), "rack_id")?;
        }
        Ok(())
    }
}

/// Which parts of a subscription are already in the order Java writes them.
#[derive(Clone, Copy)]
struct Canonical {
    topics: bool,
    owned: bool,
}

/// The size of the owned partitions once sorted and grouped as Java writes them.
#[cold]
fn owned_len_sorted(groups: &[TopicPartitions]) -> usize {
    let mut counter = Counter::default();
    // A value that cannot be encoded has no length; this counts what would be written.
    let _ = write_owned(groups, false, &mut counter);
    counter.0
}

/// Owned partitions sorted by (topic, partition) and grouped per topic, as Java writes them.
fn write_owned<S: Sink>(groups: &[TopicPartitions], canonical: bool, sink: &mut S) -> Result<(), EncodeError> {
    if canonical {
        sink.count(groups.len(), "owned_partitions")?;
        for g in groups {
            sink.string(&g.topic, "owned_partitions.topic")?;
            sink.count(g.partitions.len(), "owned_partitions.partitions")?;
            sink.i32s(&g.partitions);
        }
        return Ok(());
    }
    let mut flat: Vec<(&str, i32)> =
        groups.iter().flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.as_str(), p))).collect();
    flat.sort_by(|a, b| java_cmp(a.0, b.0).then(a.1.cmp(&b.1)));
    let runs = flat.chunk_by(|a, b| a.0 == b.0);
    sink.count(runs.clone().count(), "owned_partitions")?;
    for run in runs {
        sink.string(run[0].0, "owned_partitions.topic")?;
        sink.count(run.len(), "owned_partitions.partitions")?;
        for &(_, p) in run {
            sink.i32(p);
        }
    }
    Ok(())
}
