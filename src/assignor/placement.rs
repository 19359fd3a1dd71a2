//! The best placement of the partitions nobody keeps, with every kept partition left where it
//! is: lexicographically the most even sizes (sum of squared member sizes), then the fewest rack
//! mismatches. The sticky assignors use it as a candidate next to their own target: in a
//! cooperative follow-up round the withheld partitions are exactly the unowned ones, and this
//! completes the hand-over without moving anything else.
//!
//! Partitions and members are grouped into classes whose members are interchangeable
//! (partitions: topic and replica racks; members: subscription and rack), so the problem is a
//! small transportation problem with a convex cost per member class, solved exactly by
//! successive shortest paths. A member class receives units in water-filling order (always on
//! its smallest member, lowest index first), so its cost depends only on how many it receives,
//! and the marginal cost of its next unit never falls.

use std::collections::VecDeque;

/// One placement problem over classes.
pub(super) struct Problem {
    /// Units to place per partition class.
    pub(super) supply: Vec<u32>,
    /// Per member class, its members' current sizes (in the order the answer uses).
    pub(super) sizes: Vec<Vec<u32>>,
    /// Allowed `(partition class, member class, mismatch)`: the member class subscribes to the
    /// partition class's topic; `mismatch` is whether its members' rack holds no replica.
    pub(super) arcs: Vec<(u32, u32, bool)>,
}

/// The optimal placement: units per arc (same order as [`Problem::arcs`]), and per member
/// class how many each of its members receives.
pub(super) struct Placement {
    pub(super) flow: Vec<u32>,
    pub(super) added: Vec<Vec<u32>>,
}

/// Water-filling state of one member class: every member at or below `level` has been raised
/// to it, and the first `extra` of them (by index) one more.
struct Fill {
    /// Member indices sorted by (size, index), and their sizes in that order.
    order: Vec<u32>,
    sorted: Vec<u32>,
    /// How many of `order` start at or below `level`.
    at_or_below: usize,
    level: u64,
    extra: usize,
}

impl Fill {
    fn new(sizes: &[u32]) -> Option<Fill> {
        let mut order: Vec<u32> = (0..sizes.len() as u32).collect();
        order.sort_by_key(|&i| (sizes[i as usize], i));
        let sorted: Vec<u32> = order.iter().map(|&i| sizes[i as usize]).collect();
        let level = u64::from(*sorted.first()?);
        let at_or_below = sorted.iter().take_while(|&&s| u64::from(s) == level).count();
        Some(Fill { order, sorted, at_or_below, level, extra: 0 })
    }

    /// Units the class takes at its current marginal cost.
    fn run(&self) -> usize {
        self.at_or_below - self.extra
    }

    /// The rise in the sum of squares from the next unit.
    fn marginal(&self) -> u64 {
        2 * self.level + 1
    }

    fn take(&mut self, units: usize) {
        self.extra += units;
        if self.extra == self.at_or_below {
            self.level += 1;
            self.extra = 0;
            while self.sorted.get(self.at_or_below).is_some_and(|&s| u64::from(s) == self.level) {
                self.at_or_below += 1;
            }
        }
    }

    /// Units each member (by index) received.
    fn added(&self) -> Vec<u32> {
        let mut added = vec![0u32; self.order.len()];
        for (&i, &s) in self.order.iter().zip(&self.sorted).take(self.at_or_below) {
            added[i as usize] = (self.level - u64::from(s)) as u32;
        }
        // At the current level, members take their extra unit in index order.
        let mut raised: Vec<u32> = self.order[..self.at_or_below].to_vec();
        raised.sort_unstable();
        for &i in raised.iter().take(self.extra) {
            added[i as usize] += 1;
        }
        added
    }
}

/// Solves `problem`; `None` when it needs more than `budget` arc relaxations (the caller then
/// does without the candidate) or a partition class has no arc.
pub(super) fn solve(problem: &Problem, mut budget: u64) -> Option<Placement> {
    let (np, nm) = (problem.supply.len(), problem.sizes.len());
    let total: u64 = problem.supply.iter().map(|&s| u64::from(s)).sum();
    // Mismatches add up to at most `total`: a balance unit outweighs all of them.
    let weight = i64::try_from(total + 1).ok()?;
    let mut out_of_pc: Vec<Vec<u32>> = vec![Vec::new(); np];
    let mut into_mc: Vec<Vec<u32>> = vec![Vec::new(); nm];
    for (a, &(pc, mc, _)) in problem.arcs.iter().enumerate() {
        out_of_pc[pc as usize].push(a as u32);
        into_mc[mc as usize].push(a as u32);
    }
    if problem.supply.iter().zip(&out_of_pc).any(|(&s, arcs)| s > 0 && arcs.is_empty()) {
        return None;
    }
    let mut fills: Vec<Option<Fill>> = problem.sizes.iter().map(|s| Fill::new(s)).collect();
    let mut left = problem.supply.clone();
    let mut flow = vec![0u32; problem.arcs.len()];
    let cost = |a: u32| i64::from(problem.arcs[a as usize].2);
    // Nodes: partition classes 0..np, member classes np..np+nm.
    let n = np + nm;
    let mut dist = vec![i64::MAX; n];
    // The arc a node was reached by (into a member class: forwards; into a partition class:
    // backwards, along an arc with flow).
    const NO_ARC: u32 = u32::MAX;
    let mut via = vec![NO_ARC; n];
    let mut queued = vec![false; n];
    let mut queue = VecDeque::new();
    let mut path: Vec<u32> = Vec::new();
    let mut remaining = total;
    while remaining > 0 {
        dist.fill(i64::MAX);
        via.fill(NO_ARC);
        for pc in 0..np {
            if left[pc] > 0 {
                dist[pc] = 0;
                queued[pc] = true;
                queue.push_back(pc);
            }
        }
        // Shortest paths with negative backward arcs (no negative cycle: the flow stays
        // optimal for what it has placed).
        while let Some(u) = queue.pop_front() {
            queued[u] = false;
            let du = dist[u];
            let arcs = if u < np { &out_of_pc[u] } else { &into_mc[u - np] };
            budget = budget.checked_sub(arcs.len() as u64 + 1)?;
            for &a in arcs {
                let (pc, mc, _) = problem.arcs[a as usize];
                let (v, d) = if u < np {
                    (np + mc as usize, du + cost(a))
                } else if flow[a as usize] > 0 {
                    (pc as usize, du - cost(a))
                } else {
                    continue;
                };
                if d < dist[v] {
                    dist[v] = d;
                    via[v] = a;
                    if !queued[v] {
                        queued[v] = true;
                        queue.push_back(v);
                    }
                }
            }
        }
        // The cheapest member class to end in, lowest index on ties.
        let mut best: Option<(i64, usize)> = None;
        for mc in 0..nm {
            let (Some(fill), d) = (&fills[mc], dist[np + mc]) else { continue };
            if d == i64::MAX {
                continue;
            }
            let total = d + weight * i64::try_from(fill.marginal()).ok()?;
            if best.is_none_or(|(b, _)| total < b) {
                best = Some((total, mc));
            }
        }
        let (_, end) = best?;
        // Back to the start (a partition class with supply, reached from the source): a path
        // visits each node once, so `n` arcs at most.
        path.clear();
        let mut node = np + end;
        while via[node] != NO_ARC && path.len() < n {
            let a = via[node];
            path.push(a);
            let (pc, mc, _) = problem.arcs[a as usize];
            node = if node >= np { pc as usize } else { np + mc as usize };
        }
        if via[node] != NO_ARC || node >= np {
            return None;
        }
        let start = node;
        // What the path carries: the class's run at its marginal, the start's supply, and the
        // flow on every backward arc (those entering a partition class).
        let backwards = path.iter().skip(1).step_by(2);
        let units = backwards
            .map(|&a| u64::from(flow[a as usize]))
            .fold(u64::from(left[start]).min(fills[end].as_ref()?.run() as u64), u64::min)
            .min(remaining);
        if units == 0 {
            return None;
        }
        let units32 = units as u32;
        for (i, &a) in path.iter().enumerate() {
            // The path alternates, from the end: forwards (into a member class), backwards, ...
            if i % 2 == 0 {
                flow[a as usize] += units32;
            } else {
                flow[a as usize] -= units32;
            }
        }
        left[start] -= units32;
        fills[end].as_mut()?.take(units as usize);
        remaining -= units;
    }
    let added = fills.iter().map(|f| f.as_ref().map_or_else(Vec::new, Fill::added)).collect();
    Some(Placement { flow, added })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (sum of squared sizes, mismatches) of a placement.
    fn cost(problem: &Problem, placed: &Placement) -> (u64, u64) {
        let mut squares = 0;
        for (sizes, added) in problem.sizes.iter().zip(&placed.added) {
            for (s, a) in sizes.iter().zip(added) {
                squares += u64::from(s + a).pow(2);
            }
        }
        let mismatches = problem.arcs.iter().zip(&placed.flow).map(|(a, &f)| u64::from(a.2) * u64::from(f)).sum();
        (squares, mismatches)
    }

    /// The best (squares, mismatches) by trying every member for every unit.
    fn brute_force(problem: &Problem) -> (u64, u64) {
        let units: Vec<u32> =
            problem.supply.iter().enumerate().flat_map(|(pc, &n)| (0..n).map(move |_| pc as u32)).collect();
        let mut sizes: Vec<Vec<u32>> = problem.sizes.clone();
        let mut best = (u64::MAX, u64::MAX);
        fn go(i: usize, units: &[u32], problem: &Problem, sizes: &mut Vec<Vec<u32>>, mis: u64, best: &mut (u64, u64)) {
            if i == units.len() {
                let squares = sizes.iter().flatten().map(|&s| u64::from(s).pow(2)).sum();
                *best = (*best).min((squares, mis));
                return;
            }
            for &(pc, mc, m) in &problem.arcs {
                if pc != units[i] {
                    continue;
                }
                for k in 0..sizes[mc as usize].len() {
                    sizes[mc as usize][k] += 1;
                    go(i + 1, units, problem, sizes, mis + u64::from(m), best);
                    sizes[mc as usize][k] -= 1;
                }
            }
        }
        go(0, &units, problem, &mut sizes, 0, &mut best);
        best
    }

    #[test]
    fn the_placement_is_lexicographically_optimal_on_small_problems() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut checked = 0;
        for _ in 0..400 {
            let (np, nm) = (1 + next(3) as usize, 1 + next(3) as usize);
            let supply: Vec<u32> = (0..np).map(|_| next(3) as u32).collect();
            let sizes: Vec<Vec<u32>> = (0..nm).map(|_| (0..1 + next(2)).map(|_| next(4) as u32).collect()).collect();
            let mut arcs = Vec::new();
            for pc in 0..np as u32 {
                for mc in 0..nm as u32 {
                    if next(3) > 0 || mc == pc % nm as u32 {
                        arcs.push((pc, mc, next(2) == 0));
                    }
                }
            }
            let problem = Problem { supply, sizes, arcs };
            let placed = solve(&problem, 1 << 20).expect("every class has an arc");
            // Every unit placed, and the members' additions match the flow into their class.
            for (pc, &n) in problem.supply.iter().enumerate() {
                let out: u32 =
                    problem.arcs.iter().zip(&placed.flow).filter(|(a, _)| a.0 as usize == pc).map(|(_, f)| f).sum();
                assert_eq!(out, n);
            }
            for (mc, added) in placed.added.iter().enumerate() {
                let into: u32 =
                    problem.arcs.iter().zip(&placed.flow).filter(|(a, _)| a.1 as usize == mc).map(|(_, f)| f).sum();
                assert_eq!(added.iter().sum::<u32>(), into);
            }
            assert_eq!(
                cost(&problem, &placed),
                brute_force(&problem),
                "{:?} {:?} {:?}",
                problem.supply,
                problem.sizes,
                problem.arcs
            );
            checked += 1;
        }
        assert_eq!(checked, 400);
    }

    #[test]
    fn a_class_without_members_it_may_go_to_has_no_placement() {
        let problem = Problem { supply: vec![1], sizes: vec![vec![0]], arcs: vec![] };
        assert!(solve(&problem, 1 << 10).is_none());
    }

    #[test]
    fn the_budget_bounds_the_work() {
        let problem = Problem { supply: vec![50], sizes: vec![vec![0; 10]], arcs: vec![(0, 0, false)] };
        assert!(solve(&problem, 1 << 16).is_some());
        assert!(solve(&problem, 2).is_none());
    }

    #[test]
    fn members_of_a_class_are_filled_smallest_first_then_in_index_order() {
        let problem = Problem { supply: vec![4], sizes: vec![vec![3, 1, 1, 5]], arcs: vec![(0, 0, false)] };
        let placed = solve(&problem, 1 << 10).unwrap();
        // 1,1 -> 3,3 takes four units: none left for the member at 3.
        assert_eq!(placed.added, vec![vec![0, 2, 2, 0]]);
        let problem = Problem { supply: vec![3], sizes: vec![vec![2, 2, 2]], arcs: vec![(0, 0, false)] };
        assert_eq!(solve(&problem, 1 << 10).unwrap().added, vec![vec![1, 1, 1]]);
        let problem = Problem { supply: vec![2], sizes: vec![vec![2, 2, 2]], arcs: vec![(0, 0, false)] };
        assert_eq!(solve(&problem, 1 << 10).unwrap().added, vec![vec![1, 1, 0]]);
    }
}
