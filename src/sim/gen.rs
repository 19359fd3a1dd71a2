//! Seeded random scenarios for property tests and fuzzing: small groups, every kind of step
//! and fault, assignor mixes that share a protocol (so every scenario must converge).
//!
//! ```
//! use kafka_consumer_protocol::sim::{gen::random_scenario, run};
//! let s = random_scenario(12);
//! assert_eq!(s, random_scenario(12)); // deterministic
//! let out = run(&s).unwrap();
//! assert!(out.summary.violations.is_empty());
//! ```

use super::{GroupProtocol, MemberSpec, Rng, Scenario, SimConfig, Step, StepSpec};

/// Assignor mixes: each member picks one list of its family.
const FAMILIES: &[&[&[&str]]] = &[
    &[&["range"]],
    &[&["roundrobin"]],
    &[&["sticky"]],
    &[&["cooperative-sticky"]],
    &[&["cooperative-sticky", "range"], &["range"]],
    &[&["cooperative-sticky"], &["cooperative-sticky", "range"]],
    &[&["range", "cooperative-sticky"], &["cooperative-sticky"], &["cooperative-sticky", "range"]],
];

fn list(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| s.to_string()).collect()
}

/// One step as the fuzzer and the generator see it: a kind byte and two parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct RawStep {
    /// Which step (taken modulo the number of kinds).
    pub kind: u8,
    /// First parameter (member / topic choice).
    pub a: u8,
    /// Second parameter (counts, delays).
    pub b: u8,
}

/// Builds a valid scenario from raw bytes: member references are mapped onto live members,
/// counts are clamped, so every input is a runnable scenario.
#[doc(hidden)]
pub fn scenario_from_raw(seed: u64, family: u8, members: u8, topics: u8, steps: &[RawStep]) -> Scenario {
    let fam = FAMILIES[family as usize % FAMILIES.len()];
    let heterogeneous_ok = fam.iter().all(|l| l.iter().all(|a| a.contains("sticky")));
    let mut rng = Rng::new(seed);
    let n_topics = 1 + (topics % 2) as usize;
    let mut s = Scenario {
        seed,
        topics: (0..n_topics).map(|i| (format!("t{i}"), 1 + rng.below(6) as i32)).collect(),
        members: Vec::new(),
        steps: Vec::new(),
        config: SimConfig {
            session_timeout_ms: 6_000,
            rebalance_timeout_ms: 10_000,
            heartbeat_interval_ms: 1_000,
            initial_rebalance_delay_ms: 500,
            restart_delay_ms: 500,
            settle_limit_ms: 300_000,
            ..SimConfig::default()
        },
    };
    let all_topics: Vec<String> = s.topics.keys().cloned().collect();
    let mut topic_names = all_topics.clone();
    let mut live: Vec<String> = Vec::new();
    let mut next = 0;
    let mut new_member = |rng: &mut Rng, live: &mut Vec<String>, topic_names: &[String]| {
        let id = format!("m{next}");
        next += 1;
        let topics = if heterogeneous_ok && topic_names.len() > 1 && rng.below(3) == 0 {
            vec![topic_names[rng.below(topic_names.len() as u64) as usize].clone()]
        } else {
            topic_names.to_vec()
        };
        let mut spec = MemberSpec {
            id: id.clone(),
            assignors: list(fam[rng.below(fam.len() as u64) as usize]),
            topics,
            rack: None,
            static_id: None,
            protocol: GroupProtocol::Classic,
        };
        if rng.below(4) == 0 {
            spec.static_id = Some(format!("static-{id}"));
        }
        live.push(id);
        spec
    };
    for _ in 0..1 + members % 4 {
        let m = new_member(&mut rng, &mut live, &topic_names);
        s.members.push(m);
    }
    for st in steps.iter().take(8) {
        let pick = |live: &[String]| live[st.a as usize % live.len()].clone();
        let step = match st.kind % 13 {
            0 | 1 => Step::Join(new_member(&mut rng, &mut live, &topic_names)),
            2 if live.len() > 1 => {
                let id = pick(&live);
                live.retain(|x| *x != id);
                Step::Leave(id)
            }
            3 if live.len() > 1 => {
                let id = pick(&live);
                live.retain(|x| *x != id);
                Step::Crash(id)
            }
            4 => Step::Restart { id: pick(&live), assignors: Some(list(fam[st.b as usize % fam.len()])), topics: None },
            5 => Step::MissRebalance(pick(&live)),
            6 if heterogeneous_ok => {
                let t = topic_names[st.b as usize % topic_names.len()].clone();
                Step::Subscribe { id: pick(&live), topics: vec![t] }
            }
            7 => {
                let name = format!("n{}", topic_names.len());
                topic_names.push(name.clone());
                Step::CreateTopic { name, partitions: 1 + (st.b % 5) as i32 }
            }
            8 => Step::AddPartitions {
                topic: topic_names[st.a as usize % topic_names.len()].clone(),
                count: 2 + (st.b % 8) as i32,
            },
            9 if topic_names.len() > 1 => {
                let t = topic_names.remove(st.a as usize % topic_names.len());
                Step::DeleteTopic(t)
            }
            10 => Step::DelayResponses {
                id: pick(&live),
                ms: 50 + 100 * (st.b % 40) as u64,
                count: 1 + (st.b % 3) as u32,
            },
            11 => Step::LoseResponses { id: pick(&live), count: 1 + (st.b % 2) as u32 },
            12 => Step::StaleMetadata { id: pick(&live), ms: 500 + 250 * (st.b % 20) as u64 },
            _ => Step::Wait(100 * st.b as u64),
        };
        // Faults sometimes overlap with the next step instead of settling first.
        let overlap = matches!(step, Step::Join(_) | Step::Leave(_) | Step::Crash(_)) && st.b % 5 == 0;
        let settle = step.settles_by_default() && !overlap;
        s.steps.push(StepSpec { step, settle });
    }
    s
}

/// A random scenario for `seed`.
pub fn random_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let n = rng.below(7) as usize;
    let steps: Vec<RawStep> = (0..n)
        .map(|_| RawStep { kind: rng.below(256) as u8, a: rng.below(256) as u8, b: rng.below(256) as u8 })
        .collect();
    scenario_from_raw(seed, rng.below(256) as u8, rng.below(256) as u8, rng.below(256) as u8, &steps)
}

/// Classic assignor mixes of the mixed-group generator: every member's first protocol is the
/// group's, since a SyncGroup still in flight at the conversion is refused with
/// INCONSISTENT_GROUP_PROTOCOL when it names another (see `modern.rs`).
const MIXED_FAMILIES: &[&[&[&str]]] = &[&[&["cooperative-sticky"]], &[&["range"]], &[&["cooperative-sticky", "range"]]];

/// A random mixed group for `seed`: classic members (cooperative or eager), consumer-protocol
/// members joining, classic members upgraded one at a time, leaves, crashes, response delays on
/// classic members, partitions added and topics created, with `uniform` or `range` on the
/// broker. Every member subscribes to the same topics, so every scenario must converge balanced.
///
/// ```
/// use kafka_consumer_protocol::sim::{gen::random_mixed_scenario, run};
/// let s = random_mixed_scenario(3);
/// assert_eq!(s, random_mixed_scenario(3));
/// assert!(run(&s).unwrap().summary.violations.is_empty());
/// ```
pub fn random_mixed_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x004D_4958_4544);
    let fam = MIXED_FAMILIES[rng.below(MIXED_FAMILIES.len() as u64) as usize];
    let n_topics = 1 + rng.below(2) as usize;
    let mut s = Scenario {
        seed,
        topics: (0..n_topics).map(|i| (format!("t{i}"), 1 + rng.below(6) as i32)).collect(),
        members: Vec::new(),
        steps: Vec::new(),
        config: SimConfig {
            session_timeout_ms: 6_000,
            rebalance_timeout_ms: 10_000,
            heartbeat_interval_ms: 1_000,
            initial_rebalance_delay_ms: 500,
            restart_delay_ms: 500,
            settle_limit_ms: 300_000,
            server_assignor: if rng.below(2) == 0 { "uniform" } else { "range" }.into(),
            ..SimConfig::default()
        },
    };
    let topics: Vec<String> = s.topics.keys().cloned().collect();
    // (name, consumer protocol)
    let mut live: Vec<(String, bool)> = Vec::new();
    let mut next = 0;
    let mut member = |rng: &mut Rng, live: &mut Vec<(String, bool)>, consumer: bool| {
        let id = format!("m{next}");
        next += 1;
        let mut spec = MemberSpec::new(&id, list(fam[rng.below(fam.len() as u64) as usize]), topics.clone());
        if consumer {
            spec.protocol = GroupProtocol::Consumer;
        }
        live.push((id, consumer));
        spec
    };
    for _ in 0..1 + rng.below(4) {
        let m = member(&mut rng, &mut live, false);
        s.members.push(m);
    }
    for _ in 0..rng.below(9) {
        let (a, b) = (rng.below(256) as usize, rng.below(256));
        let classic: Vec<String> = live.iter().filter(|(_, c)| !c).map(|(n, _)| n.clone()).collect();
        let step = match rng.below(9) {
            0 => Step::Join(member(&mut rng, &mut live, false)),
            1 => Step::Join(member(&mut rng, &mut live, true)),
            2 | 3 if !classic.is_empty() => {
                let id = classic[a % classic.len()].clone();
                if let Some(m) = live.iter_mut().find(|(n, _)| *n == id) {
                    m.1 = true;
                }
                Step::Upgrade(id)
            }
            4 if live.len() > 1 => Step::Leave(live.remove(a % live.len()).0),
            5 if live.len() > 1 => Step::Crash(live.remove(a % live.len()).0),
            6 if !classic.is_empty() => Step::DelayResponses {
                id: classic[a % classic.len()].clone(),
                ms: 50 + 100 * (b % 40),
                count: 1 + (b % 3) as u32,
            },
            7 => Step::AddPartitions { topic: topics[a % topics.len()].clone(), count: 2 + (b % 8) as i32 },
            _ => Step::Wait(100 * b),
        };
        let settle = step.settles_by_default() && !(matches!(step, Step::Join(_)) && b % 4 == 0);
        s.steps.push(StepSpec { step, settle });
    }
    s
}
