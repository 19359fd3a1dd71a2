//! The codec: the consumer protocol's two messages, `ConsumerProtocolSubscription` and
//! `ConsumerProtocolAssignment` (v0-v3), and the sticky assignors' userData, byte-exact with
//! Apache Kafka's Java client.
//!
//! The layers, bottom up (each imports only the ones below it):
//!
//! - [`version`](Version), `error` ([`DecodeError`], [`EncodeError`]) and `options`
//!   ([`DecodeOptions`]): vocabulary with no byte layout.
//! - `wire`: the only module that knows the byte layout (big-endian integers, `int16`-length
//!   strings, `int32`-count arrays), for reading, validating and writing.
//! - `lists`: the zero-copy views over arrays `wire` has validated ([`TopicNames`],
//!   [`TopicPartitionsList`], [`PartitionIds`]) and the owned [`TopicPartitions`].
//! - `forms`, `subscription`, `assignment`: each message's one layout parser behind its three
//!   forms (borrowed view, `Bytes`-backed buffer, owned value) and its one encoder.
//! - `user_data`: the `sticky` and `cooperative-sticky` userData formats, the only parser of them.
//! - [`json`] (feature `json`): the two messages as JSON documents (the shape `kcp decode`
//!   prints, read back), above everything else here.
//!
//! One layout parser serves the three forms of each message. A [`DecodeError`] names the kind,
//! the byte offset and the field path. Decoding never panics and never allocates according to a
//! count read from the input (borrowed decoding allocates nothing at all, which
//! `tests/codec_zero_alloc.rs` counts); the golden vectors in `testdata/vectors/` come from
//! Java's own client and are replayed by the tests.
//!
//! The crate root re-exports the messages' three forms, [`TopicPartitions`], [`Version`],
//! [`DecodeOptions`], the errors (with [`DecodeErrorKind`]) and the userData types; the list
//! views and their iterators, the other parts of a [`DecodeError`], [`Repair`] and
//! [`java_string_cmp`] are public here only.

pub(crate) mod assignment;
pub(crate) mod error;
#[cfg(feature = "json")]
pub(crate) mod escape;
pub(crate) mod forms;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub mod json;
pub(crate) mod lists;
pub(crate) mod options;
pub(crate) mod subscription;
pub(crate) mod user_data;
pub(crate) mod version;
pub(crate) mod wire;

pub use assignment::{Assignment, AssignmentBuf, AssignmentView};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, FieldPath, MessageKind, PathSegment};
pub use lists::{
    PartitionIds, PartitionIdsIter, TopicNames, TopicNamesIter, TopicPartitions, TopicPartitionsIter,
    TopicPartitionsList, TopicPartitionsView,
};
pub use options::{DecodeOptions, Repair};
pub use subscription::{Subscription, SubscriptionBuf, SubscriptionView};
pub use user_data::{CooperativeStickyUserData, StickyUserData, StickyUserDataFormat};
pub use version::Version;
pub use wire::java_string_cmp;
