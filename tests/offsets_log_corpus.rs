//! Replays the committed `offsets_log_segment` fuzz corpus (`fuzz/corpus/offsets_log_segment/`:
//! the first batches of each real capture in testdata/offsets-log, and hand-made hostile cuts)
//! through the same check the fuzz target runs.

use kcp_testkit::{offsets_log_checks, replay};

#[test]
fn offsets_log_segment_corpus() {
    let n = replay("offsets_log_segment", offsets_log_checks::segment);
    assert!(n >= 20, "{n} corpus files");
}
