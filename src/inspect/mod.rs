//! Group diagnostics: what a live consumer group really holds, computed from what the broker
//! describes plus the topic metadata. No I/O: the caller (the `kcp group` commands, or your own
//! client) fetches DescribeGroups / ConsumerGroupDescribe and Metadata and hands the results in.
//!
//! - [`inspect_classic`] decodes every member's Subscription (with the sticky assignors'
//!   userData) and Assignment of a classic group with the crate's codec, keeps going when one
//!   payload is malformed, and reports [`Diagnostic`]s computed from the whole group.
//!   [`ClassicGroup`] is the crate's one model of a described classic group: its members are
//!   [`group_api::DescribedGroupMember`](crate::group_api::DescribedGroupMember)s, and
//!   `client::Client::describe_groups` returns it as it is.
//! - [`inspect_consumer`] does the same for a KIP-848 (`group.protocol=consumer`) group as
//!   ConsumerGroupDescribe returns it: epochs, current and target assignments. [`ConsumerGroup`]
//!   is the crate's one model of such a group: `client::Client::describe_consumer_groups`
//!   (feature `client`) returns it as it is, so there is nothing to convert.
//! - [`watch`] turns successive snapshots of one group into change events (state changes,
//!   rebalances, members joining and leaving, assignment changes, diagnostics, rebalance storms).
//!
//! ```
//! use bytes::Bytes;
//! use kafka_consumer_protocol::assignor::ClusterMetadata;
//! use kafka_consumer_protocol::group_api::DescribedGroupMember;
//! use kafka_consumer_protocol::inspect::{inspect_classic, ClassicGroup, DiagnosticKind};
//! use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
//!
//! let member = |id: &str, owned: Vec<i32>, assigned: Vec<i32>| DescribedGroupMember {
//!     member_id: id.into(),
//!     member_metadata: Bytes::from(
//!         Subscription::new(["orders"])
//!             .with_owned_partitions(vec![TopicPartitions::new("orders", owned)])
//!             .with_generation_id(3)
//!             .encode(Version::V3)
//!         .unwrap(),
//!     ),
//!     member_assignment: Bytes::from(
//!         Assignment::new(vec![TopicPartitions::new("orders", assigned)])
//!             .encode(Version::V3)
//!             .unwrap(),
//!     ),
//!     ..DescribedGroupMember::default()
//! };
//! let group = ClassicGroup {
//!     group_id: "g".into(),
//!     state: "Stable".into(),
//!     protocol_type: "consumer".into(),
//!     protocol: "range".into(),
//!     members: vec![member("c1", vec![0], vec![0, 1]), member("c2", vec![1], vec![1])],
//! };
//! let report = inspect_classic(&group, &ClusterMetadata::from_counts([("orders", 3)]));
//! let kinds: Vec<DiagnosticKind> = report.diagnostics.iter().map(|d| d.kind).collect();
//! assert_eq!(
//!     kinds,
//!     [DiagnosticKind::DoubleAssignment, DiagnosticKind::PendingRevocation, DiagnosticKind::UnassignedPartition]
//! );
//! assert_eq!(report.diagnostics[0].message, "orders-1 is assigned to 2 members: c1, c2");
//! ```

mod classic;
mod consumer;
mod diagnostic;
pub mod lag;
pub mod offsets;
mod partitions;
pub mod upgrade;
pub mod watch;

pub use classic::{
    inspect_classic, ClassicGroup, ClassicGroupReport, ClassicMemberReport, ReportedPayload, UserDataReading,
};
pub use consumer::{inspect_consumer, ConsumerGroup, ConsumerGroupReport, ConsumerMember, MemberType};
pub use diagnostic::{Diagnostic, DiagnosticKind, PayloadKind};
