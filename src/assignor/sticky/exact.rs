//! The exact solver: the polish (negative-cycle cancelling in the members graph of the
//! partitions-to-members min-cost flow, optimal for the objective's criteria 1-3 up to
//! [`OPTIMIZE_MAX_MEMBERS`] members and [`OPTIMIZE_MAX_PARTITIONS`] partitions), and the
//! placement that keeps every valid claim and places the rest exactly for balance, then racks.

use super::super::placement;
use super::claims::Claims;
use super::heuristics::SubBits;
use super::racks::{OffRack, Racks};
use super::target::Target;
use crate::assignor::common::{FxMap, Topics, NONE};

/// Work allowed to [`keep_and_place`]'s flow (arc relaxations); beyond it the candidate is
/// dropped.
pub(super) const PLACEMENT_BUDGET: u64 = 1 << 26;

/// Every valid claim kept, and every other subscribed partition placed for the most even sizes,
/// then the fewest off-rack partitions (`assignor::placement`); `None` past the work
/// budget, or when nothing is left to place and `unless_nothing_to_place` (the caller's own
/// answer keeps every claim: it is this one).
pub(super) fn keep_and_place(
    topics: &Topics<'_>,
    subs: &[&Vec<u32>],
    subscribed: &SubBits,
    claims: &Claims,
    off_rack: &OffRack<'_>,
    unless_nothing_to_place: bool,
) -> Option<Target> {
    let mut target = vec![NONE; topics.total()];
    let mut size = vec![0u32; subs.len()];
    for t in 0..topics.len() as u32 {
        let range = topics.base[t as usize] as usize..topics.base[t as usize + 1] as usize;
        for ((slot, &c), &tie) in
            target[range.clone()].iter_mut().zip(&claims.owner[range.clone()]).zip(&claims.tie[range])
        {
            if c != NONE && !tie && subscribed.has(c, t) {
                *slot = c;
                size[c as usize] += 1;
            }
        }
    }
    // Member classes: same subscription, same rack.
    let mut member_class: FxMap<(&[u32], u32), u32> = FxMap::default();
    let mut class_members: Vec<Vec<u32>> = Vec::new();
    for r in 0..subs.len() as u32 {
        let key = (subs[r as usize].as_slice(), off_rack.member_key(r));
        let next = class_members.len() as u32;
        let c = *member_class.entry(key).or_insert(next);
        if c == next {
            class_members.push(Vec::new());
        }
        class_members[c as usize].push(r);
    }
    let mut by_topic: Vec<Vec<u32>> = vec![Vec::new(); topics.len()];
    for (c, ranks) in class_members.iter().enumerate() {
        for &t in subs[ranks[0] as usize].iter() {
            by_topic[t as usize].push(c as u32);
        }
    }
    // Partition classes: same topic, same replica racks; only those someone subscribes to.
    let mut partition_class: FxMap<(u32, &[u32]), u32> = FxMap::default();
    let mut class_partitions: Vec<Vec<u32>> = Vec::new();
    let mut class_topic: Vec<u32> = Vec::new();
    for t in (0..topics.len() as u32).filter(|&t| !by_topic[t as usize].is_empty()) {
        for p in topics.base[t as usize]..topics.base[t as usize + 1] {
            if target[p as usize] != NONE {
                continue;
            }
            let next = class_partitions.len() as u32;
            let c = *partition_class.entry((t, off_rack.partition_key(p))).or_insert(next);
            if c == next {
                class_partitions.push(Vec::new());
                class_topic.push(t);
            }
            class_partitions[c as usize].push(p);
        }
    }
    if class_partitions.is_empty() {
        return (!unless_nothing_to_place).then_some(Target(target));
    }
    let mut arcs = Vec::new();
    for (pc, list) in class_partitions.iter().enumerate() {
        for &mc in &by_topic[class_topic[pc] as usize] {
            let mismatch = off_rack.mismatch(class_members[mc as usize][0], list[0]);
            arcs.push((pc as u32, mc, mismatch));
        }
    }
    let problem = placement::Problem {
        supply: class_partitions.iter().map(|l| l.len() as u32).collect(),
        sizes: class_members.iter().map(|ranks| ranks.iter().map(|&r| size[r as usize]).collect()).collect(),
        arcs,
    };
    let placed = placement::solve(&problem, PLACEMENT_BUDGET)?;
    // Each member class's partitions, in partition-class order, dealt to its members in rank
    // order by how many each receives (every member of a class is the same to the measures).
    let mut pool: Vec<Vec<u32>> = vec![Vec::new(); class_members.len()];
    let mut taken = vec![0usize; class_partitions.len()];
    for (&(pc, mc, _), &units) in problem.arcs.iter().zip(&placed.flow) {
        let list = &class_partitions[pc as usize];
        let from = taken[pc as usize];
        pool[mc as usize].extend_from_slice(&list[from..from + units as usize]);
        taken[pc as usize] += units as usize;
    }
    for (mc, ranks) in class_members.iter().enumerate() {
        let mut next = pool[mc].iter();
        for (&r, &units) in ranks.iter().zip(&placed.added[mc]) {
            for &p in next.by_ref().take(units as usize) {
                target[p as usize] = r;
            }
        }
    }
    Some(Target(target))
}

/// Groups of at most this many members and partitions get the exact polish ([`optimize`]): its
/// rounds cost `O(members^3)`, and a rack-blind start on a large group needs many rounds (a
/// heterogeneous fresh group of 128 members over 1M partitions on 3 racks took 25 s; 100 members
/// over 100k partitions 0.57 s).
pub(super) const OPTIMIZE_MAX_MEMBERS: usize = 128;

pub(super) const OPTIMIZE_MAX_PARTITIONS: usize = 100_000;

/// Safety bound on the improving cycles applied by [`optimize`] (each strictly lowers the cost).
pub(super) const OPTIMIZE_MAX_ROUNDS: usize = 20_000;

/// Exact polish for small groups: lowers, in this order of priority, the sum of squared member
/// sizes (balance), the number of partitions off their member's racks (KIP-881), the number of
/// partitions moved away from a valid owner on whose rack they are (or that has no rack), and
/// the number of other partitions moved away from their valid owners (owned off-rack ones, which
/// Java gives up), then (general path) the number off their previous owner, until no improvement
/// exists. Where Java's rack logic does not run, every move comes before the mismatches.
///
/// The state is the assignment; an improvement is a cycle of members each handing one partition
/// to the next (sizes unchanged), or a path from one member to another (one size down, one up)
/// closed through a virtual node whose edges carry the change in the sum of squares. The
/// member graph has, for each ordered pair `(a, b)`, the cheapest partition `a` holds that `b`
/// subscribes to; the partitions a member holds are grouped by (replica rack set, owner
/// relation), which fixes their cost for every member, and then by topic. Cycles are found with
/// Bellman-Ford and applied repeatedly while they pay. This is the residual graph of the
/// min-cost flow of partitions to members (convex member costs), so when no negative cycle
/// remains the assignment is optimal for the lexicographic cost over all assignments.
pub(super) fn optimize(
    target: &mut [u32],
    topics: &Topics<'_>,
    subs: &[&Vec<u32>],
    racks: Option<&Racks>,
    claims: &Claims,
) {
    use std::collections::{BTreeMap, HashMap};
    let nm = subs.len();
    if nm < 2 {
        return;
    }
    let bits = SubBits::new(subs, topics.len());
    // Java gives up owned off-rack partitions only where its rack logic runs; elsewhere every
    // move weighs more than a rack mismatch.
    let rack_first = racks.is_some_and(|r| r.active);
    // Replica rack set per partition, interned; `rs_mis[rs * nm + m]`: m's rack is not in it.
    let mut rs_of = vec![0u32; target.len()];
    let mut rs_mis: Vec<bool> = vec![false; nm];
    if let Some(racks) = racks {
        let mut ids: HashMap<&[u32], u32> = HashMap::new();
        rs_mis.clear();
        for p in 0..target.len() as u32 {
            let set = racks.of_partition(p);
            let next = ids.len() as u32;
            let id = *ids.entry(set).or_insert_with(|| {
                rs_mis.extend((0..nm as u32).map(|m| racks.mismatch_set(m, set)));
                next
            });
            rs_of[p as usize] = id;
        }
    }
    let valid_owner = |p: u32| {
        let o = claims.owner[p as usize];
        (o != NONE && !claims.tie[p as usize] && bits.has(o, topics.topic_of(p))).then_some(o)
    };
    // Owner relation of `p` to holder `h`: 0 = owns it, 1 = nobody owns it, 2 + o = o owns it.
    let kind = |p: u32, h: u32| match valid_owner(p) {
        Some(o) if o == h => 0u32,
        None => 1,
        Some(o) => 2 + o,
    };
    // Java's general path prefers a partition's previous owner (a lower-generation claimer,
    // `prevAssignment`) when it moves: the last priority, with heterogeneous subscriptions.
    let uniform = subs.iter().all(|s| s.len() == topics.len());
    let prev_owner =
        |p: u32| claims.prev_of(p as usize).filter(|&o| !uniform && bits.has(o, topics.topic_of(p))).unwrap_or(NONE);
    // Per member: (rack set, owner relation, previous owner) -> topic -> partitions (no empty
    // entries).
    type Groups = BTreeMap<(u32, u32, u32), BTreeMap<u32, Vec<u32>>>;
    let mut groups: Vec<Groups> = vec![BTreeMap::new(); nm];
    let mut count = vec![0i64; nm];
    let add = |groups: &mut [Groups], p: u32, h: u32| {
        let key = (rs_of[p as usize], kind(p, h), prev_owner(p));
        groups[h as usize].entry(key).or_default().entry(topics.topic_of(p)).or_default().push(p);
    };
    for (p, &h) in target.iter().enumerate() {
        if h != NONE {
            count[h as usize] += 1;
            add(&mut groups, p as u32, h);
        }
    }
    // A topic of the group that `b` subscribes to.
    let topic_for = |g: &BTreeMap<u32, Vec<u32>>, b: u32| -> Option<u32> {
        if g.len() <= subs[b as usize].len() {
            g.keys().copied().find(|&t| bits.has(b, t))
        } else {
            subs[b as usize].iter().copied().find(|t| g.contains_key(t))
        }
    };
    // Lexicographic weights packed in one integer (each component of a path sum stays below k/2
    // in size): squares, rack mismatches, moves off suited owners, other moves, partitions off
    // their previous owner (issue 38: a mismatch costs cross-rack traffic for as long as the
    // assignment stands, a move costs once, so no move outweighs a mismatch). Where Java's rack
    // logic does not run, every move (all counted as `kept` then) comes before the mismatches,
    // which only break ties.
    let k = 4 * (nm as i128 + 2);
    let w = |sq: i128, kept: i128, mis: i128, mv: i128, prev: i128| {
        let (first, second) = if rack_first { (mis, kept) } else { (kept, mis) };
        (((sq * k + first) * k + second) * k + mv) * k + prev
    };
    let s = nm; // the virtual node
    let n = nm + 1;
    const NO_EDGE: i128 = i128::MAX;
    let mut weight = vec![NO_EDGE; n * n];
    // Per member pair: the group key and topic of the partition handed over.
    let mut via: Vec<((u32, u32, u32), u32)> = vec![((0, 0, 0), 0); nm * nm];
    let mut dist = vec![0i128; n];
    let mut parent = vec![NONE; n];
    let mut mark = vec![0u32; n];
    for _ in 0..OPTIMIZE_MAX_ROUNDS {
        // Edges.
        for a in 0..nm {
            for b in 0..nm {
                weight[a * n + b] = NO_EDGE;
            }
            // a -> s: `a` keeps what it receives (one more); s -> a: `a` passes one on without
            // receiving (one fewer).
            weight[a * n + s] = w(2 * count[a] as i128 + 1, 0, 0, 0, 0);
            weight[s * n + a] = if count[a] > 0 { w(-(2 * count[a] as i128 - 1), 0, 0, 0, 0) } else { NO_EDGE };
        }
        for a in 0..nm {
            for (&(rs, kd, pv), g) in &groups[a] {
                let vo = match kd {
                    0 => a as u32,
                    1 => NONE,
                    o => o - 2,
                };
                let mis = |m: usize| i128::from(rs_mis[rs as usize * nm + m]);
                // (moved off an owner it suits, off its member's racks, moved off an owner it
                // does not suit) for member m holding it.
                // Then: not on its previous owner.
                let cost = |m: usize| {
                    let pr = i128::from(pv != NONE && pv != m as u32);
                    if vo == NONE || vo == m as u32 {
                        (0, mis(m), 0, pr)
                    } else if rack_first && rs_mis[rs as usize * nm + vo as usize] {
                        (0, mis(m), 1, pr)
                    } else {
                        (1, mis(m), 0, pr)
                    }
                };
                let ca = cost(a);
                for b in 0..nm {
                    if b == a {
                        continue;
                    }
                    let cb = cost(b);
                    let c = w(0, cb.0 - ca.0, cb.1 - ca.1, cb.2 - ca.2, cb.3 - ca.3);
                    if c < weight[a * n + b] {
                        if let Some(t) = topic_for(g, b as u32) {
                            weight[a * n + b] = c;
                            via[a * nm + b] = ((rs, kd, pv), t);
                        }
                    }
                }
            }
        }
        // Bellman-Ford from a virtual source (all distances 0); stop at the first cycle in the
        // predecessor graph (always negative).
        dist.iter_mut().for_each(|d| *d = 0);
        parent.iter_mut().for_each(|p| *p = NONE);
        let mut cycle_at = NONE;
        for _ in 0..n {
            let mut updated = false;
            for u in 0..n {
                let du = dist[u];
                for v in 0..n {
                    let c = weight[u * n + v];
                    if c != NO_EDGE && du + c < dist[v] {
                        dist[v] = du + c;
                        parent[v] = u as u32;
                        updated = true;
                    }
                }
            }
            if !updated {
                break;
            }
            // Look for a cycle among the predecessor links.
            mark.iter_mut().for_each(|m| *m = 0);
            for start in 0..n as u32 {
                if mark[start as usize] != 0 {
                    continue;
                }
                let mut x = start;
                while x != NONE && mark[x as usize] == 0 {
                    mark[x as usize] = start + 1;
                    x = parent[x as usize];
                }
                if x != NONE && mark[x as usize] == start + 1 {
                    cycle_at = x;
                    break;
                }
            }
            if cycle_at != NONE {
                break;
            }
        }
        if cycle_at == NONE {
            return;
        }
        // The cycle: parent[v] = u means an edge u -> v (u hands v one partition, or a size
        // change through `s`), so walk it backwards.
        let mut cyc = vec![cycle_at];
        let mut x = parent[cycle_at as usize];
        while x != cycle_at {
            cyc.push(x);
            x = parent[x as usize];
        }
        cyc.reverse();
        let edges: Vec<(usize, usize)> =
            (0..cyc.len()).map(|i| (cyc[i] as usize, cyc[(i + 1) % cyc.len()] as usize)).collect();
        // Apply it, and again while its groups last and it still pays (member-to-member costs
        // depend only on the groups; the size-change costs are recomputed).
        let mut moves: Vec<(u32, u32)> = Vec::with_capacity(edges.len());
        for _ in 0..target.len() {
            let mut total = 0i128;
            let mut available = true;
            for &(u, v) in &edges {
                total += if u == s {
                    w(-(2 * count[v] as i128 - 1), 0, 0, 0, 0)
                } else if v == s {
                    w(2 * count[u] as i128 + 1, 0, 0, 0, 0)
                } else {
                    let (key, t) = via[u * nm + v];
                    match groups[u].get(&key) {
                        Some(g) if g.contains_key(&t) => {}
                        Some(g) => match topic_for(g, v as u32) {
                            Some(t) => via[u * nm + v].1 = t,
                            None => available = false,
                        },
                        None => available = false,
                    }
                    weight[u * n + v]
                };
            }
            if !available || total >= 0 {
                break;
            }
            moves.clear();
            for &(u, v) in &edges {
                if u == s || v == s {
                    continue;
                }
                let (key, t) = via[u * nm + v];
                let g = groups[u].get_mut(&key).expect("group");
                let list = g.get_mut(&t).expect("topic");
                let p = list.pop().expect("partition");
                if list.is_empty() {
                    g.remove(&t);
                    if g.is_empty() {
                        groups[u].remove(&key);
                    }
                }
                moves.push((p, v as u32));
                count[u] -= 1;
                count[v] += 1;
            }
            for &(p, v) in &moves {
                target[p as usize] = v;
                add(&mut groups, p, v);
            }
        }
    }
}
