//! A consumer group as a JSON document (feature `json`): the topics' partition counts and racks
//! and the members as the leader receives them in JoinGroup. This is `kcp assign`'s input; run
//! [`leader::lead`](super::leader::lead) on it to get what a leader would send in SyncGroup.
//! [`crate::codec::json`] reads the decode shape of a single message and [`crate::sim::json`] the
//! simulator's scenarios.
//!
//! ```json
//! {"topics": {"orders": 6, "payments": 3},
//!  "partition_racks": {"orders": [["r1", "r2"], ["r2"], ["r1"], ["r2"], ["r3"], ["r1"]]},
//!  "members": [
//!    {"member_id": "m1", "group_instance_id": null, "topics": ["orders"],
//!     "owned_partitions": [{"topic": "orders", "partitions": [0]}],
//!     "generation_id": 2, "rack_id": null, "user_data": null},
//!    {"member_id": "m2", "subscription": "0003000000010006..."}]}
//! ```
//!
//! Every key but `topics` and `members` is optional; unknown keys are refused. A member is given
//! either by fields (`topics`, `owned_partitions`, `generation_id`, `rack_id`, `user_data`), which
//! are encoded as a v3 subscription, or by its encoded subscription (`subscription`, hex as
//! captured from a JoinGroup, kept byte for byte so the leader decodes exactly what was sent), not
//! both. The counts are checked before anything is allocated for them: at most
//! [`MAX_PARTITIONS`] partitions and [`MAX_MEMBERS`] members.
//!
//! ```
//! use kafka_consumer_protocol::assignor::json::group_from_json;
//! use kafka_consumer_protocol::assignor::{builtin, leader, RebalanceProtocol};
//!
//! let group = group_from_json(br#"{"topics": {"orders": 4}, "members": [
//!     {"member_id": "m1", "topics": ["orders"]},
//!     {"member_id": "m2", "topics": ["orders"]}]}"#).unwrap();
//! assert_eq!(group.metadata.topics["orders"].partitions, 4);
//! let range = builtin("range").unwrap();
//! let round = leader::lead(range.as_ref(), RebalanceProtocol::Eager, &group.metadata, &group.members).unwrap();
//! assert_eq!(round.assignment.partitions_of("m2")[0].partitions, [2, 3]);
//! ```

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::Deserialize;

use super::{ClusterMetadata, TopicInfo};
use crate::codec::escape::quoted;
use crate::codec::json::{
    groups_from, parse_document, parse_hex, user_data_from, DocumentError, Expecting, ObjectOnly, PartitionsDoc,
};
use crate::codec::{Subscription, Version};
use crate::group_api::JoinGroupMember;

/// The most partitions, over all topics, a group document may describe: 1,000,000 (the
/// assignors' memory grows with the partition count).
pub const MAX_PARTITIONS: u64 = 1_000_000;
/// The most members a group document may list: 100,000.
pub const MAX_MEMBERS: usize = 100_000;

/// A group read from a JSON document: what the leader's round takes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GroupDocument {
    /// The topics' partition counts and racks.
    pub metadata: ClusterMetadata,
    /// The members in document order, each with its subscription's bytes.
    pub members: Vec<JoinGroupMember>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a group object {\"topics\": {...}, \"members\": [...]}")]
struct GroupDoc {
    topics: BTreeMap<String, i64>,
    partition_racks: Option<BTreeMap<String, Vec<Vec<String>>>>,
    members: Vec<ObjectOnly<MemberDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a member object {\"member_id\": ..., \"topics\": [...]}")]
struct MemberDoc {
    member_id: String,
    group_instance_id: Option<String>,
    subscription: Option<String>,
    topics: Option<Vec<String>>,
    owned_partitions: Option<Vec<ObjectOnly<PartitionsDoc>>>,
    generation_id: Option<i32>,
    rack_id: Option<String>,
    user_data: Option<String>,
}

impl Expecting for GroupDoc {
    const EXPECTING: &'static str = "a group object {\"topics\": {...}, \"members\": [...]}";
}

impl Expecting for MemberDoc {
    const EXPECTING: &'static str = "a member object {\"member_id\": ..., \"topics\": [...]}";
}

fn metadata_from(doc: &mut GroupDoc) -> Result<ClusterMetadata, DocumentError> {
    let mut racks = doc.partition_racks.take().unwrap_or_default();
    let mut total = 0u64;
    let mut metadata = ClusterMetadata::default();
    for (name, &count) in &doc.topics {
        let at = format!("topics.{}", quoted(name, 60));
        let partitions = i32::try_from(count).ok().filter(|n| *n >= 0).ok_or_else(|| {
            DocumentError::value(format!("{at}: the partition count {count} is not in 0..=2147483647"))
        })?;
        total += partitions as u64;
        if total > MAX_PARTITIONS {
            return Err(DocumentError::value(format!(
                "{at}: the group has more than {MAX_PARTITIONS} partitions, the limit of kcp assign"
            )));
        }
        let partition_racks = racks.remove(name).unwrap_or_default();
        metadata.topics.insert(name.clone(), TopicInfo { partitions, partition_racks });
    }
    if let Some(name) = racks.keys().next() {
        return Err(DocumentError::shape(format!("partition_racks.{}: no such topic in \"topics\"", quoted(name, 60))));
    }
    Ok(metadata)
}

/// A member as the leader receives it: its subscription's bytes, as given or encoded (v3) from
/// its fields.
fn member_from(i: usize, m: MemberDoc) -> Result<JoinGroupMember, DocumentError> {
    let at = format!("members[{i}]");
    let metadata = match m.subscription {
        Some(hex) => {
            let by_fields = [
                ("topics", m.topics.is_some()),
                ("owned_partitions", m.owned_partitions.is_some()),
                ("generation_id", m.generation_id.is_some()),
                ("rack_id", m.rack_id.is_some()),
                ("user_data", m.user_data.is_some()),
            ];
            if let Some((key, _)) = by_fields.iter().find(|(_, given)| *given) {
                return Err(DocumentError::shape(format!(
                    "{at}: both \"subscription\" and \"{key}\" given: a member is given either by its encoded \
                     subscription or by fields"
                )));
            }
            parse_hex(&hex).map_err(|e| e.at(&format!("{at}.subscription")))?
        }
        None => {
            let mut subscription = Subscription::new(m.topics.unwrap_or_default())
                .with_user_data(user_data_from(m.user_data, &format!("{at}."))?)
                .with_owned_partitions(groups_from(m.owned_partitions))
                .with_generation_id(m.generation_id.unwrap_or(-1));
            subscription.rack_id = m.rack_id;
            subscription.encode(Version::V3).map_err(|e| DocumentError::value(format!("{at}: {e}")))?
        }
    };
    Ok(JoinGroupMember {
        member_id: m.member_id,
        group_instance_id: m.group_instance_id,
        metadata: Bytes::from(metadata),
    })
}

/// The group a JSON document describes (the shape above), members in document order.
pub fn group_from_json(text: &[u8]) -> Result<GroupDocument, DocumentError> {
    let mut doc: GroupDoc = parse_document(text, "the group")?;
    let metadata = metadata_from(&mut doc)?;
    if doc.members.len() > MAX_MEMBERS {
        return Err(DocumentError::value(format!(
            "members: {} members, more than the limit of kcp assign ({MAX_MEMBERS})",
            doc.members.len()
        )));
    }
    let members =
        doc.members.into_iter().enumerate().map(|(i, ObjectOnly(m))| member_from(i, m)).collect::<Result<_, _>>()?;
    Ok(GroupDocument { metadata, members })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::json::DocumentErrorKind;

    #[test]
    fn a_member_is_given_by_fields_or_by_its_subscription() {
        let group = group_from_json(
            br#"{"topics": {"t": 2}, "members": [{"member_id": "a", "topics": ["t"], "generation_id": 3},
                {"member_id": "b", "subscription": "0x0000 00000000 ffffffff"}]}"#,
        )
        .unwrap();
        let a = crate::codec::SubscriptionView::decode(&group.members[0].metadata).unwrap();
        assert_eq!((a.version(), a.generation_id()), (3, 3));
        assert_eq!(&group.members[1].metadata[..], [0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        let both = group_from_json(
            br#"{"topics": {}, "members": [{"member_id": "a", "subscription": "00", "rack_id": "r"}]}"#,
        )
        .unwrap_err();
        assert_eq!(both.kind(), DocumentErrorKind::Shape);
        assert!(both.to_string().starts_with("members[0]: both \"subscription\" and \"rack_id\""), "{both}");
    }

    #[test]
    fn counts_are_checked() {
        let negative = group_from_json(br#"{"topics": {"t": -1}, "members": []}"#).unwrap_err();
        assert_eq!(negative.kind(), DocumentErrorKind::Value);
        assert_eq!(negative.to_string(), "topics.\"t\": the partition count -1 is not in 0..=2147483647");
        let many = group_from_json(br#"{"topics": {"a": 999999, "b": 2}, "members": []}"#).unwrap_err();
        assert!(many.to_string().contains("more than 1000000 partitions"), "{many}");
        let racks = group_from_json(br#"{"topics": {}, "partition_racks": {"x": []}, "members": []}"#).unwrap_err();
        assert_eq!(racks.kind(), DocumentErrorKind::Shape);
    }
}
