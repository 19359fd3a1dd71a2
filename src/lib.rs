//! # kafka-consumer-protocol
//!
//! The protocol that Apache Kafka consumer groups embed in their JoinGroup and SyncGroup
//! requests: the **Subscription** a member sends (topics, userData, owned partitions,
//! generation, rack) and the **Assignment** it receives, versions 0 to 3, byte-exact with
//! Apache Kafka's Java client.
//!
//! Three forms of each message:
//! - [`SubscriptionView`] / [`AssignmentView`]: decoded from `&[u8]` with zero heap
//!   allocations; every field is a view over the input.
//! - [`SubscriptionBuf`] / [`AssignmentBuf`]: decoded from [`bytes::Bytes`], `Send + Sync +
//!   'static`, sharing the input buffer instead of copying names and userData.
//! - [`Subscription`] / [`Assignment`]: plain values to build and encode.
//!
//! ```
//! use kafka_consumer_protocol::{Subscription, SubscriptionView, TopicPartitions, Version};
//!
//! let sub = Subscription::new(["orders"])
//!     .with_owned_partitions(vec![TopicPartitions::new("orders", [0, 1])])
//!     .with_generation_id(4);
//! let bytes = sub.encode(Version::V3)?;
//! let view = SubscriptionView::decode(&bytes).expect("valid");
//! assert_eq!(view.generation_id(), 4);
//! assert_eq!(view.to_owned(), sub);
//! # Ok::<(), kafka_consumer_protocol::EncodeError>(())
//! ```
//!
//! [`coordinator`] is a sans-IO consumer-group member (JoinGroup/SyncGroup/Heartbeat/LeaveGroup
//! as values, KIP-429 cooperative rebalancing, listener events in the KIP's order) and [`sim`]
//! runs a whole group with the broker's group coordinator in virtual time, checking that no
//! partition is ever owned twice.
//!
//! Decoding follows Java: a version above 3 is read with the v3 layout (newer fields are
//! appended, so an older reader ignores them), trailing bytes are counted but not an error,
//! negative versions are refused. [`DecodeOptions`] adds a strict mode, a lenient mode for
//! known third-party defects and an older reader's view. Malformed input yields a
//! [`DecodeError`] naming the kind, the byte offset and the field path; decoding never panics and
//! never allocates according to a count read from the input.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod assignor;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
pub mod codec;
pub mod coordinator;
pub mod group_api;
pub mod inspect;
mod partition_set;
#[cfg(feature = "pcap")]
pub mod pcap;
#[cfg(feature = "sim")]
pub mod sim;

pub use codec::{
    java_string_cmp, Assignment, AssignmentBuf, AssignmentView, CooperativeStickyUserData, DecodeError,
    DecodeErrorKind, DecodeOptions, EncodeError, FieldPath, MessageKind, PartitionIds, PartitionIdsIter, PathSegment,
    Repair, StickyUserData, StickyUserDataFormat, Subscription, SubscriptionBuf, SubscriptionView, TopicNames,
    TopicNamesIter, TopicPartitions, TopicPartitionsIter, TopicPartitionsList, TopicPartitionsView, Version,
};
pub use partition_set::PartitionSet;

/// The README's examples compile and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
