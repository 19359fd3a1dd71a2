//! Partition assignors: the pluggable strategy the group leader runs, shaped like Apache
//! Kafka's `ConsumerPartitionAssignor`.
//!
//! Built-ins, with Java's names and protocols: [`RangeAssignor`] (`range`),
//! [`RoundRobinAssignor`] (`roundrobin`), [`StickyAssignor`] (`sticky`) and
//! [`CooperativeStickyAssignor`] (`cooperative-sticky`). [`builtin`] makes one by name.
//! Each module documents where it deliberately differs from Java.
//!
//! [`leader`] is the leader's round around an assignor (decode, assign, filter, validate, hand
//! over, encode), run by the coordinator and `kcp assign`; [`json`] (feature `json`) reads the
//! group document `kcp assign` takes. The assignors read members through
//! the codec's views and write through its encoder, never the wire layer; inside their hot loops
//! they keep flat integer ids instead of [`PartitionSet`](crate::PartitionSet)s.
//!
//! ```
//! use kafka_consumer_protocol::assignor::{builtin, ClusterMetadata, GroupMember, RebalanceProtocol};
//! use kafka_consumer_protocol::Subscription;
//! let assignor = builtin("cooperative-sticky").unwrap();
//! assert_eq!(assignor.supported_protocols(), [RebalanceProtocol::Cooperative, RebalanceProtocol::Eager]);
//! let members: Vec<GroupMember> = ["m1", "m2"]
//!     .iter()
//!     .map(|id| GroupMember { member_id: id.to_string(), group_instance_id: None, subscription: Subscription::new(["orders"]) })
//!     .collect();
//! let out = assignor.assign(&ClusterMetadata::from_counts([("orders", 4)]), &members).unwrap();
//! assert_eq!(out.partitions_of("m1")[0].partitions, [0, 2]);
//! assert_eq!(out.partitions_of("m2")[0].partitions, [1, 3]);
//! assert!(builtin("nope").is_none());
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use crate::{Assignment, Subscription, SubscriptionView};

pub(crate) mod claims;
pub(crate) mod common;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub mod json;
pub mod leader;
mod output;
mod placement;
mod range;
mod roundrobin;
mod sticky;

pub use output::{GroupAssignment, MemberAssignment, TopicGroups};
pub use range::RangeAssignor;
pub use roundrobin::RoundRobinAssignor;
pub use sticky::{CooperativeStickyAssignor, StickyAssignor};

/// Names of the built-in assignors, in Java's `ASSIGN_FROM_SUBSCRIBED_ASSIGNORS` order.
pub const BUILTIN_NAMES: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];

/// A fresh built-in assignor by its protocol name (`range`, `roundrobin`, `sticky`,
/// `cooperative-sticky`); `None` for any other name.
///
/// ```
/// use kafka_consumer_protocol::assignor::{builtin, BUILTIN_NAMES};
/// for name in BUILTIN_NAMES {
///     assert_eq!(builtin(name).unwrap().name(), name);
/// }
/// ```
pub fn builtin(name: &str) -> Option<Box<dyn PartitionAssignor>> {
    Some(match name {
        "range" => Box::new(RangeAssignor),
        "roundrobin" => Box::new(RoundRobinAssignor),
        "sticky" => Box::new(StickyAssignor::new()),
        "cooperative-sticky" => Box::new(CooperativeStickyAssignor::new()),
        _ => return None,
    })
}

/// Rebalance protocols (KIP-429). The order is Java's enum order: the coordinator picks the
/// highest protocol every configured assignor supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RebalanceProtocol {
    /// Revoke everything before rejoining.
    Eager = 0,
    /// Keep partitions across the rebalance; revoke only what moves, then rejoin.
    Cooperative = 1,
}

impl RebalanceProtocol {
    /// `"eager"` or `"cooperative"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RebalanceProtocol::Eager => "eager",
            RebalanceProtocol::Cooperative => "cooperative",
        }
    }
}

/// What the leader knows about one topic.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TopicInfo {
    /// Number of partitions (ids `0..partitions`).
    pub partitions: i32,
    /// Racks of each partition's replicas (index = partition id); empty when unknown.
    pub partition_racks: Vec<Vec<String>>,
}

/// The topic metadata an assignment is computed against.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ClusterMetadata {
    /// Topics by name. Subscribed topics missing here are not assigned.
    pub topics: BTreeMap<String, TopicInfo>,
}

impl ClusterMetadata {
    /// Metadata from `(topic, partition count)` pairs, without racks.
    pub fn from_counts<I, T>(counts: I) -> Self
    where
        I: IntoIterator<Item = (T, i32)>,
        T: Into<String>,
    {
        ClusterMetadata {
            topics: counts
                .into_iter()
                .map(|(t, n)| (t.into(), TopicInfo { partitions: n, partition_racks: Vec::new() }))
                .collect(),
        }
    }
}

/// One member of the group as the leader sees it after decoding its JoinGroup metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupMember {
    /// The member id the broker gave it.
    pub member_id: String,
    /// Its static `group.instance.id`, if any (not on the wire: from the JoinGroup response).
    pub group_instance_id: Option<String>,
    /// Its decoded subscription.
    pub subscription: Subscription,
}

/// One member as the leader receives it in the JoinGroup response: its subscription still in
/// wire form, read in place. [`PartitionAssignor::assign_views`] takes these, so a leader can
/// assign straight from the response bytes without copying every topic name.
///
/// ```
/// use kafka_consumer_protocol::assignor::{builtin, ClusterMetadata, GroupMemberView, PartitionAssignor};
/// use kafka_consumer_protocol::{Subscription, SubscriptionView, Version};
/// let bytes = Subscription::new(["orders"]).encode(Version::V3).unwrap();
/// let view = SubscriptionView::decode(&bytes).unwrap();
/// let members = [GroupMemberView::new("m1", view), GroupMemberView::new("m2", view)];
/// let out = builtin("range").unwrap().assign_views(&ClusterMetadata::from_counts([("orders", 2)]), &members).unwrap();
/// assert_eq!(out.partitions_of("m2")[0].partitions, [1]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMemberView<'a> {
    /// The member id the broker gave it.
    pub member_id: &'a str,
    /// Its static `group.instance.id`, if any.
    pub group_instance_id: Option<&'a str>,
    /// Its subscription, decoded in place.
    pub subscription: SubscriptionView<'a>,
}

impl<'a> GroupMemberView<'a> {
    /// A member with no static instance id.
    pub fn new(member_id: &'a str, subscription: SubscriptionView<'a>) -> Self {
        GroupMemberView { member_id, group_instance_id: None, subscription }
    }

    /// Copies into the owned [`GroupMember`].
    pub fn to_owned(&self) -> GroupMember {
        GroupMember {
            member_id: self.member_id.to_owned(),
            group_instance_id: self.group_instance_id.map(str::to_owned),
            subscription: self.subscription.to_owned(),
        }
    }
}

/// A partition withheld this round because its previous owner must revoke it first
/// (cooperative protocol). A partition that several members claim at the same generation is
/// listed once per member that must revoke it, each with the same `to`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PendingPartition {
    /// Topic.
    pub topic: String,
    /// Partition id.
    pub partition: i32,
    /// The member that still owns it (claims it at its highest claim generation) and must revoke
    /// it.
    pub from: String,
    /// Where it is once the rebalance is over, when known. `cooperative-sticky` plays the
    /// follow-up rounds ahead on the state the members rejoin with (what the next leader computes
    /// from) and names where the last one puts it (`None` past 8 rounds); the leader's
    /// hand-over after a custom assignor names that assignor's target.
    pub to: Option<String>,
}

/// Why an assignor could not assign.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AssignError {
    /// The same member id is listed twice (the id).
    DuplicateMemberId(String),
    /// More members than the built-in assignors index (2^32 - 1).
    TooManyMembers,
    /// More partitions over all topics than the built-in assignors index (the limit).
    TooManyPartitions {
        /// The most partitions a group may have.
        limit: u32,
    },
    /// The assignor is computing an assignment elsewhere: the coordinator handed the round out
    /// ([`Config::offload_assignment`](crate::coordinator::Config::offload_assignment)) and
    /// holds only a stand-in, which refuses to assign (the assignor's name).
    AssignorBusy(String),
    /// The assignor panicked on the thread that ran it (the panic's message); the member that
    /// ran it cannot lead any more.
    AssignorPanicked(String),
    /// A custom assignor refused the group, for its own reason: its error, kept whole
    /// ([`Error::source`](std::error::Error::source) returns it; build one with
    /// [`AssignError::custom`]).
    Custom(CustomAssignorError),
    /// A custom cooperative assignor gave a partition to a member while another one still owns it.
    CooperativeViolation(String),
}

impl fmt::Display for AssignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssignError::DuplicateMemberId(id) => write!(f, "invalid assignor input: member id {id:?} appears twice"),
            AssignError::TooManyMembers => write!(f, "invalid assignor input: too many members"),
            AssignError::TooManyPartitions { limit } => {
                write!(f, "invalid assignor input: more than {limit} partitions in total")
            }
            AssignError::AssignorBusy(name) => write!(f, "assignor {name} is computing an assignment elsewhere"),
            AssignError::AssignorPanicked(m) => write!(f, "the assignor panicked: {m}"),
            AssignError::Custom(m) => write!(f, "the assignor failed: {m}"),
            AssignError::CooperativeViolation(m) => write!(f, "cooperative assignment violation: {m}"),
        }
    }
}

impl std::error::Error for AssignError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AssignError::Custom(e) => Some(e.get_ref()),
            _ => None,
        }
    }
}

impl AssignError {
    /// A custom assignor's failure: any error (`Send + Sync`), or a message (`&str`, `String`).
    /// The error stays reachable from the [`AssignError`], the coordinator's and the leader's
    /// errors that wrap it, through [`Error::source`](std::error::Error::source).
    ///
    /// ```
    /// use std::error::Error;
    /// use kafka_consumer_protocol::assignor::AssignError;
    ///
    /// #[derive(Debug)]
    /// struct QuotaExceeded { member_id: String }
    /// impl std::fmt::Display for QuotaExceeded {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         write!(f, "{} is over its quota", self.member_id)
    ///     }
    /// }
    /// impl Error for QuotaExceeded {}
    ///
    /// let e = AssignError::custom(QuotaExceeded { member_id: "c1".into() });
    /// assert_eq!(e.to_string(), "the assignor failed: c1 is over its quota");
    /// let cause = e.source().unwrap().downcast_ref::<QuotaExceeded>().unwrap();
    /// assert_eq!(cause.member_id, "c1");
    /// // A message is enough too.
    /// assert_eq!(AssignError::custom("no rack map").to_string(), "the assignor failed: no rack map");
    /// ```
    pub fn custom(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        AssignError::Custom(CustomAssignorError(Arc::from(error.into())))
    }
}

/// A custom assignor's own error inside [`AssignError::Custom`]. Shared (an `Arc`) so that the
/// coordinator's errors and events that carry it stay `Clone`; two are equal when their
/// messages are (an error type need not be comparable).
#[derive(Clone)]
pub struct CustomAssignorError(Arc<dyn std::error::Error + Send + Sync>);

impl CustomAssignorError {
    /// The custom assignor's error, to downcast to its own type (`downcast_ref`).
    pub fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for CustomAssignorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for CustomAssignorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl PartialEq for CustomAssignorError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl Eq for CustomAssignorError {}

/// A partition assignment strategy, as Kafka's `ConsumerPartitionAssignor`.
///
/// Implement it for a custom strategy; the coordinator runs it on the leader.
pub trait PartitionAssignor: Send {
    /// The protocol name sent in JoinGroup (for example `"cooperative-sticky"`).
    fn name(&self) -> &str;

    /// Rebalance protocols this assignor supports.
    fn supported_protocols(&self) -> &[RebalanceProtocol] {
        &[RebalanceProtocol::Eager]
    }

    /// userData this member adds to its subscription for this assignor.
    fn subscription_user_data(&self, _topics: &[String]) -> Option<Bytes> {
        None
    }

    /// Computes the group's assignment. Must be deterministic for the same input. A custom
    /// assignor that refuses the group returns its own error as [`AssignError::custom`], which
    /// the caller of the leader's round can downcast through `source()`.
    fn assign(&self, metadata: &ClusterMetadata, members: &[GroupMember]) -> Result<GroupAssignment, AssignError>;

    /// [`PartitionAssignor::assign`] on members whose subscriptions are still in wire form, as
    /// the leader receives them. Must give the same result as `assign` on the same members
    /// decoded. The default copies them into [`GroupMember`]s; the built-ins read them in place.
    fn assign_views(
        &self,
        metadata: &ClusterMetadata,
        members: &[GroupMemberView<'_>],
    ) -> Result<GroupAssignment, AssignError> {
        let owned: Vec<GroupMember> = members.iter().map(GroupMemberView::to_owned).collect();
        self.assign(metadata, &owned)
    }

    /// Called on every member when it receives its assignment for `generation_id`.
    fn on_assignment(&mut self, _assignment: &Assignment, _generation_id: i32) {}
}
