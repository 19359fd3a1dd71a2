//! The heuristics: the constrained path (quotas, every member on the same topics) and the general
//! path (water-filling, then moves towards balance), each keeping valid claims first; and the
//! subscription bit sets both they and the solver test.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::claims::Claims;
use super::racks::Racks;
use super::target::Target;
use crate::assignor::common::{Topics, NONE};

/// Subscription bitmap over ranks.
pub(super) struct SubBits {
    pub(super) words: usize,
    pub(super) bits: Vec<u64>,
}

impl SubBits {
    pub(super) fn new(subs: &[&Vec<u32>], topics: usize) -> Self {
        let words = topics.div_ceil(64).max(1);
        let mut bits = vec![0u64; words * subs.len()];
        for (r, s) in subs.iter().enumerate() {
            if r > 0 && std::ptr::eq(*s, subs[r - 1]) {
                // A shared subscription list: same row as the previous member.
                bits.copy_within((r - 1) * words..r * words, r * words);
                continue;
            }
            for &t in s.iter() {
                bits[r * words + t as usize / 64] |= 1 << (t % 64);
            }
        }
        SubBits { words, bits }
    }

    #[inline]
    pub(super) fn has(&self, r: u32, t: u32) -> bool {
        self.bits[r as usize * self.words + t as usize / 64] & (1 << (t % 64)) != 0
    }

    /// How many members (ranks) it covers.
    pub(super) fn rows(&self) -> usize {
        self.bits.len() / self.words
    }
}

/// The shared sticky core: returns the target owner (rank) of each partition.
pub(super) fn sticky_target(topics: &Topics<'_>, subs: &[&Vec<u32>], claims: &Claims, racks: Option<&Racks>) -> Target {
    let nm = subs.len();
    let np = topics.total();
    let bits = SubBits::new(subs, topics.len());
    // Kept: a unique claim by a member still subscribed to the topic.
    let mut target = vec![NONE; np];
    for t in (0..topics.len() as u32).filter(|_| claims.any) {
        for p in topics.base[t as usize]..topics.base[t as usize + 1] {
            let o = claims.owner[p as usize];
            if o != NONE && !claims.tie[p as usize] && bits.has(o, t) {
                target[p as usize] = o;
            }
        }
    }
    let uniform = nm > 0 && subs.iter().all(|s| std::ptr::eq(*s, subs[0]) || *s == subs[0]);
    if uniform {
        if subs[0].len() == topics.len() {
            constrained(&mut target, nm, topics, racks);
        } else {
            // Every member subscribes to the same set, but not to every known topic: impossible,
            // since known topics are exactly the subscribed ones. Kept for robustness.
            general(&mut target, topics, subs, claims, racks);
        }
    } else {
        general(&mut target, topics, subs, claims, racks);
    }
    Target(target)
}

/// Builds per-rank CSR lists of the partitions in `target` (flat order).
pub(super) fn csr(target: &[u32], nm: usize) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; nm + 1];
    for &o in target {
        if o != NONE {
            start[o as usize + 1] += 1;
        }
    }
    for i in 0..nm {
        start[i + 1] += start[i];
    }
    let mut fill = start[..nm].to_vec();
    let mut flat = vec![0u32; start[nm] as usize];
    for (p, &o) in target.iter().enumerate() {
        if o != NONE {
            flat[fill[o as usize] as usize] = p as u32;
            fill[o as usize] += 1;
        }
    }
    (start, flat)
}

/// All members subscribe to every topic: quota-based assignment.
pub(super) fn constrained(target: &mut [u32], nm: usize, topics: &Topics<'_>, racks: Option<&Racks>) {
    let np = target.len();
    let min_q = (np / nm) as u32;
    let expected_max = (np % nm) as u32;
    let max_q = min_q + u32::from(expected_max > 0);
    let (start, flat) = csr(target, nm);
    let mut count = vec![0u32; nm];
    let mut num_max = 0u32;
    let mut under_min: Vec<u32> = Vec::new();
    let mut at_min: Vec<u32> = Vec::new();
    let mut keep_scratch: Vec<u32> = Vec::new();
    let mut released: Vec<u32> = Vec::new();
    for r in 0..nm {
        let mut owned = &flat[start[r] as usize..start[r + 1] as usize];
        if let Some(racks) = racks {
            // Java: owned partitions off the member's rack are given up (they may come back).
            released.clear();
            released.extend(owned.iter().copied().filter(|&p| !racks.mismatch(r as u32, p)));
            if released.len() < owned.len() {
                for &p in owned {
                    if racks.mismatch(r as u32, p) {
                        target[p as usize] = NONE;
                    }
                }
                owned = &released;
            }
        }
        let n = owned.len() as u32;
        let keep = if n < min_q {
            under_min.push(r as u32);
            n
        } else if n >= max_q && num_max < expected_max {
            num_max += 1;
            max_q
        } else {
            at_min.push(r as u32);
            min_q
        };
        if keep < n {
            // Keep the lowest (partition number, topic) ones, as Java; release the rest.
            keep_scratch.clear();
            keep_scratch.extend_from_slice(owned);
            keep_scratch.sort_unstable_by_key(|&p| {
                let t = topics.topic_of(p);
                (p - topics.base[t as usize], t)
            });
            for &p in &keep_scratch[keep as usize..] {
                target[p as usize] = NONE;
            }
        }
        count[r] = keep;
    }
    if let Some(racks) = racks {
        // Rack-matched pass (Java `assignRackAwareRoundRobin`): each unassigned partition goes to
        // a member on one of its racks below the minimum quota, else at the minimum while
        // maximum slots remain. Then the lists are rebuilt from the counts, in rank order.
        let nr = racks.rstart.len() - 1;
        let mut cursor = vec![0usize; nr];
        // Room below the minimum quota per rack: each partition goes to its rack with the most.
        let mut slack = vec![0u64; nr];
        for (m, &r) in racks.member.iter().enumerate() {
            if r != NONE {
                slack[r as usize] += u64::from(min_q.saturating_sub(count[m]));
            }
        }
        let mut full_min = vec![false; nr];
        // Partitions with the fewest members on their racks first (Java sorts them so).
        let mut free: Vec<(u32, u32)> = (0..np as u32)
            .filter(|&p| target[p as usize] == NONE)
            .map(|p| (racks.of_partition(p).iter().map(|&r| racks.on_rack(r).len() as u32).sum(), p))
            .collect();
        free.sort_unstable();
        for &(_, p) in &free {
            let mut pick = NONE;
            let best = racks.of_partition(p).iter().copied().filter(|&r| slack[r as usize] > 0).fold(
                None,
                |b: Option<u32>, r| match b {
                    Some(b) if slack[b as usize] >= slack[r as usize] => Some(b),
                    _ => Some(r),
                },
            );
            if let Some(r) = best {
                let list = racks.on_rack(r);
                let c = &mut cursor[r as usize];
                for _ in 0..list.len() {
                    let m = list[*c % list.len()];
                    *c = (*c + 1) % list.len();
                    if count[m as usize] < min_q {
                        pick = m;
                        slack[r as usize] -= 1;
                        break;
                    }
                }
            }
            if pick == NONE && num_max < expected_max {
                'racks: for &r in racks.of_partition(p) {
                    if full_min[r as usize] {
                        continue;
                    }
                    for &m in racks.on_rack(r) {
                        if count[m as usize] == min_q && min_q < max_q {
                            pick = m;
                            num_max += 1;
                            break 'racks;
                        }
                    }
                    full_min[r as usize] = true;
                }
            }
            if pick != NONE {
                target[p as usize] = pick;
                count[pick as usize] += 1;
            }
        }
        under_min.clear();
        at_min.clear();
        for r in 0..nm as u32 {
            if count[r as usize] < min_q {
                under_min.push(r);
            } else if count[r as usize] == min_q {
                at_min.push(r);
            }
        }
    }
    if num_max == expected_max {
        // The maximum slots are all taken: nobody at the minimum may grow.
        at_min.clear();
    }
    // Unassigned partitions in flat order; a forward cursor (assignments only fill slots it has
    // passed).
    let mut cursor = 0usize;
    let mut next_free = |target: &[u32]| -> Option<u32> {
        while cursor < np && target[cursor] != NONE {
            cursor += 1;
        }
        (cursor < np).then(|| {
            cursor += 1;
            (cursor - 1) as u32
        })
    };
    // Round-robin over members below the minimum quota.
    let mut current = under_min;
    let mut next: Vec<u32> = Vec::with_capacity(current.len());
    'fill: while !current.is_empty() {
        next.clear();
        for (i, &r) in current.iter().enumerate() {
            let Some(p) = next_free(target) else {
                next.extend_from_slice(&current[i..]);
                break 'fill;
            };
            target[p as usize] = r;
            count[r as usize] += 1;
            if count[r as usize] < min_q {
                next.push(r);
            } else {
                at_min.push(r);
            }
        }
        std::mem::swap(&mut current, &mut next);
    }
    // Then one more each to members at the minimum, until `P % C` members hold the maximum.
    let mut candidates = at_min.into_iter();
    while let Some(p) = next_free(target) {
        // Fallback (never expected): the least-loaded member.
        let r = candidates
            .by_ref()
            .find(|&r| count[r as usize] == min_q)
            .unwrap_or_else(|| (0..nm as u32).min_by_key(|&r| (count[r as usize], r)).unwrap_or(0));
        target[p as usize] = r;
        count[r as usize] += 1;
    }
}

/// Sorts `members` by (count, rank) into `out`, with a counting sort when counts are close.
pub(super) fn sort_by_count(members: &[u32], count: &[u32], out: &mut Vec<u32>, buckets: &mut Vec<u32>) {
    out.clear();
    if members.is_empty() {
        return;
    }
    let (mut lo, mut hi) = (u32::MAX, 0);
    for &m in members {
        lo = lo.min(count[m as usize]);
        hi = hi.max(count[m as usize]);
    }
    let span = (hi - lo) as usize + 1;
    if span <= members.len() * 2 + 16 {
        buckets.clear();
        buckets.resize(span + 1, 0);
        for &m in members {
            buckets[(count[m as usize] - lo) as usize + 1] += 1;
        }
        for i in 0..span {
            buckets[i + 1] += buckets[i];
        }
        out.resize(members.len(), 0);
        for &m in members {
            let b = (count[m as usize] - lo) as usize;
            out[buckets[b] as usize] = m;
            buckets[b] += 1;
        }
    } else {
        out.extend_from_slice(members);
        out.sort_unstable_by_key(|&m| (count[m as usize], m));
    }
}

/// Heterogeneous subscriptions: keep, water-fill, then move until balanced.
pub(super) fn general(
    target: &mut [u32],
    topics: &Topics<'_>,
    subs: &[&Vec<u32>],
    claims: &Claims,
    racks: Option<&Racks>,
) {
    #![allow(clippy::needless_range_loop)]
    let nm = subs.len();
    let nt = topics.len();
    // Potential members per topic (CSR, rank order).
    let mut tstart = vec![0u32; nt + 1];
    for s in subs {
        for &t in s.iter() {
            tstart[t as usize + 1] += 1;
        }
    }
    for i in 0..nt {
        tstart[i + 1] += tstart[i];
    }
    let mut fill = tstart[..nt].to_vec();
    let mut tmembers = vec![0u32; tstart[nt] as usize];
    for (r, s) in subs.iter().enumerate() {
        for &t in s.iter() {
            tmembers[fill[t as usize] as usize] = r as u32;
            fill[t as usize] += 1;
        }
    }
    let eligible = |t: usize| &tmembers[tstart[t] as usize..tstart[t + 1] as usize];
    let mut count = vec![0u32; nm];
    for &o in target.iter() {
        if o != NONE {
            count[o as usize] += 1;
        }
    }
    if let Some(racks) = racks {
        release_off_rack(target, topics, &tstart, &tmembers, racks, &mut count);
    }
    let mut order: Vec<u32> = (0..nt as u32).collect();
    order.sort_unstable_by_key(|&t| (tstart[t as usize + 1] - tstart[t as usize], t));

    // Water-fill the unassigned partitions of each topic.
    let mut sorted = Vec::new();
    let mut buckets = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    for &t in &order {
        let t = t as usize;
        free.clear();
        free.extend((topics.base[t]..topics.base[t + 1]).filter(|&p| target[p as usize] == NONE));
        let e = eligible(t);
        if free.is_empty() || e.is_empty() {
            continue;
        }
        sort_by_count(e, &count, &mut sorted, &mut buckets);
        let k = free.len() as u64;
        // Largest i such that raising sorted[..i] to count[sorted[i-1]] costs <= k.
        let mut prefix = 0u64;
        let mut i = 0usize;
        while i < sorted.len() {
            let c = u64::from(count[sorted[i] as usize]);
            let cost = (i as u64 + 1) * c - (prefix + c);
            if cost > k {
                break;
            }
            prefix += c;
            i += 1;
        }
        let total = k + prefix;
        let level = total / i as u64;
        let extra = (total % i as u64) as usize;
        let mut next_free = free.iter();
        for (j, &m) in sorted[..i].iter().enumerate() {
            let goal = level + u64::from(j < extra);
            while u64::from(count[m as usize]) < goal {
                let Some(&p) = next_free.next() else { break };
                target[p as usize] = m;
                count[m as usize] += 1;
            }
        }
    }

    // Balance: move partitions from a holder to an eligible member with two or more fewer.
    let mut pairs: Vec<(u32, bool, u32)> = Vec::new();
    loop {
        let mut moved = false;
        for &t in &order {
            let t = t as usize;
            let e = eligible(t);
            let range = topics.base[t]..topics.base[t + 1];
            let Some(min_e) = e.iter().map(|&m| count[m as usize]).min() else { continue };
            let max_h = range.clone().map(|p| count[target[p as usize] as usize]).max().unwrap_or(0);
            if max_h < min_e + 2 {
                continue;
            }
            // Holder lists: previously-owned partitions first, so new ones move first.
            pairs.clear();
            pairs.extend(range.map(|p| {
                let h = target[p as usize];
                (h, claims.owner[p as usize] != h, p)
            }));
            pairs.sort_unstable();
            let mut holder_heap: BinaryHeap<(u32, u32, u32, u32)> = BinaryHeap::new(); // (count, rank, lo, hi)
            let mut i = 0;
            while i < pairs.len() {
                let h = pairs[i].0;
                let j = i + pairs[i..].partition_point(|x| x.0 == h);
                holder_heap.push((count[h as usize], h, i as u32, j as u32));
                i = j;
            }
            let mut elig_heap: BinaryHeap<Reverse<(u32, u32)>> =
                e.iter().map(|&m| Reverse((count[m as usize], m))).collect();
            while let Some((c, h, lo, hi)) = holder_heap.pop() {
                if c != count[h as usize] || lo == hi {
                    if lo < hi {
                        holder_heap.push((count[h as usize], h, lo, hi));
                    }
                    continue;
                }
                let b = loop {
                    match elig_heap.peek() {
                        Some(&Reverse((cb, b))) if cb != count[b as usize] => {
                            elig_heap.pop();
                            elig_heap.push(Reverse((count[b as usize], b)));
                        }
                        Some(&Reverse((_, b))) => break Some(b),
                        None => break None,
                    }
                };
                let Some(b) = b else { break };
                if c < count[b as usize] + 2 {
                    break;
                }
                let p = pairs[hi as usize - 1].2;
                target[p as usize] = b;
                count[h as usize] -= 1;
                count[b as usize] += 1;
                moved = true;
                holder_heap.push((count[h as usize], h, lo, hi - 1));
                elig_heap.push(Reverse((count[h as usize], h)));
                elig_heap.push(Reverse((count[b as usize], b)));
            }
        }
        if !moved {
            break;
        }
    }
    augment(target, topics, &tstart, &tmembers, &mut count, claims);
    // One eligible-member entry per (member, topic): as large as the output for big uniform
    // groups, and not needed any more.
    drop(tmembers);
    restore(target, topics, subs, &mut count, claims);
}

/// Java's general path gives up owned partitions off their owner's rack. We do so only where a
/// member on one of their replica racks subscribes to the topic (elsewhere the move could not
/// gain anything); the water-fill and the rack passes then place them.
pub(super) fn release_off_rack(
    target: &mut [u32],
    topics: &Topics<'_>,
    tstart: &[u32],
    tmembers: &[u32],
    racks: &Racks,
    count: &mut [u32],
) {
    let nr = racks.rstart.len() - 1;
    // Whether some member on rack r subscribes to topic t.
    let mut topic_rack = vec![false; topics.len() * nr];
    for t in 0..topics.len() {
        for &m in &tmembers[tstart[t] as usize..tstart[t + 1] as usize] {
            let r = racks.member[m as usize];
            if r != NONE {
                topic_rack[t * nr + r as usize] = true;
            }
        }
    }
    for t in 0..topics.len() {
        for p in topics.base[t]..topics.base[t + 1] {
            let o = target[p as usize];
            if o != NONE
                && racks.mismatch(o, p)
                && racks.of_partition(p).iter().any(|&r| topic_rack[t * nr + r as usize])
            {
                target[p as usize] = NONE;
                count[o as usize] -= 1;
            }
        }
    }
}

/// Gives partitions back to their valid owners where that keeps the multiset of member sizes:
/// a direct move when the owner holds fewer, or a swap against a partition the owner did not own
/// when both hold the same number. Each step lowers the number of moved partitions.
pub(super) fn restore(target: &mut [u32], topics: &Topics<'_>, subs: &[&Vec<u32>], count: &mut [u32], claims: &Claims) {
    if !claims.any {
        // Nobody claims anything: nothing to give back.
        return;
    }
    let nm = count.len();
    let bits = SubBits::new(subs, topics.len());
    let with_prev = !claims.prev.is_empty();
    // The valid owner, else the previous owner still subscribed (Java's `prevAssignment`).
    let valid_owner = |p: usize, t: u32| {
        let o = claims.owner[p];
        if o != NONE && !claims.tie[p] && bits.has(o, t) {
            Some(o)
        } else if with_prev {
            claims.prev_of(p).filter(|&q| bits.has(q, t))
        } else {
            None
        }
    };
    loop {
        let mut changed = false;
        let (start, flat) = csr(target, nm);
        let mut cursor = start[..nm].to_vec();
        for t in 0..topics.len() as u32 {
            for p in topics.base[t as usize]..topics.base[t as usize + 1] {
                let h = target[p as usize];
                let Some(o) = valid_owner(p as usize, t) else { continue };
                if o == h || h == NONE {
                    continue;
                }
                if count[o as usize] < count[h as usize] {
                    target[p as usize] = o;
                    count[o as usize] += 1;
                    count[h as usize] -= 1;
                    changed = true;
                } else if count[o as usize] == count[h as usize] {
                    // Swap: `o` hands `h` a partition it does not validly own and `h` may take.
                    let list = &flat[start[o as usize] as usize..start[o as usize + 1] as usize];
                    let c = &mut cursor[o as usize];
                    while (*c as usize) < start[o as usize + 1] as usize {
                        let q = list[(*c - start[o as usize]) as usize];
                        *c += 1;
                        if target[q as usize] != o {
                            continue;
                        }
                        let tq = topics.topic_of(q);
                        if valid_owner(q as usize, tq) == Some(o) || !bits.has(h, tq) {
                            continue;
                        }
                        target[q as usize] = h;
                        target[p as usize] = o;
                        changed = true;
                        break;
                    }
                }
            }
        }
        if !changed {
            return;
        }
    }
}

/// Moves along chains until no member at some level `L` can pass a partition, through members
/// that can each take one of the previous member's topics, to a member at `L - 2` or below. At
/// that point no member count can be lowered without raising another above it: the counts are
/// as even as the subscriptions allow. Each chain lowers the sum of squared sizes, so this
/// terminates. Topic-level BFS keeps each search linear.
pub(super) fn augment(
    target: &mut [u32],
    topics: &Topics<'_>,
    tstart: &[u32],
    tmembers: &[u32],
    count: &mut [u32],
    claims: &Claims,
) {
    let nm = count.len();
    let nt = topics.len();
    let eligible = |t: usize| &tmembers[tstart[t] as usize..tstart[t + 1] as usize];
    let mut hstart = vec![0u32; nm + 1];
    let mut held: Vec<u32> = Vec::new();
    let mut visited = vec![false; nm];
    let mut topic_done = vec![false; nt];
    let mut parent: Vec<(u32, u32)> = vec![(NONE, NONE); nm];
    let mut queue: std::collections::VecDeque<u32> = std::collections::VecDeque::new();
    loop {
        let (lo, hi) = count.iter().fold((u32::MAX, 0), |(l, h), &c| (l.min(c), h.max(c)));
        if nm == 0 || hi <= lo + 1 {
            return;
        }
        // Topics held per member (CSR).
        hstart.iter_mut().for_each(|x| *x = 0);
        let mut last = vec![NONE; nm];
        for t in 0..nt {
            for p in topics.base[t]..topics.base[t + 1] {
                let h = target[p as usize];
                if h != NONE && last[h as usize] != t as u32 {
                    last[h as usize] = t as u32;
                    hstart[h as usize + 1] += 1;
                }
            }
        }
        for i in 0..nm {
            hstart[i + 1] += hstart[i];
        }
        held.clear();
        held.resize(hstart[nm] as usize, 0);
        let mut fill = hstart[..nm].to_vec();
        last.iter_mut().for_each(|x| *x = NONE);
        for t in 0..nt {
            for p in topics.base[t]..topics.base[t + 1] {
                let h = target[p as usize];
                if h != NONE && last[h as usize] != t as u32 {
                    last[h as usize] = t as u32;
                    held[fill[h as usize] as usize] = t as u32;
                    fill[h as usize] += 1;
                }
            }
        }
        let mut found = NONE;
        for level in (lo + 2..=hi).rev() {
            visited.iter_mut().for_each(|v| *v = false);
            topic_done.iter_mut().for_each(|v| *v = false);
            queue.clear();
            for m in 0..nm {
                if count[m] == level {
                    visited[m] = true;
                    parent[m] = (NONE, NONE);
                    queue.push_back(m as u32);
                }
            }
            'bfs: while let Some(x) = queue.pop_front() {
                for &t in &held[hstart[x as usize] as usize..hstart[x as usize + 1] as usize] {
                    if topic_done[t as usize] {
                        continue;
                    }
                    topic_done[t as usize] = true;
                    for &y in eligible(t as usize) {
                        if visited[y as usize] {
                            continue;
                        }
                        visited[y as usize] = true;
                        parent[y as usize] = (x, t);
                        if count[y as usize] + 2 <= level {
                            found = y;
                            break 'bfs;
                        }
                        queue.push_back(y);
                    }
                }
            }
            if found != NONE {
                break;
            }
        }
        if found == NONE {
            return;
        }
        // Apply the chain from its end: each member passes one partition of the edge's topic.
        let mut y = found;
        count[y as usize] += 1;
        while parent[y as usize].0 != NONE {
            let (x, t) = parent[y as usize];
            let range = topics.base[t as usize]..topics.base[t as usize + 1];
            let pick = range
                .clone()
                .rev()
                .find(|&p| target[p as usize] == x && claims.owner[p as usize] != x)
                .or_else(|| range.rev().find(|&p| target[p as usize] == x));
            if let Some(p) = pick {
                target[p as usize] = y;
            }
            y = x;
        }
        count[y as usize] -= 1;
    }
}
