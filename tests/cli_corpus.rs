//! Replays the committed `cli_json` fuzz corpus (`fuzz/corpus/cli_json/`) through the same check
//! the target runs (`kcp_testkit::cli_json_checks`): the JSON documents of `kcp encode`,
//! `kcp assign` and `kcp simulate`, with single allocations capped at 512 MB as under libFuzzer
//! (`capped_alloc`).

mod capped_alloc;

#[test]
fn cli_json_corpus() {
    assert!(kcp_testkit::replay("cli_json", kcp_testkit::cli_json_checks::check) >= 40);
}
