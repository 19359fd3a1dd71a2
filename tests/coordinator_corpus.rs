//! Replays the `coordinator_leader` fuzz target's committed corpus through the same check the
//! target runs (`kcp_testkit::leader_checks`), with single allocations capped at 512 MB as under
//! libFuzzer (`capped_alloc`).

mod capped_alloc;

#[test]
fn coordinator_leader_corpus() {
    assert!(kcp_testkit::replay("coordinator_leader", kcp_testkit::leader_checks::check) >= 250);
}
