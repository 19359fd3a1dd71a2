//! The admin calls, one `impl Client` block per file: `metadata` (Metadata), `coordinators`
//! (FindCoordinator and the coordinator cache), `groups` (ListGroups, DescribeGroups,
//! ConsumerGroupDescribe), `configs` (DescribeConfigs of a broker, the finalized features), `fetch` (a partition's
//! records with Fetch), each with its conversion from `kafka-protocol`'s response to the
//! client's types.

mod configs;
pub use configs::BrokerConfig;
mod coordinators;
pub(crate) mod fetch;
mod groups;
mod metadata;
pub(crate) mod offsets;
#[cfg(feature = "offsets-log")]
pub(crate) mod timestamps;
pub(super) mod writes;

use super::StrBytes;

pub(super) fn text(s: &StrBytes) -> String {
    s.as_str().to_string()
}

pub(super) fn opt_text(s: &Option<StrBytes>) -> Option<String> {
    s.as_ref().map(text)
}
