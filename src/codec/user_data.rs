//! The userData formats of the built-in sticky assignors.

use bytes::Bytes;

use crate::codec::error::{DecodeError, FieldPath, MessageKind};
use crate::codec::lists::{TopicPartitions, TopicPartitionsList};
use crate::codec::wire::{read_topic_partitions_array, Reader, Sink};

/// The `cooperative-sticky` assignor's userData: the member's last stable generation as one
/// `int32`, sent for leaders that predate subscription v2.
///
/// ```
/// use kafka_consumer_protocol::CooperativeStickyUserData;
/// let data = CooperativeStickyUserData { generation: 10 }.encode();
/// assert_eq!(&data[..], &[0, 0, 0, 10]);
/// assert_eq!(CooperativeStickyUserData::decode(&data)?.generation, 10);
/// // What Java's assignor concludes from a member's userData:
/// assert_eq!(CooperativeStickyUserData::java_generation(None), None);
/// assert_eq!(CooperativeStickyUserData::java_generation(Some(&[1, 2])), Some(-1));
/// # Ok::<(), kafka_consumer_protocol::DecodeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CooperativeStickyUserData {
    /// The generation; `-1` before the first assignment.
    pub generation: i32,
}

impl CooperativeStickyUserData {
    /// The 4-byte encoding.
    pub fn encode(&self) -> Bytes {
        Bytes::copy_from_slice(&self.generation.to_be_bytes())
    }

    /// Reads the generation; trailing bytes are ignored, as Java's `getInt()` does.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let generation = Reader::new(buf)
            .i32()
            .map_err(|f| f.at(MessageKind::CooperativeStickyUserData, FieldPath::field("generation")))?;
        Ok(CooperativeStickyUserData { generation })
    }

    /// Java's interpretation: null userData means no generation; unreadable userData means -1.
    pub fn java_generation(user_data: Option<&[u8]>) -> Option<i32> {
        user_data.map(|b| Self::decode(b).map_or(-1, |d| d.generation))
    }
}

/// Which layout a sticky userData payload was read with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StickyUserDataFormat {
    /// Previous assignment and generation.
    V1,
    /// Previous assignment only (clients before KIP-341).
    V0,
    /// Neither layout reads it; Java then assumes no partitions and generation -1.
    Unreadable,
}

/// The eager `sticky` assignor's userData: the member's previous assignment and, since
/// KIP-341 (V1), its generation. There is no version field: readers try V1, then V0.
///
/// ```
/// use kafka_consumer_protocol::{StickyUserData, StickyUserDataFormat, TopicPartitions};
/// let data = StickyUserData { previous_assignment: vec![TopicPartitions::new("foo", [0, 1])], generation: Some(3) };
/// let bytes = data.encode().unwrap();
/// assert_eq!(bytes.len(), 25);
/// assert_eq!(StickyUserData::decode_java(&bytes), (data, StickyUserDataFormat::V1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct StickyUserData {
    /// Partitions the member held, grouped per topic.
    pub previous_assignment: Vec<TopicPartitions>,
    /// The generation of that assignment; `None` in the V0 layout.
    pub generation: Option<i32>,
}

impl StickyUserData {
    /// Encodes V1 when a generation is present, V0 otherwise. Groups are written in the given
    /// order.
    pub fn encode(&self) -> Result<Vec<u8>, crate::EncodeError> {
        let mut out = Vec::new();
        out.count(self.previous_assignment.len(), "previous_assignment")?;
        for g in &self.previous_assignment {
            out.string(&g.topic, "previous_assignment.topic")?;
            out.count(g.partitions.len(), "previous_assignment.partitions")?;
            out.i32s(&g.partitions);
        }
        if let Some(generation) = self.generation {
            out.i32(generation);
        }
        Ok(out)
    }

    /// Reads the V1 layout exactly (previous assignment, then generation).
    pub fn decode_v1(buf: &[u8]) -> Result<Self, DecodeError> {
        const MESSAGE: MessageKind = MessageKind::StickyUserData;
        let mut r = Reader::new(buf);
        let region = read_topic_partitions_array(&mut r, MESSAGE, "previous_assignment")?;
        let generation = r.i32().map_err(|f| f.at(MESSAGE, FieldPath::field("generation")))?;
        let list = TopicPartitionsList { bytes: region.bytes(buf), count: region.count };
        Ok(StickyUserData { previous_assignment: list.to_owned(), generation: Some(generation) })
    }

    /// Reads the V0 layout (previous assignment only).
    pub fn decode_v0(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let region = read_topic_partitions_array(&mut r, MessageKind::StickyUserData, "previous_assignment")?;
        let list = TopicPartitionsList { bytes: region.bytes(buf), count: region.count };
        Ok(StickyUserData { previous_assignment: list.to_owned(), generation: None })
    }

    /// Java's `StickyAssignor` rule: try V1, then V0; if neither reads, no partitions and
    /// generation -1.
    pub fn decode_java(buf: &[u8]) -> (Self, StickyUserDataFormat) {
        match Self::view_java(buf) {
            (Some(list), generation) => {
                let format = if generation.is_some() { StickyUserDataFormat::V1 } else { StickyUserDataFormat::V0 };
                (StickyUserData { previous_assignment: list.to_owned(), generation }, format)
            }
            (None, generation) => {
                (StickyUserData { previous_assignment: Vec::new(), generation }, StickyUserDataFormat::Unreadable)
            }
        }
    }

    /// [`decode_java`](Self::decode_java) in place, without copying: the previous assignment
    /// borrowed from `buf` and the generation (`None` for V0), or no list and generation -1 when
    /// neither layout reads. The sticky assignor reads its members' userData with it.
    pub(crate) fn view_java(buf: &[u8]) -> (Option<TopicPartitionsList<'_>>, Option<i32>) {
        let mut r = Reader::new(buf);
        match read_topic_partitions_array(&mut r, MessageKind::StickyUserData, "previous_assignment") {
            Ok(region) => {
                let list = TopicPartitionsList { bytes: region.bytes(buf), count: region.count };
                (Some(list), r.i32().ok())
            }
            Err(_) => (None, Some(-1)),
        }
    }
}
