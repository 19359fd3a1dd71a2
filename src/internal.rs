//! What exists only for the crate's tests, fuzz targets, benchmarks and the `kcp` binary: not
//! part of the stable API, may change in any release. Hidden from the docs; everything
//! scaffolding-like is reached through this one door instead of hidden items scattered over the
//! public modules.
//!
//! - a member's claim as an owned value ([`member_claim`]), through which the model of Java's
//!   sticky assignor (the parity tests' oracle, in the tests' helper crate `testkit/`) reads
//!   claims exactly as the assignors do;
//! - the escaping of strings from an input ([`terminal_safe`], [`quoted`], feature `json`),
//!   shared by the JSON readers' errors and the `kcp` binary's output;
//! - the simulator's scaffolding (feature `sim`): its random generator [`Rng`], the broker's
//!   group coordinator [`Broker`] and its [`Reply`] (the client's tests drive a member against
//!   it), the raw steps the fuzzer maps onto scenarios ([`RawStep`], [`scenario_from_raw`]) and
//!   the SVG timeline of `kcp simulate --svg` ([`svg`]).

use std::borrow::Cow;

use crate::{StickyUserData, Subscription, TopicPartitions};

#[cfg(feature = "json")]
pub use crate::codec::escape::{quoted, terminal_safe};
#[cfg(feature = "sim")]
pub use crate::sim::broker::{Broker, Reply};
#[cfg(feature = "sim")]
pub use crate::sim::engine::Rng;
#[cfg(feature = "sim")]
pub use crate::sim::raw::{scenario_from_raw, RawStep};

/// SVG rendering of a simulator timeline (`kcp simulate --svg`, `kcp group history --svg`); its
/// markup is not a stable API.
#[cfg(feature = "sim")]
pub mod svg {
    pub use crate::sim::svg::{render, render_with, Labels};
}

/// A member's claim as each sticky assignor reads it: owned partitions and generation (the
/// tests' owned-value view of what `assignor::claims` reads from the views).
///
/// ```
/// use kafka_consumer_protocol::internal::member_claim;
/// use kafka_consumer_protocol::{CooperativeStickyUserData, Subscription, TopicPartitions};
/// let sub = Subscription::new(["t"])
///     .with_owned_partitions(vec![TopicPartitions::new("t", [1])])
///     .with_user_data(CooperativeStickyUserData { generation: 4 }.encode());
/// // No generation field: cooperative-sticky falls back to the userData generation.
/// let (owned, generation) = member_claim(&sub, true);
/// assert_eq!((owned.as_ref(), generation), (&[TopicPartitions::new("t", [1])][..], Some(4)));
/// // The eager sticky assignor reads only userData (here not a sticky layout: nothing, -1).
/// let (owned, generation) = member_claim(&sub, false);
/// assert_eq!((owned.len(), generation), (0, Some(-1)));
/// ```
pub fn member_claim(subscription: &Subscription, cooperative: bool) -> (Cow<'_, [TopicPartitions]>, Option<i32>) {
    if cooperative {
        let generation = crate::assignor::claims::cooperative_generation(
            subscription.generation_id,
            subscription.user_data.as_deref(),
        );
        (Cow::Borrowed(&subscription.owned_partitions), generation)
    } else {
        match subscription.user_data.as_deref() {
            None | Some([]) => (Cow::Borrowed(&[]), None),
            Some(bytes) => {
                let (data, _) = StickyUserData::decode_java(bytes);
                (Cow::Owned(data.previous_assignment), data.generation)
            }
        }
    }
}
