//! The sticky leader round ([`lead`]): the target computed (the fresh-uniform fast path, the
//! heuristics, the rack passes, the exact polish, the placement that keeps every claim), played
//! as a round (a cooperative round withholds what its owner must revoke first) and, where it
//! withholds anything, the follow-up rounds played ahead to say where each partition ends.

use super::claims::{resolve_claims, tied_claimers, Claims};
use super::exact::{keep_and_place, optimize, OPTIMIZE_MAX_MEMBERS, OPTIMIZE_MAX_PARTITIONS};
use super::heuristics::{sticky_target, SubBits};
use super::racks::{rack_align, OffRack, Racks};
use super::target::{balanced, owners_of, Measures, MemberIndex, Owners, Rank, RankToMember, Target};
use crate::assignor::claims::{Claim, NO_GENERATION};
use crate::assignor::common::{
    build_group_assignment, check_members, member_id_order, rank_of, slot_order, Member, Returned, Topics, NONE,
};
use crate::assignor::{AssignError, ClusterMetadata, GroupAssignment, GroupMember, PendingPartition};
use crate::{CooperativeStickyUserData, Subscription};

/// How many cooperative rounds the leader plays ahead at most ([`lead`]); a rebalance that has
/// not ended by then counts as one whose end is unknown.
pub(super) const LOOKAHEAD_MAX_ROUNDS: usize = 8;

/// One leader round, and (asked for by a look-ahead) where the rebalance it starts ends.
pub(super) struct Round {
    pub(super) assignment: GroupAssignment,
    /// With `depth > 0`: per flat partition the member that holds it once the follow-up rounds
    /// are over, and how many follow-ups that takes; `None` when that is not known within
    /// [`LOOKAHEAD_MAX_ROUNDS`].
    pub(super) end: Option<(Owners, usize)>,
}

/// One leader round, played `depth` rounds ahead of the real one (0).
///
/// Cooperative look-ahead: where the round withholds partitions, the follow-up rounds are
/// played here, each by this same function on the state the members rejoin with (what they were
/// given, at the next generation), up to [`LOOKAHEAD_MAX_ROUNDS`], so that each pending `to`
/// names where the partition is once the rebalance is over; it costs one leader round per
/// follow-up. It changes the round only where the rebalance takes two or more follow-ups: the
/// round aimed at their end is played too (and the next round after it), and sent where the
/// rebalance then ends after one follow-up, no worse. Every round played ahead makes the same
/// choice (within [`LOOKAHEAD_MAX_ROUNDS`]), so `to` stays where the real follow-up rounds end.
pub(super) fn lead(
    metadata: &ClusterMetadata,
    members: &[Member<'_>],
    cooperative: bool,
    fast_paths: bool,
    depth: usize,
) -> Result<Round, AssignError> {
    check_members(members)?;
    let topics = Topics::new(metadata, members)?;
    let subs_by_member = topics.subscriptions(members);
    let rank_to_member = member_id_order(members);
    let subs: Vec<&Vec<u32>> = rank_to_member.iter().map(|&m| &subs_by_member[m as usize]).collect();
    let racks = Racks::new(&topics, members, &rank_to_member);
    let claims_nothing = members.iter().all(|&m| Claim::of(m, cooperative).is_empty());
    let uniform = subs.iter().all(|s| s.len() == topics.len());
    if fast_paths && claims_nothing && racks.is_none() && !subs.is_empty() && uniform {
        let assignment = fresh_uniform(&topics, members, &rank_to_member);
        // Nothing is withheld: the rebalance ends here.
        let end = (depth > 0).then(|| (owners_of(&topics, members, &assignment), 0));
        return Ok(Round { assignment, end });
    }
    let claims = resolve_claims(&topics, members, &rank_to_member, cooperative);
    // Java's rack logic: only when its rule turns racks on (otherwise they only break ties in
    // the polish).
    let active_racks = racks.as_ref().filter(|r| r.active);
    let mut owner = sticky_target(&topics, &subs, &claims, active_racks);
    if let Some(racks) = active_racks {
        // With `cooperative-sticky` the chains' last stage (a partition taken from an owner on
        // its rack to remove a mismatch) is kept only where it completes within its budget.
        rack_align(owner.ranks_mut(), &topics, &subs, racks, &claims, cooperative);
    }
    // Without racks, the only possible gain is a partition moved away from its valid owner (the
    // balance is already optimal): fresh groups and kept assignments skip the polish.
    // (Or one without a valid owner is not on its valid previous owner.)
    let with_prev = !claims.prev.is_empty();
    let displaced = || {
        owner.ranks().iter().enumerate().any(|(p, &o)| {
            let c = claims.owner[p];
            let subscribed = |r: u32| subs[r as usize].binary_search(&topics.topic_of(p as u32)).is_ok();
            if c != NONE && !claims.tie[p] {
                // The target is always subscribed: an owner holding it is valid.
                if c == o {
                    return false;
                }
                if subscribed(c) {
                    return true;
                }
            }
            with_prev && claims.prev_of(p).is_some_and(|q| q != o && subscribed(q))
        })
    };
    let small = topics.total() <= OPTIMIZE_MAX_PARTITIONS
        && (subs.len() <= MEASURE_MAX_MEMBERS || subs.len() * topics.total() <= MEASURE_MAX_MEMBERS_X_PARTITIONS);
    let improvable = small && (racks.is_some() || (!uniform && displaced()));
    let polished = improvable && subs.len() <= OPTIMIZE_MAX_MEMBERS;
    if polished {
        optimize(owner.ranks_mut(), &topics, &subs, racks.as_ref(), &claims);
    }
    // What the measures need, built once where they are taken.
    let measuring = improvable.then(|| {
        let off_rack = OffRack::new(racks.as_ref(), &topics, members, &rank_to_member);
        (off_rack, SubBits::new(&subs, topics.len()))
    });
    if let Some((off_rack, bits)) = &measuring {
        let measure = |target: &Target| Measures::of(target, &topics, bits, off_rack, &claims);
        let ours = measure(&owner);
        // Nothing beats an assignment of optimal balance (polished, or the constrained path's
        // quotas) that moves nothing, puts nothing off its racks and withholds nothing.
        let unbeatable = (polished || uniform) && ours.mismatches == 0 && ours.moves == 0 && ours.follow_ups == 0;
        // The other placement: every valid claim kept, the rest placed as evenly as possible,
        // then on their racks. It is taken only where it is no worse on any criterion and better
        // on one (in a cooperative follow-up round it completes the hand-over the previous
        // round started, where our heuristics could move more and start another round).
        // In a fresh group beyond the polish it is the exact optimum of balance, then racks
        // (nothing is claimed), where the heuristics' rack passes are not; within the polish,
        // a fresh group's answer is already optimal. Never when it is not balanced: the lowest
        // sum of squares with every claim kept can still leave a member empty that could take a
        // partition from one holding two.
        if !unbeatable && (claims.any || !polished) {
            let ours_keeps_every_claim = ours.moves == 0 && ours.follow_ups == 0;
            let kept = keep_and_place(&topics, &subs, bits, &claims, off_rack, ours_keeps_every_claim)
                .filter(|t| balanced(t.ranks(), &topics, &subs));
            if let Some(t) = kept {
                let m = measure(&t);
                if m.no_worse_than(&ours, cooperative) && !ours.no_worse_than(&m, cooperative) {
                    owner = t;
                }
            }
        }
    }
    let tied = if cooperative { tied_claimers(&topics, members, &rank_to_member, &claims.tie) } else { Vec::new() };
    let ranks = RankToMember(&rank_to_member);
    let play = |target| play_round(metadata, &topics, members, &ranks, &claims, &tied, cooperative, target);
    // Where the rebalance a played round starts ends: its own owners when it withholds
    // nothing, otherwise where the rounds played ahead end (unknown past the limit, or where a
    // round played ahead fails: the real round does not fail for it).
    let end_of = |played: &Played| -> Option<(Owners, usize)> {
        if played.assignment.pending.is_empty() {
            return Some((played.owner.clone(), 0));
        }
        if depth + 1 >= LOOKAHEAD_MAX_ROUNDS {
            return None;
        }
        let next = rejoined(members, &played.assignment)?;
        let round = lead(metadata, &Member::all_owned(&next), cooperative, fast_paths, depth + 1).ok()?;
        round.end.map(|(end, follow_ups)| (end, follow_ups + 1))
    };
    let mut played = play(owner);
    let withholds = !played.assignment.pending.is_empty();
    let mut end = if depth > 0 || withholds { end_of(&played) } else { None };
    // A rebalance that takes two or more follow-up rounds: aim this round at where it ends. Where
    // the next leader then withholds nothing, the rebalance ends after one follow-up; that end is
    // taken if it is no worse on balance, rack mismatches and moves (against this round's
    // claims) than the end of the longer one. (Each follow-up round of the heuristics beyond the
    // exact polish can find a few more rack mismatches to fix, and pays a round each time.)
    if let Some((ends, _)) = end.as_ref().filter(|(_, rounds)| *rounds > 1) {
        let rank = rank_of(&rank_to_member);
        let as_target = |owners: &Owners| {
            Target(owners.0.iter().map(|&m| if m == NONE { NONE } else { rank[m as usize] }).collect())
        };
        let aimed = play(as_target(ends));
        // Where the aimed round's rebalance ends if the next round withholds nothing.
        let ends_after_one = || -> Option<Owners> {
            if aimed.assignment.pending.is_empty() {
                return Some(aimed.owner.clone());
            }
            let next = rejoined(members, &aimed.assignment)?;
            // Played as the look-ahead's last round: its end is known only if it withholds
            // nothing, and it plays nothing further ahead.
            let round = lead(metadata, &Member::all_owned(&next), cooperative, fast_paths, LOOKAHEAD_MAX_ROUNDS - 1);
            round.ok()?.end.map(|(owners, _)| owners)
        };
        if let Some(sooner) = ends_after_one() {
            let off_rack = OffRack::new(racks.as_ref(), &topics, members, &rank_to_member);
            let bits = SubBits::new(&subs, topics.len());
            let measure = |owners: &Owners| Measures::of(&as_target(owners), &topics, &bits, &off_rack, &claims);
            if measure(&sooner).no_worse_than(&measure(ends), false) {
                let follow_ups = usize::from(!aimed.assignment.pending.is_empty());
                end = Some((sooner, follow_ups));
                played = aimed;
            }
        }
    }
    if depth == 0 && withholds {
        // `to` is where the partition is once the rebalance is over, as played ahead: each
        // follow-up round is the one the next leader computes from the state the members
        // rejoin with. Unknown (`None`) where the look-ahead cannot tell.
        let ends = end.as_ref().map(|(owners, _)| owners);
        for p in &mut played.assignment.pending {
            p.to = ends.and_then(|owners| {
                let flat = topics.id(&p.topic).and_then(|t| topics.flat(t, p.partition))?;
                let MemberIndex(m) = owners.get(flat as usize)?;
                Some(members[m as usize].id().to_owned())
            });
        }
    }
    Ok(Round { assignment: played.assignment, end })
}

/// A target played as a round: what is sent (cooperative: owner changes withheld), and per flat
/// partition the member it is given to (nobody: withheld).
struct Played {
    assignment: GroupAssignment,
    owner: Owners,
}

/// Plays a target as a round: with `cooperative`, a partition whose resolved claimer is not its
/// target is withheld until the claimer revokes it.
#[allow(clippy::too_many_arguments)]
fn play_round(
    metadata: &ClusterMetadata,
    topics: &Topics<'_>,
    members: &[Member<'_>],
    ranks: &RankToMember<'_>,
    claims: &Claims,
    tied: &[(u32, u32)],
    cooperative: bool,
    target: Target,
) -> Played {
    let mut pending = Vec::new();
    let id = |r: u32| {
        let MemberIndex(m) = ranks.member(Rank(r));
        members[m as usize].id().to_owned()
    };
    // In place: target rank -> member index, or NONE when withheld.
    let Target(mut owner) = target;
    for (p, slot) in owner.iter_mut().enumerate() {
        let r = *slot;
        if r == NONE {
            continue;
        }
        let claimer = claims.owner[p];
        if cooperative && claimer != NONE && (claims.tie[p] || claimer != r) {
            let t = topics.topic_of(p as u32);
            let hand_over = |from: u32| PendingPartition {
                topic: topics.names[t as usize].to_owned(),
                partition: (p as u32 - topics.base[t as usize]) as i32,
                from: id(from),
                to: Some(id(r)),
            };
            if claims.tie[p] {
                // Every tied claimer but the target itself must revoke it first (never a
                // hand-over from a member to itself).
                let at = tied.partition_point(|(q, _)| (*q as usize) < p);
                for &(_, from) in tied[at..].iter().take_while(|(q, _)| *q as usize == p) {
                    if from != r {
                        pending.push(hand_over(from));
                    }
                }
            } else {
                pending.push(hand_over(claimer));
            }
            *slot = NONE;
        } else {
            *slot = ranks.member(Rank(r)).0;
        }
    }
    let returned = if cooperative && claims.off_topics { unknown_but_owned(metadata, members) } else { Vec::new() };
    let assignment = build_group_assignment(topics, members, &owner, pending, &returned);
    Played { assignment, owner: Owners(owner) }
}

/// The members as they rejoin for a follow-up round: each owning what it was given (with the
/// partitions it keeps of topics missing from the metadata), at the next generation; `None`
/// past the last generation.
fn rejoined(members: &[Member<'_>], assignment: &GroupAssignment) -> Option<Vec<GroupMember>> {
    let last = members.iter().map(|&m| Claim::of(m, true).generation()).max().unwrap_or(NO_GENERATION);
    let generation = last.max(0).checked_add(1)?;
    let user_data = CooperativeStickyUserData { generation }.encode();
    let rejoin = |m: Member<'_>| {
        let mut topics = Vec::with_capacity(m.topics().len());
        m.topics().for_each(|t| topics.push(t.to_owned()));
        let mut subscription = Subscription::new(topics)
            .with_owned_partitions(assignment.partitions_of(m.id()).to_vec())
            .with_generation_id(generation)
            .with_user_data(user_data.clone());
        subscription.rack_id = m.rack().map(str::to_owned);
        GroupMember {
            member_id: m.id().to_owned(),
            group_instance_id: m.instance_id().map(str::to_owned),
            subscription,
        }
    };
    Some(members.iter().map(|&m| rejoin(m)).collect())
}

/// KIP-429's unknown-but-owned partitions: claims (cooperative: the subscription's owned
/// partitions) on topics missing from the metadata altogether (deleted, or not yet in the
/// leader's stale metadata) by members still subscribed to them. Each goes back to its claimer:
/// the highest generation wins and a tie at the highest generation returns it to nobody, as for
/// known partitions. Claims on missing partition ids of a *known* topic are not returned
/// (KAFKA-21674, see the module docs).
fn unknown_but_owned<'a>(metadata: &ClusterMetadata, members: &[Member<'a>]) -> Vec<Returned<'a>> {
    // (topic, partition, -generation, member): sorted, the winner of each partition comes first.
    let mut claims: Vec<(&'a str, i32, i64, u32)> = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let claim = Claim::of(*m, true);
        claim.for_each(|topic, partitions| {
            if metadata.topics.contains_key(topic) || !m.topics().contains(topic) {
                return;
            }
            let g = -i64::from(claim.generation());
            claims.extend(partitions.filter(|&p| p >= 0).map(|p| (topic, p, g, i as u32)));
        });
    }
    claims.sort_unstable();
    claims.dedup();
    let mut out = Vec::new();
    for same in claims.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        let (topic, partition, g, member) = same[0];
        if same.get(1).is_none_or(|next| next.2 != g) {
            out.push(Returned { member, topic, partition });
        }
    }
    out.sort_unstable();
    out
}

/// The first assignment of a group in which every member subscribes to every topic, nobody
/// claims anything and racks play no part: the general path ([`constrained`](super::heuristics::constrained)) then deals the
/// partitions in flat order round-robin over the members in member-id order, so the member of
/// rank `r` gets flat partitions `r`, `r + n`, `r + 2n`, ... This writes them straight into the
/// output, one member after the other, without the per-partition owner array.
// Not inlined: inside `lead` its loop was compiled one instruction per partition longer
// (sticky:A 42.25M instructions against 41.25M out of line).
#[inline(never)]
pub(super) fn fresh_uniform(topics: &Topics<'_>, members: &[Member<'_>], rank_to_member: &[u32]) -> GroupAssignment {
    let n = members.len();
    let total = topics.total();
    let rank_of = rank_of(rank_to_member);
    let by_id = slot_order(members);
    let mut slots = Vec::with_capacity(n);
    let mut entry_topics: Vec<u32> = Vec::with_capacity(total);
    let mut entry_partitions: Vec<i32> = Vec::with_capacity(total);
    let base = &topics.base;
    for &m in &by_id {
        let start = entry_topics.len();
        let mut p = rank_of[m as usize] as usize;
        // The current topic `t` and its flat range `lo..hi`, read again only when `p` leaves it.
        let mut t = 0usize;
        let (mut lo, mut hi) = (0usize, base.get(1).map_or(0, |&b| b as usize));
        while p < total {
            if hi <= p {
                // Usually the next topic or the one after; a binary search past many small topics.
                t += 1;
                if base[t + 1] as usize <= p {
                    t += base[t + 1..].partition_point(|&b| b as usize <= p);
                }
                (lo, hi) = (base[t] as usize, base[t + 1] as usize);
            }
            entry_topics.push(t as u32);
            entry_partitions.push((p - lo) as i32);
            p += n;
        }
        slots.push((members[m as usize].id().to_owned(), start, entry_topics.len()));
    }
    let names = topics.names.iter().map(|&name| name.to_owned()).collect();
    GroupAssignment::from_parts(names, slots, entry_topics, entry_partitions, Vec::new())
}

/// Groups of at most this many members, or of members x partitions up to
/// [`MEASURE_MAX_MEMBERS_X_PARTITIONS`] (and at most [`OPTIMIZE_MAX_PARTITIONS`] partitions),
/// are measured and get the placement that keeps every valid claim ([`keep_and_place`]) as the
/// other candidate; beyond, the heuristics alone run.
const MEASURE_MAX_MEMBERS: usize = 256;
/// See [`MEASURE_MAX_MEMBERS`]: 1,000 members over 4,000 partitions, say.
const MEASURE_MAX_MEMBERS_X_PARTITIONS: usize = 4_000_000;
