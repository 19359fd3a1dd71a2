//! The admin calls, one `impl Client` block per file: `metadata` (Metadata), `coordinators`
//! (FindCoordinator and the coordinator cache), `groups` (ListGroups, DescribeGroups,
//! ConsumerGroupDescribe), each with its conversion from `kafka-protocol`'s response to the
//! client's types.

mod coordinators;
mod groups;
mod metadata;

use super::StrBytes;

pub(super) fn text(s: &StrBytes) -> String {
    s.as_str().to_string()
}

pub(super) fn opt_text(s: &Option<StrBytes>) -> Option<String> {
    s.as_ref().map(text)
}
