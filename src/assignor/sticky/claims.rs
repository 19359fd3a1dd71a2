//! Claims resolved per partition for the sticky core: the valid owner (the single claimer at the
//! highest generation), ties at the highest generation, and the previous owner (the claimer at the
//! next generation down). Each member's claim is read through [`assignor::claims`](crate::assignor)
//! (the crate's one reader of claims); this settles them partition by partition.

use super::super::claims::{self as reader, Claim, Settled, NO_GENERATION};
use super::super::common::OwnedPartitions;
use std::cmp::Reverse;

use crate::assignor::common::{Member, Topics, NONE};

/// Working state of one sticky run, on ranks (member-id order) and flat partition ids.
pub(super) struct Claims {
    /// Resolved owner (rank) per partition, or `NONE`; for a tie, the first tied claimer.
    pub(super) owner: Vec<u32>,
    pub(super) gen: Vec<i32>,
    /// Several members claim it at the highest generation: nobody keeps it.
    pub(super) tie: Vec<bool>,
    /// Java's `prevAssignment`: the claimer at the highest generation below the winning one
    /// (alone at that generation), or `NONE`. Empty when no partition has such a claim.
    pub(super) prev: Vec<u32>,
    /// While resolving: the runner-up claim's generation, and whether two members share it (no
    /// previous owner then). Allocated with `prev`, freed with `gen`.
    pub(super) second: Vec<(i32, bool)>,
    /// Some member claims partitions of a known topic (the keep pass can be skipped otherwise).
    pub(super) any: bool,
    /// Some claim names a topic outside the assignment's topics (missing from the metadata, with
    /// no partition, or subscribed by nobody): only then are KIP-429's unknown-but-owned
    /// partitions looked for, a second walk over the claims that most rounds skip.
    pub(super) off_topics: bool,
}

impl Claims {
    /// The previous owner of `p` (see [`Claims::prev`]), if any.
    #[inline]
    pub(super) fn prev_of(&self, p: usize) -> Option<u32> {
        self.prev.get(p).copied().filter(|&o| o != NONE)
    }
}

pub(super) fn resolve_claims(
    topics: &Topics<'_>,
    members: &[Member<'_>],
    rank_to_member: &[u32],
    cooperative: bool,
) -> Claims {
    let n = topics.total();
    // Generations are allocated with the first claim: fresh groups never pay for them.
    let mut c = Claims {
        owner: vec![NONE; n],
        gen: Vec::new(),
        tie: vec![false; n],
        prev: Vec::new(),
        second: Vec::new(),
        any: false,
        off_topics: false,
    };
    let apply = |c: &mut Claims, rank: u32, g: i32, topic: &[u8], partitions: &mut OwnedPartitions<'_>| {
        let Some(t) = topics.id_of_bytes(topic) else {
            c.off_topics = true;
            return;
        };
        if c.gen.is_empty() {
            c.gen = vec![NO_GENERATION; n];
        }
        // The list's form is settled once per topic, not per id: one loop per form.
        let span = topics.span(t);
        match partitions {
            OwnedPartitions::Owned(ids) => claim_ids(c, span, rank, g, ids),
            OwnedPartitions::Wire(ids) => claim_ids(c, span, rank, g, ids),
        }
    };
    for (rank, &m) in rank_to_member.iter().enumerate() {
        let claim = Claim::of(members[m as usize], cooperative);
        if claim.is_empty() {
            continue;
        }
        let g = claim.generation();
        claim.for_each_raw(|topic, partitions| apply(&mut c, rank as u32, g, topic, partitions));
    }
    // Generations only decide the claims (allocated with the first one); free them before the
    // heavier work.
    c.any = !c.gen.is_empty();
    c.gen = Vec::new();
    // A tie at the runner-up generation leaves no previous owner.
    for (p, &(_, tied)) in c.second.iter().enumerate() {
        if tied {
            c.prev[p] = NONE;
        }
    }
    c.second = Vec::new();
    c
}

/// One member's claims on one topic (`span`: its first flat id and partition count): the first
/// claimer takes the partition, a second one goes to [`conflict`]. Ids beyond the count (or
/// negative: they wrap to large `u32`s) are ignored.
#[inline(always)]
fn claim_ids(c: &mut Claims, (base, count): (u32, u32), rank: u32, g: i32, ids: impl Iterator<Item = i32>) {
    for partition in ids {
        if partition as u32 >= count {
            continue;
        }
        let p = (base + partition as u32) as usize;
        let o = c.owner[p];
        if o == NONE {
            c.owner[p] = rank;
            c.gen[p] = g;
            continue;
        }
        if o == rank {
            // Listed twice by the same member.
            continue;
        }
        conflict(c, p, rank, g);
    }
}

/// A claim on a partition another member already claims (rare: kept out of the claim loop).
/// The higher generation wins, a tie at the winning generation means nobody keeps it, and the
/// losing claim competes for the runner-up (Java's `prevAssignment`).
#[cold]
#[inline(never)]
pub(super) fn conflict(c: &mut Claims, p: usize, rank: u32, g: i32) {
    let n = c.owner.len();
    let o = c.owner[p];
    let settled = reader::settle(g, c.gen[p]);
    if settled == Settled::Ties {
        c.tie[p] = true;
        return;
    }
    // The claim that stops being (or never becomes) the winner competes for runner-up.
    let (loser, lg, ltie) = if settled == Settled::Takes {
        let old = (o, c.gen[p], c.tie[p]);
        c.owner[p] = rank;
        c.gen[p] = g;
        c.tie[p] = false;
        old
    } else {
        (rank, g, false)
    };
    if c.prev.is_empty() {
        c.prev = vec![NONE; n];
        c.second = vec![(NO_GENERATION, false); n];
    }
    let (sg, stie) = c.second[p];
    if (c.prev[p] == NONE && !stie) || lg > sg {
        c.prev[p] = loser;
        c.second[p] = (lg, ltie);
    } else if lg == sg && c.prev[p] != loser {
        c.second[p].1 = true;
    }
}

/// The claimers of each tied partition (several members claim it at the highest generation), as
/// sorted `(flat partition, rank)` pairs. Only members that claim a tied partition are read again,
/// and nothing is allocated when there is no tie.
pub(super) fn tied_claimers(
    topics: &Topics<'_>,
    members: &[Member<'_>],
    rank_to_member: &[u32],
    tie: &[bool],
) -> Vec<(u32, u32)> {
    if !tie.iter().any(|&t| t) {
        return Vec::new();
    }
    // (partition, generation, rank) of every claim on a tied partition.
    let mut claims: Vec<(u32, i32, u32)> = Vec::new();
    for (rank, &m) in rank_to_member.iter().enumerate() {
        let claim = Claim::of(members[m as usize], true);
        if claim.is_empty() {
            continue;
        }
        let g = claim.generation();
        claim.for_each(|topic, partitions| {
            let Some(t) = topics.id(topic) else { return };
            for partition in partitions {
                if let Some(p) = topics.flat(t, partition) {
                    if tie[p as usize] {
                        claims.push((p, g, rank as u32));
                    }
                }
            }
        });
    }
    claims.sort_unstable_by_key(|&(p, g, rank)| (p, Reverse(g), rank));
    claims.dedup();
    let mut out = Vec::new();
    let mut highest: Option<(u32, i32)> = None;
    for &(p, g, rank) in &claims {
        // Only the claims at the partition's highest generation (the first of its run) tie.
        if highest.is_none_or(|(q, _)| q != p) {
            highest = Some((p, g));
        }
        if highest == Some((p, g)) && out.last() != Some(&(p, rank)) {
            out.push((p, rank));
        }
    }
    out
}
