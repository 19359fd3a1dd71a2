//! Drives the group simulator with arbitrary step sequences (every kind of step and fault,
//! any assignor family) and checks the ownership invariants: no partition owned by two
//! members of the group, no partition held long after expulsion, and convergence.
#![no_main]

use arbitrary::Arbitrary;
use kafka_consumer_protocol::sim::gen::{scenario_from_raw, RawStep};
use kafka_consumer_protocol::sim::run;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    seed: u64,
    family: u8,
    members: u8,
    topics: u8,
    steps: Vec<(u8, u8, u8)>,
}

fuzz_target!(|input: Input| {
    let steps: Vec<RawStep> = input.steps.iter().map(|&(kind, a, b)| RawStep { kind, a, b }).collect();
    let scenario = scenario_from_raw(input.seed, input.family, input.members, input.topics, &steps);
    let out = run(&scenario).expect("generated scenarios are valid");
    assert!(out.summary.violations.is_empty(), "{:?}\n{scenario:#?}", out.summary.violations);
    assert!(out.summary.converged, "{:?}\n{scenario:#?}", out.summary.unconverged);
});
