//! Zero-copy list views over validated input: topic names, partition ids and
//! `{topic, partitions}` groups.

use core::fmt;
use core::iter::FusedIterator;

use crate::codec::wire::{int32_of, PartitionGroup, Validated};

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
        Some(int32_of(b))
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
        self.chunks.next().map(int32_of)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl DoubleEndedIterator for PartitionIdsIter<'_> {
    fn next_back(&mut self) -> Option<i32> {
        self.chunks.next_back().map(int32_of)
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
        let (topic, partitions) = raw_group(rest);
        // Validated at decode time; the fallback is unreachable for views built by this crate.
        TopicPartitionsView { topic: core::str::from_utf8(topic).unwrap_or(""), partitions }
    }
}

/// One `{topic, partitions}` group from a validated cursor: the topic name's bytes and the ids.
#[inline]
fn raw_group<'a>(rest: &mut Validated<'a>) -> (&'a [u8], PartitionIds<'a>) {
    let topic = rest.str_bytes();
    let n = rest.i32().max(0) as usize;
    (topic, PartitionIds { bytes: rest.take(n * 4) })
}

impl<'a> TopicPartitionsList<'a> {
    /// Total number of partition ids over all groups.
    pub fn partition_count(&self) -> usize {
        self.iter().map(|g| g.partitions.len()).sum()
    }

    /// Calls `f` with each group's topic name as bytes (validated at decode time, not again) and
    /// its partitions, in wire order: the claim walks, which only look the name up among known
    /// topics, skip a second UTF-8 validation per entry.
    #[inline]
    pub(crate) fn for_each_raw(&self, mut f: impl FnMut(&'a [u8], PartitionIds<'a>)) {
        let mut rest = Validated { buf: self.bytes };
        for _ in 0..self.count {
            let (topic, partitions) = raw_group(&mut rest);
            f(topic, partitions);
        }
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

impl PartitionGroup for TopicPartitions {
    #[inline(always)]
    fn topic(&self) -> &str {
        &self.topic
    }

    #[inline(always)]
    fn partitions(&self) -> &[i32] {
        &self.partitions
    }
}
