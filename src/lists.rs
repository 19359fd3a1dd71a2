//! Zero-copy list views over validated input: topic names, partition ids and
//! `{topic, partitions}` groups.

use core::fmt;
use core::iter::FusedIterator;
use core::ops::Range;

use crate::error::{DecodeError, FieldPath, MessageKind};
use crate::wire::{Reader, Validated};

/// Byte range and element count of a validated array inside the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct ArrayRegion {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) count: usize,
}

impl ArrayRegion {
    #[inline]
    pub(crate) fn bytes<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        buf.get(self.start..self.end).unwrap_or(&[])
    }
}

/// Optional byte range (for nullable fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct OptRange {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) present: bool,
}

impl OptRange {
    /// The range of a field that was just read, ending at `end`.
    #[inline]
    pub(crate) fn ending_at(end: usize, slice: Option<&[u8]>) -> Self {
        match slice {
            None => OptRange::default(),
            Some(s) => OptRange { start: end - s.len(), end, present: true },
        }
    }

    #[inline]
    pub(crate) fn get<'a>(&self, buf: &'a [u8]) -> Option<&'a [u8]> {
        if self.present {
            buf.get(self.start..self.end)
        } else {
            None
        }
    }

    #[inline]
    pub(crate) fn range(&self) -> Option<Range<usize>> {
        self.present.then_some(self.start..self.end)
    }
}

/// Fast validation of one string at `buf[at..]`: its end, or `None` for anything the precise
/// reader must look at (which then reports the exact error).
#[inline(always)]
fn scan_string(buf: &[u8], at: usize) -> Option<usize> {
    let len = i16::from_be_bytes(buf.get(at..at + 2)?.try_into().ok()?);
    let end = at + 2 + usize::try_from(len).ok()?;
    let bytes = buf.get(at + 2..end)?;
    is_utf8(bytes).then_some(end)
}

/// Whether `bytes` are UTF-8, with ASCII (the common case for names and racks) checked a word
/// at a time, without a call.
#[inline(always)]
pub(crate) fn is_utf8(bytes: &[u8]) -> bool {
    is_ascii(bytes) || core::str::from_utf8(bytes).is_ok()
}

/// ASCII check tuned for topic-name lengths: two overlapping word loads for 8 to 16 bytes.
#[inline(always)]
fn is_ascii(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(head), Some(tail)) if bytes.len() <= 16 => {
            (u64::from_ne_bytes(*head) | u64::from_ne_bytes(*tail)) & HIGH == 0
        }
        (Some(_), _) => bytes.is_ascii(),
        _ => bytes.iter().fold(0, |acc, &b| acc | b) < 0x80,
    }
}

/// Fast validation of `count` strings: the bytes they take, or `None` on any problem.
#[inline]
fn scan_strings(buf: &[u8], count: usize) -> Option<usize> {
    let mut at = 0;
    for _ in 0..count {
        at = scan_string(buf, at)?;
    }
    Some(at)
}

/// Fast validation of `count` `{topic, partitions}` groups: the bytes they take, or `None`.
#[inline]
fn scan_topic_partitions(buf: &[u8], count: usize) -> Option<usize> {
    let mut at = 0;
    for _ in 0..count {
        at = scan_string(buf, at)?;
        let n = i32::from_be_bytes(buf.get(at..at + 4)?.try_into().ok()?);
        at = at.checked_add(4)?.checked_add(usize::try_from(n).ok()?.checked_mul(4)?)?;
        if at > buf.len() {
            return None;
        }
    }
    Some(at)
}

/// Reads and validates `[string]` (e.g. `topics`), returning its region.
#[inline]
pub(crate) fn read_string_array(
    r: &mut Reader<'_>,
    message: MessageKind,
    name: &'static str,
) -> Result<ArrayRegion, DecodeError> {
    read_array(r, message, name, scan_strings, |r, i| {
        r.skip_string().map_err(|f| f.at(message, FieldPath::element(name, i)))
    })
}

/// Reads and validates `[{topic: string, partitions: [int32]}]`, returning its region.
#[inline]
pub(crate) fn read_topic_partitions_array(
    r: &mut Reader<'_>,
    message: MessageKind,
    name: &'static str,
) -> Result<ArrayRegion, DecodeError> {
    read_array(r, message, name, scan_topic_partitions, |r, i| {
        let entry = || FieldPath::element(name, i);
        r.skip_string().map_err(|f| f.at(message, entry().child("topic", None)))?;
        let n = r.array_len().map_err(|f| f.at(message, entry().child("partitions", None)))?;
        let first = r.pos();
        r.int32_array(n).map_err(|f| f.at(message, entry().child("partitions", Some((f.offset - first) / 4))))?;
        Ok(())
    })
}

/// An array's count, then its elements: validated by the tight `scan` when it accepts them,
/// else element by element with `precise`, which names the failing field.
#[inline(always)]
fn read_array(
    r: &mut Reader<'_>,
    message: MessageKind,
    name: &'static str,
    scan: impl Fn(&[u8], usize) -> Option<usize>,
    mut precise: impl FnMut(&mut Reader<'_>, usize) -> Result<(), DecodeError>,
) -> Result<ArrayRegion, DecodeError> {
    let count = r.array_len().map_err(|f| f.at(message, FieldPath::field(name)))?;
    let start = r.pos();
    if let Some(len) = scan(r.rest(), count) {
        r.advance(len);
        return Ok(ArrayRegion { start, end: r.pos(), count });
    }
    for i in 0..count {
        precise(r, i)?;
    }
    Ok(ArrayRegion { start, end: r.pos(), count })
}

/// Declares a list view over `count` validated elements in `bytes`, its iterator, and the
/// usual traits; `$next` reads one element from a [`Validated`] cursor.
macro_rules! counted_list {
    ($(#[$meta:meta])* $list:ident, $iter:ident, $item:ty, $what:literal, |$rest:ident| $next:expr) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        pub struct $list<'a> {
            pub(crate) bytes: &'a [u8],
            pub(crate) count: usize,
        }

        impl<'a> $list<'a> {
            #[doc = concat!("Number of ", $what, ".")]
            pub fn len(&self) -> usize {
                self.count
            }

            /// True when there are none.
            pub fn is_empty(&self) -> bool {
                self.count == 0
            }

            #[doc = concat!("The ", $what, " in wire order.")]
            pub fn iter(&self) -> $iter<'a> {
                $iter { rest: Validated { buf: self.bytes }, left: self.count }
            }
        }

        impl<'a> IntoIterator for $list<'a> {
            type Item = $item;
            type IntoIter = $iter<'a>;
            fn into_iter(self) -> Self::IntoIter {
                self.iter()
            }
        }

        impl<'a> IntoIterator for &$list<'a> {
            type Item = $item;
            type IntoIter = $iter<'a>;
            fn into_iter(self) -> Self::IntoIter {
                self.iter()
            }
        }

        impl fmt::Debug for $list<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list().entries(self.iter()).finish()
            }
        }

        impl PartialEq for $list<'_> {
            fn eq(&self, other: &Self) -> bool {
                self.count == other.count && self.bytes == other.bytes
            }
        }

        impl Eq for $list<'_> {}

        #[doc = concat!("Iterator over [`", stringify!($list), "`].")]
        #[derive(Clone)]
        pub struct $iter<'a> {
            rest: Validated<'a>,
            left: usize,
        }

        impl<'a> Iterator for $iter<'a> {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<$item> {
                if self.left == 0 {
                    return None;
                }
                self.left -= 1;
                let $rest = &mut self.rest;
                Some($next)
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.left, Some(self.left))
            }
        }

        impl ExactSizeIterator for $iter<'_> {}
        impl FusedIterator for $iter<'_> {}
    };
}

counted_list! {
    /// The topic names of a subscription, borrowed from the input.
    TopicNames, TopicNamesIter, &'a str, "names", |rest| rest.str()
}

/// Partition ids borrowed from the input (big-endian `int32`s).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PartitionIds<'a> {
    pub(crate) bytes: &'a [u8],
}

impl<'a> PartitionIds<'a> {
    /// Number of ids.
    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The id at `index`.
    pub fn get(&self, index: usize) -> Option<i32> {
        let b = self.bytes.get(index * 4..index * 4 + 4)?;
        Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The ids in wire order.
    pub fn iter(&self) -> PartitionIdsIter<'a> {
        PartitionIdsIter { chunks: self.bytes.chunks_exact(4) }
    }

    /// Copies the ids into a vector.
    pub fn to_vec(&self) -> Vec<i32> {
        self.iter().collect()
    }
}

impl<'a> IntoIterator for PartitionIds<'a> {
    type Item = i32;
    type IntoIter = PartitionIdsIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for PartitionIds<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Iterator over [`PartitionIds`].
#[derive(Clone)]
pub struct PartitionIdsIter<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
}

impl Iterator for PartitionIdsIter<'_> {
    type Item = i32;

    #[inline]
    fn next(&mut self) -> Option<i32> {
        self.chunks.next().map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl DoubleEndedIterator for PartitionIdsIter<'_> {
    fn next_back(&mut self) -> Option<i32> {
        self.chunks.next_back().map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

impl ExactSizeIterator for PartitionIdsIter<'_> {}
impl FusedIterator for PartitionIdsIter<'_> {}

/// One topic and its partitions, borrowed from the input.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopicPartitionsView<'a> {
    /// The topic name.
    pub topic: &'a str,
    /// Its partition ids in wire order.
    pub partitions: PartitionIds<'a>,
}

impl TopicPartitionsView<'_> {
    /// Copies into the owned form.
    pub fn to_owned(&self) -> TopicPartitions {
        TopicPartitions { topic: self.topic.to_owned(), partitions: self.partitions.to_vec() }
    }
}

impl fmt::Debug for TopicPartitionsView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopicPartitions").field("topic", &self.topic).field("partitions", &self.partitions).finish()
    }
}

counted_list! {
    /// A list of `{topic, partitions}` groups (owned or assigned partitions), borrowed from the input.
    TopicPartitionsList, TopicPartitionsIter, TopicPartitionsView<'a>, "groups (topics)", |rest| {
        let topic = rest.str();
        let n = rest.i32().max(0) as usize;
        TopicPartitionsView { topic, partitions: PartitionIds { bytes: rest.take(n * 4) } }
    }
}

impl<'a> TopicPartitionsList<'a> {
    /// Total number of partition ids over all groups.
    pub fn partition_count(&self) -> usize {
        self.iter().map(|g| g.partitions.len()).sum()
    }

    /// Every `(topic, partition)` pair in wire order.
    pub fn pairs(&self) -> impl Iterator<Item = (&'a str, i32)> + 'a {
        self.iter().flat_map(|g| g.partitions.iter().map(move |p| (g.topic, p)))
    }

    /// Copies into the owned form.
    pub fn to_owned(&self) -> Vec<TopicPartitions> {
        self.iter().map(|g| g.to_owned()).collect()
    }
}

/// One topic and some of its partitions (owned form).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TopicPartitions {
    /// The topic name.
    pub topic: String,
    /// Partition ids.
    pub partitions: Vec<i32>,
}

impl TopicPartitions {
    /// A topic with the given partitions.
    pub fn new(topic: impl Into<String>, partitions: impl Into<Vec<i32>>) -> Self {
        TopicPartitions { topic: topic.into(), partitions: partitions.into() }
    }
}
