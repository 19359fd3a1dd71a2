//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`) through the same checks the
//! fuzz targets run, so every `cargo test` re-proves what fuzzing found.

#[path = "../fuzz/checks.rs"]
mod checks;
#[path = "../fuzz/leader_checks.rs"]
mod leader_checks;

use std::path::Path;

mod capped_alloc;

fn replay(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in &entries {
        let data = std::fs::read(path).unwrap();
        let result = std::panic::catch_unwind(|| check(&data));
        assert!(result.is_ok(), "{target}: {} fails its check", path.display());
    }
    entries.len()
}

#[test]
fn decode_subscription_corpus() {
    assert!(replay("decode_subscription", checks::decode_subscription) >= 700);
}

#[test]
fn decode_assignment_corpus() {
    assert!(replay("decode_assignment", checks::decode_assignment) >= 400);
}

#[test]
fn differential_kafka_protocol_corpus() {
    assert!(replay("differential_kafka_protocol", checks::differential_kafka_protocol) >= 170);
}

#[test]
fn roundtrip_arbitrary_corpus() {
    assert!(replay("roundtrip_arbitrary", checks::roundtrip_arbitrary) >= 2000);
}

#[test]
fn coordinator_leader_corpus() {
    assert!(replay("coordinator_leader", leader_checks::check) >= 250);
}
