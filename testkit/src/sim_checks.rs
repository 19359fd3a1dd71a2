//! The `simulator_steps` fuzz input and check, shared by the fuzz target and the corpus replay
//! in `tests/sim_corpus.rs`.

use arbitrary::{Arbitrary, Unstructured};
use kafka_consumer_protocol::internal::{scenario_from_raw, RawStep};
use kafka_consumer_protocol::sim::run;

/// Raw scenario parameters; `scenario_from_raw` maps any value onto a valid scenario.
#[derive(Arbitrary, Debug)]
pub struct Input {
    pub seed: u64,
    pub family: u8,
    pub members: u8,
    pub topics: u8,
    pub steps: Vec<(u8, u8, u8)>,
}

/// Runs the scenario the bytes describe; panics on any invariant violation or non-convergence.
pub fn check(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else { return };
    let steps: Vec<RawStep> = input.steps.iter().map(|&(kind, a, b)| RawStep { kind, a, b }).collect();
    let scenario = scenario_from_raw(input.seed, input.family, input.members, input.topics, &steps);
    let out = run(&scenario).expect("generated scenarios are valid");
    assert!(out.summary.violations.is_empty(), "{:?}\n{scenario:#?}", out.summary.violations);
    assert!(out.summary.converged, "{:?}\n{scenario:#?}", out.summary.unconverged);
}
