//! Parity with Apache Kafka's Java assignors (kafka-clients 3.9.1) on the scenarios in
//! `testdata/assignor/java-parity/` (produced by `tools/java-assignors`).
//!
//! - `range` and `roundrobin`: exactly Java's assignment (partition order within a member is
//!   not compared: Java's depends on `HashMap` order and ours is canonical).
//! - `sticky` and `cooperative-sticky`: at least as good as Java: everything assigned or
//!   pending, valid, balanced at least as well, no more partitions moved away from their valid
//!   owners, no more follow-up rounds, no more partitions off their consumer's rack (KIP-881)
//!   except the exact cases in `KNOWN_MORE_RACK_MISMATCHES`.
//! - Scenarios where Java fails (claims on partitions that no longer exist, KAFKA-21674) assert
//!   our behaviour: such claims are dropped.

mod assignor_common;

use std::collections::{BTreeMap, BTreeSet};

use assignor_common::*;
use kafka_consumer_protocol::assignor::{builtin, GroupAssignment, GroupMember};
use serde_json::Value;

fn java_sets(v: &Value) -> BTreeMap<String, BTreeSet<(String, i32)>> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(m, list)| {
            let mut set = BTreeSet::new();
            for g in list.as_array().unwrap() {
                let t = g["topic"].as_str().unwrap().to_string();
                for p in g["partitions"].as_array().unwrap() {
                    set.insert((t.clone(), p.as_i64().unwrap() as i32));
                }
            }
            (m.clone(), set)
        })
        .collect()
}

fn with_user_data(members: &[GroupMember], ud: Option<&Value>) -> Vec<GroupMember> {
    let mut out = members.to_vec();
    if let Some(ud) = ud.and_then(Value::as_object) {
        for m in &mut out {
            if let Some(v) = ud.get(&m.member_id) {
                m.subscription.user_data = v.as_str().map(|h| hex_decode(h).into());
            }
        }
    }
    out
}

struct Outcome {
    final_sets: BTreeMap<String, BTreeSet<(String, i32)>>,
    follow_ups: usize,
}

#[test]
fn java_parity() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/assignor/java-parity");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 200, "expected >= 200 parity scenarios, found {}", files.len());
    let mut checked = BTreeMap::<&str, usize>::new();
    let mut failures = Vec::new();
    // Listed exceptions actually met (a stale entry is a failure too).
    let mut known_seen = BTreeSet::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (metadata, members) = parse_group(&doc["input"]);
        let java = &doc["java"];
        for strategy in ["range", "roundrobin"] {
            let jv = &java[strategy];
            let ours = builtin(strategy).unwrap().assign(&metadata, &members).unwrap();
            check_valid(&metadata, &members, &ours)
                .unwrap_or_else(|e| failures.push(format!("{name} {strategy}: {e}")));
            if jv.get("error").is_some() {
                continue;
            }
            let order_dependent = java["hashmap_order_dependent"][strategy]["assignment"].as_bool().unwrap_or(false);
            if order_dependent {
                continue;
            }
            let expected = java_sets(&jv["assignments"]);
            if sets(&ours) != expected {
                failures.push(format!(
                    "{name} {strategy}: differs from Java\n ours {:?}\n java {:?}",
                    sets(&ours),
                    expected
                ));
            }
            *checked.entry(strategy).or_default() += 1;
        }
        for strategy in ["sticky", "cooperative-sticky"] {
            let jv = &java[strategy];
            let cooperative = strategy == "cooperative-sticky";
            let input = with_user_data(&members, jv.get("user_data"));
            let assignor = builtin(strategy).unwrap();
            let first = assignor.assign(&metadata, &input).unwrap();
            if let Err(e) = check_valid(&metadata, &input, &first) {
                failures.push(format!("{name} {strategy}: {e}"));
                continue;
            }
            if cooperative {
                if let Err(e) = check_cooperative(&input, &first) {
                    failures.push(format!("{name} {strategy}: {e}"));
                }
            }
            if let Err(e) = check_complete(&metadata, &input, &first) {
                failures.push(format!("{name} {strategy}: {e}"));
                continue;
            }
            // Follow-up rounds (cooperative): members revoke, rejoin with their assignment.
            let mut out = Outcome { final_sets: known_sets(&metadata, &first), follow_ups: 0 };
            if cooperative {
                let mut round = first.clone();
                let mut current = input.clone();
                while !round.pending.is_empty() && out.follow_ups < 5 {
                    out.follow_ups += 1;
                    current = next_round(&current, &round, out.follow_ups as i32 + 1);
                    round = assignor.assign(&metadata, &current).unwrap();
                    if let Err(e) = check_valid(&metadata, &current, &round)
                        .and_then(|_| check_complete(&metadata, &current, &round))
                        .and_then(|_| check_cooperative(&current, &round))
                    {
                        failures.push(format!("{name} {strategy} round {}: {e}", out.follow_ups));
                    }
                }
                out.final_sets = known_sets(&metadata, &round);
                if !round.pending.is_empty() {
                    failures.push(format!("{name} {strategy}: no convergence in 5 rounds"));
                }
            }
            let ours_final = out.final_sets;
            let subs = subscribed_sets(&metadata, &input);
            if let Err(e) = check_balanced(&subs, &ours_final) {
                failures.push(format!("{name} {strategy}: {e}"));
            }
            let valid_owned = valid_claims(&metadata, &input, cooperative);
            let our_moves = moved(&valid_owned, &ours_final);
            if jv.get("error").is_some() {
                // Java fails here (e.g. KAFKA-21674); ours already checked valid + complete.
                *checked.entry("sticky-java-error").or_default() += 1;
                continue;
            }
            let java_final = if cooperative {
                let rounds = jv["rounds"].as_array().unwrap();
                java_sets(&rounds.last().unwrap()["assignments"])
            } else {
                java_sets(&jv["assignments"])
            };
            if !java_valid(&metadata, &java_final) {
                // Java's own output is invalid (a partition twice or a nonexistent one).
                *checked.entry("sticky-java-invalid").or_default() += 1;
                continue;
            }
            let java_moves = moved(&valid_owned, &java_final);
            let (our_mis, java_mis) =
                (rack_mismatches(&metadata, &input, &ours_final), rack_mismatches(&metadata, &input, &java_final));
            if our_mis + java_mis > 0 {
                eprintln!("rack mismatches {name} {strategy}: ours {our_mis}, Java {java_mis}");
            }
            let known_mis = KNOWN_MORE_RACK_MISMATCHES.contains(&(name.as_str(), strategy, our_mis, java_mis));
            if our_mis > java_mis && !known_mis {
                failures.push(format!("{name} {strategy}: {our_mis} rack mismatches, Java {java_mis}"));
            }
            if known_mis {
                known_seen.insert((name.clone(), strategy, "rack"));
            }
            if known_mis && our_mis <= java_mis {
                failures.push(format!("{name} {strategy}: listed in KNOWN_MORE_RACK_MISMATCHES but not worse"));
            }
            let known = KNOWN_MORE_MOVES.contains(&(name.as_str(), strategy, our_moves, java_moves));
            if known {
                known_seen.insert((name.clone(), strategy, "moves"));
            }
            if known && sum_sq(&ours_final) >= sum_sq(&java_final) {
                failures
                    .push(format!("{name} {strategy}: listed as trading a move for balance, but not more balanced"));
            }
            if our_moves > java_moves && !known {
                failures.push(format!(
                    "{name} {strategy}: we move {our_moves} partitions away from valid owners, Java {java_moves}"
                ));
            }
            let (our_spread, java_spread) = (spread(&ours_final, &input), spread(&java_final, &input));
            if our_spread > java_spread.max(1) {
                failures.push(format!("{name} {strategy}: size spread {our_spread} > Java's {java_spread}"));
            }
            if cooperative {
                let java_follow_ups = jv["follow_up_rounds"].as_u64().unwrap() as usize;
                if out.follow_ups > java_follow_ups.max(1) {
                    failures.push(format!(
                        "{name} {strategy}: {} follow-up rounds, Java {java_follow_ups}",
                        out.follow_ups
                    ));
                }
            }
            *checked.entry(strategy).or_default() += 1;
        }
    }
    for (list, what) in [(KNOWN_MORE_MOVES, "moves"), (KNOWN_MORE_RACK_MISMATCHES, "rack")] {
        for &(name, strategy, ours, java) in list {
            if !known_seen.contains(&(name.to_string(), strategy, what)) {
                failures.push(format!("{name} {strategy}: listed ({what}: ours {ours}, Java {java}) but not so"));
            }
        }
    }
    eprintln!("parity scenarios checked per strategy: {checked:?}");
    assert!(failures.is_empty(), "{} parity failures:\n{}", failures.len(), failures.join("\n"));
}

/// Scenarios (heterogeneous subscriptions, general path) where we move more partitions away from
/// their owners than Java: (file, strategy, ours, Java). Listed exactly so a change in either
/// direction is noticed. In 105 (eager) the extra move buys a strictly better balance (sum of
/// squared member sizes 72 vs Java's 74, asserted below); our small-group polish minimises the
/// moves exactly among the assignments with the minimum sum of squares, so no assignment as
/// balanced as ours gets by with Java's 3 moves.
const KNOWN_MORE_MOVES: &[(&str, &str, usize, usize)] =
    &[("105-mixed-rebalance-reshuffle-subscriptions-14.json", "sticky", 4, 3)];

/// Rack scenarios where we leave more partitions off their consumer's racks than Java:
/// (file, strategy, ours, Java), listed exactly so a change either way is noticed. None: 206,
/// 217 and 224 are now at or below Java (the polish); the former 251 entry (31 vs 3) was stale,
/// ours was already 0.
const KNOWN_MORE_RACK_MISMATCHES: &[(&str, &str, usize, usize)] = &[];

/// No partition twice, none that does not exist.
fn java_valid(
    metadata: &kafka_consumer_protocol::assignor::ClusterMetadata,
    s: &BTreeMap<String, BTreeSet<(String, i32)>>,
) -> bool {
    let mut seen = BTreeSet::new();
    s.values().flatten().all(|(t, p)| metadata.topics.get(t).is_some_and(|i| *p < i.partitions) && seen.insert((t, p)))
}

/// Sum of squared member sizes (lower = more even).
fn sum_sq(s: &BTreeMap<String, BTreeSet<(String, i32)>>) -> usize {
    s.values().map(|x| x.len() * x.len()).sum()
}

/// Spread (max - min) of member sizes.
fn spread(s: &BTreeMap<String, BTreeSet<(String, i32)>>, members: &[GroupMember]) -> usize {
    let sizes: Vec<usize> = members.iter().map(|m| s.get(&m.member_id).map_or(0, |x| x.len())).collect();
    sizes.iter().max().unwrap_or(&0) - sizes.iter().min().unwrap_or(&0)
}

/// Partitions held by a member with a (non-empty) rack on which none of its replicas is: Java's
/// `racksMismatch`.
fn rack_mismatches(
    metadata: &kafka_consumer_protocol::assignor::ClusterMetadata,
    members: &[GroupMember],
    s: &BTreeMap<String, BTreeSet<(String, i32)>>,
) -> usize {
    let mut n = 0;
    for m in members {
        let Some(rack) = m.subscription.rack_id.as_deref().filter(|r| !r.is_empty()) else { continue };
        for (t, p) in s.get(&m.member_id).into_iter().flatten() {
            let racks = metadata.topics.get(t).and_then(|i| i.partition_racks.get(*p as usize));
            if !racks.is_some_and(|r| r.iter().any(|x| x == rack)) {
                n += 1;
            }
        }
    }
    n
}

/// Partitions taken away from their valid owner.
fn moved(valid: &BTreeMap<(String, i32), String>, s: &BTreeMap<String, BTreeSet<(String, i32)>>) -> usize {
    valid.iter().filter(|(tp, owner)| !s.get(*owner).is_some_and(|set| set.contains(*tp))).count()
}

#[allow(dead_code)]
fn unused(_: GroupAssignment) {}
