//! Shared helpers of the assignor tests: the `kcp assign` JSON input shape and invariant
//! checks.
#![allow(dead_code)]

pub mod divergences;
pub mod parity;

use std::collections::{BTreeMap, BTreeSet};

use kafka_consumer_protocol::assignor::{ClusterMetadata, GroupAssignment, GroupMember, TopicInfo};
use kafka_consumer_protocol::internal::member_claim;
use kafka_consumer_protocol::{CooperativeStickyUserData, Subscription, TopicPartitions};
use serde_json::Value;

pub type Sets = BTreeMap<String, BTreeSet<(String, i32)>>;

/// The random groups' generator (xorshift): the same seed gives the same groups.
pub struct Rng(pub u64);

impl Rng {
    /// Uniform enough in `0..n`.
    pub fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

pub fn hex_decode(h: &str) -> Vec<u8> {
    (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect()
}

fn tps(v: &Value) -> Vec<TopicPartitions> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|g| {
                    TopicPartitions::new(
                        g["topic"].as_str().unwrap(),
                        g["partitions"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|p| p.as_i64().unwrap() as i32)
                            .collect::<Vec<_>>(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Parses the `kcp assign` input shape (members by fields or by `subscription` hex).
pub fn parse_group(input: &Value) -> (ClusterMetadata, Vec<GroupMember>) {
    let mut metadata = ClusterMetadata::default();
    for (t, n) in input["topics"].as_object().unwrap() {
        let racks: Vec<Vec<String>> = input
            .get("partition_racks")
            .and_then(|r| r.get(t))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|rs| rs.as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect())
                    .collect()
            })
            .unwrap_or_default();
        metadata.topics.insert(t.clone(), TopicInfo { partitions: n.as_i64().unwrap() as i32, partition_racks: racks });
    }
    let members = input["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let subscription = if let Some(h) = m.get("subscription").and_then(Value::as_str) {
                Subscription::decode(&hex_decode(h)).unwrap()
            } else {
                {
                    let mut s = Subscription::new(
                        m["topics"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()),
                    )
                    .with_user_data(m.get("user_data").and_then(Value::as_str).map(|h| hex_decode(h).into()))
                    .with_owned_partitions(tps(&m["owned_partitions"]))
                    .with_generation_id(m.get("generation_id").and_then(Value::as_i64).unwrap_or(-1) as i32);
                    s.rack_id = m.get("rack_id").and_then(Value::as_str).map(str::to_string);
                    s
                }
            };
            GroupMember {
                member_id: m["member_id"].as_str().unwrap().to_string(),
                group_instance_id: m.get("group_instance_id").and_then(Value::as_str).map(str::to_string),
                subscription,
            }
        })
        .collect();
    (metadata, members)
}

pub fn sets(a: &GroupAssignment) -> Sets {
    a.to_map()
        .iter()
        .map(|(m, asg)| {
            let set = asg
                .assigned_partitions
                .iter()
                .flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.clone(), p)))
                .collect();
            (m.clone(), set)
        })
        .collect()
}

/// As [`sets`], without partitions of topics missing from the metadata (those a
/// cooperative leader hands back to their claimer, KIP-429 step 2.6; Java drops them).
pub fn known_sets(metadata: &ClusterMetadata, a: &GroupAssignment) -> Sets {
    let mut s = sets(a);
    for set in s.values_mut() {
        set.retain(|(t, _)| metadata.topics.contains_key(t));
    }
    s
}

/// Each member's subscribed, existing topics.
pub fn subscribed_sets(metadata: &ClusterMetadata, members: &[GroupMember]) -> BTreeMap<String, BTreeSet<String>> {
    members
        .iter()
        .map(|m| {
            let s = m
                .subscription
                .topics
                .iter()
                .filter(|t| metadata.topics.get(*t).is_some_and(|i| i.partitions > 0))
                .cloned()
                .collect();
            (m.member_id.clone(), s)
        })
        .collect()
}

/// Every member present; only subscribed, existing partitions; no partition twice (also not
/// both assigned and pending); groups well-formed.
pub fn check_valid(metadata: &ClusterMetadata, members: &[GroupMember], a: &GroupAssignment) -> Result<(), String> {
    let subs = subscribed_sets(metadata, members);
    let map = a.to_map();
    if map.len() != members.len() {
        return Err(format!("{} assignments for {} members", map.len(), members.len()));
    }
    let mut seen = BTreeSet::new();
    for m in members {
        let asg = map.get(&m.member_id).ok_or(format!("member {} missing", m.member_id))?;
        for g in &asg.assigned_partitions {
            if !metadata.topics.contains_key(&g.topic) {
                // KIP-429 step 2.6: a partition of a topic missing from the metadata goes back to
                // the member that claims it and still subscribes to it.
                if !m.subscription.topics.contains(&g.topic) {
                    return Err(format!("{} got unknown {} it does not subscribe to", m.member_id, g.topic));
                }
                for &p in &g.partitions {
                    if !m.subscription.owned_partitions.iter().any(|o| o.topic == g.topic && o.partitions.contains(&p))
                    {
                        return Err(format!("{} got unknown {}-{p} it does not claim", m.member_id, g.topic));
                    }
                    if !seen.insert((g.topic.clone(), p)) {
                        return Err(format!("{}-{p} assigned twice", g.topic));
                    }
                }
                continue;
            }
            if !subs[&m.member_id].contains(&g.topic) {
                return Err(format!("{} got {} it does not subscribe to", m.member_id, g.topic));
            }
            let n = metadata.topics[&g.topic].partitions;
            for &p in &g.partitions {
                if p < 0 || p >= n {
                    return Err(format!("{} got nonexistent {}-{p}", m.member_id, g.topic));
                }
                if !seen.insert((g.topic.clone(), p)) {
                    return Err(format!("{}-{p} assigned twice", g.topic));
                }
            }
        }
    }
    // A partition several members claim is pending once per claimer that must revoke it, all
    // with the same `to`. (`to` is where the partition is once the rebalance is over, which can
    // be the member revoking it now, when a later round gives it back.)
    let mut pending: BTreeMap<(String, i32), (Option<String>, BTreeSet<String>)> = BTreeMap::new();
    for pp in &a.pending {
        let key = (pp.topic.clone(), pp.partition);
        if seen.contains(&key) {
            return Err(format!("{}-{} pending and assigned", pp.topic, pp.partition));
        }
        let (to, froms) = pending.entry(key).or_insert_with(|| (pp.to.clone(), BTreeSet::new()));
        if *to != pp.to || !froms.insert(pp.from.clone()) {
            return Err(format!("{}-{} pending twice", pp.topic, pp.partition));
        }
    }
    Ok(())
}

/// Every partition of a topic someone subscribes to is assigned or pending.
pub fn check_complete(metadata: &ClusterMetadata, members: &[GroupMember], a: &GroupAssignment) -> Result<(), String> {
    let subs = subscribed_sets(metadata, members);
    let all: BTreeSet<&String> = subs.values().flatten().collect();
    let mut have: BTreeSet<(String, i32)> = sets(a).into_values().flatten().collect();
    have.extend(a.pending.iter().map(|p| (p.topic.clone(), p.partition)));
    for t in all {
        for p in 0..metadata.topics[t].partitions {
            if !have.contains(&(t.clone(), p)) {
                return Err(format!("{t}-{p} neither assigned nor pending"));
            }
        }
    }
    Ok(())
}

/// Java's balance definition: sizes differ by at most one, or no member could take a partition
/// from a member holding two or more more.
pub fn check_balanced(subs: &BTreeMap<String, BTreeSet<String>>, s: &Sets) -> Result<(), String> {
    let size = |m: &String| s.get(m).map_or(0, |x| x.len());
    for (a, sa) in s {
        for b in subs.keys() {
            if size(b) + 2 <= sa.len() {
                if let Some((t, p)) = sa.iter().find(|(t, _)| subs[b].contains(t)) {
                    return Err(format!("unbalanced: {b} ({}) could take {t}-{p} from {a} ({})", size(b), sa.len()));
                }
            }
        }
    }
    Ok(())
}

/// The valid owner of each claimed partition under our rule (highest generation, unique;
/// partition exists; owner subscribed).
pub fn valid_claims(
    metadata: &ClusterMetadata,
    members: &[GroupMember],
    cooperative: bool,
) -> BTreeMap<(String, i32), String> {
    let mut best: BTreeMap<(String, i32), (i32, Vec<String>)> = BTreeMap::new();
    for m in members {
        let (owned, generation) = member_claim(&m.subscription, cooperative);
        let g = generation.unwrap_or(-1);
        let mut mine = BTreeSet::new();
        for grp in owned.iter() {
            let Some(info) = metadata.topics.get(&grp.topic) else { continue };
            for &p in &grp.partitions {
                if p < 0 || p >= info.partitions || !mine.insert((grp.topic.clone(), p)) {
                    continue;
                }
                let e = best.entry((grp.topic.clone(), p)).or_insert((i32::MIN, Vec::new()));
                if g > e.0 {
                    *e = (g, vec![m.member_id.clone()]);
                } else if g == e.0 {
                    e.1.push(m.member_id.clone());
                }
            }
        }
    }
    let subs = subscribed_sets(metadata, members);
    best.into_iter()
        .filter(|((t, _), (_, who))| who.len() == 1 && subs[&who[0]].contains(t))
        .map(|(tp, (_, who))| (tp, who[0].clone()))
        .collect()
}

/// The next cooperative round: every member owns what it was assigned, at `generation`.
pub fn next_round(members: &[GroupMember], round: &GroupAssignment, generation: i32) -> Vec<GroupMember> {
    members
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.subscription.owned_partitions = round.partitions_of(&m.member_id).to_vec();
            m.subscription.generation_id = generation;
            m.subscription.user_data = Some(CooperativeStickyUserData { generation }.encode());
            m
        })
        .collect()
}

/// Java's cooperative validity: no partition added to one member is revoked by another in the
/// same round (owned = the raw `owned_partitions` field).
pub fn check_cooperative(members: &[GroupMember], a: &GroupAssignment) -> Result<(), String> {
    let s = sets(a);
    let owned: BTreeMap<&String, BTreeSet<(String, i32)>> = members
        .iter()
        .map(|m| {
            let set = m
                .subscription
                .owned_partitions
                .iter()
                .flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.clone(), p)))
                .collect();
            (&m.member_id, set)
        })
        .collect();
    let empty = BTreeSet::new();
    let mut revoked = BTreeSet::new();
    for m in members {
        let assigned = s.get(&m.member_id).unwrap_or(&empty);
        revoked.extend(owned[&m.member_id].difference(assigned).cloned());
    }
    for m in members {
        let assigned = s.get(&m.member_id).unwrap_or(&empty);
        for tp in assigned.difference(&owned[&m.member_id]) {
            if revoked.contains(tp) {
                return Err(format!("{}-{} revoked and given to {} in the same round", tp.0, tp.1, m.member_id));
            }
        }
    }
    Ok(())
}
