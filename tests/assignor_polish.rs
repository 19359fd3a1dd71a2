//! The sticky assignors' exact polish against brute force: on small random groups where it
//! applies (KIP-881 racks in use, or heterogeneous subscriptions), the result must be optimal
//! over every possible assignment for the documented order of priorities:
//! 1. the sum of squared member sizes,
//! 2. partitions off their member's racks,
//! 3. partitions moved away from a valid owner that has no rack or is on one of their racks,
//! 4. other partitions moved away from their valid owners.
//!
//! The one exception is the placement that keeps every valid claim, which the leader takes where
//! it is no worse on every criterion and better on one. For `cooperative-sticky` the end of the
//! rebalance counts: the round, and when it withholds partitions the follow-up rounds played to
//! the end (where each pending `to` must say it ends); such an end is held to Java's end rather
//! than to the first round's optimum.
//!
//! Against Java's end (the model of Java, `kcp_testkit::java_sticky_model`): where Java is better
//! on some criterion, ours must be better on an earlier one (follow-up rounds come last), or the
//! group is listed in `testdata/assignor/known-divergences.tsv`; and over the whole set ours take
//! no more follow-up rounds than Java's.

mod assignor_common;

use std::collections::BTreeMap;

use assignor_common::divergences::{Figures, Known, Verdict};
use assignor_common::parity::Tally;
use assignor_common::*;
use kafka_consumer_protocol::assignor::{builtin, ClusterMetadata, GroupMember, TopicInfo};
use kafka_consumer_protocol::{CooperativeStickyUserData, StickyUserData, Subscription, TopicPartitions};
use kcp_testkit::java_sticky_model::java_sticky_model;

/// A random group of 2-3 members over 1-2 topics with at most 6 partitions in all. With
/// `racks`, members may sit on r0/r1 (one at least does) and partitions on [r0], [r1] or both
/// (not all alike), so Java's rule turns rack awareness on; without, subscriptions differ.
fn random_group(rng: &mut Rng, racks: bool, cooperative: bool) -> Option<(ClusterMetadata, Vec<GroupMember>)> {
    let nt = 1 + rng.next(2) as usize;
    let mut metadata = ClusterMetadata::default();
    let mut names = Vec::new();
    let mut rack_sets: Vec<Vec<Vec<String>>> = Vec::new();
    for t in 0..nt {
        let n = 1 + rng.next(3) as i32;
        let name = format!("t{t}");
        let pr: Vec<Vec<String>> = (0..n)
            .map(|_| match rng.next(3) {
                0 => vec!["r0".to_string()],
                1 => vec!["r1".to_string()],
                _ => vec!["r0".to_string(), "r1".to_string()],
            })
            .collect();
        rack_sets.push(pr.clone());
        metadata
            .topics
            .insert(name.clone(), TopicInfo { partitions: n, partition_racks: if racks { pr } else { Vec::new() } });
        names.push(name);
    }
    let nm = 2 + rng.next(2) as usize;
    let subs: Vec<Vec<String>> = (0..nm)
        .map(|_| {
            let mut s: Vec<String> = names.iter().filter(|_| rng.next(3) > 0).cloned().collect();
            if s.is_empty() {
                s.push(names[rng.next(nt as u64) as usize].clone());
            }
            s
        })
        .collect();
    let member_racks: Vec<Option<String>> = (0..nm)
        .map(|_| if racks { [None, Some("r0"), Some("r1")][rng.next(3) as usize] } else { None })
        .map(|r| r.map(str::to_string))
        .collect();
    if racks {
        // Java's rule, over the subscribed topics' partitions: some member rack is a replica
        // rack, and not every partition is on every replica rack.
        let sets: Vec<&Vec<String>> = names
            .iter()
            .enumerate()
            .filter(|(_, t)| subs.iter().any(|s| s.contains(t)))
            .flat_map(|(i, _)| rack_sets[i].iter())
            .collect();
        let all: std::collections::BTreeSet<&String> = sets.iter().copied().flatten().collect();
        let every = sets.iter().all(|s| s.len() == all.len());
        if every || !member_racks.iter().flatten().any(|r| all.contains(r)) {
            return None;
        }
    } else if subs.windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    // Unique claims at generation 1: each partition owned by a random member or nobody.
    let mut owned: Vec<BTreeMap<String, Vec<i32>>> = vec![BTreeMap::new(); nm];
    for (t, info) in &metadata.topics {
        for p in 0..info.partitions {
            let who = rng.next(nm as u64 + 1) as usize;
            if who < nm {
                owned[who].entry(t.clone()).or_default().push(p);
            }
        }
    }
    let members = (0..nm)
        .map(|i| {
            let list: Vec<TopicPartitions> =
                owned[i].iter().map(|(t, ps)| TopicPartitions::new(t.as_str(), ps.clone())).collect();
            let mut subscription = Subscription::new(subs[i].clone());
            subscription.rack_id = member_racks[i].clone();
            if cooperative {
                subscription.owned_partitions = list;
                subscription.generation_id = 1;
                subscription.user_data = Some(CooperativeStickyUserData { generation: 1 }.encode());
            } else {
                let data = StickyUserData { previous_assignment: list, generation: Some(1) };
                subscription.user_data = Some(data.encode().unwrap().into());
            }
            GroupMember { member_id: format!("m{i}"), group_instance_id: None, subscription }
        })
        .collect();
    Some((metadata, members))
}

/// The lexicographic cost of `holder` (member index per partition, in `parts` order): squares,
/// mismatches, moves away from owners on the partition's rack (or without one), other moves.
fn cost(
    parts: &[(String, i32)],
    holder: &[usize],
    members: &[GroupMember],
    metadata: &ClusterMetadata,
    owner: &[Option<usize>],
) -> (usize, usize, usize, usize) {
    let rack = |m: usize| members[m].subscription.rack_id.as_deref();
    let mis = |m: usize, i: usize| {
        let (t, p) = &parts[i];
        let racks = &metadata.topics[t].partition_racks;
        rack(m).is_some_and(|r| racks.get(*p as usize).is_some_and(|rs| !rs.iter().any(|x| x == r)))
    };
    let mut sizes = vec![0usize; members.len()];
    let (mut kept, mut off, mut other) = (0, 0, 0);
    for (i, &m) in holder.iter().enumerate() {
        sizes[m] += 1;
        off += usize::from(mis(m, i));
        if let Some(o) = owner[i] {
            if o != m {
                if mis(o, i) {
                    other += 1;
                } else {
                    kept += 1;
                }
            }
        }
    }
    (sizes.iter().map(|s| s * s).sum(), off, kept, other)
}

/// Checks `cases` random groups; the groups where Java's end is better and that are neither by our
/// order nor listed in the known divergences.
/// Counts the groups by our order and the cooperative follow-up rounds on both sides in `tally`.
fn check(strategy: &str, racks: bool, cases: usize, seed: u64, known: &Known, tally: &mut Tally) -> Vec<String> {
    let cooperative = strategy == "cooperative-sticky";
    let mut rng = Rng(seed);
    let mut checked = 0;
    let mut failures = Vec::new();
    while checked < cases {
        let Some((metadata, members)) = random_group(&mut rng, racks, cooperative) else { continue };
        let case = checked;
        checked += 1;
        let out = builtin(strategy).unwrap().assign(&metadata, &members).unwrap();
        let subs = subscribed_sets(&metadata, &members);
        let index: BTreeMap<&String, usize> = members.iter().enumerate().map(|(i, m)| (&m.member_id, i)).collect();
        let parts: Vec<(String, i32)> = metadata
            .topics
            .iter()
            .filter(|(t, _)| subs.values().any(|s| s.contains(*t)))
            .flat_map(|(t, info)| (0..info.partitions).map(move |p| (t.clone(), p)))
            .collect();
        let valid = valid_claims(&metadata, &members, cooperative);
        let owner: Vec<Option<usize>> = parts.iter().map(|tp| valid.get(tp).map(|m| index[m])).collect();
        // Ours: where the rebalance ends. A cooperative round that withholds partitions names
        // in each pending `to` where it ends once the follow-up rounds are played (issue 27);
        // they are played here, each from the state the members rejoin with, and must agree.
        let mut end = out.clone();
        let mut current = members.clone();
        let mut follow_ups = 0;
        while !end.pending.is_empty() {
            follow_ups += 1;
            assert!(follow_ups <= 4, "{strategy}: no convergence after 4 follow-up rounds\n{metadata:?}\n{members:?}");
            current = next_round(&current, &end, 100 + follow_ups);
            end = builtin(strategy).unwrap().assign(&metadata, &current).unwrap();
        }
        let mut target: BTreeMap<(String, i32), usize> = BTreeMap::new();
        for (m, set) in sets(&end) {
            for tp in set {
                target.insert(tp, index[&m]);
            }
        }
        for pp in &out.pending {
            let to = pp.to.as_ref().expect("the look-ahead reaches the end of these small groups");
            assert_eq!(
                target[&(pp.topic.clone(), pp.partition)],
                index[to],
                "{strategy}: {}-{} pending to {to} ends elsewhere\n{metadata:?}\n{members:?}",
                pp.topic,
                pp.partition
            );
        }
        let ours: Vec<usize> = parts.iter().map(|tp| target[tp]).collect();
        let our_cost = cost(&parts, &ours, &members, &metadata, &owner);
        // Brute force over every assignment to subscribers.
        let eligible: Vec<Vec<usize>> = parts
            .iter()
            .map(|(t, _)| (0..members.len()).filter(|&m| subs[&members[m].member_id].contains(t)).collect())
            .collect();
        let mut pick = vec![0usize; parts.len()];
        let mut best = None;
        let mut best_holder = Vec::new();
        loop {
            let holder: Vec<usize> = pick.iter().enumerate().map(|(i, &k)| eligible[i][k]).collect();
            let c = cost(&parts, &holder, &members, &metadata, &owner);
            if best.is_none_or(|b| c < b) {
                best = Some(c);
                best_holder = holder;
            }
            let mut i = 0;
            while i < pick.len() {
                pick[i] += 1;
                if pick[i] < eligible[i].len() {
                    break;
                }
                pick[i] = 0;
                i += 1;
            }
            if i == pick.len() {
                break;
            }
        }
        let best = best.unwrap();
        // Every valid claim where it was: the other placement the leader may take (the rest
        // placed for balance, then racks), where it is no worse on every criterion.
        let keeps_every_claim = owner.iter().zip(&ours).all(|(o, &t)| o.is_none_or(|o| o == t));
        // A cooperative rebalance that needed follow-up rounds ends where those rounds decide
        // from their own state (the claims of this round are gone by then): it is held to Java's
        // end below rather than to this round's optimum.
        assert!(
            our_cost == best || keeps_every_claim || follow_ups > 0,
            "{strategy}: neither optimal ({best:?}, {best_holder:?}) nor every claim kept: {our_cost:?}\n{metadata:?}\n{members:?}"
        );
        // Java's end, as the model plays it: where it is better on some criterion, ours must be
        // better on an earlier one, or the group listed.
        if let Some(rounds) = java_sticky_model(&metadata, &members, cooperative) {
            let last = rounds.last().expect("one round at least");
            let held: BTreeMap<&(String, i32), usize> =
                last.iter().flat_map(|(m, l)| l.iter().map(|tp| (tp, index[m]))).collect();
            let java: Vec<usize> = parts.iter().map(|tp| held[tp]).collect();
            let figures = |c: (usize, usize, usize, usize), rounds: usize| Figures {
                balance: c.0,
                mismatches: c.1,
                suited_moves: c.2,
                other_moves: c.3,
                rounds,
            };
            let o = figures(our_cost, follow_ups as usize);
            let j = figures(cost(&parts, &java, &members, &metadata, &owner), rounds.len() - 1);
            if cooperative {
                tally.add_rounds(o.rounds, j.rounds);
            }
            let group = format!("{strategy}-{}-{case}", if racks { "racks" } else { "subscriptions" });
            match known.judge("assignor_polish", &group, strategy, &o, &j) {
                Verdict::NoWorse | Verdict::Listed => {}
                Verdict::ByOrder => tally.by_order += 1,
                Verdict::Unexplained(worse) => failures
                    .push(format!("assignor_polish\t{group}\t{strategy}\t{}\tours {o:?}, Java {j:?}", worse.join(","))),
            }
        }
    }
    failures
}

/// Every set, then the known divergences of this test: each listed group still diverges.
#[test]
fn polish_is_optimal_and_java_is_better_only_by_our_order() {
    let known = Known::load();
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    for (strategy, racks, seed) in [
        ("sticky", true, 0x9E37_79B9_7F4A_7C15),
        ("cooperative-sticky", true, 0xD1B5_4A32_D192_ED03),
        ("sticky", false, 0x2545_F491_4F6C_DD1D),
        ("cooperative-sticky", false, 0x94D0_49BB_1331_11EB),
    ] {
        let [ours_before, java_before] = tally.rounds_total;
        failures.extend(check(strategy, racks, 3000, seed, &known, &mut tally));
        if strategy == "cooperative-sticky" {
            let [ours, java] = tally.rounds_total;
            eprintln!(
                "assignor_polish: {strategy} (racks: {racks}) follow-up rounds in all: ours {}, Java {}",
                ours - ours_before,
                java - java_before
            );
        }
    }
    eprintln!("assignor_polish: Java (the model) better on some criterion by our order: {} groups", tally.by_order);
    // Follow-up rounds at most Java's over the set. Per group, one more only where the order
    // explains it or the group is listed: without racks, each of the listed groups takes a
    // partition from its owner for a lower sum of squares, which costs a round Java does not take.
    failures.extend(tally.rounds_at_most_javas().err());
    failures.extend(known.stale("assignor_polish").into_iter().map(|e| format!("stale: {e}")));
    assert!(
        failures.is_empty(),
        "{} groups where Java ends better, not by our order and not listed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
