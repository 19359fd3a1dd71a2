//! Replays the committed `simulator_steps` fuzz corpus through the fuzz target's check
//! (`kcp_testkit::sim_checks`).

#[test]
fn simulator_steps_corpus() {
    assert!(kcp_testkit::replay("simulator_steps", kcp_testkit::sim_checks::check) > 100);
}
