//! The leader's round, in one function for every caller: the coordinator's leader, `kcp assign`,
//! the simulator (through the coordinator) and the fuzz targets all run [`lead`], so what `kcp
//! assign` prints is what a leader sends.
//!
//! Java's `ConsumerCoordinator.onLeaderElected` and `performAssignment`, in order:
//!
//! 1. decode each member's subscription from the JoinGroup response, in place (a leader of a
//!    large group copies no topic name);
//! 2. run the assignor ([`PartitionAssignor::assign_views`]); every member gets an entry;
//! 3. drop what the leader's metadata does not know (a partition id beyond the count, a
//!    negative id, a topic it does not have), except KIP-429 step 2.6 in the cooperative
//!    protocol: a claimed partition of a topic missing from the metadata goes back to its
//!    claimer (the leader cannot tell a deleted topic from its own stale metadata);
//! 4. a custom assignor under the cooperative protocol is checked with
//!    [`validate_cooperative_assignment`] (the built-in `cooperative-sticky` is trusted, as in
//!    Java);
//! 5. the KIP-429 hand-over ([`apply_cooperative_handover`]): a partition another member still
//!    owns is withheld from its new owner this round. Owners are read as `cooperative-sticky`
//!    reads them: per partition, the claimers at its highest claim generation (a claim at an
//!    older generation than another on the same partition is stale and withholds nothing, as in
//!    Java). It runs under the cooperative protocol (every claim), and under the eager protocol only for an assignor that also supports the
//!    cooperative one (`cooperative-sticky` chosen by a group whose leader still rebalances
//!    eagerly, during an upgrade: claims at the group's highest claim generation only, as Java's
//!    `CooperativeStickyAssignor` withholds what changes owner whatever the leader's protocol).
//!    An eager-only assignor (`range`, `roundrobin`, `sticky`) under the eager protocol gets no
//!    hand-over, as Java's leader does no validation and no withholding then: every member has
//!    revoked all it owned before rejoining, and nothing would trigger a follow-up round for a
//!    withheld partition;
//! 6. encode each member's Assignment (v3, what the leader puts in SyncGroup).
//!
//! ```
//! use bytes::Bytes;
//! use kafka_consumer_protocol::assignor::{builtin, leader, ClusterMetadata, RebalanceProtocol};
//! use kafka_consumer_protocol::group_api::JoinGroupMember;
//! use kafka_consumer_protocol::{AssignmentView, Subscription, TopicPartitions, Version};
//!
//! let member = |id: &str, owned: Vec<TopicPartitions>| {
//!     let mut subscription = Subscription::new(["orders"]);
//!     subscription.owned_partitions = owned;
//!     JoinGroupMember {
//!         member_id: id.into(),
//!         group_instance_id: None,
//!         metadata: Bytes::from(subscription.encode(Version::V3).unwrap()),
//!     }
//! };
//! // m1 owns all four partitions; m2 joins.
//! let members = [member("m1", vec![TopicPartitions::new("orders", [0, 1, 2, 3])]), member("m2", vec![])];
//! let assignor = builtin("cooperative-sticky").unwrap();
//! let metadata = ClusterMetadata::from_counts([("orders", 4)]);
//! let round = leader::lead(assignor.as_ref(), RebalanceProtocol::Cooperative, &metadata, &members)?;
//! // m1 keeps two; the two that move are withheld until m1 has revoked them.
//! assert_eq!(round.assignment.partitions_of("m1")[0].partitions.len(), 2);
//! assert!(round.assignment.partitions_of("m2").is_empty());
//! assert_eq!(round.assignment.pending.len(), 2);
//! // The SyncGroup request's assignments, encoded.
//! let m2 = &round.sync_assignments[1];
//! assert_eq!(m2.member_id, "m2");
//! assert!(AssignmentView::decode(&m2.assignment)?.assigned_partitions().is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every claim is untrusted input (a partition id of 2^31 - 1, say), so no table here is sized
//! by one: the hand-over's tables are bounded by the result's own size.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use bytes::Bytes;

use super::claims::{Claim, Owners};
use super::common::Member;
use super::{
    AssignError, ClusterMetadata, GroupAssignment, GroupMember, GroupMemberView, PartitionAssignor, PendingPartition,
    RebalanceProtocol,
};
use crate::group_api::{JoinGroupMember, SyncGroupAssignment};
use crate::partition_set::PartitionSet;
use crate::{DecodeError, EncodeError, SubscriptionView, Version};

/// The name of the built-in cooperative assignor, whose assignments are not validated (Java
/// skips them too, KAFKA-13406).
pub const COOPERATIVE_STICKY: &str = "cooperative-sticky";

/// What one leader round produced.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LeaderRound {
    /// The group's assignment after the leader's steps; `pending` lists what the hand-over
    /// withheld.
    pub assignment: GroupAssignment,
    /// Each member's encoded Assignment (v3), in `assignment`'s member order: the SyncGroup
    /// request's assignments.
    pub sync_assignments: Vec<SyncGroupAssignment>,
    /// Every topic some member subscribes to.
    pub subscribed_topics: BTreeSet<String>,
}

/// Why the leader's round failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaderError {
    /// A member's subscription (its JoinGroup metadata) does not decode.
    Subscription {
        /// The member.
        member_id: String,
        /// The codec's error.
        error: DecodeError,
    },
    /// The assignor failed, or a custom cooperative assignor violated the protocol.
    Assign(AssignError),
    /// A member's assignment cannot be encoded.
    Encode {
        /// The member.
        member_id: String,
        /// The codec's error.
        error: EncodeError,
    },
}

impl fmt::Display for LeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaderError::Subscription { member_id, error } => write!(f, "subscription of {member_id}: {error}"),
            LeaderError::Assign(e) => write!(f, "{e}"),
            LeaderError::Encode { member_id, error } => write!(f, "assignment of {member_id}: {error}"),
        }
    }
}

impl std::error::Error for LeaderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LeaderError::Subscription { error, .. } => Some(error),
            LeaderError::Assign(e) => Some(e),
            LeaderError::Encode { error, .. } => Some(error),
        }
    }
}

/// The leader's whole round on the members of a JoinGroup response (see the
/// [module docs](self)): decode, assign, drop what `metadata` does not know, validate a custom
/// cooperative assignor, hand over, encode.
pub fn lead(
    assignor: &dyn PartitionAssignor,
    protocol: RebalanceProtocol,
    metadata: &ClusterMetadata,
    members: &[JoinGroupMember],
) -> Result<LeaderRound, LeaderError> {
    let mut group: Vec<GroupMemberView<'_>> = Vec::with_capacity(members.len());
    for m in members {
        let subscription = SubscriptionView::decode(&m.metadata)
            .map_err(|error| LeaderError::Subscription { member_id: m.member_id.clone(), error })?;
        group.push(GroupMemberView {
            member_id: &m.member_id,
            group_instance_id: m.group_instance_id.as_deref(),
            subscription,
        });
    }
    let subscribed_topics = subscribed_topics(&group);
    let assignment = assign(assignor, protocol, metadata, &group).map_err(LeaderError::Assign)?;
    let mut sync_assignments = Vec::with_capacity(assignment.len());
    for a in assignment.members() {
        let bytes = a
            .encode(Version::V3)
            .map_err(|error| LeaderError::Encode { member_id: a.member_id().to_owned(), error })?;
        sync_assignments
            .push(SyncGroupAssignment { member_id: a.member_id().to_owned(), assignment: Bytes::from(bytes) });
    }
    Ok(LeaderRound { assignment, sync_assignments, subscribed_topics })
}

/// Steps 2 to 5 of the round on members already decoded: what [`lead`] encodes.
pub fn assign(
    assignor: &dyn PartitionAssignor,
    protocol: RebalanceProtocol,
    metadata: &ClusterMetadata,
    group: &[GroupMemberView<'_>],
) -> Result<GroupAssignment, AssignError> {
    let mut result = assignor.assign_views(metadata, group)?;
    for m in group {
        result.ensure_member(m.member_id);
    }
    let cooperative = protocol == RebalanceProtocol::Cooperative;
    let mut claimed: BTreeSet<(&str, &str, i32)> = BTreeSet::new();
    if cooperative {
        for m in group {
            for g in m.subscription.owned_partitions().iter().filter(|g| !metadata.topics.contains_key(g.topic)) {
                claimed.extend(g.partitions.iter().map(|p| (m.member_id, g.topic, p)));
            }
        }
    }
    result.retain_partitions(|member, topic, p| match metadata.topics.get(topic) {
        Some(info) => p >= 0 && p < info.partitions,
        None => p >= 0 && claimed.contains(&(member, topic, p)),
    });
    if cooperative && assignor.name() != COOPERATIVE_STICKY {
        // A custom assignor's result is checked against the owned form (rare: copy here).
        let owned: Vec<GroupMember> = group.iter().map(GroupMemberView::to_owned).collect();
        validate_cooperative_assignment(&owned, &result)?;
    }
    let Some(claims) = handover_claims(assignor, protocol) else {
        return Ok(result);
    };
    let claims: Vec<(&str, Claim<'_>)> =
        handover_claimers(group, claims).map(|m| (m.member_id, Claim::of(Member::View(m), true))).collect();
    handover(&claims, &mut result);
    Ok(result)
}

/// Which claims the hand-over honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HandoverClaims {
    /// Every member's, each partition's claimers at its highest generation owning it (the
    /// cooperative protocol).
    All,
    /// Only those at the group's highest claim generation (the eager protocol with an assignor
    /// that supports the cooperative one).
    HighestGeneration,
}

/// Whether the hand-over runs this round, and on which claims (see step 5 of the
/// [module docs](self)). Cooperative protocol: every claim. Eager protocol with an assignor
/// that supports the cooperative protocol (Java's `CooperativeStickyAssignor` withholds what
/// changes owner in its own `adjustAssignment`, whatever the leader's protocol: a group that
/// chose it while some members still rebalance eagerly keeps its cooperative members' partitions
/// safe): the claims at the group's highest claim generation. An eager member revokes
/// everything before it rejoins and nothing triggers the follow-up round a withheld partition
/// waits for, so a stale claim (a member that missed a rebalance still listing partitions)
/// would keep a partition unassigned until the next rebalance; Java's assignors discard claims
/// below the highest generation too. Eager protocol with an eager-only assignor (`range`,
/// `roundrobin`, `sticky`): none, as Java's leader does no validation and no withholding under
/// EAGER.
fn handover_claims(assignor: &dyn PartitionAssignor, protocol: RebalanceProtocol) -> Option<HandoverClaims> {
    if protocol == RebalanceProtocol::Cooperative {
        Some(HandoverClaims::All)
    } else if assignor.supported_protocols().contains(&RebalanceProtocol::Cooperative) {
        Some(HandoverClaims::HighestGeneration)
    } else {
        None
    }
}

/// The members whose claims the hand-over honours.
fn handover_claimers<'g, 'a>(
    group: &'g [GroupMemberView<'a>],
    claims: HandoverClaims,
) -> impl Iterator<Item = &'g GroupMemberView<'a>> + 'g {
    let claimers = move || group.iter().filter(|m| !m.subscription.owned_partitions().is_empty());
    let claim_generation = |m: &GroupMemberView<'_>| Claim::of(Member::View(m), true).generation();
    let current = match claims {
        HandoverClaims::All => i32::MIN,
        HandoverClaims::HighestGeneration => claimers().map(claim_generation).max().unwrap_or(-1),
    };
    claimers().filter(move |m| claim_generation(m) >= current)
}

/// Every topic the members subscribe to.
fn subscribed_topics(group: &[GroupMemberView<'_>]) -> BTreeSet<String> {
    let mut all_topics = BTreeSet::new();
    let mut previous = None;
    for m in group {
        // Members mostly share their topic list: one byte compare skips a repeated one.
        let topics = m.subscription.topics();
        if previous != Some(topics) {
            for t in topics.iter() {
                if !all_topics.contains(t) {
                    all_topics.insert(t.to_owned());
                }
            }
            previous = Some(topics);
        }
    }
    all_topics
}

/// Java `validateCooperativeAssignment`: no partition may be added to one member while it is
/// revoked from another in the same rebalance.
pub fn validate_cooperative_assignment(members: &[GroupMember], result: &GroupAssignment) -> Result<(), AssignError> {
    let mut added = PartitionSet::new();
    let mut revoked = PartitionSet::new();
    for m in members {
        let owned = PartitionSet::from_groups(&m.subscription.owned_partitions);
        let assigned = PartitionSet::from_groups(&result.partitions_of(&m.member_id));
        added.extend(assigned.difference(&owned));
        revoked.extend(owned.difference(&assigned));
    }
    let both: Vec<(&str, i32)> = added.intersection(&revoked).collect();
    if both.is_empty() {
        Ok(())
    } else {
        Err(AssignError::CooperativeViolation(format!(
            "Assignor supporting the COOPERATIVE protocol violates its requirements: {both:?} are both added and revoked"
        )))
    }
}

/// The KIP-429 leader hand-over (§2.3-2.6): a partition some *other* member owns is withheld
/// from its new owner this round (listed in `pending`; its owner revokes it and the follow-up
/// rebalance assigns it). Idempotent, so it is safe after an assignor that already withholds.
///
/// Owners are read as `cooperative-sticky` reads them (one reader for the crate): per partition,
/// the claimers at its highest claim generation. A claim at a lower generation than another
/// claim on the same partition is stale (its member missed a rebalance) and owns nothing, so it
/// withholds nothing, as in Java's `CooperativeStickyAssignor`: the valid owner keeps its
/// partition and the stale claimer sees it revoked. A tie at the highest generation withholds
/// the partition from everyone but a tied claimer it goes to (one entry per claimer that must
/// revoke it).
///
/// The KIP's step 2.6 (partitions of topics missing from the leader's metadata go back to their
/// claimant) is done by the `cooperative-sticky` assignor and kept by the leader for the member
/// that claims it. It converges because a member never takes an assigned partition its own
/// metadata does not have: a deleted topic's claims die out, and a member whose metadata lags
/// rejoins once it catches up.
///
/// A negative partition id is no partition: it is never a claim, and one in `result` is left
/// where it is (the leader drops them from its result before the hand-over).
pub fn apply_cooperative_handover(members: &[GroupMember], result: &mut GroupAssignment) {
    let claims: Vec<(&str, Claim<'_>)> =
        members.iter().map(|m| (m.member_id.as_str(), Claim::of(Member::Owned(m), true))).collect();
    handover(&claims, result);
}

/// [`apply_cooperative_handover`] on each member's id and claim, in either form.
fn handover(members: &[(&str, Claim<'_>)], result: &mut GroupAssignment) {
    if members.iter().all(|(_, claim)| claim.is_empty()) {
        return;
    }
    // Only claims on partitions the result hands out matter. Bounding each topic's slots by the
    // highest of those keeps a member's claim (untrusted input: partition 2^31 - 1, say) from
    // sizing an allocation. The highest assigned id is no bound by itself: KIP-429 step 2.6
    // hands a claimed partition of a topic the leader does not know (any id) back to its
    // claimer. So a topic whose highest assigned id is far beyond its number of assigned
    // partitions gets a sparse table instead: the table is never more than a small multiple of
    // the result's own size.
    let mut bounds: HashMap<&str, (usize, usize)> = HashMap::new();
    for a in result.members() {
        for (topic, partitions) in a.topics() {
            let high = partitions.iter().filter_map(|&p| usize::try_from(p).ok()).max().map_or(0, |p| p + 1);
            let (h, n) = bounds.entry(topic).or_default();
            *h = (*h).max(high);
            *n += partitions.len();
        }
    }
    // Claimants per assigned topic, indexed by partition id, so that the lookup below hashes
    // each topic name once per assignment entry rather than once per partition. A negative id
    // is no partition: never a claim (the leader drops negative ids from its result before).
    let mut claims: HashMap<&str, Claimants<'_>> = HashMap::new();
    for &(member_id, claim) in members {
        let generation = claim.generation();
        claim.for_each(|topic, partitions| {
            let Some(&(high, n)) = bounds.get(topic) else { return };
            let slots = claims.entry(topic).or_insert_with(|| {
                if high > 2 * n + 64 {
                    Claimants::Sparse(HashMap::new())
                } else {
                    Claimants::Dense(Vec::new())
                }
            });
            for i in partitions.filter_map(|p| usize::try_from(p).ok()).filter(|&i| i < high) {
                slots.offer(i, member_id, generation);
            }
        });
    }
    drop(bounds);
    if claims.is_empty() {
        return;
    }
    let mut pending = BTreeSet::new();
    // Partitions come grouped per topic: look each run's topic up once.
    let mut last: Option<(*const u8, Option<&Claimants<'_>>)> = None;
    result.retain_partitions(|member_id, topic, p| {
        let slots = match last {
            Some((ptr, slots)) if ptr == topic.as_ptr() => slots,
            _ => {
                let slots = claims.get(topic);
                last = Some((topic.as_ptr(), slots));
                slots
            }
        };
        let Some(slots) = slots else { return true };
        match usize::try_from(p).ok().and_then(|i| slots.get(i)) {
            Some(owners) if owners.members().iter().any(|o| *o != member_id) => {
                for o in owners.members().iter().filter(|o| **o != member_id) {
                    pending.insert(PendingPartition {
                        topic: topic.to_owned(),
                        partition: p,
                        from: o.to_string(),
                        to: Some(member_id.to_owned()),
                    });
                }
                false
            }
            _ => true,
        }
    });
    if !pending.is_empty() {
        pending.extend(result.pending.drain(..));
        result.pending = pending.into_iter().collect();
    }
}

/// The owners of each partition of one topic in [`apply_cooperative_handover`].
enum Claimants<'a> {
    /// Indexed by partition id.
    Dense(Vec<Owners<'a>>),
    /// For a topic whose assigned ids are too sparse to index.
    Sparse(HashMap<usize, Owners<'a>>),
}

impl<'a> Claimants<'a> {
    fn offer(&mut self, i: usize, member_id: &'a str, generation: i32) {
        match self {
            Claimants::Dense(slots) => {
                if slots.len() <= i {
                    slots.resize(i + 1, Owners::default());
                }
                slots[i].offer(member_id, generation);
            }
            Claimants::Sparse(slots) => slots.entry(i).or_default().offer(member_id, generation),
        }
    }

    fn get(&self, i: usize) -> Option<&Owners<'a>> {
        match self {
            Claimants::Dense(slots) => slots.get(i),
            Claimants::Sparse(slots) => slots.get(&i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::{CooperativeStickyAssignor, StickyAssignor};
    use crate::{Subscription, TopicPartitions};

    fn member(id: &str, owned: &[i32], generation: i32) -> JoinGroupMember {
        let mut subscription = Subscription::new(["t"]);
        subscription.owned_partitions = vec![TopicPartitions::new("t", owned.to_vec())];
        subscription.generation_id = generation;
        JoinGroupMember {
            member_id: id.into(),
            group_instance_id: None,
            metadata: Bytes::from(subscription.encode(Version::V3).unwrap()),
        }
    }

    /// A pending partition: its id, from whom, to whom.
    type Pending = (i32, String, Option<String>);

    /// An eager round on topic t (4 partitions): what is pending, and each member's partition ids.
    fn round(assignor: &dyn PartitionAssignor, members: &[JoinGroupMember]) -> (Vec<Pending>, Vec<Vec<i32>>) {
        let metadata = ClusterMetadata::from_counts([("t", 4)]);
        let round = lead(assignor, RebalanceProtocol::Eager, &metadata, members).unwrap();
        let pending = round.assignment.pending.iter().map(|p| (p.partition, p.from.clone(), p.to.clone())).collect();
        let ids = members
            .iter()
            .map(|m| round.assignment.partitions_of(&m.member_id).iter().flat_map(|g| g.partitions.clone()).collect())
            .collect();
        (pending, ids)
    }

    /// An eager leader running an assignor that supports the cooperative protocol (an
    /// upgrading group that chose `cooperative-sticky`) hands over only the claims at the group's
    /// highest claim generation: m1 lists t-0 and t-1 at generation 2, m2 lists t-0 at
    /// generation 1 (stale: m2 missed a rebalance) or 2. A stale claim withholds nothing (no
    /// follow-up round would come for it), so t-0 goes to m1 at once; a current one is withheld.
    #[test]
    fn an_eager_round_ignores_stale_claims_in_the_hand_over() {
        let assignor = CooperativeStickyAssignor::new();
        let stale = [member("m1", &[0, 1], 2), member("m2", &[0], 1)];
        assert_eq!(round(&assignor, &stale), (vec![], vec![vec![0, 1], vec![2, 3]]), "only current claims withhold");
        let current = [member("m1", &[0, 1], 2), member("m2", &[0], 2)];
        assert_eq!(
            round(&assignor, &current),
            (vec![(0, "m2".into(), Some("m1".into()))], vec![vec![1], vec![2, 3]]),
            "a current claim on what moves is withheld"
        );
    }

    /// An eager-only assignor under the eager protocol gets no hand-over (Java's leader withholds
    /// nothing under EAGER): every partition is assigned at once, whatever the members list.
    /// The eager `sticky` assignor reads claims from userData (there is none here), so it moves
    /// t-0 and t-1, which m2 and m1 list at the current generation.
    #[test]
    fn an_eager_only_assignor_under_the_eager_protocol_withholds_nothing() {
        let members = [member("m1", &[1], 2), member("m2", &[0], 2)];
        assert_eq!(round(&StickyAssignor::new(), &members), (vec![], vec![vec![0, 2], vec![1, 3]]));
        for name in ["range", "roundrobin"] {
            let assignor = crate::assignor::builtin(name).unwrap();
            let (pending, ids) = round(assignor.as_ref(), &members);
            assert!(pending.is_empty(), "{}: {pending:?}", assignor.name());
            assert_eq!(ids.concat().len(), 4, "{}: {ids:?}", assignor.name());
        }
    }
}
