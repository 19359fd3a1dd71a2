//! Replays the committed `cli_json` fuzz corpus (`fuzz/corpus/cli_json/`) through the fuzz
//! target's check: the JSON documents of `kcp encode`, `kcp assign` and `kcp simulate`.
#![cfg(feature = "cli")]

#[path = "../fuzz/cli_json_checks.rs"]
mod cli_json_checks;

mod capped_alloc;

#[test]
fn cli_json_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/cli_json");
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    assert!(entries.len() >= 40, "{} corpus files", entries.len());
    for path in &entries {
        let data = std::fs::read(path).unwrap();
        let result = std::panic::catch_unwind(|| cli_json_checks::check(&data));
        assert!(result.is_ok(), "{} fails", path.display());
    }
}
