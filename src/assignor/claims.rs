//! Ownership claims, read in one place for the whole crate: the sticky assignors, the model of
//! Java's assignor and the leader's hand-over ([`leader`](super::leader)) all read a member's
//! claim through [`Claim::of`] and settle competing claims on one partition with
//! [`settle`], so that what the assignor keeps and what the leader withholds never disagree.
//!
//! A member's claim is the partitions it says it owned and the generation it owned them at:
//! - `cooperative-sticky` (and the leader's hand-over): the subscription's `owned_partitions`, at
//!   the subscription's `generation_id` when set (v2+), else the generation in its
//!   [`CooperativeStickyUserData`] (unreadable: -1; absent: none);
//! - `sticky`: its [`StickyUserData`] (V1: partitions and generation; V0: partitions, no
//!   generation; unreadable: nothing, generation -1; null or empty: nothing).
//!
//! A missing generation counts as -1. Java's rule (KAFKA-12984 / KAFKA-14639), per partition: the
//! claimers at the partition's highest generation own it; one alone keeps it, two or more tie and
//! none keeps it. A claim at a lower generation than another claim on the same partition is
//! *stale*: it is no ownership, so it never withholds the partition from anyone (the stale
//! claimer, which missed a rebalance, sees it revoked). A claim nobody contests is an ownership
//! at any generation.

use super::common::{Member, OwnedList, OwnedPartitions};
use crate::{CooperativeStickyUserData, StickyUserData};

/// The generation of a claim that carries none.
pub(crate) const NO_GENERATION: i32 = -1;

/// One member's claim: the partitions it says it owned and their generation.
#[derive(Clone, Copy)]
pub(crate) struct Claim<'a> {
    /// The generation, `None` when the claim carries none (Java's `Optional.empty()`).
    pub(crate) generation: Option<i32>,
    partitions: Option<OwnedList<'a>>,
}

impl<'a> Claim<'a> {
    /// The member's claim as the `cooperative-sticky` assignor (`cooperative`) or the eager
    /// `sticky` one reads it. The leader's hand-over reads claims as `cooperative-sticky` does.
    pub(crate) fn of(member: Member<'a>, cooperative: bool) -> Self {
        if cooperative {
            Claim {
                generation: cooperative_generation(member.generation_id(), member.user_data()),
                partitions: Some(member.owned()),
            }
        } else {
            match member.user_data() {
                None | Some([]) => Claim { generation: None, partitions: None },
                Some(bytes) => {
                    let (list, generation) = StickyUserData::view_java(bytes);
                    Claim { generation, partitions: list.map(OwnedList::Wire) }
                }
            }
        }
    }

    /// The generation, [`NO_GENERATION`] when it carries none.
    #[inline]
    pub(crate) fn generation(&self) -> i32 {
        self.generation.unwrap_or(NO_GENERATION)
    }

    /// Whether it lists no partition.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.partitions.is_none_or(|l| l.is_empty())
    }

    /// [`Claim::for_each`] with each topic name as bytes, not validated again: for walks that
    /// only look names up among known topics.
    #[inline]
    pub(crate) fn for_each_raw(&self, f: impl FnMut(&'a [u8], &mut OwnedPartitions<'a>)) {
        if let Some(list) = self.partitions {
            list.for_each_raw(f);
        }
    }

    /// Calls `f` with each listed topic and its partitions, in list order (unvalidated: ids may
    /// be negative or beyond the topic's count, topics may be unknown).
    #[inline]
    pub(crate) fn for_each(&self, f: impl FnMut(&'a str, &mut OwnedPartitions<'a>)) {
        if let Some(list) = self.partitions {
            list.for_each(f);
        }
    }
}

/// The generation `cooperative-sticky` reads: the subscription's (v2+, when not negative), else
/// the userData's.
pub(crate) fn cooperative_generation(generation_id: i32, user_data: Option<&[u8]>) -> Option<i32> {
    if generation_id >= 0 {
        Some(generation_id)
    } else {
        CooperativeStickyUserData::java_generation(user_data)
    }
}

/// How a new claim on a partition compares with the partition's best claim so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The new claim is at a higher generation: it owns the partition, the old one is stale.
    Takes,
    /// Same generation: both claim it at the highest generation so far (a tie: neither keeps it).
    Ties,
    /// The new claim is at a lower generation: stale, no ownership.
    Stale,
}

/// Java's rule for a claim at generation `challenger` on a partition whose best claim so far is
/// at generation `holder` (see the [module docs](self)).
#[inline]
pub(crate) fn settle(challenger: i32, holder: i32) -> Settled {
    match challenger.cmp(&holder) {
        std::cmp::Ordering::Greater => Settled::Takes,
        std::cmp::Ordering::Equal => Settled::Ties,
        std::cmp::Ordering::Less => Settled::Stale,
    }
}

/// The owners of one partition under [`settle`]: the claimers at its highest generation so far.
/// Claims are offered one by one, in any order; the result does not depend on the order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Owners<'a> {
    generation: i32,
    members: Vec<&'a str>,
}

impl<'a> Owners<'a> {
    /// Offers `member`'s claim at `generation`.
    pub(crate) fn offer(&mut self, member: &'a str, generation: i32) {
        if self.members.is_empty() {
            self.generation = generation;
            self.members.push(member);
            return;
        }
        match settle(generation, self.generation) {
            Settled::Takes => {
                self.generation = generation;
                self.members.clear();
                self.members.push(member);
            }
            Settled::Ties if !self.members.contains(&member) => self.members.push(member),
            Settled::Ties | Settled::Stale => {}
        }
    }

    /// The claimers at the partition's highest generation (several on a tie).
    pub(crate) fn members(&self) -> &[&'a str] {
        &self.members
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_generation_owns_and_a_stale_claim_owns_nothing_in_any_order() {
        let claims = [("c1", 10), ("c2", 9), ("c3", 10), ("c4", 8)];
        for rotation in 0..claims.len() {
            let mut owners = Owners::default();
            for &(m, g) in claims.iter().cycle().skip(rotation).take(claims.len()) {
                owners.offer(m, g);
            }
            let mut who = owners.members().to_vec();
            who.sort_unstable();
            assert_eq!(who, ["c1", "c3"], "rotation {rotation}");
        }
        let mut owners = Owners::default();
        owners.offer("c2", 9);
        assert_eq!(owners.members(), ["c2"], "an uncontested claim is an ownership at any generation");
        owners.offer("c2", 9);
        assert_eq!(owners.members(), ["c2"], "listed twice by one member: no tie with itself");
        owners.offer("c1", 10);
        assert_eq!(owners.members(), ["c1"]);
    }
}
