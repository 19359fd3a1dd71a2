//! The rack passes (KIP-881): when Java's rule turns rack awareness on, the rack index, the
//! release of owned off-rack partitions, and the swaps and moves that put partitions on their
//! racks without changing member sizes; and how a member's rack mismatches are counted.

use super::claims::Claims;
use super::heuristics::SubBits;
use super::target::balanced;
use crate::assignor::common::{Member, Topics, NONE};

/// KIP-881 rack data on ranks and flat partition ids (racks interned to small integers).
pub(super) struct Racks {
    /// Rack of each rank, or `NONE` (no rack or an empty rack id). A rack no replica is on gets
    /// an id too (past the replica racks): Java counts every partition it holds as off-rack.
    pub(super) member: Vec<u32>,
    /// Replica racks per partition (CSR, sorted, deduplicated).
    pub(super) pstart: Vec<u32>,
    pub(super) pracks: Vec<u32>,
    /// Ranks per rack (CSR, rank order), for every rack id.
    pub(super) rstart: Vec<u32>,
    pub(super) rmembers: Vec<u32>,
    /// Java's rule uses racks (some member rack is a replica rack and the partitions are not all
    /// on the same rack set). When it does not, racks only break ties in the polish, after
    /// balance and every move: Java is then rack-blind, and a member on a rack outside a rack
    /// set every partition shares still holds only off-rack partitions.
    pub(super) active: bool,
}

impl Racks {
    /// `None` when racks cannot matter: no member has a rack, no partition has replica racks,
    /// or every member rack is one of the replica racks of every partition. Costs one scan of
    /// the members when none has a rack.
    pub(super) fn new(topics: &Topics<'_>, members: &[Member<'_>], rank_to_member: &[u32]) -> Option<Racks> {
        let rack_of = |m: u32| members[m as usize].rack();
        if !rank_to_member.iter().any(|&m| rack_of(m).is_some()) {
            return None;
        }
        let mut names: Vec<&str> = Vec::new();
        // Few racks: a linear scan is enough.
        fn index<'a>(r: &'a str, names: &mut Vec<&'a str>) -> u32 {
            match names.iter().position(|&n| n == r) {
                Some(i) => i as u32,
                None => {
                    names.push(r);
                    (names.len() - 1) as u32
                }
            }
        }
        let mut pstart = Vec::with_capacity(topics.total() + 1);
        let mut pracks = Vec::new();
        pstart.push(0u32);
        for t in 0..topics.len() {
            let info = topics.info[t];
            for p in 0..topics.count(t as u32) as usize {
                let from = pracks.len();
                for r in info.partition_racks.get(p).into_iter().flatten() {
                    let i = index(r.as_str(), &mut names);
                    pracks.push(i);
                }
                pracks[from..].sort_unstable();
                let mut w = from;
                for i in from..pracks.len() {
                    if w == from || pracks[w - 1] != pracks[i] {
                        pracks[w] = pracks[i];
                        w += 1;
                    }
                }
                pracks.truncate(w);
                pstart.push(pracks.len() as u32);
            }
        }
        let partition_racks = names.len();
        // No rack metadata at all: nothing to align with.
        if partition_racks == 0 {
            return None;
        }
        let member: Vec<u32> =
            rank_to_member.iter().map(|&m| rack_of(m).map_or(NONE, |r| index(r, &mut names))).collect();
        let matched = member.iter().any(|&r| r != NONE && (r as usize) < partition_racks);
        // All partitions on the same rack set: Java does not use racks.
        let first = &pracks[..pstart.get(1).copied().unwrap_or(0) as usize];
        let same_set = pstart.windows(2).all(|w| &pracks[w[0] as usize..w[1] as usize] == first);
        let all_same = same_set && first.len() == partition_racks;
        let active = matched && !all_same;
        // Racks can change nothing when every partition has the same replica racks and every
        // member rack is among them.
        if same_set && member.iter().all(|&r| r == NONE || first.contains(&r)) {
            return None;
        }
        let nr = names.len();
        let mut rstart = vec![0u32; nr + 1];
        for &r in &member {
            if r != NONE {
                rstart[r as usize + 1] += 1;
            }
        }
        for i in 0..nr {
            rstart[i + 1] += rstart[i];
        }
        let mut fill = rstart[..nr].to_vec();
        let mut rmembers = vec![0u32; rstart[nr] as usize];
        for (rank, &r) in member.iter().enumerate() {
            if r != NONE {
                rmembers[fill[r as usize] as usize] = rank as u32;
                fill[r as usize] += 1;
            }
        }
        Some(Racks { member, pstart, pracks, rstart, rmembers, active })
    }

    #[inline]
    pub(super) fn of_partition(&self, p: u32) -> &[u32] {
        &self.pracks[self.pstart[p as usize] as usize..self.pstart[p as usize + 1] as usize]
    }

    #[inline]
    pub(super) fn on_rack(&self, r: u32) -> &[u32] {
        &self.rmembers[self.rstart[r as usize] as usize..self.rstart[r as usize + 1] as usize]
    }

    /// Java's `racksMismatch`: the member has a rack and no replica of the partition is on it.
    #[inline]
    pub(super) fn mismatch(&self, m: u32, p: u32) -> bool {
        self.mismatch_set(m, self.of_partition(p))
    }

    /// [`Racks::mismatch`] against a replica rack set.
    #[inline]
    pub(super) fn mismatch_set(&self, m: u32, set: &[u32]) -> bool {
        let r = self.member[m as usize];
        r != NONE && !set.contains(&r)
    }
}

/// Whether partitions a member validly owns may move to improve rack alignment (Java does).
/// Such a move is taken only when the partner partition is newly placed, or when both
/// partitions end on their racks: freer owned swaps moved more partitions than Java on the
/// parity scenarios (251: 478 vs 388) for fewer gains.
pub(super) const MOVE_OWNED_FOR_RACK: bool = true;

/// Improves rack alignment without touching balance: a partition held off its racks moves to a
/// member on one of its racks either by a swap (that member hands back a partition it also holds
/// off its racks and the holder may take; sizes unchanged), or, when every member subscribes to
/// every topic, by a direct move from a member holding one more (the multiset of sizes is
/// unchanged). Each step lowers the number of mismatches, so this terminates. Partitions the
/// target member owned before are handed back last. `cooperative`: the chains' last stage
/// ([`ChainStage::AnyMove`]) is kept only where it completes within the budget (see
/// [`rack_chains`]).
pub(super) fn rack_align(
    target: &mut [u32],
    topics: &Topics<'_>,
    subs: &[&Vec<u32>],
    racks: &Racks,
    claims: &Claims,
    cooperative: bool,
) {
    let nm = subs.len();
    let uniform = nm > 0 && subs.iter().all(|s| s.len() == topics.len());
    let bits = SubBits::new(subs, topics.len());
    let mut count = vec![0u32; nm];
    let mut off: Vec<Vec<u32>> = vec![Vec::new(); nm];
    for (p, &m) in target.iter().enumerate() {
        if m != NONE {
            count[m as usize] += 1;
            if racks.mismatch(m, p as u32) {
                off[m as usize].push(p as u32);
            }
        }
    }
    // Not previously owned first: those are handed back before owned ones.
    for (m, list) in off.iter_mut().enumerate() {
        list.sort_by_key(|&q| (claims.owner[q as usize] == m as u32, q));
    }
    // First only partitions and swap partners nobody owned before (no extra movement), then all.
    let mut fresh_only = true;
    loop {
        let mut changed = false;
        for p in 0..target.len() as u32 {
            let h = target[p as usize];
            if h == NONE || !racks.mismatch(h, p) || (fresh_only && claims.owner[p as usize] == h) {
                continue;
            }
            let t = topics.topic_of(p);
            'racks: for &r in racks.of_partition(p) {
                for &m in racks.on_rack(r) {
                    if m == h || !bits.has(m, t) {
                        continue;
                    }
                    if uniform && count[m as usize] + 1 == count[h as usize] {
                        target[p as usize] = m;
                        count[m as usize] += 1;
                        count[h as usize] -= 1;
                        changed = true;
                        break 'racks;
                    }
                    if !uniform && count[m as usize] != count[h as usize] {
                        continue;
                    }
                    let list = &mut off[m as usize];
                    list.retain(|&q| target[q as usize] == m);
                    let pick = list.iter().position(|&q| {
                        bits.has(h, topics.topic_of(q))
                            && (claims.owner[q as usize] != m || (!fresh_only && !racks.mismatch(h, q)))
                    });
                    if let Some(i) = pick {
                        let q = list.remove(i);
                        target[p as usize] = m;
                        target[q as usize] = h;
                        if racks.mismatch(h, q) {
                            off[h as usize].push(q);
                        }
                        changed = true;
                        break 'racks;
                    }
                }
            }
        }
        if !changed {
            if !fresh_only || !MOVE_OWNED_FOR_RACK {
                break;
            }
            fresh_only = false;
        }
    }
    if rack_swap_via_third_rack(target, topics, (!uniform).then_some(&bits), racks, claims) {
        rack_chains(target, topics, subs, &bits, uniform, racks, claims, cooperative);
    }
    swap_back_to_owners(target, topics, &bits, racks, claims);
}

/// Gives partitions back to their valid owners by the swaps the rack passes leave open: `p`, held
/// by `h` and validly owned by `o`, returns to `o`, and `o` hands `h` a partition `q` it does not
/// validly own and `h` subscribes to, where that adds no rack mismatch. Sizes stay, and a move
/// away from an owner is undone: better by the objective, worse on nothing.
///
/// Without it a follow-up round could take an owner's partition for a member while the rack
/// passes gave the owner a free partition that would have served that member, and withhold one
/// such partition every round, forever (a 548-member group over 3 racks cycled between two
/// rounds: the water-fill gave the free partition to a member off its racks, the balance took
/// the owner's partition for the member that had one fewer, and the rack passes moved the free
/// one to the owner). A budget of examined partitions linear in the partitions bounds the pass.
fn swap_back_to_owners(target: &mut [u32], topics: &Topics<'_>, bits: &SubBits, racks: &Racks, claims: &Claims) {
    if !claims.any {
        return;
    }
    let valid_owner = |q: u32, t: u32| {
        let o = claims.owner[q as usize];
        (o != NONE && !claims.tie[q as usize] && bits.has(o, t)).then_some(o)
    };
    // By topic, so that no partition's topic is looked up: most groups have nothing to give back.
    let mut displaced = Vec::new();
    for t in 0..topics.len() as u32 {
        for q in topics.base[t as usize]..topics.base[t as usize + 1] {
            let (m, o) = (target[q as usize], claims.owner[q as usize]);
            if m != NONE && o != NONE && o != m && valid_owner(q, t).is_some() {
                displaced.push((q, o));
            }
        }
    }
    if displaced.is_empty() {
        return;
    }
    // Per member, the partitions it holds and does not validly own: the swap partners. An entry
    // whose partition has moved on since is skipped where it is read.
    let mut foreign: Vec<Vec<u32>> = vec![Vec::new(); bits.rows()];
    for t in 0..topics.len() as u32 {
        for q in topics.base[t as usize]..topics.base[t as usize + 1] {
            let m = target[q as usize];
            if m != NONE && valid_owner(q, t) != Some(m) {
                foreign[m as usize].push(q);
            }
        }
    }
    let mut budget = 16 * target.len() + 4096;
    let off = |m: u32, q: u32| usize::from(racks.mismatch(m, q));
    for (p, o) in displaced {
        // `p` may have moved on as another swap's partner, even back to its owner.
        let h = target[p as usize];
        if h == o {
            continue;
        }
        // What `p` adds off its racks on `o` beyond what it has on `h`: the partner must make up for it.
        let (p_on_o, p_on_h) = (off(o, p), off(h, p));
        let pick = foreign[o as usize].iter().position(|&q| {
            budget = budget.saturating_sub(1);
            target[q as usize] == o && bits.has(h, topics.topic_of(q)) && p_on_o + off(h, q) <= p_on_h + off(o, q)
        });
        if let Some(i) = pick {
            let q = foreign[o as usize].swap_remove(i);
            target[p as usize] = o;
            target[q as usize] = h;
            if valid_owner(q, topics.topic_of(q)) != Some(h) {
                foreign[h as usize].push(q);
            }
        }
        if budget == 0 {
            return;
        }
    }
}

/// The rack chains' budget, in examined (partition, member) pairs per partition of the group (and
/// [`CHAIN_BUDGET_BASE`] more): a bound on the whole pass, however many searches fail. Measured on
/// java-parity-racks-large (257-1,000 members): at 64 per partition, 11 sticky and cooperative
/// rebalances ended with more rack mismatches than Java's; at 1,024, 5. The slowest first round
/// there went from 84 to 103 ms, the 80 first rounds from 0.45 to 0.89 s; the benchmark shapes
/// never exhaust either budget. Since a search with other subscriptions offers each (rack,
/// topic) list of members once (issue 38), none of those groups ends with more mismatches than
/// Java's at equal balance.
const CHAIN_BUDGET_PER_PARTITION: usize = 1024;
/// See [`CHAIN_BUDGET_PER_PARTITION`].
const CHAIN_BUDGET_BASE: usize = 65_536;

/// What a stage of [`rack_chains`] may take from a member that validly owns it (each stage
/// searches only after the one before has found every chain it could).
#[derive(Clone, Copy)]
enum ChainStage {
    /// Nothing: no partition leaves its valid owner.
    NoMove,
    /// Only partitions the owner holds off their racks (the objective's lighter moves, 3b).
    OffRackMoves,
    /// Any: a partition may leave an owner that holds it on its rack, or has no rack (the
    /// objective's heaviest move, 3a), since every chain removes a mismatch (criterion 2, before
    /// every move).
    AnyMove,
}

/// Ejection chains for the mismatches the swaps leave. A partition `p` held off its racks by `h`
/// moves to a member `m1` that may hold it (on one of its racks, or without a rack), `m1` hands
/// one of its partitions to `m2`, and so on; the last member hands one to `h` (a cycle: sizes
/// unchanged) or, when every member subscribes to every topic, is one partition smaller than `h`
/// (the multiset of sizes unchanged). Every partition handed on ends on a member it is not a
/// mismatch for, so each chain removes at least one mismatch and adds none. The search runs in
/// three stages ([`ChainStage`]), each once the one before has found every chain it could: no
/// partition taken from its valid owner; then only partitions their owner holds off their racks;
/// last any, even one a valid owner holds on its rack or without a rack (the heaviest move, but
/// rack mismatches come before every move in the objective, issue 38). In the first two stages
/// the exceptions keep the count of moves away from owners on their racks: a member the chain
/// hands back a partition it validly owns (and may hold on its rack) may hand on any partition,
/// even one it owns on its rack; or the chain may end on it, `h` taking in place of `p` a
/// partition on its rack from a member one larger than that owner (the two sizes trade places),
/// even one its holder owns on its rack. (Java's choice on a 381-member group of four racks: 4
/// mismatches fewer than the chains without that end, with the same 4 moves away from owners on
/// their racks.)
///
/// Breadth-first over members, so chains are as short as they can be. (The swaps need the partner on `p`'s rack to hold a
/// partition that fits `h`; with members without a rack, only a longer chain through them
/// exists: 4 mismatches on a 376-member group of two racks, where Java has none.) A budget of
/// examined (partition, member) pairs, linear in the partitions ([`CHAIN_BUDGET_PER_PARTITION`]),
/// bounds the whole pass.
#[allow(clippy::too_many_arguments)]
fn rack_chains(
    target: &mut [u32],
    topics: &Topics<'_>,
    subs: &[&Vec<u32>],
    bits: &SubBits,
    uniform: bool,
    racks: &Racks,
    claims: &Claims,
    cooperative: bool,
) {
    let nm = bits.rows();
    let mut held: Vec<Vec<u32>> = vec![Vec::new(); nm];
    for (p, &m) in target.iter().enumerate() {
        if m != NONE {
            held[m as usize].push(p as u32);
        }
    }
    let rackless: Vec<u32> = (0..nm as u32).filter(|&m| racks.member[m as usize] == NONE).collect();
    // May `q` leave `a` at this stage: without any move, without a move away from an owner on
    // the partition's rack, or (last) with one?
    let free = |a: u32, q: u32, stage: ChainStage| {
        let owner = claims.owner[q as usize];
        owner != a
            || claims.tie[q as usize]
            || match stage {
                ChainStage::NoMove => false,
                ChainStage::OffRackMoves => racks.mismatch(a, q),
                ChainStage::AnyMove => true,
            }
    };
    // Ending a chain on a smaller member keeps the multiset of sizes; with other subscriptions
    // it may break the balance, checked then (and only if it held before).
    let shifts = uniform || balanced(target, topics, subs);
    let nr = racks.rstart.len() - 1;
    // With other subscriptions, per (rack slot, topic) the members of that rack (the last slot:
    // without a rack) that subscribe to the topic, in rank order: a search offers each list at
    // most once. (Scanning a whole rack for every partition offered cost a failed search on a
    // 862-member group, 666 of them on one rack, about half the pass's budget: the budget ran
    // out with 541 rack mismatches left, where the searches find all but 441.)
    // Stored as lists of (key, rank) pairs sorted by key, then rank, key = slot * topics + topic:
    // as many entries as there are subscriptions, however many racks and topics.
    let mut slot_topic: Vec<(usize, u32)> = Vec::new();
    if !uniform {
        for slot in 0..=nr {
            let group = if slot == nr { &rackless[..] } else { racks.on_rack(slot as u32) };
            for &m in group {
                slot_topic.extend(subs[m as usize].iter().map(|&t| (slot * topics.len() + t as usize, m)));
            }
        }
        slot_topic.sort_unstable();
    }
    let mut slot_topic_keys: Vec<usize> = Vec::new();
    let mut slot_topic_start: Vec<u32> = Vec::new();
    for (i, &(key, _)) in slot_topic.iter().enumerate() {
        if slot_topic_keys.last() != Some(&key) {
            slot_topic_keys.push(key);
            slot_topic_start.push(i as u32);
        }
    }
    slot_topic_start.push(slot_topic.len() as u32);
    let slot_topic_done = vec![0; slot_topic_keys.len()];
    let slot_topic_members = slot_topic.into_iter().map(|(_, m)| m).collect();
    let mut search = ChainSearch {
        stamp: 0,
        seen: vec![0; nm],
        reached_by: vec![(NONE, NONE); nm],
        unlocked: vec![false; nm],
        rack_done: vec![0; nr + 1],
        slot_topic_keys,
        slot_topic_start,
        slot_topic_members,
        slot_topic_done,
        topic_count: topics.len(),
        queue: Vec::new(),
        rackless,
        uniform,
        budget: CHAIN_BUDGET_PER_PARTITION * target.len() + CHAIN_BUDGET_BASE,
    };
    // Chains applied so far, and the last search that found none (holder, topic, replica racks,
    // chains applied then): a partition like it on the same holder would search the same way.
    let mut chains = 0usize;
    // The moves of the chain applied last, to undo one that breaks the balance.
    let mut undo: Vec<(u32, u32)> = Vec::new();
    // Per rack, the partitions with a replica there (built when a chain first needs it), and
    // the members of the chain being closed.
    let mut by_rack: Option<Vec<Vec<u32>>> = None;
    let mut on_path: Vec<u32> = Vec::new();
    // With `cooperative-sticky`, the last stage's chains are kept only where the stage completes
    // within the budget: each follow-up round places the withheld partitions anew, and a stage
    // cut short wherever the budget happens to run out takes from different owners each round
    // (with the searches' old cost, a 548-member rebalance went on past 10 follow-up rounds).
    let mut before_last_stage: Option<Vec<u32>> = None;
    for stage in [ChainStage::NoMove, ChainStage::OffRackMoves, ChainStage::AnyMove] {
        if search.budget == 0 {
            return;
        }
        if cooperative && matches!(stage, ChainStage::AnyMove) {
            before_last_stage = Some(target.to_vec());
        }
        let mut last_failure: Option<(u32, u32, &[u32], usize)> = None;
        for p in 0..target.len() as u32 {
            let h = target[p as usize];
            if h == NONE || !racks.mismatch(h, p) || !free(h, p, stage) {
                continue;
            }
            if search.budget == 0 {
                break;
            }
            // The same search as the last one, which failed, with nothing changed since.
            let t = topics.topic_of(p);
            if last_failure.is_some_and(|(fh, ft, fr, at)| (fh, ft, fr, at) == (h, t, racks.of_partition(p), chains)) {
                continue;
            }
            search.start(h);
            search.offer(p, h, topics, bits, racks, claims);
            let mut head = 0;
            let mut found = false;
            'bfs: while head < search.queue.len() && search.budget > 0 {
                let a = search.queue[head];
                head += 1;
                // One partition smaller than `h`: the chain may end here, sizes swapped. With
                // other subscriptions only where the assignment stays balanced.
                if shifts
                    && held[a as usize].len() + 1 == held[h as usize].len()
                    && search.close(target, &mut held, a, p, None, &mut undo, topics, subs)
                {
                    found = true;
                    break;
                }
                // An owner the chain hands back a partition it holds on its rack may end it: it
                // keeps what it is given, and `h` takes, in place of `p`, a partition on its own
                // rack from a member one larger than that owner (the two sizes trade places).
                // The one taken may be one its holder owns on its rack: the owner given back its
                // own keeps the count of moves away from owners on their racks.
                if shifts && search.unlocked[a as usize] {
                    let by_rack = by_rack.get_or_insert_with(|| {
                        let mut lists = vec![Vec::new(); nr];
                        for q in 0..target.len() as u32 {
                            for &r in racks.of_partition(q) {
                                lists[r as usize].push(q);
                            }
                        }
                        search.budget = search.budget.saturating_sub(target.len());
                        lists
                    });
                    let want = held[a as usize].len() + 1;
                    on_path.clear();
                    let mut b = a;
                    while b != h {
                        on_path.push(b);
                        b = search.reached_by[b as usize].0;
                    }
                    let mut taken = None;
                    for &q in &by_rack[racks.member[h as usize] as usize] {
                        search.budget = search.budget.saturating_sub(1);
                        let c = target[q as usize];
                        if c != NONE
                            && c != h
                            && held[c as usize].len() == want
                            && bits.has(h, topics.topic_of(q))
                            && (free(c, q, stage) || !racks.mismatch(c, q))
                            && !on_path.contains(&c)
                        {
                            taken = Some(q);
                            break;
                        }
                        if search.budget == 0 {
                            break;
                        }
                    }
                    if taken
                        .is_some_and(|q| search.close(target, &mut held, a, p, Some((q, h)), &mut undo, topics, subs))
                    {
                        found = true;
                        break;
                    }
                }
                for &q in &held[a as usize] {
                    search.budget = search.budget.saturating_sub(1);
                    if !search.unlocked[a as usize] && !free(a, q, stage) {
                        continue;
                    }
                    if bits.has(h, topics.topic_of(q)) && !racks.mismatch(h, q) {
                        apply_chain(target, &mut held, &search.reached_by, h, Some((a, q)), p, &mut undo);
                        found = true;
                        break 'bfs;
                    }
                    search.offer(q, a, topics, bits, racks, claims);
                }
            }
            if found {
                chains += 1;
            } else {
                last_failure = Some((h, t, racks.of_partition(p), chains));
            }
        }
    }
    if let Some(before) = before_last_stage.filter(|_| search.budget == 0) {
        target.copy_from_slice(&before);
    }
}

/// An off-rack partition `p` held on rack `H` swaps with a partition `q` that a member on one of
/// `p`'s racks holds and that has a replica on `H` (so `p` becomes on-rack and `q` stays or
/// becomes on-rack). Pools per (holder rack, replica rack) keep each lookup short; partitions
/// nobody owned before are taken first. With heterogeneous subscriptions (`bits`) a swap also
/// needs each member to subscribe to the other's partition, and a second pass lets partitions
/// still off their racks search a whole pool, within a total budget linear in the partitions.
/// Returns whether some partition may still be off its racks.
pub(super) fn rack_swap_via_third_rack(
    target: &mut [u32],
    topics: &Topics<'_>,
    bits: Option<&SubBits>,
    racks: &Racks,
    claims: &Claims,
) -> bool {
    // Heterogeneous subscriptions: a candidate must suit both subscriptions; a bounded look at
    // each pool's end keeps a lookup short.
    const LOOK: usize = 32;
    let nr = racks.rstart.len() - 1;
    let mut pool: Vec<Vec<u32>> = vec![Vec::new(); nr * nr];
    // Owned ones first in each pool, so the fresh ones at the end are popped first.
    for owned_pass in [true, false] {
        for (q, &m) in target.iter().enumerate() {
            if m == NONE || racks.member[m as usize] == NONE || (claims.owner[q] == m) != owned_pass {
                continue;
            }
            let r = racks.member[m as usize] as usize;
            for &x in racks.of_partition(q as u32) {
                pool[r * nr + x as usize].push(q as u32);
            }
        }
    }
    // Heterogeneous subscriptions, second pass: the partitions still off their racks look
    // further down the pools, within a total budget of examined entries. (The bounded look alone
    // left 96 of 10,000 partitions off-rack on a 500-member group of two disjoint subscription
    // halves: each pool's end held only the other half's partitions.)
    let mut budget = if bits.is_some() { 16 * target.len() + 1024 } else { 0 };
    // Partitions the last pass left off their racks (a swap never puts one off its racks).
    let mut left = 0usize;
    for look_limit in [LOOK, usize::MAX] {
        if look_limit == usize::MAX && budget == 0 {
            break;
        }
        let second = look_limit == usize::MAX;
        left = 0;
        for p in 0..target.len() as u32 {
            let h = target[p as usize];
            if h == NONE || !racks.mismatch(h, p) {
                continue;
            }
            if second && budget == 0 {
                return true;
            }
            let hr = racks.member[h as usize];
            let tp = topics.topic_of(p);
            left += 1;
            'racks: for &r in racks.of_partition(p) {
                let list = &mut pool[r as usize * nr + hr as usize];
                let mut i = list.len();
                let mut looked = 0;
                while i > 0 {
                    i -= 1;
                    let q = list[i];
                    let m = target[q as usize];
                    if m == NONE || racks.member[m as usize] != r || m == h {
                        // Stale: the partition moved since it was pooled.
                        list.swap_remove(i);
                        continue;
                    }
                    if claims.owner[q as usize] == m && !racks.mismatch(m, q) {
                        // Its owner holds it on one of its racks: taking it away is the heaviest
                        // move, left to the chains' last stage, which first look for a chain that
                        // fixes the mismatch without it. It stays where it is (nothing here moves
                        // it), so it leaves the pool.
                        list.swap_remove(i);
                        continue;
                    }
                    if let Some(bits) = bits {
                        looked += 1;
                        if second {
                            budget -= 1;
                        }
                        // Nor one its holder owned before: Java does not give up an owned
                        // partition on its owner's rack for another's rack.
                        if !bits.has(m, tp) || !bits.has(h, topics.topic_of(q)) || claims.owner[q as usize] == m {
                            if looked == look_limit || (second && budget == 0) {
                                break;
                            }
                            continue;
                        }
                    }
                    list.swap_remove(i);
                    target[p as usize] = m;
                    target[q as usize] = h;
                    for &x in racks.of_partition(p) {
                        pool[r as usize * nr + x as usize].push(p);
                    }
                    for &x in racks.of_partition(q) {
                        pool[hr as usize * nr + x as usize].push(q);
                    }
                    left -= 1;
                    break 'racks;
                }
            }
        }
    }
    left > 0
}

/// One breadth-first search of [`rack_chains`] at a time (`stamp`): the members reached and how
/// (giver, partition), and the racks whose members were all offered already (with uniform
/// subscriptions only, where every member of a rack may take any partition).
struct ChainSearch {
    stamp: u32,
    seen: Vec<u32>,
    reached_by: Vec<(u32, u32)>,
    /// Reached by a partition it validly owns and may hold (one moved away from it): handing
    /// on any partition then, even one it owns on its rack, keeps the count of moves away from
    /// owners on their racks.
    unlocked: Vec<bool>,
    /// Per rack id, and one more slot for the members without a rack.
    rack_done: Vec<u32>,
    /// With other subscriptions: the (rack slot, topic) pairs some member has, as keys
    /// `slot * topic_count + topic` (sorted), and per key its members (`slot_topic_members`
    /// from `slot_topic_start[i]` to `slot_topic_start[i + 1]`, rank order) and the search that
    /// offered them all already.
    slot_topic_keys: Vec<usize>,
    slot_topic_start: Vec<u32>,
    slot_topic_members: Vec<u32>,
    slot_topic_done: Vec<u32>,
    topic_count: usize,
    queue: Vec<u32>,
    rackless: Vec<u32>,
    uniform: bool,
    /// Examined (partition, member) pairs left for the whole pass.
    budget: usize,
}

impl ChainSearch {
    /// [`balanced`], charged to the budget: it reads every partition, and a search may try many
    /// chain ends with other subscriptions.
    fn balanced(&mut self, target: &[u32], topics: &Topics<'_>, subs: &[&Vec<u32>]) -> bool {
        self.budget = self.budget.saturating_sub(target.len());
        balanced(target, topics, subs)
    }

    /// Closes the chain that ends at `a` (its first partition `p`) and, with `extra` = (`q`, `h`),
    /// gives `h` the partition `q` in place of `p`. Kept where the assignment stays balanced
    /// (always with one subscription); otherwise every move is undone. Returns whether it was kept.
    #[allow(clippy::too_many_arguments)]
    fn close(
        &mut self,
        target: &mut [u32],
        held: &mut [Vec<u32>],
        a: u32,
        p: u32,
        extra: Option<(u32, u32)>,
        undo: &mut Vec<(u32, u32)>,
        topics: &Topics<'_>,
        subs: &[&Vec<u32>],
    ) -> bool {
        apply_chain(target, held, &self.reached_by, a, None, p, undo);
        if let Some((q, h)) = extra {
            let from = move_partition(target, held, q, h);
            undo.push((q, from));
        }
        if self.uniform || self.balanced(target, topics, subs) {
            return true;
        }
        for &(q, from) in undo.iter().rev() {
            move_partition(target, held, q, from);
        }
        false
    }

    fn start(&mut self, h: u32) {
        self.stamp += 1;
        self.queue.clear();
        self.seen[h as usize] = self.stamp;
    }

    /// Queues every member not reached yet that may take `q` from `giver` without a mismatch.
    fn offer(&mut self, q: u32, giver: u32, topics: &Topics<'_>, bits: &SubBits, racks: &Racks, claims: &Claims) {
        let owner = if claims.tie[q as usize] { NONE } else { claims.owner[q as usize] };
        let t = topics.topic_of(q);
        let rackless_slot = self.rack_done.len() - 1;
        if !self.uniform {
            // Each (slot, topic) list once per search: every member in it is reached then.
            let slots = racks.of_partition(q).iter().map(|&r| r as usize);
            for slot in slots.chain(std::iter::once(rackless_slot)) {
                let Ok(key) = self.slot_topic_keys.binary_search(&(slot * self.topic_count + t as usize)) else {
                    continue;
                };
                if self.slot_topic_done[key] == self.stamp {
                    continue;
                }
                self.slot_topic_done[key] = self.stamp;
                let (from, to) = (self.slot_topic_start[key] as usize, self.slot_topic_start[key + 1] as usize);
                for i in from..to {
                    let b = self.slot_topic_members[i];
                    self.budget = self.budget.saturating_sub(1);
                    if self.seen[b as usize] != self.stamp {
                        self.seen[b as usize] = self.stamp;
                        self.reached_by[b as usize] = (giver, q);
                        self.unlocked[b as usize] = b == owner;
                        self.queue.push(b);
                    }
                }
            }
            return;
        }
        let groups = racks.of_partition(q).iter().map(|&r| (r as usize, racks.on_rack(r)));
        for (slot, group) in groups.chain(std::iter::once((rackless_slot, &self.rackless[..]))) {
            if self.uniform && self.rack_done[slot] == self.stamp {
                continue;
            }
            for &b in group {
                self.budget = self.budget.saturating_sub(1);
                if self.seen[b as usize] != self.stamp && bits.has(b, t) {
                    self.seen[b as usize] = self.stamp;
                    self.reached_by[b as usize] = (giver, q);
                    self.unlocked[b as usize] = b == owner;
                    self.queue.push(b);
                }
            }
            if self.uniform {
                self.rack_done[slot] = self.stamp;
            }
        }
    }
}

/// Moves `q` to `to`, keeping the per-member lists; returns where it was.
fn move_partition(target: &mut [u32], held: &mut [Vec<u32>], q: u32, to: u32) -> u32 {
    let from = target[q as usize];
    let list = &mut held[from as usize];
    if let Some(i) = list.iter().position(|&x| x == q) {
        list.swap_remove(i);
    }
    held[to as usize].push(q);
    target[q as usize] = to;
    from
}

/// Applies a chain found by [`rack_chains`] from its end `last` back to its first partition
/// `first`: each step hands one partition to the member after it (`closing`: the step that
/// hands one back to the chain's start). `moves` gets the moves as (partition, from), in order,
/// for a caller that may undo them.
fn apply_chain(
    target: &mut [u32],
    held: &mut [Vec<u32>],
    reached_by: &[(u32, u32)],
    last: u32,
    closing: Option<(u32, u32)>,
    first: u32,
    moves: &mut Vec<(u32, u32)>,
) {
    moves.clear();
    let mut b = last;
    let mut step = closing.unwrap_or(reached_by[b as usize]);
    loop {
        let (a, q) = step;
        moves.push((q, move_partition(target, held, q, b)));
        if q == first {
            return;
        }
        b = a;
        step = reached_by[b as usize];
    }
}

/// Which partitions count as off-rack for a member, as Java's `racksMismatch` counts them: with
/// rack metadata, a partition none of whose replicas is on the member's rack; without any
/// replica racks, every partition of a member that has a rack.
pub(super) struct OffRack<'a> {
    pub(super) racks: Option<&'a Racks>,
    /// Per rank, without rack metadata: whether the member has a rack (empty otherwise).
    pub(super) racked: Vec<bool>,
}

impl<'a> OffRack<'a> {
    pub(super) fn new(
        racks: Option<&'a Racks>,
        topics: &Topics<'_>,
        members: &[Member<'_>],
        rank_to_member: &[u32],
    ) -> Self {
        let racked = match racks {
            None if topics.info.iter().all(|i| i.partition_racks.iter().all(Vec::is_empty)) => {
                rank_to_member.iter().map(|&m| members[m as usize].rack().is_some()).collect()
            }
            _ => Vec::new(),
        };
        OffRack { racks, racked }
    }

    #[inline]
    pub(super) fn mismatch(&self, r: u32, p: u32) -> bool {
        match self.racks {
            Some(racks) => racks.mismatch(r, p),
            None => self.racked.get(r as usize).copied().unwrap_or(false),
        }
    }

    /// What decides a member's mismatches: its rack (or whether it has one).
    pub(super) fn member_key(&self, r: u32) -> u32 {
        match self.racks {
            Some(racks) => racks.member[r as usize],
            None => u32::from(self.racked.get(r as usize).copied().unwrap_or(false)),
        }
    }

    /// What decides a partition's mismatches: its replica racks.
    pub(super) fn partition_key(&self, p: u32) -> &[u32] {
        self.racks.map_or(&[], |racks| racks.of_partition(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::common::member_id_order;
    use crate::assignor::{ClusterMetadata, GroupMember};
    use crate::{Subscription, TopicPartitions};

    fn member(id: &str, rack: Option<&str>, topics: &[&str], owned: &[(&str, i32)]) -> GroupMember {
        let owned = owned.iter().map(|&(t, p)| TopicPartitions::new(t, [p])).collect();
        let mut sub =
            Subscription::new(topics.iter().map(|t| t.to_string())).with_owned_partitions(owned).with_generation_id(1);
        sub.rack_id = rack.map(Into::into);
        GroupMember { member_id: id.into(), group_instance_id: None, subscription: sub }
    }

    /// Runs the rack passes on `placed` ((topic, partition, member id)) and returns the target
    /// with the ranks and flat ids to read it.
    fn align(metadata: &ClusterMetadata, group: &[GroupMember], placed: &[(&str, i32, &str)]) -> Aligned {
        let members = Member::all_owned(group);
        let topics = Topics::new(metadata, &members).unwrap();
        let subs_by_member = topics.subscriptions(&members);
        let rank_to_member = member_id_order(&members);
        let subs: Vec<&Vec<u32>> = rank_to_member.iter().map(|&m| &subs_by_member[m as usize]).collect();
        let racks = Racks::new(&topics, &members, &rank_to_member).unwrap();
        assert!(racks.active);
        let claims = super::super::claims::resolve_claims(&topics, &members, &rank_to_member, true);
        let rank = |id: &str| rank_to_member.iter().position(|&m| members[m as usize].id() == id).unwrap() as u32;
        let flat = |t: &str, p: i32| topics.flat(topics.id(t).unwrap(), p).unwrap() as usize;
        let mut target = vec![NONE; topics.total()];
        for &(t, p, m) in placed {
            target[flat(t, p)] = rank(m);
        }
        rack_align(&mut target, &topics, &subs, &racks, &claims, false);
        let mismatches = (0..target.len() as u32).filter(|&p| racks.mismatch(target[p as usize], p)).count();
        let holder = placed
            .iter()
            .map(|&(t, p, _)| {
                let m = rank_to_member[target[flat(t, p)] as usize];
                ((t.to_string(), p), members[m as usize].id().to_string())
            })
            .collect();
        Aligned { mismatches, holder }
    }

    struct Aligned {
        mismatches: usize,
        holder: std::collections::BTreeMap<(String, i32), String>,
    }

    impl Aligned {
        fn of(&self, t: &str, p: i32) -> &str {
            &self.holder[&(t.to_string(), p)]
        }

        fn size(&self, m: &str) -> usize {
            self.holder.values().filter(|h| *h == m).count()
        }
    }

    fn with_racks(counts: &[(&str, &[&str])]) -> ClusterMetadata {
        let mut metadata = ClusterMetadata::from_counts(counts.iter().map(|&(t, r)| (t, r.len() as i32)));
        for &(t, r) in counts {
            metadata.topics.get_mut(t).unwrap().partition_racks = r.iter().map(|x| vec![x.to_string()]).collect();
        }
        metadata
    }

    /// "o" owns t2-0 on its rack, yet "n" holds it, and "o" holds t2-1, which nobody owned: the
    /// partitions swap back (the shape of a rebalance that withheld one such partition every
    /// round, forever). Sizes stay and nothing is off its rack before or after.
    #[test]
    fn a_partition_goes_back_to_its_owner_for_one_the_owner_does_not_own() {
        let metadata = with_racks(&[("t0", &["b"]), ("t1", &["a"]), ("t2", &["a", "a"])]);
        let group = [
            member("n", Some("a"), &["t2"], &[]),
            member("o", Some("a"), &["t1", "t2"], &[("t1", 0), ("t2", 0)]),
            member("x", Some("b"), &["t0"], &[]),
        ];
        let placed = [("t0", 0, "x"), ("t1", 0, "o"), ("t2", 0, "n"), ("t2", 1, "o")];
        let out = align(&metadata, &group, &placed);
        assert_eq!(out.mismatches, 0, "{:?}", out.holder);
        assert_eq!(out.of("t2", 0), "o", "{:?}", out.holder);
        assert_eq!(out.of("t2", 1), "n", "{:?}", out.holder);
        assert_eq!((out.size("n"), out.size("o"), out.size("x")), (1, 2, 1));
    }

    /// The same swap is not taken where it would put partitions off their racks: "o" owns t2-0
    /// off its rack, and t2-1, which it holds, has no replica on "n"'s rack.
    #[test]
    fn no_partition_goes_back_to_its_owner_at_the_cost_of_a_mismatch() {
        let metadata = with_racks(&[("t0", &["b"]), ("t2", &["a", "b"])]);
        let group = [member("n", Some("a"), &["t2"], &[]), member("o", Some("b"), &["t0", "t2"], &[("t2", 0)])];
        let placed = [("t0", 0, "o"), ("t2", 0, "n"), ("t2", 1, "o")];
        let out = align(&metadata, &group, &placed);
        assert_eq!(out.mismatches, 0, "{:?}", out.holder);
        assert_eq!(out.of("t2", 0), "n", "{:?}", out.holder);
        assert_eq!(out.of("t2", 1), "o", "{:?}", out.holder);
    }

    /// The one mismatch here is fixed only by a chain of three: neither swap pass applies (the
    /// member on the partition's rack holds nothing off its rack, and nothing held on that rack
    /// has a replica on the holder's), the member without a rack does not subscribe to the
    /// partition's topic, and the partition its owner holds on its rack must stay.
    #[test]
    fn a_chain_through_a_member_without_a_rack_fixes_a_mismatch_no_swap_can() {
        let metadata = with_racks(&[("t0", &["b"]), ("t1", &["a", "b", "b", "a", "a"])]);
        // "m" owns t1-2, on its rack; nobody owns anything else.
        let group = [
            member("h", Some("a"), &["t0", "t1"], &[]),
            member("m", Some("b"), &["t0", "t1"], &[("t1", 2)]),
            member("x", None, &["t1"], &[]),
        ];
        // h: t0-0 (rack b: the mismatch) and t1-0; m: t1-1 and its own t1-2; x: t1-3 and t1-4.
        let placed = [("t0", 0, "h"), ("t1", 0, "h"), ("t1", 1, "m"), ("t1", 2, "m"), ("t1", 3, "x"), ("t1", 4, "x")];
        let out = align(&metadata, &group, &placed);
        assert_eq!(out.mismatches, 0, "{:?}", out.holder);
        assert_eq!(out.of("t0", 0), "m");
        assert_eq!(out.of("t1", 2), "m", "an owner's partition on its rack stays");
        for m in ["h", "m", "x"] {
            assert_eq!(out.size(m), 2, "sizes unchanged");
        }
    }

    /// A member that gets back a partition it owned on its rack may hand on one it still holds
    /// on its rack: the moves away from owners on their racks stay one. Here that is the only
    /// way: "o" holds only its own partitions, and "h" subscribes to neither "y"'s topic nor the
    /// one "o" gets back.
    #[test]
    fn a_chain_may_take_an_owned_partition_from_an_owner_it_gives_one_back() {
        let metadata = with_racks(&[("t0", &["b"]), ("t1", &["a", "a"]), ("t2", &["a", "a", "a"])]);
        let group = [
            member("h", Some("a"), &["t0", "t2"], &[]),
            member("o", Some("a"), &["t1", "t2"], &[("t1", 0), ("t2", 0), ("t2", 1)]),
            member("y", None, &["t0", "t1"], &[("t1", 1)]),
        ];
        // o's t1-0 is on y already (a move away from an owner on its rack).
        let placed = [("t0", 0, "h"), ("t2", 2, "h"), ("t1", 0, "y"), ("t1", 1, "y"), ("t2", 0, "o"), ("t2", 1, "o")];
        let out = align(&metadata, &group, &placed);
        assert_eq!(out.mismatches, 0, "{:?}", out.holder);
        assert_eq!(out.of("t0", 0), "y");
        assert_eq!(out.of("t1", 0), "o", "back to its owner");
        assert_eq!(out.of("t1", 1), "y", "an owner without a rack keeps its partition");
        let away_from_o = [("t1", 0), ("t2", 0), ("t2", 1)].iter().filter(|&&(t, p)| out.of(t, p) != "o").count();
        assert_eq!(away_from_o, 1, "one move away from an owner on its rack, as before");
        for m in ["h", "o", "y"] {
            assert_eq!(out.size(m), 2, "sizes unchanged");
        }
    }

    /// A chain may end on an owner it hands back a partition it owns on its rack, with the first
    /// member taking, in place of its off-rack partition, one on its rack from a member one
    /// larger than that owner: the moves away from owners on their racks stay one. Here that is
    /// the only way ("h" subscribes to neither of the topics "o" could give or gets back; "o"
    /// holds as many as "h", so the chain cannot simply end on it).
    #[test]
    fn a_chain_may_end_on_an_owner_given_back_its_partition_and_take_from_a_larger_member() {
        let mut metadata = with_racks(&[("t", &["b", "a", "b", "a", "a", "a"]), ("u", &["a", "a", "a"])]);
        // u-0 has replicas on both racks: on "d"'s and on its owner "o"'s.
        metadata.topics.get_mut("u").unwrap().partition_racks[0] = vec!["a".into(), "b".into()];
        let group = [
            member("h", Some("a"), &["t"], &[("t", 1)]),
            member("d", Some("b"), &["t", "u"], &[("t", 2)]),
            member("o", Some("a"), &["u"], &[("u", 0), ("u", 1), ("u", 2)]),
            member("c", Some("a"), &["t"], &[("t", 3), ("t", 4), ("t", 5)]),
        ];
        // h: t-0 (rack b: the mismatch) and its own t-1; d: o's u-0 (one move away from an owner
        // on its rack) and its own t-2; o: its u-1 and u-2; c: its t-3, t-4 and t-5.
        let placed = [
            ("t", 0, "h"),
            ("t", 1, "h"),
            ("u", 0, "d"),
            ("t", 2, "d"),
            ("u", 1, "o"),
            ("u", 2, "o"),
            ("t", 3, "c"),
            ("t", 4, "c"),
            ("t", 5, "c"),
        ];
        let out = align(&metadata, &group, &placed);
        assert_eq!(out.mismatches, 0, "{:?}", out.holder);
        assert_eq!(out.of("t", 0), "d");
        assert_eq!(out.of("u", 0), "o", "back to its owner");
        let owned = [("h", "t", 1), ("d", "t", 2), ("o", "u", 0), ("o", "u", 1), ("o", "u", 2)];
        let c_owned = [("c", "t", 3), ("c", "t", 4), ("c", "t", 5)];
        let away = owned.iter().chain(&c_owned).filter(|&&(m, t, p)| out.of(t, p) != m).count();
        assert_eq!(away, 1, "one move away from an owner on its rack, as before");
        let mut sizes: Vec<usize> = ["h", "d", "o", "c"].iter().map(|m| out.size(m)).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, [2, 2, 2, 3], "the sizes trade places");
    }
}
