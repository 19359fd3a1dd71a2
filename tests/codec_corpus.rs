//! Replays the codec fuzz targets' committed corpora (`fuzz/corpus/<target>/`) through the same
//! checks the targets run (`kcp_testkit::codec_checks`), so every `cargo test` re-proves what
//! fuzzing found.

use kcp_testkit::codec_checks as checks;
use kcp_testkit::replay;

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
