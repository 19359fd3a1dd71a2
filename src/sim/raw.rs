//! The fuzzer's and the generator's scenarios from raw bytes ([`RawStep`],
//! [`scenario_from_raw`]): not public API, reached through `internal` only (the fuzz target and
//! `testkit` map their inputs with it; [`gen`](super::gen) builds its random scenarios on it).

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

/// The timings of every generated scenario (here and in [`gen`](super::gen)): short sessions
/// and rebalances, so that a fault resolves within a few virtual seconds.
pub(super) fn generated_config() -> SimConfig {
    SimConfig {
        session_timeout_ms: 6_000,
        rebalance_timeout_ms: 10_000,
        heartbeat_interval_ms: 1_000,
        initial_rebalance_delay_ms: 500,
        restart_delay_ms: 500,
        settle_limit_ms: 300_000,
        ..SimConfig::default()
    }
}

pub(super) fn list(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| s.to_string()).collect()
}

/// One step as the fuzzer and the generator see it: a kind byte and two parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
        config: generated_config(),
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
