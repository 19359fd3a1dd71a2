//! The target bookkeeping of the sticky round: the two id spaces a member has (its [`Rank`] in
//! member-id order, what the heuristics, the rack passes and the solver compute in; its
//! [`MemberIndex`] in the input, what is sent), the per-partition [`Target`] (ranks) and
//! [`Owners`] (member indices) kept apart by type, and what a target is judged on
//! ([`Measures`], [`balanced`]).

use super::claims::Claims;
use super::heuristics::SubBits;
use super::racks::OffRack;
use crate::assignor::common::{Member, Topics, NONE};
use crate::assignor::GroupAssignment;

/// A member's position in member-id order (`rank_to_member[rank]`): the id space of the
/// heuristics, the rack passes and the solver, which hand a [`Target`] on (ranks per partition;
/// inside a pass the raw `u32`, [`NONE`] for nobody).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Rank(pub(super) u32);

/// A member's position in the input (`members[index]`): the id space of what is sent.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct MemberIndex(pub(super) u32);

/// The member-id order: per rank, the member index.
pub(super) struct RankToMember<'a>(pub(super) &'a [u32]);

impl RankToMember<'_> {
    #[inline]
    pub(super) fn member(&self, rank: Rank) -> MemberIndex {
        MemberIndex(self.0[rank.0 as usize])
    }
}

/// Per flat partition, the member (rank) a pass puts it on, or nobody ([`NONE`]): what the
/// heuristics, the rack passes and the solver compute and hand on, kept apart from [`Owners`]
/// (member indices) by type. Inside a pass it is a slice of ranks (`ranks_mut`), the form the
/// inner loops index.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) struct Target(pub(super) Vec<u32>);

impl Target {
    #[inline]
    pub(super) fn ranks(&self) -> &[u32] {
        &self.0
    }

    #[inline]
    pub(super) fn ranks_mut(&mut self) -> &mut [u32] {
        &mut self.0
    }
}

/// Per flat partition, the member (input index) that holds it, or nobody: the id space of a
/// played round and of where a rebalance ends, kept apart from a [`Target`] of ranks.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) struct Owners(pub(super) Vec<u32>);

impl Owners {
    /// Who holds flat partition `p` (nobody past the end).
    #[inline]
    pub(super) fn get(&self, p: usize) -> Option<MemberIndex> {
        self.0.get(p).copied().filter(|&m| m != NONE).map(MemberIndex)
    }
}

/// Per flat partition, the member an assignment gives it to.
pub(super) fn owners_of(topics: &Topics<'_>, members: &[Member<'_>], assignment: &GroupAssignment) -> Owners {
    let mut owner = vec![NONE; topics.total()];
    for (m, member) in members.iter().enumerate() {
        for group in assignment.partitions_of(member.id()) {
            let Some(t) = topics.id(&group.topic) else { continue };
            for flat in group.partitions.iter().filter_map(|&p| topics.flat(t, p)) {
                owner[flat as usize] = m as u32;
            }
        }
    }
    Owners(owner)
}

/// The measures an assignment is compared on with Java's: the sum of squared member sizes, rack
/// mismatches (a partition on a member with a rack that holds none of its replicas), partitions
/// moved away from their valid owner, and (cooperative) whether anything is withheld, which
/// costs a follow-up rebalance.
#[derive(Clone, Copy)]
pub(super) struct Measures {
    pub(super) balance: u64,
    pub(super) mismatches: usize,
    pub(super) moves: usize,
    /// Cooperative follow-up rebalances: one for an assignment that withholds anything.
    pub(super) follow_ups: usize,
}

impl Measures {
    pub(super) fn of(
        target: &Target,
        topics: &Topics<'_>,
        subscribed: &SubBits,
        off_rack: &OffRack<'_>,
        claims: &Claims,
    ) -> Measures {
        let mut sizes = vec![0u64; subscribed.rows()];
        let (mut mismatches, mut moves, mut withholds) = (0, 0, false);
        for t in 0..topics.len() as u32 {
            let range = topics.base[t as usize] as usize..topics.base[t as usize + 1] as usize;
            for (p, &r) in range.clone().zip(&target.ranks()[range]) {
                if r == NONE {
                    continue;
                }
                sizes[r as usize] += 1;
                mismatches += usize::from(off_rack.mismatch(r, p as u32));
                let c = claims.owner[p];
                if c != NONE {
                    withholds |= claims.tie[p] || c != r;
                    if !claims.tie[p] && c != r && subscribed.has(c, t) {
                        moves += 1;
                    }
                }
            }
        }
        Measures { balance: sizes.iter().map(|s| s * s).sum(), mismatches, moves, follow_ups: usize::from(withholds) }
    }

    pub(super) fn no_worse_than(&self, other: &Measures, cooperative: bool) -> bool {
        self.balance <= other.balance
            && self.mismatches <= other.mismatches
            && self.moves <= other.moves
            && (!cooperative || self.follow_ups <= other.follow_ups)
    }
}

/// Balanced as the module's first goal has it: no member holding a partition that a member
/// with two or more fewer also subscribes to. (Stricter than Java's `isBalanced`, which also
/// accepts every topic split within one among its subscribers.)
pub(super) fn balanced(target: &[u32], topics: &Topics<'_>, subs: &[&Vec<u32>]) -> bool {
    let mut size = vec![0u32; subs.len()];
    for &r in target.iter().filter(|&&r| r != NONE) {
        size[r as usize] += 1;
    }
    // Per topic: the largest member holding one of its partitions.
    let mut largest_holder = vec![0u32; topics.len()];
    for (largest, bounds) in largest_holder.iter_mut().zip(topics.base.windows(2)) {
        for &r in target[bounds[0] as usize..bounds[1] as usize].iter().filter(|&&r| r != NONE) {
            *largest = (*largest).max(size[r as usize]);
        }
    }
    subs.iter().enumerate().all(|(r, list)| list.iter().all(|&t| largest_holder[t as usize] < size[r] + 2))
}
