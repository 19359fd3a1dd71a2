//! What kafka-consumer-protocol's fuzz targets, corpus replays, integration tests and benchmarks
//! share, in one place instead of modules included across folders by a path attribute:
//!
//! - [`codec_checks`], [`leader_checks`], [`client_checks`], [`pcap_checks`], [`sim_checks`],
//!   [`cli_json_checks`], [`offsets_log_checks`]: the property each fuzz
//!   target checks, called by the target (`fuzz/fuzz_targets/`) and by the corpus replays
//!   (`tests/*_corpus.rs`, through [`replay`]), so `cargo test` re-proves what fuzzing found;
//! - [`assignor_shapes`], [`sim_shapes`]: the benchmark shapes, also used by tests;
//! - [`java_sticky_model`]: the model of Apache Kafka's sticky assignor, the parity tests' oracle.
#![allow(missing_docs, clippy::missing_panics_doc)]

pub mod assignor_shapes;
pub mod cli_json_checks;
pub mod client_checks;
pub mod codec_checks;
pub mod java_sticky_model;
pub mod leader_checks;
pub mod offsets_log_checks;
pub mod pcap_checks;
pub mod sim_checks;
pub mod sim_shapes;

use std::path::Path;

/// Runs `check` on every file of the committed corpus `fuzz/corpus/<target>/` (sorted), failing
/// with the file's path when one panics; how many files there were.
pub fn replay(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
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
