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

use super::raw::{generated_config, list, scenario_from_raw, RawStep};
use super::{GroupProtocol, MemberSpec, Rng, Scenario, SimConfig, Step, StepSpec};

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
            server_assignor: if rng.below(2) == 0 { "uniform" } else { "range" }.into(),
            ..generated_config()
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
