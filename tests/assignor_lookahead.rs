//! `cooperative-sticky` over whole rebalances, on seeded random rack-aware groups, against the
//! model of Apache Kafka's own assignor (`java_sticky_model`, which equals Java 3.9.1 round for
//! round on 1,404 of the 1,413 committed parity runs; see `assignor_java_model.rs`).
//!
//! Each group is a reassignment: members of an earlier cooperative round (a random subset) own
//! what it gave them, the others join, and some members change racks. Ours is played round by
//! round until nothing is withheld (members rejoin with what they were given), and its end is
//! compared with where the model of Java ends on the four parity measures: the sum of squared
//! member sizes, rack mismatches, partitions moved away from their valid owners, and follow-up
//! rounds.
//!
//! Where Java ends better on some criterion, ours must be better on an earlier criterion of the
//! objective's order (follow-up rounds come last), or the group is listed with its
//! reason in `testdata/assignor/known-divergences.tsv` (`assignor_common::divergences`). Of these
//! 15,000 groups, 1,784 are better for Java on a later criterion only; 238 are listed: in 232
//! ours ends with fewer rack mismatches at the cost of moves and a follow-up round that Java does
//! not take (issue 38's order), in 6 ours reaches a lower sum of squares, which takes partitions
//! from owners on their racks and a follow-up round. Over the set, ours take no more follow-up
//! rounds than Java's (11,145 against 12,016) and move fewer partitions (71,743 against 74,054);
//! the test fails otherwise. Every first-round `to` is where the partition ends.
//!
//! `cargo test --release --test assignor_lookahead -- --nocapture` prints the tally.

mod assignor_common;

use assignor_common::divergences::{Figures, Known, Verdict};
use assignor_common::parity::{moved, rack_mismatches, sum_sq, Tally};
use assignor_common::*;
use kafka_consumer_protocol::assignor::{builtin, ClusterMetadata, GroupMember, TopicInfo};
use kafka_consumer_protocol::Subscription;
use kcp_testkit::java_sticky_model::java_sticky_model;

/// The size of the groups a set draws.
#[derive(Clone, Copy)]
struct Shape {
    name: &'static str,
    /// Members: `least` to `least + members - 1`.
    least: u64,
    members: u64,
    /// Partitions per topic (1-3 topics): 1 to this.
    partitions: u64,
}

/// The set's tally against the model of Java (better minus worse over the metrics) may not fall
/// below this (issue 27: the tallies must not get worse); 6,294 since the rack chains, 5,509 with
/// issue 38's order (rack mismatches before every move: 16,401 mismatches in all against 20,185
/// before, Java 23,164; 71,743 moves against 65,404, Java 74,054).
const TALLY_FLOOR: i64 = 5_509;

const SMALL: Shape = Shape { name: "small", least: 2, members: 8, partitions: 12 };
const MEDIUM: Shape = Shape { name: "medium", least: 2, members: 30, partitions: 40 };
/// Beyond the exact polish (128 members): the heuristics, with the placement that keeps every
/// claim where members x partitions stay within 4,000,000.
const LARGE: Shape = Shape { name: "large", least: 300, members: 300, partitions: 4000 };

/// A random reassignment over 2-3 racks: replication 1-2 (consecutive racks), members on a rack
/// or none, uniform or mixed subscriptions; an earlier round among some of the members, then
/// some rack changes.
fn random_group(rng: &mut Rng, shape: Shape) -> (ClusterMetadata, Vec<GroupMember>) {
    let racks = 2 + rng.next(2) as usize;
    let rack = |i: usize| format!("r{i}");
    let names: Vec<String> = (0..1 + rng.next(3)).map(|t| format!("t{t}")).collect();
    let mut metadata = ClusterMetadata::default();
    for name in &names {
        let partitions = 1 + rng.next(shape.partitions) as i32;
        let replication = 1 + rng.next(2) as usize;
        let partition_racks = (0..partitions)
            .map(|_| {
                let first = rng.next(racks as u64) as usize;
                (0..replication).map(|k| rack((first + k) % racks)).collect()
            })
            .collect();
        metadata.topics.insert(name.clone(), TopicInfo { partitions, partition_racks });
    }
    let uniform = rng.next(2) == 0;
    let members: Vec<GroupMember> = (0..shape.least + rng.next(shape.members))
        .map(|i| {
            let mut topics: Vec<String> =
                if uniform { names.clone() } else { names.iter().filter(|_| rng.next(3) > 0).cloned().collect() };
            if topics.is_empty() {
                topics.push(names[0].clone());
            }
            let mut subscription = Subscription::new(topics);
            let r = rng.next(racks as u64 + 1) as usize;
            subscription.rack_id = (r < racks).then(|| rack(r));
            GroupMember { member_id: format!("m{i:02}"), group_instance_id: None, subscription }
        })
        .collect();
    let mut earlier: Vec<GroupMember> = members.iter().filter(|_| rng.next(4) > 0).cloned().collect();
    if earlier.is_empty() {
        earlier.push(members[0].clone());
    }
    let before = builtin("cooperative-sticky").unwrap().assign(&metadata, &earlier).unwrap();
    let mut group = members;
    for m in &mut group {
        m.subscription.owned_partitions = before.partitions_of(&m.member_id).to_vec();
        m.subscription.generation_id = 5;
        if rng.next(5) == 0 {
            m.subscription.rack_id = Some(rack(rng.next(racks as u64) as usize));
        }
    }
    (metadata, group)
}

/// Ours, round by round until nothing is withheld: the end and its follow-up rounds.
fn our_end(metadata: &ClusterMetadata, input: &[GroupMember]) -> (Sets, usize) {
    let assignor = builtin("cooperative-sticky").unwrap();
    let mut members = input.to_vec();
    let mut round = assignor.assign(metadata, &members).unwrap();
    let first = round.pending.clone();
    let mut follow_ups = 0;
    while !round.pending.is_empty() {
        follow_ups += 1;
        assert!(follow_ups <= 10, "no end in 10 follow-up rounds");
        members = next_round(&members, &round, 100 + follow_ups as i32);
        round = assignor.assign(metadata, &members).unwrap();
        check_valid(metadata, &members, &round).unwrap();
        check_cooperative(&members, &round).unwrap();
    }
    check_complete(metadata, &members, &round).unwrap();
    // Every first-round `to` is where the partition is once the rebalance is over, and the end
    // is balanced (the module's first goal).
    let end = sets(&round);
    for p in &first {
        let to = p.to.as_ref().expect("the leader plays at most 8 rounds ahead; these groups end sooner");
        assert!(
            end[to].contains(&(p.topic.clone(), p.partition)),
            "{}-{} pending to {to} ends elsewhere",
            p.topic,
            p.partition
        );
    }
    check_balanced(&subscribed_sets(metadata, input), &end).unwrap();
    (known_sets(metadata, &round), follow_ups)
}

/// The sets: (shape, seed, groups).
const SETS: [(Shape, u64, usize); 6] =
    [(SMALL, 1, 3000), (SMALL, 2, 3000), (SMALL, 3, 3000), (SMALL, 4, 3000), (MEDIUM, 1, 1500), (MEDIUM, 2, 1500)];

#[test]
fn whole_rebalances_end_no_worse_than_java() {
    // The measures as the tally names them.
    const NAMES: [&str; 3] = ["balance", "mismatches", "moves"];
    let known = Known::load();
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    let mut compared = 0;
    for (shape, seed, groups) in SETS {
        let mut rng = Rng(seed.wrapping_mul(2_654_435_761).wrapping_add(7));
        for case in 0..groups {
            let (metadata, input) = random_group(&mut rng, shape);
            // The model gives up where it does not follow Java (see `java_sticky_model`).
            let Some(java_rounds) = java_sticky_model(&metadata, &input, true) else { continue };
            let java: Sets = java_rounds
                .last()
                .unwrap()
                .iter()
                .map(|(member, list)| (member.clone(), list.iter().cloned().collect()))
                .collect();
            let (ours, follow_ups) = our_end(&metadata, &input);
            let valid = valid_claims(&metadata, &input, true);
            let measures = |s: &Sets| [sum_sq(s), rack_mismatches(&metadata, &input, s), moved(&valid, s)];
            let (o, j) = (measures(&ours), measures(&java));
            for (i, name) in NAMES.iter().enumerate() {
                tally.add("cooperative-sticky", name, o[i], j[i]);
            }
            tally.add_rounds(follow_ups, java_rounds.len() - 1);
            tally.add_end("cooperative-sticky", o, j);
            let of = Figures::of(&metadata, &input, &valid, &ours, follow_ups);
            let jf = Figures::of(&metadata, &input, &valid, &java, java_rounds.len() - 1);
            let group = format!("{}-{seed}-{case}", shape.name);
            match known.judge("assignor_lookahead", &group, "cooperative-sticky", &of, &jf) {
                Verdict::NoWorse => {}
                Verdict::ByOrder => tally.by_order += 1,
                Verdict::Listed => tally.listed += 1,
                Verdict::Unexplained(worse) => failures.push(format!(
                    "assignor_lookahead\t{group}\tcooperative-sticky\t{}\tours {of:?}, Java {jf:?}",
                    worse.join(",")
                )),
            }
            compared += 1;
        }
    }
    tally.checked.insert("cooperative-sticky", compared);
    // (Java here is the model of Java 3.9.1's assignor.)
    eprintln!("{}", tally.table("assignor_lookahead, whole rebalances (Java: the model)"));
    assert!(compared >= 14_000, "expected >= 14,000 groups the model answers, compared {compared}");
    failures.extend(known.stale("assignor_lookahead").into_iter().map(|e| format!("stale: {e}")));
    failures.extend(tally.rounds_at_most_javas().err());
    failures.extend(tally.net_at_least(TALLY_FLOOR).err());
    // Issue 38: no group ends with more rack mismatches than Java's at equal balance (277 did
    // with issue 27's order), and ours move fewer partitions in all.
    failures.extend(tally.mismatches_and_moves_at_most_javas(0).err());
    assert!(
        failures.is_empty(),
        "{} groups where Java ends better, not by our order and not listed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Groups of 300-599 members (beyond the exact polish; 2-3 racks, uniform or mixed
/// subscriptions): every rebalance ends, where each first-round `to` says, balanced; 39 of these
/// 40 after one follow-up round. Without the leader aiming its first round at the end of its own
/// rebalance, two take 3 and 4 (the heuristics find a few more rack mismatches to fix in each
/// round; the exact polish does not reach these sizes). Group 12 takes 4 either way: each of its
/// follow-up rounds gave partitions back to owners on their racks (issue 27's order put that
/// before mismatches), ending with 56 fewer such moves and 12 more mismatches than the one-round
/// end it had before the rack passes' swaps back to owners.
#[test]
fn large_rebalances_end_soon_where_each_to_says() {
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    let mut follow_ups = Vec::new();
    for case in 0..40 {
        let (metadata, input) = random_group(&mut rng, LARGE);
        let (_, rounds) = our_end(&metadata, &input);
        assert!(rounds <= 4, "large group {case} ({} members): {rounds} follow-up rounds", input.len());
        follow_ups.push(rounds);
    }
    assert!(follow_ups.iter().filter(|&&r| r > 1).count() <= 1, "{follow_ups:?}");
    // The seeded groups do rebalance: most withhold partitions in their first round.
    assert!(follow_ups.iter().filter(|&&r| r == 1).count() >= 30, "{follow_ups:?}");
}

/// A 548-member group over 3 racks with mixed subscriptions whose rebalance never ended: from the
/// fifth follow-up round on, every round withheld two partitions, and the next round the same
/// two places again. The balance took an owner's partition (on its rack) for a member one
/// partition short, and the rack passes moved the free partition the water-fill had put off its
/// racks to that owner, where it would have served the member as well. The rack passes now end
/// by swapping such partitions back to their owners; the rebalance ends after 4 follow-ups.
/// (The group is the 99th of `Rng(7)`'s large groups: the state before it is the seed here.)
#[test]
fn a_rebalance_that_cycled_between_two_rounds_ends() {
    let mut rng = Rng(0x5c44_bbc3_5b5e_b380);
    let (metadata, input) = random_group(&mut rng, LARGE);
    assert_eq!(input.len(), 548);
    // `our_end` fails past 10 follow-up rounds and checks every first-round `to`.
    let (_, rounds) = our_end(&metadata, &input);
    assert!(rounds <= 4, "{rounds} follow-up rounds");
}
