//! Simulator scenarios shared by the simulator benchmark and the large-group test.

use kafka_consumer_protocol::sim::{MemberSpec, Scenario, SimConfig, Step, StepSpec};

/// The rolling-bounce scenario: `members` cooperative-sticky members over `partitions`
/// partitions, restarted in waves of `wave` members.
pub fn rolling_bounce(members: usize, partitions: i32, wave: usize, static_members: bool) -> Scenario {
    let topics: Vec<String> = (0..10).map(|i| format!("topic-{i}")).collect();
    let mut s = Scenario {
        seed: 7,
        topics: topics.iter().map(|t| (t.clone(), partitions / 10)).collect(),
        members: Vec::new(),
        steps: Vec::new(),
        config: SimConfig { record_timeline: false, ..SimConfig::default() },
    };
    for i in 0..members {
        let mut m = MemberSpec::new(&format!("m{i:04}"), ["cooperative-sticky"], topics.iter().cloned());
        if static_members {
            m.static_id = Some(format!("host-{i:04}"));
        }
        s.members.push(m);
    }
    for (i, m) in s.members.clone().iter().enumerate() {
        let last_of_wave = (i + 1) % wave == 0 || i + 1 == members;
        s.steps.push(StepSpec {
            step: Step::Restart { id: m.id.clone(), assignors: None, topics: None },
            settle: last_of_wave,
        });
    }
    s
}
